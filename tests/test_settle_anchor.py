"""The settle window with the chip truly at rest (issue 13: rest -> score shown <= 450 ms).

The tracker judges a shot once every chip has stayed within STILL_TOL (+ its wander) of the
anchor, its fit in the frame the stillness began, for SETTLE_MS. On the hall pads that first
fit can lag the chip: the pads' smoothed readings are still catching up, so the fits of the
next frames sit 1.5 - 2 mm further on, and the refresh fit of the settled readings (asked at
a frame before the verdict) came out just past the tolerance, and the stillness began again at
the refresh: 400 ms more with the chip at rest (docs/performance.md, "The verdict's turn
shorter, and a stillness begun again": 2 of 6 runs on the chip). Now it is counted again from
the earliest frame since whose fit every frame stays within the tolerance (the second anchor),
which is what the rule asks of any stillness; a chip creeping to rest leaves every anchor.

1. The Tracker under both runtimes fed by a stand-in locator (the virtual clock as `time`, 12 and 16
   ms frames): a slide, then the lagging anchor, and a chip creeping to rest.
2. The firmware on the simulated table (CPython, bench/settle_trace.py): the 8-pin first ball
   of bench.rp2040_profile, shot a few ms later each time: the stillness the verdict is judged
   on began within a frame of the chip's stop, never at the refresh.

When every frame since the first still one stayed within the tolerance of the second anchor
(the frames before it were the first still frame's own fit: its first frame that differs), the
stillness is not counted again from the second anchor's frame but goes on from the first still
frame, anchored at the second anchor (bench.rp2040_profile --series on the chip: 2 of 6 runs
counted from a frame 39 - 41 ms after the first still one, the score shown at 456 / 458 ms).
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import run_script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGET = r'''
import sys
import json
import vclock
sys.modules["time"] = vclock
from tracking import tracker as TR
from tracker_standins import StandInLocator, QuietFastInputs

job = json.loads(sys.stdin.readline())


loc = StandInLocator(graded=True, move_tol=None, unc=5, wander=5)
tr = TR.Tracker(loc, QuietFastInputs())
dt = job.get("dt", 16)
# the chip's fit (y, 0.1 mm) frame by frame: at rest, slid (the last frame of the slide, at
# t_slide_end, at 2000), then job["after"] (the frames after the slide; "refresh": the fit from
# the frame after the first refresh of the shot on)
n0 = 480 // dt                      # (30 frames of 16 ms: the put-down's settle window over)
ys = [0] * n0 + [400 * k for k in range(1, 6)]
k0 = n0 + 5                          # the first frame after the slide
after = job["after"]
ys += after
ys += [after[-1]] * (1500 // dt)
t_slide_end = (k0 - 1) * dt
shot = None
t_first_still = None
t = 0
n_before = 0
for k, y in enumerate(ys):
    if k == k0:
        n_before = len(loc.refreshed)       # (the put-down's own)
    if k >= k0 and len(loc.refreshed) > n_before and job.get("refresh") is not None:
        y = job["refresh"]
    loc.n = 1
    loc.kind[0] = 1
    loc.x[0] = 0
    loc.y[0] = y
    tr.frame()
    if k >= k0 and t_first_still is None and tr.still:
        t_first_still = tr.still_since
    if tr.take_event() == TR.EV_SHOT and shot is None:
        shot = {"t": vclock.ticks_ms(), "still_since": tr.still_since, "y": tr.y[0], "k": k}
    vclock.advance_us(dt * 1000)
print(json.dumps({"shot": shot, "first_still": t_first_still, "refreshed": loc.refreshed[n_before:],
                  "t_slide_end": t_slide_end, "SETTLE_MS": TR.Tracker.SETTLE_MS,
                  "STILL_TOL": TR.Tracker.STILL_TOL}))
'''


def _run(runtime, tmp_path, after, refresh=None, dt=16):
    r = run_script(TARGET, "settle_anchor.py", runtime, {"after": after, "refresh": refresh, "dt": dt},
                   tmp_path)
    assert r["shot"] is not None, r                 # the slide is judged a shot
    return r


@pytest.mark.parametrize("dt", [12, 16])
def test_a_refresh_just_past_a_lagging_anchor_does_not_begin_the_stillness_again(runtime, tmp_path, dt):
    # the chip's trace on the RP2040 (bench.rp2040_profile --series, phase 12), in 0.1 mm: the
    # first still frame's fit 2000 (the readings still catching up; the next frame the same
    # fit), the next ones 2018 (within STILL_TOL 15 + wander 5 of it), and the refresh fit of
    # the settled readings 2021: 2.1 mm from the anchor, 0.3 mm from 2018. Every frame since the
    # first still one is within the tolerance of 2018 (the frames before it were the anchor's
    # own fit), so the stillness goes on from the first still frame, anchored at 2018, and the
    # verdict comes with the refresh fit, at SETTLE_MS as for a chip whose anchor did not lag.
    # (Frames of 12 ms: the chip's while the board settles; 16: the unix runner's.) Before
    # (branch settle2's rule): counted from the 2018 fit, two frames later, the refresh asked
    # again: the verdict 2 - 3 frames past SETTLE_MS (the chip: 456 ms from the stop to the
    # score shown where the runs without it took 425 - 438)
    r = _run(runtime, tmp_path, [2000, 2018], refresh=2021, dt=dt)
    still0 = r["first_still"]
    assert still0 == r["t_slide_end"], r
    assert r["shot"]["still_since"] == still0, r
    assert r["shot"]["t"] - still0 <= r["SETTLE_MS"], r
    assert r["shot"]["y"] == 2021, r                 # where the refresh put it
    # the refresh asked once, a frame before the verdict, not again
    assert len(r["refreshed"]) == 1, r
    assert r["refreshed"][0] == r["shot"]["t"] - dt, r


def test_a_second_anchor_after_frames_not_near_it_counts_from_its_own_frame(runtime, tmp_path):
    # the control: the first still fit 2000, then 2019 (the second anchor), then 1990 (near the
    # first anchor, 2.9 mm from the second: the second anchor is set again, at 1990's frame),
    # and the refresh fit 1975 (2.5 mm from the anchor, 1.5 mm from 1990). The frames before
    # 1990's are not all within the tolerance of it (2019), so the stillness is counted from
    # 1990's frame (three frames after the first still one) and the refresh asked again
    r = _run(runtime, tmp_path, [2000, 2019, 1990], refresh=1975)
    still0 = r["first_still"]
    assert r["shot"]["still_since"] == still0 + 3 * 16, r
    assert r["shot"]["y"] == 1975, r
    assert len(r["refreshed"]) == 2, r
    assert r["refreshed"][-1] >= r["shot"]["still_since"] + r["SETTLE_MS"] - 2 * 16, r


def test_a_fit_past_the_anchor_and_the_second_one_begins_it_again(runtime, tmp_path):
    # the control: the refresh 2.1 mm past the anchor and 2.1 mm past the second fit too (a
    # chip that moved twice): nothing since the first still frame stayed near it, so the
    # stillness begins again at the refresh, as before
    r = _run(runtime, tmp_path, [2000, 2018], refresh=2039)
    assert r["shot"]["still_since"] >= r["refreshed"][0], r
    assert r["shot"]["y"] == 2039, r


@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_chip_creeping_to_rest_is_judged_where_it_rests(runtime, tmp_path, step):
    # after the slide the chip creeps `step` x 0.1 mm a frame (6 - 19 mm/s) for 1.5 s, then
    # lies still: no stillness of SETTLE_MS while it creeps, whichever anchor it counts from,
    # so the verdict comes after it stopped and puts it where it stopped
    creep = [2000 + step * k for k in range(1, 95)]
    r = _run(runtime, tmp_path, creep)
    t_stop = r["t_slide_end"] + 94 * 16
    reach = (r["STILL_TOL"] + 5) // step + 1           # frames a stillness can hold while it creeps
    assert r["shot"]["t"] >= t_stop + r["SETTLE_MS"] - reach * 16, r
    assert r["shot"]["y"] == creep[-1], r


@pytest.mark.parametrize("dt", [12, 16])
def test_a_fit_lagging_past_the_tolerance_counts_the_stillness_from_the_frame_before(runtime, tmp_path, dt):
    # the chip's trace on the RP2040 (bench.rp2040_profile --series, ZENN_PICO_USB=nak, phase 9),
    # in 0.1 mm: after the slide's last frame (2000) a last step of 3.0 mm (2030: past STILL_TOL
    # 15 + wander 5, within _LAG_TOL 15 more: the stillness held from 2000), then the chip's fit
    # at rest 2.8 mm on (2058: the last moving fit lagged it), and there it stays. Before: the
    # stillness began again at 2058's frame, a frame after the stop. Now it is counted from the
    # frame before (2030's), anchored there, 2058 the second anchor: never more than a frame
    # before the frame of the fit the chip stays at
    r = _run(runtime, tmp_path, [2030, 2058, 2060], dt=dt)
    t_2058 = r["t_slide_end"] + 2 * dt
    assert r["shot"]["still_since"] == t_2058 - dt, r
    assert r["shot"]["y"] == 2060, r


def test_a_step_past_the_lag_tolerance_begins_the_stillness_again(runtime, tmp_path):
    # the control: 3.6 mm from the frame before (past STILL_TOL + wander + _LAG_TOL): begun again
    # at that frame, as before
    r = _run(runtime, tmp_path, [2036, 2038])
    assert r["shot"]["still_since"] == r["t_slide_end"] + 16, r


def test_a_chip_sliding_3_mm_a_frame_is_credited_one_frame_at_most(runtime, tmp_path):
    # a chip sliding 3 mm a frame for 20 frames, then at rest: each frame within _LAG_TOL of the
    # frame before, but the stillness is never counted from further back than the frame before
    # the first frame at rest
    slide = [2000 + 30 * k for k in range(1, 21)]
    r = _run(runtime, tmp_path, slide)
    t_stop = r["t_slide_end"] + 20 * 16         # the frame of the last step
    assert r["shot"]["still_since"] >= t_stop - 16, r
    assert r["shot"]["t"] >= t_stop - 16 + r["SETTLE_MS"] - 16, r
    assert r["shot"]["y"] == slide[-1], r


STEPS = (0, 2, 4, 6, 8, 10, 12, 14)


def _settle_trace(phases, fit_ms):
    """bench/settle_trace.py's 8-pin first ball, one run per phase (ms waited before the shot),
    the firmware under CPython on the simulated table, BOARDSIM_FIT_MS fit_ms: each run's JSON
    row (rest, since, verdict ... ms), one per phase. (The boot and the put-down, the same in
    every run, played once, each phase's rest in a copy of the process made there: --whole
    plays each run whole, with the same rows but the virtual clock, which goes on from one run
    to the next there)"""
    cmd = [sys.executable, os.path.join(ROOT, "bench", "settle_trace.py"), "--shots", "8 pins",
           "--phases", ",".join(map(str, phases)), "--fit-ms", str(fit_ms), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    shots = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(shots) == len(phases), r.stdout[-2000:]
    return shots


FIT_MS = 8                  # the chip's fit at a frame's end, which the frames while it moves carry
PHASES = range(16)
# Each frame cost's runs over PHASES, made once in a test process and shared by the tests that
# judge them (the 8-pin ball's STEPS are the unix runner's frames' (fit 0) phases 0 - 14, which
# the missed-fit test plays too): those tests are one xdist group, so that `make test` plays
# them once (issue 15)
_TRACES = {}
FIT0_RUNS = pytest.mark.xdist_group("settle_anchor_fit0")


def _traces(fit_ms, phases):
    """_settle_trace(PHASES, fit_ms)'s rows for `phases` (copies), the runs made once."""
    if fit_ms not in _TRACES:
        _TRACES[fit_ms] = {s["phase"]: s for s in _settle_trace(PHASES, fit_ms=fit_ms)}
    return [dict(_TRACES[fit_ms][p]) for p in phases]


@FIT0_RUNS
def test_the_8_pin_ball_is_judged_on_a_stillness_begun_at_its_stop():
    # bench.rp2040_profile's 8-pin first ball (the chip rests in b.e2), shot 0 - 14 ms later
    # each time (where it stops against the 16 ms frames), the firmware under CPython on the
    # simulated table. main: at 0 ms the refresh fit 2.2 mm from the lagging anchor began the
    # stillness again, the verdict 793 ms after the chip stopped. (The unix runner's frames:
    # the fit 0 runs, shared with the missed-fit test)
    shots = _traces(0, STEPS)
    assert [s["phase"] for s in shots] == list(STEPS) and all(s["fit_ms"] == 0 for s in shots)
    for s in shots:
        # the stillness the verdict was judged on began within a frame of the stop (its first
        # still frame: at 0 ms that frame's fit lagged the chip 2.2 mm, and the refresh fit
        # left it: counted from the second anchor at +25 ms before, the verdict at +425 ms;
        # now that every frame since the first still one stayed near the second anchor, from
        # -7 ms, the verdict at +393), so the verdict came SETTLE_MS and at most a frame after it
        assert s["since"] - s["rest"] <= 16, s
        assert s["verdict"] - s["rest"] <= 416, s


def test_the_last_moving_fit_lagging_past_the_tolerance_does_not_begin_the_stillness_again():
    # The same ball with the chip's frame lengths while it moves (BOARDSIM_FIT_MS 8: each frame
    # in which pads changed 8 ms longer, the fit at its end), shot 0 - 15 ms later each time. The
    # last moving frame's fit is of a frame read while the chip slid: at phases 13 - 15 (593,
    # 1595), 2.0 mm behind where it came to rest (596, 1615). The next frame, read at rest but
    # with pads still drifting (jumps), found the chip's pads fitting that fit within FOLLOW_ERR
    # and left it as it was; the frame after, the first without a jump, fitted it at the rest,
    # past STILL_TOL + wander of the anchor: the stillness began again there, +43 ms, the verdict
    # +435 (main; on the chip, bench.rp2040_profile --series, the same kind of run 457 / 469 ms
    # from the stop to the score shown). Now that chip, fitted in the frame before, is fitted
    # again at the next frame (the correction), its wander that frame widened by the correction
    # (hall_follow): the stillness holds from the last moving frame, the verdict at SETTLE_MS
    # and at most a frame after the stop, as in the runs whose last fit lagged less
    shots = _traces(FIT_MS, PHASES)
    frame = 16 + FIT_MS             # a frame while the chip moves: 16 steps and the fit
    late = [s for s in shots if s["since"] - s["rest"] > frame or s["verdict"] - s["rest"] > 400 + frame]
    assert not late, late


FIT_MS_MISSED = (0, 12)     # the unix runner's frames, and frames 12 ms longer while pads change


@pytest.mark.parametrize("fit_ms", [pytest.param(f, marks=FIT0_RUNS) if f == 0 else f for f in FIT_MS_MISSED])
def test_the_last_moving_fit_missed_by_the_next_frame_does_not_begin_the_stillness_again(fit_ms):
    # The second form of the lagging last moving fit (issue 13): the frame after it, read with
    # the chip at rest, misses it by more than FOLLOW_ERR, so the locator fits the chip as a
    # moving one (no correction, no wider wander) 2.3 - 3.1 mm on, past STILL_TOL + wander of
    # the anchor: the stillness began again there, a frame after it began (main: at fit 0
    # phases 1 - 9 and 13 - 15 from +2 - +8 ms, the verdict +402 - +408; at fit 12 every phase
    # from +5 - +18, the verdict +397 - +410; on the chip, bench.rp2040_profile --series, the
    # score shown 447 - 450 ms after the stop where the other runs took 422 - 443). Now a frame
    # within _LAG_TOL (1.5 mm) more of the frame before's fits counts the stillness from the
    # frame before (tracking/tracker.py): from the last moving frame, the verdict within
    # SETTLE_MS of the stop
    shots = _traces(fit_ms, PHASES)       # (fit 0: shared with the 8-pin ball's test)
    late = [s for s in shots if s["verdict"] - s["rest"] > 400]
    assert not late, late
