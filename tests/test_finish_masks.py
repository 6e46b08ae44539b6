"""A verdict's masks made again only for the chips that moved (issue 13: the verdict's frame).

On the emulated chip the tracker's `_finish` took 5.5 - 6.0 ms of the verdict's frame with four
chips at rest, 3.4 - 3.9 ms of it `zones.disc_mask` (three calls a chip: its zones, and those it
may and surely overlaps by its position's uncertainty; `bench.rp2040_profile --settle --chips 4`).
Those of a chip that lies exactly where it lay, known as well (the same uncertainty), are the ones
it has: `_finish` keeps them and calls `disc_mask` only for the others.

The firmware's Tracker under both runtimes, fed by a stand-in locator (tests/support), twice with
the same frames (tests/test_track_same.py's shots and settle windows, creeps and uncertainties
changed among them): as it is, and with every slot's kept uncertainty forgotten before each frame
(the masks made again for every chip: the tracker before). Every value the tracker keeps is
compared after every frame, the masks with `disc_mask`'s own; the calls of `disc_mask` are
counted at each verdict against the chips that moved, were put down or are known otherwise.
Counts, not time.
"""
import pytest

from conftest import run_script
from test_track_same import _frames

TARGET = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracking import shot as S
from tables import board_table as B
from sensing import zones
from tracker_standins import StandInLocator, QuietFastInputs, tracker_state

job = json.loads(sys.stdin.readline())
MAX = TR.MAX


def state(tr):
    return tracker_state(tr, cupped=MAX)


calls = [0]
dm = zones.disc_mask


def counted(x, y, r):
    calls[0] += 1
    return dm(x, y, r)


zones.disc_mask = counted
trs = []
locs = []
for k in range(2):
    loc = StandInLocator(graded=job["graded"], move_tol=None if job["graded"] else 10)
    trs.append(TR.Tracker(loc, QuietFastInputs()))
    locs.append(loc)
differ = -1
wrong = -1
verdicts = 0
calls_now = 0           # disc_mask calls of the tracker as it is, at its verdicts
calls_due = 0           # ... those its chips moved, put down or known otherwise made due
calls_before = 0        # ... and of the tracker before (every chip's masks made again)
miscount = -1
for q, fr in enumerate(job["frames"]):
    for k in range(2):
        locs[k].load(fr)
    tr = trs[0]
    was = [(tr.present[i], tr.x[i], tr.y[i], tr.cupped[MAX + i] - 1) for i in range(MAX)]
    active = tr.state == TR.ACTIVE
    calls[0] = 0
    tr.frame()
    c0 = calls[0]
    for i in range(MAX):
        trs[1].cupped[MAX + i] = 0          # the tracker before: no masks kept
    calls[0] = 0
    trs[1].frame()
    c1 = calls[0]
    if active and tr.state == TR.IDLE:
        verdicts += 1
        due = 0
        for i in range(MAX):
            if not tr.present[i]:
                continue
            p, x, y, u = was[i]
            if not (p and x == tr.x[i] and y == tr.y[i] and u == tr.tunc[i]):
                due += 3 if tr.tunc[i] else 1
        calls_now += c0
        calls_due += due
        calls_before += c1
        if c0 != due and miscount < 0:
            miscount = q
    e0 = trs[0].take_event()
    e1 = trs[1].take_event()
    if differ < 0 and (e0 != e1 or state(trs[0]) != state(trs[1])):
        differ = q
    # the masks kept are disc_mask's own for where each chip lies, as well known
    for i in range(MAX):
        if tr.present[i] and wrong < 0:
            rad = B.R_SMALL if tr.kind[i] == S.KIND_SMALL else B.R_BIG
            u = tr.cupped[MAX + i] - 1      # (1 + the uncertainty its masks were made with)
            ok = tr.mask[i] == dm(tr.x[i], tr.y[i], rad) and u == tr.tunc[i]
            if ok and u:
                ok = tr.hi[i] == dm(tr.x[i], tr.y[i], rad + u) and \
                    tr.lo[i] == dm(tr.x[i], tr.y[i], rad - u if rad > u else 1)
            if not ok and tr.state == TR.IDLE:
                wrong = q
    vclock.advance_us(fr.get("ms", 16) * 1000)
print(json.dumps({"differ": differ, "wrong": wrong, "verdicts": verdicts, "calls_now": calls_now,
                  "calls_due": calls_due, "calls_before": calls_before, "miscount": miscount}))
'''


@pytest.mark.parametrize("graded", [True, False], ids=["hall", "presence"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_verdict_makes_the_masks_again_only_for_chips_that_moved(runtime, tmp_path, graded, seed):
    r = run_script(TARGET, "finish_masks.py", runtime, _frames(seed, graded), tmp_path)
    # the same tracker, value for value, after every frame, whether the masks were kept or not
    assert r["differ"] == -1, r
    # and what it keeps is disc_mask's own for where each chip lies
    assert r["wrong"] == -1, r
    assert r["verdicts"] >= 3, r
    # the cost: disc_mask at a verdict only for a chip that moved, was put down or is known
    # otherwise (three calls, one without an uncertainty), where the tracker before made them all
    assert r["miscount"] == -1, r
    assert r["calls_now"] == r["calls_due"], r
    assert r["calls_now"] < r["calls_before"], r
