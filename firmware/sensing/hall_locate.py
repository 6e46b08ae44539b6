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
import sys
import micropython
from micropython import const
from array import array

from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, PAD_PRESENT, FIELD,
                         FIELD_BIN, FIELD_SCALE, FIELD_REACH2, ADC_PEAK, NOISE_LSB,
                         R_SMALL, R_BIG, HALF_W, HALF_L, CORNER_SUM)
from tracking.shot import KIND_SMALL, KIND_BIG

MAX_FOUND = const(8)       # chips reported at most
MAX_CAND = const(64)       # candidate pads at most
MAX_GROUP = const(4)       # chips fitted jointly at most
MAX_WIN = const(64)        # pads in a joint fit window (4 x 4 per chip)
MAX_P = const(12)          # parameters of a joint fit (3 per chip)
MAX_ITER = const(10)       # Gauss-Newton iterations per fit at most
MAX_STEP = const(60)       # 6 mm: the most a fit moves a chip in one iteration
MAX_NEAR = const(128)      # usable pads next to ignored ones, at most
_RAIL = const(24000)       # LSB: a reading this far out is a fault, never a magnet (faults._RAIL)
N_GRID = PAD_COLS * PAD_ROWS

# where a chip's centre can be: R_SMALL inside the outline
_XMAX = HALF_W - R_SMALL
_YMAX = HALF_L - R_SMALL
_SMAX = CORNER_SUM - R_SMALL * 141 // 100
_NEIGH4 = (-1, 1, -PAD_COLS, PAD_COLS)      # a grid cell's 4 neighbours, as index steps

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: near_pads() runs as plain Python over the arrays
        return x

    def ptr16(x):
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

# the model's reach (0.1 mm): FIELD is 0 from there on
_REACH = 0
while (_REACH + 1) * (_REACH + 1) < FIELD_REACH2:
    _REACH += 1


class Locator:
    GRADED = True          # strengths are measured: a chip lifted fades (tracker.py, issue 4)
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
    FOLLOW_ITERS = 2
    FOLLOW_FITS = 8

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
        self.tsh = 0
        self.n_cand = 0
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
        self.qe = array('i', bytes(4 * MAX_FOUND))
        self.werr = array('i', bytes(4 * MAX_FOUND))    # _win_err of each chip found
        self.moved = bytearray(MAX_FOUND)   # 1: fitted by _follow since the last full fit
        self.serr = array('i', bytes(4 * MAX_FOUND))    # err at the last full fit
        self.qs = array('i', bytes(4 * MAX_FOUND))
        self.qo = array('h', bytes(2 * MAX_FOUND))
        self.qm = bytearray(MAX_FOUND)
        self.followed = 0    # 1: the result is _follow's
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

    def _was_near(self, i, d):
        """A chip was found within d of chip i in the frame before (chip i is about still)."""
        d2 = d * d
        for j in range(self.pn):
            dx = self.px[j] - self.rx[i]
            dy = self.py[j] - self.ry[i]
            if dx * dx + dy * dy <= d2:
                return True
        return False

    def _reject(self, i, n, grid):
        """Fit chip i (with its group) again without one pad of its window: the pad that misses
        most, and each pad reading nearly nothing beside one that reads a chip (a blind sensor
        under a chip looks like that). Keeps the best if the fit gets OUTLIER_GAIN times better
        (outlier[i]: that pad), else everything is put back as it was."""
        usable = self.usable
        self._span(self.x[i], self.y[i], 2, 5)
        c0 = self.c0
        c1 = self.c1
        r0 = self.r0
        r1 = self.r1
        gk = self._group(i, n)
        gm = self.gm
        keep = self.keep
        for q in range(gk):
            j = gm[q]
            keep[3 * q] = self.x[j]
            keep[3 * q + 1] = self.y[j]
            keep[3 * q + 2] = self.amp[j]
        before = self.err[i]
        best = before
        bg = -1
        t = self.THRESHOLD
        for r in range(r0, r1):
            for g in range(r * PAD_COLS + c0, r * PAD_COLS + c1):
                if not usable[g]:
                    continue
                v = grid[g]
                if v >= (t >> 2) or v <= -(t >> 2):
                    continue
                loud = False
                for k in range(4):
                    h = g + _NEIGH4[k]
                    if 0 <= h < N_GRID and usable[h] and (grid[h] > (t >> 1) or grid[h] < -(t >> 1)):
                        loud = True
                if not loud:
                    continue
                e = self._refit_without(g, gk)
                if e >= 0 and e < best:
                    best = e
                    bg = g
                self._put_back(gk)
        if bg >= 0 and self.OUTLIER_GAIN * best < before:
            self._refit_without(bg, gk)
            self.outlier[i] = bg
            return
        self.err[i] = before

    def _refit_without(self, g, gk):
        """The group fitted again from its kept start with pad g left out: chip gm[0]'s err, or
        -1 if the fit failed."""
        self._put_back(gk)
        self.usable[g] = 0
        ok = self._fit_group()
        self.usable[g] = 1
        return self.err[self.gm[0]] if ok else -1

    def _put_back(self, gk):
        gm = self.gm
        keep = self.keep
        for q in range(gk):
            j = gm[q]
            self._restore(j)
            self.x[j] = keep[3 * q]
            self.y[j] = keep[3 * q + 1]
            self.amp[j] = keep[3 * q + 2]
            self._model(j, -1)
            self.sub[j] = 1

    def _uncertainty(self, n):
        """unc[i]: how far chip i's centre may lie from x[i], y[i] (0.1 mm), from what
        bench/sensing_accuracy.py measured: chips alone (max 0.41 mm), chips touching others
        (99 %: 1.14 mm), more where pads are missing or the fit is bad."""
        lim = self.TOUCH * self.TOUCH
        for i in range(n):
            alone = self._nearest(i, n, -1, lim) < 0
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
            self.unc[i] = u

    # -- the frame -----------------------------------------------------------------------------
    def find(self, grid):
        """Chips in one frame of signed pad readings (grid index order). Returns their number."""
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
                return self._follow(grid)
            n = self._settle(grid) if self.followed else self._find(grid)
            self.still_fit = 1 if same else 0
            self.kept_near = self.near_threshold
            self.kept_s = self.ref_s
            self.kept_b = self.ref_b
            return n
        return self._find(grid)

    def refresh(self):
        """The tracker takes the chips' positions now that the board rests: the next find()
        fits every chip again, jointly with its neighbours, on the settled readings (_settle;
        the whole search if that does not explain them), instead of keeping a fit made while a
        chip crept to rest or on readings still settling (issue 12). Once per shot. A chip
        fitted without a misreading pad (outlier, _reject) keeps that fit: fitted again with
        the pad, it lands far off and too weak, and is no longer near enough to be rejected."""
        for i in range(self.n):
            if self.outlier[i] < 0:
                self.moved[i] = 1
        self.followed = 1
        self.still_fit = 0

    def _take(self, grid):
        """The frame into the residual (usable pads only) and its candidate pads into cand.
        Returns the lowest reading a candidate has (THRESHOLD, lower beside ignored pads)."""
        res = self.res
        usable = self.usable
        cand = self.cand
        cused = self.cused
        t = self.THRESHOLD
        nc = 0
        for g in range(N_GRID):
            v = grid[g] if usable[g] else 0
            if v >= _RAIL or v <= -_RAIL:
                v = 0           # at a rail: no magnet reads that, a fault does (faults.py)
            res[g] = v
            if (v > t or v < -t) and nc < MAX_CAND:
                cand[nc] = g
                cused[nc] = 0
                nc += 1
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

    def _hold(self):
        """A fit's strengths at most 1/16 over the larger reference strength."""
        r = self.ref_s if self.ref_s > self.ref_b else self.ref_b
        self.amax = r + (r >> 4)

    def _extrema(self, n, tl):
        """A chip (slots n, n + 1, ...) seeded at every candidate that is a local extremum of the
        residual, strongest first. Returns the new count."""
        cand = self.cand
        nc = self.n_cand
        while n < MAX_FOUND:
            k = self._strongest(nc, tl)
            if k < 0:
                break
            g = cand[k]
            self.cused[k] = 1
            if self._extremum(g):
                self._seed(g, n)
                self.sub[n] = 0
                n += 1
        return n

    def _find(self, grid):
        tl = self._take(grid)
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
        return self._finish(n, grid, True)

    def _odd(self, i):
        """Chip i's strength is at the limit of a fit or far from its kind's (ROW_DEV): the
        sign of chips in a row sharing out their field wrongly (issue 4)."""
        a = self.amp[i]
        if a >= self.amax or a <= -self.amax:
            return True
        r = self.ref_s if a > 0 else -self.ref_b
        d = a - r
        if d < 0:
            d = -d
        return d * self.ROW_DEV > (r if r > 0 else -r)

    def _row(self, i, n):
        """Chip i fitted oddly with neighbours: the group (chip i and those within GROUP) is
        fitted again from its members spaced evenly between the two outermost along the line
        through them, at the reference strengths; kept if the members miss less in all. A pair
        still odd and missing badly is tried as three in a row. Returns the number of chips."""
        gk = self._group(i, n)
        if gk < 2:
            return n
        gm = self.gm
        keep = self.keep
        kerr = self.kerr
        e0 = 0
        # the two members farthest apart give the line
        fa = 0
        fb = 1
        fd = -1
        for q in range(gk):
            j = gm[q]
            keep[3 * q] = self.x[j]
            keep[3 * q + 1] = self.y[j]
            keep[3 * q + 2] = self.amp[j]
            kerr[q] = self.err[j]
            e0 += self.err[j]
            for p in range(q + 1, gk):
                dx = self.x[gm[p]] - self.x[j]
                dy = self.y[gm[p]] - self.y[j]
                d = dx * dx + dy * dy
                if d > fd:
                    fd = d
                    fa = q
                    fb = p
        ax = keep[3 * fa]
        ay = keep[3 * fa + 1]
        ux = keep[3 * fb] - ax
        uy = keep[3 * fb + 1] - ay
        # each member's place along the line (ties by index)
        rank = self.rank
        for q in range(gk):
            t = (keep[3 * q] - ax) * ux + (keep[3 * q + 1] - ay) * uy       # 2 * 1800**2
            k = 0
            for p in range(gk):
                if p == q:
                    continue
                tp = (keep[3 * p] - ax) * ux + (keep[3 * p + 1] - ay) * uy
                if tp < t or (tp == t and p < q):
                    k += 1
            rank[q] = k
        for q in range(gk):
            j = gm[q]
            self._restore(j)
            self.x[j] = ax + ux * rank[q] // (gk - 1)
            self.y[j] = ay + uy * rank[q] // (gk - 1)
            self.amp[j] = self.ref_s if self.amp[j] > 0 else -self.ref_b
        ok = self._fit_group()
        e1 = 0
        odd = False
        for q in range(gk):
            e1 += self.err[gm[q]]
            if self._odd(gm[q]):
                odd = True
        if ok and (e1 < e0 or (e1 == e0 and not odd)):
            e0 = e1
        else:
            self._put_back(gk)
            for q in range(gk):
                self.err[gm[q]] = kerr[q]
        # two chips of a kind still odd, missing badly: three in a row with the middle one
        # taken up by the other two. Tried as three touching about their midpoint.
        a = gm[0]
        b = gm[1]
        if (gk != 2 or n >= MAX_FOUND or (self.amp[a] > 0) != (self.amp[b] > 0)
                or not (self._odd(a) or self._odd(b)) or e0 < self.SPLIT_ERR):
            return n
        for q in range(2):
            j = gm[q]
            keep[3 * q] = self.x[j]
            keep[3 * q + 1] = self.y[j]
            keep[3 * q + 2] = self.amp[j]
            kerr[q] = self.err[j]
        mx = (self.x[a] + self.x[b]) >> 1
        my = (self.y[a] + self.y[b]) >> 1
        ux = self.x[b] - mx
        uy = self.y[b] - my
        u = _isqrt(ux * ux + uy * uy)               # < 2 * 900**2
        if u == 0:
            return n
        h = 2 * R_SMALL if self.amp[a] > 0 else 2 * R_BIG
        r = self.ref_s if self.amp[a] > 0 else -self.ref_b
        self._restore(a)
        self._restore(b)
        self.x[b] = mx + ux * h // u
        self.y[b] = my + uy * h // u
        self.x[a] = mx - ux * h // u
        self.y[a] = my - uy * h // u
        self.amp[a] = r
        self.amp[b] = r
        self.x[n] = mx
        self.y[n] = my
        self.x0[n] = mx
        self.y0[n] = my
        self.amp[n] = r
        self.sub[n] = 0
        self.outlier[n] = -1
        gm[2] = n
        self.gk = 3
        ok = self._fit_group()
        e1 = self.err[a] + self.err[b] + self.err[n]
        if (ok and 2 * e1 < e0 and not (self._odd(a) or self._odd(b) or self._odd(n))
                and self._nearest(n, n + 1, -1, self.MIN_SEP * self.MIN_SEP) < 0
                and self._nearest(a, n + 1, -1, self.MIN_SEP * self.MIN_SEP) < 0):
            return n + 1
        self._restore(n)
        self.gk = 2
        self._put_back(2)
        self.err[a] = kerr[0]
        self.err[b] = kerr[1]
        return n

    def _finish(self, n, grid, settled):
        """The results of chips 0 .. n - 1 (settled: a full fit, which may refit a chip without
        a misreading pad and teaches the reference strengths; moved[i]: chip i was fitted
        afresh, the others keep their outlier). Returns n."""
        # issue 4: on a still board, a chip that fits badly may have one pad under it that
        # misreads (a sensor that went blind or stuck, before the fault monitor leaves it
        # out): fitted again without the pad that misses most, kept if that fits far better
        # (stillness from the fits before any pad is left out, which are alike frame to frame)
        for i in range(n):
            self.rx[i] = self.x[i]
            self.ry[i] = self.y[i]
        # (uncalibrated, every fit misses by up to bad_err / 2 through the sensors' own zeros:
        # only a fit worse than that is looked at, or every still chip would be fitted again
        # once per suspect pad, seconds on the Pico, for nothing)
        rej = self.OUTLIER_ERR if self.bad_err <= self.OUTLIER_ERR else self.bad_err >> 1
        # (a chip that was not fitted again keeps what it had)
        for i in range(n):
            if self.moved[i]:
                self.outlier[i] = -1
                if settled and self.err[i] > rej and self._was_near(i, self.OUTLIER_STILL):
                    self._reject(i, n, grid)
        for i in range(n):
            self.px[i] = self.rx[i]
            self.py[i] = self.ry[i]
            if settled:
                self.moved[i] = 0
                self.serr[i] = self.err[i]
        self.pn = n
        self.followed = 0 if settled else 1
        lim = self.GROUP * self.GROUP
        for i in range(n):
            if settled:
                self.werr[i] = self._win_err(i)
            a = self.amp[i]
            s = a if a > 0 else -a
            self.kind[i] = KIND_SMALL if a > 0 else KIND_BIG
            self.strength[i] = s
            # learn the reference strength of the kind from a chip alone that fits well
            if settled and self.err[i] < self.SPLIT_ERR // 2 and self._nearest(i, n, -1, lim) < 0:
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

    def _follow(self, grid):
        """A frame while pads jump: the chips of the frame before, moved to fit this one
        (docs/sensing.md, "While chips move"). Every extremum of the frame seeds a chip, from
        the chip of the frame before nearest to it when there is one (its strength, and its
        position when it was close: a chip lying still beside a moving one keeps its fit); a
        chip of the frame before without an extremum (the middle one of a row) is kept where
        its pad still reads its sign. Then each chip that its pads do not fit is fitted alone
        with the others' models out of the residual, FOLLOW_ITERS Gauss-Newton iterations,
        FOLLOW_FITS fits a frame at most. No hidden chips are looked for, no chip is split:
        the full fit does that once the pads hold still."""
        pn = self.n
        qx = self.qx
        qy = self.qy
        qa = self.qa
        qclaim = self.qclaim
        qe = self.qe
        qm = self.qm
        fe = self.fe
        moved = self.moved
        for i in range(pn):
            qx[i] = self.x[i]
            qy[i] = self.y[i]
            qa[i] = self.amp[i]
            qe[i] = self.werr[i]
            qm[i] = self.moved[i]
            self.qs[i] = self.serr[i]
            self.qo[i] = self.outlier[i]
            qclaim[i] = 0
        tl = self._take(grid)
        self._hold()
        t = self.THRESHOLD
        res = self.res
        usable = self.usable
        n = self._extrema(0, tl)
        near2 = self.FOLLOW_NEAR * self.FOLLOW_NEAR
        for i in range(n):
            # the chip of the frame before, of this sign, nearest to the seed (within MAX_STEP
            # of the tracker's reach: a chip that moved farther is taken as new)
            a = self.amp[i]
            best = -1
            bd = self.FOLLOW_MATCH * self.FOLLOW_MATCH
            for q in range(pn):
                if qclaim[q] or (qa[q] > 0) != (a > 0):
                    continue
                dx = qx[q] - self.x[i]
                dy = qy[q] - self.y[i]
                d = dx * dx + dy * dy
                if d < bd:
                    bd = d
                    best = q
            fe[i] = 0
            moved[i] = 1
            if best < 0:
                continue
            # it starts where it was (a chip lying still stays there if that still fits its
            # pads, below); x0, y0 keep the seed, where a chip that moved far is fitted from
            qclaim[best] = 1
            self.amp[i] = qa[best]
            self.x[i] = qx[best]
            self.y[i] = qy[best]
            fe[i] = qe[best] + self.FOLLOW_ERR
            moved[i] = qm[best]
            self.serr[i] = self.qs[best]
            self.outlier[i] = self.qo[best]
            if bd >= near2:
                fe[i] = -fe[i]      # far from the seed: fitted from there unless it fits
        for q in range(pn):
            if qclaim[q] or n >= MAX_FOUND:
                continue
            # still there? one of the four pads around it reads its sign beyond THRESHOLD
            # (beyond the candidates' lower threshold where one of them gives no reading), and
            # no chip of this frame is nearer than MIN_SEP
            self._span(qx[q], qy[q], 0, 2)
            v = 0
            thr = t
            for r in range(self.r0, self.r1):
                for g in range(r * PAD_COLS + self.c0, r * PAD_COLS + self.c1):
                    if self.ignore[g]:
                        thr = tl
                    elif usable[g]:
                        w = res[g] if qa[q] > 0 else -res[g]
                        if w > v:
                            v = w
            if v <= thr:
                continue
            self.x[n] = qx[q]
            self.y[n] = qy[q]
            self.amp[n] = qa[q]
            if self._nearest(n, n, -1, self.MIN_SEP * self.MIN_SEP) >= 0:
                continue
            self.x0[n] = qx[q]
            self.y0[n] = qy[q]
            fe[n] = qe[q] + self.FOLLOW_ERR
            moved[n] = qm[q]
            self.serr[n] = self.qs[q]
            self.outlier[n] = self.qo[q]
            n += 1
        for i in range(n):
            self._model(i, -1)
            self.sub[i] = 1
        # fit the chips their pads do not explain, one at a time (Gauss-Seidel: the others'
        # models stay out of the residual), within the budget
        self.iters = self.FOLLOW_ITERS
        fits = 0
        for sweep in range(2):
            for i in range(n):
                e = self._win_err(i)
                f = fe[i]
                if f < 0:
                    f = -f
                    fe[i] = f
                    if e > f:
                        # moved far: from the seed
                        self._restore(i)
                        self.x[i] = self.x0[i]
                        self.y[i] = self.y0[i]
                        self._model(i, -1)
                        self.sub[i] = 1
                if sweep == 0:
                    self.err[i] = e
                if e <= f or fits >= self.FOLLOW_FITS:
                    continue
                if sweep and self._nearest(i, n, -1, self.GROUP * self.GROUP) < 0:
                    continue    # alone: a second pass would find what the first did
                self.gm[0] = i
                self.gk = 1
                self._fit_group()
                moved[i] = 1
                fe[i] = 0
                fits += 1
        self.iters = 0
        # how well each fits now, or for a chip left as it was, how well it fitted when it was
        # last fitted (its pads may drift away from it slowly: a chip put down fades in)
        for i in range(n):
            self.werr[i] = self._win_err(i) if fe[i] == 0 else fe[i] - self.FOLLOW_ERR
        self.fits = fits
        # what cannot be: chips weaker than MIN_STRENGTH, or closer than MIN_SEP (the weaker
        # goes; no refit, the frame after fits again anyway)
        sep2 = self.MIN_SEP * self.MIN_SEP
        i = 0
        while i < n:
            a = self.amp[i]
            drop = -self.MIN_STRENGTH < a < self.MIN_STRENGTH
            if not drop:
                j = self._nearest(i, n, -1, sep2)
                if j >= 0:
                    b = self.amp[j]
                    drop = (a if a > 0 else -a) < (b if b > 0 else -b) or ((a == b or a == -b) and i > j)
            if drop:
                n -= 1
                self._copy(n, i)
            else:
                i += 1
        return self._finish(n, grid, False)

    def _settle(self, grid):
        """The first frame without a jump after frames with jumps (chips come to rest): the
        full joint fit of every chip that moved, with its neighbours, from where _follow left
        them; the chips that lay still keep their fit. If that does not explain the frame (a
        candidate pad left over, a chip missing badly, too weak or too close to another) the
        whole search of _find instead."""
        n = self.n
        tl = self._take(grid)
        self._hold()
        for i in range(n):
            self._model(i, -1)
            self.sub[i] = 1
            self.err[i] = self.serr[i]      # a chip that lay still: as its last full fit
        for i in range(n):
            if self.moved[i]:
                self._group(i, n)
                self._fit_group()
        sep2 = self.MIN_SEP * self.MIN_SEP
        for i in range(n):
            a = self.amp[i]
            if a < 0:
                a = -a
            r = self.ref_s if self.amp[i] > 0 else self.ref_b
            # (or odd: a row's joint fit in a false minimum, which only _find's step 6 undoes;
            # a chip put down beside two others left them 4 - 5 mm off, issue 12)
            if (4 * a < 3 * r or self.err[i] > self.SPLIT_ERR
                    or self._nearest(i, n, -1, sep2) >= 0 or self._odd(i)):
                return self._find(grid)
        res = self.res
        for k in range(self.n_cand):
            v = res[self.cand[k]]
            if v > self.RES_THRESHOLD or v < -self.RES_THRESHOLD:
                return self._find(grid)
        # beside pads without a reading a chip may show only there: nothing may be left
        for k in range(self.n_near):
            v = res[self.near[k]]
            if v > tl or v < -tl:
                return self._find(grid)
        return self._finish(n, grid, True)

    def _win_err(self, i):
        """Mean |residual| over chip i's 4 x 4 pads (its model out of the residual)."""
        res = self.res
        usable = self.usable
        self._span(self.x[i], self.y[i], 1, 4)
        s = 0
        k = 0
        for r in range(self.r0, self.r1):
            for g in range(r * PAD_COLS + self.c0, r * PAD_COLS + self.c1):
                if usable[g]:
                    e = res[g]
                    if e > 4095:
                        e = 4095
                    elif e < -4095:
                        e = -4095
                    s += e if e > 0 else -e
                    k += 1
        return s // k if k else 0

    # -- helpers ---------------------------------------------------------------------------
    def _strongest(self, nc, t):
        """The unused candidate with the largest |residual| beyond t, or -1."""
        res = self.res
        cand = self.cand
        cused = self.cused
        best = -1
        bv = t
        for k in range(nc):
            if cused[k]:
                continue
            v = res[cand[k]]
            if v < 0:
                v = -v
            if v > bv:
                bv = v
                best = k
        return best

    def _extremum(self, g):
        """True if pad g's reading is an extremum of its sign among its 8 neighbours (ties go
        to the lower grid index)."""
        res = self.res
        usable = self.usable
        v = res[g]
        neg = v < 0
        if neg:
            v = -v
        c = g % PAD_COLS
        r = g // PAD_COLS
        for dr in (-1, 0, 1):
            rr = r + dr
            if rr < 0 or rr >= PAD_ROWS:
                continue
            for dc in (-1, 0, 1):
                cc = c + dc
                if cc < 0 or cc >= PAD_COLS or (dr == 0 and dc == 0):
                    continue
                h = rr * PAD_COLS + cc
                if not usable[h]:
                    continue
                w = -res[h] if neg else res[h]
                if w > v or (w == v and h < g):
                    return False
        return True

    def _prune(self, n, t):
        """Drop chips fitted weaker than t, and the weaker of two closer than MIN_SEP (their
        models go back into the residual). Returns the new count."""
        sep2 = self.MIN_SEP * self.MIN_SEP
        i = 0
        while i < n:
            a = self.amp[i]
            drop = -t < a < t
            j = -1
            if not drop:
                j = self._nearest(i, n, -1, sep2)
                if j >= 0:
                    b = self.amp[j]
                    drop = (a if a > 0 else -a) < (b if b > 0 else -b) or ((a == b or a == -b) and i > j)
            if drop:
                self._restore(i)
                n -= 1
                self._copy(n, i)
                if j >= 0:
                    # the one that stays takes in what the other held
                    if j == n:
                        j = i
                    self._group(j, n)
                    self._fit_group()
                i = 0           # fits moved chips: look at all again
            else:
                i += 1
        return n

    def _merge_blind(self, n):
        """Over ignored pads two chips of a kind side by side can fit the little that is seen
        as well as the one chip that lies there: a pair whose strengths add up to well under
        two chips' (BLIND_PAIR) is one chip; the weaker goes, the other takes in its share."""
        lim = (2 * R_BIG + 60) * (2 * R_BIG + 60)
        i = 0
        while i < n:
            j = self._nearest(i, n, -1, lim)
            if j < 0 or (self.amp[i] > 0) != (self.amp[j] > 0):
                i += 1
                continue
            a = self.amp[i] if self.amp[i] > 0 else -self.amp[i]
            b = self.amp[j] if self.amp[j] > 0 else -self.amp[j]
            r = self.ref_s if self.amp[i] > 0 else self.ref_b
            if (a + b) * 4 >= self.BLIND_PAIR * r or not (
                    self.blind(self.x[i], self.y[i], self.UNC_BLIND_R)
                    or self.blind(self.x[j], self.y[j], self.UNC_BLIND_R)):
                i += 1
                continue
            k = i if a < b else j          # the weaker
            keep = j if k == i else i
            self._restore(k)
            n -= 1
            self._copy(n, k)
            if keep == n:
                keep = k
            self._group(keep, n)
            self._fit_group()
            i = 0
        return n

    def _nearest(self, i, n, skip, d2):
        """The chip j < n (not i, not skip) nearest to chip i, closer than sqrt(d2), or -1."""
        best = -1
        x = self.x[i]
        y = self.y[i]
        for j in range(n):
            if j == i or j == skip:
                continue
            dx = self.x[j] - x
            dy = self.y[j] - y
            e = dx * dx + dy * dy
            if e < d2:
                d2 = e
                best = j
        return best

    def _group(self, i, n):
        """Chip i and the chips (< n) within GROUP of it, nearest first, into the group.
        Returns the group's size."""
        gm = self.gm
        gm[0] = i
        k = 1
        lim = self.GROUP * self.GROUP
        xi = self.x[i]
        yi = self.y[i]
        while k < MAX_GROUP:
            best = -1
            bd = lim
            for j in range(n):
                if j == i:
                    continue
                dup = False
                for q in range(1, k):
                    if gm[q] == j:
                        dup = True
                if dup:
                    continue
                dx = self.x[j] - xi
                dy = self.y[j] - yi
                d = dx * dx + dy * dy
                if d < bd:
                    bd = d
                    best = j
            if best < 0:
                break
            gm[k] = best
            k += 1
        self.gk = k
        return k

    def _split(self, n, skip):
        """Chip n's fit misses badly: try it as two chips of its kind, touching, along the
        direction of the largest residual of its sign in its window. Keeps the two (n, n + 1)
        if they fit clearly better, else chip n as it was."""
        res = self.res
        x = self.x[n]
        y = self.y[n]
        a = self.amp[n]
        e0 = self.err[n]
        # the direction: towards the pad with the largest residual of the chip's sign
        self.gm[0] = n
        self.gk = 1
        nw = self._window()
        best = 0
        bg = -1
        for w in range(nw):
            g = self.win[w]
            v = res[g] if a > 0 else -res[g]
            if v > best:
                best = v
                bg = g
        if bg < 0:
            return False
        ux = PAD_X0 + (bg % PAD_COLS) * PAD_PITCH - x
        uy = PAD_Y0 + (bg // PAD_COLS) * PAD_PITCH - y
        u = _isqrt(ux * ux + uy * uy)               # < 2 * 625**2
        if u == 0:
            ux = 1
            u = 1
        h = R_SMALL if a > 0 else R_BIG             # half the distance of two touching chips
        self._restore(n)
        self.x[n + 1] = x + ux * h // u
        self.y[n + 1] = y + uy * h // u
        self.x[n] = x - ux * h // u
        self.y[n] = y - uy * h // u
        self.amp[n] = a * 2 // 3
        self.amp[n + 1] = a * 2 // 3
        self.sub[n + 1] = 0
        # the two, with their neighbours (chips < n but skip)
        gm = self.gm
        gm[0] = n
        gm[1] = n + 1
        k = 2
        lim = self.GROUP * self.GROUP
        for j in range(n):
            if j == skip or k >= MAX_GROUP:
                continue
            dx = self.x[j] - x
            dy = self.y[j] - y
            if dx * dx + dy * dy < lim:
                gm[k] = j
                k += 1
        self.gk = k
        self.sx = x
        self.sy = y
        self.sa = a
        self.se = e0
        m = self.MIN_SPLIT
        if (not self._fit_group() or self.err[n] * 2 > e0 or -m < self.amp[n] < m
                or -m < self.amp[n + 1] < m):
            self._unsplit(n)
            return False
        return True

    def _apart(self, n, j):
        """Chips n and j, of the same kind, restarted touching, either side of their midpoint
        along the line through them, at the nominal strength."""
        self._restore(n)
        self._restore(j)
        mx = (self.x[n] + self.x[j]) >> 1
        my = (self.y[n] + self.y[j]) >> 1
        ux = self.x[n] - mx
        uy = self.y[n] - my
        u = _isqrt(ux * ux + uy * uy)               # < 2 * 250**2
        if u == 0:
            ux = 1
            u = 1
        a = self.amp[n]
        h = R_SMALL if a > 0 else R_BIG
        self.x[n] = mx + ux * h // u
        self.y[n] = my + uy * h // u
        self.x[j] = mx - ux * h // u
        self.y[j] = my - uy * h // u
        a = ADC_PEAK if a > 0 else -ADC_PEAK
        self.amp[n] = a
        self.amp[j] = a

    def _unsplit(self, n):
        """Back to chip n as it was before _split."""
        self._restore(n)
        self._restore(n + 1)
        self.x[n] = self.sx
        self.y[n] = self.sy
        self.amp[n] = self.sa
        self.err[n] = self.se
        self.x[n + 1] = self.sx
        self.y[n + 1] = self.sy
        self._model(n, -1)
        self.sub[n] = 1

    def _copy(self, src, dst):
        self.x[dst] = self.x[src]
        self.y[dst] = self.y[src]
        self.x0[dst] = self.x0[src]
        self.y0[dst] = self.y0[src]
        self.amp[dst] = self.amp[src]
        self.err[dst] = self.err[src]
        self.sub[dst] = self.sub[src]
        self.moved[dst] = self.moved[src]
        self.outlier[dst] = self.outlier[src]
        self.serr[dst] = self.serr[src]

    def _restore(self, i):
        """Put chip i's model back into the residual (if it was out)."""
        if self.sub[i]:
            self._model(i, 1)
            self.sub[i] = 0

    def _seed(self, g, i):
        """A first guess for chip i from the candidate pad g and its 3 x 3: the centroid of the
        readings of g's sign, and A from g's reading at that distance."""
        res = self.res
        usable = self.usable
        c = g % PAD_COLS
        r = g // PAD_COLS
        v0 = res[g]
        if v0 > 32767:
            v0 = 32767
        elif v0 < -32767:
            v0 = -32767
        sx = 0
        sy = 0
        sw = v0 if v0 > 0 else -v0
        for dr in (-1, 0, 1):
            rr = r + dr
            if rr < 0 or rr >= PAD_ROWS:
                continue
            for dc in (-1, 0, 1):
                cc = c + dc
                if cc < 0 or cc >= PAD_COLS or (dr == 0 and dc == 0):
                    continue
                h = rr * PAD_COLS + cc
                if not usable[h]:
                    continue
                v = res[h]
                if v0 < 0:
                    v = -v
                if v > 0:
                    if v > 32767:
                        v = 32767
                    sx += v * dc                    # 9 * 2**15
                    sy += v * dr
                    sw += v
        px = PAD_X0 + c * PAD_PITCH
        py = PAD_Y0 + r * PAD_PITCH
        x = px + sx * PAD_PITCH // sw               # 2**19 * 250
        y = py + sy * PAD_PITCH // sw
        dx = px - x
        dy = py - y
        f = _profile(dx * dx + dy * dy)
        if f < 2048:
            f = 2048
        a = v0 * FIELD_SCALE // f                   # 2**15 * 2**14
        m = self.amax
        self.x[i] = x
        self.y[i] = y
        self.x0[i] = x
        self.y0[i] = y
        self.amp[i] = a if -m < a < m else (m if a > 0 else -m)

    # -- the joint fit ---------------------------------------------------------------------------
    def _span(self, x, y, back, size):
        """The pads of the size x size square whose first column and row lie `back` pads
        before the pad below or left of (x, y), clipped to the grid: columns c0 <= c < c1, rows
        r0 <= r < r1 (into self; a tuple would allocate)."""
        c = (x - PAD_X0) // PAD_PITCH - back
        r = (y - PAD_Y0) // PAD_PITCH - back
        self.c0 = c if c > 0 else 0
        self.r0 = r if r > 0 else 0
        c += size
        r += size
        self.c1 = c if c < PAD_COLS else PAD_COLS
        self.r1 = r if r < PAD_ROWS else PAD_ROWS

    def _window(self):
        """The union of the group's 4 x 4 windows (usable pads only) into win. Returns its size."""
        st = self.st + 1
        if st > 255:
            st = 1
            for g in range(N_GRID):
                self.stamp[g] = 0
        self.st = st
        stamp = self.stamp
        usable = self.usable
        win = self.win
        nw = 0
        for q in range(self.gk):
            i = self.gm[q]
            self._span(self.x[i], self.y[i], 1, 4)
            for r in range(self.r0, self.r1):
                for g in range(r * PAD_COLS + self.c0, r * PAD_COLS + self.c1):
                    if usable[g] and stamp[g] != st:
                        stamp[g] = st
                        win[nw] = g
                        nw += 1
        return nw

    def _fit_group(self):
        """Fit the group's chips (gm[:gk]) jointly to the residual with their own models put
        back: Gauss-Newton on x, y, A of every chip at once (Levenberg-Marquardt damped).
        Subtracts the fitted models again. False if there was too little to fit."""
        gm = self.gm
        gk = self.gk
        for q in range(gk):
            self._restore(gm[q])
        res = self.res
        win = self.win
        nm = self.nm
        rhs = self.rhs
        col = self.col
        d = self.d
        xs = self.x
        ys = self.y
        amps = self.amp
        amax = self.amax
        gerr = self.gerr
        gcnt = self.gcnt
        pk = self.prior_k8
        pc = 2 * pk                     # 512 * k
        p = 3 * gk
        nw = 0
        ok = True
        iters = self.iters if self.iters else MAX_ITER + 4 * gk - 4
        for it in range(iters):
            nw = self._window()
            if nw < 3:
                ok = False
                break
            for k in range(p * p):
                nm[k] = 0
            for k in range(p):
                rhs[k] = 0
            for q in range(gk):
                gerr[q] = 0
                gcnt[q] = 0
            for w in range(nw):
                g = win[w]
                gy = PAD_Y0 + (g // PAD_COLS) * PAD_PITCH
                gx = PAD_X0 + (g % PAD_COLS) * PAD_PITCH
                m = 0
                top = 0          # the member whose model is largest here: the pad is its
                mtop = -1
                for q in range(gk):
                    i = gm[q]
                    dx = gx - xs[i]
                    dy = gy - ys[i]
                    d2 = dx * dx + dy * dy
                    c = 3 * q
                    if d2 >= FIELD_REACH2 or d2 < 0:
                        col[c] = 0
                        col[c + 1] = 0
                        col[c + 2] = 0
                        continue
                    b = d2 // FIELD_BIN
                    f0 = FIELD[b]
                    s = FIELD[b + 1] - f0            # |s| < 1000
                    f = f0 + s * (d2 - b * FIELD_BIN) // FIELD_BIN
                    a = amps[i]
                    mi = a * f // FIELD_SCALE        # 2**15 * 2**14
                    m += mi
                    if mi < 0:
                        mi = -mi
                    if mi > mtop:
                        mtop = mi
                        top = q
                    # columns: dm/dA * 512 = f / 32; -dm/dx per mm = A * s * dx / 65536 / 10,
                    # written A * ((s * dx) >> 6) / 10240 (s * dx < 2**16 where s is large)
                    col[c] = f >> 5
                    jx = a * ((s * dx) >> 6) // 10240
                    jy = a * ((s * dy) >> 6) // 10240
                    col[c + 1] = jx if -2048 < jx < 2048 else (2047 if jx > 0 else -2047)
                    col[c + 2] = jy if -2048 < jy < 2048 else (2047 if jy > 0 else -2047)
                e = res[g] - m
                if e > 4095:
                    e = 4095
                elif e < -4095:
                    e = -4095
                gerr[top] += e if e > 0 else -e
                gcnt[top] += 1
                # normal equations, upper triangle: |col| < 2**11, 64 pads: sums < 2**28
                for r in range(p):
                    cr = col[r]
                    if cr == 0:
                        continue
                    rhs[r] += cr * e                 # 2**11 * 2**12 * 64 = 2**29
                    k = r * p
                    for c in range(r, p):
                        nm[k + c] += cr * col[c]
            # what a magnet's strength is known to be: a pseudo-measurement of A, weighted by
            # NOISE_LSB / PRIOR_SIGMA (in the A column's units, 512 * that). Without it, chips
            # in a row trade strength for position along the row (docs/sensing.md).
            if pk:
                for q in range(gk):
                    a = amps[gm[q]]
                    r = self.ref_s if a > 0 else -self.ref_b
                    c = 3 * q
                    nm[c * p + c] += pc * pc
                    rhs[c] += pc * ((pk * (r - a)) >> 8)
            if not self._solve(p):
                ok = False
                break
            # apply: A += 512 * dA; x -= 10 * dx (mm -> 0.1 mm); d = delta * 2**(tsh - sh - 6)
            done = True
            for q in range(gk):
                i = gm[q]
                c = 3 * q
                da = _scaled(d[c], self.tsh - self.sh[c] + 3, 20000)
                a = amps[i] + da
                amps[i] = a if -amax < a < amax else (amax if a > 0 else -amax)
                sx = -_scaled(10 * d[c + 1], self.tsh - self.sh[c + 1] - 6, MAX_STEP)
                sy = -_scaled(10 * d[c + 2], self.tsh - self.sh[c + 2] - 6, MAX_STEP)
                x = xs[i] + sx
                y = ys[i] + sy
                # a chip lies on the board: its centre at least R_SMALL inside the outline
                if x > _XMAX:
                    x = _XMAX
                elif x < -_XMAX:
                    x = -_XMAX
                if y > _YMAX:
                    y = _YMAX
                elif y < -_YMAX:
                    y = -_YMAX
                ax = x if x > 0 else -x
                ay = y if y > 0 else -y
                if ax + ay > _SMAX:
                    # back onto the corner's edge, straight in (45 degrees)
                    e = (ax + ay - _SMAX + 1) >> 1
                    x = x - e if x > 0 else x + e
                    y = y - e if y > 0 else y + e
                xs[i] = x
                ys[i] = y
                if sx > 1 or sx < -1 or sy > 1 or sy < -1:
                    done = False
            if done:
                break
        for q in range(gk):
            i = gm[q]
            self.err[i] = gerr[q] // gcnt[q] if gcnt[q] else 0
            self._model(i, -1)
            self.sub[i] = 1
        return ok

    def _solve(self, p):
        """Solve nm d = rhs (p x p, upper triangle given) in fixed point: columns scaled by
        powers of two to a diagonal in [2**10, 2**12), damped, right side scaled to < 2**13.
        The true solution is d[c] * 2**(tsh - sh[c] - 6). False if singular."""
        nm = self.nm
        rhs = self.rhs
        d = self.d
        sh = self.sh
        for c in range(p):
            v = nm[c * p + c]
            s = 0
            while v >= 4096:
                v >>= 2
                s += 1
            sh[c] = s
        for r in range(p):
            for c in range(r, p):
                v = nm[r * p + c] >> (sh[r] + sh[c])
                if c == r:
                    v += (v >> 8) + 1               # Levenberg-Marquardt damping
                nm[r * p + c] = v
                nm[c * p + r] = v
        m = 0
        for c in range(p):
            v = rhs[c] >> sh[c]
            rhs[c] = v
            if v < 0:
                v = -v
            if v > m:
                m = v
        t = 0
        while m >= 8192:
            m >>= 1
            t += 1
        if t:
            for c in range(p):
                rhs[c] >>= t
        elif m:
            while m < 4096:
                m <<= 1
                t -= 1
            for c in range(p):
                rhs[c] <<= -t
        # elimination (the matrix is symmetric positive definite: no pivoting)
        for i in range(p):
            piv = nm[i * p + i]
            if piv <= 0:
                return False
            for j in range(i + 1, p):
                l = nm[j * p + i]
                if l == 0:
                    continue
                for k in range(i + 1, p):
                    nm[j * p + k] -= l * nm[i * p + k] // piv     # 2**13 * 2**13
                v = rhs[j] - l * rhs[i] // piv                   # 2**13 * 2**17
                rhs[j] = v
                if v > 131071 or v < -131071:
                    for k in range(p):
                        rhs[k] >>= 1
                    t += 1
        # back substitution, 6 fractional bits, |d| < 2**13
        for i in range(p - 1, -1, -1):
            s = rhs[i] << 6                                        # 2**23
            for k in range(i + 1, p):
                s -= nm[i * p + k] * d[k]                          # 11 * 2**13 * 2**13
            v = s // nm[i * p + i]
            d[i] = v if -8192 < v < 8192 else (8191 if v > 0 else -8191)
        self.tsh = t
        return True

    def _model(self, i, sign):
        """Add (sign 1) or subtract (sign -1) chip i's model to the residual, over its reach."""
        res = self.res
        x = self.x[i]
        y = self.y[i]
        a = self.amp[i]
        c0 = (x - _REACH - PAD_X0) // PAD_PITCH + 1
        c1 = (x + _REACH - PAD_X0) // PAD_PITCH + 1
        r0 = (y - _REACH - PAD_Y0) // PAD_PITCH + 1
        r1 = (y + _REACH - PAD_Y0) // PAD_PITCH + 1
        if c0 < 0:
            c0 = 0
        if r0 < 0:
            r0 = 0
        if c1 > PAD_COLS:
            c1 = PAD_COLS
        if r1 > PAD_ROWS:
            r1 = PAD_ROWS
        for rr in range(r0, r1):
            dy = PAD_Y0 + rr * PAD_PITCH - y
            for cc in range(c0, c1):
                dx = PAD_X0 + cc * PAD_PITCH - x
                d2 = dx * dx + dy * dy
                if d2 >= FIELD_REACH2:
                    continue
                b = d2 // FIELD_BIN
                f0 = FIELD[b]
                f = f0 + (FIELD[b + 1] - f0) * (d2 - b * FIELD_BIN) // FIELD_BIN
                m = a * f // FIELD_SCALE
                if sign > 0:
                    res[rr * PAD_COLS + cc] += m
                else:
                    res[rr * PAD_COLS + cc] -= m


def _isqrt(n):
    """floor(sqrt(n)) for 0 <= n < 2**30."""
    if n <= 0:
        return 0
    x = n
    y = (x + 1) >> 1
    while y < x:
        x = y
        y = (x + n // x) >> 1
    return x


def _scaled(v, e, lim):
    """v * 2**e, rounded, limited to +-lim (lim < 2**20)."""
    if e >= 0:
        if e > 20 or v >= (lim >> e) + 1 or -v >= (lim >> e) + 1:
            if v == 0:
                return 0
            return lim if v > 0 else -lim
        return v << e
    e = -e
    if e > 24:
        return 0
    v = (v + (1 << (e - 1))) >> e
    return v if -lim < v < lim else (lim if v > 0 else -lim)


def _profile(d2):
    """FIELD at rho^2 = d2 (0.01 mm^2), interpolated; 0 beyond the reach."""
    if d2 >= FIELD_REACH2:
        return 0
    b = d2 // FIELD_BIN
    f0 = FIELD[b]
    return f0 + (FIELD[b + 1] - f0) * (d2 - b * FIELD_BIN) // FIELD_BIN
