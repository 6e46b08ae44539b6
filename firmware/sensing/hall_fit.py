# The joint fit itself (sensing/hall_locate.py's steps 2 and 5): the group's 4 x 4 pad windows,
# Gauss-Newton on all their x, y and A at once (Levenberg-Marquardt damped, fixed point), the
# normal equations' solution, a chip's model into and out of the residual, and how well it fits.
#
# Functions of the Locator's instance (`self`), bound as its methods in
# sensing/hall_locate.py under the names they had there (_fit_group ...): the hot loops'
# calls and lookups are what they were in the one class. const() values are written
# out in each module that uses them (inlined at compile time, not looked up: the
# same as hall_locate.py's, tests/test_sensing.py checks).
#
# The loops over pads are @micropython.viper (issue 13: in plain Python a frame while chips
# move cost 60 - 74 ms on the RP2040, the fit and the models 35 ms of it, against 50 ms):
# window_pads (a group's window), fit_step (one Gauss-Newton iteration: the normal equations
# over the window, the strength prior, their fixed-point solution, the step applied),
# model_pads (a chip's model into or out of the residual) and win_err_pads. They are the same
# integer arithmetic as the plain code they replaced, operation for operation (floor division
# and arithmetic shifts, the same clamps), every intermediate below 2**30 as before, so a fit
# gives the same numbers to the last bit on every port (tests/test_hall_fit.py runs them
# against that plain code under both runtimes, tests/test_rp2040_fit.py on the chip, near the
# word limits). Under CPython they run as plain Python (ptr8/16/32 are the arrays themselves).
# Viper loads: a ptr16 loads unsigned (FIELD is signed 16-bit: taken back to its sign); a ptr32
# loads a 32-bit word, with its sign on the RP2040 but without it on a 64-bit port, where a
# negative value (within -2**31) comes 2**32 too large and is taken back.
import sys
import micropython
from micropython import const
from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, FIELD, FIELD_BIN,
    FIELD_SCALE, FIELD_REACH2, R_SMALL, HALF_W, HALF_L, CORNER_SUM)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: the viper functions run as plain Python over the arrays
        return x

    def ptr16(x):
        return x

    def ptr32(x):
        return x

MAX_ITER = const(10)       # Gauss-Newton iterations per fit at most
MAX_STEP = const(60)       # 6 mm: the most a fit moves a chip in one iteration
N_GRID = PAD_COLS * PAD_ROWS
# the board's numbers the viper functions use, written out (viper inlines const() values of its
# own module only; an imported name is an object there): checked against the tables at import
_COLS = const(19)          # PAD_COLS
_ROWS = const(38)          # PAD_ROWS
_PITCH = const(250)        # PAD_PITCH
_X0 = const(-2250)         # PAD_X0
_Y0 = const(-4625)         # PAD_Y0
_FBIN = const(800)         # FIELD_BIN
_FSCALE = const(16384)     # FIELD_SCALE
_FREACH2 = const(592900)   # FIELD_REACH2
_XMAX = const(2260)        # HALF_W - R_SMALL: a chip's centre at least R_SMALL inside the outline
_YMAX = const(4660)        # HALF_L - R_SMALL
_SMAX = const(6403)        # CORNER_SUM - R_SMALL * 141 // 100
_REACH = const(769)        # the model's reach (0.1 mm): FIELD is 0 from there on
_FAIL = const(-1)          # fit_step: the normal equations were singular
if ((_COLS, _ROWS, _PITCH, _X0, _Y0, _FBIN, _FSCALE, _FREACH2)
        != (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, FIELD_BIN, FIELD_SCALE, FIELD_REACH2)
        or _XMAX != HALF_W - R_SMALL or _YMAX != HALF_L - R_SMALL
        or _SMAX != CORNER_SUM - R_SMALL * 141 // 100
        or not (_REACH * _REACH < FIELD_REACH2 <= (_REACH + 1) * (_REACH + 1))):
    raise ValueError("hall_fit: the board's tables changed: write out its constants again")


def span(self, x, y, back, size):
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


@micropython.viper
def window_pads(stamp: ptr8, st: int, usable: ptr8, win: ptr16, gm: ptr8, gk: int, xs: ptr32,
                ys: ptr32) -> int:
    """The union of the 4 x 4 windows of chips gm[:gk] (usable pads only, not stamped st yet:
    each is stamped st) into win, in the order of the plain loop. Returns its size."""
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    nw = 0
    q = 0
    while q < gk:
        i = int(gm[q])
        x = int(xs[i])
        if (x >> 29) > 3:
            x -= w16 * w16
        y = int(ys[i])
        if (y >> 29) > 3:
            y -= w16 * w16
        # span(x, y, 1, 4)
        c0 = (x - _X0) // _PITCH - 1
        r0 = (y - _Y0) // _PITCH - 1
        c1 = c0 + 4
        r1 = r0 + 4
        if c0 < 0:
            c0 = 0
        if r0 < 0:
            r0 = 0
        if c1 > _COLS:
            c1 = _COLS
        if r1 > _ROWS:
            r1 = _ROWS
        r = r0
        while r < r1:
            g = r * _COLS + c0
            e = r * _COLS + c1
            while g < e:
                if int(usable[g]) != 0 and int(stamp[g]) != st:
                    stamp[g] = st
                    win[nw] = g
                    nw += 1
                g += 1
            r += 1
        q += 1
    return nw


def window(self):
    """The union of the group's 4 x 4 windows (usable pads only) into win. Returns its size."""
    st = self.st + 1
    if st > 255:
        st = 1
        for g in range(N_GRID):
            self.stamp[g] = 0
    self.st = st
    return window_pads(self.stamp, st, self.usable, self.win, self.gm, self.gk, self.x, self.y)


@micropython.viper
def fit_step(res: ptr32, win: ptr16, nw: int, gm: ptr8, gk: int, xs: ptr32, ys: ptr32,
             amps: ptr32, col: ptr32, nm: ptr32, rhs: ptr32, d: ptr32, sh: ptr8, gerr: ptr32,
             gcnt: ptr32, pk: int, ref_s: int, ref_b: int, amax: int) -> int:
    """One Gauss-Newton iteration of the group gm[:gk] over the window win[:nw]: the normal
    equations (nm, rhs; each member's sum of |residual| and count of the pads where its
    model is the largest into gerr, gcnt), the strength prior, their solution (solve's), the
    step applied to xs, ys, amps. Returns 1 if no chip moved by more than 0.1 mm, 0 if one
    did, _FAIL if the equations were singular (nothing applied)."""
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    fld = ptr16(FIELD)
    p = 3 * gk
    k = 0
    while k < p * p:
        nm[k] = 0
        k += 1
    k = 0
    while k < p:
        rhs[k] = 0
        k += 1
    q = 0
    while q < gk:
        gerr[q] = 0
        gcnt[q] = 0
        q += 1
    w = 0
    while w < nw:
        g = int(win[w])
        gy = _Y0 + (g // _COLS) * _PITCH
        gx = _X0 + (g % _COLS) * _PITCH
        m = 0
        top = 0          # the member whose model is largest here: the pad is its
        mtop = -1
        q = 0
        while q < gk:
            i = int(gm[q])
            c = 3 * q
            x = int(xs[i])
            if (x >> 29) > 3:
                x -= w16 * w16
            y = int(ys[i])
            if (y >> 29) > 3:
                y -= w16 * w16
            dx = gx - x
            dy = gy - y
            d2 = dx * dx + dy * dy
            if d2 >= _FREACH2 or d2 < 0:
                col[c] = 0
                col[c + 1] = 0
                col[c + 2] = 0
            else:
                b = d2 // _FBIN
                f0 = ((int(fld[b]) + 0x8000) & 0xFFFF) - 0x8000
                s = (((int(fld[b + 1]) + 0x8000) & 0xFFFF) - 0x8000) - f0       # |s| < 1000
                f = f0 + s * (d2 - b * _FBIN) // _FBIN
                a = int(amps[i])
                if (a >> 29) > 3:
                    a -= w16 * w16
                mi = a * f // _FSCALE        # 2**15 * 2**14
                m += mi
                if mi < 0:
                    mi = 0 - mi
                if mi > mtop:
                    mtop = mi
                    top = q
                # columns: dm/dA * 512 = f / 32; -dm/dx per mm = A * s * dx / 65536 / 10,
                # written A * ((s * dx) >> 6) / 10240 (s * dx < 2**16 where s is large)
                col[c] = f >> 5
                jx = a * ((s * dx) >> 6) // 10240
                jy = a * ((s * dy) >> 6) // 10240
                if jx >= 2048:
                    jx = 2047
                elif jx <= -2048:
                    jx = -2047
                if jy >= 2048:
                    jy = 2047
                elif jy <= -2048:
                    jy = -2047
                col[c + 1] = jx
                col[c + 2] = jy
            q += 1
        v = int(res[g])
        if (v >> 29) > 3:
            v -= w16 * w16
        e = v - m
        if e > 4095:
            e = 4095
        elif e < -4095:
            e = -4095
        if e > 0:
            gerr[top] = int(gerr[top]) + e
        else:
            gerr[top] = int(gerr[top]) - e
        gcnt[top] = int(gcnt[top]) + 1
        # normal equations, upper triangle: |col| < 2**11, 64 pads: sums < 2**28
        r = 0
        while r < p:
            cr = int(col[r])
            if (cr >> 29) > 3:
                cr -= w16 * w16
            if cr != 0:
                rhs[r] = int(rhs[r]) + cr * e            # 2**11 * 2**12 * 64 = 2**29
                k = r * p
                c = r
                while c < p:
                    cc = int(col[c])
                    if (cc >> 29) > 3:
                        cc -= w16 * w16
                    nm[k + c] = int(nm[k + c]) + cr * cc
                    c += 1
            r += 1
        w += 1
    # what a magnet's strength is known to be: a pseudo-measurement of A, weighted by
    # NOISE_LSB / PRIOR_SIGMA (in the A column's units, 512 * that). Without it, chips
    # in a row trade strength for position along the row (docs/sensing.md).
    if pk != 0:
        pc = 2 * pk                     # 512 * k
        q = 0
        while q < gk:
            a = int(amps[int(gm[q])])
            if (a >> 29) > 3:
                a -= w16 * w16
            if a > 0:
                r = ref_s
            else:
                r = 0 - ref_b
            c = 3 * q
            nm[c * p + c] = int(nm[c * p + c]) + pc * pc
            rhs[c] = int(rhs[c]) + pc * ((pk * (r - a)) >> 8)
            q += 1
    # -- the solution of nm d = rhs (p x p, upper triangle given) in fixed point: columns
    # scaled by powers of two to a diagonal in [2**10, 2**12), damped, right side scaled to
    # < 2**13. The true solution is d[c] * 2**(t - sh[c] - 6).
    c = 0
    while c < p:
        v = int(nm[c * p + c])          # >= 0: a sum of squares
        s = 0
        while v >= 4096:
            v >>= 2
            s += 1
        sh[c] = s
        c += 1
    r = 0
    while r < p:
        c = r
        while c < p:
            v = int(nm[r * p + c])
            if (v >> 29) > 3:
                v -= w16 * w16
            v = v >> (int(sh[r]) + int(sh[c]))
            if c == r:
                v += (v >> 8) + 1               # Levenberg-Marquardt damping
            nm[r * p + c] = v
            nm[c * p + r] = v
            c += 1
        r += 1
    mx = 0
    c = 0
    while c < p:
        v = int(rhs[c])
        if (v >> 29) > 3:
            v -= w16 * w16
        v = v >> int(sh[c])
        rhs[c] = v
        if v < 0:
            v = 0 - v
        if v > mx:
            mx = v
        c += 1
    t = 0
    while mx >= 8192:
        mx >>= 1
        t += 1
    if t != 0:
        c = 0
        while c < p:
            v = int(rhs[c])
            if (v >> 29) > 3:
                v -= w16 * w16
            rhs[c] = v >> t
            c += 1
    elif mx != 0:
        while mx < 4096:
            mx <<= 1
            t -= 1
        c = 0
        while c < p:
            rhs[c] = int(rhs[c]) << (0 - t)
            c += 1
    # elimination (the matrix is symmetric positive definite: no pivoting)
    i = 0
    while i < p:
        piv = int(nm[i * p + i])
        if (piv >> 29) > 3:
            piv -= w16 * w16
        if piv <= 0:
            return _FAIL
        j = i + 1
        while j < p:
            l = int(nm[j * p + i])
            if (l >> 29) > 3:
                l -= w16 * w16
            if l != 0:
                k = i + 1
                while k < p:
                    v = int(nm[i * p + k])
                    if (v >> 29) > 3:
                        v -= w16 * w16
                    nm[j * p + k] = int(nm[j * p + k]) - l * v // piv    # 2**13 * 2**13
                    k += 1
                v = int(rhs[i])
                if (v >> 29) > 3:
                    v -= w16 * w16
                u = int(rhs[j])
                if (u >> 29) > 3:
                    u -= w16 * w16
                v = u - l * v // piv                           # 2**13 * 2**17
                rhs[j] = v
                if v > 131071 or v < -131071:
                    k = 0
                    while k < p:
                        u = int(rhs[k])
                        if (u >> 29) > 3:
                            u -= w16 * w16
                        rhs[k] = u >> 1
                        k += 1
                    t += 1
            j += 1
        i += 1
    # back substitution, 6 fractional bits, |d| < 2**13
    i = p - 1
    while i >= 0:
        s = int(rhs[i])
        if (s >> 29) > 3:
            s -= w16 * w16
        s = s << 6                                             # 2**23
        k = i + 1
        while k < p:
            v = int(nm[i * p + k])
            if (v >> 29) > 3:
                v -= w16 * w16
            u = int(d[k])
            if (u >> 29) > 3:
                u -= w16 * w16
            s -= v * u                                         # 11 * 2**13 * 2**13
            k += 1
        v = s // int(nm[i * p + i])                            # (> 0: the pivot)
        if v >= 8192:
            v = 8191
        elif v <= -8192:
            v = -8191
        d[i] = v
        i -= 1
    # -- the step: A += 512 * dA; x -= 10 * dx (mm -> 0.1 mm); d = delta * 2**(t - sh - 6),
    # each rounded and limited as the plain code's _scaled(v, e, lim) did
    done = 1
    q = 0
    while q < gk:
        i = int(gm[q])
        c = 3 * q
        da = 0
        sx = 0
        sy = 0
        k = 0
        while k < 3:
            v = int(d[c + k])
            if (v >> 29) > 3:
                v -= w16 * w16
            e = t - int(sh[c + k])
            lim = MAX_STEP
            if k == 0:
                e += 3
                lim = 20000
            else:
                v = 10 * v
                e -= 6
            # v * 2**e, rounded, limited to +-lim (lim < 2**20)
            if e >= 0:
                if e > 20 or v >= (lim >> e) + 1 or 0 - v >= (lim >> e) + 1:
                    if v == 0:
                        v = 0
                    elif v > 0:
                        v = lim
                    else:
                        v = 0 - lim
                else:
                    v = v << e
            else:
                e = 0 - e
                if e > 24:
                    v = 0
                else:
                    v = (v + (1 << (e - 1))) >> e
                    if v >= lim:
                        v = lim
                    elif v <= 0 - lim:
                        v = 0 - lim
            if k == 0:
                da = v
            elif k == 1:
                sx = 0 - v
            else:
                sy = 0 - v
            k += 1
        a = int(amps[i])
        if (a >> 29) > 3:
            a -= w16 * w16
        a += da
        if a >= amax:
            a = amax
        elif a <= 0 - amax:
            a = 0 - amax
        amps[i] = a
        x = int(xs[i])
        if (x >> 29) > 3:
            x -= w16 * w16
        y = int(ys[i])
        if (y >> 29) > 3:
            y -= w16 * w16
        x += sx
        y += sy
        # a chip lies on the board: its centre at least R_SMALL inside the outline
        if x > _XMAX:
            x = _XMAX
        elif x < 0 - _XMAX:
            x = 0 - _XMAX
        if y > _YMAX:
            y = _YMAX
        elif y < 0 - _YMAX:
            y = 0 - _YMAX
        ax = x
        if x < 0:
            ax = 0 - x
        ay = y
        if y < 0:
            ay = 0 - y
        if ax + ay > _SMAX:
            # back onto the corner's edge, straight in (45 degrees)
            e = (ax + ay - _SMAX + 1) >> 1
            if x > 0:
                x -= e
            else:
                x += e
            if y > 0:
                y -= e
            else:
                y += e
        xs[i] = x
        ys[i] = y
        if sx > 1 or sx < -1 or sy > 1 or sy < -1:
            done = 0
        q += 1
    return done


def fit_group(self):
    """Fit the group's chips (gm[:gk]) jointly to the residual with their own models put
    back: Gauss-Newton on x, y, A of every chip at once (Levenberg-Marquardt damped).
    Subtracts the fitted models again. False if there was too little to fit."""
    gm = self.gm
    gk = self.gk
    for q in range(gk):
        self._restore(gm[q])
    gerr = self.gerr
    gcnt = self.gcnt
    ok = True
    iters = self.iters if self.iters else MAX_ITER + 4 * gk - 4
    for it in range(iters):
        nw = self._window()
        if nw < 3:
            ok = False
            break
        r = fit_step(self.res, self.win, nw, gm, gk, self.x, self.y, self.amp, self.col, self.nm,
                     self.rhs, self.d, self.sh, gerr, gcnt, self.prior_k8, self.ref_s, self.ref_b,
                     self.amax)
        if r == _FAIL:
            ok = False
            break
        if r:
            break
    for q in range(gk):
        i = gm[q]
        self.err[i] = gerr[q] // gcnt[q] if gcnt[q] else 0
        self._model(i, -1)
        self.sub[i] = 1
    return ok


@micropython.viper
def model_pads(res: ptr32, x: int, y: int, a: int, sign: int):
    """Add (sign 1) or subtract (sign -1) the model of a chip of strength a at (x, y) to the
    residual, over its reach."""
    fld = ptr16(FIELD)
    c0 = (x - _REACH - _X0) // _PITCH + 1
    c1 = (x + _REACH - _X0) // _PITCH + 1
    r0 = (y - _REACH - _Y0) // _PITCH + 1
    r1 = (y + _REACH - _Y0) // _PITCH + 1
    if c0 < 0:
        c0 = 0
    if r0 < 0:
        r0 = 0
    if c1 > _COLS:
        c1 = _COLS
    if r1 > _ROWS:
        r1 = _ROWS
    rr = r0
    while rr < r1:
        dy = _Y0 + rr * _PITCH - y
        cc = c0
        while cc < c1:
            dx = _X0 + cc * _PITCH - x
            d2 = dx * dx + dy * dy
            if d2 < _FREACH2:
                b = d2 // _FBIN
                f0 = ((int(fld[b]) + 0x8000) & 0xFFFF) - 0x8000
                f1 = ((int(fld[b + 1]) + 0x8000) & 0xFFFF) - 0x8000
                f = f0 + (f1 - f0) * (d2 - b * _FBIN) // _FBIN
                m = a * f // _FSCALE
                g = rr * _COLS + cc
                if sign > 0:
                    res[g] = int(res[g]) + m
                else:
                    res[g] = int(res[g]) - m
            cc += 1
        rr += 1


def model(self, i, sign):
    """Add (sign 1) or subtract (sign -1) chip i's model to the residual, over its reach."""
    model_pads(self.res, self.x[i], self.y[i], self.amp[i], sign)


@micropython.viper
def win_err_pads(res: ptr32, usable: ptr8, x: int, y: int) -> int:
    """Mean |residual| (each clamped to +-4095) over the usable pads of the 4 x 4 square
    around (x, y) (span(x, y, 1, 4))."""
    c0 = (x - _X0) // _PITCH - 1
    r0 = (y - _Y0) // _PITCH - 1
    c1 = c0 + 4
    r1 = r0 + 4
    if c0 < 0:
        c0 = 0
    if r0 < 0:
        r0 = 0
    if c1 > _COLS:
        c1 = _COLS
    if r1 > _ROWS:
        r1 = _ROWS
    w16 = 65536
    s = 0
    k = 0
    r = r0
    while r < r1:
        g = r * _COLS + c0
        end = r * _COLS + c1
        while g < end:
            if int(usable[g]) != 0:
                e = int(res[g])
                if (e >> 29) > 3:
                    e -= w16 * w16
                if e > 4095:
                    e = 4095
                elif e < -4095:
                    e = -4095
                if e < 0:
                    e = 0 - e
                s += e
                k += 1
            g += 1
        r += 1
    if k == 0:
        return 0
    return s // k


def win_err(self, i):
    """Mean |residual| over chip i's 4 x 4 pads (its model out of the residual)."""
    return win_err_pads(self.res, self.usable, self.x[i], self.y[i])


def copy(self, src, dst):
    self.x[dst] = self.x[src]
    self.y[dst] = self.y[src]
    self.x0[dst] = self.x0[src]
    self.y0[dst] = self.y0[src]
    self.amp[dst] = self.amp[src]
    self.err[dst] = self.err[src]
    self.sub[dst] = self.sub[src]
    self.moved[dst] = self.moved[src]
    self.kept[dst] = self.kept[src]
    self.outlier[dst] = self.outlier[src]
    self.serr[dst] = self.serr[src]


def restore(self, i):
    """Put chip i's model back into the residual (if it was out)."""
    if self.sub[i]:
        self._model(i, 1)
        self.sub[i] = 0


def _profile(d2):
    """FIELD at rho^2 = d2 (0.01 mm^2), interpolated; 0 beyond the reach."""
    if d2 >= FIELD_REACH2:
        return 0
    b = d2 // FIELD_BIN
    f0 = FIELD[b]
    return f0 + (FIELD[b + 1] - f0) * (d2 - b * FIELD_BIN) // FIELD_BIN
