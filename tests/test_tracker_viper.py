"""The tracker's two loops in viper (tracking/tracker.py `_same_chips`, `_nearest_kept`; issue 13:
the settle window's first frame with four chips) give exactly what the plain Python they replaced
gives, kept here as the reference: seeded frames of 0 - 8 chips anywhere on and around the board
(negative coordinates: a 64-bit port loads an array('i') element without its sign), kinds,
wanders and claims mixed, the frame before equal, or one value of one chip changed. Under the
MicroPython unix port with the heap locked, CPython, and the emulated RP2040 (its 32-bit words;
skipped with the reason without one). The tracker around them: tests/test_track_same.py,
tests/test_finish_masks.py."""
import os

import pytest

from boardsim.rp2040 import images
from conftest import run_script

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())

TARGET = r'''
import sys
import json
import micropython
from array import array
from tracking import tracker as T
from lcg import Rng

job = json.loads(sys.stdin.readline())


def same_ref(n, lk, lx, ly, ls, lw, pk, px, py, ps, pw):
    for j in range(n):
        if lx[j] != px[j] or ly[j] != py[j] or lk[j] != pk[j] or ls[j] != ps[j] or lw[j] != pw[j]:
            return 0
    return 1


def nearest_ref(n, ki, xi, yi, tol, lk, lx, ly, lw, claimed):
    best = -1
    bd = 0
    for j in range(n):
        if claimed[j] or lk[j] != ki:
            continue
        t = tol + lw[j]
        dx = lx[j] - xi
        dy = ly[j] - yi
        d = dx * dx + dy * dy
        if d <= t * t and (best < 0 or d < bd):
            bd = d
            best = j
    return best


rng = Rng(job["seed"])
lk = bytearray(8)
pk = bytearray(8)
claimed = bytearray(9)
lx, ly, ls, lw, px, py, ps, pw = [array('i', (0,) * 8) for _ in range(8)]
cases = job["cases"]
got_same = [0] * cases
got_near = [0] * cases
args = []
for c in range(cases):
    n = rng.below(9)
    spread = (60, 400, 6000)[rng.below(3)]           # chips bunched, near, anywhere
    cx = rng.below(9000) - 4500
    cy = rng.below(12000) - 6000
    for j in range(8):
        lk[j] = 1 + rng.below(2)
        lx[j] = cx + rng.below(2 * spread + 1) - spread
        ly[j] = cy + rng.below(2 * spread + 1) - spread
        ls[j] = rng.below(40000) - 2000
        lw[j] = (0, 5, 12, 150, rng.below(300))[rng.below(5)]
        claimed[j] = 1 if rng.below(4) == 0 else 0
        pk[j] = lk[j]
        px[j] = lx[j]
        py[j] = ly[j]
        ps[j] = ls[j]
        pw[j] = lw[j]
    if n and rng.below(2):
        j = rng.below(n)
        k = rng.below(5)
        d = 1 if rng.below(2) else -1
        if k == 0:
            pk[j] = 3 - pk[j]
        elif k == 1:
            px[j] += d
        elif k == 2:
            py[j] += d
        elif k == 3:
            ps[j] += d
        else:
            pw[j] += d
    ki = 1 + rng.below(2)
    xi = cx + rng.below(2 * spread + 1) - spread
    yi = cy + rng.below(2 * spread + 1) - spread
    tol = (12, 20, 900)[rng.below(3)]
    micropython.heap_lock()
    try:
        s = T._same_chips(n, lk, lx, ly, ls, lw, pk, px, py, ps, pw)
        b = T._nearest_kept(n, ki, xi, yi, tol, lk, lx, ly, lw, claimed)
    finally:
        micropython.heap_unlock()
    e = same_ref(n, lk, lx, ly, ls, lw, pk, px, py, ps, pw)
    f = nearest_ref(n, ki, xi, yi, tol, lk, lx, ly, lw, claimed)
    got_same[c] = 1 if s == e else 0
    got_near[c] = 1 if b == f else 0
    args.append([s, b])
print(json.dumps({"same_ok": sum(got_same), "near_ok": sum(got_near), "cases": cases,
                  "found": sum(1 for a in args if a[1] >= 0), "equal": sum(1 for a in args if a[0]),
                  "results": args}))
'''


@pytest.mark.parametrize("runtime", ["micropython", "cpython"])
def test_the_tracker_viper_loops_equal_the_plain_ones(runtime, tmp_path):
    job = {"seed": 11, "cases": 3000}
    r = run_script(TARGET, "tracker_viper.py", runtime, job, tmp_path)
    assert r["same_ok"] == r["cases"] and r["near_ok"] == r["cases"], r
    # both outcomes of each exercised
    assert 300 < r["found"] < 2700 and 300 < r["equal"] < 2700, r


@pytest.mark.skipif(WHY is not None, reason=f"no emulated Pico here: {WHY}")
def test_the_tracker_viper_loops_on_the_chip(tmp_path):
    from boardsim.rp2040 import probe
    job = {"seed": 11, "cases": 400}
    r = probe.run_module(TARGET, job=job, files={"lcg.mpy": probe.support_mpy("lcg")},
                         await_ms=300000, wait_ms=100, settle_ms=0)
    got = r.events[-1]
    assert got["same_ok"] == job["cases"] and got["near_ok"] == job["cases"], got
    assert got == run_script(TARGET, "tracker_viper.py", "cpython", job, tmp_path)
