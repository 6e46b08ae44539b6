# The presence pads (front end "shift", docs/sensing.md): IR reflective pads on a 10 mm grid,
# each telling how much of its window something covers, in PRES_LEVELS levels, read as a
# matrix. A strobe (the row select pins, an 8-bit Gray code, so one pin moves from strobe to
# strobe) lights one line of PRES_RPS rows at one level's LED current: the brighter the LEDs,
# the less of a pad's window a chip must cover for it to switch (issue 12: a pad that only said
# "covered" let a chip move up to 6.4 mm unseen on the 10 mm grid; four levels leave 2.2 mm at
# most). The line's columns go into PRES_RPS * PRES_SR 74HC165s on the falling edge of their
# parallel load pin and come out over SPI (row by row; in a row, first byte: columns 0..7, bit 7
# first). Strobe s: line s // PRES_LEVELS, level s % PRES_LEVELS.
#
# The same interface as hall_scan.HallScanner, so that app.py, the fault monitor and the
# calibration take either: step() reads STROBES_PER_STEP strobes and returns True when that
# completed a frame (every line at every level; 16 steps, as the hall pads take), `frame` counts
# frames, `grid[g]` is the cell's level (0: nothing over it .. PRES_LEVELS) by cell index
# (row * PRES_COLS + col; cells without a pad stay 0). Beyond that: rows_on[row] counts the cells
# of each row that see something (the locator visits only those rows), `version` changes
# whenever a cell changed (the locator reuses its work on a still board), and `last` holds the
# last reading of every strobe: strobe s's bytes at s * PRES_RPS * PRES_SR, row by row; the
# first level's strobes (something over the pad) are what the fault monitor reads (a copy of
# them, 0.6 KB, was the presence image's heap short of its floor).
#
# How a step runs (docs/performance.md, "What would fix the rest", 3): two @micropython.viper
# functions. read_rows() strobes the step's lines and levels and reads each into its part of
# `rowbuf` through the same Pin.value() and SPI.readinto() calls as Python would make, in the
# same order; unpack() compares them with the last reading and updates only the cells that
# changed. In plain Python the byte and bit loops cost more than the bus; in viper they are
# machine code. Under CPython both run as plain Python. tests/test_scan_step.py checks the step
# against a plain reference on random rows under both runtimes.
#
# A real board needs the phototransistors to settle after a strobe (some 20 us); the simulator
# needs nothing. RAM: 4.6 KB of cell levels, 2.3 KB of their changes, 2.3 KB of the last
# reading of every strobe (the mask of where pads sit is board_table's PRES_PMASK, bytes in
# flash).
# Allocation-free after construction, except calibrate_empty() (boot / calibration only).
import sys
import micropython
from micropython import const
import machine

from tables import pins
from tables.board_table import (PRES_COLS, PRES_ROWS, PRES_SR, PRES_PMASK, PRES_LEVELS, PRES_RPS,
                                PRES_STROBES)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: unpack() runs as plain Python over the bytearrays
        return x

N_CELLS = PRES_COLS * PRES_ROWS
STROBES_PER_STEP = const(12)
ROWS_PER_STEP = STROBES_PER_STEP // PRES_LEVELS * PRES_RPS
_SR = const(6)              # PRES_SR, PRES_COLS, PRES_LEVELS and PRES_RPS as constants of this
_COLS = const(48)           # module, for the viper code (checked in __init__)
_LEV = const(4)
_RPS = const(2)
_LINE = const(12)           # bytes a strobe reads: _RPS * _SR


@micropython.viper
def read_rows(strobe: int, code: int, sel, load, spi, views) -> int:
    """Strobe strobe .. strobe + STROBES_PER_STEP - 1 and read each into views[i] (sel: the row
    select pins, load: the 165s' parallel load, code: the Gray code the select pins show).
    Only the select pins that differ move: one from strobe to strobe (several from the last
    strobe to 0).
    Returns the code the select pins show after."""
    i = 0
    while i < STROBES_PER_STEP:
        r = strobe + i
        want = r ^ (r >> 1)
        d = want ^ code
        b = 0
        while d:
            if d & 1:
                sel[b].value((want >> b) & 1)
            d >>= 1
            b += 1
        code = want
        # (settle: the line's phototransistors, some 20 us on a real board)
        load.value(0)         # the 165s take in the line
        load.value(1)
        spi.readinto(views[i])
        i += 1
    return code


@micropython.viper
def unpack(strobe: int, buf: ptr8, last: ptr8, pmask: ptr8, grid: ptr8, rows_on: ptr8,
           toggles: ptr8) -> int:
    """The strobes read (buf: STROBES_PER_STEP strobes of _LINE bytes, from `strobe`) against
    the last reading of each: each byte that changed (pads only) is stored, and its changed
    bits raise or lower their cells' level in grid, count in rows_on (cells above level 0) and,
    when a cell goes from level 0 or to it, in toggles (4 bits a cell, cell g in bits (g & 1) *
    4 of byte g >> 1, up to 15). Returns the level changes."""
    changed = 0
    q = 0
    s = strobe
    end = strobe + STROBES_PER_STEP
    lev = 0                 # strobe s: level lev of the line whose first row is r0 (strobe
    r0 = 0                  # starts a line: STROBES_PER_STEP is a multiple of _LEV)
    t = strobe
    while t >= _LEV:        # r0 = strobe // _LEV * _RPS, without a division (no divide on
        t -= _LEV           # the RP2040's core: a runtime call)
        r0 += _RPS
    while s < end:
        k0 = s * _LINE
        h = 0
        while h < _RPS:
            r = r0 + h
            kk = 0
            while kk < _SR:
                k = h * _SR + kk
                v = int(buf[q + k]) & int(pmask[r * _SR + kk])
                old = int(last[k0 + k])
                if v != old:
                    last[k0 + k] = v
                    diff = v ^ old
                    g0 = r * _COLS + 8 * kk
                    j = 0
                    while j < 8:
                        bit = 7 - j
                        if (diff >> bit) & 1:
                            g = g0 + j
                            edge = 0
                            if (v >> bit) & 1:
                                n = int(grid[g]) + 1
                                grid[g] = n
                                if n == 1:
                                    rows_on[r] = int(rows_on[r]) + 1
                                    edge = 1
                            else:
                                n = int(grid[g]) - 1
                                if n < 0:
                                    n = 0
                                grid[g] = n
                                if n == 0:
                                    rows_on[r] = int(rows_on[r]) - 1
                                    edge = 1
                            changed += 1
                            if edge:
                                # a pad that something covers or leaves: 4 bits a cell (two
                                # to a byte), up to 15 (levels changing under a chip are no
                                # flicker of the pad)
                                sh = (g & 1) << 2
                                tg = int(toggles[g >> 1])
                                if ((tg >> sh) & 15) < 15:
                                    toggles[g >> 1] = tg + (1 << sh)
                        j += 1
                kk += 1
            h += 1
        q += _LINE
        s += 1
        lev += 1
        if lev == _LEV:
            lev = 0
            r0 += _RPS
    return changed


class PresenceScanner:
    front_end = b"shift"

    def __init__(self):
        if PRES_STROBES % STROBES_PER_STEP or STROBES_PER_STEP % PRES_LEVELS:
            raise ValueError("shift_scan: strobes per step must divide the strobes, levels them")
        if (PRES_SR != _SR or PRES_COLS != _COLS or PRES_COLS != 8 * PRES_SR
                or PRES_LEVELS != _LEV or PRES_RPS != _RPS or _LINE != _RPS * _SR):
            raise ValueError("shift_scan: _SR, _COLS, _LEV, _RPS must be board_table's")
        Pin = machine.Pin
        self.spi = machine.SPI(pins.SHIFT_BUS, baudrate=10000000, polarity=0, phase=0,
                               sck=Pin(pins.SHIFT_SCK), mosi=Pin(pins.SHIFT_MOSI),
                               miso=Pin(pins.SHIFT_MISO))
        # after the SPI: a select pin may be its MOSI (the 165 chain only reads), taken over
        self.sel = [Pin(p, Pin.OUT, value=0) for p in pins.SHIFT_ROW_SELECT]
        self.load = Pin(pins.SHIFT_LOAD, Pin.OUT, value=1)
        self.grid = bytearray(N_CELLS)
        self.rows_on = bytearray(PRES_ROWS)
        self.last = bytearray(PRES_STROBES * _LINE)      # the last reading of every strobe
        # 1 bits where a pad sits: a constant of the board table (in flash when frozen)
        self.pmask = PRES_PMASK
        self.rowbuf = bytearray(STROBES_PER_STEP * _LINE)    # the step's strobes as read
        mv = memoryview(self.rowbuf)
        self.views = [mv[i * _LINE:(i + 1) * _LINE] for i in range(STROBES_PER_STEP)]
        self.row = 0          # the strobe next
        self.code = 0         # the Gray code the row select pins show now
        self.frame = 0        # complete frames so far (wraps at 2**30)
        self.version = 0      # changes whenever a cell changed (wraps at 2**30)
        self.changed = 0      # cells changed in the frame under way
        # changes per cell until the fault monitor clears them (a flickering pad: 6 in a window
        # of 32 frames), up to 15: 4 bits a cell, cell g in bits (g & 1) * 4 of byte g >> 1
        self.toggles = bytearray((N_CELLS + 1) >> 1)

    def step(self):
        """Read STROBES_PER_STEP strobes. True when that completed a frame (every strobe)."""
        row = self.row
        self.code = read_rows(row, self.code, self.sel, self.load, self.spi, self.views)
        n = unpack(row, self.rowbuf, self.last, self.pmask, self.grid, self.rows_on,
                   self.toggles)
        if n:
            self.changed += n
        row += STROBES_PER_STEP
        if row >= PRES_STROBES:
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
