# The presence pads (front end "shift", docs/sensing.md): IR reflective pads on a 10 mm grid,
# each telling whether something covers its window, read as a matrix. A row strobe (the row
# select pins, a 7-bit Gray code, so one pin moves from row to row) lights one row of pads;
# the row's PRES_COLS columns go into PRES_SR 74HC165s on the falling edge of their parallel
# load pin and come out over SPI (first byte: columns 0..7, bit 7 first).
#
# The same interface as hall_scan.HallScanner, so that app.py, the fault monitor and the
# calibration take either: step() scans ROWS_PER_STEP rows and returns True when that completed
# a frame (every row; 16 steps, as the hall pads take), `frame` counts frames, `grid[g]` is the
# cell's state (1: covered) by cell index (row * PRES_COLS + col; cells without a pad stay 0).
# Beyond that: rows_on[row] counts the covered cells of each row (the locator visits only
# those rows) and `version` changes whenever a cell changed (the locator reuses its work on a
# still board).
#
# A real board needs the phototransistors to settle after a row strobe (some 20 us); the
# simulator needs nothing. RAM: 2 x 4.6 KB of cells (state, changes), 1.2 KB of packed rows and
# masks.
# Allocation-free after construction, except calibrate_empty() (boot / calibration only).
from micropython import const
import machine

import pins
from board_table import PRES_COLS, PRES_ROWS, PRES_SR, PRES_PRESENT

N_CELLS = PRES_COLS * PRES_ROWS
ROWS_PER_STEP = const(6)


class PresenceScanner:
    front_end = b"shift"

    def __init__(self):
        if PRES_ROWS % ROWS_PER_STEP:
            raise ValueError("shift_scan: rows per step must divide the rows")
        Pin = machine.Pin
        self.sel = [Pin(p, Pin.OUT, value=0) for p in pins.SHIFT_ROW_SELECT]
        self.load = Pin(pins.SHIFT_LOAD, Pin.OUT, value=1)
        self.spi = machine.SPI(pins.SHIFT_BUS, baudrate=10000000, polarity=0, phase=0,
                               sck=Pin(pins.SHIFT_SCK), mosi=Pin(pins.SHIFT_MOSI),
                               miso=Pin(pins.SHIFT_MISO))
        self.grid = bytearray(N_CELLS)
        self.rows_on = bytearray(PRES_ROWS)
        self.packed = bytearray(PRES_ROWS * PRES_SR)     # the last reading of every row
        self.pmask = bytearray(PRES_ROWS * PRES_SR)      # 1 bits where a pad sits
        for g in range(N_CELLS):
            if (PRES_PRESENT[g >> 3] >> (g & 7)) & 1:
                r = g // PRES_COLS
                c = g - r * PRES_COLS
                self.pmask[r * PRES_SR + (c >> 3)] |= 0x80 >> (c & 7)
        self.rowbuf = bytearray(PRES_SR)
        self.row = 0          # the row strobed next
        self.code = 0         # the Gray code the row select pins show now
        self.frame = 0        # complete frames so far (wraps at 2**30)
        self.version = 0      # changes whenever a cell changed (wraps at 2**30)
        self.changed = 0      # cells changed in the frame under way
        self.toggles = bytearray(N_CELLS)   # changes per cell (up to 255) until the fault
                                            # monitor clears them: a flickering pad

    def step(self):
        """Strobe ROWS_PER_STEP rows. True when that completed a frame (every row)."""
        sel = self.sel
        load = self.load
        spi = self.spi
        buf = self.rowbuf
        packed = self.packed
        pmask = self.pmask
        grid = self.grid
        code = self.code
        row = self.row
        for _ in range(ROWS_PER_STEP):
            want = row ^ (row >> 1)
            d = want ^ code
            b = 0
            while d:
                if d & 1:
                    sel[b].value((want >> b) & 1)
                d >>= 1
                b += 1
            code = want
            # (settle: the row's phototransistors, some 20 us on a real board)
            load.value(0)         # the 165s take in the row
            load.value(1)
            spi.readinto(buf)
            k0 = row * PRES_SR
            for k in range(PRES_SR):
                v = buf[k] & pmask[k0 + k]
                old = packed[k0 + k]
                if v == old:
                    continue
                packed[k0 + k] = v
                diff = v ^ old
                g0 = row * PRES_COLS + 8 * k
                for j in range(8):
                    if (diff >> (7 - j)) & 1:
                        if (v >> (7 - j)) & 1:
                            grid[g0 + j] = 1
                            self.rows_on[row] += 1
                        else:
                            grid[g0 + j] = 0
                            self.rows_on[row] -= 1
                        self.changed += 1
                        if self.toggles[g0 + j] < 255:
                            self.toggles[g0 + j] += 1
            row += 1
        self.code = code
        if row >= PRES_ROWS:
            row = 0
        self.row = row
        if row == 0:
            self.frame = (self.frame + 1) & 0x3FFFFFFF
            if self.changed:
                self.version = (self.version + 1) & 0x3FFFFFFF
                self.changed = 0
            return True
        return False

    def scan_frame(self):
        """Step until a frame completes (boot and tests)."""
        while not self.step():
            pass

    def calibrate_empty(self, frames=8):
        """Scan `frames` frames of an empty board. Returns the list of cells seen covered in
        any of them (a pad covered on an empty board is stuck on, or dirt lies on it)."""
        while self.row != 0:
            self.step()
        seen = bytearray(N_CELLS)
        for _ in range(frames):
            self.scan_frame()
            for r in range(PRES_ROWS):
                if self.rows_on[r]:
                    g0 = r * PRES_COLS
                    for g in range(g0, g0 + PRES_COLS):
                        if self.grid[g]:
                            seen[g] = 1
        return [g for g in range(N_CELLS) if seen[g]]
