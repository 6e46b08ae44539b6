"""The fast inputs (cup beams, gate beams, hit sensor; firmware/sensing/fastin.py): the shortest pulse
the IRQ latch still catches, and the longest loop stall they survive, through the real
firmware on the simulated table.

    .venv/bin/python -m bench.fast_inputs

What the simulator can show is the firmware's side: that a latched edge is counted and judged
right whatever its width, its phase against the loop and the stall around it. The hardware's
side (how short a pulse the RP2040's edge detector latches, how fast the beam's receiver is)
is in docs/performance.md.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import _target as T  # noqa: E402

WIDTHS_US = [1, 10, 100, 1000, 5000]
CUP_WIDTHS_US = [1, 100, 5000]
STALLS_MS = [0, 50, 200, 1000, 4900, 5100]


def job(phases=4):
    from boardsim.testing import Table
    idle = T.timeline(Table("bowling", players=1).scenario())
    strike = T.timeline(Table("bowling", players=1).place("small", "a.pocket")
                        .shoot("small", "b.pocket", "b.cup").scenario())
    return {"config": None, "idle": idle, "strike": strike, "widths_us": WIDTHS_US,
            "phases": phases, "cup_widths_us": CUP_WIDTHS_US, "stalls_ms": STALLS_MS}


def measure(phases=4):
    res, _ = T.run("b_fast.py", job(phases), heapsize="16M")
    return res


def report(res):
    print("Pulses on each fast input (cup a/b, gate a/b, hit), at rest, phases spread over a step")
    print(f"{'width':>8} {'pulses':>7} {'latched':>8} {'step poll':>10} {'frame poll':>11}")
    for w in sorted(res["pulses"], key=int):
        p = res["pulses"][w]
        print(f"{int(w):6d}us {p['pulses']:7d} {p['latched']:8d} {p['step_poll']:10d} {p['frame_poll']:11d}")
    print("  latched: counted by the IRQ latch; step / frame poll: would a read of the pin's level")
    print("  once per step / once per frame have seen it")
    print()
    print("The strike with the cup's throat pulse shortened:")
    for w in sorted(res["cup"], key=int):
        print(f"  {int(w):6d} us: {res['cup'][w]}")
    print()
    print("The strike with the loop stalled around the gate and the drop (no step meanwhile):")
    print(f"{'stall':>8} {'IRQs run':>10} {'IRQs off':>10}")
    for ms in sorted(res["stalls"]["irq"], key=int):
        print(f"{int(ms):6d}ms {res['stalls']['irq'][ms]:>10} {res['stalls']['off'][ms]:>10}")
    print("  reset: the watchdog bit (firmware/scoreboard/app.py WDT_MS) and the shot was lost")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phases", type=int, default=4)
    a = ap.parse_args(argv)
    res = measure(a.phases)
    report(res)
    return res


if __name__ == "__main__":
    main()
