"""Host side helper of the benches: run a target-side script (bench/target/*.py) under the
MicroPython unix port with the firmware and the simulated table on its path, hand it a job
(one JSON line on stdin) and read its "RESULT {...}" line."""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
# the pip package's unix port, whatever ZENN_MICROPYTHON names for the games (make test's built
# one): the heap figures and budgets measured here (tests/test_budgets.py) were set on it, and it
# is the same pinned build on every machine, with or without a MicroPython tree to build from
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
TARGET = os.path.join(ROOT, "bench", "target")
FIRMWARE = os.path.join(ROOT, "firmware")
SIM = os.path.join(ROOT, "boardsim", "target")


class TargetFailed(RuntimeError):
    pass


@contextlib.contextmanager
def config_file(cfg):
    """The path of a config.json holding cfg (a dict) for a target script's job, removed
    afterwards; None when cfg is empty (the firmware's defaults)."""
    if not cfg:
        yield None
        return
    tmp = tempfile.mkdtemp(prefix="zenn-cfg-")
    try:
        path = os.path.join(tmp, "config.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        yield path
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _fixed_paths(exe, firmware):
    """(working folder, interpreter, target, firmware, simulator) as the interpreter is shown
    them: a fresh folder of the same length on every machine, the rest symlinked in it. The
    interpreter keeps its own path (sys.executable, sys.argv), every module's __file__ and the
    script's path on its heap or in its string pool, and the heap's layout after them follows
    their lengths: the firmware's code measured by the memory benches moved by up to 1 KB
    with the checkout's folder (a clean clone under /check/work/main held 128 B more than one
    under /tmp/fresh and failed test_budgets by 12 B)."""
    base = "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()
    tmp = tempfile.mkdtemp(prefix="zenn-mu-", dir=base)
    try:
        # the interpreter and the target scripts copied (it resolves links in its own path and
        # in the script's folder, sys.path[0]), the firmware and the simulator linked
        exe_copy = os.path.join(tmp, "m")
        shutil.copy2(exe, exe_copy)
        target = os.path.join(tmp, "t")
        shutil.copytree(TARGET, target, ignore=shutil.ignore_patterns("__pycache__"))
        links = []
        for name, real in (("f", firmware), ("s", SIM)):
            link = os.path.join(tmp, name)
            os.symlink(os.path.abspath(real), link)
            links.append(link)
        yield [tmp, exe_copy, target] + links
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(script, job, heapsize=None, firmware=FIRMWARE, timeout=600):
    """(result dict, other stdout lines). firmware: the folder the firmware is imported from
    (the sources, or .mpy files built for the host)."""
    exe = MICROPYTHON if os.path.exists(MICROPYTHON) else shutil.which("micropython")
    with _fixed_paths(exe, firmware) as (here, exe, target, fw, sim):
        argv = [exe] + (["-X", f"heapsize={heapsize}"] if heapsize else []) + [
            os.path.join(target, script)]
        env = dict(os.environ)
        env["MICROPYPATH"] = os.pathsep.join([target, fw, sim])
        p = subprocess.run(argv, input=json.dumps(job) + "\n", capture_output=True, text=True,
                           env=env, cwd=here, timeout=timeout)
    result = None
    other = []
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
        else:
            other.append(line)
    if p.returncode != 0 or result is None:
        tail = (p.stderr.strip().splitlines() or other or ["no output"])[-6:]
        raise TargetFailed(f"{script} failed (status {p.returncode}):\n" + "\n".join(tail))
    return result, other


def timeline(scenario):
    """A scenario (boardsim/scenario.py's dict form) compiled into the runner's timeline."""
    from boardsim.compile import compile_scenario
    from boardsim.scenario import parse
    return compile_scenario(parse(scenario))


def mem_info_max_free(lines):
    """The largest free block (bytes) from micropython.mem_info()'s lines (16-byte blocks)."""
    for ln in lines:
        if "max free sz:" in ln:
            return int(ln.split("max free sz:")[1].split()[0]) * 16
    return None
