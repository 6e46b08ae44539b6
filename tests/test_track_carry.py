"""The tracker's matching carried over (issue 13: the settle window's first frame with four
chips, 11.2 ms on the emulated chip, 1.8 ms of it `_track` matching every chip afresh after
`_begin` though each lay exactly at the fit the frame before matched it to).

`_track` now skips its passes where every tracked chip is seen and lies exactly at the fit it
followed last (claimed_by), no two of one kind at one place, and those are all the locator's
chips: the first pass would give each that fit (distance 0, the only one there), so only the
follows are made.

The firmware's Tracker under both runtimes, fed by a stand-in locator, twice with the same frames
(tests/test_track_same.py's shots and settle windows, with creeps, uncertainties changed, weak
chips, hands, phantom and missed chips, and here also the activity begun by hand at rest, as
`bench.rp2040_profile --settle` does): as it is, and with claimed_by and claimed[_TIDY] cleared
before every frame (no matching to carry: the passes every frame, the tracker before both
shortcuts). Every value the tracker keeps is compared after every frame: identical. And the
count: the locator's `wander` is read once for each chip the first pass looks at as a candidate
(and once more in `_follow`, once more in the frame's unchanged check); in the first frame after
an activity begun by hand with every chip where the verdict left it, the tracker as it is reads
it exactly twice a chip (the check, its follows), the tracker before more (two such frames at
least a case; on main none): counted under CPython, where the check and its follows
(`tracker._carry`, machine code under MicroPython) run as plain Python read for read; the frames
carried over are counted under both runtimes (a wrapper around `_carry`). Counts, not time.
"""
import random

import pytest

from conftest import run_script
from test_track_same import _frames

TARGET = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracker_standins import StandInLocator, QuietFastInputs, tracker_state, RESULT_ARRAYS

job = json.loads(sys.stdin.readline())
# (the carry's check and follows are a viper function under MicroPython, tracker._carry: its ptr32
# takes the array itself, no stand-in, so the reads are counted under CPython, where it runs as
# plain Python read for read; its carried frames are counted under both)
COUNT = sys.implementation.name != "micropython"


class Counted:
    """The locator's wander, its reads counted."""
    def __init__(self, a):
        self.a = a
        self.n = 0

    def __getitem__(self, j):
        self.n += 1
        return self.a[j]

    def __setitem__(self, j, v):
        self.a[j] = v


def state(tr):
    return tracker_state(tr, claimed=8, results=RESULT_ARRAYS[:8])


trs = []
locs = []
for k in range(2):
    loc = StandInLocator(graded=job["graded"], move_tol=None if job["graded"] else 10)
    if COUNT:
        loc.wander = Counted(loc.wander)
    trs.append(TR.Tracker(loc, QuietFastInputs()))
    locs.append(loc)
carried = [0, 0]
_carry = TR._carry


def carry_counted(tr, loc, n):
    c = _carry(tr, loc, n)
    if c == n:
        carried[0 if tr is trs[0] else 1] += 1
    return c


TR._carry = carry_counted
differ = -1
events = []
begun = 0
reads = [[], []]            # wander reads in each first frame after a begun activity: as is, before
for q, fr in enumerate(job["frames"]):
    for k in range(2):
        locs[k].load(fr)
    if fr.get("begin") and trs[0].at_rest() and trs[1].at_rest():
        begun = 1
        for k in range(2):
            trs[k]._begin(vclock.ticks_ms())
    t1 = trs[1]
    for i in range(TR.MAX):
        t1.claimed_by[i] = 0            # the tracker before: no matching to carry over
    t1.claimed[8] = 0
    before = [locs[k].wander.n if COUNT else 0 for k in range(2)]
    was = list(carried)
    for k in range(2):
        trs[k].frame()
    if begun:
        begun = 0
        for k in range(2):
            reads[k].append([locs[k].wander.n - before[k] if COUNT else -1, sum(trs[k].seen),
                             carried[k] - was[k]])
    e0 = trs[0].take_event()
    e1 = trs[1].take_event()
    if e0:
        events.append(e0)
    if differ < 0 and (e0 != e1 or state(trs[0]) != state(trs[1])):
        differ = q
    vclock.advance_us(fr.get("ms", 16) * 1000)
print(json.dumps({"differ": differ, "events": events, "reads": reads}))
'''


def _with_begins(seed, graded):
    """test_track_same's frames, with the activity begun by hand at rest in the middle of each
    rest that is long enough (the frames after it the same: a stillness, then its verdict)."""
    job = _frames(seed, graded)
    frames = job["frames"]
    rng = random.Random(seed + 100)
    run = 0
    for q in range(len(frames)):
        same = q and frames[q]["chips"] == frames[q - 1]["chips"] and not frames[q].get("hand")
        run = run + 1 if same else 0
        if run in (12, 30) and rng.random() < 0.9:
            frames[q] = dict(frames[q], begin=1)
    return job


@pytest.mark.parametrize("graded", [True, False], ids=["hall", "presence"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_matching_carried_over_is_the_passes_matching(runtime, tmp_path, graded, seed):
    r = run_script(TARGET, "track_carry.py", runtime, _with_begins(seed, graded), tmp_path)
    # the same tracker, value for value, after every frame, whether the passes ran or not
    assert r["differ"] == -1, r
    assert r["events"], r
    now, before = r["reads"]
    carried = 0
    for (a, chips, c), (b, _, c1) in zip(now, before):
        assert c1 == 0, r               # the tracker before: nothing to carry over
        if runtime == "cpython":
            assert a <= b, r
            # the frame's unchanged check and the follows only: carried
            assert (a == 2 * chips) == (c == 1), r
            if c:
                assert b > a, r         # the passes: the candidates' too
        carried += c
    # (a chip that crept within the tolerance since the verdict lies off its snapshot: its
    # activity's first frame is matched by the passes)
    assert carried >= 2, r
