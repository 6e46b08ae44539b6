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
# How a step runs (docs/performance.md, "What would fix the rest", 3): two @micropython.viper
# functions. read_rows() strobes the step's rows and reads each into its part of `rowbuf`
# through the same Pin.value() and SPI.readinto() calls as Python would make, in the same
# order; unpack() compares them with the packed rows and updates only the cells that changed.
# In plain Python the byte and bit loops cost more than the bus (1.7 ms a step on the Pico);
# in viper they are machine code. Under CPython both run as plain Python. tests/test_scan_step.py
# checks the step against a plain reference on random rows under both runtimes.
#
# A real board needs the phototransistors to settle after a row strobe (some 20 us); the
# simulator needs nothing. RAM: 4.6 KB of cell states, 2.3 KB of their changes, 0.6 KB of packed rows (the
# mask of where pads sit is board_table's PRES_PMASK, bytes in flash).
# Allocation-free after construction, except calibrate_empty() (boot / calibration only).
import sys
import micropython
from micropython import const
import machine

from tables import pins
from tables.board_table import PRES_COLS, PRES_ROWS, PRES_SR, PRES_PMASK

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: unpack() runs as plain Python over the bytearrays
        return x

N_CELLS = PRES_COLS * PRES_ROWS
ROWS_PER_STEP = const(6)
_SR = const(6)              # PRES_SR and PRES_COLS as constants of this module, for the viper
_COLS = const(48)           # code (checked in __init__)


@micropython.viper
def read_rows(row: int, code: int, sel, load, spi, views) -> int:
    """Strobe rows row .. row + ROWS_PER_STEP - 1 and read each into views[i] (sel: the row
    select pins, load: the 165s' parallel load, code: the Gray code the select pins show).
    Only the select pins that differ move: one from row to row (three from the last row, 95,
    to 0).
    Returns the code the select pins show after."""
    i = 0
    while i < ROWS_PER_STEP:
        r = row + i
        want = r ^ (r >> 1)
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
        spi.readinto(views[i])
        i += 1
    return code


@micropython.viper
def unpack(row: int, buf: ptr8, packed: ptr8, pmask: ptr8, grid: ptr8, rows_on: ptr8,
           toggles: ptr8) -> int:
    """The rows read (buf: ROWS_PER_STEP rows of _SR bytes, from `row`) against the packed
    rows: each byte that changed (pads only) is stored, and its changed bits set or clear their
    cells in grid, count in rows_on and toggles (4 bits a cell, cell g in bits (g & 1) * 4 of
    byte g >> 1, up to 15). Returns the cells changed."""
    changed = 0
    q = 0
    r = row
    end = row + ROWS_PER_STEP
    while r < end:
        k0 = r * _SR
        k = 0
        while k < _SR:
            v = int(buf[q + k]) & int(pmask[k0 + k])
            old = int(packed[k0 + k])
            if v != old:
                packed[k0 + k] = v
                diff = v ^ old
                g0 = r * _COLS + 8 * k
                j = 0
                while j < 8:
                    bit = 7 - j
                    if (diff >> bit) & 1:
                        g = g0 + j
                        if (v >> bit) & 1:
                            grid[g] = 1
                            rows_on[r] = int(rows_on[r]) + 1
                        else:
                            grid[g] = 0
                            rows_on[r] = int(rows_on[r]) - 1
                        changed += 1
                        # 4 bits a cell (two to a byte), up to 15
                        sh = (g & 1) << 2
                        t = int(toggles[g >> 1])
                        if ((t >> sh) & 15) < 15:
                            toggles[g >> 1] = t + (1 << sh)
                    j += 1
            k += 1
        q += _SR
        r += 1
    return changed


class PresenceScanner:
    front_end = b"shift"

    def __init__(self):
        if PRES_ROWS % ROWS_PER_STEP:
            raise ValueError("shift_scan: rows per step must divide the rows")
        if PRES_SR != _SR or PRES_COLS != _COLS or PRES_COLS != 8 * PRES_SR:
            raise ValueError("shift_scan: _SR and _COLS must be board_table's PRES_SR, PRES_COLS")
        Pin = machine.Pin
        self.sel = [Pin(p, Pin.OUT, value=0) for p in pins.SHIFT_ROW_SELECT]
        self.load = Pin(pins.SHIFT_LOAD, Pin.OUT, value=1)
        self.spi = machine.SPI(pins.SHIFT_BUS, baudrate=10000000, polarity=0, phase=0,
                               sck=Pin(pins.SHIFT_SCK), mosi=Pin(pins.SHIFT_MOSI),
                               miso=Pin(pins.SHIFT_MISO))
        self.grid = bytearray(N_CELLS)
        self.rows_on = bytearray(PRES_ROWS)
        self.packed = bytearray(PRES_ROWS * PRES_SR)     # the last reading of every row
        # 1 bits where a pad sits: a constant of the board table (in flash when frozen)
        self.pmask = PRES_PMASK
        self.rowbuf = bytearray(ROWS_PER_STEP * PRES_SR)    # the step's rows as read
        mv = memoryview(self.rowbuf)
        self.views = [mv[i * PRES_SR:(i + 1) * PRES_SR] for i in range(ROWS_PER_STEP)]
        self.row = 0          # the row strobed next
        self.code = 0         # the Gray code the row select pins show now
        self.frame = 0        # complete frames so far (wraps at 2**30)
        self.version = 0      # changes whenever a cell changed (wraps at 2**30)
        self.changed = 0      # cells changed in the frame under way
        # changes per cell until the fault monitor clears them (a flickering pad: 6 in a window
        # of 32 frames), up to 15: 4 bits a cell, cell g in bits (g & 1) * 4 of byte g >> 1
        self.toggles = bytearray((N_CELLS + 1) >> 1)

    def step(self):
        """Strobe ROWS_PER_STEP rows. True when that completed a frame (every row)."""
        row = self.row
        self.code = read_rows(row, self.code, self.sel, self.load, self.spi, self.views)
        n = unpack(row, self.rowbuf, self.packed, self.pmask, self.grid, self.rows_on,
                   self.toggles)
        if n:
            self.changed += n
        row += ROWS_PER_STEP
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
