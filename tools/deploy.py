"""`make deploy [PORT=/dev/ttyACM0]`: copy build/firmware (made by `make firmware`) onto a
Pico running MicroPython with mpremote, then reset it so main.py starts the scoreboard.

Old .py copies of modules that are now .mpy are removed first: MicroPython would import a
stale .py before the .mpy beside it; so are the flat layout's modules (before issue 15 put them
into folders), and the folders are made. One `fs cp` per folder. The scoreboard's config.json (docs/displays.md) is copied
too when there is one: --config FILE, or config.json in the project's root.

No boot.py: the firmware needs nothing before main.py, and mpremote stops a running main.py
with Ctrl-C on its own, so no escape hatch is needed to reach the REPL. `--dry-run` prints the
mpremote commands without running them."""
import argparse
import os
import subprocess
import sys

from tools.build_firmware import OUT, ROOT

CONFIG = os.path.join(ROOT, "config.json")
FLAT_LAYOUT = ("app", "best", "board_table", "buttons", "buzzer", "calib", "config", "digits", "displays",
               "events", "fastin", "faults", "font", "hall_scan", "journal", "locate", "locate_presence",
               "max7219", "padmap", "pins", "rules_bowling", "rules_trap", "seg_ui", "shift_scan", "shot",
               "ssd1306", "tracker", "tunes", "ui", "zones")


def mpremote():
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    return exe if os.path.exists(exe) else "mpremote"


def commands(port, out=OUT, config=None):
    files = []
    if os.path.isdir(out):
        for d, dirs, names in os.walk(out):
            dirs.sort()
            files += [os.path.relpath(os.path.join(d, n), out).replace(os.sep, "/") for n in names]
    files.sort()
    if not files:
        raise SystemExit("nothing to deploy: run `make firmware` first")
    base = [mpremote()] + (["connect", port] if port else [])
    cmds = []
    stale = [f[:-4] + ".py" for f in files if f.endswith(".mpy")]
    # the flat layout's modules (before issue 15's folders), .py or .mpy: left on the device,
    # nothing would import them, but they would take its flash
    stale += [m + ext for m in FLAT_LAYOUT for ext in (".py", ".mpy")]
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    rm = ("import os\nfor f in %r:\n    try:\n        os.remove(f)\n    except OSError:\n        pass\n"
          "for d in %r:\n    try:\n        os.mkdir(d)\n    except OSError:\n        pass\n" % (stale, dirs))
    cmds.append(base + ["exec", rm])
    top = [f for f in files if "/" not in f]
    if top:
        cmds.append(base + ["fs", "cp"] + [os.path.join(out, f) for f in top] + [":"])
    for d in dirs:
        inside = [f for f in files if f.rsplit("/", 1)[0] == d]
        cmds.append(base + ["fs", "cp"] + [os.path.join(out, f) for f in inside] + [":" + d + "/"])
    if config:
        cmds.append(base + ["fs", "cp", config, ":config.json"])
    cmds.append(base + ["reset"])
    return cmds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", default=os.environ.get("PORT"), help="serial port of the Pico (default: mpremote's auto)")
    ap.add_argument("--dry-run", action="store_true", help="print the mpremote commands only")
    ap.add_argument("--config", help="the config.json to put on the Pico (default: ./config.json if there is one)")
    ap.add_argument("--out", default=OUT, help="the built firmware (make firmware)")
    a = ap.parse_args(argv)
    config = a.config or (CONFIG if os.path.exists(CONFIG) else None)
    if config and not os.path.exists(config):
        raise SystemExit(f"no such config file: {config}")
    for c in commands(a.port, a.out, config):
        print(" ".join(c if len(" ".join(c)) < 200 else c[:4] + ["..."]))
        if not a.dry_run:
            r = subprocess.run(c)
            if r.returncode:
                raise SystemExit(f"mpremote failed ({r.returncode}): is the Pico plugged in and running MicroPython?")


if __name__ == "__main__":
    main()
