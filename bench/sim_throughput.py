"""How fast the simulator plays a full game: simulated seconds per wall second, under the
MicroPython unix port and under CPython.

    .venv/bin/python bench/sim_throughput.py [--repeat N]

The games are complete Zenn Bowling games (ten frames, tenth-frame bonus balls included), one
with waypoint shots and one with flicks (physics), for one and for two players; each is compiled
once (host time reported apart) and then played through the runner with the heap locked in the
loop (MicroPython) exactly as `boardsim run` does. Wall time is the best of N runs of the whole
runner process (start-up included); CPU time (user + system of that process, best of N) is the
figure to compare on a shared machine, where wall time mostly says how busy the others are.

    --checkout DIR   run another checkout's simulator and firmware (e.g. a `git worktree` or
                     `git archive` of an older commit) with this bench's games: before/after
"""
import argparse
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from boardsim import physics, runtime                      # noqa: E402
from boardsim.compile import compile_scenario               # noqa: E402
from boardsim.geometry import Board                         # noqa: E402
from boardsim.geometry import ROOT                          # noqa: E402
from boardsim.scenario import parse                         # noqa: E402

B = Board.load()
POCKET_A_Y = B.to_board("a", 0, B.gate_v)[1]
CUP_B_Y = B.cup_center("b")[1]
ZENN_V = round(physics.speed_for(CUP_B_Y - B.cup_radius - POCKET_A_Y) * 1.05)


def path_game(players):
    """Strikes, spares and open frames by waypoint paths."""
    steps = []
    for f in range(10):
        for p in range(players):
            steps.append({"place": {"small": "a.pocket"}})
            if (f + p) % 3 == 0:
                steps += [{"shoot": "small", "path": ["b.pocket", "b.cup"]}, {"take": "small"}]
                if f == 9:
                    for _ in range(2):
                        steps += [{"place": {"small": "a.pocket"}},
                                  {"shoot": "small", "path": ["b.pocket", "b.cup"]}, {"take": "small"}]
            elif (f + p) % 3 == 1:
                steps += [{"shoot": "small", "path": ["b.e2"]},
                          {"shoot": "small", "path": ["b.pocket", "b.cup"]}, {"take": "small"}]
                if f == 9:
                    steps += [{"place": {"small": "a.pocket"}}, {"shoot": "small", "path": ["b.n2"]},
                              {"take": "small"}]
            else:
                steps += [{"shoot": "small", "path": ["b.z3"]}, {"shoot": "small", "path": ["b.back4"]},
                          {"take": "small"}]
    return {"game": "bowling", "players": players, "steps": steps}


def flick_game(players):
    """Strikes by flicks through the gate, and open frames: a flick to b's strips, then one
    over the side bumper."""
    steps = []
    strip_v = round(physics.speed_for(430.0))
    for f in range(10):
        for p in range(players):
            steps.append({"place": {"small": "a.pocket"}})
            if (f + p) % 2 == 0:
                steps += [{"flick": "small", "v": [0, ZENN_V]}, {"take": "small"}]
                if f == 9:
                    for _ in range(2):
                        steps += [{"place": {"small": "a.pocket"}},
                                  {"flick": "small", "v": [0, ZENN_V]}, {"take": "small"}]
            else:
                steps += [{"flick": "small", "v": [150, strip_v]}, {"flick": "small", "v": [3000, 200]}]
    return {"game": "bowling", "players": players, "steps": steps}


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def play(timeline, rt, repeat, checkout=None):
    fd, path = tempfile.mkstemp(prefix="bench-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w") as f:
            runtime.write_timeline(timeline, f)
        argv, env = runtime.command(rt, path, runner_args=["--stats"])
        if checkout:
            argv = [a.replace(ROOT, checkout) if a.startswith(ROOT + "/boardsim") else a for a in argv]
            for k in ("MICROPYPATH", "PYTHONPATH"):
                if k in env:
                    env[k] = env[k].replace(ROOT, checkout)
        best = best_cpu = math.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            c0 = _children_cpu()
            p = subprocess.run(argv, env=env, cwd=checkout or ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if p.returncode != 0:
                raise SystemExit(f"{rt}: runner failed: {p.stderr.strip().splitlines()[-1:]}")
            best = min(best, wall)
            best_cpu = min(best_cpu, _children_cpu() - c0)
        m = re.search(r"runner: (\d+) steps, (\d+) ms simulated", p.stderr)
        steps, sim_ms = int(m.group(1)), int(m.group(2))
        events = sum(1 for ln in p.stdout.splitlines() if '"game_over"' in ln)
        return steps, sim_ms / 1000.0, best, best_cpu, events
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--checkout", help="another checkout's simulator and firmware")
    ap.add_argument("--runtime", action="append", choices=runtime.RUNTIMES,
                    help="runtimes to time (default micropython and cpython; rp2040, the emulated "
                         "chip, plays a game in minutes: bench/rp2040.py)")
    args = ap.parse_args()
    checkout = os.path.abspath(args.checkout) if args.checkout else None
    rows = []
    for name, scn in (("bowling 1P, paths", path_game(1)), ("bowling 2P, paths", path_game(2)),
                      ("bowling 1P, flicks", flick_game(1)), ("bowling 2P, flicks", flick_game(2))):
        t0 = time.perf_counter()
        tl = compile_scenario(parse(scn))
        compile_s = time.perf_counter() - t0
        for rt in args.runtime or ("micropython", "cpython"):
            steps, sim_s, wall, cpu, over = play(tl, rt, args.repeat, checkout)
            rows.append((name, rt, compile_s, sim_s, wall, sim_s / wall, cpu, sim_s / cpu, steps / cpu, over))
    head = ("game", "runtime", "compile s", "simulated s", "wall s", "sim s / wall s", "cpu s",
            "sim s / cpu s", "steps / cpu s", "game over")
    fmt = "{:<20} {:<12} {:>9} {:>11} {:>7} {:>14} {:>6} {:>13} {:>13} {:>9}"
    print(fmt.format(*head))
    print("-" * 125)
    for name, rt, c, s, w, x, cpu, xc, sps, over in rows:
        print(fmt.format(name, rt, f"{c:.2f}", f"{s:.1f}", f"{w:.2f}", f"{x:.1f}", f"{cpu:.2f}", f"{xc:.1f}",
                         f"{sps:,.0f}", "yes" if over else "NO"))


if __name__ == "__main__":
    main()
