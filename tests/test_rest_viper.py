"""Tracker._finish's slot loops in viper for the verdict's frame (issue 13): `_rest_seen` (the
result's start masks and kind for the chips seen, a moved chip back where it lay not moved,
r.moved, FATE_REST), `_rest_snapshot` (the new rest snapshot of the tracked chips) and
`_rest_masks` (the kept masks' end masks, positions and sure; a free slot's masks cleared) do
exactly what the loops did in Python (the references below, _finish's loops as they were at
5036042). Seeded slots present / seen / moved / free in every mix, the fit around its rest
position at the limit move_tol + wander exactly, one past it and one short (positions and
wanders to +-2**14, negative ones among them), masks kept (cupped[MAX + i] == 1 + tunc) or not,
hi == lo or not. Under the MicroPython unix port with the heap locked around the calls, and
CPython. Fails with a `<` for the `<=` of the "back where it lay" or a sign load broken.
"""
import pytest

from conftest import run_script

TARGET = r'''
import sys
import json
from array import array
from tracking import tracker as T
from tracking import shot as S
from lcg import Rng

job = json.loads(sys.stdin.readline())
LOCK = sys.implementation.name == "micropython"
if LOCK:
    import micropython
MAX = 4


class Tr:
    def __init__(self):
        self.present = bytearray(MAX)
        self.seen = bytearray(MAX)
        self.moved = bytearray(MAX)
        self.move_order = bytearray(MAX)
        self.kind = bytearray(MAX)
        self.cupped = bytearray(2 * MAX)
        for k in ("x", "y", "tx", "ty", "tw", "rs", "ts", "tunc", "mask", "lo", "hi"):
            setattr(self, k, array('i', [0] * MAX))
        self.move_tol = 0


def near(x0, y0, x1, y1, tol):
    dx = x1 - x0
    dy = y1 - y0
    return dx * dx + dy * dy <= tol * tol


def ref_seen(tr, r):
    # (_finish's first slot loop for the chips seen, as it was)
    left = 0
    for i in range(MAX):
        if not tr.present[i]:
            continue
        if not tr.seen[i]:
            left |= 1 << i
            continue
        r.kind[i] = tr.kind[i]
        r.start_mask[i] = tr.mask[i]
        r.start_lo[i] = tr.lo[i]
        r.start_hi[i] = tr.hi[i]
        if tr.moved[i] and tr.seen[i] and \
                near(tr.x[i], tr.y[i], tr.tx[i], tr.ty[i], tr.move_tol + tr.tw[i]):
            tr.moved[i] = 0
            tr.move_order[i] = 0
        r.moved[i] = tr.moved[i]
        r.fate[i] = S.FATE_REST
        if tr.moved[i]:
            left |= 256
    return left


def ref_snapshot(tr):
    for i in range(MAX):
        if tr.present[i] and tr.seen[i]:
            x = tr.tx[i]
            y = tr.ty[i]
            if tr.x[i] != x or tr.y[i] != y:
                tr.cupped[MAX + i] = 0
            tr.x[i] = x
            tr.y[i] = y
            tr.rs[i] = tr.ts[i]
        else:
            tr.present[i] = 0
            tr.cupped[MAX + i] = 0


def ref_masks(tr, r):
    left = 0
    for i in range(MAX):
        if tr.present[i]:
            if tr.cupped[MAX + i] == tr.tunc[i] + 1:
                m = tr.mask[i]
                if tr.seen[i] or r.fate[i] == S.FATE_REST:
                    r.end_mask[i] = m
                    r.x[i] = tr.x[i]
                    r.y[i] = tr.y[i]
                    if r.moved[i] and tr.hi[i] != tr.lo[i]:
                        r.sure[i] = 0
            else:
                left |= 1 << i
        else:
            tr.mask[i] = 0
            tr.lo[i] = 0
            tr.hi[i] = 0
    return left


TR = ("present", "seen", "moved", "move_order", "kind", "cupped", "x", "y", "tx", "ty", "tw",
      "rs", "ts", "tunc", "mask", "lo", "hi")
RS = ("kind", "moved", "fate", "start_mask", "end_mask", "start_lo", "start_hi", "x", "y", "sure")


def state(tr, r):
    return [list(getattr(tr, k)) for k in TR] + [list(getattr(r, k)) for k in RS]


def load(tr, r, s):
    for j, k in enumerate(TR):
        a = getattr(tr, k)
        for i, v in enumerate(s[j]):
            a[i] = v
    for j, k in enumerate(RS):
        a = getattr(r, k)
        for i, v in enumerate(s[len(TR) + j]):
            a[i] = v


rng = Rng(job["seed"])
LIM = 1 << 14


def pick(*vs):
    return vs[rng.below(len(vs))]


def fill(tr, r):
    tr.move_tol = pick(0, 30, 60, rng.below(200))
    for i in range(MAX):
        tr.present[i] = rng.below(4) != 0
        tr.seen[i] = rng.below(3) != 0
        tr.moved[i] = rng.below(2)
        tr.move_order[i] = rng.below(5)
        tr.kind[i] = rng.below(2)
        tr.x[i] = pick(rng.below(2 * LIM - 1) - LIM + 1, LIM - 1, -LIM + 1, rng.below(10001) - 5000)
        tr.y[i] = pick(rng.below(2 * LIM - 1) - LIM + 1, LIM - 1, -LIM + 1, rng.below(10001) - 5000)
        tr.tw[i] = pick(0, rng.below(100), rng.below(LIM), -rng.below(100) - 1)
        t = tr.move_tol + tr.tw[i]
        # the fit at the limit exactly, one past, one short, or anywhere; or where it lay
        t = t if t > 0 else -t
        d = pick(t, t + 1, t - 1 if t else 0, 0, rng.below(2 * LIM))
        ax = pick(0, 1, 2)
        if ax == 0:
            dx, dy = d, 0
        elif ax == 1:
            dx, dy = 0, -d
        else:
            dx, dy = 3 * d // 5, 4 * d // 5     # (3, 4, 5: on the circle exactly when d % 5 == 0)
        tr.tx[i] = max(-LIM + 1, min(LIM - 1, tr.x[i] + dx))
        tr.ty[i] = max(-LIM + 1, min(LIM - 1, tr.y[i] + dy))
        tr.ts[i] = rng.below(1 << 17) - (1 << 16)
        tr.rs[i] = rng.below(1 << 17) - (1 << 16)
        tr.tunc[i] = pick(0, rng.below(40), 254, 255, rng.below(300), -1, -2)
        tr.cupped[MAX + i] = pick((tr.tunc[i] + 1) & 255, (tr.tunc[i] + 1) & 255, rng.below(256), 0)
        tr.cupped[i] = rng.below(3)
        tr.mask[i] = rng.below(1 << 20) - pick(0, 1 << 20)
        tr.hi[i] = pick(tr.mask[i], rng.below(1 << 20))
        tr.lo[i] = pick(tr.hi[i], tr.mask[i], rng.below(1 << 20) - (1 << 19))
        r.kind[i] = 9
        r.moved[i] = rng.below(2)
        r.fate[i] = pick(S.FATE_REST, 3, 7)
        r.start_mask[i] = -5
        r.end_mask[i] = -6
        r.start_lo[i] = -7
        r.start_hi[i] = -8
        r.x[i] = 11
        r.y[i] = 12
        r.sure[i] = 1


def locked(f, a, b=None):
    if LOCK:
        micropython.heap_lock()
    try:
        return f(a) if b is None else f(a, b)
    finally:
        if LOCK:
            micropython.heap_unlock()


tr = Tr()
r = S.ShotResult()
ok = 0
back = 0
stays = 0
kept = 0
made = 0
cases = job["cases"]
for case in range(cases):
    good = True
    for f, g in ((T._rest_seen, ref_seen), (T._rest_snapshot, ref_snapshot),
                 (T._rest_masks, ref_masks)):
        # (each from slots of its own: after the snapshot every slot present is seen)
        fill(tr, r)
        s = state(tr, r)
        if g is ref_seen:
            s0 = s
        if g is ref_masks:
            s2 = s
        want = g(tr) if g is ref_snapshot else g(tr, r)
        sw = state(tr, r)
        load(tr, r, s)
        got = locked(f, tr) if g is ref_snapshot else locked(f, tr, r)
        if g is ref_snapshot:
            want = got = None
        if got != want or state(tr, r) != sw:
            good = False
    for i in range(MAX):
        if s0[0][i] and s0[1][i] and s0[2][i]:
            if tr.moved[i]:
                stays += 1
            else:
                back += 1
        if s2[0][i]:
            if s2[5][MAX + i] == s2[13][i] + 1:
                kept += 1
            else:
                made += 1
    if good:
        ok += 1
print(json.dumps({"ok": ok, "cases": cases, "back": back, "stays": stays, "kept": kept,
                  "made": made}))
'''


@pytest.mark.parametrize("runtime", ["micropython", "cpython"])
def test_rest_loops_equal_their_plain_references(runtime, tmp_path):
    job = {"seed": 23, "cases": 300}
    r = run_script(TARGET, "rest_viper.py", runtime, job, tmp_path)
    assert r["ok"] == r["cases"], r
    # moved chips brought back and left moved, masks kept and made again: both branches asked
    assert min(r["back"], r["stays"], r["kept"], r["made"]) > 30, r


LOCATOR = r'''
import sys
import json
from array import array
from sensing import hall_locate as L
from tracking.shot import KIND_SMALL, KIND_BIG
from lcg import Rng

job = json.loads(sys.stdin.readline())
LOCK = sys.implementation.name == "micropython"
if LOCK:
    import micropython
M = 8
I32 = ("px", "py", "rx", "ry", "serr", "err", "fe", "werr", "settle_werr", "amp", "strength")
U8 = ("moved", "kept", "kind")


class Loc:
    def __init__(self):
        for k in I32:
            setattr(self, k, array('i', [0] * M))
        for k in U8:
            setattr(self, k, bytearray(M))
        # (finish_pass reads the settle's values from its module's scratch, this very array)
        self.settle_werr = L.hall_follow.SETTLE_WERR
        self.followed = 0


def ref_pass(self, n, settled):
    # (Locator._finish's loops after _reject, as they were at 5036042, but for the _win_err
    # and the reference strengths, which stay in Python)
    for i in range(n):
        self.px[i] = self.rx[i]
        self.py[i] = self.ry[i]
        if settled:
            self.moved[i] = 0
            self.serr[i] = self.err[i]
            self.fe[i] = 1
    if settled and self.followed == 2:
        for i in range(n):
            self.kept[i] = 1
    for i in range(n):
        if settled == 2:
            self.werr[i] = self.settle_werr[i]
        a = self.amp[i]
        self.kind[i] = KIND_SMALL if a > 0 else KIND_BIG
        self.strength[i] = a if a > 0 else -a


def state(o):
    return [list(getattr(o, k)) for k in I32 + U8]


rng = Rng(job["seed"])


def pick(*vs):
    return vs[rng.below(len(vs))]


loc = Loc()
ok = 0
cases = job["cases"]
for case in range(cases):
    n = rng.below(M + 1)
    settled = pick(False, True, 2, 0, 1)
    loc.followed = pick(0, 1, 2)
    for k in I32:
        a = getattr(loc, k)
        for i in range(M):
            a[i] = pick(rng.below(1 << 17) - (1 << 16), 0, 1, -1, (1 << 30) - 1, -(1 << 30),
                        rng.below(1 << 30) - (1 << 29))
    for k in U8:
        a = getattr(loc, k)
        for i in range(M):
            a[i] = pick(0, 1, 2, 255)
    s0 = state(loc)
    ref_pass(loc, n, settled)
    want = state(loc)
    for k, v in zip(I32 + U8, s0):
        a = getattr(loc, k)
        for i in range(M):
            a[i] = v[i]
    if LOCK:
        micropython.heap_lock()
    try:
        L.finish_pass(loc, n, settled)
    finally:
        if LOCK:
            micropython.heap_unlock()
    if state(loc) == want:
        ok += 1
print(json.dumps({"ok": ok, "cases": cases}))
'''


@pytest.mark.parametrize("runtime", ["micropython", "cpython"])
def test_finish_pass_equals_its_plain_reference(runtime, tmp_path):
    """hall_locate.finish_pass (Locator._finish's loops after _reject in viper) against the
    loops as they were: n 0 - 8, not settled, settled (True or 1) and 2 (werr from
    settle_werr), followed 0 - 2, strengths 0, +-1, +-2**30, every value in the arrays it leaves alone as well."""
    job = {"seed": 29, "cases": 200}
    r = run_script(LOCATOR, "finish_pass.py", runtime, job, tmp_path)
    assert r["ok"] == r["cases"], r
