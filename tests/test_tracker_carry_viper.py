"""The tracker's matching carried over in viper (tracking/tracker.py `_carry`: the check that every
tracked chip lies exactly at the fit it followed last, and each chip's `_follow`; issue 13: the
settle window's first frame with four chips, 1.3 ms of it in Python on the chip) does exactly what
the plain Python it replaced does, kept here as the reference (`_track`'s loop before, with the
tracker's own `_follow`, which its passes still call). Seeded cases: four slots seen or not,
present or not, each at the fit it followed (claimed_by) or off it by one, of another kind, out of
range, or two at one place; the locator's n equal to the chips found or not; positions anywhere
within +-2**14 (presence +-2**13: see TARGET; negative ones: a 64-bit port loads an array('i') word without its sign) and the
fits off the snapshot by 0, around the slide's 10 mm, around either move tolerance (+ wander),
far; strengths around MOVE_STRENGTH and around FADED_Q / 8 of the rest strength (the faded, weak
and moved rules' edges); chips moved before (presence: `_graze`), move counts, frame numbers and
clocks up to their limits; both kinds of locator (graded: hall; presence). Every array and
count the check, the follows and `_graze` read or write (ARRAYS, INTS) is compared after every
case, with the result. Under the MicroPython unix port with the heap locked
around the call, CPython, and the emulated RP2040 (its 32-bit words; skipped with the reason
without one).
"""
import os

import pytest

from boardsim.rp2040 import images
from conftest import run_script

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())

TARGET = r'''
import sys
import json
from array import array
from tracking import tracker as T
from tables import board_table as B
from lcg import Rng

job = json.loads(sys.stdin.readline())
LOCK = sys.implementation.name == "micropython"
if LOCK:
    import micropython


class Loc:
    def __init__(self, graded):
        self.GRADED = graded
        if not graded:
            self.MOVE_TOL = 10
        self.n = 0
        self.hand = 0
        self.kind = bytearray(8)
        self.x = array('i', (0,) * 8)
        self.y = array('i', (0,) * 8)
        self.strength = array('i', (0,) * 8)
        self.wander = array('i', (0,) * 8)
        self.unc = array('i', (0,) * 8)


class Fast:
    total = 0


def carry_ref(tr, loc, n):
    # (tracker._track's carried matching before it was _carry)
    seen = tr.seen
    present = tr.present
    cb = tr.claimed_by
    kind = tr.kind
    tx = tr.tx
    ty = tr.ty
    lk = loc.kind
    lx = loc.x
    ly = loc.y
    c = 0
    for i in range(T.MAX):
        if not seen[i]:
            if present[i]:
                c = -1
                break
            continue
        j = cb[i] - 1
        xi = tx[i]
        yi = ty[i]
        ki = kind[i]
        if j < 0 or j >= n or lx[j] != xi or ly[j] != yi or lk[j] != ki:
            c = -1
            break
        for q in range(i):
            if seen[q] and tx[q] == xi and ty[q] == yi and kind[q] == ki:
                c = -1
        if c < 0:
            break
        c += 1
    if c != n:
        return c
    claimed = tr.claimed
    for j in range(8):
        claimed[j] = 0
    tidy = 1
    for i in range(T.MAX):
        if seen[i]:
            tr._follow(i, cb[i] - 1)
            if tr.weak[i]:
                tidy = 0
        else:
            cb[i] = 0
    claimed[8] = tidy
    return c


ARRAYS = ("present", "kind", "x", "y", "tx", "ty", "tunc", "seen", "moved", "ts", "faded", "weak",
          "weak_t", "rs", "move_order", "mf", "mdx", "mdy", "tw", "grazed", "claimed", "claimed_by")
INTS = ("n_moved", "afr", "now")


def state(tr):
    return [list(getattr(tr, k)) for k in ARRAYS] + [getattr(tr, k) for k in INTS]


# job "ref": 0 (the chip's half): the viper _carry only, on one tracker, no plain reference;
# "outs": 1 lists each case's answer and a digest of the state it left (tests/test_rp2040.py
# chip_half_matches: the plain check was most of the chip's work, issue 15)
REF = job.get("ref", 1)
SIDES = 2 if REF else 1
OUTS = [] if job.get("outs") else None


def digest(vals):
    # every array and count, in order, to one number below 2**25 (small ints on the chip too)
    h = len(vals)
    for v in vals:
        for x in (v if isinstance(v, list) else (v,)):
            h = (h * 31 + x % 65521) % 33554393
    return h


rng = Rng(job["seed"])
LIM = 1 << 14               # (per case below)
MS = T.Tracker.MOVE_STRENGTH


def pick(*vs):
    return vs[rng.below(len(vs))]


def coord():
    return pick(rng.below(2 * LIM + 1) - LIM, rng.below(10001) - 5000, LIM - rng.below(3),
                rng.below(3) - LIM)


def clamp(v):
    return LIM if v > LIM else (-LIM if v < -LIM else v)


pairs = []
for graded in (1, 0):
    locs = [Loc(graded), Loc(graded)]
    pairs.append((locs, [T.Tracker(locs[0], Fast()), T.Tracker(locs[1], Fast())]))
cases = job["cases"]
got = 0                     # (a global made under the heap lock would grow the module's dict)
ok = 0
found = 0
refused = 0
moved_now = 0
weak_now = 0
faded_now = 0
for case in range(cases):
    locs, trs = pairs[case & 1]
    a = trs[0]
    # (presence: a moved chip's _graze, plain Python called from _carry under the heap lock,
    # squares its distances in small ints: below 2**30 on the chip within +-2**13)
    LIM = 1 << 14 if a.graded else 1 << 13
    tol = (a.move_tol, a.MOVE_TOL, a.OFF_SLID)[rng.below(3)]
    n = rng.below(9)
    seen = [1 if rng.below(6) else 0 for i in range(4)]
    present = [1 if seen[i] or rng.below(8) == 0 else 0 for i in range(4)]
    # the fits the slots followed: the seen ones' first (the locator's n chips, when n is their
    # number), each its own, mostly
    ns = sum(seen)
    order = list(range(8))
    for i in range(ns - 1, 0, -1):
        k = rng.below(i + 1)
        order[i], order[k] = order[k], order[i]
    k = 0
    js = [0] * 4
    for i in range(4):
        if seen[i]:
            js[i] = order[k]
            k += 1
    for i in range(4):
        if not seen[i]:
            js[i] = k
            k += 1
    vals = {}
    for name in ("kind", "x", "y", "strength", "wander", "unc"):
        vals[name] = [0] * 8
    snap = []
    for i in range(4):
        sx, sy = coord(), coord()
        w = pick(0, 5, 12, 150, rng.below(300))
        r = pick(0, rng.below(3) - 1, tol + w + rng.below(3) - 1, -(tol + w) + rng.below(3) - 1,
                 rng.below(2 * LIM) - LIM)
        ang = rng.below(3)
        fx = clamp(sx + (r if ang != 1 else 0))
        fy = clamp(sy + (r if ang != 0 else 0))
        if ang == 2:                # on the diagonal: the square's edge from both axes
            fx = clamp(sx + r * 7 // 10)
            fy = clamp(sy + r * 7 // 10)
        st = pick(MS + rng.below(5) - 2, rng.below(1 << 20), rng.below(MS))
        rs = pick(st * 8 // a.FADED_Q + rng.below(3) - 1, rng.below(1 << 20), MS * 2)
        j = js[i] if rng.below(16) else rng.below(8)
        vals["kind"][j] = 1 + rng.below(2)
        vals["x"][j] = fx
        vals["y"][j] = fy
        vals["strength"][j] = st
        vals["wander"][j] = w
        vals["unc"][j] = pick(0, 15, rng.below(1 << 20))
        snap.append((sx, sy, rs, j))
    for j in range(8):
        if not vals["kind"][j]:
            vals["kind"][j] = 1 + rng.below(2)
            vals["x"][j] = coord()
            vals["y"][j] = coord()
            vals["strength"][j] = rng.below(1 << 20)
            vals["wander"][j] = rng.below(300)
    if rng.below(3):                # n: the chips found (when the check holds), or not
        n = ns
    nm = rng.below(4)
    afr = pick(0, 1, 255, rng.below(256))
    now = pick(0, (1 << 30) - 1 - rng.below(4), rng.below(1 << 30))
    for k in range(SIDES):
        loc = locs[k]
        tr = trs[k]
        loc.n = n
        for name in vals:
            arr = getattr(loc, name)
            for j in range(8):
                arr[j] = vals[name][j]
    rnd = [[rng.below(1 << 16) for _ in range(24)] for i in range(4)]
    for k in range(SIDES):
        tr = trs[k]
        loc = locs[k]
        for i in range(4):
            sx, sy, rs, j = snap[i]
            q = rnd[i]
            tr.seen[i] = seen[i]
            tr.present[i] = present[i]
            tr.x[i] = sx
            tr.y[i] = sy
            tr.rs[i] = rs
            tr.claimed_by[i] = j + 1 if q[0] % 24 else (0, 9, n + 1)[q[1] % 3]
            tr.kind[i] = loc.kind[j]
            tr.tx[i] = loc.x[j]
            tr.ty[i] = loc.y[j]
            e = q[2] % 40
            if e == 0:
                tr.kind[i] = 3 - tr.kind[i]
            elif e == 1:
                tr.tx[i] += 1
            elif e == 2:
                tr.ty[i] -= 1
            tr.moved[i] = 1 if q[3] % 4 == 0 else 0
            tr.faded[i] = q[4] % 2
            tr.weak[i] = q[5] % 2
            tr.weak_t[i] = q[6]
            tr.ts[i] = q[7]
            tr.tunc[i] = q[8]
            tr.tw[i] = q[9]
            tr.move_order[i] = q[10] % 5
            tr.mf[i] = q[11] % 256
            tr.mdx[i] = q[12] - 32768
            tr.mdy[i] = q[13] - 32768
            tr.grazed[i] = q[14] % 2
        for j in range(9):
            tr.claimed[j] = (rnd[j & 3][15 + (j >> 2)]) % 2
        tr.n_moved = nm
        tr.afr = afr
        tr.now = now
    if REF and state(trs[0]) != state(trs[1]):
        raise SystemExit("the two trackers were not set alike")
    if LOCK:
        micropython.heap_lock()
    try:
        got = T._carry(trs[0], locs[0], n)
    finally:
        if LOCK:
            micropython.heap_unlock()
    if OUTS is not None:
        OUTS.append([got, digest(state(trs[0]))])
    if not REF:
        continue
    want = carry_ref(trs[1], locs[1], n)
    if got == want and state(trs[0]) == state(trs[1]):
        ok += 1
    if want == n:
        found += 1
        moved_now += trs[1].n_moved - nm
        weak_now += sum(trs[1].weak)
        faded_now += sum(trs[1].faded)
    else:
        refused += 1
if REF:
    out = {"ok": ok, "cases": cases, "found": found, "refused": refused,
           "moved": moved_now, "weak": weak_now, "faded": faded_now}
else:
    out = {"cases": cases}
if OUTS is not None:
    out["outs"] = OUTS
print(json.dumps(out))
'''


@pytest.mark.parametrize("runtime", ["micropython", "cpython"])
def test_the_carry_in_viper_equals_the_plain_check_and_follows(runtime, tmp_path):
    job = {"seed": 13, "cases": 2000}
    r = run_script(TARGET, "tracker_carry_viper.py", runtime, job, tmp_path)
    assert r["ok"] == r["cases"], r
    # both outcomes, and the follows' rules both ways (moves counted, weak and faded chips)
    assert 200 < r["found"] < 1800 and 200 < r["refused"] < 1800, r
    assert r["moved"] > 50 and r["weak"] > 50 and r["faded"] > 50, r


@pytest.mark.skipif(WHY is not None, reason=f"no emulated Pico here: {WHY}")
def test_the_carry_in_viper_on_the_chip(tmp_path):
    from tests.test_rp2040 import chip_half_with_lcg
    job = {"seed": 13, "cases": 100, "ref": 0, "outs": 1}
    # (the chip runs the viper _carry alone (job "ref": 0), each case's answer and the state it
    # left listed; CPython runs the whole script on the same draws, the plain check beside its
    # own run of _carry: until issue 15 the plain check and a second tracker ran on the chip too,
    # 173 M of its 193 M instructions)
    got, want = chip_half_with_lcg(TARGET, "tracker_carry_viper.py", job, tmp_path)
    assert len(got["outs"]) == job["cases"]
