"""The fault monitor's work per frame is bounded whatever fails (issue 13: on an emulated RP2040
a frame in which every pad looked frozen took 9.1 s, past the 5 s watchdog: a reset loop).

The real firmware on the simulated table under CPython, with every line of firmware bytecode
that a fault-monitor frame (FaultMonitor.frame) and a report (FaultMonitor.report, one per step
that ends no frame) execute counted by sys.settrace: deterministic, the same on every machine
(the @micropython.viper functions are machine code on the chip and are not counted, nor the
simulator's). Then a part of the table fails: every mux frozen at the bottom rail (a mux supply
dead; what the emulated chip read), every pad frozen mid-scale, every pad at the top rail (a
shorted rail), one dead mux, every presence register stuck on. Each frame must stay within a
fixed number of lines and of the monitor's own counters (queued pads looked at, dead muxes
handled), and the faults must still all be reported, each once, with the right codes.
No wall-clock time is asserted. Bounds: a healthy frame is about 80 lines (hall) and 110
(presence); 10 - 20 us a line on the RP2040 (the chip's measured frame over these counts)."""
import json
import os
import sys
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _d in ("firmware", os.path.join("boardsim", "target")):
    if os.path.join(ROOT, _d) not in sys.path:
        sys.path.append(os.path.join(ROOT, _d))
from tables import board_table as BT  # noqa: E402
from runtimes import run_target  # noqa: E402

MAX_FRAME_LINES = {"hall": 200, "shift": 250}   # measured 166 / 236 at the worst frame (hall:
# every mux at a rail; presence: a stuck pad's frame, 227 the chain stuck on). The presence
# bound was 290: the chain stuck on then left two 74HC165s out in one frame, 282 lines, 5.13 ms
# on the emulated chip, over issue 13's 5 ms (bench/rp2040_profile.py --faults table); now one a
# frame (faults._KILLS_SHIFT), and test_two_registers_a_frame_bust_the_bound shows the bound
# catches two. (266 with issue 12's crowd counted as a hand and issue 13's unreadable streak;
# set_ignored clears the touching chips' group records too, 8 lines a call.)
MAX_REPORT_LINES = 260                          # measured 235 (a pad's event line and text)

TARGET = r'''
import sys
import json

import micropython
VIPER = set()
_viper = micropython.viper


def _tag(f):
    VIPER.add(f.__code__)          # machine code on the chip: its lines are not bytecode
    return _viper(f)


micropython.viper = _tag

import runner as R      # noqa: E402  (boardsim/target: the clock, the world, the firmware)
from sensing import faults as FA     # noqa: E402
from driver import EventLines        # noqa: E402  (tests/support)

job = json.loads(sys.stdin.readline())


r = R.Runner(config=job.get("config"))
out = EventLines()
r.out = out
for o in job.get("before", ()):     # (a calib.bin written before the boot)
    r.op(o)
r.op({"op": "boot"})
fm = r.sb.faults
COUNT = [0]


VCOUNT = [0]


def vtracer(frame, event, arg):
    VCOUNT[0] += 1
    return vtracer


def tracer(frame, event, arg):
    c = frame.f_code
    if "/firmware/" not in c.co_filename:
        return None
    if c in VIPER:              # counted apart: machine code on the chip, its loops over the pads
        VCOUNT[0] += 1
        return vtracer
    COUNT[0] += 1
    return tracer


def counted(fn):
    COUNT[0] = 0
    VCOUNT[0] = 0
    sys.settrace(tracer)
    try:
        v = fn()
    finally:
        sys.settrace(None)
    return v, COUNT[0]


frames = []
reports = []
frame = fm.frame
report = fm.report


def traced_frame():
    v, n = counted(frame)
    frames.append([n, fm.wk_items, fm.wk_kills, fm.wk_rep, VCOUNT[0]])
    return v


def traced_report():
    v, n = counted(report)
    if v:
        reports.append(n)
    return v


fm.frame = traced_frame
fm.report = traced_report
r.run_ms(1500)
healthy = len(frames)
w = r.world
for o in job["faults"]:
    if "raw" in o:            # every pad of a mux frozen at one raw reading
        for p in range(16 * o["mux"], min(16 * o["mux"] + 16, w.hall.n)):
            w.hall.set_fault(p, o["raw"])
    else:
        r.op(dict(o, op="fault"))
r.run_ms(job["ms"])
print(json.dumps({"frames": frames, "healthy": healthy, "reports": reports,
                  "faults": [e for e in out.lines if e.get("ev") == "fault"],
                  "boots": sum(1 for e in out.lines if e.get("ev") == "boot"),
                  "limits": [FA.MAX_ITEMS, FA.MAX_KILLS], "n_mux": fm.n_mux,
                  "mux_bad": list(fm.mux_bad), "queued": [fm.nn, fm.kn, fm.rn]}))
'''


def run(job, tmp_path, front_end="hall"):
    if front_end == "shift":
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps({"front_end": "shift"}))
        job = dict(job, config=str(cfg))
    return run_target(TARGET, "cpython", job, name="fault_budget_target.py", tmp_path=tmp_path,
                      timeout=900, cwd=str(tmp_path))[0]


def hall_muxes():
    """The first-level muxes that have pads (gen_tables: mux = adc * BANKS + bank)."""
    out = set()
    for slot, g in enumerate(BT.SCAN_GRID):
        if g >= 0:
            adc = slot % BT.N_ADC
            bank = slot // (BT.CHANNELS * BT.N_ADC)
            out.add(adc * BT.BANKS + bank)
    return out


def check_bounded(res, front_end, reports=True):
    frames = res["frames"]
    assert len(frames) > res["healthy"] + 50, len(frames)
    items, kills = res["limits"]
    worst = max(f[0] for f in frames)
    assert worst <= MAX_FRAME_LINES[front_end], sorted(frames)[-5:]
    assert all(f[1] <= items and f[2] <= kills for f in frames)
    vworst = max(f[4] for f in frames)
    print(f"{front_end}: worst frame {worst} lines, {vworst} viper lines")
    assert vworst <= MAX_FRAME_VIPER_LINES[front_end], sorted(f[4] for f in frames)[-5:]
    assert not reports or res["reports"], res["reports"]
    assert max(res["reports"], default=0) <= MAX_REPORT_LINES, max(res["reports"])
    assert res["boots"] == 1                 # no watchdog reset (the simulator's watchdog)
    # everything found was reported: nothing left waiting at the end
    assert res["queued"] == [0, 0, 0], res["queued"]


def check_each_once(faults):
    keys = [(f["code"], tuple(f["pad"]) if f.get("pad") else None, f.get("mux")) for f in faults]
    assert len(keys) == len(set(keys)), [k for k, n in Counter(keys).items() if n > 1]


def mux_of_pad(col, row):
    g = row * BT.PAD_COLS + col
    for slot, h in enumerate(BT.SCAN_GRID):
        if h == g:
            return (slot % BT.N_ADC) * BT.BANKS + slot // (BT.CHANNELS * BT.N_ADC)
    return None


@pytest.mark.parametrize("case,mode,codes", [
    ("supply_dead", "stuck_low", {"pad_dead"}),        # raw 0: frozen at the bottom rail
    ("shorted_rail", "stuck_high", {"pad_stuck"}),     # raw 65535: frozen at the top rail
    ("frozen", None, {"pad_stuck"}),                   # raw 30000 everywhere: frozen mid-scale
])
def test_every_mux_failing_at_once_keeps_each_frame_bounded(case, mode, codes, tmp_path):
    muxes = sorted(hall_muxes())
    if mode is None:
        faults = [{"mux": m, "raw": 30000} for m in range(48)]
    else:
        faults = [{"mux": m, "mode": mode} for m in range(48)]
    res = run({"faults": faults, "ms": 9000}, tmp_path)
    check_bounded(res, "hall")
    f = res["faults"]
    check_each_once(f)
    assert all(e["what"] == "pads" and e["on"] for e in f)
    # every mux that has pads is reported dead; the pads reported alone (before most of their
    # mux was found) carry the code of what the pads read
    assert sorted(e["mux"] for e in f if e["code"] == "mux_dead") == muxes
    assert {e["code"] for e in f if e["code"] != "mux_dead"} <= codes
    # a pad of a mux already reported dead is not reported again
    dead_at = {e["mux"]: i for i, e in enumerate(f) if e["code"] == "mux_dead"}
    for i, e in enumerate(f):
        if e["code"] != "mux_dead":
            m = mux_of_pad(*e["pad"])
            assert dead_at[m] > i, (e, m)


def test_one_dead_mux_is_one_report_and_its_pads_skipped(tmp_path):
    res = run({"faults": [{"mux": 17, "mode": "dead"}], "ms": 4000}, tmp_path)
    check_bounded(res, "hall")
    f = res["faults"]
    # the mux, once; before it perhaps a few of its pads (those that reached the rail checks a
    # round earlier than the rest: the fault came mid-frame), never one after it
    assert [(e["code"], e.get("mux")) for e in f][-1] == ("mux_dead", 17)
    alone = f[:-1]
    assert len(alone) < 8 and all(e["code"] == "pad_dead" and mux_of_pad(*e["pad"]) == 17
                                  for e in alone), f
    check_each_once(f)
    assert res["mux_bad"][17] == 1 and sum(res["mux_bad"]) == 1


def test_every_presence_register_stuck_on(tmp_path):
    res = run({"faults": [{"mux": k, "mode": "stuck_high"} for k in range(BT.PRES_SR)], "ms": 3000},
              tmp_path, "shift")
    check_bounded(res, "shift")
    assert sorted((e["code"], e["mux"]) for e in res["faults"]) == [("mux_dead", k) for k in range(BT.PRES_SR)]


def test_the_count_can_fail(tmp_path, monkeypatch):
    """The line count sees unbounded work: the same monitor allowed every queued pad and every
    dead mux in one frame (MAX_ITEMS, MAX_KILLS raised) busts the bound when the supply dies."""
    slow = TARGET.replace("fm = r.sb.faults\n", "fm = r.sb.faults\nFA.MAX_ITEMS = 24\nFA.MAX_KILLS = 48\n")
    assert slow != TARGET
    monkeypatch.setattr(sys.modules[__name__], "TARGET", slow)
    res = run({"faults": [{"mux": m, "mode": "stuck_low"} for m in range(48)], "ms": 4000}, tmp_path)
    assert max(f[0] for f in res["frames"]) > MAX_FRAME_LINES["hall"]


VIPER_TARGET = r'''
import sys
import json
from array import array
from tables import board_table as BT
from sensing import hall_locate as LO
from sensing import faults as FA
from lcg import Rng

job = json.loads(sys.stdin.readline())
rng = Rng(job["seed"])
N = LO.N_GRID
bad = []


def near_ref(usable, ignore):
    out = []
    for h in range(N):
        if not usable[h]:
            continue
        c = h % BT.PAD_COLS
        r = h // BT.PAD_COLS
        hit = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr = r + dr
                cc = c + dc
                if 0 <= rr < BT.PAD_ROWS and 0 <= cc < BT.PAD_COLS and ignore[rr * BT.PAD_COLS + cc]:
                    hit = 1
        if hit and len(out) < LO.MAX_NEAR:
            out.append(h)
    return out


near = array('h', bytes(2 * LO.MAX_NEAR))
for t in range(job["trials"]):
    ignore = bytearray(N)
    k = rng.below(3)
    p = (1, 20, 300)[k]                  # few, many (past MAX_NEAR), most pads left out
    for g in range(N):
        if rng.below(1000) < p:
            ignore[g] = 1
    usable = bytearray(N)
    for g in range(N):
        usable[g] = 1 if BT.PAD_PRESENT[g] and not ignore[g] else 0
    n = LO.near_pads(usable, ignore, near, BT.PAD_COLS, BT.PAD_ROWS, LO.MAX_NEAR)
    if [near[i] for i in range(n)] != near_ref(usable, ignore):
        bad.append(["near", t])

# presence: _toggled (the flicker window) and _full (a register all covered) against plain code
NC = BT.PRES_COLS * BT.PRES_ROWS
for t in range(job["trials"]):
    tog = bytearray(NC)
    badc = bytearray(NC)
    for g in range(NC):
        r = rng.below(100)
        tog[g] = 15 if r == 0 else (14 if r == 1 else (6 if r < 4 else (5 if r < 6 else rng.below(5))))
        badc[g] = 1 if rng.below(50) == 0 else 0
    fl = array('h', bytes(16))
    fn = rng.below(9)
    hot = [g for g in range(NC) if tog[g] >= 6]
    for q in range(fn):
        fl[q] = hot[rng.below(len(hot))] if hot and rng.below(4) else NC - 1 - rng.below(3)
    look = rng.below(4) != 0
    exp_flag = []
    exp_new = []
    if look:
        for g in range(NC):
            if tog[g] >= 6 and not badc[g]:
                if g in [fl[q] for q in range(fn)]:
                    exp_flag.append(g)
                elif len(exp_new) < 8:
                    exp_new.append(g)
    out = array('h', bytes(16))
    fl_new = array('h', bytes(16))
    # shift_scan keeps 4 bits a cell, two cells a byte (up to 15)
    togp = bytearray((NC + 1) // 2)
    for g in range(NC):
        togp[g >> 1] |= tog[g] << ((g & 1) * 4)
    badb = bytearray((NC + 7) >> 3)       # the monitor's faulty pads: a bit a cell
    for g in range(NC):
        if badc[g]:
            badb[g >> 3] |= 1 << (g & 7)
    k = FA._toggled(NC, togp, 6, badb, fl, fn, fl_new, out, 1 if look else 0)
    got = ([out[i] for i in range(k >> 4)], [fl_new[i] for i in range(k & 15)])
    if got != (exp_flag, exp_new) or any(togp):
        bad.append(["toggled", t, got, [exp_flag, exp_new]])
    packed = bytearray(BT.PRES_ROWS * BT.PRES_SR)
    pmask = bytearray(BT.PRES_ROWS * BT.PRES_SR)
    for i in range(len(pmask)):
        pmask[i] = 0xFF if rng.below(10) else rng.below(256)
        packed[i] = pmask[i] if rng.below(400) else rng.below(256)
    # the scanner's last reading of every strobe (issue 12's four levels, lines of PRES_RPS
    # rows): row r's first level at (r // RPS) * line + (r % RPS) * SR; the other levels'
    # bytes random (the monitor must not read them)
    line = BT.PRES_LEVELS * BT.PRES_RPS * BT.PRES_SR
    last = bytearray((BT.PRES_ROWS // BT.PRES_RPS) * line)
    for i in range(len(last)):
        last[i] = rng.below(256)
    for r in range(BT.PRES_ROWS):
        for sr in range(BT.PRES_SR):
            last[(r // BT.PRES_RPS) * line + (r % BT.PRES_RPS) * BT.PRES_SR + sr] = packed[r * BT.PRES_SR + sr]
    full = bytearray(BT.PRES_SR)
    FA._full(BT.PRES_SR, BT.PRES_ROWS, pmask, last, full, BT.PRES_RPS, line)
    for sr in range(BT.PRES_SR):
        f = 1
        for r in range(BT.PRES_ROWS):
            i = r * BT.PRES_SR + sr
            if pmask[i] and packed[i] != pmask[i]:
                f = 0
        if full[sr] != f:
            bad.append(["full", t, sr])
print(json.dumps({"bad": bad}))
'''


def test_the_viper_helpers_match_the_plain_code(runtime, tmp_path):
    """locate.near_pads (what set_ignored did in plain Python) and the presence monitor's
    _toggled and _full, on random patterns (counts at 14 and 15, 4 bits a cell as shift_scan
    keeps them; cells at the grid's end)."""
    from conftest import run_script
    res = run_script(VIPER_TARGET, "fault_viper_target.py", runtime, {"seed": 5, "trials": 40}, tmp_path)
    assert res["bad"] == [], res["bad"][:3]


# Issue 13's "no fault-monitor frame over 5 ms, whatever fails": each failure the monitor handles,
# on each front end (bench/rp2040_profile.py --faults table times the same on the emulated chip,
# docs/performance.md). The pads are tests/test_faults.py's. Besides the bytecode lines, the
# lines of the @micropython.viper passes (machine code on the chip, plain Python here: their
# loops over the pads, counted apart in every test here) are held to a bound: a coarse guard
# against a pass over the whole grid that costs milliseconds again, not a measure of time (a
# viper line costs from about 0.1 us, a byte skipped, to 0.3 us on the chip). The presence
# monitor's flicker window went over the 4608 cells one by one (_toggled: 3.1 ms on the chip,
# the frame at a window's end 4.8 ms at rest, 5.75 ms flagging a pad; 20,800 such lines); a
# byte of counts at a time, 0 bytes passed over at once, it is about 9,300 (0.94 ms), 14,000
# with a register left out in the same frame. Hall: 22,000 at worst, every pad at a rail (the
# chip: 3.9 - 4.75 ms that frame, the viper checks 3.3 ms of it).
MAX_FRAME_VIPER_LINES = {"hall": 23000, "shift": 15000}


def calib_shifted():
    from test_unreadable import shifted_calibration, OFF_BY
    return [{"op": "flash", "write": "calib.bin", "hex": shifted_calibration(OFF_BY).hex()}]


HAND = {"hand": [0, -150], "ms": 4000}
CLOTH = [{"pad": [c, r], "mode": "stuck_high"} for r in range(20, 36) for c in range(10, 30)]
WHATEVER_FAILS = [
    # (front end, case, faults, codes that must be reported (at least), ms)
    ("hall", "none", [], set(), 3000),
    ("hall", "pad_stuck", [{"pad": [4, 20], "mode": "stuck_high"}], {"pad_stuck"}, 3000),
    ("hall", "pad_flicker", [{"pad": [14, 12], "mode": "flicker"}], {"pad_flicker"}, 6000),
    ("hall", "mux_frozen", [{"mux": 17, "raw": 30000}], {"mux_dead"}, 3000),
    ("hall", "mux_low", [{"mux": 17, "mode": "stuck_low"}], {"mux_dead"}, 3000),
    ("hall", "mux_high", [{"mux": 17, "mode": "stuck_high"}], {"mux_dead"}, 3000),
    ("hall", "unread", [], {"unreadable"}, 3000),
    ("hall", "hand", [HAND], set(), 3000),
    ("shift", "none", [], set(), 3000),
    ("shift", "pad_stuck", [{"pad": [10, 50], "mode": "stuck_high"}], {"pad_stuck"}, 3000),
    ("shift", "pad_flicker", [{"pad": [30, 20], "mode": "flicker"}], {"pad_flicker"}, 4000),
    ("shift", "reg_high", [{"mux": 5, "mode": "stuck_high"}], {"mux_dead"}, 3000),
    ("shift", "reg_low", [{"mux": 5, "mode": "stuck_low"}], set(), 3000),
    ("shift", "chain_low", [{"mux": k, "mode": "stuck_low"} for k in range(BT.PRES_SR)], set(), 3000),
    ("shift", "cloth", CLOTH, {"unreadable"}, 3000),
    ("shift", "hand", [HAND], {"hand"}, 3000),
]


@pytest.mark.parametrize("front_end,case,faults,codes,ms", WHATEVER_FAILS,
                         ids=[f"{w[0]}-{w[1]}" for w in WHATEVER_FAILS])
def test_every_frame_is_bounded_whatever_fails(front_end, case, faults, codes, ms, tmp_path):
    job = {"faults": faults, "ms": ms}
    if case == "unread":
        job["before"] = calib_shifted()
    res = run(job, tmp_path, front_end)
    frames = res["frames"]
    print(case, front_end, "worst lines", max(f[0] for f in frames), "worst viper lines",
          max(f[4] for f in frames))
    check_bounded(res, front_end, reports=bool(codes))
    assert max(f[4] for f in frames) <= MAX_FRAME_VIPER_LINES[front_end], sorted(f[4] for f in frames)[-5:]
    got = {e["code"] for e in res["faults"]}
    assert codes <= got, (codes, res["faults"])
    check_each_once([e for e in res["faults"] if e["code"] not in ("hand", "unreadable")])


OLD_TOGGLED = r'''
def _toggled(n, toggles, lim, bad, fl, fl_n, fl_new, out, look):
    # the window's pass as it was: cell by cell over the whole grid
    k = 0
    m = 0
    g = 0
    while g < n:
        if look and ((int(toggles[g >> 1]) >> ((g & 1) << 2)) & 15) >= lim and int(bad[g]) == 0:
            was = 0
            q = 0
            while q < fl_n:
                if int(fl[q]) == g:
                    was = 1
                    break
                q += 1
            if was:
                out[k] = g
                k += 1
            elif m < 8:
                fl_new[m] = g
                m += 1
        if (g & 1) or g == n - 1:
            toggles[g >> 1] = 0
        g += 1
    return (k << 4) | m
'''


def test_the_viper_count_can_fail(tmp_path, monkeypatch):
    """The viper lines see a pass that is bounded but dear: the presence flicker window's pass
    cell by cell, as it was (3.1 ms on the chip), busts the bound on a healthy board."""
    patch = ("fm = r.sb.faults\nexec(compile(%r, FA.__file__, 'exec'), FA.__dict__)\n"
             "VIPER.add(FA._toggled.__code__)\n" % OLD_TOGGLED)
    slow = TARGET.replace("fm = r.sb.faults\n", patch)
    assert slow != TARGET
    monkeypatch.setattr(sys.modules[__name__], "TARGET", slow)
    res = run({"faults": [], "ms": 2000}, tmp_path, "shift")
    print("the old window pass: worst viper lines", max(f[4] for f in res["frames"]))
    assert max(f[4] for f in res["frames"]) > MAX_FRAME_VIPER_LINES["shift"]


def test_two_registers_a_frame_bust_the_bound(tmp_path, monkeypatch):
    """The presence bound sees the frame that was over 5 ms on the chip: the chain stuck on with
    two 74HC165s left out a frame (as before issue 13's chip table) busts it."""
    slow = TARGET.replace("fm = r.sb.faults\n", "fm = r.sb.faults\nFA._KILLS_SHIFT = 2\n")
    assert slow != TARGET
    monkeypatch.setattr(sys.modules[__name__], "TARGET", slow)
    res = run({"faults": [{"mux": k, "mode": "stuck_high"} for k in range(BT.PRES_SR)], "ms": 2000},
              tmp_path, "shift")
    assert max(f[2] for f in res["frames"]) == 2
    assert max(f[0] for f in res["frames"]) > MAX_FRAME_LINES["shift"]
