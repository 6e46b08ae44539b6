"""tools/hil: a scenario on a real Pico, compared with the desktop run of the same scenario.

    tools/hil SCENARIO.json --port /dev/ttyACM0 [--config CONFIG.json] [--out build/hil]
    tools/hil SCENARIO.json --dry-run            the mpremote commands only
    tools/hil SCENARIO.json --emulated           against the emulated Pico (docs/rp2040.md)

The simulated table (boardsim/target, MicroPython like the firmware) runs on the Pico beside
the real firmware and drives it through the same pins it does on the desktop, while every
display write also goes to the real OLED and seven-segment chain (tools/hil_device/machine.py).
The run is deterministic (virtual clock, simulated pads), so the Pico must write exactly the
event lines the desktop run writes; any difference is a difference between the RP2040 and the
unix port (small ints past 2**30, a float, memory) or between the firmware built for the Pico
and the one the simulator runs.

Steps:
 1. compile the scenario to a timeline (boardsim/compile.py) and play it on the desktop under
    the MicroPython unix port: the expected events;
 2. stage the device's files: the firmware and boardsim/target compiled with mpy-cross for the
    target (-march=armv6m for the Pico), the simulator's machine stand-in as simmachine, the HIL
    machine module, the timeline and config.json;
 3. mpremote: make the directory hil/ on the flash, copy the files into it, and run
    tools/hil_device/hil_main.py there, capturing its console until "HIL-END";
 4. compare the event lines; write both and a diff into --out. Exit 0 when they are equal.

--emulated runs the same steps against the emulated Pico (boardsim/rp2040, the real MicroPython
image on rp2040js) through the same serial path: its USB console on a pseudo-terminal
(boardsim/rp2040/serial_bridge.py) that mpremote opens as it opens /dev/ttyACM0.

--frozen: the Pico runs tools/hil's image (`make image-hil`: the firmware without main.py and
boardsim/target frozen into MicroPython), so only the run's own files are copied (the HIL
machine, the stand-in as simmachine, the timeline, config.json). Both as .mpy files do not fit
in the Pico's heap beside their objects (a MemoryError importing the firmware); frozen, their
code stays in flash. --emulated takes that image when `make image-hil` made it from this tree.

The Pico keeps its own main.py; the run lives in hil/ and does not touch it (mpremote stops a
running main.py first). `--arch x64 --mpremote FAKE` runs the same steps against the unix
port standing in for the device (tests/test_hil.py).
"""
import argparse
import difflib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

from boardsim.geometry import ROOT

FIRMWARE = os.path.join(ROOT, "firmware")
TARGET = os.path.join(ROOT, "boardsim", "target")
DEVICE = os.path.join(ROOT, "tools", "hil_device")
# host-side or CPython-only modules of boardsim/target that never go to the device
HOST_ONLY = ("micropython.py", "live.py")
FIRMWARE_SKIP = ("main.py", "boot.py")
DIR = "hil"


def default_mpremote():
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    return exe if os.path.exists(exe) else "mpremote"


def timeline_of(scenario_path):
    from boardsim.compile import compile_scenario
    from boardsim.scenario import load
    return compile_scenario(load(scenario_path))


def desktop_events(timeline, config=None):
    """The event lines of the desktop run (MicroPython unix port)."""
    from boardsim import runtime
    out = io.StringIO()
    args = ["--config", os.path.abspath(config)] if config else []
    runtime.run(timeline, "micropython", stdout=out, runner_args=args)
    return out.getvalue().splitlines()


def frozen_digest():
    """A digest of what tools/image/manifest_hil.py freezes (firmware/ and boardsim/target's
    files, names and contents): `make image-hil` writes it beside the image, and --emulated takes
    the image only while it is the tree's."""
    from tools.build_firmware import firmware_files
    h = hashlib.sha256()
    for root, names in ((FIRMWARE, firmware_files(FIRMWARE)),
                        (TARGET, sorted(n for n in os.listdir(TARGET) if n.endswith(".py")))):
        for n in names:
            h.update(n.encode() + b"\0")
            with open(os.path.join(root, n), "rb") as f:
                h.update(f.read() + b"\0")
    return h.hexdigest()


def hil_image():
    """tools/hil's image in the emulator's cache (`make image-hil`) when it holds this tree's
    firmware and simulated table, else None."""
    from boardsim.rp2040 import images
    p = os.path.join(images.cache_dir(), "hil-RPI_PICO.elf")
    try:
        with open(p + ".digest") as f:
            return p if f.read().strip() == frozen_digest() else None
    except OSError:
        return None


def stage(timeline, dest, arch="armv6m", config=None, frozen=False):
    """The files to copy to the device, in `dest`. Returns their paths. frozen: the device's
    image holds the firmware and boardsim/target (make image-hil): only the run's own files."""
    os.makedirs(dest, exist_ok=True)
    files = []

    from tools.build_firmware import compile_mpy

    def compile_(src, name):
        # (compiled once per source text, name, arch and options: compile_mpy's build/mpy-cross)
        out = os.path.join(dest, name[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        r = compile_mpy(src, out, name, arch=arch, opt="-O2")
        if r.returncode != 0:
            raise SystemExit(f"mpy-cross -march={arch} failed on {src}:\n{r.stderr}")
        files.append(out)

    from tools.build_firmware import firmware_files
    for name in firmware_files(FIRMWARE):      # in their folders (sensing/, tracking/ ...)
        if name not in FIRMWARE_SKIP and not frozen:
            compile_(os.path.join(FIRMWARE, name), name)
    for name in sorted(os.listdir(TARGET)):
        if name.endswith(".py") and name not in HOST_ONLY and (name == "machine.py" or not frozen):
            compile_(os.path.join(TARGET, name), "simmachine.py" if name == "machine.py" else name)
    compile_(os.path.join(DEVICE, "machine.py"), "machine.py")
    tl = os.path.join(dest, "timeline.jsonl")
    with open(tl, "w") as f:
        for op in timeline:
            f.write(json.dumps(op, separators=(",", ":")) + "\n")
    files.append(tl)
    if config:
        c = os.path.join(dest, "config.json")
        shutil.copy(config, c)
        files.append(c)
    return files


def commands(files, port=None, mpremote=None):
    """The mpremote commands: empty hil/ (and make it and the firmware's folders in it), copy
    the files into it (one copy per folder), run the launcher. A file staged in a folder of
    the stage (sensing/zones.mpy) goes into that folder under hil/."""
    base = [mpremote or default_mpremote()] + (["connect", port] if port else [])
    files = list(files)
    top = os.path.dirname(files[0]) if files else ""
    # the stage's root: the folder that holds timeline.jsonl (stage() always writes it)
    for f in files:
        if os.path.basename(f) == "timeline.jsonl":
            top = os.path.dirname(f)
    rel = [os.path.relpath(f, top).replace(os.sep, "/") for f in files]
    dirs = sorted({r.rsplit("/", 1)[0] for r in rel if "/" in r})
    mk = ("import os\n"
          "def rm(d):\n    for f in os.listdir(d):\n        p = d + '/' + f\n"
          "        if os.stat(p)[0] & 0x4000:\n            rm(p)\n            os.rmdir(p)\n"
          "        else:\n            os.remove(p)\n"
          "try:\n    os.mkdir(%r)\nexcept OSError:\n    pass\nrm(%r)\n"
          "for s in %r:\n    os.mkdir(%r + '/' + s)\n" % (DIR, DIR, dirs, DIR))
    cmds = [base + ["exec", mk],
            base + ["fs", "cp"] + [f for f, r in zip(files, rel) if "/" not in r] + [f":{DIR}/"]]
    for d in dirs:
        cmds.append(base + ["fs", "cp"] + [f for f, r in zip(files, rel) if r.rsplit("/", 1)[0] == d]
                    + [f":{DIR}/{d}/"])
    cmds.append(base + ["run", os.path.join(DEVICE, "hil_main.py")])
    return cmds


def run_device(cmds, timeout=600, slow=1.0):
    """Run the commands; returns (event lines, other lines, status from HIL-END or None). slow
    multiplies the time limits (the copy's 120 s, the run's `timeout`)."""
    timeout = timeout * slow
    for c in cmds[:-1]:
        r = subprocess.run(c, capture_output=True, text=True, timeout=120 * slow)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(c[:4])} ... failed ({r.returncode}):\n{r.stderr or r.stdout}")
    r = subprocess.run(cmds[-1], capture_output=True, text=True, timeout=timeout)
    events, other, status = [], [], None
    for line in (r.stdout + r.stderr).splitlines():
        s = line.strip()
        if s.startswith("HIL-END"):
            status = int(s.split()[1])
        elif s.startswith("{"):
            events.append(s)
        elif s:
            other.append(s)
    return events, other, status


def compare(want, got):
    """A unified diff of two lists of event lines ([] when equal, JSON-wise)."""
    if [json.loads(x) for x in want] == [json.loads(x) for x in got]:
        return []
    return list(difflib.unified_diff(want, got, "desktop", "pico", lineterm=""))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/hil", description=__doc__.splitlines()[0])
    ap.add_argument("scenario", help="a scenario (CONTRACT section 2)")
    ap.add_argument("--port", default=os.environ.get("PORT"), help="the Pico's serial port (default: mpremote's auto)")
    ap.add_argument("--config", help="config.json for the firmware (displays: docs/displays.md)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "hil"), help="where the runs and the diff go")
    ap.add_argument("--arch", default="armv6m", help="mpy-cross -march for the device (x64: the unix port)")
    ap.add_argument("--mpremote", help="the mpremote to use (a stand-in for tests)")
    ap.add_argument("--dry-run", action="store_true", help="print the mpremote commands, run nothing on the device")
    ap.add_argument("--emulated", action="store_true",
                    help="the emulated Pico (boardsim/rp2040) on a pseudo-terminal instead of a real one")
    ap.add_argument("--frozen", action="store_true",
                    help="the Pico runs tools/hil's image (make image-hil): copy only the run's own files")
    ap.add_argument("--slow", type=float, default=None,
                    help="multiply mpremote's time limits (default 1, with --emulated 20: the emulated "
                         "chip runs at 1/2 to 1/20 of real time, the less the busier the machine)")
    a = ap.parse_args(argv)
    if a.slow is None:
        a.slow = 20.0 if a.emulated else 1.0
    if a.emulated and not a.dry_run:
        with emulated_pico() as (port, frozen):
            a.port = port
            a.frozen = a.frozen or frozen
            return _run(a)
    return _run(a)


def emulated_pico():
    """A context: (the emulated Pico's console on a pty, whether its image is tools/hil's own
    frozen one); the chip runs in a thread. The image: RP2040_IMAGE, else tools/hil's (make
    image-hil, when it is this tree's), else the stock one, else the frozen scoreboard."""
    import contextlib
    import threading
    from boardsim.rp2040 import images, serial_bridge

    @contextlib.contextmanager
    def ctx():
        why = images.missing()
        image = os.environ.get("RP2040_IMAGE") or hil_image() or images.find_image("stock") \
            or images.find_image("frozen")
        if image is None or (why and "image" not in why):
            raise SystemExit(f"no emulated Pico: {why}")
        frozen = image == hil_image()
        print(f"emulated Pico: {image}" + (" (firmware and simulated table frozen)" if frozen else ""),
              flush=True)
        master, slave, path = serial_bridge.open_pty()
        done = threading.Event()
        err = []

        def run():
            try:
                serial_bridge.serve(image, images.find_bootrom(), master, stop=done.is_set)
            except Exception as e:      # noqa: BLE001 (reported after the run)
                err.append(e)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        try:
            yield path, frozen
        finally:
            done.set()
            t.join(timeout=30)
            os.close(slave)
            os.close(master)
            if err:
                print(f"emulated Pico: {err[0]}")
    return ctx()


def _run(a):
    timeline = timeline_of(a.scenario)
    stage_dir = tempfile.mkdtemp(prefix="zenn-hil-")
    try:
        files = stage(timeline, stage_dir, a.arch, a.config, a.frozen)
        cmds = commands(files, a.port, a.mpremote)
        if a.dry_run:
            for c in cmds:
                shown = c if len(c) < 12 else c[:6] + [f"... {len(c) - 7} files ..."] + c[-1:]
                print(" ".join(x if "\n" not in x else repr(x) for x in shown))
            return 0
        want = desktop_events(timeline, a.config)
        got, other, status = run_device(cmds, slow=a.slow)
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "desktop.jsonl"), "w") as f:
        f.write("\n".join(want) + "\n")
    with open(os.path.join(a.out, "pico.jsonl"), "w") as f:
        f.write("\n".join(got) + "\n")
    with open(os.path.join(a.out, "pico.log"), "w") as f:
        f.write("\n".join(other) + "\n")
    diff = compare(want, got)
    with open(os.path.join(a.out, "diff.txt"), "w") as f:
        f.write("\n".join(diff) + ("\n" if diff else ""))
    for line in other:
        print("device:", line)
    if status is None:
        print(f"the device run did not end (no HIL-END): {len(got)} event lines; see {a.out}")
        return 1
    if status != 0:
        print(f"the device run failed (status {status}); see {a.out}/pico.log")
        return 1
    if diff:
        print("\n".join(diff[:60]))
        print(f"DIFFERENT: the Pico wrote other events than the desktop ({a.out}/diff.txt)")
        return 1
    print(f"same: {len(want)} event lines on the Pico and on the desktop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
