"""When the settle window ends (issue 13, docs/rules.md "At rest"): the tracker gives a shot's
verdict at the last frame end before the next frame would pass SETTLE_MS of stillness (the
frame's own length, at most SETTLE_FRAME, standing for the next one's), and asks the locator's
refresh fit a frame before that. On the unix runner's 16 ms frames that is exactly SETTLE_MS, as
before; on the RP2040's 14 - 15 ms frames a frame sooner than the first frame end past it.

The firmware's Tracker (firmware/tracking/tracker.py) under both runtimes, fed frame by frame by
a stand-in locator (the virtual clock as `time`): a chip put down, slid 40 mm a frame for five
frames, then still; frames of `dt` ms. Each case gives when the stillness began (still_since),
when the refresh was asked and when the shot's verdict came, in ms of the virtual clock.
"""
import pytest

from conftest import run_script

TARGET = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracker_standins import StandInLocator, QuietFastInputs

job = json.loads(sys.stdin.readline())


loc = StandInLocator()
tr = TR.Tracker(loc, QuietFastInputs())
dt = job["dt"]
# at rest in the centre, then slid along y, 40 mm a frame, then still
ys = [0] * 40 + [400 * k for k in range(1, 6)] + [2000] * (800 // dt)
shot = None
still = 0
for y in ys:
    loc.n = 1
    loc.kind[0] = 1
    loc.x[0] = 0
    loc.y[0] = y
    tr.frame()
    if tr.take_event() == TR.EV_SHOT and shot is None:
        shot = vclock.ticks_ms()
        still = tr.still_since
    vclock.advance_us(dt * 1000)
print(json.dumps({"shot": shot, "still_since": still, "refreshed": loc.refreshed,
                  "SETTLE_MS": TR.Tracker.SETTLE_MS, "SETTLE_FRAME": TR.Tracker.SETTLE_FRAME}))
'''


def _run(dt, runtime, tmp_path):
    r = run_script(TARGET, "settle_window.py", runtime, {"dt": dt}, tmp_path)
    assert r["shot"] is not None, r                 # the slide is judged a shot
    return r, r["shot"] - r["still_since"]


def test_on_16_ms_frames_the_verdict_comes_exactly_settle_ms_after_the_stillness_began(runtime, tmp_path):
    # the unix runner's frames: the verdict's frame as before the rule, SETTLE_MS to the ms, the
    # refresh asked on the frame before it (REFRESH_LEAD's 20 ms then)
    r, el = _run(16, runtime, tmp_path)
    assert el == r["SETTLE_MS"] == 400, r
    assert r["refreshed"][-1] == r["shot"] - 16, r      # (the one before it: the put-down's)


@pytest.mark.parametrize("dt", [14, 15])
def test_on_shorter_frames_the_verdict_is_not_put_off_past_settle_ms(runtime, tmp_path, dt):
    # the RP2040's frames while the board settles: the last frame end before SETTLE_MS would be
    # overshot, so within one frame before SETTLE_MS and never after it (before the rule: the
    # first frame end at or past it, up to a frame later)
    r, el = _run(dt, runtime, tmp_path)
    assert r["SETTLE_MS"] - dt < el <= r["SETTLE_MS"], (el, r)
    assert el == (r["SETTLE_MS"] // dt) * dt, (el, r)
    assert r["refreshed"][-1] == r["shot"] - dt, r      # the fresh fit on the verdict's frame


@pytest.mark.parametrize("dt", [20, 30])
def test_longer_frames_shorten_the_window_by_settle_frame_at_most(runtime, tmp_path, dt):
    # a frame longer than SETTLE_FRAME stands for no more than SETTLE_FRAME: the verdict no
    # sooner than SETTLE_MS - SETTLE_FRAME, and no later than the first frame end past SETTLE_MS
    r, el = _run(dt, runtime, tmp_path)
    assert r["SETTLE_MS"] - r["SETTLE_FRAME"] < el < r["SETTLE_MS"] + dt, (el, r)
    assert r["refreshed"][-1] == r["shot"] - dt, r
    # the refresh on the first frame with el + 2 f past SETTLE_MS, the verdict on a later one
    # with el + f past it (30 ms: refresh 390, verdict 420, as before the rule)
    f = min(dt, r["SETTLE_FRAME"])
    ask = min(k for k in range(1, 100) if k * dt + 2 * f > r["SETTLE_MS"])
    assert el == dt * min(k for k in range(ask + 1, 100) if k * dt + f > r["SETTLE_MS"]), (el, r)


# A frame's stillness is stamped where its pads began to be read (issue 13, docs/rules.md "At
# rest"): on the presence pads at the frame before's end (every pad of the frame is read after
# it), unless a beam fired in the frame; on the hall pads at the frame's own end (their rule is
# _LAG_TOL's). The same slide as above, 16 ms frames; `beam`: a beam's edge counted at that
# frame after the stop
STAMP = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracker_standins import StandInLocator, QuietFastInputs

job = json.loads(sys.stdin.readline())
loc = StandInLocator(graded=job["graded"], move_tol=None if job["graded"] else 10)
fast = QuietFastInputs()
tr = TR.Tracker(loc, fast)
dt = 16
ys = [0] * 40 + [400 * k for k in range(1, 6)] + [2000] * 60
shot = None
still = 0
t_ends = []
for k, y in enumerate(ys):
    loc.n = 1
    loc.kind[0] = 1
    loc.x[0] = 0
    loc.y[0] = y
    if k == job["beam"]:
        fast.total = 1
    t_ends.append(vclock.ticks_ms())
    tr.frame()
    if tr.take_event() == TR.EV_SHOT and shot is None:
        shot = vclock.ticks_ms()
        still = tr.still_since
    vclock.advance_us(dt * 1000)
print(json.dumps({"shot": shot, "still_since": still, "t_ends": t_ends,
                  "SETTLE_MS": TR.Tracker.SETTLE_MS}))
'''


def _stamp(runtime, tmp_path, graded, beam=-1):
    r = run_script(STAMP, "settle_stamp.py", runtime, {"graded": graded, "beam": beam}, tmp_path)
    assert r["shot"] is not None, r
    return r


def test_presence_stillness_is_counted_from_the_end_of_the_frame_before_the_first_still_one(runtime, tmp_path):
    # the first frame at rest (index 44) was read after frame 43 ended: the stillness from there,
    # and the verdict SETTLE_MS after it, a frame sooner than from frame 44's own end (before
    # the rule: still_since frame 44's end, the verdict 416 ms after frame 43's)
    r = _stamp(runtime, tmp_path, False)
    t = r["t_ends"]
    assert r["still_since"] == t[43], (r["still_since"], t[43], t[44])
    assert r["shot"] - t[43] == r["SETTLE_MS"], r


def test_hall_stillness_and_a_beam_frame_are_stamped_at_their_own_end(runtime, tmp_path):
    # the hall pads keep the frame's own end (halllag's rule is theirs: a 40 mm step is no lag)
    r = _stamp(runtime, tmp_path, True)
    t = r["t_ends"]
    assert r["still_since"] == t[44], (r["still_since"], t[43], t[44])
    # presence pads, a beam's edge counted in frame 60 (at rest): the stillness begins again at
    # that frame's end, not the frame before's (the beam may have fired after it)
    r = _stamp(runtime, tmp_path, False, beam=60)
    t = r["t_ends"]
    assert r["still_since"] == t[60], (r["still_since"], t[59], t[60])
    assert r["shot"] - t[60] == r["SETTLE_MS"], r
