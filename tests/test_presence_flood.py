"""presence_locate.flood() (PresenceLocator._groups' flood of the covered pads into groups,
@micropython.viper since issue 13: in Python a hand's pads took 45 - 50 ms a frame on the chip)
against the Python loop it replaced, under both runtimes.

Seeded random frames: blobs of covered pads at random levels (chips, rows of them, hands up to
past MAX_PLAUSIBLE pads, specks, pads along the board's edges and corners), pads without a
reading, the labels of the frame before left to be cleared. The seeds are covered()'s (the
covered usable pads in scan order). flood() must give the same labels over the whole board,
cells, group starts, signatures and summed columns and rows as the reference, with the heap
locked under MicroPython; the two runtimes must agree.
"""
import pytest

from conftest import run_script_once

TARGET = r'''
import sys
import json
from array import array
import micropython
from tables import board_table as BT
from sensing import presence_locate as LP
from lcg import Rng

job = json.loads(sys.stdin.readline())
# "ref": 0 (the emulated chip's half): the reference flood is not run there, flood()'s answers
# are listed ("outs": the counts, the queue, the groups' starts, signatures and sums, the label
# grid by its SHA-256) for the host to compare with the reference's run under CPython on the
# same draws (tests/test_rp2040.py, chip_half_matches); "outs": 1 lists them in any run
REF = job.get("ref", 1)
OUTS = [] if job.get("outs") else None
if OUTS is not None:
    import hashlib
COLS = BT.PRES_COLS
ROWS = BT.PRES_ROWS
N = COLS * ROWS
L = BT.PRES_LEVELS


def ref_flood(grid, usable, label, cells, seeds, ns, g0, sig, sxs, sys_, n_old):
    """_groups' flood as it was in Python (cells[] the queue), the labels of n_old cells
    cleared first. Returns (nc, ng)."""
    for k in range(n_old):
        label[cells[k]] = 0
    nc = 0
    ng = 0
    for s in range(ns):
        g = seeds[s]
        if label[g]:
            continue
        if ng >= LP.MAX_COMP or nc >= LP.MAX_CELLS:
            break
        g0[ng] = nc
        ng += 1
        label[g] = ng
        cells[nc] = g
        nc += 1
        q = nc - 1
        sg = 0
        sx = 0
        sy = 0
        while q < nc and nc < LP.MAX_PLAUSIBLE:
            h = cells[q]
            q += 1
            sg = (sg * 31 + h * 5 + grid[h]) & 0xFFFFFF
            hr = h // COLS
            hc = h - hr * COLS
            sx += hc
            sy += hr
            for dr in (-1, 0, 1):
                rr = hr + dr
                if rr < 0 or rr >= ROWS:
                    continue
                for dc in (-1, 0, 1):
                    cc = hc + dc
                    if cc < 0 or cc >= COLS:
                        continue
                    e = rr * COLS + cc
                    if grid[e] and usable[e] and not label[e] and nc < LP.MAX_CELLS:
                        label[e] = ng
                        cells[nc] = e
                        nc += 1
        sig[ng - 1] = sg
        sxs[ng - 1] = sx
        sys_[ng - 1] = sy
        if nc >= LP.MAX_PLAUSIBLE:
            break
    g0[ng] = nc
    return nc, ng


rng = Rng(job["seed"])
usable = bytearray(N)        # (no locator: the chip's heap holds the firmware's too)
grid = bytearray(N)
ZEROS = bytes(N)
rows_on = bytearray(b"\x01" * ROWS)
seeds = array("H", bytes(2 * LP.MAX_PLAUSIBLE))
bad = []
h = 0
ngs = []
full = 0
n_old = 0
got = 0             # (globals made before the heap is locked)
most_cells = 0
# (the arrays of both sides, made before the heap is locked)
A = [bytearray(N), array("h", bytes(2 * LP.MAX_CELLS)), array("h", bytes(2 * (LP.MAX_COMP + 1))),
     array("i", bytes(4 * LP.MAX_COMP)), array("i", bytes(4 * LP.MAX_COMP)),
     array("i", bytes(4 * LP.MAX_COMP))]
B = [bytearray(N), array("h", bytes(2 * LP.MAX_CELLS)), array("h", bytes(2 * (LP.MAX_COMP + 1))),
     array("i", bytes(4 * LP.MAX_COMP)), array("i", bytes(4 * LP.MAX_COMP)),
     array("i", bytes(4 * LP.MAX_COMP))]
for g in range(N):
    usable[g] = (BT.PRES_PRESENT[g >> 3] >> (g & 7)) & 1
for trial in range(job["trials"]):
    grid[:] = ZEROS
    # (a usable pad made unusable where rng.below(60) == 0, an unusable present one usable
    # again where rng.below(3) == 0: the same draws, a pad at a time in the script had cost the
    # chip most of a trial's time, issue 15)
    rng.churn(usable, N, 60, 3, BT.PRES_PRESENT)
    blobs = rng.below(8)
    for b in range(blobs):
        r = 1 + rng.below(4) if rng.below(6) else 6 + rng.below(4)     # chips, a hand
        cx = rng.below(COLS)
        cy = rng.below(ROWS)
        for rr in range(cy - r, cy + r + 1):
            for cc in range(cx - r, cx + r + 1):
                if 0 <= rr < ROWS and 0 <= cc < COLS and (rr - cy) ** 2 + (cc - cx) ** 2 <= r * r:
                    if rng.below(8):
                        grid[rr * COLS + cc] = 1 + rng.below(L)
    for q in range(rng.below(10)):                             # specks
        grid[rng.below(N)] = 1 + rng.below(L)
    ns = LP.covered(grid, usable, rows_on, seeds, LP.MAX_PLAUSIBLE)
    if ns >= LP.MAX_PLAUSIBLE:
        full += 1
        continue            # (not flooded: _groups takes the seeds for a hand)
    if REF:
        want = ref_flood(grid, usable, A[0], A[1], seeds, ns, A[2], A[3], A[4], A[5], n_old)
    if sys.implementation.name == "micropython":
        micropython.heap_lock()
    got = LP.flood(grid, usable, B[0], B[1], seeds, B[2], B[3], B[4], B[5], n_old | (ns << 16))
    if sys.implementation.name == "micropython":
        micropython.heap_unlock()
    nc = got & 0xFFFF
    got = (nc, got >> 16)
    ng = want[1] if REF else got[1]
    ngs.append(ng)
    h = (h * 31 + nc * 7 + ng + sum(B[3][:ng]) + sum(B[4][:ng]) + 3 * sum(B[5][:ng])) & 0xFFFFFF
    if OUTS is not None:
        OUTS.append([got[0], got[1], hashlib.sha256(bytes(B[0])).digest().hex(), list(B[1][:nc]),
                     list(B[2][:ng + 1]), list(B[3][:ng]), list(B[4][:ng]), list(B[5][:ng])])
    if REF:
        same = (got == want and A[0] == B[0] and list(A[1][:nc]) == list(B[1][:nc])
                and list(A[2][:ng + 1]) == list(B[2][:ng + 1]) and list(A[3][:ng]) == list(B[3][:ng])
                and list(A[4][:ng]) == list(B[4][:ng]) and list(A[5][:ng]) == list(B[5][:ng]))
        if not same and len(bad) < 5:
            bad.append([trial, want, got])
    n_old = nc          # the next frame clears these labels (both sides hold the same)
    if nc > most_cells:
        most_cells = nc
out = {"hash": h, "frames": len(ngs), "most_groups": max(ngs), "most_cells": most_cells,
       "empty": ngs.count(0), "full": full, "capped": sum(1 for n in ngs if n >= LP.MAX_COMP)}
if REF:
    out["bad"] = bad
if OUTS is not None:
    out["outs"] = OUTS
print(json.dumps(out))
'''


def run(runtime, job, tmp_path):
    return run_script_once(TARGET, "presence_flood_target.py", runtime, job, tmp_path, timeout=600)


# (both runtimes' tests one xdist group: [micropython] compares its run with [cpython]'s, made once)
@pytest.mark.xdist_group("presence_flood_runs")
def test_flood_matches_the_python_loop(runtime, tmp_path):
    job = {"seed": 7, "trials": 150}
    r = run(runtime, job, tmp_path)
    assert r["bad"] == [], r["bad"]
    assert r["frames"] > 90
    assert r["most_groups"] >= 8 and r["empty"] >= 1 and r["full"] >= 1
    assert r["most_cells"] > 150                    # a hand's
    if runtime == "micropython":
        assert run("cpython", job, tmp_path)["hash"] == r["hash"]
