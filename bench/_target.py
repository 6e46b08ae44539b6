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


def run(script, job, heapsize=None, firmware=FIRMWARE, timeout=600):
    """(result dict, other stdout lines). firmware: the folder the firmware is imported from
    (the sources, or .mpy files built for the host)."""
    exe = MICROPYTHON if os.path.exists(MICROPYTHON) else "micropython"
    argv = [exe] + (["-X", f"heapsize={heapsize}"] if heapsize else []) + [os.path.join(TARGET, script)]
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([TARGET, firmware, SIM])
    p = subprocess.run(argv, input=json.dumps(job) + "\n", capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=timeout)
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
