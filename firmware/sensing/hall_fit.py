# The joint fit itself (sensing/hall_locate.py's steps 2 and 5): the group's 4 x 4 pad windows,
# Gauss-Newton on all their x, y and A at once (Levenberg-Marquardt damped, fixed point), the
# normal equations' solution, a chip's model into and out of the residual, and how well it fits.
#
# Functions of the Locator's instance (`self`), bound as its methods in
# sensing/hall_locate.py under the names they had there (_fit_group ...): the hot loops'
# calls and lookups are what they were in the one class. const() values are written
# out in each module that uses them (inlined at compile time, not looked up: the
# same as hall_locate.py's, tests/test_sensing.py checks).
from micropython import const
from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, FIELD, FIELD_BIN,
    FIELD_SCALE, FIELD_REACH2, R_SMALL, HALF_W, HALF_L, CORNER_SUM)

MAX_ITER = const(10)       # Gauss-Newton iterations per fit at most
MAX_STEP = const(60)       # 6 mm: the most a fit moves a chip in one iteration
N_GRID = PAD_COLS * PAD_ROWS
_XMAX = HALF_W - R_SMALL
_YMAX = HALF_L - R_SMALL
_SMAX = CORNER_SUM - R_SMALL * 141 // 100
# the model's reach (0.1 mm): FIELD is 0 from there on
_REACH = 0
while (_REACH + 1) * (_REACH + 1) < FIELD_REACH2:
    _REACH += 1


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


def window(self):
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


def fit_group(self):
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


def solve(self, p):
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


def model(self, i, sign):
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


def win_err(self, i):
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


def copy(self, src, dst):
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


def restore(self, i):
    """Put chip i's model back into the residual (if it was out)."""
    if self.sub[i]:
        self._model(i, 1)
        self.sub[i] = 0


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
