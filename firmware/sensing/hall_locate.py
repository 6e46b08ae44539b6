# Chips from a frame of hall pads (docs/sensing.md, "Sensing").
#
# Each chip carries a magnet: small chips north up (positive readings), big chips south up
# (negative). A magnet at height MAGNET_H above the pads gives  A * FIELD(rho^2) / FIELD_SCALE  at
# horizontal distance rho (FIELD: the dipole's B_z, tabulated by tools/gen_tables.py), where A,
# the chip's strength, is about ADC_PEAK.
#
# find(grid) fits that model to the frame (docs/sensing.md has the reasoning):
#  1. pads beyond +-THRESHOLD are candidates; a chip is seeded at each that is an extremum of its
#     sign among its 8 neighbours;
#  2. each is fitted jointly with the chips within GROUP: Gauss-Newton on all their x, y and A at
#     once over the union of their 4 x 4 pad windows (Levenberg-Marquardt damped, fixed point),
#     A held near the learnt strength of its kind; the fitted models are subtracted from a
#     residual;
#  3. a candidate still unexplained beyond RES_THRESHOLD is a chip hidden between stronger ones
#     (the middle one of three in a row has no extremum): seeded and fitted with its neighbours;
#  4. a chip fitting badly (SPLIT_ERR) is tried as two touching chips of its kind;
#  5. a last joint fit; chips closer than MIN_SEP merged, weaker than MIN_STRENGTH dropped.
# Absent pads (edges, corners, cup holes) and pads marked in `ignore` are left out of every fit:
# a chip there is fitted from the pads it has.
# Given the scanner, find() keeps its result while no pad jumps or drifts from the readings it
# last fitted (see __init__, hall_scan.mark): at rest a frame costs a comparison, not a fit.
#
# Results for i < n: kind[i] (shot.KIND_SMALL / KIND_BIG), x[i], y[i] (0.1 mm, board
# coordinates), strength[i] (|A|, LSB), err[i] (mean |residual| over the pads nearest the chip,
# LSB: about 10 at rest, high while a chip moves during the frame or where a pad misreads).
#
# Integers only, every intermediate below 2**30 (the RP2040's small ints; the bounds are in the
# comments, tests/test_sensing.py checks them), allocation-free after construction.
# RAM: 7 B per grid cell (residual, window stamp, usable and ignore flags: 5.1 KB) + about 1.3 KB.
#
# This module holds the locator's state, its API and a frame's course (find, _find, _finish);
# the rest along its seams (issue 15), as module functions of the Locator bound as its methods:
#   sensing/hall_fit.py     the joint fit itself (windows, Gauss-Newton, the solve, the model)
#   sensing/hall_seed.py    how chips are seeded, grouped, split and pruned (steps 1, 3, 4, 5)
#   sensing/hall_follow.py  how moving chips are followed, settled ones fitted again, outliers
import sys
import micropython
from micropython import const
from array import array

from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, PAD_PRESENT, ADC_PEAK,
                                NOISE_LSB, R_BIG)
from tracking.shot import KIND_SMALL, KIND_BIG
from sensing import hall_fit, hall_seed, hall_follow
from sensing.hall_seed import near_d2
from sensing.hall_scan import take as take_pads     # (viper; issue 13: 50 ms a fit in Python on the chip)

MAX_FOUND = const(8)       # chips reported at most
MAX_CAND = const(64)       # candidate pads at most
# issue 13: a chip lifts at most 4 pads beyond THRESHOLD (a chip of 1.25 ADC_PEAK anywhere over
# a pad), so MAX_FOUND chips 32; a frame with this many is no chips but a fault (every pad
# frozen mid-scale, every pad noisy): fitting its every candidate took 25 s on the chip (the
# watchdog's reset loop before the fault monitor could name the fault). Such a frame is not
# fitted: the chips of the last reading are kept, and unread counts the frames
MAX_PLAUSIBLE = const(48)
# ... and a frame with more candidates than the board's 4 chips lift (16) is read only if its
# candidates peak (a local extremum of its sign each) at MAX_FOUND places at most and at most
# MAX_FOUND of them read exactly what the candidate beside or below reads (a magnet's field is
# never that flat; pads frozen at one reading are): every pad of two muxes frozen mid-scale (32
# pads in 7 clusters; on the chip, the last muxes of a board whose every mux froze, before the
# fault monitor found them) was fitted as 8 chips, 40 joint fits (305 ms a frame on the chip),
# and those chips were made up
CROWD = const(16)
# ... and a frame of fewer candidates is read only if at most FLAT of them read exactly the raw
# reading (the ADC's, the baseline not taken off) of the usable pad to their right or below.
# One mux frozen mid-scale (its 16 pads at one raw reading; a row of pads, wired in order) is 16
# candidates, not more than CROWD: on the chip its pads were fitted as 8 made-up chips, 28 - 57
# joint fits, 0.4 - 1.0 s a find() (issue 13). Calibrated, their readings less their baselines
# differ, so the raw readings are compared. A magnet's field never gives two pads side by side
# the same reading but by chance (its slope is hundreds of LSB a mm), three pairs together not
# at all; pads frozen at one reading always do
FLAT = const(2)
MAX_GROUP = const(4)       # chips fitted jointly at most
MAX_WIN = const(64)        # pads in a joint fit window (4 x 4 per chip)
MAX_P = const(12)          # parameters of a joint fit (3 per chip)
MAX_ITER = const(10)       # Gauss-Newton iterations per fit at most
MAX_STEP = const(60)       # 6 mm: the most a fit moves a chip in one iteration
MAX_NEAR = const(128)      # usable pads next to ignored ones, at most
_RAIL = const(24000)       # LSB: a reading this far out is a fault, never a magnet (faults._RAIL)
N_GRID = PAD_COLS * PAD_ROWS
# the board's numbers flat_pairs uses, written out (viper inlines const() values of its own
# module only): checked against the tables at import
_COLS = const(19)          # PAD_COLS
_NGRID = const(722)        # N_GRID
if _COLS != PAD_COLS or _NGRID != N_GRID:
    raise ValueError("hall_locate: the board's tables changed: write out its constants again")

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: near_pads() runs as plain Python over the arrays
        return x

    def ptr16(x):
        return x

    def ptr32(x):
        return x


@micropython.viper
def near_pads(usable: ptr8, ignore: ptr8, near: ptr16, cols: int, rows: int, most: int) -> int:
    """The usable pads with an ignored pad among their 8 neighbours, in grid order, into near
    (at most `most`); returns how many. Viper: set_ignored() did this in plain Python, about
    60 ms on the RP2040, once per pad a fault left out (issue 13: thousands of ms when a whole
    mux or every pad fails); now once per find() after a change, about 0.5 ms."""
    n = 0
    h = 0
    r = 0
    while r < rows:
        c = 0
        while c < cols:
            if int(usable[h]) != 0 and n < most:
                hit = 0
                rr = r - 1
                while rr <= r + 1 and hit == 0:
                    if rr >= 0 and rr < rows:
                        cc = c - 1
                        while cc <= c + 1:
                            if cc >= 0 and cc < cols and int(ignore[rr * cols + cc]) != 0:
                                hit = 1
                                break
                            cc += 1
                    rr += 1
                if hit:
                    near[n] = h
                    n += 1
            h += 1
            c += 1
        r += 1
    return n


@micropython.viper
def flat_pairs(loc, nc: int, most: int) -> int:
    """How many of the first nc candidates (loc.cand) read exactly the raw reading (loc.res
    plus the scanner's baseline) of the usable pad to their right or, if not, below; counted
    to most + 1 at most. _chips_like's loop in machine code (issue 13: 0.45 ms a fit with four
    chips on the chip in Python); flat_plain is the same in Python. A 64-bit port loads an
    array('i') word without its sign: taken back to it. Three arguments: a viper call with
    more allocates them on the chip."""
    cand = ptr16(loc.cand)
    res = ptr32(loc.res)
    usable = ptr8(loc.usable)
    base = ptr16(loc.scan.baseline)
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    flat = 0
    i = 0
    while i < nc:
        g = int(cand[i])
        v = int(res[g])
        if (v >> 29) > 3:
            v -= w16 * w16
        v += int(base[g])
        hit = 0
        h = g + 1
        if h % _COLS != 0 and int(usable[h]) != 0:
            u = int(res[h])
            if (u >> 29) > 3:
                u -= w16 * w16
            if u + int(base[h]) == v:
                hit = 1
        if hit == 0:
            h = g + _COLS
            if h < _NGRID and int(usable[h]) != 0:
                u = int(res[h])
                if (u >> 29) > 3:
                    u -= w16 * w16
                if u + int(base[h]) == v:
                    hit = 1
        flat += hit
        if flat > most:
            return flat
        i += 1
    return flat


@micropython.viper
def unc_pass(loc, n: int):
    """Locator._uncertainty on a board with no pad left out (n_near 0: no blind() to ask), in
    machine code: unc and wander of chips 0 .. n - 1 exactly as the method's loop gives them
    (issue 13: 0.43 ms with four chips on the chip in Python, in the verdict's turn). Alone:
    no other chip nearer than TOUCH (near_d2's loop); odd: _odd's test. Positions within
    +-2**14 (the board's within +-5000): a sum of squares below 2**31; strengths within
    +-2**16. A 64-bit port loads an array('i') word without its sign (an array('h') one as
    unsigned on every port): taken back to it. Two arguments: a viper call with more than
    three allocates them on the chip."""
    xs = ptr32(loc.x)
    ys = ptr32(loc.y)
    amps = ptr32(loc.amp)
    errs = ptr32(loc.err)
    outl = ptr16(loc.outlier)
    wander = ptr32(loc.wander)
    unc = ptr32(loc.unc)
    touch = int(loc.TOUCH)
    lim = touch * touch
    u_alone = int(loc.UNC_ALONE)
    u_row = int(loc.UNC_ROW)
    u_blind = int(loc.UNC_BLIND)
    u_bad = int(loc.UNC_BADFIT)
    bad_err = int(loc.bad_err)
    extra = 0
    if bad_err > int(loc.OUTLIER_ERR):
        extra = int(loc.UNC_UNCALIBRATED)
    amax = int(loc.amax)
    ref_s = int(loc.ref_s)
    ref_b = int(loc.ref_b)
    row_dev = int(loc.ROW_DEV)
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    i = 0
    while i < n:
        x = int(xs[i])
        if (x >> 29) > 3:
            x -= w16 * w16
        y = int(ys[i])
        if (y >> 29) > 3:
            y -= w16 * w16
        alone = 1
        j = 0
        while j < n:
            if j != i:
                dx = int(xs[j])
                if (dx >> 29) > 3:
                    dx -= w16 * w16
                dy = int(ys[j])
                if (dy >> 29) > 3:
                    dy -= w16 * w16
                dx -= x
                dy -= y
                if dx * dx + dy * dy < lim:
                    alone = 0
            j += 1
        u = u_row
        if alone:
            u = u_alone
        if (int(outl[i]) & 0xFFFF) < 0x8000:      # outlier[i] >= 0 (viper loads an array("h") unsigned)
            u += u_blind
        if alone == 0:
            # _odd(i)
            a = int(amps[i])
            if (a >> 29) > 3:
                a -= w16 * w16
            odd = 0
            if a >= amax or a <= 0 - amax:
                odd = 1
            else:
                r = 0 - ref_b
                if a > 0:
                    r = ref_s
                d = a - r
                if d < 0:
                    d = 0 - d
                if r < 0:
                    r = 0 - r
                if d * row_dev > r:
                    odd = 1
            if odd:
                u += u_bad
        e = int(errs[i])
        if (e >> 29) > 3:
            e -= w16 * w16
        if e > bad_err:
            u += u_bad
        wander[i] = u
        unc[i] = u + extra
        i += 1


@micropython.viper
def finish_pass(loc, n: int, settled: int):
    """Locator._finish's loops over chips 0 .. n - 1 after _reject, in machine code (issue 13:
    the verdict's frame with four chips): px, py the frame's (rx, ry); settled (1, or 2: the
    settle's _win_err values in hall_follow.SETTLE_WERR): moved 0, serr = err, fe 1, and kept 1 where
    refresh() asked for the fit (followed 2); 2: werr = settle_werr; kind and strength from the
    signed strength (amp).
    Strengths within +-2**30. A 64-bit port loads an array('i') word without its sign: taken
    back to it. Three arguments: a viper call with more allocates them on the chip."""
    px = ptr32(loc.px)
    py = ptr32(loc.py)
    rx = ptr32(loc.rx)
    ry = ptr32(loc.ry)
    moved = ptr8(loc.moved)
    serr = ptr32(loc.serr)
    err = ptr32(loc.err)
    fe = ptr32(loc.fe)
    kept = ptr8(loc.kept)
    werr = ptr32(loc.werr)
    settle_werr = ptr32(hall_follow.SETTLE_WERR)
    amp = ptr32(loc.amp)
    kind = ptr8(loc.kind)
    strength = ptr32(loc.strength)
    small = int(KIND_SMALL)
    big = int(KIND_BIG)
    follow2 = 0
    if settled != 0 and int(loc.followed) == 2:
        follow2 = 1
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    i = 0
    while i < n:
        px[i] = rx[i]
        py[i] = ry[i]
        if settled != 0:
            moved[i] = 0
            serr[i] = err[i]
            fe[i] = 1
            if follow2 != 0:
                kept[i] = 1
            if settled == 2:
                werr[i] = settle_werr[i]
        a = int(amp[i])
        if (a >> 29) > 3:
            a -= w16 * w16
        if a > 0:
            kind[i] = small
            strength[i] = a
        else:
            kind[i] = big
            strength[i] = 0 - a
        i += 1


def flat_plain(res, usable, base, cand, nc, most):
    """flat_pairs in Python, with the baseline given (None: the readings are raw): the
    locator without a scanner (the desktop's sensing tests) and the reference
    tests/test_flat_near_viper.py holds flat_pairs to."""
    flat = 0
    for i in range(nc):
        g = cand[i]
        v = res[g]
        if base is not None:
            v += base[g]
        h = g + 1
        if h % PAD_COLS and usable[h] and res[h] + (base[h] if base is not None else 0) == v:
            flat += 1
        else:
            h = g + PAD_COLS
            if h < N_GRID and usable[h] and res[h] + (base[h] if base is not None else 0) == v:
                flat += 1
        if flat > most:
            return flat
    return flat


class Locator:
    GRADED = True          # strengths are measured: a chip lifted fades (tracker.py, issue 4)
    cut = 0                # (the presence locator's 2: a still search not finished; never here)
    THRESHOLD = 1200       # LSB: a pad this far from its baseline may be a chip (30 x noise)
    RES_THRESHOLD = 600    # LSB: what the fits leave unexplained at a candidate pad, to look there
    MIN_SEP = 250          # 25 mm: two chips' centres are never closer (small + small: 28 mm)
    GROUP = 900            # 90 mm: chips closer than this are fitted jointly (three big in a row)
    # a single fit missing by more than this (mean |residual|, LSB) may be two chips in one
    SPLIT_ERR = ADC_PEAK // 50
    MIN_SPLIT = ADC_PEAK // 2      # and either of the two must be at least this strong
    # the weakest chip reported (a magnet half lifted off the board, or a fit to nothing)
    MIN_STRENGTH = ADC_PEAK // 4
    # how well a chip's strength is known beforehand (LSB, one sigma): the spread of the magnets
    # of one kind around the reference, which is learnt from chips lying alone. 0: not used.
    PRIOR_SIGMA = ADC_PEAK // 20
    # issue 4: pads next to ignored ones are candidates from near_threshold on (a chip centred
    # on a dead row gives its neighbours at 25 mm about ADC_PEAK / 22, at 27 mm / 40). That is
    # below the spread of the sensors' zero points: only a calibrated board (calib.py sets it,
    # with the baselines) can look that low; uncalibrated, NEAR_UNCALIBRATED.
    NEAR_THRESHOLD = 300
    NEAR_UNCALIBRATED = 800
    # how far a centre may be from the fit (0.1 mm; docs/sensing.md, measured accuracy): a
    # chip alone, one with another within GROUP, and more where pads within UNC_BLIND_R are
    # ignored
    UNC_ALONE = 5
    UNC_ROW = 12
    TOUCH = R_BIG * 2 + 60      # chips closer than this count as in a row (UNC_ROW)
    UNC_BLIND = 20
    UNC_BLIND_R = 350
    UNC_BADFIT = 150
    # ... and on an uncalibrated board (no calib.py zeros: bad_err still OUTLIER_UNCALIBRATED)
    # this more: the sensors' own zeros, some 300 LSB apart, pull a still chip's fit by up to
    # 3.5 mm (bench/sensing_accuracy.py --uncalibrated, 2800 chips alone: 95 % 1.3 mm, 99 %
    # 1.8 mm), where UNC_ALONE holds for calibrated zeros only. A small chip fitted 1.3 mm off,
    # its rim 0.2 mm from the centre line, was a sure 7 for a 3 (the shot bench, seed 31; issue
    # 12). In unc only, not in wander: the offsets are the same every frame, so moves are seen
    # as before
    UNC_UNCALIBRATED = 35
    BLIND_PAIR = 7      # quarters of one chip's strength: a pair beside dead pads weaker is one
    # a chip about still (within OUTLIER_STILL of a chip of the frame before) fitting worse than
    # this (mean |residual|, LSB; about 10 normally) is fitted again without a suspect pad
    OUTLIER_ERR = 60
    # uncalibrated, the sensors' own zeros (some 300 LSB apart) leave a still chip's fit a mean
    # residual of up to about 200: a verdict is called unsure for a bad fit only beyond bad_err,
    # OUTLIER_ERR once calibrated (calib.py), this before
    OUTLIER_UNCALIBRATED = 400
    OUTLIER_STILL = 100
    OUTLIER_GAIN = 3
    # a chip whose fitted strength is off its kind's by more than 1 / ROW_DEV (magnets differ
    # by about 3 %) has its group fitted again from evenly spaced starts (_row)
    ROW_DEV = 12
    # while pads jump (_follow): a chip of the frame before within FOLLOW_MATCH of an extremum
    # seeds it with its strength, within FOLLOW_NEAR with its position too, and is fitted only
    # if its pads miss by FOLLOW_ERR (mean |residual|, LSB) more than they did (a chip lying
    # still is left as it was); FOLLOW_ITERS iterations a fit, FOLLOW_FITS fits a frame at most
    # (docs/performance.md: <= 100 ms a frame on the Pico)
    FOLLOW_MATCH = 900
    FOLLOW_NEAR = 60
    FOLLOW_ERR = 60
    SETTLE_ERR = 20     # ... and one left as it was is fitted again when the pads hold still
    FOLLOW_ITERS = 2
    FOLLOW_FITS = 8

    # the seams (issue 15): the fit itself, seeding and splitting, following; module functions
    # of `self` bound here as the methods they were, so every call is as cheap as before
    _span = hall_fit.span
    _window = hall_fit.window
    _fit_group = hall_fit.fit_group
    _model = hall_fit.model
    _win_err = hall_fit.win_err
    _copy = hall_fit.copy
    _restore = hall_fit.restore
    _extrema = hall_seed.extrema
    _strongest = hall_seed.strongest
    _extremum = hall_seed.extremum
    _seed = hall_seed.seed
    _prune = hall_seed.prune
    _merge_blind = hall_seed.merge_blind
    _nearest = hall_seed.nearest
    _group = hall_seed.group
    _split = hall_seed.split
    _apart = hall_seed.apart
    _unsplit = hall_seed.unsplit
    _odd = hall_seed.odd
    _row = hall_seed.row
    _follow = hall_follow.follow
    _settle = hall_follow.settle
    _was_near = hall_follow.was_near
    _reject = hall_follow.reject
    _refit_without = hall_follow.refit_without
    _put_back = hall_follow.put_back

    def __init__(self, scan=None):
        # scan (hall_scan.HallScanner, or None: fit every frame): find() fits a frame again
        # only when a pad jumped since (scan.jumps), as the presence locator does with
        # `version`. A frame without a jump after one with jumps is fitted once more (the
        # chips as they came to rest, on settled readings), then the result is kept (same
        # chips, same positions) until a pad jumps, a pad is left out or the references change.
        self.scan = scan
        self.last_jumps = -1    # scan.jumps at the last find()
        self.still_fit = 0      # 1: the result is a fit of a frame with no jump since the one before
        self.kept_near = 0      # near_threshold, ref_s, ref_b when that fit was made
        self.kept_s = 0
        self.kept_b = 0
        self.n = 0
        self.kind = bytearray(MAX_FOUND)
        self.x = array('i', bytes(4 * MAX_FOUND))
        self.y = array('i', bytes(4 * MAX_FOUND))
        self.strength = array('i', bytes(4 * MAX_FOUND))
        self.err = array('i', bytes(4 * MAX_FOUND))
        self.amp = array('i', bytes(4 * MAX_FOUND))     # signed A
        self.x0 = array('i', bytes(4 * MAX_FOUND))      # where the chip was seeded
        self.y0 = array('i', bytes(4 * MAX_FOUND))
        self.sub = bytearray(MAX_FOUND)                 # 1: its model is out of the residual
        self.res = array('i', bytes(4 * N_GRID))        # the frame less the fitted chips
        self.cand = array('h', bytes(2 * MAX_CAND))
        self.cused = bytearray(MAX_CAND)
        self.ignore = bytearray(N_GRID)     # 1: leave this pad out (a faulty pad; issue 4)
        self.near = array('h', bytes(2 * MAX_NEAR))     # usable pads next to ignored ones
        self.n_near = 0
        self.near_stale = 0     # 1: a pad was left out or taken back since near was made
        self.near_threshold = self.NEAR_UNCALIBRATED
        self.unc = array('i', bytes(4 * MAX_FOUND))     # how well each centre is known
        self.wander = array('i', bytes(4 * MAX_FOUND))  # how far a still chip's fit may move
        self.bad_err = self.OUTLIER_UNCALIBRATED
        self.hand = 0                                   # hall pads never see a hand
        self.px = array('i', bytes(4 * MAX_FOUND))      # the chips of the frame before
        self.py = array('i', bytes(4 * MAX_FOUND))
        self.pn = 0
        self.rx = array('i', bytes(4 * MAX_FOUND))      # this frame's, before _reject
        self.ry = array('i', bytes(4 * MAX_FOUND))
        self.outlier = array('h', bytes(2 * MAX_FOUND)) # the pad left out of chip i's fit, or -1
        self.keep = array('i', bytes(4 * 3 * MAX_GROUP))
        self.kerr = array('i', bytes(4 * MAX_GROUP))    # _row: the members' err before
        self.rank = bytearray(MAX_GROUP)
        self.usable = bytearray(PAD_PRESENT)
        # the joint fit: members, window, normal equations
        self.gm = bytearray(MAX_GROUP)
        self.gk = 0
        self.gerr = array('i', bytes(4 * MAX_GROUP))     # per member: sum |residual| on its pads
        self.gcnt = array('i', bytes(4 * MAX_GROUP))
        self.win = array('h', bytes(2 * MAX_WIN))
        self.stamp = bytearray(N_GRID)
        self.st = 0
        self.nm = array('i', bytes(4 * MAX_P * MAX_P))
        self.rhs = array('i', bytes(4 * MAX_P))
        self.col = array('i', bytes(4 * MAX_P))
        self.d = array('i', bytes(4 * MAX_P))
        self.sh = bytearray(MAX_P)
        self.n_cand = 0
        self.unread = 0      # frames in a row too implausible to fit (MAX_PLAUSIBLE), 0: read
        self.amax = ADC_PEAK + (ADC_PEAK >> 2)      # the strongest A a fit may give now
        # the strength of a small and of a big chip lying alone (learnt, see find)
        self.ref_s = ADC_PEAK
        self.ref_b = ADC_PEAK
        self.prior_k8 = 0
        self.set_prior(self.PRIOR_SIGMA)
        # while pads jump (find, _follow): the chips of the frame before, which seed this one's
        self.qx = array('i', bytes(4 * MAX_FOUND))
        self.qy = array('i', bytes(4 * MAX_FOUND))
        self.qa = array('i', bytes(4 * MAX_FOUND))
        self.qclaim = bytearray(MAX_FOUND)
        # the frame before's werr (the settle's own and _follow's correction: hall_follow)
        self.qe = array('i', bytes(4 * MAX_FOUND))
        self.werr = array('i', bytes(4 * MAX_FOUND))    # _win_err of each chip found
        self.moved = bytearray(MAX_FOUND)   # 1: fitted by _follow since the last full fit
        # 1: chip i's fit is the one the last refresh made (the tracker's rest position), not
        # fitted since: refresh() leaves it, unless its pads no longer fit it (_settle)
        self.kept = bytearray(MAX_FOUND)
        self.serr = array('i', bytes(4 * MAX_FOUND))    # err at the last full fit
        self.qs = array('i', bytes(4 * MAX_FOUND))
        self.qo = array('h', bytes(2 * MAX_FOUND))
        self.qm = bytearray(MAX_FOUND)
        self.followed = 0    # 1: the result is _follow's, 2: refresh() asked for a fit
        self.fe = array('i', bytes(4 * MAX_FOUND))      # _follow: fit chip i beyond this
        self.iters = 0       # Gauss-Newton iterations of a fit at most (0: MAX_ITER and more)
        self.fits = 0        # single-chip fits made by the last _follow (the bench reads it)
        self.c0 = 0          # _span's square
        self.c1 = 0
        self.r0 = 0
        self.r1 = 0
        self.sx = 0          # chip n as it was before a split was tried
        self.sy = 0
        self.sa = 0
        self.se = 0
        # the refresh's fit paced over loop turns (settle): bit 32 on (the chip: the register
        # path's scanner, whose loop turns the app keeps within 10 ms; issue 13), 64 asked by
        # refresh(), 16 under way (the next chip to fit in bits 0 - 3, n: its end; the
        # candidates' lowest reading, _take's, from bit 7 on)
        self.pace = 32 if scan is not None and getattr(scan, "hw", False) else 0

    def set_prior(self, sigma):
        """How well the chips' strength is known (LSB, one sigma; 0: not at all)."""
        self.prior_k8 = 256 * NOISE_LSB // sigma if sigma > 0 else 0
        self.still_fit = 0
        if self.prior_k8 > 200:
            self.prior_k8 = 200

    def set_ignored(self, g, flag):
        """Leave pad g (grid index) out of every fit from now on (flag 1), or take it back."""
        self.ignore[g] = 1 if flag else 0
        self.usable[g] = 1 if (PAD_PRESENT[g] and not flag) else 0
        self.still_fit = 0      # the kept result counted this pad
        self.near_stale = 1     # near is made again by the next find(), once for every change

    def _near(self):
        # the usable pads next to ignored ones: a chip over a dead pad or row may show nowhere
        # beyond THRESHOLD, so these are candidates from NEAR_THRESHOLD on
        self.near_stale = 0
        self.n_near = near_pads(self.usable, self.ignore, self.near, PAD_COLS, PAD_ROWS, MAX_NEAR)

    def blind(self, x, y, r):
        """How many pads within r of (x, y) give no reading (set_ignored)."""
        n = 0
        for rr in range(PAD_ROWS):
            dy = PAD_Y0 + rr * PAD_PITCH - y
            if dy > r or dy < -r:
                continue
            for cc in range(PAD_COLS):
                dx = PAD_X0 + cc * PAD_PITCH - x
                if self.ignore[rr * PAD_COLS + cc] and dx * dx + dy * dy <= r * r:
                    n += 1
        return n


    def _uncertainty(self, n):
        """unc[i]: how far chip i's centre may lie from x[i], y[i] (0.1 mm), from what
        bench/sensing_accuracy.py measured: chips alone (max 0.41 mm), chips touching others
        (99 %: 1.14 mm), more where pads are missing or the fit is bad. (With no pad left
        out, unc_pass: the same in machine code, tests/test_flat_near_viper.py)"""
        if not self.n_near:
            unc_pass(self, n)
            return
        lim = self.TOUCH * self.TOUCH
        for i in range(n):
            alone = near_d2(self, i, n) >= lim     # (_nearest(i, n, -1, lim) < 0)
            u = self.UNC_ALONE if alone else self.UNC_ROW
            if self.outlier[i] >= 0 or (self.n_near and self.blind(self.x[i], self.y[i], self.UNC_BLIND_R)):
                u += self.UNC_BLIND
            if not alone and self._odd(i):
                # a row's joint fit sharing the field out wrongly (its strength far from its
                # kind's): three big chips 44 mm apart were fitted 4 - 5 mm off on an
                # uncalibrated board (issue 12). Where, is not known: unsure, and a fit that
                # may move by that much when a neighbour is put down
                u += self.UNC_BADFIT
            # wander: how far the fit may move frame to frame while the chip lies still (the
            # tracker's tolerances), more for a fit that does not explain its pads well. From
            # bad_err on, as unc: uncalibrated, the sensors' own zeros leave every still fit
            # 100 - 200 LSB, the same every frame, and a tolerance of 15 mm more hid a chip
            # creeping or slid 10 - 25 mm (issue 12)
            if self.err[i] > self.bad_err:
                u += self.UNC_BADFIT        # the model does not explain the pads: anywhere near
            self.wander[i] = u
            self.unc[i] = u + (self.UNC_UNCALIBRATED if self.bad_err > self.OUTLIER_ERR else 0)

    # -- the frame -----------------------------------------------------------------------------
    def find(self, grid):
        """Chips in one frame of signed pad readings (grid index order). Returns their number."""
        if self.pace & 16:
            # the refresh's fit paced (on the chip): its next piece, on the frame it took (the
            # app's turns after that frame scan nothing and call find() again until it is made)
            n = self._settle(grid)
            if not self.pace & 16:
                self.still_fit = 0 if self.unread else 1      # (as below)
                self.kept_near = self.near_threshold
                self.kept_s = self.ref_s
                self.kept_b = self.ref_b
            return n
        if self.near_stale:
            self._near()
        sc = self.scan
        if sc is not None:
            j = sc.jumps
            same = j == self.last_jumps
            self.last_jumps = j
            if (same and self.still_fit and self.kept_near == self.near_threshold
                    and self.kept_s == self.ref_s and self.kept_b == self.ref_b):
                return self.n   # nothing moved since a fit of a settled frame: keep it
            # the readings fitted now: a pad drifting away from them counts as a jump
            # (hall_scan.mark; issue 12: a chip creeping to rest never jumps a pad)
            sc.mark()
            if not same:
                # pads jump: chips move (or are put down, lifted), and the frame is smeared
                # (its banks were read over 16 steps): follow the chips of the frame before
                self.still_fit = 0
                self.pace &= 32         # (a refresh asked: followed now, not paced)
                return self._follow(grid)
            n = self._settle(grid) if self.followed else self._find(grid)
            if self.pace & 16:
                return n                # paced: the chips of the frame before until it is made
            self.pace &= 32
            # (a frame not read is looked at again next time, never kept as a fit)
            self.still_fit = 1 if same and not self.unread else 0
            self.kept_near = self.near_threshold
            self.kept_s = self.ref_s
            self.kept_b = self.ref_b
            return n
        return self._find(grid)

    def refresh(self):
        """The tracker takes the chips' positions now that the board rests: the next find()
        fits every chip fitted since the last refresh again, jointly with its neighbours, on the
        settled readings (_settle; the whole search if that does not explain them), instead of
        keeping a fit made while a chip crept to rest or on readings still settling (issue 12).
        Once per shot. A chip fitted without a misreading pad (outlier, _reject) keeps that fit:
        fitted again with the pad, it lands far off and too weak, and is no longer near enough
        to be rejected. A chip not fitted since the last refresh (kept) keeps its fit too, unless
        its pads now miss it (_settle, SETTLE_ERR): fitted again on new noise, a row of chips'
        joint fit slid along the row by up to 11 mm, which the tracker took for a move (a
        phantom shot; docs/sensing.md, "A still chip keeps the verdict's fit")."""
        for i in range(self.n):
            if self.outlier[i] < 0 and not self.kept[i]:
                self.moved[i] = 1
        self.followed = 2       # (the settled fit it asks for is the next rest's: _finish)
        self.still_fit = 0
        # on the chip that fit is paced over the loop turns after its frame (settle; issue 13:
        # 11.5 ms with four chips, and the tracker's verdict after it, in one turn)
        if self.pace & 32:
            self.pace |= 64

    def _take(self, grid):
        """The frame into the residual (usable pads only) and its candidate pads into cand.
        Returns the lowest reading a candidate has (THRESHOLD, lower beside ignored pads), or
        -1 for a frame too implausible to fit (MAX_PLAUSIBLE: the caller keeps its chips)."""
        res = self.res
        usable = self.usable
        cand = self.cand
        cused = self.cused
        t = self.THRESHOLD
        # every pad: at a rail 0 (no magnet reads that, a fault does: faults.py)
        nc = take_pads(grid, usable, res, cand, cused, N_GRID, t, _RAIL, MAX_CAND)
        if nc >= MAX_PLAUSIBLE or (nc > FLAT and not self._chips_like(nc)):
            self.n_cand = 0
            self.unread += 1
            return -1
        self.unread = 0
        tl = t
        if self.n_near:
            tl = self.near_threshold
            for k in range(self.n_near):
                g = self.near[k]
                v = res[g]
                if (t >= v > tl or -t <= v < -tl) and nc < MAX_CAND:
                    cand[nc] = g
                    cused[nc] = 0
                    nc += 1
        self.n_cand = nc
        return tl

    def _chips_like(self, nc):
        """The first nc candidates read like chips: at most FLAT of them (MAX_FOUND of a crowd,
        more than CROWD) read exactly the raw reading of the usable pad to their right or below,
        and a crowd's peak (local extrema of their sign, as _extrema seeds chips) at MAX_FOUND
        places at most (see CROWD, FLAT)."""
        cand = self.cand
        crowd = nc > CROWD
        if crowd:
            # (counted apart from the flat pairs: either count past its most says no, in
            # whatever order they are counted)
            peaks = 0
            for i in range(nc):
                if self._extremum(cand[i]):
                    peaks += 1
                    if peaks > MAX_FOUND:
                        return False
        most = MAX_FOUND if crowd else FLAT
        if self.scan is not None:
            return flat_pairs(self, nc, most) <= most
        return flat_plain(self.res, self.usable, None, cand, nc, most) <= most

    def _hold(self):
        """A fit's strengths at most 1/16 over the larger reference strength."""
        r = self.ref_s if self.ref_s > self.ref_b else self.ref_b
        self.amax = r + (r >> 4)


    def _find(self, grid):
        tl = self._take(grid)
        if tl < 0:
            return self.n       # not a frame of chips (a fault): the last reading stands
        nc = self.n_cand
        cand = self.cand
        t = self.THRESHOLD
        sep2 = self.MIN_SEP * self.MIN_SEP
        # 1. a chip at every local extremum of the frame, strongest first
        n = self._extrema(0, tl)
        # 2. fit them, each jointly with its neighbours; twice, so neighbours settle together
        # (tightly held to the reference strength: a chip that has no extremum of its own, next
        # to these, must stay in the residual for step 3, not be shared out among them)
        self._hold()
        for _ in range(2):
            for i in range(n):
                self._group(i, n)
                self._fit_group()
        n = self._prune(n, t)
        # 3. what the fits leave unexplained: chips hidden next to stronger ones (no extremum
        # of their own), each fitted jointly with the chips near it
        for k in range(nc):
            self.cused[k] = 0
        while n < MAX_FOUND:
            k = self._strongest(nc, self.RES_THRESHOLD)
            if k < 0:
                break
            g = cand[k]
            self.cused[k] = 1
            self._seed(g, n)
            self.sub[n] = 0
            # a chip hidden by its neighbours is a whole chip: start it at the reference strength
            self.amp[n] = self.ref_s if self.amp[n] > 0 else -self.ref_b
            gk = self._group(n, n)
            # its neighbours have likely taken in part of it: they start again at the reference
            # strength
            for q in range(1, gk):
                i = self.gm[q]
                self._restore(i)
                self.amp[i] = self.ref_s if self.amp[i] > 0 else -self.ref_b
                self.x[i] = self.x0[i]
                self.y[i] = self.y0[i]
            ok = self._fit_group()
            a = self.amp[n]
            j = self._nearest(n, n, -1, sep2)
            if ok and j >= 0 and (a > 0) == (self.amp[j] > 0):
                # it ran into chip j, which had taken in part of it: start the two again
                # touching, either side of their midpoint, and fit them once more
                self._apart(n, j)
                gk = self._group(n, n)
                ok = self._fit_group()
                a = self.amp[n]
                j = self._nearest(n, n, -1, sep2)
            if not ok or -t < a < t or j >= 0:
                # nothing there, or a leftover of a chip already fitted: drop it, refit the rest
                self._restore(n)
                if gk > 1:
                    gm = self.gm
                    for q in range(1, gk):
                        gm[q - 1] = gm[q]
                    self.gk = gk - 1
                    self._fit_group()
                continue
            n += 1
            n = self._prune(n, t)
        # 4. a chip whose fit still misses badly (its neighbours fitted with it) may be two chips
        # taken for one: try it as two
        i = 0
        while i < n and n + 1 < MAX_FOUND:
            # (not over ignored pads: there two chips would fit the little seen as well as one)
            if self.err[i] > self.SPLIT_ERR and not (self.n_near and self.blind(self.x[i], self.y[i], self.UNC_BLIND_R)):
                # work on it as chip n, so that _split has n + 1 free; slot i is a hole meanwhile
                self._copy(i, n)
                self.sub[i] = 0
                if self._split(n, i):
                    if self._nearest(n, n + 2, i, sep2) < 0 and self._nearest(n + 1, n + 2, i, sep2) < 0:
                        self._copy(n + 1, i)
                        n += 1
                        self._group(i, n)
                        self._fit_group()
                        continue         # look at chip i again: three in one?
                    self._unsplit(n)
                self._copy(n, i)
                self.sub[n] = 0
            i += 1
        n = self._prune(n, t)
        # 5. a last joint fit of every chip with its neighbours (steps 3 and 4 fitted the groups
        # around new chips only)
        for i in range(n):
            if self._group(i, n) > 1:
                self._fit_group()
        n = self._prune(n, self.MIN_STRENGTH)
        if self.n_near:
            n = self._merge_blind(n)
        # 6. a row whose joint fit looks like a false minimum: started again from its ends
        i = 0
        while i < n:
            if self._odd(i) or self._group(i, n) >= 3:
                n = self._row(i, n)
            i += 1
        for i in range(n):
            self.moved[i] = 1       # all fitted afresh
            self.kept[i] = 0
        return self._finish(n, grid, True)


    def _finish(self, n, grid, settled):
        """The results of chips 0 .. n - 1 (settled: a full fit, which may refit a chip without
        a misreading pad and teaches the reference strengths; moved[i]: chip i was fitted
        afresh, the others keep their outlier). Returns n."""
        # issue 4: on a still board, a chip that fits badly may have one pad under it that
        # misreads (a sensor that went blind or stuck, before the fault monitor leaves it
        # out): fitted again without the pad that misses most, kept if that fits far better
        # (stillness from the fits before any pad is left out, which are alike frame to frame)
        # (the arrays in locals: a lookup each fewer a chip in the verdict's turn, issue 13;
        # the same arrays, which _reject's fits write in place)
        x = self.x
        y = self.y
        rx = self.rx
        ry = self.ry
        moved = self.moved
        err = self.err
        for i in range(n):
            rx[i] = x[i]
            ry[i] = y[i]
        # (uncalibrated, every fit misses by up to bad_err / 2 through the sensors' own zeros:
        # only a fit worse than that is looked at, or every still chip would be fitted again
        # once per suspect pad, seconds on the Pico, for nothing)
        rej = self.OUTLIER_ERR if self.bad_err <= self.OUTLIER_ERR else self.bad_err >> 1
        # (a chip that was not fitted again keeps what it had)
        for i in range(n):
            if moved[i]:
                self.outlier[i] = -1
                if settled and err[i] > rej and self._was_near(i, self.OUTLIER_STILL):
                    self._reject(i, n, grid)
        # (the frame before's positions, settled: not moved, serr, fe 1 (not fitted by _follow:
        # its next frame's test, hall_follow), kept (the fit refresh() asked for: the positions
        # the tracker takes as the rest's), werr when the settle's, kind and strength: in
        # machine code, finish_pass; issue 13, the verdict's frame)
        finish_pass(self, n, settled)
        self.pn = n
        self.followed = 0 if settled else 1
        if settled:
            lim = self.GROUP * self.GROUP
            good = self.SPLIT_ERR // 2
            amp = self.amp
            werr = self.werr
            for i in range(n):
                if settled != 2:
                    werr[i] = self._win_err(i)
                a = amp[i]
                s = a if a > 0 else -a
                # learn the reference strength of the kind from a chip alone that fits well
                # (near_d2 >= lim: _nearest(i, n, -1, lim) < 0, in machine code)
                if err[i] < good and near_d2(self, i, n) >= lim:
                    r = self.ref_s if a > 0 else self.ref_b
                    if 4 * s > 3 * r and 4 * s < 5 * r:
                        r += (s - r) >> 5
                        if a > 0:
                            self.ref_s = r
                        else:
                            self.ref_b = r
        self.n = n
        self._uncertainty(n)
        return n


    # -- helpers ---------------------------------------------------------------------------


    # -- the joint fit ---------------------------------------------------------------------------
