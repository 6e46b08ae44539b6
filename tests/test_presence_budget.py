"""The presence locator's work per frame while chips move is bounded in time on the chip (issue
13; presence_locate, BUDGET_US): on the emulated RP2040 a moving chip's smeared pads, not
followed, were searched in full, 4,624 moves tried in one frame (2.65 s), and the strike was not
scored.

The real firmware on the simulated table (presence pads), a chip put down and shot into the
cup, every find() counted: the moves it tried (moves(), delta()), whether a search was cut, and
whether the frame left the board settled. The locator reads the chip's clock (time.ticks_us on
the rp2 port); under the simulator it has none, and no search is ever cut: the desktop's
verdicts are main's (a move budget, reverted, cut them too: a sure verdict went wrong, seed 43).
Here a clock is given to it that runs as the chip's would, US_PER_MOVE a move tried (the
locator's own count: deterministic): no frame that did not settle then tries more than the
budget's worth of moves and one slice (SLICE, and a chip's last 8 moves), some frames are cut,
and the strike is scored. The budget here is BUDGET (4 ms; the chip tier's -k tight does the
same with 6 ms): the firmware's 25 ms was reached by the frame read while the put-down's hand
went, whose 40 - 55 pads were searched as up to four chips; since that patch is taken for the
hand (issue 13, branch handpatch) this strike's heaviest frame is the put-down's follow, 72
moves, under 25 ms' worth. The control, the runner as it is (no clock): no search cut, and that
frame tries more moves than the budget allows. Both runtimes.
"""
import json

import pytest

from conftest import run_target
from boardsim.testing import Table

TARGET = r"""
import sys
import json
import runner as R
from sensing import presence_locate as LP
from find_counter import FindCounter, play_shift

job = json.loads(sys.stdin.readline())
fc = FindCounter(job["us_per_move"], job["budget"], base=job["base"])
r = play_shift(R, job, fc)
print("RESULT " + json.dumps({"rows": [row[:4] for row in fc.rows()],
                              "budget": fc.loc.BUDGET_US,
                              "slice": LP.PresenceLocator.SLICE}))
"""


def strike():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")
    return t.timeline()


US_PER_MOVE = 100      # about what a move tried costs on the chip (docs/performance.md)
BUDGET = 4000          # us: 40 moves' worth (the put-down's follow tries 72)


def run(runtime, tmp_path, us_per_move, base=0):
    res, p = run_target(TARGET, runtime, {"tl": strike(), "us_per_move": us_per_move, "base": base, "budget": BUDGET,
                                          "config": str(tmp_path / "config.json")},
                        name="presence_budget_target.py", tmp_path=tmp_path, timeout=600,
                        marker="RESULT ")
    events = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    return res, events


# base: where the clock starts; 2**30 - 12345 - 100: it wraps (ticks of 2**30) in the put-down
@pytest.mark.parametrize("base", [0, (1 << 30) - 12345 - 100 * 200])
def test_a_moving_frames_search_stops_at_the_chips_time_and_the_strike_is_scored(runtime, tmp_path,
                                                                                   base):
    res, events = run(runtime, tmp_path, US_PER_MOVE, base)
    rows = res["rows"]
    # the most one frame may try: the budget's worth of moves, the slice under way when it ran
    # out and its chip's last 8 moves
    most = res["budget"] // US_PER_MOVE + res["slice"] + 8
    moving = [t for t, c, n, s in rows if not s]
    cuts = [t for t, c, n, s in rows if c]
    print(f"{runtime}, clock from {base}: {len(moving)} frames not settled, {len(cuts)} cut, most moves a frame"
          f" {max(moving)} (bound {most})")
    assert len(moving) > 20, rows
    assert cuts, rows                                   # the budget was reached ...
    assert max(cuts) <= most, cuts                      # ... and held
    assert max(moving) <= most, moving
    shots = [e for e in events if e.get("ev") == "shot"]
    assert [(e["result"], e["pins"]) for e in shots] == [("strike", 10)], shots


def test_without_the_chips_clock_no_search_is_cut(runtime, tmp_path):
    """The control, and the desktop as it runs: the runner's locator has no clock, so no search
    is cut, and a frame whose groups changed tries more than the chip's budget would allow."""
    res, events = run(runtime, tmp_path, 0)
    rows = res["rows"]
    print(f"{runtime}: no clock, most moves a frame not settled"
          f" {max(t for t, c, n, s in rows if not s)}")
    assert not any(c for t, c, n, s in rows)
    assert max(t for t, c, n, s in rows if not s) > BUDGET // US_PER_MOVE + 8
    shots = [e for e in events if e.get("ev") == "shot"]
    assert [(e["result"], e["pins"]) for e in shots] == [("strike", 10)], shots
