"""Proof that a change to the simulator leaves what the firmware sees untouched: record, for a
set of runs, every example's event stream and final state and a digest of every value the
firmware read at every step (boardsim/target/simtrace.py), then compare two recordings.

    .venv/bin/python bench/sim_trace.py record DIR [pytest args ...]
    .venv/bin/python bench/sim_trace.py compare DIR_BEFORE DIR_AFTER

`record` plays every examples/*.json (both front ends) and bench/sim_throughput.py's four whole
games (paths and flicks, one and two players) under MicroPython and CPython (stdout and
the runner's final state kept, and their traces) and then runs pytest (by default the games, fuzzed games, sensing
and fault tests; hypothesis seeded, so that both recordings play the same examples) with
BOARDSIM_TRACE set, so that every runner the tests start adds its line. `compare` says which
runs differ, and exits non-zero if any does.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TESTS = ["tests/test_games_bowling.py", "tests/test_games_trap.py", "tests/test_fuzz_games.py",
         "tests/test_off_or_lifted.py", "tests/test_presence.py", "tests/test_sensing.py",
         "tests/test_faults.py", "tests/test_fault_pass.py", "tests/test_power_cuts.py",
         "tests/test_persistence.py", "tests/test_contract.py", "tests/test_scenario.py",
         "tests/test_calibration.py", "tests/test_display.py", "tests/test_sevenseg.py"]
FRONT_ENDS = {"hall": None, "shift": {"front_end": "shift"}}
# the runtimes whose runner is traced (the emulated chip's, pico_runner.py, is not: its firmware
# reads the chip's own pins; bench/rp2040.py and tests/test_rp2040.py compare its events);
# SIM_TRACE_RUNTIMES=micropython: only these
RUNTIMES = [r for r in os.environ.get("SIM_TRACE_RUNTIMES", "").split(",") if r] or ["micropython", "cpython"]


def record(out, pytest_args):
    from boardsim.compile import compile_scenario
    from boardsim.scenario import parse
    from boardsim.testing import run_timeline
    traces = os.path.join(out, "traces")
    os.makedirs(traces, exist_ok=True)
    os.environ["BOARDSIM_TRACE"] = traces
    ex = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json"))):
        with open(path) as f:
            tl = compile_scenario(parse(json.load(f)))
        for rt in RUNTIMES:
            for fe, cfg in FRONT_ENDS.items():
                r = run_timeline(tl, rt, config=cfg)
                ex[f"{os.path.basename(path)} {rt} {fe}"] = {"events": r.events, "state": r.state}
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import sim_throughput as bench
    for name, scn in (("path_game_1p", bench.path_game(1)), ("path_game_2p", bench.path_game(2)),
                      ("flick_game_1p", bench.flick_game(1)), ("flick_game_2p", bench.flick_game(2))):
        tl = compile_scenario(parse(scn))
        for rt in RUNTIMES:
            r = run_timeline(tl, rt)
            ex[f"{name} {rt}"] = {"events": r.events, "state": r.state}
    with open(os.path.join(out, "examples.json"), "w") as f:
        json.dump(ex, f, indent=1, sort_keys=True)
    args = pytest_args or TESTS
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1",
           "--hypothesis-seed=0", "--durations=40"] + args
    with open(os.path.join(out, "pytest.txt"), "w") as f:
        rc = subprocess.call(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    print(f"recorded {len(ex)} example runs and {len(os.listdir(traces))} traced timelines in {out};"
          f" pytest exit {rc}")


def _load(d):
    runs = {}
    for p in glob.glob(os.path.join(d, "traces", "*.txt")):
        with open(p) as f:
            # (a timeline played more than once gives the same line each time)
            runs[os.path.basename(p)] = sorted(set(ln.strip() for ln in f if ln.strip()))
    with open(os.path.join(d, "examples.json")) as f:
        ex = json.load(f)
    return runs, ex


def _volatile(state):
    # the simulator's own heap is on the same heap as the firmware's under MicroPython: what it
    # holds after boot is not something the firmware sees
    return {k: v for k, v in state.items() if k != "heap_after_boot"}


def compare(a, b):
    ra, ea = _load(a)
    rb, eb = _load(b)
    bad = 0
    for k in sorted(set(ea) | set(eb)):
        x, y = ea.get(k), eb.get(k)
        if x is None or y is None or x["events"] != y["events"] or _volatile(x["state"]) != _volatile(y["state"]):
            print("example differs:", k)
            bad += 1
    only = set(ra) ^ set(rb)
    for k in sorted(only):
        print("run in one recording only:", k, (ra.get(k) or rb.get(k))[0][:80])
    same = 0
    for k in sorted(set(ra) & set(rb)):
        if ra[k] != rb[k]:
            print("trace differs:", k, "\n  ", ra[k], "\n  ", rb[k])
            bad += 1
        else:
            same += len(ra[k])
    print(f"{len(ea)} example runs compared (events and final state), {same} traced runs identical,"
          f" {bad} differ, {len(only)} in one recording only")
    return 1 if bad or only else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "record":
        record(os.path.abspath(sys.argv[2]), sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
