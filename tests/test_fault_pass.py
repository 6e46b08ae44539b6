"""The fault monitor's pass over the hall pads against the plain-Python one, on random grids,
under both runtimes.

firmware/sensing/faults.py checks a quarter of the hall pads per frame (at a rail, frozen, a jump with its
neighbours quiet over the same 4 frames) and the muxes' spread in two @micropython.viper
functions (`_pads`, `_muxes`); `_flag`, `_kill_mux` and the reports stay Python. Here a
reference monitor runs the plain code the pass had before (`Ref` below: `_hall`, `_quiet`,
`_same_mux` as they were) beside the firmware's, both fed the same seeded random grids: pads with
noise, pads frozen, at or near either rail, jumping alone (at and around the thresholds, the
neighbours' change at and around 1/32 of the jump), chips put down and lifted over groups of
pads at any frame (so a neighbour's change found at its check before last, `dlast`, decides),
a mux reading one sensor, and storms of more faulty pads in one frame than MAX_NEW. After every
frame every array of both monitors, the pads and muxes flagged, the reports and the status text
must be the same; the firmware's frame() runs with the heap locked under MicroPython. The two
runtimes must agree to the last bit, and a reference changed in one detail (dlast left out,
the jump threshold off by one) must be told apart.
"""
from pathlib import Path

import pytest

from conftest import run_script_once

ROOT = Path(__file__).resolve().parents[1]
MICROPYTHON = ROOT / ".venv" / "bin" / "micropython"

TARGET = r'''
import sys
import json
from array import array
import micropython
from tables import board_table as BT
from sensing import faults as FA
import time

if not hasattr(time, "ticks_ms"):        # CPython: _chatter's clock (the beams are off here)
    time.ticks_ms = lambda: 0
    time.ticks_diff = lambda a, b: a - b

job = json.loads(sys.stdin.readline())
MUTANT = job.get("mutant", "")
COLS = BT.PAD_COLS
N = BT.PAD_COLS * BT.PAD_ROWS


from lcg import Rng


def mix(h, v):
    return (h * 31 + v + 7) & 0xFFFFFF


class Ev:
    """The event writer: each event hashed, nothing kept (allocation-free)."""
    def __init__(self):
        self.h = 0
        self.n = 0

    def _s(self, s):
        if s is not None:
            for i in range(len(s)):
                self.h = mix(self.h, s[i])

    def begin(self, tag):
        self.n += 1
        self._s(tag)

    def str_(self, k, v):
        self._s(k)
        self._s(v)

    def int_(self, k, v):
        self._s(k)
        self.h = mix(self.h, v & 0xFFFF)

    def bool_(self, k, v):
        self._s(k)
        self.h = mix(self.h, 1 if v else 0)

    def null_(self, k):
        self._s(k)
        self.h = mix(self.h, 99)

    def arr(self, k):
        self._s(k)

    def close_arr(self):
        self.h = mix(self.h, 98)

    def end(self):
        self.h = mix(self.h, 97)


class Loc:
    """The locator's side of set_ignored: its two flags per pad (faults.py writes a dead mux's
    straight into them, then calls set_ignored once)."""
    def __init__(self):
        self.n = 0
        self.unread = 0             # frames it could not read (faults.py: the unreadable fault)
        self.ignore = bytearray(N)
        self.usable = bytearray(BT.PAD_PRESENT)

    def set_ignored(self, g, v):
        self.ignore[g] = 1 if v else 0
        self.usable[g] = 1 if BT.PAD_PRESENT[g] and not v else 0


class Tr:
    def at_rest(self):
        return False


class Fast:
    off = 0xFFFF            # both cup beams off: _chatter looks at nothing
    count = array('i', (0, 0, 0, 0, 0))     # no edges (faults._chatter_ends reads them)


class Scan:
    def __init__(self):
        self.grid = array('h', bytes(2 * N))
        self.baseline = array('H', bytes(2 * N))


class Ref(FA.FaultMonitor):
    """The plain-Python pass (firmware/sensing/faults.py before the viper one)."""
    RAIL = 24000
    RAIL_CHECKS = 4
    FROZEN_CHECKS = 3
    MOVED = 4000
    JUMP = 3000 + (1 if MUTANT == "jump" else 0)
    QUIET = 150
    FLICKER_JUMPS = 3
    SAME_SPREAD = 100
    SAME_CHECKS = 6

    def _init_hall(self):
        super()._init_hall()
        # mux m's pads: mux_pad[16 m + channel] (-1: no pad), as the firmware kept them before
        # issue 13's heap cut (it reads them from the scan map now)
        self.mux_pad = array('h', b"\xff\xff" * (self.n_mux * BT.CHANNELS))
        for bank in range(BT.BANKS):
            for ch in range(BT.CHANNELS):
                for adc in range(BT.N_ADC):
                    g = BT.SCAN_GRID[(bank * BT.CHANNELS + ch) * BT.N_ADC + adc]
                    if g >= 0:
                        self.mux_pad[(adc * BT.BANKS + bank) * BT.CHANNELS + ch] = g

    def _hall(self):
        grid = self.scan.grid
        base = self.scan.baseline
        prev = self.prev
        dlast = self.dlast
        bad = self.bad
        ph = self.frames & 3
        rail = self.RAIL
        present = BT.PAD_PRESENT
        for g in range(ph, self.n_grid, 4):
            if bad[g] or not present[g]:
                continue
            v = grid[g]
            p = prev[g]
            prev[g] = v
            d = v - p
            a = (d if d > 0 else -d) >> 5
            dlast[g] = a if a < 255 else 255
            if v >= rail or v <= -rail:
                if self.rail[g] < 255:
                    self.rail[g] += 1
                if self.rail[g] >= self.RAIL_CHECKS:
                    self._flag(g, FA.C_STUCK if v > 0 else FA.C_DEAD)
                    continue
            else:
                self.rail[g] = 0
            if v == p:
                # frozen: only while a neighbour moved (a 12-bit ADC reads a quiet pad the same)
                if self._neighbour_moved(g):
                    if self.same[g] < 255:
                        self.same[g] += 1
                    if self.same[g] >= self.FROZEN_CHECKS:
                        self._flag(g, FA.C_STUCK)
                        continue
            else:
                self.same[g] = 0
            if d > self.JUMP or d < -self.JUMP:
                if self._quiet(g, d) and self.flick[g] < 250:
                    self.flick[g] += 2
                    if self.flick[g] >= 2 * self.FLICKER_JUMPS:
                        self._flag(g, FA.C_FLICKER)
                        continue
        if (self.frames & 63) == 0:
            for g in range(self.n_grid):
                if self.flick[g]:
                    self.flick[g] -= 1
        if ph == 0:
            self._same_mux(grid, base)
        self._numb(grid)
        if ph == 3:
            self._flush()

    def _neighbour_moved(self, g):
        if MUTANT == "frozen":
            return True         # the old rule: any repeated reading counts
        grid = self.scan.grid
        c = g % BT.PAD_COLS
        r = g // BT.PAD_COLS
        for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            cc = c + dc
            rr = r + dr
            if 0 <= cc < BT.PAD_COLS and 0 <= rr < BT.PAD_ROWS:
                h = rr * BT.PAD_COLS + cc
                if BT.PAD_PRESENT[h] and not self.bad[h]:
                    d = grid[h] - self.prev[h]
                    if d >= self.MOVED or d <= -self.MOVED:
                        return True
        return False

    def _quiet(self, g, d):
        grid = self.scan.grid
        dlast = self.dlast
        c = g % BT.PAD_COLS
        r = g // BT.PAD_COLS
        q = (d if d > 0 else -d) >> 5
        if q < self.QUIET:
            q = self.QUIET
        for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            cc = c + dc
            rr = r + dr
            if 0 <= cc < BT.PAD_COLS and 0 <= rr < BT.PAD_ROWS:
                h = rr * BT.PAD_COLS + cc
                if BT.PAD_PRESENT[h] and not self.bad[h]:
                    d = grid[h] - self.prev[h]
                    if d > q or d < -q or (MUTANT != "dlast" and dlast[h] << 5 > q):
                        return False
        return True

    def _same_mux(self, grid, base):
        for m in range(self.n_mux):
            if self.mux_bad[m]:
                continue
            lo = 0x3FFFFFFF
            hi = -0x3FFFFFFF
            k = 0
            for c in range(BT.CHANNELS):
                g = self.mux_pad[m * BT.CHANNELS + c]
                if g < 0:
                    continue
                k += 1
                b = base[g]
                v = grid[g] + b
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            if k >= 4 and hi - lo < self.SAME_SPREAD:
                self.mux_same[m] += 1
                if self.mux_same[m] >= self.SAME_CHECKS:
                    self._kill_mux(m)
            else:
                self.mux_same[m] = 0


def make(cls, scan):
    return cls(scan, Loc(), Fast(), Tr(), Ev(), 0)


NAMES = ("prev", "dlast", "same", "rail", "flick", "bad", "mux_same", "mux_bad", "mux_nbad", "kq", "new",
         "newc")


def differ(a, b):
    """The first thing two monitors disagree on, or None."""
    for name in NAMES:
        x = getattr(a, name)
        y = getattr(b, name)
        for i in range(len(x)):
            if x[i] != y[i]:
                return [name, i, x[i], y[i]]
    for name in ("nn", "nh", "nr", "kn", "kh", "rn", "rh", "count", "frames"):
        if getattr(a, name) != getattr(b, name):
            return [name, getattr(a, name), getattr(b, name)]
    if a.ev.h != b.ev.h or a.ev.n != b.ev.n:
        return ["events", a.ev.n, b.ev.n]
    for g in range(N):
        if a.loc.ignore[g] != b.loc.ignore[g] or a.loc.usable[g] != b.loc.usable[g]:
            return ["ignored", g]
    if (a.text is None) != (b.text is None) or (a.text is not None and bytes(a.text) != bytes(b.text)):
        return ["text"]
    return None


def state_hash(m):
    h = 0
    for name in NAMES:
        x = getattr(m, name)
        for i in range(len(x)):
            h = mix(h, x[i] & 0xFFFF)
    return mix(mix(h, m.ev.h), m.count)


def clamp(v):
    return -32767 if v < -32767 else (32767 if v > 32767 else v)


# pad kinds
NOISY, FROZEN, RAIL_HI, RAIL_LO, NEAR_RAIL, JUMPY = 0, 1, 2, 3, 4, 5


def run(seed, frames):
    rng = Rng(seed)
    scan = Scan()
    fw = make(FA.FaultMonitor, scan)
    ref = make(Ref, scan)
    level = array('i', bytes(4 * N))
    kind = bytearray(N)
    blob = array('i', bytes(4 * N))      # chips put down: added to the pads under them
    for g in range(N):
        scan.baseline[g] = 32768 - 3000 + rng.below(6000)
        level[g] = rng.below(400) - 200
        r = rng.below(200)
        kind[g] = (FROZEN if r < 2 else RAIL_HI if r < 4 else RAIL_LO if r < 6 else
                   NEAR_RAIL if r < 10 else JUMPY if r < 22 else NOISY)
    mux_one = rng.below(fw.n_mux)         # a mux that reads one sensor for a while
    mux_two = (mux_one + 1 + rng.below(fw.n_mux - 1)) % fw.n_mux    # about 100 LSB apart
    counts = [0, 0, 0, 0, 0]              # flagged: stuck, dead, flicker, mux; frames compared
    for f in range(frames):
        # chips: put one down (a blob over 3 x 3 pads) or lift one, now and then
        if rng.below(6) == 0:
            c = rng.below(COLS)
            r = rng.below(BT.PAD_ROWS)
            s = rng.below(2) * 2 - 1
            amp = 3000 + rng.below(12000)
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    cc = c + dc
                    rr = r + dr
                    if 0 <= cc < COLS and 0 <= rr < BT.PAD_ROWS:
                        a = amp if dr == 0 and dc == 0 else amp * (30 + rng.below(60)) // 1000
                        blob[rr * COLS + cc] += s * a
        storm = f == frames // 2          # many pads at a rail at once: more than MAX_NEW
        for g in range(N):
            k = kind[g]
            v = level[g] + blob[g]
            if k == FROZEN:
                v = level[g]
            elif k == RAIL_HI:
                v = 24000 + rng.below(9000) if rng.below(8) else 23999
            elif k == RAIL_LO:
                v = -24000 - rng.below(9000) if rng.below(8) else -23999
            elif k == NEAR_RAIL:
                v = (24000 - 2 + rng.below(4)) * (1 if g & 1 else -1)
            elif k == JUMPY:
                r = rng.below(10)
                if r == 0:
                    v += (rng.below(2) * 2 - 1) * (2998 + rng.below(5))
                elif r == 1:
                    v += (rng.below(2) * 2 - 1) * (3000 + rng.below(20000))
                else:
                    v += rng.below(9) - 4
            else:
                r = rng.below(40)
                if r == 0:                # a neighbour moving by about 1/32 of a jump
                    v += (rng.below(2) * 2 - 1) * (90 + rng.below(200))
                else:
                    v += rng.below(61) - 30
            if storm and g % 7 == 3:
                v = 30000
            m = fw.mux_of[g]
            if m == mux_one and 40 <= f < 40 + 4 * 8:
                v = 40000 + rng.below(3 if f < 40 + 4 * 6 else 300) - scan.baseline[g]
            elif m == mux_two:
                v = 40000 + rng.below(104) - scan.baseline[g]
            scan.grid[g] = clamp(v)
        if storm:
            for g in range(N):
                if g % 7 == 3:
                    kind[g] = RAIL_HI
        micropython.heap_lock()
        try:
            fw.frame()
            while fw.report():
                pass
        finally:
            micropython.heap_unlock()
        ref.frame()
        while ref.report():
            pass
        d = differ(fw, ref)
        if d is not None:
            return {"bad": [f] + d, "counts": counts}
        counts[4] += 1
    for g in range(N):
        b = fw.bad[g]
        if b == FA.C_STUCK + 1:
            counts[0] += 1
        elif b == FA.C_DEAD + 1:
            counts[1] += 1
        elif b == FA.C_FLICKER + 1:
            counts[2] += 1
    for m in range(fw.n_mux):
        counts[3] += fw.mux_bad[m]
    return {"bad": [], "counts": counts, "hash": state_hash(fw), "events": fw.ev.n}


out = []
for s in range(job["seeds"]):
    out.append(run(job["seed"] + s, job["frames"]))
print(json.dumps(out))
'''


def run(runtime, job, tmp_path):
    return run_script_once(TARGET, "fault_pass_target.py", runtime, job, tmp_path, timeout=600)


JOB = {"seed": 11, "seeds": 3, "frames": 260}


# (both runtimes' tests one xdist group: [micropython] compares its run with [cpython]'s, made once)
@pytest.mark.xdist_group("fault_pass_runs")
def test_the_viper_pass_matches_the_plain_one(runtime, tmp_path):
    res = run(runtime, JOB, tmp_path)
    for r in res:
        assert r["bad"] == [], r["bad"]
        stuck, dead, flicker, muxes, frames = r["counts"]
        assert frames == JOB["frames"]
        # every kind of fault was found along the way, so every branch was compared
        assert stuck > 0 and dead > 0 and flicker > 0 and muxes > 0, r["counts"]
    if runtime == "micropython":
        other = run("cpython", JOB, tmp_path)
        assert [r["hash"] for r in other] == [r["hash"] for r in res]


@pytest.mark.parametrize("mutant", ["dlast", "jump", "frozen"])
def test_the_comparison_can_fail(mutant, tmp_path):
    """A reference that leaves the neighbours' dlast out, flickers from 3001 LSB, or takes a
    pad for frozen without a neighbour moving, differs."""
    runtime = "micropython" if MICROPYTHON.exists() else "cpython"
    res = run(runtime, dict(JOB, mutant=mutant), tmp_path)
    assert any(r["bad"] for r in res), res
