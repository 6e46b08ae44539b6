"""The presence locator's work per frame while chips move is bounded (issue 13; presence_locate,
MOVE_BUDGET): on the emulated RP2040 a moving chip's smeared pads, not followed, were searched
in full, 4,624 moves tried in one frame (2.65 s), and the strike was not scored.

The real firmware on the simulated table (presence pads), a chip put down and shot into the
cup, every find() counted: the moves it tried (moves(), delta()), whether a search was cut at
the budget, and, for the frames whose groups all changed (moving), the most tried. The moves a
frame tries are the locator's own count (deterministic), not time. With the budget no frame in
which groups changed tries more than MOVE_BUDGET moves and the candidates' charges plus one
chip's last 8 moves, some frames are cut (the hand putting the chip down leaves a smeared group
that the full search would fit as four chips), and the strike is scored; the control, the same
run with the budget out of reach, tries far more in those frames, so the bound is the budget's.
Both runtimes.
"""
import json

import pytest

from conftest import run_target
from boardsim.testing import Table

TARGET = r"""
import sys
import json
from array import array
import runner as R
from sensing import presence_locate as LP

job = json.loads(sys.stdin.readline())
if job["budget"] is not None:
    LP.PresenceLocator.MOVE_BUDGET = job["budget"]
with open(job["config"], "w") as f:
    f.write(json.dumps({"front_end": "shift"}))
r = R.Runner(config=job["config"])
N = 2000
tried = array("i", [0] * N)        # per find() that tried moves: how many, cut, chips, settled
cut = bytearray(N)
found = bytearray(N)
settled = bytearray(N)
nrow = [0]
loc = None


def install():
    global loc
    loc = r.sb.loc
    find = loc.find

    def counted(grid):          # (under the runner's heap lock: allocates nothing)
        t0 = loc.tried
        n = find(grid)
        k = nrow[0]
        if loc.tried != t0 and k < N:
            tried[k] = loc.tried - t0
            cut[k] = loc.cut
            found[k] = n
            settled[k] = loc.settled
            nrow[0] = k + 1
        return n
    loc.find = counted


for o in job["tl"]:
    r.op(o)
    if loc is None and r.sb is not None:
        install()
r.run_ms(200)
k = nrow[0]
print("RESULT " + json.dumps({"rows": [[tried[i], cut[i], found[i], settled[i]] for i in range(k)],
                              "budget": LP.PresenceLocator.MOVE_BUDGET,
                              "cand": LP.PresenceLocator.CAND_MOVES}))
"""


def strike():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")
    return t.timeline()


def run(runtime, tmp_path, budget):
    res, p = run_target(TARGET, runtime, {"tl": strike(), "budget": budget,
                                          "config": str(tmp_path / "config.json")},
                        name="presence_budget_target.py", tmp_path=tmp_path, timeout=600,
                        marker="RESULT ")
    events = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    return res, events


def test_a_moving_frames_search_stops_at_the_budget_and_the_strike_is_scored(runtime, tmp_path):
    res, events = run(runtime, tmp_path, None)
    rows = res["rows"]
    # the most one frame may try: the budget, what the sets of chips tried are charged (a set
    # is started while budget is left: up to the budget's worth of charges) and one chip's
    # last 8 moves
    most = res["budget"] + 8
    moving = [t for t, c, n, s in rows if not s]
    cuts = [t for t, c, n, s in rows if c]
    assert len(moving) > 20, rows
    assert cuts, rows                                   # the budget was reached ...
    assert max(cuts) <= most, cuts                      # ... and held
    assert max(moving) <= most, moving
    shots = [e for e in events if e.get("ev") == "shot"]
    assert [(e["result"], e["pins"]) for e in shots] == [("strike", 10)], shots


def test_without_the_budget_those_frames_try_more(tmp_path):
    """The control: the budget out of reach, the same run (CPython) tries more than the budget
    in a frame whose groups changed, and no search is cut."""
    res, events = run("cpython", tmp_path, 1 << 29)
    rows = res["rows"]
    assert not any(c for t, c, n, s in rows)
    assert max(t for t, c, n, s in rows if not s) > 150 + 8 + 3 * 10
