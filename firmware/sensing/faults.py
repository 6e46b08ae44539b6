# Faults of the table's sensors (issue 4; docs/sensing.md, "Faults"), watched frame by frame:
#
#   pad_stuck    hall: a pad at the top rail, or frozen at one value while its neighbours see a
#                chip move (a still board cannot tell: a quiet sensor may read one 12-bit value
#                again and again); presence: a pad covered alone, with nothing beside it, for long
#   pad_dead     hall: a pad at the bottom rail (its output at ground)
#   pad_off      a pad that does not see a chip lying on it (hall: a still chip fits far better
#                without it, frame after frame; presence: uncovered deep inside a chip's disc)
#   pad_flicker  a pad jumping by itself, its neighbours still (hall), or switching on and off
#                again and again (presence)
#   mux_dead     hall: a first-level multiplexer (16 pads) with most of its pads faulty, or all of
#                them reading one and the same sensor; presence: a 74HC165 (8 columns) stuck on,
#                or two of its pads found off
#   cup_chatter  a cup's throat beam giving far more edges than a chip or a hand can
#   hand         presence pads: a hand hovering over them (a condition, on and off again)
#   unreadable   the locator cannot read the frames (hall: 48 or more pads beyond its threshold,
#                presence: 256 or more pads covered; no chips do that) for UNREAD_MS, none of
#                the faults above found to leave out the pads behind it: a board out of
#                calibration, a sensor supply drifted, a cloth over the pads (a condition, on
#                and off again; issue 13)
#
# A faulty pad is left out of every fit from then on (Locator.set_ignored): chips are still
# located from the pads around it, with a larger uncertainty where it matters, and the tracker
# marks a verdict unsure where a zone border lies within it. A chattering cup beam is switched
# off (FastInputs.disable): a chip that slides out of sight by that cup then counts as dropped
# in, unsure. Each fault is written once, {"ev":"fault","what":"pads"|"cup","code":...,
# "pad":[col,row]|null,...,"on":true}, and its text is handed to the status row.
#
# frame() runs once per frame after the tracker; allocation-free. It looks at a quarter of the
# hall pads per frame. The per-pad checks (rail, frozen, a jump with its neighbours quiet) and the
# muxes' spread are two @micropython.viper functions over the arrays (_pads, _muxes), and so are
# the presence pads' passes over every cell (_toggled, _full): they only count and hand back the
# pads and muxes to flag; _flag, the mux kills and the reports stay Python. In plain Python the
# hall pass cost about 2 ms a frame on the RP2040, the presence one 98 ms one frame in 32.
# Under CPython they run as plain Python (ptr8/16 are the arrays themselves).
# tests/test_fault_pass.py checks them against the plain code on random grids under both runtimes.
#
# The work of a frame is bounded whatever fails (issue 13: a frame in which every pad looked
# frozen took 9.1 s on the chip, past the watchdog): pads found faulty wait in a queue (MAX_NEW)
# and muxes found dead in another; each frame handles MAX_KILLS dead muxes (presence: one,
# _KILLS_SHIFT) and MAX_ITEMS queued pads at most, the rest in the frames after. A dead mux is
# reported once, its pads all left out of the fits at once (by machine code) and then skipped;
# a pad whose mux is dead costs no report. A mux's faulty pads are counted as they are flagged
# (mux_nbad). The reports themselves (an event line and the status text, about as much work as
# the rest of a frame) are queued and written one per step by report(), which app.py calls in
# the steps that do not end a frame. wk_rep, wk_ign, wk_items and wk_kills count each frame's
# reports queued, set_ignored calls, queued pads looked at and dead muxes handled
# (tests/test_fault_budget.py holds them to the bounds, and each frame's bytecode and viper
# lines, with every pad frozen, a dead mux, a shorted rail, and each failure on both front
# ends; bench/rp2040_profile.py --faults table times them on the emulated chip).
# RAM: hall about 4.5 KB (5 B per grid cell and each mux's pads), presence about 5 KB (a byte per
# cell).
import sys
import micropython
from micropython import const
from array import array
import time

from tables import board_table as BT
from sensing import fastin as F
from displays.digits import put_text as _put, put_num as _num, setbytes as _blank

CODE_NAMES = (b"pad_stuck", b"pad_dead", b"pad_off", b"pad_flicker", b"mux_dead", b"cup_chatter",
              b"hand", b"unreadable")
C_STUCK = const(0)
C_DEAD = const(1)
C_OFF = const(2)
C_FLICKER = const(3)
C_MUX = const(4)
C_CHATTER = const(5)
C_HAND = const(6)
C_UNREAD = const(7)
_TEXT = (b" stuck", b" dead", b" blind", b" flickers", b" dead", b" chatters", b"", b"")

MAX_NEW = const(24)         # faulty pads waiting to be reported (found, not yet handled), at most
MAX_ITEMS = const(2)         # queued pads looked at per frame, at most
MAX_KILLS = const(2)         # dead muxes reported and left out per frame, at most
_KILLS_SHIFT = const(1)      # presence: dead 74HC165s a frame (each 768 cells left out, the
                             # locator's set_ignored and a report: 1.3 ms on the chip; two in the
                             # frame that found the chain stuck on made it 5.1 ms: issue 13)
_RQ = const(9)               # reports waiting to be written, at most
_RQ_FREE = const(4)          # of them kept for the cup beams, the hand and the unreadable frames
                             # (4 at most at once)

# hall pads (readings in LSB from the baseline)
_RAIL = const(24000)        # beyond any magnet (a chip on a pad gives about ADC_PEAK, 14000)
_RAIL_CHECKS = const(4)     # checks in a row at a rail (a pad is checked every 4th frame)
_FROZEN_CHECKS = const(3)   # checks with exactly the same reading while a neighbour moved
_MOVED = const(4000)        # a neighbour's change that a live pad sees too: a chip came or went
                            # within 15 mm of the neighbour, so 10 - 40 mm from the pad (25 mm
                            # apart), where it changes the pad's reading by more than one LSB of
                            # 12 bits but in a ring about 0.4 mm wide (the field's zero, 31 mm)
_JUMP = const(3000)         # a jump this big, its neighbours quiet (1/32 of it): a flicker
_QUIET = const(150)
_P = const(100)             # presence pads (BT.PRES_*, for the viper code; checked in
_X0 = const(-2350)          # _init_presence)
_Y0 = const(-4750)
_COLS = const(48)
_ROWS = const(96)
_FLICKER_JUMPS = const(3)   # flickers (decaying) that make a pad flickering
# LSB: the raw readings of all of a mux's pads this close together are one sensor read 16
# times (the sensors' own zero points spread by hundreds of LSB; the noise, smoothed, is 15)
_SAME_SPREAD = const(100)
_SAME_CHECKS = const(6)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: _pads() and _muxes() run as plain Python over the arrays
        return x

    def ptr16(x):
        return x

    def ptr32(x):
        return x


@micropython.viper
def _pads(g: int, n: int, cols: int, grid: ptr16, prev: ptr16, dlast: ptr8, same: ptr8,
          rail: ptr8, flick: ptr8, bad: ptr8, present: ptr8, out: ptr16) -> int:
    """Check pads g, g + 4, ... < n (g < 4: the frame's quarter) not yet faulty: at a rail, frozen,
    or jumping with its 4 neighbours quiet (see FaultMonitor._hall). Updates prev, dlast, same,
    rail and flick; writes each pad to flag as pad << 2 | code into out (MAX_NEW at most, in pad
    order) and returns how many."""
    k = 0
    c = g                   # g's column (g < 4 < cols), kept up as g steps by 4
    while g < n:
        # present (0 or 1) and not faulty (0, else a code + 1)
        if int(present[g]) > int(bad[g]):
            # the readings signed under both runtimes (a viper ptr16 loads unsigned)
            v = ((int(grid[g]) + 0x8000) & 0xFFFF) - 0x8000
            p = ((int(prev[g]) + 0x8000) & 0xFFFF) - 0x8000
            prev[g] = v
            d = v - p
            a = d
            if d < 0:
                a = 0 - d
            q = a >> 5
            if q < 255:
                dlast[g] = q
            else:
                dlast[g] = 255
            f = -1
            # at a rail
            if v < _RAIL and v > 0 - _RAIL:
                rail[g] = 0
            else:
                x = int(rail[g])
                if x < 255:
                    x += 1
                    rail[g] = x
                if x >= _RAIL_CHECKS:
                    f = C_DEAD
                    if v > 0:
                        f = C_STUCK
            if f < 0 and d:
                same[g] = 0
            # One look at the 4 neighbours serves both rules that need them (never both: a pad
            # that jumped did not read the same value).
            # Frozen (d == 0): the same reading while a neighbour's changed by _MOVED or more
            # since its own last check (a chip moved nearby; within these 4 frames, as g's
            # change is taken). A pad's reading alone cannot tell: the RP2040's ADC has 12 bits,
            # and a live sensor whose noise lies within one LSB of them reads the same value
            # check after check on a still board (the emulated chip flagged such pads stuck).
            # A jump by itself (a > _JUMP): the 4 neighbours barely changed over the same 4
            # frames (their change since their last check, 1 or 3 frames ago, and the one found
            # at it, dlast), else a chip put down or lifted between a neighbour's check and g's
            # would look like g jumping alone. A magnet arriving right over a pad moves its
            # neighbours by 4.5 %.
            # hit: a neighbour changed by lim or more (frozen: one moved; a jump: not quiet).
            if f < 0 and (d == 0 or a > _JUMP):
                lim = _MOVED
                if d:
                    if q < _QUIET:
                        q = _QUIET
                    lim = q + 1
                hit = 0
                j = 0
                while j < 4:
                    h = -1
                    if j == 0:
                        if c < cols - 1:
                            h = g + 1
                    elif j == 1:
                        if c > 0:
                            h = g - 1
                    elif j == 2:
                        if g + cols < n:
                            h = g + cols
                    elif g >= cols:
                        h = g - cols
                    if h >= 0 and int(present[h]) > int(bad[h]):
                        e = (((int(grid[h]) + 0x8000) & 0xFFFF)
                             - ((int(prev[h]) + 0x8000) & 0xFFFF))
                        if e >= lim or e <= 0 - lim:
                            hit = 1
                            break
                        if d != 0 and (int(dlast[h]) << 5) >= lim:
                            hit = 1
                            break
                    j += 1
                if d == 0:
                    if hit:
                        x = int(same[g])
                        if x < 255:
                            x += 1
                            same[g] = x
                        if x >= _FROZEN_CHECKS:
                            f = C_STUCK
                elif hit == 0:
                    x = int(flick[g])
                    if x < 250:
                        x += 2
                        flick[g] = x
                        if x >= 2 * _FLICKER_JUMPS:
                            f = C_FLICKER
            if f >= 0 and k < MAX_NEW:
                out[k] = (g << 2) | f
                k += 1
        g += 4
        c += 4
        if c >= cols:
            c -= cols
    return k


@micropython.viper
def _decay(flick: ptr8, n: int):
    g = 0
    while g < n:
        if int(flick[g]) != 0:
            flick[g] = int(flick[g]) - 1
        g += 1


@micropython.viper
def _muxes(nm: int, nc: int, banks: int, n_adc: int, scan_grid: ptr16, mux_bad: ptr8,
           mux_same: ptr8, grid: ptr16, base: ptr16, out: ptr16) -> int:
    """Muxes (nm, nc channels each) whose pads' raw readings (grid + base) all lie within
    _SAME_SPREAD, at least 4 pads, counted in mux_same: the ones counted _SAME_CHECKS times go
    into out, their number returned. Mux m = adc * banks + bank's pads, channel by channel, are
    read from the scan map (board_table.SCAN_GRID: slot (bank * nc + channel) * n_adc + adc)."""
    k = 0
    m = 0
    adc = 0
    bank = 0
    while m < nm:
        if int(mux_bad[m]) == 0:
            lo = 1 << 20
            hi = 0 - lo
            j = 0
            i = bank * nc * n_adc + adc
            e = i + nc * n_adc
            while i < e:
                g = int(scan_grid[i])
                if (g & 0x8000) == 0:         # -1 (no pad): 0xFFFF through a ptr16
                    j += 1
                    v = ((int(grid[g]) + 0x8000) & 0xFFFF) - 0x8000 + int(base[g])
                    if v < lo:
                        lo = v
                    if v > hi:
                        hi = v
                    if hi - lo >= _SAME_SPREAD:
                        break                 # not one sensor (the zero points differ)
                i += n_adc
            if j >= 4 and hi - lo < _SAME_SPREAD:
                x = int(mux_same[m]) + 1
                mux_same[m] = x
                if x >= _SAME_CHECKS:
                    out[k] = m
                    k += 1
            else:
                mux_same[m] = 0
        m += 1
        bank += 1
        if bank == banks:
            bank = 0
            adc += 1
    return k


@micropython.viper
def _toggled(n: int, toggles: ptr8, lim: int, bad_bits: ptr8, fl: ptr16, fl_n: int, fl_new: ptr16,
             out: ptr16, look: int) -> int:
    """Presence, at the end of a window: the cells that changed lim times or more and are not
    faulty (bad_bits: a bit a cell; only when look: no hand seen in the window). A cell in fl[:fl_n] (it flickered in
    the window before too) goes into out, to flag; the first 8 others into fl_new. Every cell's
    count is cleared. Returns len(out) << 4 | len(fl_new).
    A byte of toggles at a time (4 bits a cell, two a byte: shift_scan.unpack), a byte of 0 (both
    cells unchanged: nearly all of them) passed over at once: cell by cell, the whole grid cost
    3.1 ms on the chip, the monitor's frame at a window's end 4.8 ms at rest (issue 13)."""
    k = 0
    m = 0
    i = 0
    nb = (n + 1) >> 1
    while i < nb:
        b = int(toggles[i])
        if b != 0:
            toggles[i] = 0
            if look:
                g = i << 1
                while b != 0 and g < n:     # the byte's two cells, in order
                    if (b & 15) >= lim and (int(bad_bits[g >> 3]) & (1 << (g & 7))) == 0:
                        was = 0
                        q = 0
                        while q < fl_n:
                            if int(fl[q]) == g:
                                was = 1
                                break
                            q += 1
                        if was:
                            out[k] = g          # at most fl_n (8) of them
                            k += 1
                        elif m < 8:
                            fl_new[m] = g
                            m += 1
                    b = b >> 4
                    g += 1
        i += 1
    return (k << 4) | m


@micropython.viper
def _full(nsr: int, rows: int, pmask: ptr8, last: ptr8, full: ptr8, rps: int, line: int):
    """Presence: full[k] = 1 when shift register k reads every pad of every row covered (last:
    the scanner's last reading of every strobe; row r's first level at (r // rps) * line + (r %
    rps) * nsr, line: the bytes of one line's strobes of every level)."""
    k = 0
    while k < nsr:
        f = 1
        i = k
        j = k
        h = 0
        e = rows * nsr
        while i < e:
            m = int(pmask[i])
            if m != 0 and int(last[j]) != m:
                f = 0
                break
            i += nsr
            h += 1
            if h == rps:
                h = 0
                j += line - (rps - 1) * nsr
            else:
                j += nsr
        full[k] = f
        k += 1


@micropython.viper
def _hole_cells(n: int, kind: ptr8, xs: ptr32, ys: ptr32, rs: int, rb: int, grid: ptr8,
                usable: ptr8, buf: ptr16) -> int:
    """Presence: the usable pads that read uncovered within each of the n chips (at xs, ys; kind
    1: seen radius rs, else rb) less half a pitch of its seen radius, in the order of the plain
    loops (chip by chip, row by row), the first 8 into buf. Returns how many. _holes()'s search
    as machine code: in Python on the chip it cost 1.2 ms a chip every frame at rest."""
    s16 = 1 << 16
    nh = 0
    i = 0
    while i < n and nh < 8:
        x = int(xs[i])
        if (x >> 29) > 3:           # a 64-bit port reads an array('i') element without its sign
            x -= s16 * s16
        y = int(ys[i])
        if (y >> 29) > 3:
            y -= s16 * s16
        r = rb
        if int(kind[i]) == 1:
            r = rs
        r -= _P // 2
        c0 = (x - r - _X0) // _P
        r0 = (y - r - _Y0) // _P
        w = 2 * r // _P + 2
        rr = r0
        while rr < r0 + w and nh < 8:
            if rr >= 0 and rr < _ROWS:
                cc = c0
                while cc < c0 + w:
                    if cc >= 0 and cc < _COLS:
                        g = rr * _COLS + cc
                        if int(grid[g]) == 0 and int(usable[g]):
                            dx = _X0 + cc * _P - x
                            dy = _Y0 + rr * _P - y
                            if dx * dx + dy * dy <= r * r:
                                buf[nh] = g
                                nh += 1
                                if nh == 8:
                                    break
                    cc += 1
            rr += 1
        i += 1
    return nh


@micropython.viper
def _enqueue(found: ptr16, k: int, bad: ptr8, new: ptr16, newc: ptr8, nh: int, nn: int,
             mux_of: ptr8, mux_nbad: ptr8) -> int:
    """Hall: FaultMonitor._flag() for each of found[:k] (pad << 2 | code, from _pads), as
    machine code: each pad not yet faulty marked bad and queued while the queue has room, its
    mux's count of faulty pads raised. Returns the new queue length."""
    j = 0
    while j < k and nn < MAX_NEW:
        f = int(found[j])
        g = f >> 2
        code = f & 3
        if int(bad[g]) == 0:
            bad[g] = code + 1
            q = nh + nn
            if q >= MAX_NEW:
                q -= MAX_NEW
            new[q] = g
            newc[q] = code
            nn += 1
            m = int(mux_of[g])
            if m != 255 and int(mux_nbad[m]) < 255:
                mux_nbad[m] = int(mux_nbad[m]) + 1
        j += 1
    return nn


@micropython.viper
def _queue_muxes(found: ptr16, k: int, mux_bad: ptr8, kq: ptr8, kh: int, kn: int, nm: int) -> int:
    """FaultMonitor._kill_mux() for each of found[:k] (from _muxes): marked dead and queued to be
    reported, unless it is already. Returns the new queue length."""
    j = 0
    while j < k:
        m = int(found[j])
        if int(mux_bad[m]) == 0:
            mux_bad[m] = 1
            q = kh + kn
            if q >= nm:
                q -= nm
            kq[q] = m
            kn += 1
        j += 1
    return kn


@micropython.viper
def _leave_pads(bad: ptr8, ignore: ptr8, usable: ptr8, code: int, pads: ptr16, k: int,
                n: int, step: int) -> int:
    """Hall: the n pads pads[k], pads[k + step], ... (-1: none) faulty (bad, unless already) and
    left out of the fits (ignore 1, usable 0). Returns one of them, or -1."""
    g0 = -1
    e = k + n * step
    while k < e:
        g = int(pads[k])
        if (g & 0x8000) == 0:             # -1 (no pad): 0xFFFF through a ptr16
            if int(bad[g]) == 0:
                bad[g] = code
            ignore[g] = 1
            usable[g] = 0
            g0 = g
        k += step
    return g0


@micropython.viper
def _leave_cols(bad_bits: ptr8, usable: ptr8, c0: int, cols: int, rows: int) -> int:
    """Presence: the cells of columns c0 .. c0 + 7 (a shift register) in every row, as
    _leave_pads (faulty: their bits in bad_bits; the presence locator's ignore flags are its
    usable flags' complement). Returns one of them, or -1."""
    g0 = -1
    r = 0
    while r < rows:
        c = c0
        while c < c0 + 8 and c < cols:
            g = r * cols + c
            bad_bits[g >> 3] = int(bad_bits[g >> 3]) | (1 << (g & 7))
            usable[g] = 0
            g0 = g
            c += 1
        r += 1
    return g0


@micropython.viper
def _chatter_ends(off: int, count: ptr32, ia: int, ib: int, last: ptr32, t: ptr32, n: ptr32, now: int,
                  window: int, edges: int) -> int:
    """For each cup beam (end 0: input ia, end 1: ib) not switched off: the edges counted since
    the last frame (count[i] less last[end]; count[i] itself when the tracker cleared the
    counts) added to its window's count n[end], the window started again at `now` once older
    than `window` ms (t[end], time.ticks_diff on 30-bit ticks). Returns bit `end` set for each
    end whose window counted `edges` or more: its beam chatters."""
    res = 0
    end = 0
    while end < 2:
        i = ia if end == 0 else ib
        if (off & (1 << i)) == 0:
            c = count[i]
            d = c - last[end]
            if d < 0:
                d = c
            last[end] = c
            if ((now - t[end] + 0x20000000) & 0x3FFFFFFF) - 0x20000000 > window:
                t[end] = now
                n[end] = 0
            n[end] = n[end] + d
            if n[end] >= edges:
                res |= 1 << end
        end += 1
    return res


class FaultMonitor:
    # hall pads: the per-pad thresholds are the module's _RAIL ... _SAME_CHECKS (viper code)
    NUMB_FRAMES = 8         # still frames in a row a chip's fit leaves the same pad out
    MUX_MIN = 8             # faulty pads that make a whole mux dead
    # presence pads
    SPECK_FRAMES = 20       # frames a lone covered pad stays so: stuck on (or dirt on it)
    HOLE_FRAMES = 10        # still frames a pad inside a chip stays uncovered
    TOGGLES = 6             # changes in TOGGLE_WINDOW frames: flickering
    TOGGLE_WINDOW = 32
    SR_FRAMES = 4           # frames a whole shift register reads covered: stuck on
    # a hand seen this long, with no break of HAND_FRAMES frames, is reported: one left
    # hovering. A hand putting a chip down or lifting one is over the pads for some 0.3 - 0.7 s
    # (the simulator: 0.4 s, world.HAND_BEFORE_MS), which must never be reported (issue 4)
    HAND_MS = 1500
    HAND_FRAMES = 6         # frames without a hand that end one (and report it gone)
    # the locator's frames unreadable (loc.unread) this long without a break of READ_FRAMES
    # frames read, and none of the faults above being named meanwhile: reported
    UNREAD_MS = 2000
    READ_FRAMES = 4         # frames read in a row that end it (and report it gone)
    # cup beams
    CHATTER_EDGES = 6       # edges within CHATTER_MS: no chip or hand does that
    CHATTER_MS = 1000

    def __init__(self, scan, loc, fast, tracker, ev, shift):
        self.scan = scan
        self.loc = loc
        self.fast = fast
        self.tr = tracker
        self.ev = ev
        self.shift = shift
        self.frames = 0
        self.bufs = (bytearray(21), bytearray(21))     # the status text, two in turn (app.py
        self.nb = 0                                     # redraws on a new object)
        self.text = None        # the newest fault's text
        self.count = 0          # faults reported
        self.hand_on = 0
        self.hand_n = 0         # frames without a hand since one was seen
        self.hand_streak = 0    # a hand is being seen (gaps under HAND_FRAMES frames bridged) ...
        self.hand_since = 0     # ... since this ticks_ms
        self.unread_on = 0      # the unreadable condition (reported)
        self.read_n = 255       # frames read since an unreadable one (255: none lately) ...
        self.unread_since = 0   # ... and frames unreadable since this ticks_ms (gaps of
                                # fewer than READ_FRAMES frames read bridged)
        # pads found faulty, waiting to be handled (a ring: nh the oldest, nn of them; the first
        # nr of them are ready: their mux's faulty pads all counted, see _flush)
        self.new = array('h', bytes(2 * MAX_NEW))
        self.newc = bytearray(MAX_NEW)
        self.nh = 0
        self.nn = 0
        self.nr = 0
        # muxes found dead, waiting to be reported (kq: a ring of n_mux, kh the oldest, kn of them)
        self.kh = 0
        self.kn = 0
        self.wk_rep = 0         # this frame's work: reports queued, set_ignored calls, queued
        self.wk_ign = 0         # pads looked at, dead muxes left out
        self.wk_items = 0
        self.wk_kills = 0
        # reports waiting to be written (report()): a ring of _RQ, rh the oldest, rn of them
        self.rq_code = bytearray(_RQ)
        self.rq_a = array('h', bytes(2 * _RQ))
        self.rq_on = bytearray(_RQ)
        self.rh = 0
        self.rn = 0
        self.cw_t = array('i', (0, 0))
        self.cw_n = array('i', (0, 0))
        self.cw_last = array('i', (0, 0))
        if shift:
            self._init_presence()
        else:
            self._init_hall()
        self.mux_nbad = bytearray(self.n_mux)      # faulty pads of each mux (mux_code: of that code)
        self.kq = bytearray(self.n_mux)

    # -- the frame ---------------------------------------------------------------------------
    def frame(self):
        """Look for faults (reports are queued for report()). Returns 1 when a hand came or
        went (the status row shows it)."""
        self.frames = (self.frames + 1) & 0x3FFFFFFF
        self.wk_rep = 0
        self.wk_ign = 0
        self.wk_items = 0
        self.wk_kills = 0
        cond = self.hand_on | (self.unread_on << 1)
        self._chatter()
        if self.shift:
            self._presence()
        else:
            self._hall()
        self._work()
        self._unread()
        return 1 if (self.hand_on | (self.unread_on << 1)) != cond else 0

    def _unread(self):
        # frames the locator could not read (loc.unread: frames in a row), reported once they
        # last UNREAD_MS while this monitor names nothing (pads or muxes found and left out of
        # the fits make the frames readable again: every hall mux frozen is some 50 frames of
        # that), and gone once READ_FRAMES frames in a row were read
        if self.loc.unread:
            now = time.ticks_ms()
            if self.read_n == 255 or self.nn or self.kn or self.wk_kills or self.wk_items:
                self.unread_since = now
            self.read_n = 0
            if not self.unread_on and time.ticks_diff(now, self.unread_since) >= self.UNREAD_MS:
                self.unread_on = 1
                self._report(C_UNREAD, -1, -1, -1)
        elif self.read_n < 255:
            self.read_n += 1
            if self.read_n >= self.READ_FRAMES:
                self.read_n = 255
                if self.unread_on:
                    self.unread_on = 0
                    self._report(C_UNREAD, -1, -1, -1)

    # -- reports ------------------------------------------------------------------------------
    def _report(self, code, g, mux, cup):
        # a report, queued: written by report() in a step of its own (a report costs about as
        # much as the rest of the frame together). g: grid cell (its column and row), or -1
        n = self.rn
        if n >= _RQ:
            return                  # cannot happen: _work leaves room for chatter and hands
        q = self.rh + n
        if q >= _RQ:
            q -= _RQ
        self.rq_code[q] = code
        self.rq_a[q] = mux if code == C_MUX else (cup if code == C_CHATTER else g)
        self.rq_on[q] = 1 if (code != C_HAND or self.hand_on) and (code != C_UNREAD or self.unread_on) else 0
        self.rn = n + 1
        self.wk_rep += 1

    def report(self):
        """Write the oldest queued report (app.py: in a step that does not end a frame).
        Returns 1 when one was written (text: its text, for a pad or mux fault), else 0."""
        n = self.rn
        if not n:
            return 0
        q = self.rh
        self.rh = q + 1 if q + 1 < _RQ else 0
        self.rn = n - 1
        code = self.rq_code[q]
        a = self.rq_a[q]
        self._write(code, a if code != C_MUX and code != C_CHATTER else -1,
                    a if code == C_MUX else -1, a if code == C_CHATTER else -1, self.rq_on[q])
        return 1

    def _write(self, code, g, mux, cup, on):
        ev = self.ev
        ev.begin(b"fault")
        ev.str_(b"what", b"cup" if code == C_CHATTER else b"pads")
        ev.str_(b"code", CODE_NAMES[code])
        if g >= 0:
            ev.arr(b"pad")
            ev.int_(None, g % self.cols)
            ev.int_(None, g // self.cols)
            ev.close_arr()
        else:
            ev.null_(b"pad")
        if mux >= 0:
            ev.int_(b"mux", mux)
        if cup >= 0:
            ev.str_(b"cup", b"a" if cup == 0 else b"b")
        ev.bool_(b"on", on)
        ev.end()
        if code == C_HAND or code == C_UNREAD:
            return                  # conditions: the status row shows them while they last
        self.count += 1
        t = self.bufs[self.nb]
        self.nb ^= 1
        _blank(t, 0, 21, 32)
        if code == C_CHATTER:
            c = _put(t, 0, b"Cup ")
            t[c] = 97 + cup
            c = _put(t, c + 1, b" beam")
        elif code == C_MUX:
            c = _put(t, 0, b"Mux " if not self.shift else b"Reg ")
            c = _num(t, c, mux)
        else:
            c = _put(t, 0, b"Pad ")
            c = _num(t, c, g % self.cols)
            t[c] = 44
            c = _num(t, c + 1, g // self.cols)
        c = _put(t, c, _TEXT[code])
        self.text = t

    def _flag(self, g, code):
        # a faulty pad found: left out of the checks at once, queued until its mux is judged
        # (_flush) and its report's turn comes (_work)
        n = self.nn
        if n >= MAX_NEW:
            return
        if self.shift:
            b = 1 << (g & 7)
            if self.bad_bits[g >> 3] & b:
                return
            self.bad_bits[g >> 3] |= b
        else:
            if self.bad[g]:
                return
            self.bad[g] = code + 1
        q = self.nh + n
        if q >= MAX_NEW:
            q -= MAX_NEW
        self.new[q] = g
        self.newc[q] = code
        self.nn = n + 1
        m = self._mux_of(g)
        if m != 255 and (self.mux_code < 0 or code == self.mux_code) and self.mux_nbad[m] < 255:
            self.mux_nbad[m] += 1

    def _mux_of(self, g):
        # the mux of pad g (presence: the shift register of its column), 255: none
        if self.shift:
            return (g % BT.PRES_COLS) >> 3
        return self.mux_of[g]

    def _flush(self):
        # a whole round of checks is done (hall: every 4th frame; presence: every frame): the
        # pads queued so far have their mux's faulty pads counted, and can be told apart from
        # a dead mux (_work)
        self.nr = self.nn

    def _kill_mux(self, m):
        # mux m is dead: queued to be reported once (_work); its pads are skipped by the checks
        if self.mux_bad[m]:
            return
        self.mux_bad[m] = 1
        q = self.kh + self.kn
        if q >= self.n_mux:
            q -= self.n_mux
        self.kq[q] = m
        self.kn += 1

    def _work(self):
        # what is queued, within the frame's budget: MAX_KILLS dead muxes (presence: one
        # 74HC165, _KILLS_SHIFT; their pads left out of the fits at once, the mux reported),
        # MAX_ITEMS queued pads (left out, reported, or dropped as part of a dead mux), while
        # the report queue has room
        loc = self.loc
        kills = _KILLS_SHIFT if self.shift else MAX_KILLS
        while self.rn < _RQ - _RQ_FREE:
            if self.kn and self.wk_kills < kills:
                m = self.kq[self.kh]
                self.kh = self.kh + 1 if self.kh + 1 < self.n_mux else 0
                self.kn -= 1
                self.wk_kills += 1
                # every pad of the mux faulty and left out of the fits at once (Locator.
                # set_ignored's two flags, which both locators keep per grid cell, written
                # by machine code; then set_ignored() once for the locator's own bookkeeping)
                if self.shift:
                    g = _leave_cols(self.bad_bits, loc.usable, 8 * m, BT.PRES_COLS, BT.PRES_ROWS)
                else:
                    # mux m = adc * BANKS + bank: its channels' slots in the scan map
                    g = _leave_pads(self.bad, loc.ignore, loc.usable, C_MUX + 1, BT.SCAN_GRID,
                                    (m % BT.BANKS) * BT.CHANNELS * BT.N_ADC + m // BT.BANKS,
                                    BT.CHANNELS, BT.N_ADC)
                if g >= 0:
                    loc.set_ignored(g, 1)
                    self.wk_ign += 1
                self._report(C_MUX, -1, m, -1)
                continue
            if not self.nr or self.wk_items >= MAX_ITEMS:
                break
            q = self.nh
            g = self.new[q]
            code = self.newc[q]
            self.nh = q + 1 if q + 1 < MAX_NEW else 0
            self.nn -= 1
            self.nr -= 1
            self.wk_items += 1
            m = self._mux_of(g)
            if m != 255 and not self.mux_bad[m] and self.mux_nbad[m] >= self.mux_min:
                self._kill_mux(m)           # most of its mux is gone: reported as the mux
                continue
            if m != 255 and self.mux_bad[m]:
                continue                    # reported with its mux
            loc.set_ignored(g, 1)
            self.wk_ign += 1
            self._report(code, g, -1, -1)

    # -- cup beams --------------------------------------------------------------------------
    def _chatter(self):
        # each cup beam's edges counted over windows of CHATTER_MS (_chatter_ends: the
        # arithmetic of both ends in one call; in Python it cost 0.35 ms a frame on the chip)
        fast = self.fast
        r = _chatter_ends(fast.off, fast.count, F.CUP_A, F.CUP_B, self.cw_last, self.cw_t, self.cw_n,
                          time.ticks_ms(), self.CHATTER_MS, self.CHATTER_EDGES)  # type: ignore[arg-type]  # ticks: a small int
        if r:
            for end in (0, 1):
                if r & (1 << end):
                    fast.disable(F.CUP_A if end == 0 else F.CUP_B)
                    self._report(C_CHATTER, -1, -1, end)

    # -- hall pads ----------------------------------------------------------------------------
    def _init_hall(self):
        n = BT.PAD_COLS * BT.PAD_ROWS
        self.cols = BT.PAD_COLS
        self.n_grid = n
        self.prev = array('h', bytes(2 * n))
        self.same = bytearray(n)
        self.rail = bytearray(n)
        self.flick = bytearray(n)
        # each pad's change found at its check before last, /32 (capped): a pad is checked every
        # 4th frame, its neighbours at other frames, so with it a neighbour's two last changes
        # cover the whole of a pad's own 4 frames (see _pads)
        self.dlast = bytearray(n)
        self.bad = bytearray(n)          # fault code + 1 of a pad found faulty, 0: fine
        self.mux_min = self.MUX_MIN
        self.mux_code = -1               # any fault counts towards a dead mux
        # the first-level mux of each pad, from the scan map (gen_tables: mux = adc * 16 + bank)
        self.mux_of = bytearray(b"\xff" * n)
        nm = BT.N_ADC * BT.BANKS
        self.n_mux = nm
        # (mux m's pads are read from the scan map itself, _muxes, _leave_pads: a table of them,
        # mux by mux, was 1.5 KB of the chip's heap, issue 13)
        for bank in range(BT.BANKS):
            for ch in range(BT.CHANNELS):
                for adc in range(BT.N_ADC):
                    g = BT.SCAN_GRID[(bank * BT.CHANNELS + ch) * BT.N_ADC + adc]
                    if g >= 0:
                        m = adc * BT.BANKS + bank
                        self.mux_of[g] = m
        self.mux_bad = bytearray(nm)
        self.mux_same = bytearray(nm)
        self.out = array('H', bytes(2 * max(MAX_NEW, nm)))    # what _pads / _muxes found
        self.ou_g = array('h', bytes(2 * 8))       # pads left out of still chips' fits
        self.ou_n = bytearray(8)
        self.ou_seen = bytearray(8)
        self.ou_cells = array('h', bytes(2 * 8))

    def _hall(self):
        grid = self.scan.grid
        ph = self.frames & 3
        out = self.out
        k = _pads(ph, self.n_grid, BT.PAD_COLS, grid, self.prev, self.dlast, self.same, self.rail,
                  self.flick, self.bad, BT.PAD_PRESENT, out)
        if k:
            self.nn = _enqueue(out, k, self.bad, self.new, self.newc, self.nh, self.nn, self.mux_of,
                               self.mux_nbad)
        if (self.frames & 63) == 0:
            _decay(self.flick, self.n_grid)
        if ph == 0 or self.loc.unread:
            # every pad of a mux reading one sensor, or frozen at one reading: their raw
            # readings all alike, although their zero points differ. Every 4th frame, and every
            # frame while the locator reads none (hall_locate.FLAT: a mux frozen mid-scale is
            # such a frame until it is named; issue 13: it was named 25 frames, a second on the
            # chip, after it froze; every frame the pass costs some 0.2 ms on the chip)
            k = _muxes(self.n_mux, BT.CHANNELS, BT.BANKS, BT.N_ADC, BT.SCAN_GRID, self.mux_bad,
                       self.mux_same, grid, self.scan.baseline, out)
            if k:
                self.kn = _queue_muxes(out, k, self.mux_bad, self.kq, self.kh, self.kn, self.n_mux)
        self._numb(grid)
        if ph == 3:
            self._flush()           # a whole round of checks: a dead mux shows as one

    def _numb(self, grid):
        # a still chip fitted better without one of its pads (locate._reject): that pad, the
        # same one frame after frame, reads what no chip gives there: blind (near zero) or stuck
        loc = self.loc
        if not self.tr.at_rest():
            for q in range(8):
                self.ou_n[q] = 0
            return
        k = 0
        for i in range(loc.n):
            if loc.outlier[i] >= 0 and k < 8:
                self.ou_cells[k] = loc.outlier[i]
                k += 1
        if k == 0:
            _blank(self.ou_n, 0, 8, 0)      # _watch() of none (the usual frame), one call less
            return
        self._watch(self.ou_g, self.ou_n, self.ou_seen, self.ou_cells, k, self.NUMB_FRAMES, C_OFF)

    # -- presence pads ----------------------------------------------------------------------------
    def _init_presence(self):
        if (BT.PRES_PITCH, BT.PRES_X0, BT.PRES_Y0, BT.PRES_COLS, BT.PRES_ROWS) != (_P, _X0, _Y0, _COLS, _ROWS):
            raise ValueError("faults: _P, _X0, _Y0, _COLS, _ROWS must be board_table's")
        n = BT.PRES_COLS * BT.PRES_ROWS
        self.cols = BT.PRES_COLS
        self.n_grid = n
        # the pads found faulty, a bit a pad (bit g & 7 of byte g >> 3): with the presence pads
        # only whether a pad is faulty is read back, never its code (the hall pads' bad holds
        # it); a byte a pad was 4.6 KB of the chip's heap (issue 13)
        self.bad_bits = bytearray((n + 7) >> 3)
        self.mux_min = 2               # stuck-off pads in one register: the register is dead
        self.mux_code = C_OFF
        self.full = bytearray(BT.PRES_SR)
        self.new_holes = array('h', bytes(2 * 8))
        self.n_mux = BT.PRES_SR
        self.mux_bad = bytearray(BT.PRES_SR)
        self.sr_on = bytearray(BT.PRES_SR)
        self.sp_g = array('h', bytes(2 * 8))       # lone covered pads being watched
        self.sp_n = bytearray(8)
        self.sp_seen = bytearray(8)
        self.ho_g = array('h', bytes(2 * 8))       # uncovered pads inside still chips
        self.ho_n = bytearray(8)
        self.ho_seen = bytearray(8)
        self.version = -1
        self.hand_window = 0
        self.fl_g = array('h', bytes(2 * 8))      # pads that flickered in the last window
        self.fl_new = array('h', bytes(2 * 8))
        self.fl_out = array('h', bytes(2 * 8))      # pads that flickered in both (_toggled)
        self.fl_n = 0

    def _presence(self):
        sc = self.scan
        loc = self.loc
        # a hand: on once seen for HAND_MS, off after HAND_FRAMES frames without one
        if loc.hand:
            self.hand_n = 0
            now = time.ticks_ms()
            if not self.hand_streak:
                self.hand_streak = 1
                self.hand_since = now
            if not self.hand_on and time.ticks_diff(now, self.hand_since) >= self.HAND_MS:
                self.hand_on = 1
                g = ((loc.hand_y - BT.PRES_Y0 + BT.PRES_PITCH // 2) // BT.PRES_PITCH) * BT.PRES_COLS \
                    + (loc.hand_x - BT.PRES_X0 + BT.PRES_PITCH // 2) // BT.PRES_PITCH
                if g < 0 or g >= self.n_grid:
                    g = -1
                self._report(C_HAND, g, -1, -1)
        elif self.hand_streak:
            self.hand_n += 1
            if self.hand_n >= self.HAND_FRAMES:
                self.hand_n = 0
                self.hand_streak = 0
                if self.hand_on:
                    self.hand_on = 0
                    self._report(C_HAND, -1, -1, -1)
        # lone covered pads that stay so
        self._watch(self.sp_g, self.sp_n, self.sp_seen, loc.speck, loc.specks, self.SPECK_FRAMES, C_STUCK)
        # uncovered pads deep inside still chips
        self._holes()
        # flickering pads: too many changes in two windows in a row, neither of which a hand was
        # seen in (a hand's ragged edge switches pads too; by the board's edge a hand partly off
        # the pads is taken for chips in some frames, so a window just before the frames that
        # see it may hold its edge's changes: issue 4). A crowd (a changed group fitted as four
        # chips) is such a hand too: putting chips down by the end, one only ever seen as
        # crowds flagged two pads of its rim flickering, and a chip beside them was known 6 mm
        # less well from then on (a 4.85 mm nudge unseen, the seed-41 bowling bench, issue 12)
        if loc.hand or loc.crowd:
            self.hand_window = 1
        if self.frames % self.TOGGLE_WINDOW == 0:
            hw = self.hand_window
            self.hand_window = 0
            out = self.fl_out
            k = _toggled(self.n_grid, sc.toggles, self.TOGGLES, self.bad_bits, self.fl_g, self.fl_n,
                         self.fl_new, out, 0 if hw else 1)
            m = k & 15
            for q in range(k >> 4):
                self._flag(out[q], C_FLICKER)
            fl = self.fl_g
            for q in range(m):
                fl[q] = self.fl_new[q]
            self.fl_n = m
        # a shift register reading every pad covered, frame after frame
        if sc.version != self.version:
            self.version = sc.version
            _full(BT.PRES_SR, BT.PRES_ROWS, sc.pmask, sc.last, self.full, BT.PRES_RPS,
                  BT.PRES_LEVELS * BT.PRES_RPS * BT.PRES_SR)
        for k in range(BT.PRES_SR):
            if self.mux_bad[k] or not self.full[k]:
                self.sr_on[k] = 0
                continue
            if self.sr_on[k] < 255:
                self.sr_on[k] += 1
            if self.sr_on[k] >= self.SR_FRAMES:
                self._kill_mux(k)
        self._flush()

    def _watch(self, wg, wn, wseen, cells, n, frames, code):
        # cells[:n] seen this frame: count frames in a row per cell (8 watched at most)
        if n == 0:
            _blank(wn, 0, 8, 0)     # none seen: every count starts again (the usual frame)
            return
        for q in range(8):
            wseen[q] = 0
        for k in range(n):
            g = cells[k]
            if (self.bad_bits[g >> 3] & (1 << (g & 7))) if self.shift else self.bad[g]:
                continue
            free = -1
            hit = -1
            for q in range(8):
                if wn[q] and wg[q] == g:
                    hit = q
                    break
                if not wn[q] and free < 0:
                    free = q
            if hit < 0:
                if free < 0:
                    continue
                hit = free
                wg[hit] = g
                wn[hit] = 0
            wseen[hit] = 1
            if wn[hit] < 255:
                wn[hit] += 1
            if wn[hit] >= frames:
                self._flag(g, code)
                wn[hit] = 0
        for q in range(8):
            if not wseen[q]:
                wn[q] = 0

    def _holes(self):
        loc = self.loc
        if not self.tr.at_rest() or not loc.settled:
            for q in range(8):
                self.ho_n[q] = 0
            return
        buf = self.new_holes
        nh = _hole_cells(loc.n, loc.kind, loc.x, loc.y, loc.r_small, loc.r_big, self.scan.grid,
                         loc.usable, buf)
        self._watch(self.ho_g, self.ho_n, self.ho_seen, buf, nh, self.HOLE_FRAMES, C_OFF)

