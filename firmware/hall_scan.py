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
# `jumps` counts those jumps (wrapping at 2**30): the locator fits a frame again only when it
# moved (locate.Locator.find; docs/performance.md).
#
# RAM: grid 2 B + baseline 2 B + running average 4 B per grid cell (722 cells: 5.8 KB).
# Allocation-free after construction, except calibrate_empty() (boot only).
from array import array
import machine

import pins
from board_table import (PAD_COLS, PAD_ROWS, N_ADC, BANKS, CHANNELS, SCAN_GRID, ADC_ZERO,
                         PAD_PRESENT, NOISE_LSB)

N_GRID = PAD_COLS * PAD_ROWS

# The 4-bit Gray code: position i -> code, and which bit flips to reach position i from i - 1
# (cyclically: from 15 back to 0 flips bit 3). BIT: a one-bit difference -> that bit's number.
GRAY = bytes((0, 1, 3, 2, 6, 7, 5, 4, 12, 13, 15, 14, 10, 11, 9, 8))
FLIP = bytes((3, 0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0))
BIT = bytes((0, 0, 1, 0, 2, 0, 0, 0, 3))


class HallScanner:
    SMOOTH = 2     # 2**-SMOOTH: the weight of a new reading in a pad's running average (0: off)
    def __init__(self):
        if CHANNELS != 16 or BANKS != 16:
            raise ValueError("hall_scan: 16 x 16 multiplexers expected (Gray tables)")
        Pin = machine.Pin
        self.ch_pins = [Pin(p, Pin.OUT, value=0) for p in pins.MUX_CHANNEL_SELECT]
        self.bank_pins = [Pin(p, Pin.OUT, value=0) for p in pins.MUX_BANK_SELECT]
        self.adcs = [machine.ADC(Pin(p)) for p in pins.MUX_ADC]
        self.grid = array('h', bytes(2 * N_GRID))
        self.baseline = array('H', (ADC_ZERO for _ in range(N_GRID)))
        self.acc = array('i', bytes(4 * N_GRID))     # smoothed readings, x16
        self.jump = (5 * NOISE_LSB) << 4
        self.pos = 0          # Gray position of the bank scanned next (0..15)
        self.bank = 0         # the bank code the bank pins select now
        self.ch = 0           # the channel code the channel pins select now
        self.frame = 0        # complete frames so far (wraps at 2**30)
        self.bank_steps = 0   # banks scanned in the frame under way
        self.jumps = 0        # pad readings that jumped so far (wraps at 2**30)

    def step(self):
        """Scan one bank. True when that completed a frame (all 16 banks)."""
        pos = self.pos
        code = GRAY[pos]
        if code != self.bank:
            b = FLIP[pos]
            self.bank ^= 1 << b
            self.bank_pins[b].value((self.bank >> b) & 1)
        # A real board needs the second-level mux and the sensor's output to settle here (a few
        # us: the RP2040's ADC samples a 1 pF cap through the two muxes' on-resistance). In the
        # simulator nothing needs to settle.
        grid = self.grid
        base = self.baseline
        acc = self.acc
        adcs = self.adcs
        sh = self.SMOOTH
        jump = self.jump
        row = code * (CHANNELS * N_ADC)
        ch = self.ch
        back = pos & 1
        nj = 0
        for j in range(16):
            # the channel pins: one flips per channel. Even banks run the Gray code forwards
            # (code 0 to code 8), odd banks backwards (8 to 0), so at a change of bank the
            # channel stays and only the bank pin moves
            c = GRAY[15 - j] if back else GRAY[j]
            if c != ch:
                b = BIT[c ^ ch]
                ch = c
                self.ch_pins[b].value((c >> b) & 1)
            # (settle: as above, a few us on a real board after switching a channel)
            s = row + c * N_ADC
            for k in range(N_ADC):
                g = SCAN_GRID[s + k]
                if g < 0:
                    continue
                v = adcs[k].read_u16() - base[g]
                if v > 32767:
                    v = 32767
                elif v < -32767:
                    v = -32767
                # smoothing: a pad that holds still is averaged (noise / 2.6 at SMOOTH 2); one that
                # jumps by more than 5 x NOISE_LSB (a chip arriving or moving) takes the new
                # reading at once, so motion is never smeared
                v <<= 4
                d = v - acc[g]
                if -jump < d < jump:
                    v = acc[g] + (d >> sh)
                else:
                    nj += 1
                acc[g] = v
                grid[g] = (v + 8) >> 4
        self.ch = ch
        if nj:
            self.jumps = (self.jumps + nj) & 0x3FFFFFFF
        pos = (pos + 1) & 15
        self.pos = pos
        if pos == 0:
            self.frame = (self.frame + 1) & 0x3FFFFFFF
            return True
        return False

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
            self.acc[p] = 0
        self.SMOOTH = smooth
        return worst

    def set_baseline(self, values):
        """A saved calibration: any sequence of N_GRID raw zero readings (e.g. array('H'))."""
        for p in range(N_GRID):
            self.baseline[p] = values[p]
