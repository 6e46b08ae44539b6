"""The tracker's frame exactly the one before (issue 13: the frames while a stillness is counted).

On the emulated chip a frame of the settle window cost 1.06 ms more than a frame at rest with one
chip (2.6 ms with four), 0.9 ms (2.45) of it the tracker's `_track`: its passes matched every
chip again to the locator's unchanged fits (`bench.rp2040_profile --settle`). Since then a frame
exactly the one before, whose first pass matched every tracked chip to a locator chip of its own
(no other chip, no hand, none weak: `claimed[_TIDY]`), is matched again without the passes.

The firmware's Tracker under both runtimes, fed by a stand-in locator (tests/support), twice with
the same frames: as it is, and with `claimed[_TIDY]` cleared before every frame (the passes
always run: the tracker before). Every value the tracker keeps is compared after every frame, and
the calls of `_follow` (one per chip the passes match, or the matching carried over makes in
`_carry`) are counted in the frames that repeat the one before: none once the first of them has
been matched. Counts, not time.
"""
import random

import pytest

from conftest import run_script

TARGET = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracker_standins import StandInLocator, QuietFastInputs, tracker_state, RESULT_ARRAYS

job = json.loads(sys.stdin.readline())


def state(tr):
    return tracker_state(tr, claimed=8, results=RESULT_ARRAYS[:6])


trs = []
locs = []
follows = [0, 0]
for k in range(2):
    loc = StandInLocator(graded=job["graded"], move_tol=None if job["graded"] else 10)
    tr = TR.Tracker(loc, QuietFastInputs())
    f = tr._follow

    def counted(i, j, f=f, k=k):
        follows[k] += 1
        return f(i, j)
    tr._follow = counted
    trs.append(tr)
    locs.append(loc)
_carry = TR._carry


def carry_counted(tr, loc, n):
    # the matching carried over makes its follows in _carry (machine code under MicroPython):
    # counted as the _follow calls they are
    c = _carry(tr, loc, n)
    if c == n:
        follows[0 if tr is trs[0] else 1] += sum(tr.seen)
    return c


TR._carry = carry_counted
differ = -1
events = []
repeat_follows = 0          # _follow calls of the tracker as it is, in frames after a repeat's first
repeats = 0
prev = None
t = 0
for q, fr in enumerate(job["frames"]):
    for k in range(2):
        locs[k].load(fr)
    key = [[c[:5] for c in fr["chips"]], fr.get("hand")]
    before = follows[0]
    trs[1].claimed[8] = 0               # the tracker before: its passes every frame
    for k in range(2):
        trs[k].frame()
    if key == prev and trs[0].state == TR.ACTIVE:
        repeats += 1
        if prev_tidy:
            repeat_follows += follows[0] - before
    prev = key
    prev_tidy = trs[0].claimed[8]
    e0 = trs[0].take_event()
    e1 = trs[1].take_event()
    if e0:
        events.append(e0)
    if differ < 0 and (e0 != e1 or state(trs[0]) != state(trs[1])):
        differ = q
    vclock.advance_us(fr.get("ms", 16) * 1000)
print(json.dumps({"differ": differ, "events": events, "repeats": repeats,
                  "repeat_follows": repeat_follows, "follows": follows,
                  "tidy_frames": job.get("n", 0)}))
'''

SMALL, BIG = 1, 2
PEAK = 30000


def _frames(seed, graded):
    """A few shots: chips at rest, one of them (or two, knocked) sliding to a stop over 16 ms
    frames, then the settle window with its frames repeated (some with the uncertainty changed,
    a chip weaker, a hand, a phantom chip, a chip missed for a frame), then at rest again."""
    rng = random.Random(seed)
    chips = [[SMALL, -1200, -4000, PEAK, 5, 10], [BIG, 800, 1500, PEAK, 5, 12],
             [BIG, -900, 2500, PEAK, 0, 15], [BIG, 1500, -2000, PEAK, 5, 10]][:rng.randint(1, 4)]
    frames = []

    def put(n=1, **kw):
        for _ in range(n):
            frames.append(dict({"chips": [list(c) for c in chips]}, **kw))
    put(40)
    for _shot in range(4):
        movers = rng.sample(range(len(chips)), min(len(chips), rng.randint(1, 2)))
        steps = rng.randint(3, 12)
        v = [(rng.randint(-60, 60), rng.randint(-80, 80)) for _ in movers]
        for s in range(steps):
            for m, (vx, vy) in zip(movers, v):
                k = (steps - s) / steps
                chips[m][1] += int(vx * k)
                chips[m][2] += int(vy * k)
            put()
        # the settle window: the last fit repeated, with what may come between
        for _ in range(rng.randint(20, 40)):
            r = rng.random()
            if r < 0.08:
                c = rng.randrange(len(chips))
                chips[c][5] = rng.randint(5, 40)            # the same fit, another uncertainty
                put(rng.randint(1, 4))
            elif r < 0.12:
                c = rng.randrange(len(chips))
                weak = [list(x) for x in chips]
                weak[c][3] = PEAK // 8                      # a chip weaker for a few frames
                for _ in range(rng.randint(1, 3)):
                    frames.append({"chips": [list(x) for x in weak]})
            elif r < 0.15:
                put(rng.randint(1, 3), hand=[chips[0][1] + 200, chips[0][2]])
            elif r < 0.18:
                extra = [BIG, rng.randint(-2000, 2000), rng.randint(-4000, 4000), PEAK, 0, 20]
                for _ in range(rng.randint(1, 3)):
                    frames.append({"chips": [list(x) for x in chips] + [extra]})
            elif r < 0.21 and len(chips) > 1:
                c = rng.randrange(len(chips))
                frames.append({"chips": [list(x) for i, x in enumerate(chips) if i != c]})
            elif r < 0.24:
                c = rng.randrange(len(chips))
                chips[c][1] += rng.choice((-3, 3))           # a creep within the tolerance
                put()
            else:
                put(rng.randint(1, 6))
        put(40)
    return {"frames": frames, "graded": graded}


@pytest.mark.parametrize("graded", [True, False], ids=["hall", "presence"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_frame_exactly_the_one_before_is_matched_again_without_the_passes(runtime, tmp_path, graded, seed):
    r = run_script(TARGET, "track_same.py", runtime, _frames(seed, graded), tmp_path)
    # the same tracker, value for value, after every frame, whether the passes ran or not
    assert r["differ"] == -1, r
    assert r["events"], r
    # the cost: frames that repeat the one before while chips are tracked, matched without a
    # single _follow once that one was matched whole (the tracker before: one per chip each)
    assert r["repeats"] > 40, r
    assert r["repeat_follows"] == 0, r
    # (and the passes skipped in most of them: one _follow a chip each frame before)
    assert r["follows"][1] - r["follows"][0] >= r["repeats"] // 2, r
