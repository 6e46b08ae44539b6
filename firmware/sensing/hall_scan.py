# The hall pads: linear hall sensors under the playing surface, read through two levels of
# 16:1 multiplexers into 3 ADC pins (docs/sensing.md).
#
#   MUX_CHANNEL_SELECT  4 pins shared by every first-level mux: the channel (pad) within a bank
#   MUX_BANK_SELECT     4 pins of the second-level muxes: which first-level mux (bank) goes through
#   MUX_ADC             one second-level mux per ADC pin
#
# Scan slot (bank * CHANNELS + channel) * N_ADC + adc reads grid index SCAN_GRID[slot] (-1: none).
# step() scans ONE bank: its 16 channels in Gray-code order (forwards in even banks, backwards
# in odd ones), with 3 ADC reads per channel; banks follow in Gray-code order too. So exactly one
# select pin changes between one channel read and the next, across banks and frames as well.
# After 16 steps a frame is complete.
#
# grid[g] = raw reading - baseline[g], signed, per grid index (PAD_COLS * PAD_ROWS; absent pads
# stay 0). The baseline is ADC_ZERO until calibrate_empty() or set_baseline() says otherwise.
#
# Each pad's reading is smoothed (SMOOTH) while it holds still, and follows at once when it jumps.
# `jumps` counts those jumps (wrapping at 2**30), and the smoothed readings that drifted more
# than `drift` from the reading the locator last fitted (mark(); issue 12: a chip creeping to
# rest changes its pads a little each frame and never jumps one): the locator fits a frame
# again only when something moved (locate.Locator.find; docs/performance.md).
#
# How a step runs (docs/performance.md, "What would fix the rest", 3): two @micropython.viper
# functions. read_bank() moves the channel pins and reads the bank's ADC values into `raw` (slot
# order: channel code * 3 + ADC) through the same Pin.value() and ADC.read_u16() calls as
# Python would make, in the same order; settle() does the baseline, clamp, smoothing and jump
# count of the bank's 48 pads over the arrays. Which pin moves before each read, where its
# reading goes and which ADCs have a pad there are constant tables (SEQ_*, per Gray position
# of the bank and read; tools/gen_tables.scan_sequence writes them into tables/board_table.py). In plain Python the loop around the calls cost more than the calls
# (about 3 ms a step on the Pico); in viper it is machine code. Under CPython both run as plain
# Python (ptr8/16/32 are the arrays themselves). tests/test_scan_step.py checks the step against
# a plain reference on random readings under both runtimes.
#
# On the RP2040 itself (HW: the rp2 port with its own machine module) a step scans PER_STEP_HW = 4
# banks in one viper call, scan_rp2(): the select pins through SIO's GPIO_OUT_SET / _CLR and each
# conversion through the ADC's CS and RESULT registers (the same pins moved in the same order, the
# same 12-bit reading scaled as read_u16() scales it), each reading through settle()'s arithmetic
# while the next one converts (written out there: tests/test_rp2040.py holds it to settle() on the
# chip, exactly). Python calls are the costly
# part there (about 30 us each on the emulated chip), so the step's own Python and the loop
# turn's (app.step) are paid 4 times a frame instead of 16. Everywhere else (the unix port, the
# simulator, CPython, the chip running the simulator's stand-in) a step is one bank as above.
# tests/test_rp2040.py runs both paths on the chip over the same table.
#
# RAM: grid 2 B + baseline 2 B + fitted reference 2 B + running average 4 B per grid cell (722
# cells: 7.2 KB); raw 96 B,
# the SEQ_* tables constants (flash, when frozen).
# Allocation-free after construction, except calibrate_empty() (boot only).
import sys
from array import array
import machine
import micropython
from micropython import const

from tables import pins
from tables.board_table import (PAD_COLS, PAD_ROWS, N_ADC, BANKS, CHANNELS, SCAN_GRID, ADC_ZERO,
                         PAD_PRESENT, NOISE_LSB, SEQ_PIN, SEQ_SLOT, SEQ_MASK)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: read_bank() and settle() run as plain Python
        return x

    def ptr16(x):
        return x

    def ptr32(x):
        return x

N_GRID = PAD_COLS * PAD_ROWS
_SLOTS = const(48)          # pads per bank: CHANNELS x N_ADC (checked in __init__)
# acc[g] holds the smoothed reading x16 plus ACC_BIAS, so that it is never negative: a viper
# load of a 32-bit word is sign-extended on the RP2040 but not on a 64-bit host (the unix port
# the tests run), and a positive word reads the same on both. |reading x16| < 2**19.
ACC_BIAS = const(1 << 20)
# ref[g] holds the reading the locator last fitted + REF_BIAS (0 .. 65534 in an 'H' array)
REF_BIAS = const(0x8000)

# The 4-bit Gray code: position i -> code, and which bit flips to reach position i from i - 1
# (cyclically: from 15 back to 0 flips bit 3).
# (Literals, not bytes((...)): a constant stays in flash when frozen, a built one takes heap.)
GRAY = b'\x00\x01\x03\x02\x06\x07\x05\x04\x0c\x0d\x0f\x0e\x0a\x0b\x09\x08'
FLIP = b'\x03\x00\x01\x00\x02\x00\x01\x00\x03\x00\x01\x00\x02\x00\x01\x00'
NO_PIN = const(255)     # SEQ_PIN: no select pin moves before the read


@micropython.viper
def read_bank(t0: int, chp, r0, r1, r2, raw: ptr16):
    """A bank's 16 channels into raw (by slot): before each read the one channel pin that moves
    (chp: the channel pins' Pin objects), then each ADC with a pad there (r0..r2: their bound
    read_u16). t0 = the bank's Gray position * 16 (the SEQ_* tables). The calls are the same
    Pin.value() and ADC.read_u16() as from Python; only the loop around them is machine code."""
    sp = ptr8(SEQ_PIN)
    ss = ptr8(SEQ_SLOT)
    sm = ptr8(SEQ_MASK)
    t = t0
    end = t0 + 16
    while t < end:
        f = int(sp[t])
        if f != NO_PIN:
            chp[f >> 1].value(f & 1)
        i = int(ss[t])
        m = int(sm[t])
        if m & 1:
            raw[i] = int(r0())
        if m & 2:
            raw[i + 1] = int(r1())
        if m & 4:
            raw[i + 2] = int(r2())
        t += 1


# The RP2040's own registers (RP2040 datasheet 2.3.1.7, 4.9.6): the chip path of a bank's reads
_SIO_BASE = const(0xD0000000)   # words: GPIO_OUT_SET [5], GPIO_OUT_CLR [6]
_ADC_BASE = const(0x4004C000)   # words: CS [0], RESULT [1]
_CS_START = const(0x5)          # CS.EN | CS.START_ONCE (| AINSEL << 12)
_CS_READY = const(0x100)


@micropython.viper
def scan_rp2(pos: int, bank: int, n: int, hwp: ptr8, raw, base, acc, grid, jump: int, sh: int,
             ref, drift: int) -> int:
    """Up to n banks (to the end of the frame) on the RP2040, through its registers, from Gray
    position pos with the bank pins at code bank. Per bank: the bank pin that moves, then
    read_bank()'s reads without a runtime call: each channel pin through SIO's GPIO_OUT_SET / _CLR
    (hwp: the channel pins' GPIO numbers [0:4], the bank pins' [4:8], the ADCs' inputs [8:11]),
    each conversion started in the ADC's CS (AINSEL: the input) and waited for, RESULT scaled to
    16 bits as read_u16() scales it (12 bits: r << 4 | r >> 8) into raw (by slot), and each
    reading through settle()'s arithmetic (its baseline, clamp, smoothing, jump and drift count:
    the same operations, written out here) while the next conversion runs: a conversion takes 2
    us, settle's work on a pad about as long, and settle() called per bank cost its arguments'
    conversion besides (issue 13: a frame's reads 4.9 -> 3.6 ms; docs/performance.md). Each pad
    is one slot of the bank (SCAN_GRID), read once, so the order the pads are settled in changes
    nothing. Returns the pads counted summed << 8 | the bank code << 4 | the next position (no
    array for them: heap). One call a loop turn: the Python around a bank's calls cost as much
    as the reads (docs/performance.md)."""
    gray = ptr8(GRAY)
    flip = ptr8(FLIP)
    sp = ptr8(SEQ_PIN)
    ss = ptr8(SEQ_SLOT)
    sm = ptr8(SEQ_MASK)
    sg = ptr16(SCAN_GRID)
    sio = ptr32(_SIO_BASE)
    adc = ptr32(_ADC_BASE)
    rw = ptr16(raw)
    bs = ptr16(base)
    ac = ptr32(acc)
    gd = ptr16(grid)
    rf = ptr16(ref)
    c0 = _CS_START | (int(hwp[8]) << 12)
    c1 = _CS_START | (int(hwp[9]) << 12)
    c2 = _CS_START | (int(hwp[10]) << 12)
    nj = 0
    q = -1                  # the reading settle()'s arithmetic is owed: its SCAN_GRID index ...
    qv = 0                  # ... and its value (-1: none)
    while n > 0:
        code = int(gray[pos])
        if code != bank:
            b = int(flip[pos])
            bank ^= 1 << b
            if (bank >> b) & 1:
                sio[5] = 1 << int(hwp[4 + b])
            else:
                sio[6] = 1 << int(hwp[4 + b])
        # (a real board: the muxes settle here, see HallScanner.step)
        row = code * _SLOTS
        t = pos << 4
        end = t + 16
        while t < end:
            f = int(sp[t])
            if f != NO_PIN:
                if f & 1:
                    sio[5] = 1 << int(hwp[f >> 1])
                else:
                    sio[6] = 1 << int(hwp[f >> 1])
            i = int(ss[t])
            m = int(sm[t])
            k = 0
            while k < 3:
                if (m >> k) & 1:
                    if k == 0:
                        adc[0] = c0
                    elif k == 1:
                        adc[0] = c1
                    else:
                        adc[0] = c2
                    if q >= 0:
                        # the reading before, while this one converts: settle()'s pad (every
                        # slot read has a pad: SEQ_MASK is made from SCAN_GRID)
                        g = int(sg[q])
                        v = qv - int(bs[g])
                        if v > 32767:
                            v = 32767
                        elif v < -32767:
                            v = -32767
                        v = v << 4
                        a = int(ac[g]) - ACC_BIAS
                        d = v - a
                        if d > 0 - jump and d < jump:
                            v = a + (d >> sh)
                            e = ((v + 8) >> 4) + REF_BIAS - int(rf[g])
                            if e > drift or e < 0 - drift:
                                nj += 1
                        else:
                            nj += 1
                        ac[g] = v + ACC_BIAS
                        gd[g] = (v + 8) >> 4
                    while (adc[0] & _CS_READY) == 0:
                        pass
                    v = adc[1]
                    v = ((v << 4) | (v >> 8)) & 0xFFFF     # (as raw holds it)
                    rw[i + k] = v
                    q = row + i + k
                    qv = v
                k += 1
            t += 1
        pos = (pos + 1) & 15
        n -= 1
        if pos == 0:
            break
    if q >= 0:
        # the last reading (the same arithmetic as above)
        g = int(sg[q])
        v = qv - int(bs[g])
        if v > 32767:
            v = 32767
        elif v < -32767:
            v = -32767
        v = v << 4
        a = int(ac[g]) - ACC_BIAS
        d = v - a
        if d > 0 - jump and d < jump:
            v = a + (d >> sh)
            e = ((v + 8) >> 4) + REF_BIAS - int(rf[g])
            if e > drift or e < 0 - drift:
                nj += 1
        else:
            nj += 1
        ac[g] = v + ACC_BIAS
        gd[g] = (v + 8) >> 4
    return (nj << 8) | (bank << 4) | pos


@micropython.viper
def settle(raw: ptr16, row: int, base: ptr16, acc: ptr32, grid: ptr16, jump: int, sh: int,
           ref: ptr16, drift: int) -> int:
    """One bank's readings raw[s] (slot row + s of SCAN_GRID) into grid and acc: less the
    baseline, clamped to +-32767, smoothed by 2**-sh while within `jump` (x16) of the average,
    taken at once otherwise. Returns how many pads jumped, or drifted more than `drift` from
    ref (the reading the locator last fitted, + REF_BIAS) while smoothed."""
    sg = ptr16(SCAN_GRID)
    nj = 0
    s = 0
    while s < _SLOTS:
        g = int(sg[row + s])
        if (g & 0x8000) == 0:             # -1 (no pad): 0xFFFF through a ptr16
            v = int(raw[s]) - int(base[g])
            if v > 32767:
                v = 32767
            elif v < -32767:
                v = -32767
            v = v << 4
            a = int(acc[g]) - ACC_BIAS
            d = v - a
            if d > 0 - jump and d < jump:
                v = a + (d >> sh)
                r = (v + 8) >> 4
                e = r + REF_BIAS - int(ref[g])
                if e > drift or e < 0 - drift:
                    nj += 1
            else:
                nj += 1
                r = (v + 8) >> 4
            acc[g] = v + ACC_BIAS
            grid[g] = r
        s += 1
    return nj


@micropython.viper
def take(grid: ptr16, usable: ptr8, res: ptr32, cand: ptr16, cused: ptr8, n: int, t: int, rail: int,
         most: int) -> int:
    """A frame into the locator's residual (locate.Locator._take's pass over every pad, in
    machine code: in plain Python its 722 pads cost about 50 ms a fit on the RP2040): res[g] =
    grid[g] on a usable pad, 0 elsewhere and at a rail (|reading| >= rail: a fault, no magnet);
    each pad beyond +-t listed in cand (its cused cleared), `most` at most. Returns how many."""
    nc = 0
    g = 0
    while g < n:
        v = 0
        if usable[g]:
            v = ((int(grid[g]) + 0x8000) & 0xFFFF) - 0x8000    # signed (a viper ptr16 loads unsigned)
            if v >= rail or v <= 0 - rail:
                v = 0
        res[g] = v
        if (v > t or v < 0 - t) and nc < most:
            cand[nc] = g
            cused[nc] = 0
            nc += 1
        g += 1
    return nc


@micropython.viper
def mark(grid: ptr16, ref: ptr16, n: int):
    """ref[g] = grid[g] + REF_BIAS for every cell: the readings the locator fits now."""
    g = 0
    while g < n:
        ref[g] = (int(grid[g]) + REF_BIAS) & 0xFFFF
        g += 1


_ADC_PIN0 = const(26)           # GPIO 26..29: ADC inputs 0..3
PER_STEP_HW = const(4)          # banks a step() on the register path
# the register path where the firmware runs on the RP2040 with its own machine module (the
# tests' reference scripts run it on the chip behind the simulator's stand-in, which has no
# mem32); read_bank() everywhere else
HW = sys.platform == "rp2" and hasattr(machine, "mem32")


class HallScanner:
    SMOOTH = 2     # 2**-SMOOTH: the weight of a new reading in a pad's running average (0: off)
    def __init__(self):
        if CHANNELS != 16 or BANKS != 16 or CHANNELS * N_ADC != _SLOTS:
            raise ValueError("hall_scan: 16 x 16 multiplexers, 3 ADCs expected (Gray tables)")
        Pin = machine.Pin
        self.ch_pins = [Pin(p, Pin.OUT, value=0) for p in pins.MUX_CHANNEL_SELECT]
        self.bank_pins = [Pin(p, Pin.OUT, value=0) for p in pins.MUX_BANK_SELECT]
        self.adcs = [machine.ADC(Pin(p)) for p in pins.MUX_ADC]
        a = self.adcs
        self.rd0 = a[0].read_u16      # bound once here: making one in step() would allocate
        self.rd1 = a[1].read_u16
        self.rd2 = a[2].read_u16
        # on the RP2040 itself (not the unix port, nor the chip running the simulator's machine
        # stand-in in the tests' reference scripts) the reads go through the registers
        self.hw = HW
        # scan_rp2's pins: channel select GPIOs, bank select GPIOs, ADC inputs (11 bytes)
        self.hwpins = bytes(tuple(pins.MUX_CHANNEL_SELECT) + tuple(pins.MUX_BANK_SELECT)
                            + tuple(p - _ADC_PIN0 for p in pins.MUX_ADC))
        self.raw = array('H', bytes(2 * _SLOTS))     # the bank's readings, by slot
        self.grid = array('h', bytes(2 * N_GRID))
        self.baseline = array('H', (ADC_ZERO for _ in range(N_GRID)))
        self.acc = array('i', (ACC_BIAS for _ in range(N_GRID)))   # smoothed x16, + ACC_BIAS
        self.jump = (5 * NOISE_LSB) << 4
        # the readings the locator last fitted (+ REF_BIAS; mark()), and how far a smoothed
        # reading may drift from its one before it counts with the jumps: a chip creeping
        # never jumps a pad from one frame to the next, but the sum of its frames' steps
        # shows here (issue 12). 3 x NOISE_LSB is about 8 sigma of the smoothed noise.
        self.ref = array('H', (REF_BIAS for _ in range(N_GRID)))
        self.drift = 3 * NOISE_LSB
        self.pos = 0          # Gray position of the bank scanned next (0..15)
        self.bank = 0         # the bank code the bank pins select now
        self.frame = 0        # complete frames so far (wraps at 2**30)
        self.jumps = 0        # pad readings that jumped so far (wraps at 2**30)

    def step(self):
        """Scan one bank (PER_STEP_HW of them on the register path). True when that completed a frame
        (all 16 banks)."""
        if self.hw:
            # banks a step: on the chip a loop turn's own Python (app.step: buttons, displays,
            # journal, watchdog) costs about what a bank costs, so a turn scans 4 of the 16 banks
            # and the turn's cost is paid 4 times a frame, not 16 (docs/performance.md)
            r = scan_rp2(self.pos, self.bank, PER_STEP_HW, self.hwpins, self.raw, self.baseline,
                         self.acc, self.grid, self.jump, self.SMOOTH, self.ref, self.drift)
            nj = r >> 8
            if nj:
                self.jumps = (self.jumps + nj) & 0x3FFFFFFF
            pos = r & 15
            self.pos = pos
            self.bank = (r >> 4) & 15
            if pos == 0:
                self.frame = (self.frame + 1) & 0x3FFFFFFF
                return True
            return False
        raw = self.raw
        pos = self.pos
        code = GRAY[pos]
        if code != self.bank:
            b = FLIP[pos]
            self.bank ^= 1 << b
            self.bank_pins[b].value((self.bank >> b) & 1)
        # A real board needs the second-level mux and the sensor's output to settle here (a few
        # us: the RP2040's ADC samples a 1 pF cap through the two muxes' on-resistance), and
        # after each channel pin in read_bank(). In the simulator nothing needs to settle.
        read_bank(pos << 4, self.ch_pins, self.rd0, self.rd1, self.rd2, raw)
        nj = settle(raw, code * _SLOTS, self.baseline, self.acc, self.grid, self.jump, self.SMOOTH,
                    self.ref, self.drift)
        if nj:
            self.jumps = (self.jumps + nj) & 0x3FFFFFFF
        pos = (pos + 1) & 15
        self.pos = pos
        if pos == 0:
            self.frame = (self.frame + 1) & 0x3FFFFFFF
            return True
        return False

    def mark(self):
        """The locator fits the grid now: drift is measured from these readings on."""
        mark(self.grid, self.ref, N_GRID)

    def scan_frame(self):
        """Step until a frame completes (boot and tests)."""
        while not self.step():
            pass

    def calibrate_empty(self, frames=8):
        """Average `frames` full frames of an empty board into the baseline (boot: allocates).
        Returns the largest deviation of a pad from ADC_ZERO, in LSB (a pad far off is suspect)."""
        acc = array('i', bytes(4 * N_GRID))
        smooth = self.SMOOTH
        self.SMOOTH = 0
        for p in range(N_GRID):
            self.baseline[p] = ADC_ZERO
        # finish the frame under way so that every frame summed is whole
        while self.pos != 0:
            self.step()
        for _ in range(frames):
            self.scan_frame()
            for p in range(N_GRID):
                acc[p] += self.grid[p]
        worst = 0
        half = frames // 2
        for p in range(N_GRID):
            if not PAD_PRESENT[p]:
                continue
            d = (acc[p] + half) // frames
            v = ADC_ZERO + d
            self.baseline[p] = v if 0 <= v <= 65535 else ADC_ZERO
            if abs(d) > worst:
                worst = abs(d)
        for p in range(N_GRID):
            self.grid[p] = 0
            self.acc[p] = ACC_BIAS
        self.SMOOTH = smooth
        return worst

    def set_baseline(self, values):
        """A saved calibration: any sequence of N_GRID raw zero readings (e.g. array('H'))."""
        for p in range(N_GRID):
            self.baseline[p] = values[p]
