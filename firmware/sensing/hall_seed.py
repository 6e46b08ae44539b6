# How chips are seeded, grouped and split (sensing/hall_locate.py's steps 1, 3 and 4): a chip
# seeded at each candidate pad that is an extremum of its sign, the chips fitted jointly with
# it, one fitting badly tried as two, odd fits of a row fitted again, and the weak and the
# doubled dropped.
#
# Functions of the Locator's instance (`self`), bound as its methods in
# sensing/hall_locate.py under the names they had there (_fit_group ...): the hot loops'
# calls and lookups are what they were in the one class. const() values are written
# out in each module that uses them (inlined at compile time, not looked up: the
# same as hall_locate.py's, tests/test_sensing.py checks).
import sys
import micropython
from micropython import const
from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, FIELD_SCALE, ADC_PEAK,
    R_SMALL, R_BIG)
from sensing.hall_fit import _profile
from sensing.zones import isqrt as _isqrt

MAX_FOUND = const(8)       # chips reported at most
MAX_GROUP = const(4)       # chips fitted jointly at most
_FAR = const(1 << 29)      # near_d2 with no other chip: beyond every square distance on the board

if sys.implementation.name != "micropython":
    def ptr32(x):           # CPython: near_d2 runs as plain Python over the arrays
        return x


def extrema(self, n, tl):
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


def strongest(self, nc, t):
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


def extremum(self, g):
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


def seed(self, g, i):
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


def prune(self, n, t):
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


def merge_blind(self, n):
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


def nearest(self, i, n, skip, d2):
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


@micropython.viper
def near_d2(loc, i: int, n: int) -> int:
    """The square distance from chip i to the nearest other chip j < n (_FAR: none), in
    machine code: nearest(i, n, -1, d2) < 0 exactly when this is d2 or more. _finish and
    _uncertainty ask that of every chip twice in a verdict's turn, each ask 0.1 ms in Python
    on the chip (issue 13). Positions within +-2**14 (the board's within +-5000): a sum of
    squares below 2**31. A 64-bit port loads an array('i') word without its sign: taken
    back to it. Three arguments: a viper call with more allocates them on the chip."""
    xs = ptr32(loc.x)
    ys = ptr32(loc.y)
    w16 = 65536         # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    x = int(xs[i])
    if (x >> 29) > 3:
        x -= w16 * w16
    y = int(ys[i])
    if (y >> 29) > 3:
        y -= w16 * w16
    best = _FAR
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
            e = dx * dx + dy * dy
            if e < best:
                best = e
        j += 1
    return best


def group(self, i, n):
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


def split(self, n, skip):
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


def apart(self, n, j):
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


def unsplit(self, n):
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


def odd(self, i):
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


def row(self, i, n):
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
