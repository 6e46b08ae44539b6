"""Host side helper of the benches: run a target-side script (bench/target/*.py) under the
MicroPython unix port with the firmware and the simulated table on its path, hand it a job
(one JSON line on stdin) and read its "RESULT {...}" line."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
TARGET = os.path.join(ROOT, "bench", "target")
FIRMWARE = os.path.join(ROOT, "firmware")
SIM = os.path.join(ROOT, "boardsim", "target")


class TargetFailed(RuntimeError):
    pass


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
