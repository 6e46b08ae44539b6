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
# On the RP2040 itself (HW: the rp2 port with its own machine module) a step reads PER_STEP_HW =
# 48 strobes (a quarter of the frame) in one viper call, scan_rp2(): the select and load pins
# through SIO's GPIO_OUT_SET / _CLR, each strobe's bytes through the SPI's data and status
# registers (the FIFO kept fed, as SPI.readinto() does), each byte compared with the last
# reading as it comes in; a group of STROBES_PER_STEP strobes in which a byte changed goes
# through unpack() as above (at rest: none). On the emulated chip a Python call costs about 30
# us: 36 Pin.value() and 12 readinto() calls a step and the loop turn's own Python (app.step)
# paid 16 times a frame were most of the presence frame (docs/performance.md, issue 13). The
# pins show the same codes at each load, the bytes are the same bytes; tests/test_rp2040_shift.py
# runs both paths on the chip over the same table. Everywhere else a step is read_rows() and
# unpack() as above.
#
# A real board needs the phototransistors to settle after the select pins move (SETTLE_US). The
# register path moves them to the next strobe's line right after the load (the 165s hold what
# they took in while the bytes shift out), so the settling overlaps the transfer, and waits out
# what is left of SETTLE_US on the chip's timer before the next load; the Pin.value() path takes
# longer than that between a select pin and the load anyway. The simulator needs nothing. RAM: 4.6 KB of cell levels, 2.3 KB of their changes, 2.3 KB of the last
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


# The RP2040's own registers (RP2040 datasheet 2.3.1.7, 4.4.4, 4.6.5): the chip path of a step
_SIO_BASE = const(0xD0000000)   # words: GPIO_OUT_SET [5], GPIO_OUT_CLR [6]
_SPI0_BASE = const(0x4003C000)  # words: SSPDR [2], SSPSR [3]
_SPI1_BASE = const(0x40040000)
_TIMER_BASE = const(0x40054000)  # words: TIMERAWL [10] (microseconds)
_SSP_TNF = const(2)             # SSPSR: transmit FIFO not full
_SSP_RNE = const(4)             # SSPSR: receive FIFO not empty
_FIFO = const(8)                # the SSP's FIFOs: bytes in flight at most (no receive overrun)
PER_STEP_HW = const(48)         # strobes a step() on the register path: 4 loop turns a frame
SETTLE_US = const(20)           # a line's phototransistors after the select pins move
_STROBES = const(192)           # PRES_STROBES (checked in __init__)


@micropython.viper
def scan_rp2(strobe: int, code: int, n: int, hwp: ptr8, buf, last, pmask, grid, rows_on,
             toggles) -> int:
    """Up to n strobes (to the end of the frame) from `strobe` on the RP2040, through its
    registers, the select pins showing `code` (hwp: the select pins' GPIO numbers [0:8], the
    load pin's [8], the SPI bus [9]). Per strobe: the load pulse once SETTLE_US have passed
    since the select pins moved, the select pins moved on to the next strobe's code at once,
    then the strobe's _LINE bytes over the SPI into its place in buf, each compared with the
    last reading as it comes; each group of STROBES_PER_STEP strobes (buf: one group) with a
    byte changed then goes through unpack(). Returns unpack()'s changes summed << 16 | the
    code the select pins show << 8 | the next strobe (no array for them: heap)."""
    sio = ptr32(_SIO_BASE)
    ssp = ptr32(_SPI0_BASE)
    if int(hwp[9]):
        ssp = ptr32(_SPI1_BASE)
    tm = ptr32(_TIMER_BASE)
    b = ptr8(buf)
    lst = ptr8(last)
    pm = ptr8(pmask)
    ld = 1 << int(hwp[8])
    end = strobe + n
    if end > _STROBES:
        end = _STROBES
    while int(ssp[3]) & _SSP_RNE:       # nothing left over in the receive FIFO
        v = ssp[2]
    s = strobe
    want = s ^ (s >> 1)
    t_sel = int(tm[10]) - SETTLE_US     # moved before this call (the loop turn since): settled
    if want != code:
        d = want ^ code
        j = 0
        while d:
            if d & 1:
                if (want >> j) & 1:
                    sio[5] = 1 << int(hwp[j])
                else:
                    sio[6] = 1 << int(hwp[j])
            d >>= 1
            j += 1
        code = want
        t_sel = int(tm[10])
    po = 0                              # pmask's offset of the strobe's line (its first row)
    t = s
    while t >= _LEV:                    # po = s // _LEV * _LINE, without a division
        t -= _LEV
        po += _LINE
    lev = t
    nch = 0
    g0 = s                              # the group's first strobe
    q = 0                               # the strobe's offset in buf
    dirty = 0
    while s < end:
        while int(tm[10]) - t_sel < SETTLE_US:
            pass
        sio[6] = ld                     # load low: the 165s take in the line
        sio[5] = ld
        nx = s + 1                      # the next strobe's line settles while the bytes shift
        if nx == _STROBES:
            nx = 0
        want = nx ^ (nx >> 1)
        d = want ^ code
        j = 0
        while d:
            if d & 1:
                if (want >> j) & 1:
                    sio[5] = 1 << int(hwp[j])
                else:
                    sio[6] = 1 << int(hwp[j])
            d >>= 1
            j += 1
        code = want
        t_sel = int(tm[10])
        k = s * _LINE
        tx = 0
        rx = 0
        while rx < _LINE:
            st = int(ssp[3])
            if tx < _LINE and tx - rx < _FIFO and (st & _SSP_TNF):
                ssp[2] = 0
                tx += 1
            if st & _SSP_RNE:
                v = int(ssp[2]) & 0xFF
                b[q + rx] = v
                if (v & int(pm[po + rx])) != int(lst[k + rx]):
                    dirty = 1
                rx += 1
        q += _LINE
        s += 1
        lev += 1
        if lev == _LEV:
            lev = 0
            po += _LINE
        if s - g0 == STROBES_PER_STEP:
            if dirty:
                nch += int(unpack(g0, buf, last, pmask, grid, rows_on, toggles))
                dirty = 0
            g0 = s
            q = 0
    if s == _STROBES:
        s = 0
    return (nch << 16) | (code << 8) | s


# the register path where the firmware runs on the RP2040 with its own machine module (the
# tests' reference scripts run it on the chip behind the simulator's stand-in, which has no
# mem32); read_rows() and unpack() everywhere else
HW = sys.platform == "rp2" and hasattr(machine, "mem32")


class PresenceScanner:
    front_end = b"shift"

    def __init__(self):
        if PRES_STROBES % STROBES_PER_STEP or STROBES_PER_STEP % PRES_LEVELS:
            raise ValueError("shift_scan: strobes per step must divide the strobes, levels them")
        if (PRES_SR != _SR or PRES_COLS != _COLS or PRES_COLS != 8 * PRES_SR
                or PRES_LEVELS != _LEV or PRES_RPS != _RPS or _LINE != _RPS * _SR
                or PRES_STROBES != _STROBES or PER_STEP_HW % STROBES_PER_STEP
                or _STROBES % PER_STEP_HW):
            raise ValueError("shift_scan: _SR, _COLS, _LEV, _RPS, _STROBES must be board_table's")
        Pin = machine.Pin
        self.spi = machine.SPI(pins.SHIFT_BUS, baudrate=10000000, polarity=0, phase=0,
                               sck=Pin(pins.SHIFT_SCK), mosi=Pin(pins.SHIFT_MOSI),
                               miso=Pin(pins.SHIFT_MISO))
        # after the SPI: a select pin may be its MOSI (the 165 chain only reads), taken over
        self.sel = [Pin(p, Pin.OUT, value=0) for p in pins.SHIFT_ROW_SELECT]
        self.load = Pin(pins.SHIFT_LOAD, Pin.OUT, value=1)
        # on the RP2040 itself the step goes through the registers (scan_rp2): its pins and bus
        self.hw = HW
        self.hwpins = bytes(tuple(pins.SHIFT_ROW_SELECT) + (pins.SHIFT_LOAD, pins.SHIFT_BUS))
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
        """Read STROBES_PER_STEP strobes (PER_STEP_HW on the register path). True when that
        completed a frame (every strobe)."""
        row = self.row
        if self.hw:
            # on the chip a loop turn's own Python costs about what a step's calls cost, so a
            # turn reads a quarter of the frame (4 turns a frame, not 16), as the hall scan does
            r = scan_rp2(row, self.code, PER_STEP_HW, self.hwpins, self.rowbuf, self.last,
                         self.pmask, self.grid, self.rows_on, self.toggles)
            n = r >> 16
            self.code = (r >> 8) & 255
            row = r & 255
        else:
            self.code = read_rows(row, self.code, self.sel, self.load, self.spi, self.views)
            n = unpack(row, self.rowbuf, self.last, self.pmask, self.grid, self.rows_on,
                       self.toggles)
            row += STROBES_PER_STEP
            if row >= PRES_STROBES:
                row = 0
        if n:
            self.changed += n
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
