"""faults._hole_cells() (the fault monitor's search for uncovered pads inside still chips, viper
on the chip: in Python it cost 1.2 ms a chip every frame at rest there, issue 13) against the
plain loops it replaced, on random chips, grids and usable flags, under both runtimes, with the
heap locked around each call. Chips anywhere, by the board's edges and off it, both radii, up to
4 of them, overlapping; grids from empty to full; the first 8 cells in the plain loops' order.
"""
import pytest

from conftest import run_script

TARGET = r'''
import sys
import json
from array import array
import micropython
from tables import board_table as BT
from sensing import faults as FA
from lcg import Rng

job = json.loads(sys.stdin.readline())
rng = Rng(job["seed"])
P = BT.PRES_PITCH
COLS = BT.PRES_COLS
ROWS = BT.PRES_ROWS
N = COLS * ROWS


def plain(n, kind, xs, ys, rs, rb, grid, usable, buf):
    # FaultMonitor._holes() as it was (faults.py before the viper search)
    nh = 0
    for i in range(n):
        x = xs[i]
        y = ys[i]
        r = (rs if kind[i] == 1 else rb) - P // 2
        c0 = (x - r - BT.PRES_X0) // P
        r0 = (y - r - BT.PRES_Y0) // P
        for rr in range(r0, r0 + 2 * r // P + 2):
            for cc in range(c0, c0 + 2 * r // P + 2):
                if rr < 0 or rr >= ROWS or cc < 0 or cc >= COLS:
                    continue
                g = rr * COLS + cc
                if grid[g] or not usable[g]:
                    continue
                dx = BT.PRES_X0 + cc * P - x
                dy = BT.PRES_Y0 + rr * P - y
                if dx * dx + dy * dy <= r * r and nh < 8:
                    buf[nh] = g
                    nh += 1
    return nh


kind = bytearray(8)
xs = array('i', bytes(32))
ys = array('i', bytes(32))
grid = bytearray(N)
usable = bytearray(N)
got = array('h', bytes(16))
want = array('h', bytes(16))
bad = []
found = 0
full = 0
for case in range(job["cases"]):
    dens = rng.below(101)               # % of pads read covered
    # grid[g] = 0 if rng.below(100) >= dens else 1 + rng.below(4), then
    # usable[g] = 0 if rng.below(10) == 0 else 1, g < N (test_the_grids_are_drawn_as_below_draws_them)
    rng.cells(grid, usable, N, dens)
    n = rng.below(5)
    for i in range(n):
        kind[i] = 1 + rng.below(2)
        # anywhere on the board and up to 2 pitches beyond its edges
        xs[i] = BT.PRES_X0 - 2 * P + rng.below((COLS + 4) * P)
        ys[i] = BT.PRES_Y0 - 2 * P + rng.below((ROWS + 4) * P)
    rs = 80 + rng.below(200)
    rb = rs + rng.below(300)
    micropython.heap_lock()
    try:
        k = FA._hole_cells(n, kind, xs, ys, rs, rb, grid, usable, got)
    finally:
        micropython.heap_unlock()
    m = plain(n, kind, xs, ys, rs, rb, grid, usable, want)
    if k != m or [got[q] for q in range(k)] != [want[q] for q in range(m)]:
        bad.append([case, k, m, [got[q] for q in range(k)], [want[q] for q in range(m)]])
        if job.get("first_bad"):
            break                       # (the comparison's own test: one difference is enough)
    found += m
    if m == 8:
        full += 1
print(json.dumps({"bad": bad[:5], "n_bad": len(bad), "found": found, "full": full}))
'''


def test_the_hole_search_matches_the_plain_loops(runtime, tmp_path):
    out = run_script(TARGET, "fault_holes", runtime, {"seed": 5, "cases": 300}, tmp_path)
    assert out["n_bad"] == 0, out["bad"]
    # the cases said something: holes found, and the cut at 8 reached
    assert out["found"] > 300 and out["full"] > 10, out


def test_the_hole_comparison_can_fail(tmp_path):
    broken = TARGET.replace("if dx * dx + dy * dy <= r * r and nh < 8:",
                            "if dx * dx + dy * dy < r * r and nh < 8:")
    broken = broken.replace("r = (rs if kind[i] == 1 else rb) - P // 2",
                            "r = (rs if kind[i] == 1 else rb) - P // 2 + 1")
    out = run_script(broken, "fault_holes_broken", "cpython", {"seed": 5, "cases": 300, "first_bad": True},
                     tmp_path)
    assert out["n_bad"] > 0


DRAWS = r'''
import sys
import json
from lcg import Rng

job = json.loads(sys.stdin.readline())
n = job["n"]
same = []
for dens in (0, 1, 37, 99, 100):
    a = Rng(job["seed"] + dens)
    b = Rng(job["seed"] + dens)
    g1 = bytearray(n)
    u1 = bytearray(n)
    g2 = bytearray(n)
    u2 = bytearray(n)
    for g in range(n):
        g1[g] = 0 if a.below(100) >= dens else 1 + a.below(4)
        u1[g] = 0 if a.below(10) == 0 else 1
    b.cells(g2, u2, n, dens)
    # (the grids, and the generator left where the plain draws leave it)
    same.append(g1 == g2 and u1 == u2 and a.next() == b.next())
print(json.dumps({"same": same, "covered": sum(1 for v in g1 if v)}))
'''


def test_the_grids_are_drawn_as_below_draws_them(runtime, tmp_path):
    # the search's grids come from lcg.Rng.cells(), the below() calls above inlined (the draws
    # were nearly all of the comparison's time): the same numbers under either runtime
    out = run_script(DRAWS, "fault_holes_draws", runtime, {"seed": 5, "n": 4608}, tmp_path)
    assert out["same"] == [True] * 5 and out["covered"] > 4000, out
