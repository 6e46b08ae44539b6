"""The hall locator's joint fit (firmware/sensing/hall_fit.py) in viper against the plain code it
replaced, under both runtimes (issue 13: the fit's loops in viper, so that a frame while chips
move fits in 50 ms on the RP2040).

TARGET runs on the MicroPython unix port (viper as x64 machine code, 64-bit words), under
CPython (the viper functions as plain Python) and, in tests/test_rp2040_fit.py, on the emulated
RP2040 (armv6m machine code, 32-bit words, 30-bit small ints). It fits seeded random groups of
1 - 4 chips on frames made from the model with noise (chips anywhere on the board, at its edges
and corners, over pads left out, strengths up to the limit a fit allows, every prior), and
saturated frames, once with the firmware's fit and once with the plain code copied here (the
code before the change, bound as the same Locator's methods); and calls model_pads and
win_err_pads with strengths, positions and residuals near the word limits. Every array the fit
touches must come out the same, to the last bit, and the runtimes must agree.
"""
import pytest

from conftest import RUNTIMES, run_script

TARGET = r'''
import sys
import json
from array import array
from tables import board_table as BT
from tables.board_table import (PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, FIELD, FIELD_BIN,
    FIELD_SCALE, FIELD_REACH2, R_SMALL, HALF_W, HALF_L, CORNER_SUM, PAD_PRESENT, ADC_PEAK)
from sensing import hall_fit as HF
from sensing.hall_locate import Locator
from lcg import Rng

job = json.loads(sys.stdin.readline())
# "ref": 0 (the emulated chip's half): the plain fits and models are not run there, the viper
# code's answers are listed ("outs": each fit's result and places, its whole state by its
# SHA-256; each model's and win_err's) for the host to compare with the whole script's run under
# CPython on the same draws, whose plain code checks them ("bad": what differed there;
# tests/test_rp2040.py chip_half_matches); "outs": 1 lists them in any run
RUN_REF = job.get("ref", 1)
OUTS = [] if job.get("outs") else None
if OUTS is not None:
    import hashlib


def digest(arrays):
    d = hashlib.sha256()
    for a in arrays:
        d.update(a)
    return d.digest().hex()


MAX_ITER = 10
MAX_STEP = 60
N_GRID = PAD_COLS * PAD_ROWS
_XMAX = HALF_W - R_SMALL
_YMAX = HALF_L - R_SMALL
_SMAX = CORNER_SUM - R_SMALL * 141 // 100
_REACH = 0
while (_REACH + 1) * (_REACH + 1) < FIELD_REACH2:
    _REACH += 1

# -- the plain code before the change (hall_fit.py at cbf1f40), the reference ------------------
def ref_window(self):
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


def ref_fit_group(self):
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


def ref_solve(self, p):
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


def ref_model(self, i, sign):
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


def ref_win_err(self, i):
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




def plain(loc):
    """loc's fit methods as the plain code (instance attributes win over the class's)."""
    loc._window = lambda: ref_window(loc)
    loc._fit_group = lambda: ref_fit_group(loc)
    loc._solve = lambda p: ref_solve(loc, p)
    loc._model = lambda i, sign: ref_model(loc, i, sign)
    loc._win_err = lambda i: ref_win_err(loc, i)


ARRAYS = ("x", "y", "amp", "err", "sub", "res", "nm", "rhs", "d", "sh", "gerr", "gcnt", "win",
          "stamp")


# (copies of the arrays, compared and put back whole: a value at a time cost the emulated chip
# more than the plain fit itself, tests/test_rp2040_fit.py)
def state(loc):
    return [getattr(loc, k)[:] for k in ARRAYS] + [loc.st]


def load(loc, st):
    for k, v in zip(ARRAYS, st):
        getattr(loc, k)[:] = v
    loc.st = st[-1]


rng = Rng(job["seed"])


def rnd(lo, hi):
    return lo + rng.below(hi - lo + 1)


def frame(loc, chips, noise, sat):
    """loc.res: the model of chips [(x, y, a)] plus noise, or saturated (+-32767, sat > 0)."""
    res = loc.res
    if noise:
        rng.fill(res, N_GRID, -noise, noise)    # (res[g] = rnd(-noise, noise), g < N_GRID)
    else:
        res[:] = ZERO_RES
    if sat:
        for g in range(N_GRID):
            res[g] = 32767 if (g * 7 + sat) % 3 else -32767
        return
    for x, y, a in chips:
        loc.x[7] = x
        loc.y[7] = y
        loc.amp[7] = a
        ref_model(loc, 7, 1)


def case(k):
    """A group to fit: its chips' starts, the frame, the pads left out, the prior."""
    loc = NEW
    gk = 1 + rng.below(4)
    edge = k % 5 == 4
    chips = []
    for q in range(gk):
        if edge:        # at the edges and corners, and beyond them
            x = (2600 - rnd(0, 500)) * (1 if rng.below(2) else -1)
            y = (4950 - rnd(0, 900)) * (1 if rng.below(2) else -1)
        else:
            x = rnd(-2300, 2300)
            y = rnd(-4700, 4700)
        big = rng.below(2)
        a = rnd(ADC_PEAK // 2, ADC_PEAK + ADC_PEAK // 4)
        chips.append((x, y, -a if big else a))
    sat = (k % 7 == 6) * (1 + k % 3)
    st0 = []
    for q in range(gk):
        x, y, a = chips[q]
        # the fit starts near the true chip (a follow), or far (a seed), at any strength
        d = 300 if k % 3 == 0 else 40
        st0.append((x + rnd(-d, d), y + rnd(-d, d), a + rnd(-3000, 3000) if k % 4 else
                    (loc.amax if a > 0 else -loc.amax)))
    usable = bytearray(PAD_PRESENT)
    for _ in range(rng.below(12)):
        usable[rng.below(N_GRID)] = 0
    pk = (0, 128, 200, -1)[k % 4]
    iters = 2 if k % 2 else 0
    return gk, chips, st0, usable, pk, iters, sat


def setup(loc, c):
    gk, chips, st0, usable, pk, iters, sat = c
    frame(loc, chips, 40 if not sat else 0, sat)
    for q in range(gk):
        x, y, a = st0[q]
        loc.x[q] = x
        loc.y[q] = y
        loc.amp[q] = a
        loc.sub[q] = 0
        loc.gm[q] = q
    loc.gk = gk
    loc.usable[:] = usable
    if pk >= 0:
        loc.prior_k8 = pk
    else:
        loc.set_prior(loc.PRIOR_SIGMA)
    loc.ref_s = ADC_PEAK - 300
    loc.ref_b = ADC_PEAK + 200
    loc._hold()
    loc.iters = iters


NEW = Locator()
REF = Locator()
ZERO_RES = array('i', bytes(4 * N_GRID))
plain(REF)
out = {"fits": [], "model": [], "win_err": []} if RUN_REF else {}
same = 0
for k in range(job["cases"]):
    c = case(k)
    # the same state into both, from NEW's (their stamps and window counters too)
    setup(NEW, c)
    if not RUN_REF:
        ok_new = NEW._fit_group()
        OUTS.append([ok_new, list(NEW.x[:c[0]]), list(NEW.y[:c[0]]), list(NEW.amp[:c[0]]),
                     list(NEW.err[:c[0]]), NEW.st, digest(getattr(NEW, a) for a in ARRAYS)])
        continue
    s0 = state(NEW)
    load(REF, s0)
    REF.gk = NEW.gk
    for q in range(len(NEW.gm)):
        REF.gm[q] = NEW.gm[q]
    REF.usable[:] = NEW.usable
    REF.prior_k8 = NEW.prior_k8
    REF.ref_s = NEW.ref_s
    REF.ref_b = NEW.ref_b
    REF.amax = NEW.amax
    REF.iters = NEW.iters
    ok_new = NEW._fit_group()
    ok_ref = REF._fit_group()
    a = state(NEW)
    b = state(REF)
    eq = ok_new == ok_ref and a == b
    same += eq
    if OUTS is not None:
        OUTS.append([ok_new, list(NEW.x[:c[0]]), list(NEW.y[:c[0]]), list(NEW.amp[:c[0]]),
                     list(NEW.err[:c[0]]), NEW.st, digest(getattr(NEW, a) for a in ARRAYS)])
    # (a short digest of the fit for the runtimes' comparison)
    out["fits"].append([eq, ok_new, list(NEW.x[:c[0]]), list(NEW.y[:c[0]]), list(NEW.amp[:c[0]]),
                        list(NEW.err[:c[0]])] + ([] if eq else [[ARRAYS[j] for j in range(len(ARRAYS))
                                                                  if not a[j] == b[j]]]))
if RUN_REF:
    out["same"] = same
# model_pads: strengths to 2**16 (a * f reaches 2**30), centres on and far off the board
# (squared distances near 2**30), residuals near +-2**30 either way
for x, y, a, base in ((0, 0, 65535, (1 << 30) - 70000), (-2250, -4625, -65535, -(1 << 30) + 70000),
                      (23000, -23000, 17500, 0), (-23000, 23000, -17500, 12345),
                      (2400, 4800, 32767, -(1 << 29)), (-2600, 4950, -32767, 1 << 29),
                      (125, -125, 1, -1), (2300, -4700, 14000, 0)):
    res0 = array('i', (base + (g & 15) for g in range(N_GRID)))
    for sign in (1, -1):
        got = []
        for loc, fn in ((NEW, HF.model), (REF, ref_model))[:2 if RUN_REF else 1]:
            loc.res[:] = res0
            loc.x[0] = x
            loc.y[0] = y
            loc.amp[0] = a
            fn(loc, 0, sign)
            got.append(loc.res[:])
        if OUTS is not None:
            OUTS.append([digest([got[0]]), sum(got[0]) - N_GRID * base])
        if RUN_REF:
            out["model"].append([got[0] == got[1], sum(got[0]) - N_GRID * base])
# win_err_pads: residuals at and beyond the clamp, near +-2**30 and +-2**31 (a 32-bit word's
# sign), pads left out
for x, y, v in ((0, 0, (1 << 30) - 1), (0, 0, -(1 << 30)), (-2250, -4625, (1 << 31) - 1),
                (2250, 4625, -(1 << 31)), (100, 200, 4095), (100, 200, -4096), (2400, 4800, 7),
                (-3000, -5000, -7)):
    got = []
    res0 = array('i', (v if g % 3 else -v - 1 if v < 0 else -v for g in range(N_GRID)))
    usable0 = bytearray(0 if g % 5 == 2 else 1 for g in range(N_GRID))
    for loc, fn in ((NEW, HF.win_err), (REF, ref_win_err))[:2 if RUN_REF else 1]:
        loc.res[:] = res0
        loc.usable[:] = usable0
        loc.x[0] = x
        loc.y[0] = y
        got.append(fn(loc, 0))
    if OUTS is not None:
        OUTS.append(got[0])
    if RUN_REF:
        out["win_err"].append([got[0] == got[1], got[0]])
if RUN_REF:
    out["bad"] = ([["fit", i] for i, f in enumerate(out["fits"]) if not f[0]]
                  + [["model", i] for i, m in enumerate(out["model"]) if not m[0]]
                  + [["win_err", i] for i, w in enumerate(out["win_err"]) if not w[0]])
if OUTS is not None:
    out["outs"] = OUTS
print(json.dumps(out))
'''


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_viper_fit_gives_the_plain_fits_numbers(runtime, tmp_path):
    out = run_script(TARGET, "hall_fit_target.py", runtime, {"seed": 7, "cases": 60}, tmp_path)
    bad = [f for f in out["fits"] if not f[0]]
    assert not bad, bad[:3]
    assert out["same"] == 60
    assert all(m[0] for m in out["model"]), out["model"]
    assert all(w[0] for w in out["win_err"]), out["win_err"]


def test_both_runtimes_fit_the_same(tmp_path):
    job = {"seed": 8, "cases": 30}
    mp = run_script(TARGET, "hall_fit_target.py", "micropython", job, tmp_path)
    cp = run_script(TARGET, "hall_fit_target.py", "cpython", job, tmp_path)
    assert mp == cp
    # the fits did something: chips moved and strengths changed, some fits refused
    assert sum(1 for f in mp["fits"] if f[1]) >= 20


# Under CPython hall_fit.fit_step is its twin (boardsim/target/viper_twins.py fit_step_twin: the
# normal equations' sums over the window at once, the solution on lists; issue 15, the CPython
# hall games' time): the firmware's body is its `firmware`. Both from the same inputs, every
# array they write compared: groups of 1 - 4 chips anywhere (pads out of a member's reach),
# members on the very same spot or mirrored about a pad row (the largest model tied between
# members: the first one's pad), singular equations (_FAIL, the partial state left as the body
# leaves it), strengths of both signs up to the limit, every prior.
TWIN_TARGET = r'''
import json
import random
import sys
from array import array
from tables.board_table import PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0, ADC_PEAK
from sensing import hall_fit as HF

job = json.loads(sys.stdin.readline())
rng = random.Random(job["seed"])
twin = HF.fit_step
body = getattr(twin, "firmware", None)
out = {"twin": body is not None, "same": 0, "bad": [], "fail": 0, "ties": 0, "moved": 0}
N = PAD_COLS * PAD_ROWS
for case in range(job["cases"]):
    gk = rng.randint(1, 4)
    xs = array("i", bytes(32))
    ys = array("i", bytes(32))
    amps = array("i", bytes(32))
    gm = bytearray(4)
    kind = rng.random()
    x0 = rng.randint(-2300, 2300)
    y0 = rng.randint(-4700, 4700)
    for q in range(gk):
        i = rng.randrange(8)
        while i in gm[:q]:
            i = rng.randrange(8)
        gm[q] = i
        if kind < 0.25 and q:                    # the same spot as the first member
            xs[i], ys[i] = xs[gm[0]], ys[gm[0]]
        elif kind < 0.5 and q == 1:              # mirrored about a pad row
            xs[i], ys[i] = xs[gm[0]], 2 * (PAD_Y0 + ((ys[gm[0]] - PAD_Y0) // PAD_PITCH) * PAD_PITCH) - ys[gm[0]]
        else:
            xs[i] = x0 + rng.randint(-500, 500)
            ys[i] = y0 + rng.randint(-500, 500)
        amps[i] = rng.choice((1, -1)) * rng.randint(0, ADC_PEAK + (ADC_PEAK >> 2))
        if kind < 0.5 and q and rng.random() < 0.7:
            amps[i] = rng.choice((1, -1)) * amps[gm[0]]      # (the models alike: tied)
    res = array("i", (rng.randint(-3000, 3000) if rng.random() < 0.3 else 0 for g in range(N)))
    for q in range(gk):
        HF.model_pads(res, xs[gm[q]], ys[gm[q]], amps[gm[q]] + rng.randint(-2000, 2000), 1)
    c = (xs[gm[0]] - PAD_X0) // PAD_PITCH
    r = (ys[gm[0]] - PAD_Y0) // PAD_PITCH
    near = [g for g in range(N) if abs(g % PAD_COLS - c) <= 5 and abs(g // PAD_COLS - r) <= 5]
    if kind > 0.9:
        near = [g for g in range(N)]             # pads far from every member
    rng.shuffle(near)
    nw = rng.randint(0 if kind > 0.95 else 3, min(64, len(near)))
    win = array("h", near[:nw] + [0] * (64 - nw))
    pk = rng.choice((0, 0, 200, rng.randint(1, 400)))
    args = dict(ref_s=rng.randint(0, ADC_PEAK), ref_b=rng.randint(0, ADC_PEAK),
                amax=rng.randint(1, ADC_PEAK + (ADC_PEAK >> 2)))
    runs = []
    for f in (twin, body):
        a = [array("i", res), array("h", win), nw, bytearray(gm), gk, array("i", xs), array("i", ys),
             array("i", amps), array("i", bytes(48)), array("i", bytes(4 * 144)), array("i", bytes(48)),
             array("i", bytes(48)), bytearray(12), array("i", bytes(16)), array("i", bytes(16))]
        r = f(*a, pk, args["ref_s"], args["ref_b"], args["amax"])
        runs.append([r] + [list(x) if not isinstance(x, int) else x for x in a])
    if runs[0] == runs[1]:
        out["same"] += 1
    else:
        out["bad"].append(case)
    out["fail"] += runs[1][0] == -1
    out["moved"] += runs[1][6] != list(xs) or runs[1][7] != list(ys)
    # a pad where two members' models are the largest alike
    for w in range(nw):
        g = win[w]
        gx = PAD_X0 + (g % PAD_COLS) * PAD_PITCH
        gy = PAD_Y0 + (g // PAD_COLS) * PAD_PITCH
        mags = []
        for q in range(gk):
            i = gm[q]
            d2 = (gx - xs[i]) ** 2 + (gy - ys[i]) ** 2
            if d2 < 592900 and amps[i]:
                mags.append((d2, abs(amps[i])))
        if len(set(mags)) < len(mags):
            out["ties"] += 1
            break
print(json.dumps(out))
'''


def test_the_cpython_twin_of_fit_step_writes_what_the_body_writes(tmp_path):
    out = run_script(TWIN_TARGET, "fit_twin_target.py", "cpython", {"seed": 5, "cases": 400}, tmp_path)
    assert out["twin"], "hall_fit.fit_step is the firmware's body under CPython: no twin to test"
    assert not out["bad"], out["bad"][:10]
    assert out["same"] == 400
    # the cases reached what they are drawn for
    assert out["fail"] >= 5 and out["ties"] >= 20 and out["moved"] >= 100, out
