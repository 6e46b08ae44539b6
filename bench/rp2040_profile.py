"""Where a frame's time goes on the RP2040: the firmware on the emulated Pico (docs/rp2040.md),
main.py stopped at the REPL, its Scoreboard's parts called one by one and timed on the chip with
time.ticks_us() (emulated cycles at 125 MHz, about +-30 % of a real Pico).

    .venv/bin/python -m bench.rp2040_profile [--chips N] [--config JSON] [--shot]

--chips N (0 - 4): chips put down on the table (and left at rest) before it is stopped.
--shot: instead of the parts at rest, the loop run as main.py runs it while a chip is put down
and shot into a cup: every frame's length (the worst while chips move, the settle window's),
and when the verdict and the last display write came, against when the chip stopped on the
table (the host's world: the move's end).

Prints one JSON line of figures (microseconds) and a readable table.
"""
import argparse
import json
import os
import statistics
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SPOTS = [("small", "a.pocket"), ("big1", "b.e2"), ("big2", "a.n2"), ("big3", "b.back4")]

PARTS = r'''
import time
from array import array
from sensing import hall_scan as HS
sb = __main__.sb
sc = sb.scan
gc.collect()

def per_call(fn, n):
    t0 = time.ticks_us()
    for _ in range(n):
        fn()
    return time.ticks_diff(time.ticks_us(), t0) * 1000 // n     # ns

HALL = hasattr(sc, "pos")            # else the presence pads (their strobe: sc.row)
if HALL:                             # loop turns a frame (hall: banks a step; presence: strobes)
    SPF = 16 // (HS.PER_STEP_HW if getattr(sc, "hw", 0) else 1)
else:
    from sensing import shift_scan as SS
    SPF = SS.PRES_STROBES // (SS.PER_STEP_HW if getattr(sc, "hw", 0) else SS.STROBES_PER_STEP)

def frame():
    for _ in range(SPF):
        sb.step()

for _ in range(12):                  # past the settle window's frames after the stop
    frame()
# at rest: the tracker idle (after main.py is stopped the loop's first frames come late, and the
# tracker takes the chips for moved ones until its settle window has passed: hundreds of ms)
n_wait = 0
while not sb.tracker.at_rest() and n_wait < 400:
    frame()
    n_wait += 1
for _ in range(4):
    frame()
r = {"ev": "profile", "steps_per_frame": SPF, "at_rest": sb.tracker.at_rest(),
     "frames_to_rest": n_wait}
# each step of a frame, by its place in the frame (the last ends it: find, tracker, faults)
steps = [0] * SPF
worst = 0
for _ in range(4):
    while (sc.pos if HALL else sc.row) != 0:
        sb.step()
    f = 0
    for i in range(SPF):
        t0 = time.ticks_us()
        sb.step()
        d = time.ticks_diff(time.ticks_us(), t0)
        steps[i] += d
        f += d
    if f > worst:
        worst = f
r["step_plain_us"] = sum(steps[:SPF - 1]) // (4 * (SPF - 1))
r["step_frame_end_us"] = steps[SPF - 1] // 4
r["frame_us"] = sum(steps) // 4
r["frame_worst_us"] = worst
def fd():
    sb.loc.find(sc.grid)
r["find_ns"] = per_call(fd, 16)
r["wdt_feed_ns"] = per_call(sb.wdt.feed, 64)
r["scan_step_ns"] = per_call(sc.step, 32)
if HALL:
    raw2 = array('H', sc.raw)
    def rb():
        HS.read_bank(0, sc.ch_pins, sc.rd0, sc.rd1, sc.rd2, raw2)
        HS.read_bank(16, sc.ch_pins, sc.rd0, sc.rd1, sc.rd2, raw2)
    r["read_bank_pins_ns"] = per_call(rb, 16) // 2
    acc2 = array('i', sc.acc)            # copies: the scanner's own arrays stay as they are
    grid2 = array('h', sc.grid)
    def st():
        HS.settle(sc.raw, 0, sc.baseline, acc2, grid2, sc.jump, sc.SMOOTH, sc.ref, sc.drift)
    r["settle_ns"] = per_call(st, 32)
    r["read_u16_ns"] = per_call(sc.rd0, 64)
p = sc.ch_pins[0] if HALL else sc.sel[0]
def pv():
    p.value(0)
r["pin_value_ns"] = per_call(pv, 64)
r["tracker_frame_ns"] = per_call(sb.tracker.frame, 16)
r["fault_frame_ns"] = per_call(sb.faults.frame, 16)
fa = sb.faults
if not fa.shift:
    r["fault_chatter_ns"] = per_call(fa._chatter, 16)
    r["fault_hall_ns"] = per_call(fa._hall, 16)
    r["fault_numb_ns"] = per_call(lambda: fa._numb(sc.grid), 16)
    r["fault_work_ns"] = per_call(fa._work, 16)
else:
    r["fault_chatter_ns"] = per_call(fa._chatter, 16)
    r["fault_presence_ns"] = per_call(fa._presence, 16)   # (of it: _holes)
    r["fault_holes_ns"] = per_call(fa._holes, 16)
    r["fault_work_ns"] = per_call(fa._work, 16)
r["take_event_ns"] = per_call(sb.tracker.take_event, 64)
r["at_rest_ns"] = per_call(sb.tracker.at_rest, 64)
r["check_chips_ns"] = per_call(sb.check_chips, 16)
r["buttons_poll_ns"] = per_call(sb.buttons.poll, 64)
r["any_stuck_ns"] = per_call(sb.buttons.any_stuck, 64)
r["ui_service_ns"] = per_call(sb.ui.service, 64)
def nothing():
    pass
r["call_ns"] = per_call(nothing, 64)
import json
print(json.dumps(r))
'''

# the loop as main.py runs it, every step timed, while the table plays `after`: each frame's
# length while the tracker is not at rest, and, for each event line the firmware writes, when
# (ticks_ms at the end of its step) and when the displays had nothing left to send after it
# (ticks_ms when the last call that sent to them, flush() or service(), returned: the screen is
# shown then, whatever the rest of that step does)
LOOP = r'''
import micropython
import time
import json
from array import array
sb = __main__.sb
sc = sb.scan
POS = "pos" if hasattr(sc, "pos") else "row"     # 0 after the step that ended a frame
tr = sb.tracker
ev = sb.ev
drivers = sb.ui.drivers
t_io = [0]
def sent(f):
    def w():
        f()
        t_io[0] = time.ticks_ms()
    return w
sb.ui.flush = sent(sb.ui.flush)
sb.ui.service = sent(sb.ui.service)
gc.collect()
T_START = time.ticks_ms()
N = 600
dur = bytearray(2 * N)               # each moving frame's length, in 0.1 ms (16-bit)
nf = 0
worst_step = 0
t_frame = time.ticks_us()
moving = 0
lines = ev.lines
seen = []                            # [line count, ms written, ms shown]
pending = 0
# SETTLE (--series): every frame's end while the tracker is not at rest, and the frame that
# brought it to rest (the verdict's): when (ticks_ms), the tracker's still_since (-1: not still),
# confirm (the refresh asked), the locator's count and first chip (x, y, wander), the second
# anchor's frame (bt; -1: none) and which half of the anchor entries is the anchor (ao), the
# frame's length (0.1 ms): a stillness begun again, or counted from the second anchor, shows
# here (issue 13: which of a run's frames decided its rest -> shown). Kept in the bench's
# module, not in the firmware.
NS = NSETTLE
SK = 12
fw = 0                               # the frame's sb.step() time (us): the firmware's, not the bench's
srow = array('i', [0] * (NS * SK)) if NS else None
ns = 0
end = time.ticks_add(time.ticks_ms(), MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    t0 = time.ticks_us()
    if not tr.at_rest():
        moving = 1
    micropython.heap_lock()         # (as main.py: "Frames on the C stack")
    try:
        idle = sb.step()
    finally:
        micropython.heap_unlock()
    t1 = time.ticks_us()
    d = time.ticks_diff(t1, t0)
    fw += d
    if d > worst_step:
        worst_step = d
    if getattr(sc, POS) == 0:
        if NS and moving and ns < NS:
            b = ns * SK
            lo = sb.loc
            srow[b] = time.ticks_ms()
            srow[b + 1] = tr.still_since if tr.still else -1
            srow[b + 2] = tr.confirm
            srow[b + 3] = lo.n
            srow[b + 4] = lo.x[0] if lo.n else 0
            srow[b + 5] = lo.y[0] if lo.n else 0
            srow[b + 6] = lo.wander[0] if lo.n else 0
            srow[b + 7] = tr.bt if getattr(tr, "bn", -1) >= 0 else -1
            srow[b + 8] = getattr(tr, "ao", 0)
            srow[b + 9] = time.ticks_diff(t1, t_frame) // 100
            srow[b + 10] = 1 if tr.at_rest() else 0
            srow[b + 11] = fw // 100
            ns += 1
        if moving and nf < N:
            f = time.ticks_diff(t1, t_frame) // 100
            dur[2 * nf] = f & 255
            dur[2 * nf + 1] = (f >> 8) & 255
            nf += 1
        moving = 0
        fw = 0
        t_frame = t1
    if ev.lines != lines:
        lines = ev.lines
        seen.append([lines, time.ticks_ms(), -1])
        pending = 1
    if pending:
        busy = 0
        for dr in drivers:
            if dr.dirty:
                busy = 1
        if not busy:
            seen[-1][2] = t_io[0]
            pending = 0
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
        t_frame = time.ticks_add(t_frame, idle * 1000)
frames = [(dur[2 * i] | (dur[2 * i + 1] << 8)) / 10 for i in range(nf)]
if NS:                                # (before "frames": the host awaits that line)
    for q in range(ns):
        print('{"ev": "srow", "r": %s}' % json.dumps(list(srow[q * SK:(q + 1) * SK])))
print(json.dumps({"ev": "frames", "t_start": T_START, "n": nf, "worst_step_us": worst_step, "moving_ms": frames,
                  "lines": seen}))

'''


# the loop as main.py runs it while the table's parts fail (`after`): the fault monitor's frame
# and its reports timed one by one (their methods wrapped), and the locator's find()
FAULTS = r'''
import time
sb = __main__.sb
fa = sb.faults
gc.collect()
worst = [0, 0, 0, 0]                # frame, report, find, whole step
count = [0, 0]
total = [0, 0]                      # the frames' time summed; frames over 5 ms
f_frame = fa.frame
f_report = fa.report
f_find = sb.loc.find
if NOFIND:                          # the locator left out: the fault monitor's own worst frames
    def f_find(grid):
        pass
def timed_frame():
    t0 = time.ticks_us()
    r = f_frame()
    d = time.ticks_diff(time.ticks_us(), t0)
    if d > worst[0]:
        worst[0] = d
    count[0] += 1
    total[0] += d
    if d > 5000:
        total[1] += 1
    return r
def timed_report():
    t0 = time.ticks_us()
    r = f_report()
    d = time.ticks_diff(time.ticks_us(), t0)
    if d > worst[1]:
        worst[1] = d
    count[1] += r
    return r
def timed_find(grid):
    t0 = time.ticks_us()
    f_find(grid)
    d = time.ticks_diff(time.ticks_us(), t0)
    if d > worst[2]:
        worst[2] = d
fa.frame = timed_frame
fa.report = timed_report
sb.loc.find = timed_find
# the frame's two big parts, timed inside it: the pads' checks (hall or presence) and the queue
parts = [0, 0]
def timed_part(fn, i):
    def t(*args):
        t0 = time.ticks_us()
        r = fn(*args)
        d = time.ticks_diff(time.ticks_us(), t0)
        if d > parts[i]:
            parts[i] = d
        return r
    return t
if sb.shift:
    fa._presence = timed_part(fa._presence, 0)
else:
    fa._hall = timed_part(fa._hall, 0)
fa._work = timed_part(fa._work, 1)
# the first pad or mux report written (its event line): chip ms since the timing began (the
# fault applied), and the monitor's frames by then; -1: none
first = [-1, -1]
T0 = time.ticks_ms()
end = time.ticks_add(T0, MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    t0 = time.ticks_us()
    idle = sb.step()
    d = time.ticks_diff(time.ticks_us(), t0)
    if d > worst[3]:
        worst[3] = d
    if first[0] < 0 and fa.count:
        first[0] = time.ticks_diff(time.ticks_ms(), T0)
        first[1] = count[0]
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
print('{"ev":"faults_timed","frames":%d,"reports":%d,"worst_frame_us":%d,"worst_report_us":%d,'
      '"worst_find_us":%d,"worst_step_us":%d,"worst_pads_us":%d,"worst_work_us":%d,'
      '"mean_frame_us":%d,"frames_over_5ms":%d,"first_report_ms":%d,"first_report_frames":%d}'
      % (count[0], count[1], worst[0], worst[1], worst[2], worst[3], parts[0], parts[1],
         total[0] // max(1, count[0]), total[1], first[0], first[1]))
'''



# --faults CASE --trace: every find() while the part fails, one row each: when (ms since the
# module began), how long, the locator's candidates and chips after it, its unread count, the
# joint fits it made, the scanner's jump count, the fault monitor's dead muxes; the rows of the
# finds over 20 ms and the two before each are printed
FAULTS_TRACE = r"""
import time
import json
from array import array
sb = __main__.sb
loc = sb.loc
fa = sb.faults
gc.collect()
N = 1200
K = 8
rows = array('i', [0] * (N * K))
nf = 0
fits = array('i', [0])
f_fit = loc._fit_group
def cfit(*a):
    fits[0] += 1
    return f_fit(*a)
loc._fit_group = cfit
f_find = loc.find
T0 = time.ticks_ms()
def tfind(grid):
    global nf
    fits[0] = 0
    t0 = time.ticks_us()
    n = f_find(grid)
    d = time.ticks_diff(time.ticks_us(), t0)
    if nf < N:
        b = nf * K
        rows[b] = time.ticks_diff(time.ticks_ms(), T0)
        rows[b + 1] = d
        rows[b + 2] = getattr(loc, "n_cand", -1)
        rows[b + 3] = n
        rows[b + 4] = getattr(loc, "unread", -1)
        rows[b + 5] = fits[0]
        rows[b + 6] = getattr(sb.scan, "jumps", getattr(sb.scan, "version", 0))
        rows[b + 7] = sum(fa.mux_bad)
        nf += 1
    return n
loc.find = tfind
end = time.ticks_add(time.ticks_ms(), MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    idle = sb.step()
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
out = []
for i in range(nf):
    if rows[i * K + 1] > 20000 or (i + 1 < nf and rows[(i + 1) * K + 1] > 20000) or (i + 2 < nf and rows[(i + 2) * K + 1] > 20000):
        out.append([i] + [rows[i * K + k] for k in range(K)])
print(json.dumps({"ev": "find_trace", "finds": nf, "cols": ["i", "ms", "us", "cand", "n", "unread", "fits", "jumps", "dead_muxes"], "rows": out}))
"""


# what fails, for --faults: (config.json or None, the runner's ops once the timing has begun).
# Hall muxes: "supply_dead" every pad at the bottom rail (a multiplexer's supply gone: what the
# chip reads), "shorted_rail" every pad at the top rail, "frozen" every pad at one mid-scale raw
# reading (the fault monitor's dearest pass: every pad's neighbours looked at, no rail to stop
# it; pico_runner's "raw" fault), "dead" ground plus noise, "same" every mux reading one channel;
# "one_mux_stuck" mux 17 reading one channel; presence: "chain_dead_high" / "chain_dead_low" every
# 74HC165 reading covered / uncovered; "beams" both cup beams chattering; "button" a button held
# down throughout. (stuck_low, stuck_high, dead: the old names of the first rows.)
FAULT_MS = 8000
from boardsim.target.world_table import PRES_SR    # noqa: E402  the presence front end's 74HC165s
FAULT_CASES = {
    "supply_dead": (None, [{"op": "fault", "mux": m, "mode": "stuck_low"} for m in range(48)]),
    "shorted_rail": (None, [{"op": "fault", "mux": m, "mode": "stuck_high"} for m in range(48)]),
    "frozen": (None, [{"op": "fault", "mux": m, "raw": 30000} for m in range(48)]),
    # the same with the locator's find() a no-op: on the chip a find() over every pad frozen
    # mid-scale took 25 s (2 frames in 5 s), so "frozen" alone never times the fault monitor
    "frozen_nofind": (None, [{"op": "fault", "mux": m, "raw": 30000} for m in range(48)]),
    "dead": (None, [{"op": "fault", "mux": m, "mode": "dead"} for m in range(48)]),
    "same": (None, [{"op": "fault", "mux": m, "mode": "same"} for m in range(48)]),
    "one_mux_stuck": (None, [{"op": "fault", "mux": 17, "mode": "same"}]),
    "chain_dead_high": ({"front_end": "shift"}, [{"op": "fault", "mux": k, "mode": "stuck_high"}
                                                 for k in range(PRES_SR)]),
    "chain_dead_low": ({"front_end": "shift"}, [{"op": "fault", "mux": k, "mode": "stuck_low"}
                                                for k in range(PRES_SR)]),
    "beams": (None, [{"op": "fault", "cup": "a", "mode": "chatter"},
                     {"op": "fault", "cup": "b", "mode": "chatter"}]),
    "button": (None, [{"op": "hold", "button": "ok", "ms": FAULT_MS}]),
}
FAULT_CASES["stuck_low"] = FAULT_CASES["supply_dead"]
FAULT_CASES["stuck_high"] = FAULT_CASES["shorted_rail"]

# --faults table: issue 13's "no fault-monitor frame over 5 ms, whatever fails", each failure the
# monitor handles on each front end (hall: the default config; presence: "front_end": "shift").
# The pads are tests/test_faults.py's (off every path of its games; on an empty board here).
# "unread" hall: calib.bin's zeros 3000 LSB below the sensors' (tests/test_unreadable.py: every
# pad beyond the threshold, nothing the monitor can name); presence: a cloth of 20 x 16 pads.
SHIFT = {"front_end": "shift"}
HAND = [{"op": "fault", "hand": [0, -150], "ms": FAULT_MS}]
CLOTH = [{"op": "fault", "pad": [c, r], "mode": "stuck_high"} for r in range(20, 36) for c in range(10, 30)]
FAULT_CASES.update({
    "none": (None, []),
    "pad_stuck": (None, [{"op": "fault", "pad": [4, 20], "mode": "stuck_high"}]),
    "pad_dead": (None, [{"op": "fault", "pad": [16, 8], "mode": "dead"}]),
    "pad_flicker": (None, [{"op": "fault", "pad": [14, 12], "mode": "flicker"}]),
    "mux_frozen": (None, [{"op": "fault", "mux": 17, "raw": 30000}]),
    "mux_low": (None, [{"op": "fault", "mux": 17, "mode": "stuck_low"}]),
    "mux_high": (None, [{"op": "fault", "mux": 17, "mode": "stuck_high"}]),
    "unread": (None, [], "calib_shifted"),
    "hand": (None, HAND),
    "p_none": (SHIFT, []),
    "p_pad_stuck": (SHIFT, [{"op": "fault", "pad": [10, 50], "mode": "stuck_high"}]),
    "p_pad_low": (SHIFT, [{"op": "fault", "pad": [18, 31], "mode": "stuck_low"}]),
    "p_pad_flicker": (SHIFT, [{"op": "fault", "pad": [30, 20], "mode": "flicker"}]),
    "p_reg_high": (SHIFT, [{"op": "fault", "mux": 5, "mode": "stuck_high"}]),
    "p_reg_low": (SHIFT, [{"op": "fault", "mux": 5, "mode": "stuck_low"}]),
    "p_unread": (SHIFT, CLOTH),
    "p_hand": (SHIFT, HAND),
    "p_beams": (SHIFT, FAULT_CASES["beams"][1]),
})
# (label, case): the table's rows, hall then presence
FAULT_TABLE = [
    ("hall: no fault", "none"),
    ("hall: one pad stuck (top rail)", "pad_stuck"),
    ("hall: one pad dead (noise at ground)", "pad_dead"),
    ("hall: one pad flickering", "pad_flicker"),
    ("hall: mux 17 frozen mid-scale", "mux_frozen"),
    ("hall: mux 17 reading 0", "mux_low"),
    ("hall: mux 17 at full scale", "mux_high"),
    ("hall: mux 17 dead (ground + noise)", "dead_one"),
    ("hall: mux 17 reading one sensor", "one_mux_stuck"),
    ("hall: every pad frozen mid-scale", "frozen"),
    ("hall: every pad frozen, find() a no-op", "frozen_nofind"),
    ("hall: every pad reading 0", "supply_dead"),
    ("hall: every pad at full scale", "shorted_rail"),
    ("hall: board unreadable (calibration off)", "unread"),
    ("hall: a hand hovering", "hand"),
    ("hall: both cup beams chattering", "beams"),
    ("presence: no fault", "p_none"),
    ("presence: one pad stuck on", "p_pad_stuck"),
    ("presence: one pad stuck off", "p_pad_low"),
    ("presence: one pad flickering", "p_pad_flicker"),
    ("presence: register 5 stuck on", "p_reg_high"),
    ("presence: register 5 stuck off", "p_reg_low"),
    ("presence: the chain stuck on (every pad)", "chain_dead_high"),
    ("presence: the chain stuck off (every pad)", "chain_dead_low"),
    ("presence: board unreadable (a cloth)", "p_unread"),
    ("presence: a hand hovering", "p_hand"),
    ("presence: both cup beams chattering", "p_beams"),
]
FAULT_CASES["dead_one"] = (None, [{"op": "fault", "mux": 17, "mode": "dead"}])


def calib_shifted(by=3000):
    """calib.bin with every hall pad's zero `by` LSB below what its sensor reads on the empty
    simulated board (tests/test_unreadable.py's shifted_calibration)."""
    for d in ("firmware", os.path.join("boardsim", "target")):
        if os.path.join(ROOT, d) not in sys.path:
            sys.path.append(os.path.join(ROOT, d))
    from tables import board_table as BT
    import world_table as WT
    from sensing import calib as CAL
    n = BT.PAD_COLS * BT.PAD_ROWS
    base = [BT.ADC_ZERO - by] * n
    for p in range(WT.N_PADS):
        g = ((WT.PAD_Y[p] - BT.PAD_Y0) // BT.PAD_PITCH) * BT.PAD_COLS + (WT.PAD_X[p] - BT.PAD_X0) // BT.PAD_PITCH
        base[g] = BT.ADC_ZERO + WT.PAD_OFFSET[p] - by
    return bytes(CAL.encode(False, n, base, BT.ADC_PEAK, BT.ADC_PEAK, bytearray(n)))


def faults(config, mode, ms=FAULT_MS, trace=False):
    from boardsim.rp2040 import probe
    cfg, after = FAULT_CASES[mode][:2]
    files = {"calib.bin": calib_shifted()} if FAULT_CASES[mode][2:] == ("calib_shifted",) else None
    if cfg is not None:
        config = dict(config or {}, **cfg)
    if trace:
        return probe.run_module("MS = %d\n" % ms + FAULTS_TRACE, config=config, after=after,
                                files=files, await_ms=ms + 20000, await_ev="find_trace", wait_ms=100)
    r = probe.run_module("MS = %d\nNOFIND = %d\n" % (ms, mode.endswith("_nofind")) + FAULTS,
                         config=config, after=after, files=files,
                         await_ms=ms + 20000, await_ev="faults_timed", wait_ms=100)
    return r


def fault_row(label, case, r):
    """--faults table: one row's figures (ms) and what the monitor reported."""
    t = r.last("faults_timed")
    codes = Counter(e.get("code") for e in r.events_of("fault") if e.get("on") is not False)
    return dict(t, case=case, label=label, boots=len(r.events_of("boot")),
                codes=", ".join(f"{c} x{n}" if n > 1 else c for c, n in sorted(codes.items())) or "-")


def print_fault_table(rows):
    print("| what fails | frames | fault monitor frame, mean / worst (ms) | of it the pads' pass / the queue, worst | frames over 5 ms | a report, worst (ms) | find(), worst | loop turn, worst (ms) | reported | first report (ms / frames) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        print(f"| {x['label']} (`{x['case']}`) | {x['frames']} | {x['mean_frame_us'] / 1000:.2f} / "
              f"**{x['worst_frame_us'] / 1000:.2f}** | {x['worst_pads_us'] / 1000:.2f} / "
              f"{x['worst_work_us'] / 1000:.2f} | {x['frames_over_5ms']} | "
              f"{x['worst_report_us'] / 1000:.2f} | {x['worst_find_us'] / 1000:.1f} | "
              f"{x['worst_step_us'] / 1000:.1f} | {x['codes']}"
              + ("" if x["boots"] == 1 else f" ({x['boots']} boots)")
              + f" | {x.get('first_report_ms', -1)} / {x.get('first_report_frames', -1)} |", flush=True)


# --settle: the frames while a stillness is counted (issue 13), beside the frames at rest, in one
# boot: the board at rest (as PARTS), then the tracker's activity begun by hand (_begin: the chips
# where they lie, the stillness counted for SETTLE_MS until its verdict, the locator's fits kept,
# as in a shot's settle window once the chip has stopped); every frame's sb.step() time, by its
# state. Then the same twice more with the frame's parts wrapped (find, the tracker's frame and
# its parts, the fault monitor's frame and its parts, the chips check; a wrapper costs a few us):
# what a frame in the window spends that a frame at rest does not
SETTLE = r"""
import time
import micropython
import json
from array import array
sb = __main__.sb
sc = sb.scan
tr = sb.tracker
fa = sb.faults
HALL = hasattr(sc, "pos")
POS = "pos" if HALL else "row"
gc.collect()
TM = [0]
TL = []
# each turn under heap_lock as main.py runs it (the frames' locals on the C stack: unlocked, a
# call's heap block is searched for, as long as the heap's layout makes it, and the figures moved
# with this script's own lists; docs/performance.md, "Frames on the C stack"); the wrapped passes
# below unlocked (their wrappers allocate): their parts' figures include those searches
LOCK = [1]
def frame():
    # (a frame's turns: to the one that ends it, and the turns of a refresh fit spread after it,
    # which scan nothing: app.step's _PUT_FIT, 0xC00; TM[0]: its longest turn)
    t = 0
    tm = 0
    TL.clear()
    while True:
        t0 = time.ticks_us()
        if LOCK[0]:
            micropython.heap_lock()
            try:
                sb.step()
            finally:
                micropython.heap_unlock()
        else:
            sb.step()
        d = time.ticks_diff(time.ticks_us(), t0)
        if sb.need_service:
            sb.service()        # (as main.py: outside the turn, untimed)
        TL.append(d)
        t += d
        if d > tm:
            tm = d
        if getattr(sc, POS) == 0 and not (sb.verdict & 0xC00):
            TM[0] = tm
            return t
n_wait = 0
while getattr(sc, POS) != 0:
    sb.step()
for _ in range(12):
    frame()
while not tr.at_rest() and n_wait < 400:
    frame()
    n_wait += 1
TURNS = []
def run(nrest):
    # (frames at rest, then the window: frames until the tracker rests again)
    rest = [frame() for _ in range(nrest)]
    tr._begin(time.ticks_ms())
    win = []
    while not tr.at_rest() and len(win) < 200:
        win.append(frame())
        TURNS.append(TM[0])
    LAST_TURNS.extend(TL)
    # the frame after the verdict's (at rest): it carries what the verdict's turn put off to the
    # next turn's start (app._PUT_EVENT, _PUT_FAULTS: the fault monitor's look at that frame)
    AFTER.append(frame())
    AFTER.extend(TL)
    return rest, win
LAST_TURNS = []
AFTER = []
rest, win = run(24)
PN = ("find", "tr.frame", "tr._track", "tr._unchanged", "tr._near_anchor", "tr._keep_prev",
      "tr._set_anchor", "tr._matches_snapshot", "fa.frame", "fa._chatter", "fa._hall", "fa._presence",
      "fa._work", "fa._unread", "fa._numb", "check_chips", "ui.service", "buttons.poll",
      "journal.write", "redraw", "tr._finish", "on_board", "tr._follow", "tr._first_mover",
      "tr._reclaim", "tr._begin", "zones.disc_mask", "loc._settle", "loc._find", "loc._finish",
      "loc._fit_group", "loc._uncertainty", "loc.refresh")
NP = len(PN)
cur = array('i', [0] * NP)
cnt = array('i', [0] * NP)
def wrap(obj, name, k):
    if not hasattr(obj, name):
        return
    f = getattr(obj, name)
    def w(*a):
        t0 = time.ticks_us()
        r = f(*a)
        cur[k] += time.ticks_diff(time.ticks_us(), t0)
        cnt[k] += 1
        return r
    setattr(obj, name, w)
from sensing import zones
OBJ = {"tr": tr, "fa": fa, "ui": sb.ui, "buttons": sb.buttons, "journal": sb.journal,
       "zones": zones, "loc": sb.loc}
for k, n in enumerate(PN):
    if "." in n:
        o, m = n.split(".")
        wrap(OBJ[o], m, k)
    elif n == "find":
        wrap(sb.loc, n, k)
    else:
        wrap(sb, n, k)
def parts(frames):
    for j in range(NP):
        cur[j] = 0
        cnt[j] = 0
    t = 0
    for f in frames:
        t += f
    return t
wr = []
WVT = []
LOCK[0] = 0
for _ in range(2):
    while getattr(sc, POS) != 0:
        sb.step()
    for j in range(NP):
        cur[j] = 0
        cnt[j] = 0
    r2 = [frame() for _ in range(24)]
    pr = [cur[j] for j in range(NP)]
    pc = [cnt[j] for j in range(NP)]
    for j in range(NP):
        cur[j] = 0
        cnt[j] = 0
    tr._begin(time.ticks_ms())
    w2 = []
    # the window's first frame (the stillness begun) and its last (the verdict's), part by part
    first = None
    snap = [0] * NP
    while not tr.at_rest() and len(w2) < 200:
        for j in range(NP):
            snap[j] = cur[j]
        w2.append(frame())
        if first is None:
            first = [cur[j] - snap[j] for j in range(NP)]
    last = [cur[j] - snap[j] for j in range(NP)]
    WVT.append(list(TL))
    pw = [cur[j] for j in range(NP)]
    pwc = [cnt[j] for j in range(NP)]
    wr.append({"rest": r2, "win": w2, "rest_parts": pr, "rest_calls": pc, "win_parts": pw, "win_calls": pwc,
               "first_parts": first, "last_parts": last})
print(json.dumps({"ev": "settle_parts", "frames_to_rest": n_wait, "rest": rest, "win": win, "win_turns": TURNS, "verdict_turns": LAST_TURNS, "after_verdict": AFTER, "wrapped_verdict_turns": WVT,
                  "parts": PN, "wrapped": wr}))
"""


def settle_parts(config, chips):
    from boardsim.rp2040 import probe
    before = [{"op": "put", "chip": c, "x": x, "y": y} for c, (x, y) in chips]
    before += [{"op": "wait", "ms": 1200}] if chips else []
    r = probe.run_module(SETTLE, config=config, before=before, await_ms=90000,
                         await_ev="settle_parts", wait_ms=50)
    return r.last("settle_parts")


def print_settle_parts(r):
    def ms(v):
        return f"{statistics.mean(v) / 1000:.2f} (max {max(v) / 1000:.2f})" if v else "-"
    print(f"  frames at rest (sb.step() per frame, ms, {len(r['rest'])}): {ms(r['rest'])}")
    print(f"  frames while the stillness is counted ({len(r['win'])}, the verdict's last): "
          f"{ms(r['win'][:-1])}; the verdict's frame {r['win'][-1] / 1000 if r['win'] else '-'}")
    if r.get("win_turns"):
        t = r["win_turns"]
        print(f"  the longest loop turn of each window frame: {ms(t[:-1])}; of the verdict's frame "
              f"{t[-1] / 1000} ms")
        print(f"  the verdict's frame turn by turn (ms): "
              f"{' '.join(f'{x / 1000:.2f}' for x in r.get('verdict_turns', []))}"
              + "".join(f"; wrapped pass {k}: {' '.join(f'{x / 1000:.2f}' for x in w)}"
                        for k, w in enumerate(r.get("wrapped_verdict_turns", []))))
    if r.get("after_verdict"):
        a = r["after_verdict"]
        print(f"  the frame after the verdict's: {a[0] / 1000:.3f} ms, turn by turn "
              f"{' '.join(f'{x / 1000:.2f}' for x in a[1:])}")
    for k, w in enumerate(r["wrapped"]):
        nr, nw = len(w["rest"]), max(1, len(w["win"]) - 1)
        print(f"  wrapped pass {k}: rest {ms(w['rest'])}, window {ms(w['win'][:-1])} (parts: us a frame,"
              " rest / window incl. the verdict's, calls a frame)")
        fp, lp = w.get("first_parts") or [0] * len(r["parts"]), w.get("last_parts") or [0] * len(r["parts"])
        if w["win"]:
            print(f"    (the window's first frame {w['win'][0] / 1000:.2f} ms, its verdict's frame "
                  f"{w['win'][-1] / 1000:.2f} ms: their parts in us in the last two columns)")
        for j, name in enumerate(r["parts"]):
            a, b = w["rest_parts"][j] / nr, w["win_parts"][j] / (nw + 1)
            if a or b:
                print(f"    {name:22} {a:8.0f} {b:8.0f}   {w['rest_calls'][j] / nr:5.2f} {w['win_calls'][j] / (nw + 1):5.2f}"
                      f"   {fp[j]:7d} {lp[j]:7d}")


def parts(config, chips):
    from boardsim.rp2040 import probe
    before = [{"op": "put", "chip": c, "x": x, "y": y} for c, (x, y) in chips]
    before += [{"op": "wait", "ms": 1200}] if chips else []
    r = probe.run_module(PARTS, config=config, before=before, await_ms=60000, await_ev="profile",
                         wait_ms=50)
    return r.last("profile")


def spot_xy(n):
    from boardsim.testing import Table
    t = Table("bowling", players=1)
    for c, w in SPOTS[:n]:
        t.place(c, w)
    return [(o["chip"], (o["x"], o["y"])) for o in t.timeline() if o["op"] == "put"]


# the locator's methods wrapped (an instance attribute shadows the method, so its own calls go
# through the wrapper too): time and calls of each while the loop runs and the table plays
FIND_PARTS = r'''
import time
import json
sb = __main__.sb
loc = sb.loc
NAMES = ("find", "_follow", "_settle", "_find", "_take", "_extrema", "_model", "_fit_group",
         "_win_err", "_finish", "_nearest", "_span", "_window", "_group", "_restore", "_uncertainty",
         # the presence locator's
         "_groups", "_fit", "_seed", "_improve", "_centre", "_mismatch", "_done", "_keep_rest",
         "_steady", "_rest_of", "_off_board", "_near_hand", "_by_hole", "_moves", "_keep", "_delta",
         "_reach")
tot = {}
cnt = {}
def wrap(name):
    f = getattr(loc, name)
    tot[name] = 0
    cnt[name] = 0
    def w(*a):
        t0 = time.ticks_us()
        r = f(*a)
        tot[name] += time.ticks_diff(time.ticks_us(), t0)
        cnt[name] += 1
        return r
    setattr(loc, name, w)
for n in NAMES:
    if hasattr(loc, n):             # (the names of the firmware measured: _solve went into viper)
        wrap(n)
gc.collect()
end = time.ticks_add(time.ticks_ms(), MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    idle = sb.step()
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
print(json.dumps({"ev": "find_parts", "us": tot, "calls": cnt, "tried": getattr(loc, "tried", -1)}))
'''


def find_parts(config):
    from boardsim.rp2040 import probe
    from boardsim.testing import Table
    t = SHOTS["strike"](Table("bowling", players=1))
    tl = t.timeline()
    menu = [o for o in tl[1:] if o["op"] in ("press", "wait")][:4]
    play = tl[1 + len(menu):]
    r = probe.run_module("MS = 4000\n" + FIND_PARTS, config=config, before=menu, after=play,
                         await_ms=20000, await_ev="find_parts", wait_ms=200)
    return r.last("find_parts")


SHOTS = {
    "strike": lambda t: t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup"),
    "8 pins": lambda t: t.place("small", "a.pocket").shoot("small", "b.e2"),
    # --slow-steps only (no shot): the presence locator's still searches at their hardest (issue
    # 13): the four chips put down together 3.5 mm apart (one group of pads: every set of up to
    # four chips searched at rest), or apart (four still searches in one frame), then one nudged
    "touching": lambda t: t.place_all(TOUCHING).advance_time_and_run(4000),
    "apart": lambda t: t.place_all(APART).advance_time_and_run(4000),
    # touching groups' held fits (_hold, issue 13): two, three or four chips touching, at rest,
    # then one of them nudged 5 - 6 mm along (the others held at their rest fits, the nudged one
    # fitted again around them), a chip put down by hand against three (join4), or taken from
    # four by hand (take4)
    "nudge2": lambda t: t.place_all(TOUCH2).advance_time_and_run(2500)
    .shoot("big2", {"x": 48, "y": 150}).advance_time_and_run(3000),
    "nudge3": lambda t: t.place_all(TOUCH3).advance_time_and_run(2500)
    .shoot("big3", {"x": 21.25, "y": 193}).advance_time_and_run(3000),
    "nudge4": lambda t: t.place_all(TOUCHING).advance_time_and_run(4000)
    .shoot("big3", {"x": 21.25, "y": 193}).advance_time_and_run(3000),
    "join4": lambda t: t.place_all(TOUCH3).place("small", {"x": -80, "y": 150})
    .advance_time_and_run(3000).shoot("small", {"x": -37.5, "y": 150}).advance_time_and_run(3000),
    "take4": lambda t: t.place_all(TOUCHING).advance_time_and_run(4000).take("small")
    .advance_time_and_run(3000),
}
HELD = ("touching", "apart", "nudge2", "nudge3", "nudge4", "join4", "take4")
TOUCHING = {"big1": {"x": 0, "y": 150}, "big2": {"x": 42.5, "y": 150},
            "big3": {"x": 21.25, "y": 187}, "small": {"x": -37.5, "y": 150}}
TOUCH2 = {"big1": {"x": 0, "y": 150}, "big2": {"x": 42.5, "y": 150}}
TOUCH3 = dict(TOUCH2, big3={"x": 21.25, "y": 187})
APART = {"big1": {"x": -120, "y": 150}, "big2": {"x": 120, "y": 150},
         "big3": {"x": -120, "y": -150}, "small": {"x": 120, "y": -150}}


def shot_ops(name, phase=0):
    """The menu's ops and the shot's (`phase` ms more before the shot: where the chip stops
    against the loop's frames moves with it)."""
    from boardsim.testing import Table
    tl = SHOTS[name](Table("bowling", players=1)).timeline()
    menu = [o for o in tl[1:] if o["op"] in ("press", "wait")][:4]
    play = tl[1 + len(menu):]
    if phase:
        k = next(i for i, o in enumerate(play) if o["op"] == "move")
        play.insert(k, {"op": "wait", "ms": phase})
    return menu, play


def shot(config, name, phase=0):
    """The loop on the chip while a shot is played: its moving frames, and rest -> shown (the
    move's end on the table, from the runner's op trace, to the displays done after the
    shot's event line)."""
    import io
    from boardsim import runtime
    from boardsim.rp2040 import probe
    menu, play = shot_ops(name, phase)
    mtl = probe.module_timeline("MS = 4000\nNSETTLE = 0\n" + LOOP, before=menu, after=play, await_ms=20000,
                                await_ev="frames", wait_ms=200)
    move = next(o for o in mtl if o["op"] == "move")
    last = max(m["pts"][-1][2] for m in move["moves"])
    out, err = io.StringIO(), io.StringIO()
    os.environ["ZENN_PICO_TRACE"] = "1"
    try:
        cfg = None
        args = ()
        if config:
            import tempfile
            fd, cfg = tempfile.mkstemp(suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(config, f)
            args = ("--config", cfg)
        runtime.run(mtl, "rp2040", display=True, stdout=out, stderr=err, runner_args=args)
    finally:
        os.environ.pop("ZENN_PICO_TRACE", None)
    t_move = t_import = None
    for ln in err.getvalue().splitlines():
        if ln.startswith("trace:") and '{"op": "move"' in ln:
            t_move = int(ln.split(" ms chip")[0].split(",")[-1].strip())
        if ln.startswith("trace:") and "import zjob" in ln:
            t_import = int(ln.split(" ms chip")[0].split(",")[-1].strip())
    events = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.startswith("{")]
    f = [e for e in events if e.get("ev") == "frames"][-1]
    fw = [e for e in events if e.get("ev") not in ("frames",)]
    res = {"shot": name, "phase_ms": phase, "frames_moving": len(f["moving_ms"]), "worst_moving_ms": max(f["moving_ms"] or [0]),
           "moving_ms": f["moving_ms"], "worst_step_us": f["worst_step_us"], "t_move_ms": t_move,
           "t_import_ms (table)": t_import, "t_start_ms (chip)": f["t_start"],
           "t_rest_ms": None if t_move is None else t_move + last}
    for count, t_written, t_shown in f["lines"]:
        e = fw[count - 1] if count - 1 < len(fw) else {}
        if e.get("ev") == "shot" and res["t_rest_ms"] is not None:
            res["result"] = e.get("result")
            res["rest_to_verdict_ms"] = t_written - res["t_rest_ms"]
            res["rest_to_shown_ms"] = (t_shown - res["t_rest_ms"]) if t_shown >= 0 else None
    return res


# --series: one game, a first ball after another in one boot (a boot costs the emulator more
# than a shot): each first ball shot, then taken back with undo and put back for the next, a
# few ms later each time (phases), so that the chip stops at another point of the loop's frame
SERIES_PATHS = {"strike": ("b.pocket", "b.cup"), "8 pins": ("b.e2",)}


def series_ops(name, phases):
    """--series' menu presses and play: each first ball shot, taken back with undo, picked up,
    put back and shot again, phases[i] ms more before the i-th shot."""
    from boardsim.testing import Table
    t = Table("bowling", players=1)
    for i in range(len(phases)):
        if i:
            t.press("undo")                 # the ball taken back: a first ball again
            t.take("small")
        t.place("small", "a.pocket").shoot("small", *SERIES_PATHS[name])
    tl = t.timeline()
    menu = [o for o in tl[1:] if o["op"] in ("press", "wait")][:4]
    play = tl[1 + len(menu):]
    timed = []
    for o in play:
        if o["op"] == "move" and phases[len([x for x in timed if x["op"] == "move"])]:
            timed.append({"op": "wait", "ms": phases[len([x for x in timed if x["op"] == "move"])]})
        timed.append(o)
    return menu, timed


def series(config, name, phases):
    """rest -> verdict -> shown of len(phases) first balls of the shot `name` in one game on the
    chip (LOOP: each shot's event line, when it was written and when the displays were done)."""
    import io
    from boardsim import runtime
    from boardsim.rp2040 import probe
    from boardsim.testing import Table
    menu, play = series_ops(name, phases)
    ms = 5000 * len(phases) + 2000
    mtl = probe.module_timeline("MS = %d\nNSETTLE = %d\n" % (ms, min(1400, 240 * len(phases))) + LOOP, before=menu, after=play,
                                await_ms=ms + 20000, await_ev="frames", wait_ms=200)
    ends = [max(m["pts"][-1][2] for m in o["moves"]) for o in mtl if o["op"] == "move"]
    out, err = io.StringIO(), io.StringIO()
    os.environ["ZENN_PICO_TRACE"] = "1"
    try:
        args = ()
        if config:
            import tempfile
            fd, cfg = tempfile.mkstemp(suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(config, f)
            args = ("--config", cfg)
        runtime.run(mtl, "rp2040", display=True, stdout=out, stderr=err, runner_args=args)
    finally:
        os.environ.pop("ZENN_PICO_TRACE", None)
    t_moves = [int(ln.split(" ms chip")[0].split(",")[-1].strip()) for ln in err.getvalue().splitlines()
               if ln.startswith("trace:") and '{"op": "move"' in ln]
    events = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.startswith("{")]
    f = [e for e in events if e.get("ev") == "frames"][-1]
    srows = [e["r"] for e in events if e.get("ev") == "srow"]
    fw = [e for e in events if e.get("ev") not in ("frames", "srow")]
    runs = []
    for count, t_written, t_shown in f["lines"]:
        e = fw[count - 1] if count - 1 < len(fw) else {}
        if e.get("ev") != "shot":
            continue
        i = len(runs)
        t_rest = t_moves[i] + ends[i] if i < len(t_moves) else None
        run = {"phase_ms": phases[i] if i < len(phases) else None, "result": e.get("result"),
               "pins": e.get("pins"), "rest_to_verdict_ms": None if t_rest is None else t_written - t_rest,
               "rest_to_shown_ms": None if t_rest is None or t_shown < 0 else t_shown - t_rest}
        if t_rest is not None and srows:
            run.update(settle_of(srows, t_moves[i], t_rest, t_written, t_shown))
        runs.append(run)
    return {"shot": name, "worst_moving_ms": max(f["moving_ms"] or [0]),
            "worst_step_us": f["worst_step_us"], "runs": runs, "t_moves": t_moves, "ends": ends,
            "settle_cols": SETTLE_COLS, "settle_raw": srows}


SETTLE_COLS = ("ms", "still_since", "confirm", "n", "x", "y", "wander", "bt", "ao", "frame_ms10",
               "rest", "steps_ms10")


def settle_of(srows, t_move, t_rest, t_written, t_shown):
    """One shot's settle window from LOOP's SETTLE rows (every frame's end while the tracker was
    not at rest), in ms from the chip's rest (the move's end on the table): when the stillness
    was first seen, every time it began again (at that frame: "again"; counted from the second
    anchor's earlier frame: "second"), the refresh asked, the verdict's frame and the stillness
    it was judged on, the frames' lengths near it; and the rows themselves (t - t_rest)."""
    rows = [r for r in srows if t_move <= r[0] <= max(t_written, t_shown) + 2]
    out = {"settle_rows": [[r[0] - t_rest] + r[1:] for r in rows]}
    # (a moving frame begins the stillness at itself: while the chip slides, the stillness is
    # the first still_since that the next frame keeps; one begun at or after the chip's rest on
    # the table is the first whether or not the next frame keeps it (the last moving fit, read
    # while the chip slid, then a fit at rest 2 - 3 mm on: the tracker began the stillness
    # again, a frame later); a change after the first is a stillness begun again)
    first = since = None
    restarts = []
    refresh = []
    verdict = None
    prev_conf = 0
    prev_ms = t_move
    for k, r in enumerate(rows):
        ms, ss, conf, rest = r[0], r[1], r[2], r[10]
        if rest:
            if verdict is None and ms >= t_rest - 20:
                verdict = r
            prev_ms = ms
            continue
        if ss >= 0:
            if first is None:
                if ss >= t_rest or (k + 1 < len(rows) and rows[k + 1][1] == ss):
                    first = ss
            elif ss != since:
                restarts.append([ms - t_rest, ss - t_rest, "again" if ss > prev_ms else "second"])
            since = ss
        prev_ms = ms
        if conf and not prev_conf and first is not None:
            refresh.append(ms - t_rest)
        prev_conf = conf
    out["still_ms"] = None if first is None else first - t_rest
    out["restarts"] = restarts
    out["refresh_ms"] = refresh
    if verdict is not None:
        out["verdict_frame_ms"] = verdict[0] - t_rest
        if since is not None:
            # (the verdict's frame clears still: the stillness it ended is the frame before's)
            out["judged_since_ms"] = since - t_rest
            out["stillness_at_verdict_ms"] = verdict[0] - since
        k = rows.index(verdict)
        out["last_frames_ms"] = [r[9] / 10 for r in rows[max(0, k - 3):k + 1]]
        if len(verdict) > 11:       # (the frames' sb.step() time alone: the bench's own left out)
            out["last_steps_ms"] = [r[11] / 10 for r in rows[max(0, k - 3):k + 1]]
        if t_shown >= 0:
            out["verdict_to_shown_ms"] = t_shown - verdict[0]
    return out


def print_settle(run, frames=False):
    """A run's settle window (settle_of) on a line, and with frames every row."""
    if "still_ms" not in run:
        return
    if not run["settle_rows"]:
        # (LOOP keeps NSETTLE rows in all: a long series' last runs may find the ring full)
        print(f"  phase {run['phase_ms']}: shown +{run['rest_to_shown_ms']}; no settle rows kept for this run")
        return
    rs = " ".join(f"at +{t}: from {s:+d} ({k})" for t, s, k in run["restarts"]) or "none"
    still = "none" if run["still_ms"] is None else f"{run['still_ms']:+d}"
    print(f"  phase {run['phase_ms']}: shown +{run['rest_to_shown_ms']}; still first {still}"
          f", begun again: {rs}; refresh asked at {', '.join('+%d' % x for x in run['refresh_ms'])}"
          f"; the verdict's frame ended +{run.get('verdict_frame_ms')} (the stillness it ended from "
          f"{run.get('judged_since_ms', 0):+d}, {run.get('stillness_at_verdict_ms')} ms to that frame end), "
          f"last frames {run.get('last_frames_ms')} ms (the verdict's own last: its turn)"
          + (f", of them sb.step() {run['last_steps_ms']} ms" if "last_steps_ms" in run else ""))
    if frames:
        print("     " + " ".join(f"{c:>11}" for c in SETTLE_COLS))
        for r in run["settle_rows"]:
            if r[0] >= -60:
                print("     " + " ".join(f"{x:11d}" for x in r))


# the steps around a shot's verdict, one by one: each step's start (us since the module began)
# and length, and inside it the Scoreboard's parts (wrapped: each call also pays its wrapper's):
# the locator's find(), the tracker's frame() and its verdict (_finish), the rules and the event
# line (on_board), the screens (redraw), the buses (ui.service: the pages sent); the tracker's
# still_since and the verdict's time, so that rest -> still -> verdict -> shown can be split.
# Each turn under heap_lock as main.py runs it (a call's locals on the C stack; before session 20
# this loop stepped unlocked, its figures those of the old main.py: "Frames on the C stack")
VERDICT = r"""
import time
import json
import micropython
from array import array
sb = __main__.sb
sc = sb.scan
POS = "pos" if hasattr(sc, "pos") else "row"     # 0 after the step that ended a frame
tr = sb.tracker
ev = sb.ev
gc.collect()
from sensing import zones
PN = ("find", "frame", "finish", "on_board", "redraw", "service", "refresh", "disc_mask",
      "first_mover", "reclaim", "cup_drops", "journal",
      # (added for issue 13's verdict turn: the fault monitor's frame, the chips check, the
      # event lines' writes to the stream, the rules, the shot line, the displays' flush)
      "faults", "check_chips", "ev_write", "on_shot", "emit_shot", "flush")
NP = len(PN)
N = 160                              # steps kept (a ring)
rs = array('i', [0] * N)             # step start
rd = array('i', [0] * N)             # step length
rp = array('i', [0] * (N * NP))      # parts in it
rf = bytearray(N)                    # 1: the step ended a frame; 2: pages sent (count) << 1
cur = array('i', [0] * NP)
t_io = [0]                           # ticks_ms when the last flush() / service() returned
T0 = time.ticks_us()
# each loop turn under heap_lock as main.py runs it (below): the wrappers allocate nothing, so
# each takes its function's own arguments (a *args wrapper makes a tuple a call); a closure's
# two cells and up to three arguments go on the C stack
def wrap(obj, name, k, nargs):
    f = getattr(obj, name)
    if nargs == 0:
        def w():
            t0 = time.ticks_us()
            r = f()
            cur[k] += time.ticks_diff(time.ticks_us(), t0)
            if k == 5:
                t_io[0] = time.ticks_ms()
            return r
    elif nargs == 1:
        def w(a):
            t0 = time.ticks_us()
            r = f(a)
            cur[k] += time.ticks_diff(time.ticks_us(), t0)
            return r
    elif nargs == 2:
        def w(a, b):
            t0 = time.ticks_us()
            r = f(a, b)
            cur[k] += time.ticks_diff(time.ticks_us(), t0)
            return r
    else:
        def w(a, b, c):
            t0 = time.ticks_us()
            r = f(a, b, c)
            cur[k] += time.ticks_diff(time.ticks_us(), t0)
            return r
    setattr(obj, name, w)
wrap(sb.loc, "find", 0, 1)
wrap(tr, "frame", 1, 0)
wrap(tr, "_finish", 2, 2)
wrap(sb, "on_board", 3, 1)
wrap(sb, "redraw", 4, 0)
wrap(sb.ui, "service", 5, 0)
wrap(sb.loc, "refresh", 6, 0)
wrap(zones, "disc_mask", 7, 3)
wrap(tr, "_first_mover", 8, 1)
wrap(tr, "_reclaim", 9, 1)
wrap(tr, "_cup_drops", 10, 3)
wrap(sb.journal, "write", 11, 0)
wrap(sb.faults, "frame", 12, 0)
wrap(sb, "check_chips", 13, 0)
wrap(ev, "flush", 14, 0)
g = sb.game if sb.game is not None else sb.engines[0]
wrap(g, "on_shot", 15, 1)
if hasattr(g, "emit_shot"):
    wrap(g, "emit_shot", 16, 0)
# the displays' flush, and when it returned (ticks_ms): the score is on the panel then
t_flushed = array('i', [0])
_ui_flush = sb.ui.flush
def _flush_timed():
    t0 = time.ticks_us()
    r = _ui_flush()
    cur[17] += time.ticks_diff(time.ticks_us(), t0)
    t_flushed[0] = time.ticks_ms()
    t_io[0] = t_flushed[0]
    return r
sb.ui.flush = _flush_timed
# every frame's end while the board settles: when, the tracker's still_since and confirm, the
# locator's first chip (x, y) and count, find()'s length: a stillness begun again shows here
NS = 96
SK = 7
srow = array('i', [0] * (NS * SK))
ns = 0
drivers = sb.ui.drivers
k = 0
lines = ev.lines
verdict_k = -1
cand_k = -1
cand_still = 0
shown_k = -1
t_verdict = 0
t_shown = 0
still_since = 0
v_still = 0
v_flushed = 0
end = time.ticks_add(time.ticks_ms(), MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    for j in range(NP):
        cur[j] = 0
    t0 = time.ticks_us()
    micropython.heap_lock()
    try:
        idle = sb.step()
    finally:
        micropython.heap_unlock()
    t1 = time.ticks_us()
    i = k % N
    rs[i] = time.ticks_diff(t0, T0)
    rd[i] = time.ticks_diff(t1, t0)
    for j in range(NP):
        rp[i * NP + j] = cur[j]
    rf[i] = 1 if getattr(sc, POS) == 0 else 0
    if rf[i] and not tr.at_rest() or cur[2]:
        b = (ns % NS) * SK
        srow[b] = time.ticks_ms()
        srow[b + 1] = tr.still_since if tr.still else -1
        srow[b + 2] = tr.confirm
        srow[b + 3] = sb.loc.n
        srow[b + 4] = sb.loc.x[0] if sb.loc.n else 0
        srow[b + 5] = sb.loc.y[0] if sb.loc.n else 0
        srow[b + 6] = cur[0]
        ns += 1
    if tr.still:
        still_since = tr.still_since
    if cur[2]:                       # the tracker's verdict: its turn (the shot's line comes in
        cand_k = k                   # it, or, since issue 13's turns within 10 ms, a few turns on)
        cand_still = still_since
    if ev.lines != lines:
        lines = ev.lines
        if cand_k >= 0:              # the verdict's shot line
            verdict_k = cand_k
            cand_k = -1
            shown_k = -1
            t_verdict = time.ticks_ms()
            v_still = cand_still
            v_flushed = t_flushed[0] if t_flushed[0] else t_io[0]
    if verdict_k >= 0 and shown_k < 0:
        busy = 0
        for dr in drivers:
            if dr.dirty:
                busy = 1
        if not busy:
            shown_k = k
            t_shown = t_io[0]
    k += 1
    if shown_k >= 0 and k - shown_k > 8:
        break
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
out = []
first = k - N if k > N else 0
for q in range(first, k):
    i = q % N
    out.append([q, rs[i], rd[i], rf[i]] + [rp[i * NP + j] for j in range(NP)])
print(json.dumps({"ev": "verdict_parts", "parts": PN, "verdict_k": verdict_k, "shown_k": shown_k,
                  "t_verdict": t_verdict, "t_shown": t_shown, "still_since": v_still if verdict_k >= 0 else 0, "now": time.ticks_ms(),
                  "t_rest_tracker": tr.res.t_rest, "steps": out,
                  "t_flushed": v_flushed,
                  "settle_cols": ["ms", "still_since", "confirm", "n", "x", "y", "find_us"],
                  "settle": [[srow[(q % NS) * SK + j] for j in range(SK)]
                             for q in range(ns - NS if ns > NS else 0, ns)]}))
"""


# --slow-steps: the loop as main.py runs it while a shot is played, the Scoreboard's parts wrapped
# as for --verdict-parts (and the locator's groups, follow and fit); every step over 20 ms is
# kept with its parts (us), and whether the tracker was at rest before it; with the locator's
# crowd and hand pads after it, and the frame before's (the last turn that ran find()): its
# hand, hand pads and chips, and how many ms before (a hand's frames around a put-down). Rows of
# 30 ints: N of them in one array (200 of 24, 19,200 B, failed to allocate once after boot)
SLOW = r"""
import time
import json
from array import array
sb = __main__.sb
tr = sb.tracker
loc = sb.loc
gc.collect()
PN = ("find", "frame", "faults", "on_board", "redraw", "service", "_groups", "_follow", "_fit",
      "_done", "_centre", "check_chips", "_seed", "journal", "flush", "finish", "hand", "cut",
      "loc_n", "_hold", "_held", "crowd", "hcells", "p_hand", "p_hcells", "p_n", "p_ago")
NP = len(PN)
rows = array('i', [0] * (N * (NP + 3)))
nr = 0
cur = array('i', [0] * NP)
tried0 = array('i', [0])
pv = array('i', [0] * 4)         # the last frame's (a turn with find): hand, its pads, chips, when
T0 = time.ticks_ms()
def wrap(obj, name, k):
    if not hasattr(obj, name):
        return
    f = getattr(obj, name)
    def w(*a):
        t0 = time.ticks_us()
        r = f(*a)
        cur[k] += time.ticks_diff(time.ticks_us(), t0)
        return r
    setattr(obj, name, w)
wrap(loc, "find", 0)
wrap(tr, "frame", 1)
wrap(sb.faults, "frame", 2)
wrap(sb, "on_board", 3)
wrap(sb, "redraw", 4)
wrap(sb.ui, "service", 5)
for k, n in enumerate(PN[6:11]):
    wrap(loc, n, 6 + k)
wrap(sb, "check_chips", 11)
wrap(loc, "_seed", 12)
wrap(sb.journal, "write", 13)
wrap(sb.ui, "flush", 14)
wrap(tr, "_finish", 15)
wrap(loc, "_hold", 19)
wrap(loc, "_held", 20)
end = time.ticks_add(time.ticks_ms(), MS)
while time.ticks_diff(end, time.ticks_ms()) > 0:
    for j in range(NP):
        cur[j] = 0
    rest = tr.at_rest()
    tried0[0] = getattr(loc, "tried", 0)
    t0 = time.ticks_us()
    idle = sb.step()
    d = time.ticks_diff(time.ticks_us(), t0)
    cur[16] = loc.hand
    cur[17] = getattr(loc, "cut", 0)
    cur[18] = loc.n
    cur[21] = loc.crowd
    cur[22] = loc.hand_cells
    cur[23] = pv[0]
    cur[24] = pv[1]
    cur[25] = pv[2]
    cur[26] = time.ticks_diff(time.ticks_ms(), T0) - pv[3]
    if cur[0]:
        pv[0] = loc.hand
        pv[1] = loc.hand_cells
        pv[2] = loc.n
        pv[3] = time.ticks_diff(time.ticks_ms(), T0)
    if d > THRESH and nr < N:
        b = nr * (NP + 3)
        rows[b] = time.ticks_diff(time.ticks_ms(), T0)
        rows[b + 1] = d
        rows[b + 2] = (getattr(loc, "tried", 0) - tried0[0]) * 2 + (1 if rest else 0)
        for j in range(NP):
            rows[b + 3 + j] = cur[j]
        nr += 1
    if sb.need_service:
        sb.service()
    if idle:
        time.sleep_ms(idle)
print(json.dumps({"ev": "slow_steps", "parts": PN, "steps": [list(rows[i * (NP + 3):(i + 1) * (NP + 3)]) for i in range(nr)]}))
"""


def slow_steps(config, name, thresh_ms=20):
    """The steps over thresh_ms while a shot is played on the chip, part by part (SLOW)."""
    from boardsim.rp2040 import probe
    from boardsim.testing import Table
    t = SHOTS[name](Table("bowling", players=1))
    tl = t.timeline()
    menu = [o for o in tl[1:] if o["op"] in ("press", "wait")][:4]
    play = tl[1 + len(menu):]
    # (the chips put down one by one; the held cases' moves after them)
    ms = 4000 if name not in HELD else 8000 if name in ("touching", "apart") else 13000
    r = probe.run_module("MS = %d\nN = 120\nTHRESH = %d\n" % (ms, thresh_ms * 1000) + SLOW,
                         config=config, before=menu,
                         after=play, await_ms=20000, await_ev="slow_steps", wait_ms=200)
    return r.last("slow_steps")


def slow_series(config, name, phases, thresh_ms=20):
    """--slow-steps over --series' timeline (first balls taken back with undo, picked up and put
    back: the hand's frames, the verdicts' turns, the journal's saves): every loop turn over
    thresh_ms, its parts (SLOW), whether a hand was seen, whether a search was cut."""
    from boardsim.rp2040 import probe
    menu, play = series_ops(name, phases)
    ms = 5000 * len(phases) + 2000
    r = probe.run_module("MS = %d\nN = 130\nTHRESH = %d\n" % (ms, thresh_ms * 1000) + SLOW,
                         config=config, before=menu, after=play, await_ms=ms + 20000,
                         await_ev="slow_steps", wait_ms=200)
    return r.last("slow_steps")


def verdict_parts(config, name, phase=0):
    """The steps around a shot's verdict on the chip, part by part (VERDICT), and the move's end
    from the runner's op trace."""
    import io
    from boardsim import runtime
    from boardsim.rp2040 import probe
    menu, play = shot_ops(name, phase)
    mtl = probe.module_timeline("MS = 4000\n" + VERDICT, before=menu, after=play, await_ms=20000,
                                await_ev="verdict_parts", wait_ms=200)
    move = next(o for o in mtl if o["op"] == "move")
    last = max(m["pts"][-1][2] for m in move["moves"])
    out, err = io.StringIO(), io.StringIO()
    os.environ["ZENN_PICO_TRACE"] = "1"
    try:
        args = ()
        if config:
            import tempfile
            fd, cfg = tempfile.mkstemp(suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(config, f)
            args = ("--config", cfg)
        runtime.run(mtl, "rp2040", display=True, stdout=out, stderr=err, runner_args=args)
    finally:
        os.environ.pop("ZENN_PICO_TRACE", None)
    t_move = None
    for ln in err.getvalue().splitlines():
        if ln.startswith("trace:") and '{"op": "move"' in ln:
            t_move = int(ln.split(" ms chip")[0].split(",")[-1].strip())
    events = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.startswith("{")]
    v = [e for e in events if e.get("ev") == "verdict_parts"][-1]
    shots = [e for e in events if e.get("ev") == "shot"]
    t_rest = None if t_move is None else t_move + last
    return dict(v, shot=name, phase_ms=phase, result=shots[-1].get("result") if shots else None,
                t_rest=t_rest)


def print_verdict_parts(r):
    t_rest = r["t_rest"]
    print(f"{r['shot']}: {r['result']}; rest {t_rest} ms, still since {r['still_since']} "
          f"({r['still_since'] - t_rest:+d}), verdict {r['t_verdict']} ({r['t_verdict'] - t_rest:+d}),"
          f" shown {r['t_shown']} ({r['t_shown'] - t_rest:+d})"
          + (f", flushed {r['t_flushed']} ({r['t_flushed'] - t_rest:+d})" if r.get("t_flushed") else ""))
    steps = r["steps"]
    vk = r["verdict_k"]
    names = r["parts"]
    print("  step    start_us   len_us  end " + " ".join(f"{n:>9}" for n in names))
    for s in steps:
        q, st, d, fe = s[:4]
        if q < vk - 40 or (r["shown_k"] >= 0 and q > r["shown_k"] + 2):
            continue
        mark = "V" if q == vk else ("S" if q == r["shown_k"] else " ")
        print(f"{mark} {q:5d} {st:11d} {d:8d} {'F' if fe else ' ':>4} " + " ".join(f"{x:9d}" for x in s[4:]))
    if r.get("settle"):
        # the frames while the board settled: a still_since that changes is a stillness begun again
        print("  settling: " + " ".join(f"{c:>11}" for c in r["settle_cols"]))
        for row in r["settle"]:
            if row[0] >= t_rest - 60:
                print("            " + " ".join(f"{x:11d}" for x in row))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chips", type=int, default=0)
    ap.add_argument("--config", default=None, help="config.json as JSON text")
    ap.add_argument("--shot", action="store_true")
    ap.add_argument("--settle", action="store_true", help="--chips N at rest, then the tracker's "
                    "activity begun by hand: the frames while the stillness is counted, beside "
                    "those at rest, and part by part (issue 13)")
    ap.add_argument("--find-parts", action="store_true", help="the locator's methods timed "
                    "while a strike is played (wrapped: each call costs a wrapper's too)")
    ap.add_argument("--faults", metavar="CASE", help="what fails (FAULT_CASES: supply_dead, "
                    "shorted_rail, frozen, frozen_nofind, dead, same, one_mux_stuck, chain_dead_high, "
                    "chain_dead_low, beams, button and more; all: each in turn; table: issue 13's "
                    "failures on both front ends, one row each, a markdown table at the end; "
                    "table:hall, table:presence: one front end's): the fault monitor's frames timed")
    ap.add_argument("--verdict-parts", action="store_true", help="--shot's shots, the steps "
                    "around the verdict part by part (find, tracker, verdict, rules, redraw, pages)")
    ap.add_argument("--slow-steps", action="store_true", help="--shot's shots: every loop turn "
                    "over 20 ms, its parts (find and the locator's groups, follow, fit, done, "
                    "centre; tracker, fault monitor, rules, redraw, pages)")
    ap.add_argument("--shots", default=",".join(SHOTS), help="--shot, --verdict-parts: which "
                    "(comma-separated: %s)" % ", ".join(SHOTS))
    ap.add_argument("--trace", action="store_true", help="--faults: every find() traced (its "
                    "candidates, chips, unread, fits), the rows of those over 20 ms printed")
    ap.add_argument("--ms", type=int, default=FAULT_MS, help="--faults: chip time timed per case")
    ap.add_argument("--series", action="store_true", help="--shots' first balls one after "
                    "another in one boot (undo, put back, shot again), one per --phases entry")
    ap.add_argument("--frames", action="store_true", help="--series: every frame's row of each "
                    "run's settle window (still_since, confirm, the first chip, the second "
                    "anchor, the frame's length)")
    ap.add_argument("--slow-ms", type=int, default=20, help="--slow-steps --series: the loop "
                    "turns kept are those over this many ms")
    ap.add_argument("--phases", default="0", help="--shot, --verdict-parts: ms waited before "
                    "each shot, one run each (comma-separated, e.g. 0,3,6,...: the chip stops at "
                    "another point of the loop's frame); --shot then prints min / median / max")
    a = ap.parse_args(argv)
    from boardsim.rp2040 import images
    why = images.missing()
    if why:
        print(f"bench.rp2040_profile: not run: {why}")
        return 0
    cfg = json.loads(a.config) if a.config else None
    if a.faults and (a.faults == "table" or a.faults.startswith("table:")):
        # table:hall / table:presence: the one front end's rows; table:CASE,CASE...: those rows
        which = a.faults[6:]
        rows = []
        for label, case in FAULT_TABLE:
            if which and not label.startswith(which) and case not in which.split(","):
                continue
            r = faults(cfg, case, a.ms)
            rows.append(fault_row(label, case, r))
            print(json.dumps(rows[-1]), flush=True)
        print_fault_table(rows)
        return 0
    if a.faults:
        cases = [c for c in FAULT_CASES if c not in ("stuck_low", "stuck_high")] \
            if a.faults == "all" else a.faults.split(",")
        for case in cases:
            if a.trace:
                r = faults(cfg, case, a.ms, trace=True)
                print(json.dumps(dict(r.last("find_trace"), case=case)), flush=True)
                continue
            r = faults(cfg, case, a.ms)
            res = dict(r.last("faults_timed"), case=case, fault_events=len(r.events_of("fault")),
                       boots=len(r.events_of("boot")))
            print(json.dumps(res), flush=True)
        return 0
    if a.find_parts:
        r = find_parts(cfg)
        for k in sorted(r["us"], key=lambda k: -r["us"][k]):
            print(f"  {k:14} {r['us'][k] / 1000:9.1f} ms  {r['calls'][k]:6d} calls")
        print(f"  moves tried (the locator's count): {r.get('tried')}")
        return 0
    phases = [int(p) for p in a.phases.split(",")]
    if a.series and a.slow_steps:
        for name in a.shots.split(","):
            r = slow_series(cfg, name, phases, a.slow_ms)
            print(json.dumps(r), flush=True)
            print(f"{name} series: steps over {a.slow_ms} ms (ms since start, us, moves tried, at "
                  "rest before; parts in us; hand, cut, loc_n: the locator's after the step)")
            print("      ms      us  moves rest " + " ".join(f"{n:>9}" for n in r["parts"]))
            for st in r["steps"]:
                print(f"  {st[0]:6d} {st[1]:7d} {st[2] >> 1:6d} {st[2] & 1:4d} " + " ".join(f"{x:9d}" for x in st[3:]))
        return 0
    if a.series:
        for name in a.shots.split(","):
            r = series(cfg, name, phases)
            print(json.dumps(r), flush=True)
            shown = sorted(x["rest_to_shown_ms"] for x in r["runs"] if x["rest_to_shown_ms"] is not None)
            print(f"{name}: {len(r['runs'])} first balls; rest -> verdict -> shown: "
                  + ", ".join(f"{x['rest_to_verdict_ms']} -> {x['rest_to_shown_ms']}" for x in r["runs"])
                  + (f"; shown min / median / max {shown[0]} / {statistics.median(shown)} / {shown[-1]} ms"
                     if shown else ""), flush=True)
            print("  the settle window of each (ms from the chip's rest on the table; SETTLE rows):")
            for x in r["runs"]:
                print_settle(x, a.frames)
        return 0
    if a.slow_steps:
        for name in a.shots.split(","):
            r = slow_steps(cfg, name, a.slow_ms)
            print(f"{name}: steps over {a.slow_ms} ms (ms since start, us, moves tried, at rest before; parts in us)")
            print("      ms      us  moves rest " + " ".join(f"{n:>9}" for n in r["parts"]))
            for st in r["steps"]:
                print(f"  {st[0]:6d} {st[1]:7d} {st[2] >> 1:6d} {st[2] & 1:4d} " + " ".join(f"{x:9d}" for x in st[3:]))
        return 0
    if a.verdict_parts:
        for name in a.shots.split(","):
            for ph in phases:
                r = verdict_parts(cfg, name, ph)
                print(json.dumps(r), flush=True)
                print_verdict_parts(r)
        return 0
    if a.shot:
        for name in a.shots.split(","):
            got = []
            for ph in phases:
                r = shot(cfg, name, ph)
                print(json.dumps(r), flush=True)
                got.append((r.get("rest_to_verdict_ms"), r.get("rest_to_shown_ms")))
            shown = sorted(g[1] for g in got if g[1] is not None)
            if shown:
                print(f"{name}: rest -> verdict -> shown over {len(got)} runs: "
                      + ", ".join(f"{v} -> {w}" for v, w in got)
                      + f"; shown min / median / max {shown[0]} / {statistics.median(shown)} / "
                      f"{shown[-1]} ms", flush=True)
        return 0
    if a.settle:
        r = settle_parts(cfg, spot_xy(a.chips))
        print(json.dumps(r))
        print_settle_parts(r)
        return 0
    r = parts(cfg, spot_xy(a.chips))
    print(json.dumps(r))
    for k, v in r.items():
        if k == "ev":
            continue
        us = v / 1000 if k.endswith("_ns") else v
        if k in ("steps_per_frame", "frames_to_rest", "at_rest"):
            print(f"  {k:22} {v:9d}")
            continue
        print(f"  {k[:-3] if k.endswith(('_ns', '_us')) else k:22} {us:9.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
