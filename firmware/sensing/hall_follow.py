# How moving chips are followed and settled ones fitted again (sensing/hall_locate.py's find():
# while pads jump, the first frame without a jump, a still chip's misreading pad left out).
#
# Functions of the Locator's instance (`self`), bound as its methods in
# sensing/hall_locate.py under the names they had there (_fit_group ...): the hot loops'
# calls and lookups are what they were in the one class. const() values are written
# out in each module that uses them (inlined at compile time, not looked up: the
# same as hall_locate.py's, tests/test_sensing.py checks).
from micropython import const
from array import array
from tables.board_table import PAD_COLS, PAD_ROWS
from sensing.hall_seed import near_d2

MAX_FOUND = const(8)       # chips reported at most
# a lagging fit corrected (follow, below) widens the chip's wander that frame by the
# correction, at most this (0.1 mm)
_CORRECT_MAX = const(15)
# the refresh's fit paced over loop turns on the chip (settle, Locator.pace): this many chips'
# group fits a turn (1.5 - 2 ms each there; issue 13: <= 10 ms a turn at rest)
_PACE_FITS = const(2)
N_GRID = PAD_COLS * PAD_ROWS
_NEIGH4 = (-1, 1, -PAD_COLS, PAD_COLS)      # a grid cell's 4 neighbours, as index steps
# Scratch of one call each, here and not on the Locator: a Locator attribute more fills its
# instance table (83 of 97 slots), and every method call looks there first and misses: the
# verdict's frame with four chips on the chip 9.42 -> 9.82 ms with these two as attributes.
# (Written and read within one call, follow() or settle(), so one pair serves any locator.)
# settle: each chip's _win_err of the frame it took (Locator._finish's werr when it fitted
# nothing, finish_pass); follow: how far chip i's correction moved it (0.1 mm), -1 none
SETTLE_WERR = array('i', bytes(4 * MAX_FOUND))
CORRECTION = array('b', bytes(MAX_FOUND))


def follow(self, grid):
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
    kept = self.kept
    for i in range(pn):
        qx[i] = self.x[i]
        qy[i] = self.y[i]
        qa[i] = self.amp[i]
        qe[i] = self.werr[i]
        # (bit 1: fitted by the frame before's _follow, fe 0 there; a settled fit leaves fe 1;
        # bit 2: kept, the last refresh's fit)
        qm[i] = self.moved[i] | (2 if fe[i] == 0 else 0) | (4 if kept[i] else 0)
        self.qs[i] = self.serr[i]
        self.qo[i] = self.outlier[i]
        qclaim[i] = 0
    tl = self._take(grid)
    if tl < 0:
        return pn           # not a frame of chips (a fault): the last reading stands
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
        kept[i] = 0
        if best < 0:
            continue
        # it starts where it was (a chip lying still stays there if that still fits its
        # pads, below); x0, y0 keep the seed, where a chip that moved far is fitted from
        qclaim[best] = 1
        self.amp[i] = qa[best]
        self.x[i] = qx[best]
        self.y[i] = qy[best]
        fe[i] = qe[best] + self.FOLLOW_ERR
        # (bit 1 kept: fitted in the frame before, fitted again below however well it fits)
        moved[i] = qm[best] & 3
        kept[i] = qm[best] >> 2
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
        sw = 0
        thr = t
        hole = 0
        for r in range(self.r0, self.r1):
            for g in range(r * PAD_COLS + self.c0, r * PAD_COLS + self.c1):
                if self.ignore[g]:
                    thr = tl
                elif usable[g]:
                    w = res[g] if qa[q] > 0 else -res[g]
                    sw += w
                    if w > v:
                        v = w
                else:
                    hole = 1
        if v <= thr and not hole:
            continue
        self.x[n] = qx[q]
        self.y[n] = qy[q]
        self.amp[n] = qa[q]
        if v <= thr:
            # Over a pad that gives no reading (a cup's hole; docs/sensing.md, "While chips
            # move") a chip is seen only by pads 20 mm and more away, which read a few
            # times THRESHOLD at most: a magnet fading as a hand lifts it sinks below it at
            # about half its strength, and was gone at once, "gone while seen strong": a
            # flick off, sure (the seed-45 bowling bench). It is still there, where it lay, as
            # strong as those pads read against its model (what the tracker tells a lift by),
            # while that is MIN_STRENGTH at least. (Each pad here reads THRESHOLD at most and
            # the sum is positive: the products stay below 2**30; a chip of the other sign
            # beside it may make the sum very negative, and a * sw a long int on the chip)
            if sw <= 0:
                continue
            self._model(n, -1)
            sm = sw
            for r in range(self.r0, self.r1):
                for g in range(r * PAD_COLS + self.c0, r * PAD_COLS + self.c1):
                    if usable[g]:
                        sm -= res[g] if qa[q] > 0 else -res[g]
            self._model(n, 1)
            a = qa[q] if qa[q] > 0 else -qa[q]
            if sm <= 0 or a * sw < self.MIN_STRENGTH * sm:
                continue
            if sw < sm:
                a = a * sw // sm
            self.amp[n] = a if qa[q] > 0 else -a
        if self._nearest(n, n, -1, self.MIN_SEP * self.MIN_SEP) >= 0:
            continue
        self.x0[n] = qx[q]
        self.y0[n] = qy[q]
        fe[n] = qe[q] + self.FOLLOW_ERR
        moved[n] = qm[q] & 1
        # (as strong as its pads read by a hole: a fit of its own now, not the refresh's)
        kept[n] = qm[q] >> 2 if self.amp[n] == qa[q] else 0
        self.serr[n] = self.qs[q]
        self.outlier[n] = self.qo[q]
        n += 1
    correction = CORRECTION
    for i in range(n):
        self._model(i, -1)
        self.sub[i] = 1
        correction[i] = -1  # (chip i's correction, below; -1 none)
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
                    kept[i] = 0
                    self.x[i] = self.x0[i]
                    self.y[i] = self.y0[i]
                    self._model(i, -1)
                    self.sub[i] = 1
            if sweep == 0:
                self.err[i] = e
            # A chip fitted in the frame before (moved bit 1) whose pads now fit that fit
            # (within FOLLOW_ERR) has stopped, or about: it is fitted again, once (the
            # correction). Its fit of the frame before was made of a frame read while it
            # slid, and lags where it came to rest: on the chip by 2.1 - 2.8 mm, which left
            # as it was (the margin is for a chip lying still beside a moving one) was kept a
            # frame more, and the stillness that began with it began again at the next fit,
            # 20 - 40 ms on (issue 13, docs/sensing.md "While chips move")
            force = e <= f and moved[i] & 2
            if (e <= f and not force) or fits >= self.FOLLOW_FITS:
                continue
            if sweep and self._nearest(i, n, -1, self.GROUP * self.GROUP) < 0:
                continue    # alone: a second pass would find what the first did
            x = self.x[i]
            y = self.y[i]
            self.gm[0] = i
            self.gk = 1
            self._fit_group()
            moved[i] = 1
            kept[i] = 0
            fe[i] = 0
            fits += 1
            if force:
                # how far the correction moved it (0.1 mm, at most _CORRECT_MAX)
                x -= self.x[i]
                y -= self.y[i]
                d2 = x * x + y * y
                c = 0
                while c < _CORRECT_MAX and c * c < d2:
                    c += 1
                correction[i] = c
    self.iters = 0
    # how well each fits now, or for a chip left as it was, how well it fitted when it was
    # last fitted (its pads may drift away from it slowly: a chip put down fades in)
    for i in range(n):
        self.werr[i] = self._win_err(i) if fe[i] == 0 else fe[i] - self.FOLLOW_ERR
        moved[i] &= 1
        if correction[i] >= 0:
            # corrected: next frame it is a chip that lay still (fe not 0), not corrected again
            fe[i] = self.werr[i] + self.FOLLOW_ERR
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
            fe[i] = fe[n]
            correction[i] = correction[n]
        else:
            i += 1
    n = self._finish(n, grid, False)
    # a corrected chip's fit moved by the correction with the chip at rest (or about): its
    # wander this frame, how far its fit may move while it lies still, is that much more. The
    # tracker's stillness then holds from the frame it began with, the lagging fit's, through
    # this one (its second anchor, this fit, every frame after is near), as when that fit
    # lagged less: rest -> score shown on the chip no longer 20 - 40 ms more in some runs
    for i in range(n):
        if correction[i] > 0:
            self.wander[i] += correction[i]
    return n


def settle(self, grid):
    """The first frame without a jump after frames with jumps (chips come to rest): the
    full joint fit of every chip that moved, with its neighbours, from where _follow left
    them; the chips that lay still keep their fit. If that does not explain the frame (a
    candidate pad left over, a chip missing badly, too weak or too close to another) the
    whole search of _find instead.
    Paced (Locator.pace, the refresh's fit on the chip; issue 13): this call takes the frame
    and its models out and looks at the chips up to the first to fit again, then each call after
    it (find(), in the loop turns after the frame's, which scan nothing: the grid is this frame's
    until the end) makes _PACE_FITS chips' group fits and looks at the chips up to the next, and
    the end comes in the call that made no fit (this one, when no chip is fitted again): the same
    calls in the same order as in one go. (Paced by chips, a call each _PACE_FITS chips fitted or
    not, the verdict's frame with four chips kept was 13.7 ms in nine turns on the chip, two of
    them with no fit, 0.9 ms; docs/performance.md, "The verdict's frame in fewer turns")"""
    n = self.n
    p = self.pace
    if p & 16:
        # a paced fit under way: from chip k on, or its end (k == n)
        tl = p >> 7
        k = p & 15
        most = _PACE_FITS
    else:
        tl = self._take(grid)
        if tl < 0:
            return n            # not a frame of chips (a fault): the last reading stands
        self._hold()
        for i in range(n):
            self._model(i, -1)
            self.sub[i] = 1
            self.err[i] = self.serr[i]      # a chip that lay still: as its last full fit
        k = 0
        most = 0 if p & 64 else MAX_FOUND   # (paced: no fit in this call; else every one)
    fits = 0
    moved = self.moved
    werr = self.werr
    # (each chip's _win_err kept: when this call took the frame and fitted nothing, nothing
    # moved the chips or the residual before _finish, which asks the same values again;
    # issue 13, the verdict's frame)
    settle_werr = SETTLE_WERR
    settle_err = self.SETTLE_ERR
    while k < n:
        i = k
        # left where it was while pads jumped (its pads missed by less than FOLLOW_ERR more
        # than at its fit, frame by frame), but they miss by more now: it moved a little
        # (a 3.3 mm nudge over a pad was never refitted, issue 12)
        if not moved[i]:
            e = self._win_err(i)
            settle_werr[i] = e
            if e > werr[i] + settle_err:
                moved[i] = 1
        if moved[i]:
            if fits == most:
                self.pace = (p & 32) | 16 | (tl << 7) | k     # paced: its fit in the next call
                return n
            gk = self._group(i, n)
            self._fit_group()
            for q in range(gk):
                self.kept[self.gm[q]] = 0
            fits += 1
        k += 1
    if fits and p & 80:
        self.pace = (p & 32) | 16 | (tl << 7) | n             # paced: the end in the next call
        return n
    if p & 80:
        self.pace = p & 32
    sep2 = self.MIN_SEP * self.MIN_SEP
    for i in range(n):
        # (a kept chip, the last refresh's fit not fitted again, passed these then or was
        # _find's: the search again would only draw its row's fit anew; a moved chip come
        # within MIN_SEP of it is looked at from the moved one's side)
        if self.kept[i]:
            continue
        a = self.amp[i]
        if a < 0:
            a = -a
        r = self.ref_s if self.amp[i] > 0 else self.ref_b
        # (or odd: a row's joint fit in a false minimum, which only _find's step 6 undoes;
        # a chip put down beside two others left them 4 - 5 mm off, issue 12)
        # (a chip left where it lay, weaker, is fading there as a hand lifts it: _follow kept
        # it as strong as its pads read, where _find would not seed it, by a cup's hole)
        weak = 4 * a < 3 * r
        # (near_d2 < sep2: _nearest(i, n, -1, sep2) >= 0, in machine code)
        if ((weak and self.moved[i]) or self.err[i] > self.SPLIT_ERR
                or near_d2(self, i, n) < sep2 or (not weak and self._odd(i))):
            return self._find(grid)
    res = self.res
    cand = self.cand
    rt = self.RES_THRESHOLD
    for k in range(self.n_cand):
        v = res[cand[k]]
        if v > rt or v < -rt:
            return self._find(grid)
    # beside pads without a reading a chip may show only there: nothing may be left
    for k in range(self.n_near):
        v = res[self.near[k]]
        if v > tl or v < -tl:
            return self._find(grid)
    # (2: settled, and settle_werr holds every chip's _win_err of this frame as it stands: no
    # fit came after the frame was taken in this call)
    return self._finish(n, grid, 2 if fits == 0 and not p & 16 else True)


def was_near(self, i, d):
    """A chip was found within d of chip i in the frame before (chip i is about still)."""
    d2 = d * d
    for j in range(self.pn):
        dx = self.px[j] - self.rx[i]
        dy = self.py[j] - self.ry[i]
        if dx * dx + dy * dy <= d2:
            return True
    return False


def reject(self, i, n, grid):
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


def refit_without(self, g, gk):
    """The group fitted again from its kept start with pad g left out: chip gm[0]'s err, or
    -1 if the fit failed."""
    self._put_back(gk)
    self.usable[g] = 0
    ok = self._fit_group()
    self.usable[g] = 1
    return self.err[self.gm[0]] if ok else -1


def put_back(self, gk):
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
