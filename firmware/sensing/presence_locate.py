# Chips from a frame of presence pads (front end "shift", docs/sensing.md).
#
# The presence pads say only "covered" or not, on a 10 mm grid. A chip covers the pads within
# its seen radius (its radius less its rounded rim; r_seen, learnt by the calibration), so a
# still chip leaves a fixed pattern; its centre is wherever a disc of that radius reproduces the
# pattern, a small region (about 2 mm across) whose middle is the estimate and whose size is the
# uncertainty reported in unc[i]. Kind comes from size: a small chip covers 4 to 7 pads, a big
# one 8 to 14.
#
# find(grid):
#  1. the covered pads fall into groups of touching pads (8-neighbours);
#  2. a group of one or two pads is no chip (a speck: dirt, or a pad stuck on; `specks` lists
#     them for the fault monitor); a group larger than four big chips, or one no set of chips
#     explains, is a hand hovering over the pads (`hand`, `hand_x`, `hand_y`); so, for that
#     frame, is a changed group near the frame before's hand that one chip cannot explain (the
#     hand's patch going or coming, read half-way; searched again as chips once still);
#  3. otherwise every set of up to MAX_K chips whose area fits the group's is tried: seeded
#     by k-means on the group's pads, then each chip moved (steps of 4, 2 mm; on a still board
#     down to 0.5 mm) to where the discs and the pads disagree least (pads without a reading,
#     `set_ignored`, are left out); the set that disagrees least wins, a chip costing one pad;
#  4. on a still board (the group's pads as in the frame before) each chip is then centred in
#     the region of equally good positions, whose reach is unc[i]. Groups that did not change
#     keep their result, so a still board costs almost nothing;
#  5. a still chip keeps its rest fit while its pads allow it: a chip alone while they read at
#     most FLICKER levels off its rest pattern (_steady), a chip of a group while its rest fit
#     explains them as well as the group's joint fit (_hold): a fit moves only when its chip did;
#  6. on the chip, groups whose pads changed share a budget of time a frame (BUDGET_US, on the
#     chip's clock): past it their search stops, and what it had stands (issue 13: a bounded
#     frame). A still group's search stops there too, is kept (_park) and goes on next frame
#     where it stopped, its chips the frame before's meanwhile (cut | 2: not yet at rest).
#     Where the clock does not move within a loop turn (the simulator) nothing stops.
#
# The same results as locate.Locator: n, kind[i], x[i], y[i] (0.1 mm), strength[i] (ADC_PEAK for
# a chip found), err[i] (pads the fit gets wrong, x 100), unc[i]; set_ignored(g, flag).
# Integers only, allocation-free after construction. RAM: about 10 KB (4.6 KB cell labels,
# 4.6 KB usable flags, 2.4 KB of cell lists).
#
# The inner loop of every fit, how the pads a fit gets wrong change when one chip moves (delta(),
# most of a frame while chips move and settle), is a @micropython.viper function over the fit's
# arrays (docs/performance.md, "What would fix the rest", 2), and so are the move loop around it
# (moves()), the mismatch's pad loop (mismatch()) and the flood into groups (flood()); under
# CPython they run as plain Python. tests/test_presence_fit.py, _moves.py, _mismatch.py and
# _flood.py hold them to the plain code they replaced, under both runtimes.
import sys
import micropython
from micropython import const
from array import array

from tables.board_table import (PRES_COLS, PRES_ROWS, PRES_PITCH, PRES_X0, PRES_Y0, PRES_PRESENT,
                         PRES_LEVELS, PRES_LEV, R_SMALL, R_BIG, ADC_PEAK)
from tracking.shot import KIND_SMALL, KIND_BIG

N_CELLS = PRES_COLS * PRES_ROWS
MAX_FOUND = const(8)
MAX_COMP = const(16)       # groups of pads per frame at most
MAX_K = const(4)           # chips in one group at most
# issue 13: a hand covers about 65 pads, four big chips 56; a frame with this many covered is
# no chips but a fault (a dead 74HC165 chain reading every pad covered: flooding its 1200 took
# 1.8 s a frame on the chip). Such a frame is not read: the last chips stand, unread counts it
MAX_PLAUSIBLE = const(256)
# covered pads a frame holds at most: the flood stops at MAX_PLAUSIBLE, after a pad's 8
# neighbours at most (1200, every pad, before the bound: 1.9 KB of the chip's heap)
MAX_CELLS = const(264)
MAX_SPECK = const(8)
# A still group's search cut at the frame's budget (BUDGET_US) is kept in the last 64 of the
# seeds' 256 halfwords (the frame's covered pads, needed only while the groups are made: a
# frame of more than _SV of them drops it) and resumed next frame where it stopped: _SV + 0
# the phase (0: none kept; 1, 2: _follow's moves, the other size; 3 the sets; 4 refining; 5
# centring), 1 - 3 the group (its signature's two halves, its pads), 4 k, 5 mask, 6 best,
# 7 second, 8 bk, 9 ck, 10 where moves() stopped, 11 seeded / q / the chip being centred,
# 12 _follow's first size's mismatch, 13 hk; 16 - 63 hx, hy, hr, bx, by, br, cx, cy, cr, kx,
# ky, sx (4 each, 16 bits with their signs)
_SV = const(192)
SNAP = const(20)           # pads of a chip's rest pattern kept at most (a big chip: about 15)
_P = PRES_PITCH
# how far beyond a chip's seen edge a pad still sees it (its first level), and the mean square
# of the levels' offsets (0.1 mm^2: a chip of seen radius r gives its pads levels summing to
# about PRES_LEVELS * pi * (r^2 + _LEV_SQ) / P^2)
_REACH = PRES_LEV[0] if PRES_LEV[0] > 0 else 0
_LEV_SQ = sum(v * v for v in PRES_LEV) // PRES_LEVELS

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: delta() runs as plain Python over the arrays
        return x

    def ptr32(x):
        return x

    def ptr16(x):
        return x

# the grid as constants of this module, for the viper code (checked against board_table below)
_COLS = const(48)
_ROWS = const(96)
_PITCH = const(100)
_X0 = const(-2350)
_Y0 = const(-4750)
assert (_COLS, _ROWS, _PITCH, _X0, _Y0) == (PRES_COLS, PRES_ROWS, PRES_PITCH, PRES_X0, PRES_Y0)
_LEVELS = const(4)         # (moves() tests a pad's four levels one by one)
assert _LEVELS == PRES_LEVELS
assert _COLS == 48 and _COLS * _ROWS <= 21846      # flood(): h // 48 as (h * 21846) >> 20
# ... and the board's outline (_off_board; checked without importing the names, each of which
# would be a global of this module on the chip's heap)
_HALF_W = const(2400)
_HALF_L = const(4800)
_CORNER_SUM = const(6600)
_BT = sys.modules["tables.board_table"]
assert (_HALF_W, _HALF_L, _CORNER_SUM) == (_BT.HALF_W, _BT.HALF_L, _BT.CORNER_SUM)
del _BT

# the 8 directions a chip is moved in
_DX = (1, 1, 0, -1, -1, -1, 0, 1)
_DY = (0, 1, 1, 1, 0, -1, -1, -1)


@micropython.viper
def covered(grid: ptr8, usable: ptr8, rows_on: ptr8, seeds: ptr16, most: int) -> int:
    """The covered usable pads of the rows with a pad on (rows_on), in scan order, into seeds;
    their count, or most as soon as that many are found. In machine code: a dead 74HC165 chain
    covers every pad, and this scan in Python took 190 ms a frame on the chip (issue 13)."""
    n = 0
    r = 0
    while r < _ROWS:
        if rows_on[r]:
            g = r * _COLS
            e = g + _COLS
            while g < e:
                if grid[g]:
                    if usable[g]:
                        seeds[n] = g
                        n += 1
                        if n >= most:
                            return n
                g += 1
        r += 1
    return n


@micropython.viper
def delta(i: int, nx: int, ny: int, hx: ptr32, hy: ptr32, hr: ptr32, usable: ptr8,
          label: ptr8, win: ptr32, grid: ptr8) -> int:
    """How the mismatch of a fit (k chips at hx, hy of seen radius hr) changes when chip i moves
    to (nx, ny): over the pads of the window (win: c0, c1, r0, r1, the group's label, what two
    chips may overlap by before they count as overlapping (0.1 mm, less than 2 x the rim), what
    that costs, the number of levels L, the L levels' offsets beyond a chip's seen edge, then
    k: ten arguments, as many as the call made before the levels, which allocates nothing)
    that are usable and not another group's, a pad whose level (the most any chip gives it:
    how many levels' reach its centre lies within) changes under chip i counts how much nearer
    to or farther from the level it reads (grid; 0 off the group) that takes it.
    PresenceLocator._delta's work, in machine code on the Pico."""
    # a 64-bit port reads an array('i') element without its sign: a negative value (within
    # -2^30) comes as 2^32 less, which is taken off again (never on the Pico, nor in CPython)
    s16 = 1 << 16
    ox = int(hx[i])
    if (ox >> 29) > 3:
        ox -= s16 * s16
    oy = int(hy[i])
    if (oy >> 29) > 3:
        oy -= s16 * s16
    r = int(hr[i])
    nlev = int(win[7])
    k = int(win[8 + nlev])
    reach = int(win[8])
    if (reach >> 29) > 3:
        reach -= s16 * s16
    if reach < 0:
        reach = 0
    lo_x = (ox if ox < nx else nx) - r - reach
    hi_x = (ox if ox > nx else nx) + r + reach
    lo_y = (oy if oy < ny else ny) - r - reach
    hi_y = (oy if oy > ny else ny) + r + reach
    # the columns c0..c1 and rows q0..q1 whose pads can be under the chip, in the window: from
    # the window's, as (v - X0) // P would give them (floor), without a division
    c0 = int(win[0])
    c1 = int(win[1])
    q0 = int(win[2])
    q1 = int(win[3])
    while c0 <= c1 and _X0 + (c0 + 1) * _PITCH <= lo_x:
        c0 += 1
    while c1 >= c0 and _X0 + (c1 - 1) * _PITCH > hi_x:
        c1 -= 1
    while q0 <= q1 and _Y0 + (q0 + 1) * _PITCH <= lo_y:
        q0 += 1
    while q1 >= q0 and _Y0 + (q1 - 1) * _PITCH > hi_y:
        q1 -= 1
    cur = int(win[4])
    tol = int(win[5])
    if (tol >> 29) > 3:
        tol -= s16 * s16
    ovl = int(win[6])
    d = 0
    t = 0
    while t < k:
        if t != i:
            lim = r + int(hr[t]) + tol
            lim *= lim
            xt = int(hx[t])
            if (xt >> 29) > 3:
                xt -= s16 * s16
            yt = int(hy[t])
            if (yt >> 29) > 3:
                yt -= s16 * s16
            ax = xt - ox
            ay = yt - oy
            if ax * ax + ay * ay < lim:
                d -= ovl
            ax = xt - nx
            ay = yt - ny
            if ax * ax + ay * ay < lim:
                d += ovl
        t += 1
    rr = q0
    while rr <= q1:
        py = _Y0 + rr * _PITCH
        cc = c0
        while cc <= c1:
            g = rr * _COLS + cc
            cc += 1
            if not usable[g]:
                continue
            lb = int(label[g])
            if lb and lb != cur:
                continue        # another group's pad: not this fit's to explain
            px = _X0 + (cc - 1) * _PITCH
            # chip i's level at this pad, before and after
            ax = px - ox
            ay = py - oy
            d2 = ax * ax + ay * ay
            was = 0
            while was < nlev:
                o = int(win[8 + was])
                if (o >> 29) > 3:
                    o -= s16 * s16
                lim = r + o
                if lim < 0 or d2 > lim * lim:
                    break
                was += 1
            ax = px - nx
            ay = py - ny
            d2 = ax * ax + ay * ay
            now = 0
            while now < nlev:
                o = int(win[8 + now])
                if (o >> 29) > 3:
                    o -= s16 * s16
                lim = r + o
                if lim < 0 or d2 > lim * lim:
                    break
                now += 1
            if was == now:
                continue
            # the other chips' level here: the pad reads the most any chip gives it
            other = 0
            t = 0
            while t < k:
                if t != i:
                    xt = int(hx[t])
                    if (xt >> 29) > 3:
                        xt -= s16 * s16
                    yt = int(hy[t])
                    if (yt >> 29) > 3:
                        yt -= s16 * s16
                    ax = px - xt
                    ay = py - yt
                    d2 = ax * ax + ay * ay
                    rt = int(hr[t])
                    q = 0
                    while q < nlev:
                        o = int(win[8 + q])
                        if (o >> 29) > 3:
                            o -= s16 * s16
                        lim = rt + o
                        if lim < 0 or d2 > lim * lim:
                            break
                        q += 1
                    if q > other:
                        other = q
                t += 1
            if other > was:
                was = other
            if other > now:
                now = other
            if was == now:
                continue
            seen = 0
            if lb == cur:
                seen = int(grid[g])
            e = now - seen
            if e < 0:
                e = -e
            f = was - seen
            if f < 0:
                f = -f
            d += e - f
        rr += 1
    return d


@micropython.viper
def mismatch(hx: ptr32, hy: ptr32, hr: ptr32, usable: ptr8, label: ptr8, win: ptr32,
             grid: ptr8) -> int:
    """The level steps the k chips at hx, hy of seen radius hr get wrong over the pads of the
    window (win as for delta(): c0, c1, r0, r1, the group's label, ..., the levels, then k) that
    are usable and not another group's: at each, the most any chip gives it against what it
    reads (grid; 0 off the group). PresenceLocator._mismatch's pad loop, in machine code on the
    Pico (issue 13: 28.6 ms a call in Python)."""
    s16 = 1 << 16       # a 64-bit port reads a negative array('i') element as 2^32 more (delta)
    nlev = int(win[7])
    k = int(win[8 + nlev])
    c0 = int(win[0])
    c1 = int(win[1])
    cur = int(win[4])
    m = 0
    rr = int(win[2])
    r1 = int(win[3])
    while rr <= r1:
        py = _Y0 + rr * _PITCH
        cc = c0
        while cc <= c1:
            g = rr * _COLS + cc
            cc += 1
            if not usable[g]:
                continue
            lb = int(label[g])
            if lb and lb != cur:
                continue        # another group's pad: not this fit's to explain
            px = _X0 + (cc - 1) * _PITCH
            pred = 0
            t = 0
            while t < k:
                xt = int(hx[t])
                if (xt >> 29) > 3:
                    xt -= s16 * s16
                yt = int(hy[t])
                if (yt >> 29) > 3:
                    yt -= s16 * s16
                ax = px - xt
                ay = py - yt
                d2 = ax * ax + ay * ay
                rt = int(hr[t])
                q = 0
                while q < nlev:
                    o = int(win[8 + q])
                    if (o >> 29) > 3:
                        o -= s16 * s16
                    lim = rt + o
                    if lim < 0 or d2 > lim * lim:
                        break
                    q += 1
                if q > pred:
                    pred = q
                t += 1
            seen = 0
            if lb == cur:
                seen = int(grid[g])
            e = pred - seen
            if e < 0:
                e = -e
            m += e
        rr += 1
    return m


@micropython.viper
def moves(s: int, last: int, hold: int, hx: ptr32, hy: ptr32, hr: ptr32, usable: ptr8,
          label: ptr8, win: ptr32, grid: ptr8) -> int:
    """PresenceLocator._moves in machine code (issue 13: its Python loop around delta() cost
    0.3 ms a move tried on the chip): each of the k chips at hx, hy (radius hr; win as for
    delta(), k after the levels) not held (bit i of hold) moved by s in the direction of the 8
    that lowers the mismatch most, as long as one does; up to 6 rounds over the chips, then s
    halved, down to last. The moves tried are delta()'s, to the pad: the same fit as the
    Python loop, move for move. It stops before a chip's next 8 moves once win[9 + L] of them
    have been tried (a slice of the search: _moves looks at the clock between slices), and
    leaves where it stopped in win[10 + L] (s << 8 | round << 4 | chip << 1 | moved this
    round; 0: the search finished). Called with win[10 + L] not 0 it resumes there (s and last
    as at the start): a search in slices is the search in one call, move for move. Returns
    the moves tried."""
    s16 = 1 << 16       # a 64-bit port reads a negative array('i') element as 2^32 more (delta)
    nlev = int(win[7])
    k = int(win[8 + nlev])
    most = int(win[9 + nlev])
    at = int(win[10 + nlev])
    win[10 + nlev] = 0
    # where a search stopped: its step, round, chip and whether a chip moved in that round
    round0 = 0
    chip0 = 0
    moved0 = 0
    if at:
        s = at >> 8
        round0 = (at >> 4) & 15
        chip0 = (at >> 1) & 7
        moved0 = at & 1
    reach = int(win[8])
    if (reach >> 29) > 3:
        reach -= s16 * s16
    if reach < 0:
        reach = 0
    tol = int(win[5])
    if (tol >> 29) > 3:
        tol -= s16 * s16
    ovl = int(win[6])
    cur = int(win[4])
    # the _LEVELS levels' offsets beyond a chip's seen edge
    o0 = int(win[8])
    if (o0 >> 29) > 3:
        o0 -= s16 * s16
    o1 = int(win[9])
    if (o1 >> 29) > 3:
        o1 -= s16 * s16
    o2 = int(win[10])
    if (o2 >> 29) > 3:
        o2 -= s16 * s16
    o3 = int(win[11])
    if (o3 >> 29) > 3:
        o3 -= s16 * s16
    tried = 0
    while s >= last:
        rounds = round0
        round0 = 0
        while rounds < 6:
            moved = moved0
            moved0 = 0
            i = chip0
            chip0 = 0
            while i < k:
                if (hold >> i) & 1:
                    i += 1
                    continue
                while True:
                    if tried >= most:
                        win[10 + nlev] = (s << 8) | (rounds << 4) | (i << 1) | moved
                        return tried
                    ox = int(hx[i])
                    if (ox >> 29) > 3:
                        ox -= s16 * s16
                    oy = int(hy[i])
                    if (oy >> 29) > 3:
                        oy -= s16 * s16
                    r = int(hr[i])
                    # chip i's level at a pad: how many of the squared reaches (r + each
                    # level's offset, -1 where that is negative) its distance^2 is within
                    l0 = r + o0
                    l0 = l0 * l0 if l0 >= 0 else -1
                    l1 = r + o1
                    l1 = l1 * l1 if l1 >= 0 else -1
                    l2 = r + o2
                    l2 = l2 * l2 if l2 >= 0 else -1
                    l3 = r + o3
                    l3 = l3 * l3 if l3 >= 0 else -1
                    bd = 0
                    bj = -1
                    dj = 0
                    while dj < 8:
                        # the 8 directions of _DX, _DY: E, NE, N, NW, W, SW, S, SE
                        sx = 0
                        if dj <= 1 or dj == 7:
                            sx = s
                        elif dj >= 3 and dj <= 5:
                            sx = 0 - s
                        sy = 0
                        if dj >= 1 and dj <= 3:
                            sy = s
                        elif dj >= 5:
                            sy = 0 - s
                        nx = ox + sx
                        ny = oy + sy
                        tried += 1
                        # -- delta(i, nx, ny), as there --
                        lo_x = (ox if ox < nx else nx) - r - reach
                        hi_x = (ox if ox > nx else nx) + r + reach
                        lo_y = (oy if oy < ny else ny) - r - reach
                        hi_y = (oy if oy > ny else ny) + r + reach
                        c0 = int(win[0])
                        c1 = int(win[1])
                        q0 = int(win[2])
                        q1 = int(win[3])
                        while c0 <= c1 and _X0 + (c0 + 1) * _PITCH <= lo_x:
                            c0 += 1
                        while c1 >= c0 and _X0 + (c1 - 1) * _PITCH > hi_x:
                            c1 -= 1
                        while q0 <= q1 and _Y0 + (q0 + 1) * _PITCH <= lo_y:
                            q0 += 1
                        while q1 >= q0 and _Y0 + (q1 - 1) * _PITCH > hi_y:
                            q1 -= 1
                        d = 0
                        t = 0
                        while t < k:
                            if t != i:
                                lim = r + int(hr[t]) + tol
                                lim *= lim
                                xt = int(hx[t])
                                if (xt >> 29) > 3:
                                    xt -= s16 * s16
                                yt = int(hy[t])
                                if (yt >> 29) > 3:
                                    yt -= s16 * s16
                                ax = xt - ox
                                ay = yt - oy
                                if ax * ax + ay * ay < lim:
                                    d -= ovl
                                ax = xt - nx
                                ay = yt - ny
                                if ax * ax + ay * ay < lim:
                                    d += ovl
                            t += 1
                        rr = q0
                        while rr <= q1:
                            py = _Y0 + rr * _PITCH
                            cc = c0
                            while cc <= c1:
                                g = rr * _COLS + cc
                                cc += 1
                                if not usable[g]:
                                    continue
                                lb = int(label[g])
                                if lb and lb != cur:
                                    continue
                                px = _X0 + (cc - 1) * _PITCH
                                ax = px - ox
                                ay = py - oy
                                d2 = ax * ax + ay * ay
                                was = 0
                                if d2 <= l0:
                                    was = 1
                                    if d2 <= l1:
                                        was = 2
                                        if d2 <= l2:
                                            was = 3
                                            if d2 <= l3:
                                                was = 4
                                ax = px - nx
                                ay = py - ny
                                d2 = ax * ax + ay * ay
                                now = 0
                                if d2 <= l0:
                                    now = 1
                                    if d2 <= l1:
                                        now = 2
                                        if d2 <= l2:
                                            now = 3
                                            if d2 <= l3:
                                                now = 4
                                if was == now:
                                    continue
                                other = 0
                                t = 0
                                while t < k:
                                    if t != i:
                                        xt = int(hx[t])
                                        if (xt >> 29) > 3:
                                            xt -= s16 * s16
                                        yt = int(hy[t])
                                        if (yt >> 29) > 3:
                                            yt -= s16 * s16
                                        ax = px - xt
                                        ay = py - yt
                                        d2 = ax * ax + ay * ay
                                        rt = int(hr[t])
                                        q = 0
                                        while q < nlev:
                                            o = int(win[8 + q])
                                            if (o >> 29) > 3:
                                                o -= s16 * s16
                                            lim = rt + o
                                            if lim < 0 or d2 > lim * lim:
                                                break
                                            q += 1
                                        if q > other:
                                            other = q
                                    t += 1
                                if other > was:
                                    was = other
                                if other > now:
                                    now = other
                                if was == now:
                                    continue
                                seen = 0
                                if lb == cur:
                                    seen = int(grid[g])
                                e = now - seen
                                if e < 0:
                                    e = -e
                                f = was - seen
                                if f < 0:
                                    f = -f
                                d += e - f
                            rr += 1
                        # -- the best of the 8 (the first of equals) --
                        if d < bd:
                            bd = d
                            bj = dj
                        dj += 1
                    if bj < 0:
                        break
                    sx = 0
                    if bj <= 1 or bj == 7:
                        sx = s
                    elif bj >= 3 and bj <= 5:
                        sx = 0 - s
                    sy = 0
                    if bj >= 1 and bj <= 3:
                        sy = s
                    elif bj >= 5:
                        sy = 0 - s
                    hx[i] = ox + sx
                    hy[i] = oy + sy
                    moved = 1
                i += 1
            if not moved:
                break
            rounds += 1
        s >>= 1
    return tried


@micropython.viper
def flood(grid: ptr8, usable: ptr8, label: ptr8, cells: ptr16, seeds: ptr16, g0: ptr16,
          sig: ptr32, sx_of: ptr32, sy_of: ptr32, counts: int) -> int:
    """PresenceLocator._groups' flood in machine code (issue 13: in Python a hand's pads took
    45 - 50 ms a frame on the chip). counts: the frame before's cells, whose labels are cleared
    first, and the seeds << 16. Each seed (covered usable pads, scan order) not yet in a group
    starts one,
    flooded over its 8 neighbours that are covered and usable (cells[] the queue; a group's
    label is its number + 1), MAX_COMP groups and MAX_CELLS cells at most, stopping once
    MAX_PLAUSIBLE cells are taken: g0[j] where group j's cells start (g0[ng] = nc), sig[j] its
    signature (each cell and its level), sx_of[j], sy_of[j] its cells' columns and rows
    summed. Returns nc | ng << 16."""
    k = 0
    n_old = counts & 0xFFFF
    while k < n_old:
        label[cells[k]] = 0
        k += 1
    ns = counts >> 16
    nc = 0
    ng = 0
    s = 0
    while s < ns:
        g = int(seeds[s])
        s += 1
        if label[g]:
            continue
        if ng >= MAX_COMP or nc >= MAX_CELLS:
            break
        g0[ng] = nc
        ng += 1
        label[g] = ng
        cells[nc] = g
        nc += 1
        q = nc - 1
        sg = 0
        sx = 0
        sy = 0
        while q < nc and nc < MAX_PLAUSIBLE:
            h = int(cells[q])
            q += 1
            sg = (sg * 31 + h * 5 + int(grid[h])) & 0xFFFFFF
            hr = (h * 21846) >> 20          # h // _COLS, without a division (exact for h < 21846)
            hc = h - hr * _COLS
            sx += hc
            sy += hr
            rr = hr - 1
            while rr <= hr + 1:
                if rr >= 0 and rr < _ROWS:
                    cc = hc - 1
                    while cc <= hc + 1:
                        if cc >= 0 and cc < _COLS:
                            e = rr * _COLS + cc
                            if grid[e] and usable[e] and not label[e] and nc < MAX_CELLS:
                                label[e] = ng
                                cells[nc] = e
                                nc += 1
                        cc += 1
                rr += 1
        sig[ng - 1] = sg
        sx_of[ng - 1] = sx
        sy_of[ng - 1] = sy
        if nc >= MAX_PLAUSIBLE:
            break
    g0[ng] = nc
    return nc | (ng << 16)


class _Ignored:
    """PresenceLocator.ignore: 1 where a pad sits but is left out of the fits (set_ignored),
    read as the bytearray it was (ignore[g], len(ignore))."""
    def __init__(self, usable):
        self.usable = usable

    def __len__(self):
        return N_CELLS

    def __getitem__(self, g):
        if g < 0 or g >= N_CELLS:
            raise IndexError
        return 1 if not self.usable[g] and (PRES_PRESENT[g >> 3] >> (g & 7)) & 1 else 0


class PresenceLocator:
    GRADED = False         # every chip seen alike (no strength); a hand is seen (tracker.py)
    pace = 0               # no refresh fit paced over loop turns (the hall locator's, app.py)
    RIM = 10               # 0.1 mm: the chips' seen radius is their radius less this, until calibrated
    PER_CHIP = 2           # pads: what one chip more costs a fit (so that a set of fewer wins a tie)
    OVERLAP = 3            # pads: what two chips overlapping costs a fit
    OVERLAP_TOL = 30       # 0.1 mm: closer than touching by this much is overlapping
    COARSE = 30            # 0.1 mm: the uncertainty of a fit while the pads change (2 mm steps)
    TOUCHING = 40          # 0.1 mm: more uncertainty for a chip in a group of several
    BLIND = 60             # 0.1 mm: more uncertainty for a chip over pads without a reading
    SPREAD = 6             # 0.1 mm: how far a pad's switching point strays from the chip's edge
    # while the pads change (_follow): a changed group is fitted from the chips of the frame
    # before within FOLLOW_REACH of it, and kept if it gets at most FOLLOW_MISS + 1/8 of its
    # pads wrong; else every set of chips is tried
    FOLLOW_REACH = 900     # 0.1 mm: a chip moves up to 90 mm a frame (tracker.MAX_JUMP)
    FOLLOW_MISS = 2
    # A chip alone at rest keeps its fit while its pads read at most FLICKER levels off the
    # pattern that fit was made of (its rest pattern: one pad switching at one level's threshold
    # is noise, and moved a still fit by up to 2.5 mm); every move of 3 mm changes two levels or
    # more (docs/sensing.md, "Moves the presence pads cannot see"). So a still fit moves only
    # when the chip did, and the tracker's move tolerance can be MOVE_TOL (issue 12: 2 mm + 1.1
    # mm of wander hid moves of 3.0 - 3.4 mm)
    FLICKER = 1
    # Chips touching are fitted jointly, so a pad's flicker or a neighbour's move slides the
    # whole fit: a still chip's fit moved with its neighbour's. A chip of a group at rest whose
    # rest fit (within HOLD_NEAR of the joint fit) explains the pads as well as the joint fit,
    # to FLICKER level steps, the others fitted around it, stays at its rest fit (_hold); so a
    # touching chip's fit, too, moves only when the chip did, and it needs no wander (issue 12:
    # 4 mm of it hid nudges of 3.7 and 3.8 mm of chips lying against another)
    HOLD_NEAR = 80         # 0.1 mm
    HAND_NEAR = 900        # 0.1 mm: a chip this near a hand's centre may seem to move (COARSE)
    # The time a frame's fit may take on the chip's clock (us, from find()'s start) for groups
    # whose pads change (issue 13: on the chip a moving chip's smeared pads, not followed, were
    # searched in full: 4,624 moves, 2.65 s, and the strike was lost). Past it a changed group's
    # search stops, and what it had stands (the best set tried, else the chips of the frame
    # before followed): such a fit is coarse and is looked at again next frame, as every
    # changed group's. A still group's search stops there too, and is kept and resumed next
    # frame (_park: cutting it as a changed group's would stop it at the same point every
    # frame, and its fit is the verdict's; four touching chips at rest took 1.26 s). The
    # search runs in slices of SLICE moves (moves() resumes where it stopped: the same search),
    # the clock read between them (about 0.1 ms a move on the chip: 5 ms a slice). The clock
    # is `clock` (time.ticks_us on the rp2 port; None elsewhere: never cut). A move budget
    # (presmove2, reverted) cut the desktop's searches too: a verdict sure but wrong (seed 43)
    BUDGET_US = 25000
    SLICE = 48
    MOVE_TOL = 10          # 0.1 mm (tracker.py): a 3 mm move moved the fit 1.4 mm at least

    def __init__(self, scanner=None):
        self.scan = scanner
        self.n = 0
        self.kind = bytearray(MAX_FOUND)
        self.x = array('i', bytes(4 * MAX_FOUND))
        self.y = array('i', bytes(4 * MAX_FOUND))
        self.strength = array('i', bytes(4 * MAX_FOUND))
        self.err = array('i', bytes(4 * MAX_FOUND))
        self.unc = array('i', bytes(4 * MAX_FOUND))
        # how far a still chip's fit may move from frame to frame (the tracker's tolerances):
        # a still pattern's fit does not move at all, so not the region of equal fits that unc
        # holds (2 - 3 mm for a chip alone: a move of 5 mm went unseen, issue 12), only what
        # can change the fit without the chip moving: pads without a reading; COARSE while its
        # pattern changes (a still chip keeps its rest fit through a flicker, alone or touching
        # others: _steady, _hold)
        self.wander = array('i', bytes(4 * MAX_FOUND))
        self.hand = 0
        self.unread = 0          # frames in a row too implausible to read (MAX_PLAUSIBLE), 0: read
        self.hand_x = 0
        self.hand_y = 0
        self.hand_cells = 0
        # a changed group fitted as MAX_K chips this frame: what a hand by the edge, partly off
        # the pads, looks like (its ragged rim changes every frame); the fault monitor takes it
        # for a hand (faults.py, flickering pads)
        self.crowd = 0
        self.specks = 0
        self.speck = array('h', bytes(2 * MAX_SPECK))
        self.r_small = R_SMALL - self.RIM      # seen radii (calibration: set_radii)
        self.r_big = R_BIG - self.RIM
        # usable[g]: a pad sits at g and is not left out of the fits. Which pads are left out
        # (ignore[g], for the calibration and the pad map) follows from it and PRES_PRESENT, so
        # it is a view of the two rather than another byte per cell (4.6 KB of the chip's heap)
        self.usable = bytearray(N_CELLS)
        self.ignore = _Ignored(self.usable)
        for g in range(N_CELLS):
            self.usable[g] = (PRES_PRESENT[g >> 3] >> (g & 7)) & 1
        # groups of this frame
        self.label = bytearray(N_CELLS)        # group number + 1 this frame, 0: none
        self.cells = array('h', bytes(2 * MAX_CELLS))
        # the frame's covered usable pads in scan order (covered()), the floods' seeds: 0.5 KB
        self.seeds = array('H', bytes(2 * MAX_PLAUSIBLE))
        # rows_on without a scanner (tests); with one, none (96 B of the chip's heap: the time
        # budget's 16 B took the presence image's heap below the floor)
        self.all_rows = bytearray(b"\x01" * PRES_ROWS) if scanner is None else None
        self.nc = 0
        self.g0 = array('h', bytes(2 * (MAX_COMP + 1)))   # group j: cells[g0[j]:g0[j + 1]]
        self.ng = 0
        self.sig = array('i', bytes(4 * MAX_COMP))         # a group's signature
        self.gcx = array('i', bytes(4 * MAX_COMP))         # the centroid of its pads
        self.gcy = array('i', bytes(4 * MAX_COMP))
        self.res0 = bytearray(MAX_COMP)                    # its chips: found[res0[j]:res0[j] + resn[j]]
        self.resn = bytearray(MAX_COMP)                    # 255: a hand
        self.fine = bytearray(MAX_COMP)
        # the frame before's groups and results, to reuse on a still board
        self.psig = array('i', bytes(4 * MAX_COMP))
        self.pcount = array('h', bytes(2 * MAX_COMP))
        self.pres0 = bytearray(MAX_COMP)
        self.presn = bytearray(MAX_COMP)
        self.pfine = bytearray(MAX_COMP)
        self.png = 0
        self.pkind = bytearray(MAX_FOUND)
        self.px = array('i', bytes(4 * MAX_FOUND))
        self.py = array('i', bytes(4 * MAX_FOUND))
        self.perr = array('i', bytes(4 * MAX_FOUND))
        self.punc = array('i', bytes(4 * MAX_FOUND))
        self.pwan = array('i', bytes(4 * MAX_FOUND))
        self.pn = 0
        self.pclaim = bytearray(MAX_FOUND)  # the group nearest each chip of the frame before
        self.gx = 0         # the centroid of the group being fitted
        self.gy = 0
        # a fit: the group's window and its chips
        self.hx = array('i', bytes(4 * MAX_K))
        self.hy = array('i', bytes(4 * MAX_K))
        self.hr = array('i', bytes(4 * MAX_K))
        self.hk = 0
        self.bx = array('i', bytes(4 * MAX_K))       # the best set so far
        self.by = array('i', bytes(4 * MAX_K))
        self.br = array('i', bytes(4 * MAX_K))
        self.bk = 0
        self.cnt = array('i', bytes(4 * MAX_K))
        self.sx = array('i', bytes(4 * MAX_K))
        self.sw = array('i', bytes(4 * MAX_K))      # _done: each chip's wander
        self.sy = array('i', bytes(4 * MAX_K))
        self.cx = array('i', bytes(4 * MAX_K))       # the second best set
        self.cy = array('i', bytes(4 * MAX_K))
        self.cr = array('i', bytes(4 * MAX_K))
        self.ck = 0
        self.kx = array('i', bytes(4 * MAX_K))       # k-means seeds
        self.ky = array('i', bytes(4 * MAX_K))
        self.cur = 0        # the group being fitted (its label)
        # its window (columns c0..c1, rows r0..r1: no attributes of their own, 32 B of the
        # chip's heap) and the overlap rule for delta(): c0, c1, r0, r1, cur, 2 RIM - OVERLAP_TOL,
        # OVERLAP, the levels (their count, then each), k; for moves() the moves a slice may
        # try, where it stopped, and the frame's deadline (clock)
        self.win = array('i', bytes(4 * (12 + PRES_LEVELS)))
        self.win[7] = PRES_LEVELS
        for q in range(PRES_LEVELS):
            self.win[8 + q] = PRES_LEV[q]
        self.grid = None    # the frame's levels (find)
        self.tried = 0      # moves tried (moves(), delta()), all told
        # the chip's clock (us, ticks of 2**30) for the frame's budget (BUDGET_US): the rp2
        # port's; None elsewhere (under the simulator's clock, which stands still within a loop
        # turn, no search is cut either; not reading it leaves its trace of the firmware's
        # clock readings as it was, bench/sim_trace.py)
        self.clock = __import__("time").ticks_us if sys.platform == "rp2" else None
        self.cut = 0        # 1: a search stopped at the budget this frame; | 2: a still one
        self.fm = 0         # _follow's fit of a changed group: its cost (the fit: cx, cy, cr, ck)
        self.tot = 0        # the group being fitted: its pads' levels summed
        self.last_version = -1
        self.settled = 0
        # rest patterns (_steady): MAX_FOUND entries, each a chip's pads and levels at rest and
        # the fit made of them; src[i]: result i's entry (-1 none; 100 + j while group j's pads
        # are to become its new one, _keep_rest), psrc the frame before's
        # a pad of a pattern: cell << 3 | its level (levels 1 .. 4; N_CELLS << 3 < 2**16)
        if PRES_LEVELS > 7 or N_CELLS > 8192:
            raise ValueError("presence_locate: rest patterns hold cell << 3 | level in 16 bits")
        self.st_cells = array('H', bytes(2 * SNAP * MAX_FOUND))
        self.st_n = bytearray(MAX_FOUND)             # pads, 0: a free entry
        self.st_fit = array('i', bytes(4 * 6 * MAX_FOUND))
        # an entry made of a chip in a group of several (_hold): its fit only, no pads (st_n 0);
        # src 200 + j while group j's chip is to become one
        self.st_grp = bytearray(MAX_FOUND)
        self.src = array('h', bytes(2 * MAX_FOUND))
        self.psrc = array('h', b"\xff\xff" * MAX_FOUND)

    # -- set-up ---------------------------------------------------------------------------------
    def set_ignored(self, g, flag):
        """Leave cell g out of every fit from now on (flag 1), or take it back."""
        self.usable[g] = 1 if ((PRES_PRESENT[g >> 3] >> (g & 7)) & 1) and not flag else 0
        self.png = 0            # nothing of the frame before can be reused
        self.seeds[_SV] = 0     # (nor a still search kept, _park)
        for q in range(MAX_FOUND):
            self.st_n[q] = 0
            self.st_grp[q] = 0
        self.last_version = -1

    def set_radii(self, r_small, r_big):
        """The chips' seen radii (0.1 mm), as the calibration measured them."""
        self.r_small = r_small
        self.r_big = r_big
        self.png = 0
        self.seeds[_SV] = 0
        self.last_version = -1

    def set_prior(self, sigma):
        pass                    # the hall locator's strength prior; nothing to learn here

    def refresh(self):
        """The tracker takes the positions now (tracker.py, issue 12). Nothing to do: a group
        whose pads did not change since a fine fit of them keeps it, and a fit of the pattern
        is the pattern now (the pads do not smooth)."""
        pass

    # -- the frame ------------------------------------------------------------------------------
    def find(self, grid):
        self.grid = grid
        sc = self.scan
        if sc is not None and sc.version == self.last_version and self.settled:
            return self.n       # nothing changed since a frame that was fitted finely
        if self._groups(grid):
            # what a group this large always was: a hand (the fault monitor's C_HAND, the
            # tracker's chips under it), over the pads taken; the last chips stand
            self.unread += 1
            self.settled = 0    # looked at again next frame, never kept
            nc = self.nc
            sx = 0
            sy = 0
            for k in range(nc):
                g = self.cells[k]
                sx += g % _COLS
                sy += g // _COLS
            self.hand = 1
            self.hand_cells = nc
            self.hand_x = _X0 + sx * _PITCH // nc
            self.hand_y = _Y0 + sy * _PITCH // nc
            self.specks = 0
            return self.n
        # the frame before's hand (a group no set of chips explains, or too many pads): its
        # centre; a changed group over it that one chip cannot explain is that hand still
        # (ph: 1), leaving or coming (issue 13, below)
        ph = 1 if self.unread else 0
        for q in range(self.png):
            if self.presn[q] == 255:
                ph = 1
        phx = self.hand_x
        phy = self.hand_y
        over = 0            # bit j: group j taken for the frame before's hand (not kept as one)
        self.unread = 0
        self.cut = 0
        if self.clock is not None:
            # the deadline, in ticks of 2**30 (t + BUDGET_US past 2**30 - 1 would be a long
            # int on the chip, allocated: it wraps by subtraction instead)
            t = self.clock()
            b = self.BUDGET_US
            self.win[11 + _LEVELS] = t + b if t <= 0x3FFFFFFF - b else t - (0x3FFFFFFF - b) - 1
            self.seeds[_SV - 1] = 0     # the frame's longest unit so far (_moves)
        n = 0
        self.hand = 0
        self.hand_cells = 0
        self.crowd = 0
        self.specks = 0
        # a still group's search cut at the budget in a frame before (_park): its group now (the
        # same pads), where it goes on; every other still group waits while it is kept
        sv = self.seeds
        sus = sv[_SV]
        js = -1
        if sus:
            for j in range(self.ng):
                g = self.sig[j]
                if (g & 0xFFFF == sv[_SV + 1] and g >> 16 == sv[_SV + 2] and
                        self.g0[j + 1] - self.g0[j] == sv[_SV + 3]):
                    js = j
                    break
            if js < 0:
                sv[_SV] = 0     # its group changed: searched afresh once still
        # each chip of the frame before goes with the group nearest to it (_follow)
        lim = self.FOLLOW_REACH * self.FOLLOW_REACH
        for q in range(self.pn):
            bj = 255
            bd = lim
            for j in range(self.ng):
                dx = self.gcx[j] - self.px[q]
                dy = self.gcy[j] - self.py[q]
                d = dx * dx + dy * dy
                if d < bd:
                    bd = d
                    bj = j
            self.pclaim[q] = bj
        for j in range(self.ng):
            a = self.g0[j]
            cnt = self.g0[j + 1] - a
            # the same group in the frame before? then reuse (and refine) its chips
            prev = -1
            for q in range(self.png):
                if self.psig[q] == self.sig[j] and self.pcount[q] == cnt:
                    prev = q
                    break
            self.res0[j] = n
            self.resn[j] = 0
            self.fine[j] = 0
            if cnt <= 2 and not self._by_hole(a, cnt):
                for k in range(a, a + cnt):
                    if self.specks < MAX_SPECK:
                        self.speck[self.specks] = self.cells[k]
                        self.specks += 1
                continue
            if prev >= 0 and self.presn[prev] == 255:
                self._hand(j, False)
                continue
            m = 0
            rh = 0              # 6: _hold's held fits kept (_park), going on
            still = prev >= 0 or sc is None
            kept = prev >= 0 and self.pfine[prev]
            if not kept and prev >= 0 and sc is not None and js >= 0 and (j != js or sus):
                if j != js:
                    m = -2              # waits while another still group's search is kept
                else:
                    # the search kept (_park), resumed where it stopped; its window made again
                    sus = 0
                    if sv[_SV] == 6:
                        # the group's joint fit as it was (results again from it), then _hold
                        self._window(j)
                        self._park(0, 0, 0, 0, 0, 0, 0)
                        m = self.bk
                        if n + m > MAX_FOUND:
                            m = 0       # (no room for it now: searched afresh)
                        for i in range(m):
                            self.cnt[i] = 100 * sv[_SV + 14]
                            self.sw[i] = self.BLIND if (sv[_SV + 15] >> i) & 1 else 0
                        rh = 6 if m else 0
                    elif sv[_SV] == 5:
                        self._window(j)
                        m = self._done(0, 2)
                    elif sv[_SV] >= 3:
                        m = self._fit(j, 2, MAX_FOUND - n, 0)
                    else:
                        m = self._follow(j, prev, 2, MAX_FOUND - n)
                    if m == 0:
                        m = self._fit(j, still, MAX_FOUND - n, cnt)
                    if m != -2:
                        js = -1         # finished: another still group may be searched
            elif not kept:
                near = False
                if ph and not still:
                    # a changed group whose centre lies within HAND_NEAR of the frame before's hand
                    # and that one chip cannot explain (_past_one) is that hand's patch, leaving or
                    # coming, never chips: on the chip the pads a hand was leaving when they were
                    # read (40 - 55 of them) were seeded and searched as up to four chips (k-means
                    # 73 ms, the search cut: four phantom chips, then a still search of the one
                    # left not bounded by the budget, 83 ms; issue 13). Unless it covers more than
                    # four big chips (a hand in any case, _fit), not kept as a hand for the next
                    # frame: the same pads then, still, are searched as chips (two chips put down
                    # together), and a changed group after it is not taken for a hand by this rule
                    dx = self.gcx[j] - phx
                    dy = self.gcy[j] - phy
                    if dx * dx + dy * dy < self.HAND_NEAR * self.HAND_NEAR:
                        self._window(j)
                        if self._past_one():
                            self._hand(j, True)
                            eb = 201 * (self.r_big * self.r_big + _LEV_SQ) // (4 * _PITCH * _PITCH)
                            if 16 * self.tot // _LEVELS <= MAX_K * eb + (MAX_K * eb >> 2):
                                over |= 1 << j
                            continue
                        # (one the frame before's chips go with is searched, as before: those
                        # chips, at rest by it, are not to go from sight while it is)
                        near = True
                        for q in range(self.pn):
                            if self.pclaim[q] == j:
                                near = False
                if sc is not None:
                    m = self._follow(j, prev, still, MAX_FOUND - n)
                    if m == 0 and near:
                        # nor did one chip of either size explain it: the hand's patch too,
                        # however small (at the pocket the Zenn blocks and the cup have no
                        # pads: 24 - 27 pads left, under _past_one's bound, were searched as
                        # three or four phantom chips, 5,700 - 6,300 moves; issue 13)
                        self._hand(j, True)
                        over |= 1 << j
                        continue
                    if m == 0:
                        # (_follow's window stands: group j's, the same frame)
                        m = self._fit(j, still, MAX_FOUND - n, cnt)
                else:
                    m = self._fit(j, still, MAX_FOUND - n, 0)
            if m > 0 and not kept:
                if m >= MAX_K and not still:
                    self.crowd = 1
                for i in range(m):
                    self.kind[n + i] = KIND_SMALL if self.br[i] == self.r_small else KIND_BIG
                    self.x[n + i] = self.bx[i]
                    self.y[n + i] = self.by[i]
                    self.err[n + i] = self.cnt[i]
                    self.unc[n + i] = self.sx[i] if still else self.COARSE
                    self.wander[n + i] = self.sw[i] if still else self.COARSE
                    self.src[n + i] = self._rest_of(n + i, n)
                if still and sc is not None:
                    if m == 1:
                        self._steady(j, n)
                    elif m > 1:
                        # (on the chip it may stop at the budget: kept, -2, as a search)
                        m = self._hold(j, n, m, rh)
            if kept or m == -2:
                # as in the frame before: fine, kept; or coarse, looked at again next frame,
                # while its still search, cut at the budget, is kept (_park), or waits (cut |
                # 2: the tracker takes no frame for still until it is finished)
                if m == -2:
                    self.cut |= 2
                    if js < 0:
                        js = j
                m = self.presn[prev]
                if n + m > MAX_FOUND:
                    m = MAX_FOUND - n
                for i in range(m):
                    s = self.pres0[prev] + i
                    self.kind[n + i] = self.pkind[s]
                    self.x[n + i] = self.px[s]
                    self.y[n + i] = self.py[s]
                    self.err[n + i] = self.perr[s]
                    self.unc[n + i] = self.punc[s]
                    self.wander[n + i] = self.pwan[s]
                    self.src[n + i] = self.psrc[s]
                self.resn[j] = m
                self.fine[j] = 1 if kept else 0
                n += m
                continue
            if m < 0:
                self._hand(j, True)
                continue
            self.resn[j] = m
            self.fine[j] = 1 if still else 0
            n += m
        if self.hand and n:
            n = self._off_board(n)
        for i in range(n):
            self.strength[i] = ADC_PEAK
        self.n = n
        self._keep_rest(n)
        # keep this frame's groups for the next
        for j in range(self.ng):
            self.psig[j] = self.sig[j]
            self.pcount[j] = self.g0[j + 1] - self.g0[j]
            self.pres0[j] = self.res0[j]
            # (a group taken for the frame before's hand: no chips, coarse, searched if still)
            self.presn[j] = 0 if (over >> j) & 1 else self.resn[j]
            self.pfine[j] = self.fine[j]
        self.png = self.ng
        for i in range(n):
            self.pkind[i] = self.kind[i]
            self.px[i] = self.x[i]
            self.py[i] = self.y[i]
            self.perr[i] = self.err[i]
            self.punc[i] = self.unc[i]
            self.pwan[i] = self.wander[i]
        self.pn = n
        settled = 0 if over else 1
        for j in range(self.ng):
            if not self.fine[j] and self.resn[j] != 255:
                settled = 0
        self.settled = settled
        self._near_hand(n)
        if sc is not None:
            self.last_version = sc.version
        return n

    # -- rest patterns: a chip alone keeps its fit through one pad's flicker ----------------------
    def _rest_of(self, i, n0):
        """The rest pattern result i (a fresh fit) goes on with: the entry of a chip of its kind
        nearest to it within FOLLOW_REACH that no result before it took (n0: results of this
        frame before i's group), else -1."""
        stn = self.st_n
        grp = self.st_grp
        fit = self.st_fit
        best = -1
        bd = self.FOLLOW_REACH * self.FOLLOW_REACH
        for q in range(MAX_FOUND):
            if not (stn[q] or grp[q]) or fit[6 * q] != self.kind[i]:
                continue
            taken = False
            for e in range(i):
                if self.src[e] == q:
                    taken = True
                    break
            if taken:
                continue
            dx = fit[6 * q + 1] - self.x[i]
            dy = fit[6 * q + 2] - self.y[i]
            d = dx * dx + dy * dy
            if d < bd:
                bd = d
                best = q
        return best

    def _steady(self, j, i):
        """Result i, the one chip of group j fitted at rest: if its pads read at most FLICKER
        levels off its rest pattern, the fit made of that pattern stays (a pad flickering is no
        move); else group j's pads become its rest pattern."""
        q = self.src[i]
        if q >= 0 and self.st_grp[q]:
            # its rest fit was made in a group (a neighbour has left it): no pattern of its own
            # to compare; held there if that fit explains its pads as well as this one
            fit = self.st_fit
            hx = self.hx
            hy = self.hy
            x = hx[0]
            y = hy[0]
            dx = fit[6 * q + 1] - x
            dy = fit[6 * q + 2] - y
            if dx * dx + dy * dy <= self.HOLD_NEAR * self.HOLD_NEAR:
                m = self._mismatch()
                hx[0] = fit[6 * q + 1]
                hy[0] = fit[6 * q + 2]
                held = self._mismatch()
                hx[0] = x
                hy[0] = y
                if held <= m + self.FLICKER:
                    self._from_rest(i, q)
                    return
            q = -1
        if q >= 0:
            base = q * SNAP
            cells = self.st_cells
            label = self.label
            grid = self.grid
            cur = j + 1
            d = 0
            both = 0
            for e in range(self.st_n[q]):
                g = cells[base + e]
                lv = g & 7
                g >>= 3
                if label[g] == cur:
                    v = grid[g]
                    both += v
                    d += v - lv if v > lv else lv - v
                else:
                    d += lv
                if d > self.FLICKER:
                    break
            d += self.tot - both
            if d <= self.FLICKER:
                self._from_rest(i, q)
                return
        self.src[i] = 100 + j if self.g0[j + 1] - self.g0[j] <= SNAP else -1

    def _from_rest(self, i, q):
        """Result i is rest record q's fit (x, y, unc, wander, err), kept as it was."""
        fit = self.st_fit
        self.x[i] = fit[6 * q + 1]
        self.y[i] = fit[6 * q + 2]
        self.unc[i] = fit[6 * q + 3]
        self.wander[i] = fit[6 * q + 4]
        self.err[i] = fit[6 * q + 5]

    def _hold(self, j, n, m, rs):
        """Group j's m chips (results n .. n + m - 1), fitted jointly at rest (hx, hy, hr):
        the chips whose rest fit (their entry, src) explains the pads as well as the joint fit,
        to FLICKER level steps, with the others fitted around them, stay at their rest fits
        (all of them first: nothing moved but a flicker; else one by one, the one that costs
        least first); the others are fitted again around those and become new entries. Returns
        m. On the chip it stops once the frame's time is spent, before one of its fits (_held:
        the others' moves around the chips held, themselves in slices) or a moved chip's
        centring, and is kept (_park phase 6: -2, find() gives the frame before's chips
        meanwhile); rs 6: resumed where it stopped, one unit first whatever the clock (issue 13:
        a group of four with one nudged held in 9 fits of up to 48 moves, 320 moves in all,
        after the frame's budget was spent). Its state: st (0 all held, 1 each alone, 2 one
        more held, 3 the fit around those held, 4 the moved ones centred; | 8: stopped inside a
        fit's moves), held, base, cand, e (the chip), err; hc and hu in the k-means seeds'
        arrays (free now), the joint fit in cx, cy, cr; the candidates' rest entries (if one is
        not its chip's when it goes on, it begins again from the joint fit)."""
        fit = self.st_fit
        src = self.src
        hx = self.hx
        hy = self.hy
        hc = self.kx        # each chip's cost held alone
        hu = self.ky        # each moved chip's uncertainty (its centring)
        sv = self.seeds
        clock = self.clock
        f1 = rs           # a unit first, whatever the clock
        if rs:
            st = sv[_SV + 4]
            held = sv[_SV + 5]
            base = sv[_SV + 6]
            cand = sv[_SV + 7]
            e = sv[_SV + 11]
            err = sv[_SV + 12]
            for q in range(m):
                if (cand >> q) & 1 and src[n + q] != (sv[_SV + 15] >> (4 + 3 * q)) & 7:
                    # a chip's rest entry is not the one its costs were of (entries are
                    # matched to the results again each frame): begun again, from the joint fit
                    rs = 0
            if not rs:
                sv[_SV + 10] = 0
                self._keep(self.cx, self.cy, self.cr, m, True)
        t = -1              # (when the centring before began: the frame's longest unit, _moves)
        if not rs:
            lim = self.HOLD_NEAR * self.HOLD_NEAR
            self._keep(self.cx, self.cy, self.cr, m, False)      # the joint fit
            base = self._mismatch() + self.FLICKER
            cand = 0
            for e in range(m):
                q = src[n + e]
                if q < 0:
                    continue
                dx = fit[6 * q + 1] - hx[e]
                dy = fit[6 * q + 2] - hy[e]
                if dx * dx + dy * dy <= lim:
                    cand |= 1 << e
            held = 0
            st = 0 if cand else 3
            e = 0
            err = 0
        while True:
            s = st & 7
            # what is left (none: done): a fit (_held) or a chip's centring
            if s == 1:
                while e < m and not (cand >> e) & 1:
                    hc[e] = 0x7FFF          # (no rest fit near: never held)
                    e += 1
                if e == m:
                    st = 2
                    continue
            elif s == 2 and not st & 8:
                b = -1
                for q in range(m):
                    if not (held >> q) & 1 and hc[q] <= base and (b < 0 or hc[q] < hc[b]):
                        b = q
                if b < 0:
                    st = 3
                    continue
                e = b
            elif s == 3 and held == 0:
                break
            elif s == 4:
                while e < m and (held >> e) & 1:
                    e += 1
                if e == m:
                    break
            if not f1 and clock is not None:
                u = clock()
                d = sv[_SV - 1]
                if t >= 0 and (u - t) & 0x3FFFFFFF > d:
                    d = (u - t) & 0x3FFFFFFF
                    d = d if d < 0xFFFF else 0xFFFF
                    sv[_SV - 1] = d
                t = u if s == 4 else -1
                if not d < (self.win[11 + _LEVELS] - u) & 0x3FFFFFFF < 0x20000000:
                    # the frame's time is spent (or less of it left than its longest unit so
                    # far): kept, with the joint fit's cost and its chips' wander (find() gives
                    # its results again from them)
                    self.win[10 + _LEVELS] = 0
                    f1 = -1
                    break
            go = (3 if st & 8 else 2) if f1 else 1 if clock is not None else 0
            f1 = 0
            if s == 4:
                hu[e] = self._centre(e)
                e += 1
                continue
            if s == 2 and not st & 8:
                hc[e] = 0x7FFF          # tried
            r = self._held(cand if s == 0 else 1 << e if s == 1 else held | (1 << e) if s == 2
                           else held, n, m, go)
            if r < 0:
                # its moves stopped at the budget (a slice at least): kept, resumed in them
                st = s | 8
                f1 = -1
                break
            st = s
            if s == 0:
                if r <= base:
                    held = cand
                    st = 3
                else:
                    st = 1
                    e = 0
            elif s == 1:
                hc[e] = r
                e += 1
            elif s == 2:
                if r <= base:
                    held |= 1 << e
            else:
                err = r
                st = 4
                e = 0
        if f1 < 0:
            # kept, with the joint fit's cost, its chips' wander (find() gives its results
            # again from them when it goes on) and the candidates' rest entries (3 bits each)
            sv[_SV + 14] = self.cnt[0] // 100
            b = 0
            for q in range(m):
                if self.sw[q]:
                    b |= 1 << q
                if (cand >> q) & 1:
                    b |= (src[n + q] & 7) << (4 + 3 * q)
            sv[_SV + 15] = b
            return self._park(6, st, held, base, cand, e, err)
        if held == 0:
            for e in range(m):
                src[n + e] = 200 + j
            self._keep(self.cx, self.cy, self.cr, m, True)
            return m
        err *= 100
        for e in range(m):
            i = n + e
            if (held >> e) & 1:
                q = src[i]
                self._from_rest(i, q)
                continue
            # moved: fitted again around the chips held, centred in its region of equal fits
            u = hu[e] + self.TOUCHING
            if self.blind(hx[e], hy[e], self.r_big + self.RIM):
                u += self.BLIND
            self.x[i] = hx[e]
            self.y[i] = hy[e]
            self.unc[i] = u
            self.err[i] = err
            src[i] = 200 + j
        return m

    def _held(self, held, n, m, go):
        """The joint fit (cx, cy, cr) with the chips of the mask held at their rest fits and
        the others moved to fit around them, into hx, hy, hr; returns its mismatch. go: as
        _moves' budget (0 none; 1 the frame's; 2 a slice first, whatever the clock), 3: its
        moves kept by _park, resumed where they stopped; -1 if they stopped at the budget."""
        if go != 3:
            fit = self.st_fit
            self._keep(self.cx, self.cy, self.cr, m, True)
            for e in range(m):
                if (held >> e) & 1:
                    q = self.src[n + e]
                    self.hx[e] = fit[6 * q + 1]
                    self.hy[e] = fit[6 * q + 2]
            self.hk = m
        if held != (1 << m) - 1 and self._moves(10, 5, held, 2 if go == 3 else go):
            return -1
        return self._mismatch()

    def _keep_rest(self, n):
        """Entries no result goes on with are freed; groups' pads that became a result's rest
        pattern go into free entries, with the fit made of them (a chip of a group: the fit)."""
        stn = self.st_n
        grp = self.st_grp
        for q in range(MAX_FOUND):
            used = False
            for i in range(n):
                if self.src[i] == q:
                    used = True
                    break
            if not used:
                stn[q] = 0
                grp[q] = 0
        for i in range(n):
            j = self.src[i] - 100
            if j < 0:
                continue
            q = 0
            while q < MAX_FOUND and (stn[q] or grp[q]):
                q += 1
            if q == MAX_FOUND:
                self.src[i] = -1
                continue
            if j >= 100:
                grp[q] = 1          # a chip of a group: its fit only (_hold)
            else:
                a = self.g0[j]
                c = self.g0[j + 1] - a
                base = q * SNAP
                for e in range(c):
                    g = self.cells[a + e]
                    self.st_cells[base + e] = (g << 3) | self.grid[g]
                stn[q] = c
            f = self.st_fit
            f[6 * q] = self.kind[i]
            f[6 * q + 1] = self.x[i]
            f[6 * q + 2] = self.y[i]
            f[6 * q + 3] = self.unc[i]
            f[6 * q + 4] = self.wander[i]
            f[6 * q + 5] = self.err[i]
            self.src[i] = q
        for i in range(MAX_FOUND):
            self.psrc[i] = self.src[i] if i < n else -1

    def _off_board(self, n):
        """In a frame with a hand: a fit whose centre lies beyond the board's outline is no chip
        but a piece of the hand's ragged rim, cut off from its patch, by the edge (a chip on the
        board has its centre inside it; only one flying off has not, and no hand is over the
        pads then). The last pads are 5 mm inside the board's end and sides, so a sliver of
        rim pads there is fitted best by a chip centred off the pads, 60 mm and more from the
        hand's centre: the tracker followed the chip the hand was lifting 63 mm to one, then
        lost it farther than HAND_NEAR from the hand, and judged it flicked off (issue 12, the
        seed-41 bench's lift after shot 48). Such fits are left out, their group fitted again
        next frame. Returns the results left."""
        w = 0
        for j in range(self.ng):
            a = self.res0[j]
            m = self.resn[j]
            self.res0[j] = w
            if m == 255:
                continue
            kept = 0
            for i in range(a, a + m):
                x = self.x[i]
                y = self.y[i]
                ax = x if x >= 0 else -x
                ay = y if y >= 0 else -y
                if ax > _HALF_W or ay > _HALF_L or ax + ay > _CORNER_SUM:
                    self.fine[j] = 0
                    continue
                if w != i:
                    self.kind[w] = self.kind[i]
                    self.x[w] = x
                    self.y[w] = y
                    self.err[w] = self.err[i]
                    self.unc[w] = self.unc[i]
                    self.wander[w] = self.wander[i]
                    self.src[w] = self.src[i]
                w += 1
                kept += 1
            self.resn[j] = kept
        return w

    def _near_hand(self, n):
        """A hand near a chip (putting it down, lifting it, a finger by it): its ragged rim
        joins and leaves the chip's pads, so the fit may move without the chip: COARSE wander
        this frame (not kept for the next)."""
        if self.hand:
            lim = self.HAND_NEAR * self.HAND_NEAR
            for i in range(n):
                dx = self.x[i] - self.hand_x
                dy = self.y[i] - self.hand_y
                if dx * dx + dy * dy < lim and self.wander[i] < self.COARSE:
                    self.wander[i] = self.COARSE

    def _hand(self, j, windowed):
        """Group j is a hand. windowed: its window was made this frame (_window): the centroid
        of its pads is gx, gy (issue 13: a hand's 60 - 80 pads summed once a frame, not thrice)."""
        self.resn[j] = 255
        a = self.g0[j]
        b = self.g0[j + 1]
        self.hand += 1
        self.hand_cells += b - a
        if windowed:
            self.hand_x = self.gx
            self.hand_y = self.gy
            return
        sx = 0
        sy = 0
        for k in range(a, b):
            g = self.cells[k]
            sx += g % _COLS
            sy += g // _COLS
        self.hand_x = _X0 + sx * _PITCH // (b - a)
        self.hand_y = _Y0 + sy * _PITCH // (b - a)

    # -- groups of touching pads ------------------------------------------------------------------
    def _groups(self, grid):
        """The covered pads into groups of touching ones (flood(), in viper); True: too many
        covered to be chips and a hand (MAX_PLAUSIBLE), the groups left unfinished."""
        label = self.label
        cells = self.cells
        usable = self.usable
        rows_on = self.scan.rows_on if self.scan is not None else self.all_rows
        seeds = self.seeds
        ns = covered(grid, usable, rows_on, seeds, MAX_PLAUSIBLE)
        if ns >= MAX_PLAUSIBLE:
            for k in range(self.nc):
                label[cells[k]] = 0
            # not flooded: the first MAX_PLAUSIBLE pads in scan order stand for the hand
            for k in range(ns):
                cells[k] = seeds[k]
            seeds[_SV] = 0      # (a still search kept there is gone)
            self.g0[0] = 0
            self.nc = ns
            self.ng = 0
            return True
        # each seed not yet in a group starts one: flood it (in scan order, as the rows were)
        gcx = self.gcx
        gcy = self.gcy
        nc = flood(grid, usable, label, cells, seeds, self.g0, self.sig, gcx, gcy,
                   self.nc | (ns << 16))
        if ns > _SV:
            seeds[_SV] = 0      # these pads took the place of a still search kept (_park)
        ng = nc >> 16
        nc &= 0xFFFF
        for j in range(ng):             # the sums into the groups' centroids
            q = self.g0[j + 1] - self.g0[j]
            gcx[j] = _X0 + gcx[j] * _PITCH // q
            gcy[j] = _Y0 + gcy[j] * _PITCH // q
        self.nc = nc        # (their labels cleared by the next frame's)
        self.ng = ng
        return nc >= MAX_PLAUSIBLE

    # -- fitting a group ------------------------------------------------------------------------
    def _window(self, j):
        """Group j's window (its bounding box widened by a big chip's reach: win[0] .. win[3]),
        its label (cur) and the centroid of its pads (gx, gy). Returns its number of pads."""
        a = self.g0[j]
        cnt = self.g0[j + 1] - a
        cells = self.cells
        c0 = _COLS
        c1 = 0
        r0 = _ROWS
        r1 = 0
        sx = 0
        sy = 0
        tot = 0
        grid = self.grid
        for k in range(a, a + cnt):
            g = cells[k]
            r = g // _COLS
            c = g - r * _COLS
            sx += c
            sy += r
            tot += grid[g]
            if c < c0:
                c0 = c
            if c > c1:
                c1 = c
            if r < r0:
                r0 = r
            if r > r1:
                r1 = r
        w = (self.r_big + _REACH + 2 * _PITCH) // _PITCH
        self.cur = j + 1
        win = self.win
        win[0] = c0 - w if c0 > w else 0
        win[1] = c1 + w if c1 + w < _COLS else _COLS - 1
        win[2] = r0 - w if r0 > w else 0
        win[3] = r1 + w if r1 + w < _ROWS else _ROWS - 1
        win[4] = j + 1
        win[5] = 2 * self.RIM - self.OVERLAP_TOL
        win[6] = self.OVERLAP
        self.gx = _X0 + sx * _PITCH // cnt
        self.gy = _Y0 + sy * _PITCH // cnt
        self.tot = tot
        return cnt

    def _by_hole(self, a, cnt):
        """One of the cells a .. a + cnt has a neighbour without a pad (a cup hole, a corner):
        a chip hanging on a cup's lip covers only one or two pads (issue 12: taken for a speck,
        it was lost, and after 20 frames its pads were left out as stuck, one pair after the
        other, until chips in the pocket were no longer seen)."""
        cells = self.cells
        for k in range(a, a + cnt):
            g = cells[k]
            c = g % _COLS
            r = g // _COLS
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    rr = r + dr
                    cc = c + dc
                    if rr < 0 or rr >= _ROWS or cc < 0 or cc >= _COLS:
                        return True
                    h = rr * _COLS + cc
                    if not (PRES_PRESENT[h >> 3] >> (h & 7)) & 1:
                        return True
        return False

    def _fit(self, j, still, room, cnt):
        """The chips of group j into bx, by, br (bk of them, returned; -1: a hand). still: the
        group is as it was a frame ago: fit to 0.5 mm and centre (unc into sx). cnt: its pads,
        when its window was made this frame (_follow's: a hand's 60 - 80 pads were gone over
        twice a frame, 4.5 - 5 ms on the chip), else 0. On the chip a still group's search
        stops once the frame's time is spent (-2: kept, _park), before a set's seeds or between
        slices of its moves; still 2: resumed where it stopped (the same search, move for
        move)."""
        rs = 0
        if still == 2:
            cnt = 0
        if not cnt:
            cnt = self._window(j)
        a = self.g0[j]
        # areas in pads, x 16: a chip of seen radius r gives its pads levels that sum to about
        # PRES_LEVELS * pi (r^2 + _LEV_SQ) / P^2
        es = 201 * (self.r_small * self.r_small + _LEV_SQ) // (4 * _PITCH * _PITCH)
        eb = 201 * (self.r_big * self.r_big + _LEV_SQ) // (4 * _PITCH * _PITCH)
        a16 = 16 * self.tot // _LEVELS
        if a16 > MAX_K * eb + (MAX_K * eb >> 2):
            return -1                        # more than four big chips cover: a hand
        cells = self.cells
        # every set of chips whose area fits, coarsely (2 mm); the best two are refined
        best = 0x3FFFFFFF
        second = 0x3FFFFFFF
        fk = 0
        k0 = 1
        mask0 = 0
        sub = 0
        if still == 2:
            # the search kept (_park): its sets so far, and where it stopped
            sv = self.seeds
            rs = self._park(0, 0, 0, 0, 0, 0, 0)
            still = True
            k0 = sv[_SV + 4]
            mask0 = sv[_SV + 5]
            best = sv[_SV + 6]
            second = sv[_SV + 7]
            if best == 0x7FFF:
                best = 0x3FFFFFFF
            if second == 0x7FFF:
                second = 0x3FFFFFFF
            sub = sv[_SV + 11]
        else:
            self.bk = 0
            if still:
                self.ck = 0
            else:
                fk = self.ck            # _follow's fit (cx, cy, cr), kept: no second is needed
        clock = self.clock
        # a still group's search on the chip stops at the budget too, and is kept (_park)
        bs = 1 if still and clock is not None and self.scan is not None else 0
        cut = False
        for k in range(k0, MAX_K + 1 if rs != 4 else k0):
            if k > room:
                break
            seeded = False
            # bit i of mask: chip i (of the k-means seeds) is big
            for mask in range(mask0 if k == k0 else 0, 1 << k):
                nb = 0
                for i in range(k):
                    nb += (mask >> i) & 1
                e = nb * eb + (k - nb) * es
                # the pads a set covers stray from its area by a pad or two per chip
                if a16 < e - (e >> 1) - 16 or a16 > e + (e >> 1) + 16 * k:
                    continue
                go = bs
                if rs == 3 and sub == 1:
                    # the set whose moves were cut: its seeds and fit as they were
                    rs = 0
                    seeded = True
                    go = 2
                else:
                    # (sub 8 + r: its seeds were stopped before their round r)
                    rr = sub - 8 if rs == 3 and sub >= 8 else 0
                    now = rs == 3       # resumed here: its seeds go on (or begin) at once
                    rs = 0
                    if not seeded:
                        if (not still and (self.bk or fk) and clock is not None and
                                (clock() - self.win[11 + _LEVELS]) & 0x3FFFFFFF < 0x20000000):
                            # the frame's time is spent (BUDGET_US, on the chip's clock): no
                            # seeds for more chips (k-means over a hand's 54 pads: 75.6 ms on
                            # the chip before they stopped early, issue 13). (Written out here:
                            # a method more is 48 B more of the class's dict on the chip's heap.)
                            self.cut = 1
                            cut = True
                            break
                        if (bs and not now and clock is not None and not self.seeds[_SV - 1] <
                                (self.win[11 + _LEVELS] - clock()) & 0x3FFFFFFF < 0x20000000):
                            # (nor with less time left than the frame's longest unit, _moves:
                            # a set's seeds are 6 - 16 ms on the chip)
                            return self._park(3, k, mask, best, second, 0, 0)
                        rr = self._seed(a, cnt, k, rr if bs else -1)
                        if rr >= 0:
                            return self._park(3, k, mask, best, second, 8 + rr, 0)
                        seeded = True
                    for i in range(k):
                        self.hx[i] = self.kx[i]
                        self.hy[i] = self.ky[i]
                        self.hr[i] = self.r_big if (mask >> i) & 1 else self.r_small
                    self.hk = k
                if still:
                    if self._moves(80 if k > 1 else 20, 20, 0, go):
                        return self._park(3, k, mask, best, second, 1, 0)
                else:
                    cut = self._moves(80 if k > 1 else 20, 20, 0, True)
                m = self._mismatch() + self.PER_CHIP * k     # a chip more must explain more
                if m < best:
                    second = best
                    if still:
                        for i in range(self.bk):        # the best so far becomes the second
                            self.cx[i] = self.bx[i]
                            self.cy[i] = self.by[i]
                            self.cr[i] = self.br[i]
                        self.ck = self.bk
                    best = m
                    self._keep(self.bx, self.by, self.br, k, False)
                    self.bk = k
                elif m < second and still:
                    second = m
                    self._keep(self.cx, self.cy, self.cr, k, False)
                    self.ck = k
                if cut:
                    break
            if cut:
                break
        if cut and (self.bk or fk):
            # the frame's time is spent (BUDGET_US): the best of the sets tried and
            # _follow's fit stands, coarse, and the group is looked at again next frame
            if fk and (self.bk == 0 or self.fm <= best):
                self._keep(self.cx, self.cy, self.cr, fk, True)
                self.hk = fk
            else:
                self._keep(self.bx, self.by, self.br, self.bk, True)
                self.hk = self.bk
            return self._done(self.hk, False)
        if still and self.ck:
            # refine both to 0.5 mm; the better one stays in bx, by, br
            for q in range(sub if rs == 4 else 0, 2):
                if rs == 4:
                    rs = 0          # (resumed in these moves: the fit as it was)
                    go = 2
                else:
                    go = bs
                    if q == 0:
                        self._keep(self.bx, self.by, self.br, self.bk, True)
                        self.hk = self.bk
                    else:
                        self._keep(self.cx, self.cy, self.cr, self.ck, True)
                        self.hk = self.ck
                if self._moves(10, 5, 0, go):
                    return self._park(4, 0, 0, best, second, q, 0)
                m = self._mismatch() + self.PER_CHIP * self.hk
                if q == 0:
                    best = m
                    self._keep(self.bx, self.by, self.br, self.hk, False)
                elif m < best:
                    best = m
                    self.bk = self.hk
                    self._keep(self.bx, self.by, self.br, self.hk, False)
        elif still and self.bk:
            if rs != 4:
                self._keep(self.bx, self.by, self.br, self.bk, True)
                self.hk = self.bk
            if self._moves(10, 5, 0, 2 if rs == 4 else bs):
                return self._park(4, 0, 0, best, second, 0, 0)
            best = self._mismatch() + self.PER_CHIP * self.bk
            self._keep(self.bx, self.by, self.br, self.bk, False)
        if self.bk == 0 or best - self.PER_CHIP * self.bk > self.tot // 3 + 2:
            return -1                        # nothing fits: a hand
        k = self.bk
        self._keep(self.bx, self.by, self.br, k, True)
        self.hk = k
        return self._done(k, still)

    def _done(self, k, still):
        """The fit hx, hy, hr (k chips) as the result: into bx, by, br; if still, each centred
        in its region of equal fits and its uncertainty into sx; cnt: the pads it gets wrong,
        x 100. Returns k. On the chip a still fit's centring stops before a chip once the
        frame's time is spent (-2: kept, _park); still 2: resumed there (that chip centred
        whatever the clock: a search kept goes on every frame)."""
        i0 = -1
        if still == 2:
            self._park(0, 0, 0, 0, 0, 0, 0)
            k = self.hk
            i0 = self.seeds[_SV + 11]
        self._keep(self.bx, self.by, self.br, k, False)
        self.bk = k
        if still:
            clock = self.clock if self.scan is not None else None
            sv = self.seeds
            t = -1      # (a chip's centring begins only while the time left is more than the
            for i in range(i0 if i0 > 0 else 0, k):     # frame's longest unit: _moves)
                if clock is not None:
                    u = clock()
                    d = sv[_SV - 1]
                    if t >= 0 and (u - t) & 0x3FFFFFFF > d:
                        d = (u - t) & 0x3FFFFFFF
                        d = d if d < 0xFFFF else 0xFFFF
                        sv[_SV - 1] = d
                    t = u
                    if i != i0 and not d < (self.win[11 + _LEVELS] - u) & 0x3FFFFFFF < 0x20000000:
                        return self._park(5, 0, 0, 0, 0, i, 0)
                self.sx[i] = self._centre(i)
            for i in range(k):
                self.bx[i] = self.hx[i]
                self.by[i] = self.hy[i]
                # a still chip's fit moves only when its pattern does by more than a pad's
                # flicker (_steady): nothing of the pads' own spread, which stays put
                self.sw[i] = 0
                # chips touching can slide together along their row, which moving one at a
                # time does not show: a chip touching another is known less well
                # (its fit, though, moves only when it did: _hold keeps a still one's)
                if k > 1:
                    self.sx[i] += self.TOUCHING
                # pads without a reading under the chip: the fit spans them, and it may be the
                # other kind
                if self.blind(self.hx[i], self.hy[i], self.r_big + self.RIM):
                    self.sx[i] += self.BLIND
                    self.sw[i] += self.BLIND
        m = self._mismatch()
        for i in range(k):
            self.cnt[i] = 100 * m
        return k

    def _follow(self, j, prev, still, room):
        """Group j fitted from the chips of the frame before instead of every set of chips
        (docs/sensing.md, "While chips move"): a group as it was (prev, fitted coarsely then)
        from that fit, to 0.5 mm and centred; a changed group from the unclaimed chips of the
        frame before nearest to it (within FOLLOW_REACH), moved with its centroid, in 2 mm
        steps; a changed group without one, as one chip of either size (4 and 2 mm steps).
        Kept when it gets at most FOLLOW_MISS + cnt / 8 pads wrong, at rest only a single chip
        that gets at most PER_CHIP wrong (of either size); else 0 (the search decides). Returns
        the number of chips, as _fit. On the chip a still group's moves stop once the frame's
        time is spent (-2: kept, _park); still 2: resumed where they stopped."""
        cnt = self._window(j)
        k = 0
        rs = 0
        if still == 2:
            rs = self._park(0, 0, 0, 0, 0, 0, 0)
            still = True
            k = self.hk
        elif prev >= 0:
            for i in range(self.presn[prev]):
                if k >= room or k >= MAX_K:
                    break
                q = self.pres0[prev] + i
                self.hx[k] = self.px[q]
                self.hy[k] = self.py[q]
                self.hr[k] = self.r_small if self.pkind[q] == KIND_SMALL else self.r_big
                k += 1
        else:
            sx = 0
            sy = 0
            for q in range(self.pn):
                if k >= room or k >= MAX_K:
                    break
                x = self.px[q]
                y = self.py[q]
                if self.pclaim[q] != j:
                    continue
                self.hx[k] = x
                self.hy[k] = y
                self.hr[k] = self.r_small if self.pkind[q] == KIND_SMALL else self.r_big
                sx += x
                sy += y
                k += 1
            if k:
                # the chips as a whole moved where the pads are now
                sx = self.gx - sx // k
                sy = self.gy - sy // k
                for i in range(k):
                    self.hx[i] += sx
                    self.hy[i] += sy
        self.ck = 0
        if k == 0:
            if still or self._past_one():
                return 0
            # a chip come from nowhere (put down by hand): one chip of either size first
            self.hk = 1
            best = 0x3FFFFFFF
            for q in range(2):
                self.hx[0] = self.gx
                self.hy[0] = self.gy
                self.hr[0] = self.r_small if q == 0 else self.r_big
                self._moves(40, 20, 0, True)
                m = self._mismatch()
                if m < best:
                    best = m
                    self._keep(self.bx, self.by, self.br, 1, False)
            self._keep(self.bx, self.by, self.br, 1, True)
            k = 1
        self.hk = k
        # (a still group's search on the chip stops at the budget too, and is kept: _park)
        bs = 1 if still and self.scan is not None and self.clock is not None else 0
        if still:
            if rs != 2 and self._moves(10, 5, 0, 2 if rs == 1 else bs):
                return self._park(1, 0, 0, 0, 0, 0, 0)
        else:
            if self._moves(20, 20, 0, True):
                # the frame's time is spent (BUDGET_US): this fit stands, coarse, and the
                # group is looked at again next frame; unless more than four big chips cover
                # it, a hand, as _fit's first test says once reached (issue 13: a hand taking a
                # chip from four touching, its chips followed and cut, stood as four chips, err
                # 229 - 298, for 24 frames, the group's rest fits kept through it)
                eb = 201 * (self.r_big * self.r_big + _LEV_SQ) // (4 * _PITCH * _PITCH)
                if 16 * self.tot // _LEVELS > MAX_K * eb + (MAX_K * eb >> 2):
                    return -1
                return self._done(k, still)
        m = self._mismatch() if rs != 2 else self.seeds[_SV + 12]
        if not still:
            # kept for _fit, should its search be cut (BUDGET_US): in the second best set's
            # place, which only a still group's search uses
            self._keep(self.cx, self.cy, self.cr, k, False)
            self.ck = k
            self.fm = m + self.PER_CHIP * k
        if still:
            # at rest the search decides, except for a single chip that gets at most PER_CHIP
            # pads wrong: every set of two or more costs more than that, so only the other
            # size can do better, and it is tried
            if k != 1:
                return 0
            if rs != 2:
                self._keep(self.bx, self.by, self.br, 1, False)
                self.hr[0] = self.r_big if self.hr[0] == self.r_small else self.r_small
            if self._moves(10, 5, 0, 2 if rs == 2 else bs):
                return self._park(2, 0, 0, 0, 0, 0, m)
            m2 = self._mismatch()
            if m2 < m or (m2 == m and self.hr[0] == self.r_small):
                m = m2
            else:
                self._keep(self.bx, self.by, self.br, 1, True)
            if m > self.PER_CHIP:
                return 0
        elif m > self.FOLLOW_MISS + (self.tot >> 3):
            return 0
        return self._done(k, still)

    def _past_one(self):
        """The group being fitted (its pads' levels summing to tot) is more than one chip can
        explain to _follow's FOLLOW_MISS + tot / 8: a chip of seen radius r covers at most
        pi (r / P + 0.71)^2 pads (each pad's square lies within r + P / sqrt(2) of it), at the
        first level's reach, each at PRES_LEVELS at most, and every level of the group's beyond
        those counts wrong. So no one chip is tried (a hand coming or going: 80 moves a frame
        that could not be kept, 95 ms on the chip, issue 13)."""
        r = (self.r_big if self.r_big > self.r_small else self.r_small) + _REACH + 71
        most = _LEVELS * (355 * r * r // (113 * _PITCH * _PITCH) + 1)
        return self.tot - most > self.FOLLOW_MISS + (self.tot >> 3)

    def _seed(self, a, cnt, k, r0):
        """k seeds for the group's chips into kx, ky: k-means on its pads. Returns -1. On the
        chip, in a still group's search (r0 0, not -1), once the frame's time is spent it stops
        before a round of the k-means and returns that round (1 - 3; the seeds so far in kx,
        ky); called again with r0 that round it goes on there (issue 13: a touching group's
        four seeds took 33 ms of a loop turn)."""
        cells = self.cells
        hx = self.kx
        hy = self.ky
        clock = self.clock if r0 >= 0 and self.scan is not None else None
        if r0 < 0:
            r0 = 0
        # seeds: the first pad, then each time the pad farthest from the seeds so far
        g = cells[a]
        if r0 == 0:
            hx[0] = _X0 + (g % _COLS) * _PITCH
            hy[0] = _Y0 + (g // _COLS) * _PITCH
        for i in range(1, k if r0 == 0 else 1):
            far = -1
            fg = a
            for q in range(a, a + cnt):
                g = cells[q]
                px = _X0 + (g % _COLS) * _PITCH
                py = _Y0 + (g // _COLS) * _PITCH
                dm = 0x3FFFFFFF
                for t in range(i):
                    dx = px - hx[t]
                    dy = py - hy[t]
                    d = dx * dx + dy * dy
                    if d < dm:
                        dm = d
                if dm > far:
                    far = dm
                    fg = g
            hx[i] = _X0 + (fg % _COLS) * _PITCH
            hy[i] = _Y0 + (fg // _COLS) * _PITCH
        # k-means: each pad to its nearest seed, seeds to their pads' centroid, 4 rounds; once a
        # round moves no seed the rounds left would give the same (issue 13: on the chip these
        # rounds over a hand's 54 pads took 75 ms)
        ct = self.cnt
        sx = self.sx
        sy = self.sy
        for r in range(r0, 4 if k > 1 else 1):
            # (a round at least, whatever the clock)
            if (r != r0 and clock is not None and not self.seeds[_SV - 1] <
                    (self.win[11 + _LEVELS] - clock()) & 0x3FFFFFFF < 0x20000000):
                return r        # (or less left than the frame's longest unit: _moves)
            for i in range(k):
                ct[i] = 0
                sx[i] = 0
                sy[i] = 0
            for q in range(a, a + cnt):
                g = cells[q]
                px = _X0 + (g % _COLS) * _PITCH
                py = _Y0 + (g // _COLS) * _PITCH
                bi = 0
                dm = 0x3FFFFFFF
                for i in range(k):
                    dx = px - hx[i]
                    dy = py - hy[i]
                    d = dx * dx + dy * dy
                    if d < dm:
                        dm = d
                        bi = i
                ct[bi] += 1
                sx[bi] += px
                sy[bi] += py
            moved = False
            for i in range(k):
                c = ct[i]
                if c:
                    x = sx[i] // c
                    y = sy[i] // c
                    if x != hx[i] or y != hy[i]:
                        moved = True
                        hx[i] = x
                        hy[i] = y
            if not moved:
                break
        return -1

    def _keep(self, xs, ys, rs, k, back):
        """Copy the fit hx, hy, hr (k chips) into xs, ys, rs, or back from them."""
        for i in range(k):
            if back:
                self.hx[i] = xs[i]
                self.hy[i] = ys[i]
                self.hr[i] = rs[i]
            else:
                xs[i] = self.hx[i]
                ys[i] = self.hy[i]
                rs[i] = self.hr[i]

    def _moves(self, s, last, hold=0, budget=False):
        """Move each chip of the fit to where the pads disagree least, in steps of s, halved
        down to last (0.1 mm); chip i stays where it is if bit i of hold is set (moves(), in
        viper). budget: stop once the frame's time is spent (BUDGET_US, on the clock); True if
        it did, the fit unfinished. With a clock the search runs in slices of SLICE moves, each
        resuming where the one before stopped, the clock read before each (small ints: nothing
        allocated); without one (the simulator, CPython) in one call: the same moves. budget
        2: the fit is a still search's kept by _park, resumed where its moves stopped."""
        win = self.win
        win[8 + _LEVELS] = self.hk
        win[10 + _LEVELS] = self.seeds[_SV + 10] if budget == 2 else 0
        clock = self.clock if budget else None
        if clock is None:
            win[9 + _LEVELS] = 0x3FFFFFFF
            self.tried += moves(s, last, hold, self.hx, self.hy, self.hr, self.usable,
                                self.label, win, self.grid)
            return False
        win[9 + _LEVELS] = self.SLICE
        # (the deadline less the clock, in ticks of 2**30: the time left while under 2**29; a
        # still search resumed does a slice first, whatever the clock: it goes on every frame.)
        # A unit of the search (a slice, a chip's centring: _done, _hold) begins only while the
        # time left is more than the longest one of the frame so far took (us, in the seeds'
        # halfword before _SV, free once the groups are made), so that the frame ends by its
        # deadline, not a unit past it (issue 13: 48 moves of three big chips took 10 - 13 ms
        # on the chip, a big chip's centring 5 - 8 ms)
        go = budget == 2
        dl = win[11 + _LEVELS]
        sv = self.seeds
        d = sv[_SV - 1]
        t = clock()
        while go or d < (dl - t) & 0x3FFFFFFF < 0x20000000:
            go = False
            self.tried += moves(s, last, hold, self.hx, self.hy, self.hr, self.usable,
                                self.label, win, self.grid)
            u = clock()
            e = (u - t) & 0x3FFFFFFF
            t = u
            if e > d:
                d = e if e < 0xFFFF else 0xFFFF
                sv[_SV - 1] = d
            if not win[10 + _LEVELS]:
                return False
        self.cut = 1
        return True

    def _park(self, ph, k, mask, best, second, sub, m):
        """A still group's search cut at the frame's budget (BUDGET_US): ph (1 - 5, _SV) and the
        fit's arrays kept in the seeds' last 64 halfwords, with the group (cur) and where it
        stopped (k, mask, best, second, sub: seeded / q / the chip being centred; m: _follow's
        first size's mismatch); returns -2 (find(): the frame before's chips stand, coarse, and
        the search goes on next frame). ph 0: the arrays (and hk, bk, ck) back from there, the
        search no longer kept; returns its phase. Positions in 0.1 mm and costs fit 16 bits."""
        sv = self.seeds
        for e in range(12):
            xs = (self.hx if e == 0 else self.hy if e == 1 else self.hr if e == 2 else
                  self.bx if e == 3 else self.by if e == 4 else self.br if e == 5 else
                  self.cx if e == 6 else self.cy if e == 7 else self.cr if e == 8 else
                  self.kx if e == 9 else self.ky if e == 10 else self.sx)
            o = _SV + 16 + 4 * e
            for i in range(MAX_K):
                if ph:
                    sv[o + i] = xs[i] & 0xFFFF
                else:
                    v = sv[o + i]
                    xs[i] = v - 0x10000 if v & 0x8000 else v
        if not ph:
            self.bk = sv[_SV + 8]
            self.ck = sv[_SV + 9]
            self.hk = sv[_SV + 13]
            ph = sv[_SV]
            sv[_SV] = 0
            return ph
        j = self.cur - 1
        g = self.sig[j]
        sv[_SV] = ph
        sv[_SV + 1] = g & 0xFFFF
        sv[_SV + 2] = g >> 16
        sv[_SV + 3] = self.g0[j + 1] - self.g0[j]
        sv[_SV + 4] = k
        sv[_SV + 5] = mask
        sv[_SV + 6] = best if best < 0x7FFF else 0x7FFF
        sv[_SV + 7] = second if second < 0x7FFF else 0x7FFF
        sv[_SV + 8] = self.bk
        sv[_SV + 9] = self.ck
        sv[_SV + 10] = self.win[10 + _LEVELS]
        sv[_SV + 11] = sub
        sv[_SV + 12] = m
        sv[_SV + 13] = self.hk
        self.cut = 1
        return -2

    def _centre(self, i):
        """Move chip i to the middle of the positions that fit as well as its own; returns how
        far (0.1 mm) that region reaches from the middle (the uncertainty)."""
        for _ in range(3):
            x = self.hx[i]
            y = self.hy[i]
            e0 = self._reach(i, x, y, 1, 0)
            if e0 < 0:
                continue        # a better position was found and taken: again
            e1 = self._reach(i, x, y, -1, 0)
            if e1 < 0:
                continue
            e2 = self._reach(i, x, y, 0, 1)
            if e2 < 0:
                continue
            e3 = self._reach(i, x, y, 0, -1)
            if e3 < 0:
                continue
            self.hx[i] = x + (e0 - e1) // 2
            self.hy[i] = y + (e2 - e3) // 2
            break
        x = self.hx[i]
        y = self.hy[i]
        u = 0
        for d in range(8):
            e = self._reach(i, x, y, _DX[d], _DY[d], False)
            if _DX[d] and _DY[d]:
                e = e * 141 // 100
            if e > u:
                u = e
        # half a step, and the pads' own spread: each switches up to about 0.6 mm either side
        # of the edge the model assumes
        return u + 5 + self.SPREAD

    def _reach(self, i, x, y, dx, dy, take=True):
        """How far chip i can move from (x, y) along (dx, dy) in 0.5 mm steps with the mismatch
        no worse (up to 8 mm). A position that is better is taken (take) and -1 returned.
        (delta() called here, not through _delta: a still chip's centring is 12 - 16 of them,
        8 ms on the chip, much of it the calls around them, issue 13.)"""
        hx = self.hx
        hy = self.hy
        hr = self.hr
        usable = self.usable
        label = self.label
        win = self.win
        grid = self.grid
        win[8 + _LEVELS] = self.hk
        t = 5
        while t <= 80:
            e = delta(i, x + dx * t, y + dy * t, hx, hy, hr, usable, label, win, grid)
            if e > 0:
                break
            if e < 0 and take:
                self.tried += t // 5
                hx[i] = x + dx * t
                hy[i] = y + dy * t
                return -1
            t += 5
        self.tried += (t if t <= 80 else 80) // 5
        return t - 5

    def _delta(self, i, nx, ny):
        """How the mismatch changes when chip i moves to (nx, ny) (delta(), in viper)."""
        self.win[8 + _LEVELS] = self.hk
        self.tried += 1
        return delta(i, nx, ny, self.hx, self.hy, self.hr, self.usable, self.label, self.win,
                     self.grid)

    def _mismatch(self):
        """Pads of the window the chips hx, hy, hr get wrong (the pads: mismatch(), in viper),
        and what the pairs of them that overlap cost."""
        k = self.hk
        hx = self.hx
        hy = self.hy
        hr = self.hr
        self.win[8 + _LEVELS] = k
        m = mismatch(hx, hy, hr, self.usable, self.label, self.win, self.grid)
        for i in range(k):
            for t in range(i + 1, k):
                lim = hr[i] + hr[t] + 2 * self.RIM - self.OVERLAP_TOL
                ax = hx[t] - hx[i]
                ay = hy[t] - hy[i]
                if ax * ax + ay * ay < lim * lim:
                    m += self.OVERLAP
        return m

    def group_cells(self, i):
        """The covered pads of the group chip i was found in (the calibration counts them)."""
        for j in range(self.ng):
            if self.res0[j] <= i < self.res0[j] + self.resn[j] and self.resn[j] != 255:
                return self.g0[j + 1] - self.g0[j]
        return 0

    def group_area(self, i):
        """The area of chip i's seen disc in pads, x 100 (the calibration's radius: r^2 = area
        P^2 / pi), from the levels of its group's pads: they sum to about _LEVELS pi (r^2 +
        _LEV_SQ) / P^2 (one threshold: the count of covered pads). 0 if none."""
        for j in range(self.ng):
            if self.res0[j] <= i < self.res0[j] + self.resn[j] and self.resn[j] != 255:
                tot = 0
                for k in range(self.g0[j], self.g0[j + 1]):
                    tot += self.grid[self.cells[k]]
                a = 100 * tot // _LEVELS - 100 * 355 * _LEV_SQ // (113 * _PITCH * _PITCH)
                return a if a > 0 else 0
        return 0

    # -- what the pads can see ----------------------------------------------------------------
    def blind(self, x, y, r):
        """How many pads within r of (x, y) give no reading (ignored)."""
        n = 0
        c0 = (x - r - _X0) // _PITCH
        c1 = (x + r - _X0) // _PITCH + 1
        q0 = (y - r - _Y0) // _PITCH
        q1 = (y + r - _Y0) // _PITCH + 1
        for rr in range(q0 if q0 > 0 else 0, q1 + 1 if q1 < _ROWS else _ROWS):
            for cc in range(c0 if c0 > 0 else 0, c1 + 1 if c1 < _COLS else _COLS):
                g = rr * _COLS + cc
                if not self.usable[g] and (PRES_PRESENT[g >> 3] >> (g & 7)) & 1:
                    dx = _X0 + cc * _PITCH - x
                    dy = _Y0 + rr * _PITCH - y
                    if dx * dx + dy * dy <= r * r:
                        n += 1
        return n
