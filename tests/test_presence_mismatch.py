"""presence_locate.mismatch() (PresenceLocator._mismatch's pad loop, @micropython.viper since
issue 13: 28.6 ms a call in Python on the chip while chips move) against the plain loop it
replaced, under both runtimes.

The reference below is _mismatch as it was in plain Python: over the window's pads that are
usable and not another group's, the most any of the k chips gives a pad (how many of the
PRES_LEVELS circles around it hold the chip's centre) against what it reads (0 off the group),
plus OVERLAP for each pair of chips closer than touching by OVERLAP_TOL. Seeded random windows
(300, at the board's edges too), in each four sets of 1 - 4 chips of both sizes (as built and
as calibrated), spread from packed to well off the window, labels of this group, other groups
and none (pads read but in no group: specks), pads without a reading: the viper function must
give the same pad count as the plain loop, and the locator's _mismatch() the same total, with
the heap locked around every call under MicroPython; and the two runtimes must agree. Under
CPython presence_locate.mismatch is its CPython twin (boardsim/target/viper_twins.py); the
firmware's own body (the twin's `firmware`) is run on every call beside it and must give the
same sum. The
coordinates straddle the board's origin (negative values: viper on a 64-bit port reads
array('i') elements without their sign).
"""
import copy
import json
from pathlib import Path

import pytest

from conftest import run_script

ROOT = Path(__file__).resolve().parents[1]

TARGET = r'''
import sys
import json
from array import array
import micropython
from tables import board_table as BT
from sensing import presence_locate as LP
from lcg import Rng

job = json.loads(sys.stdin.readline())
X0 = BT.PRES_X0
Y0 = BT.PRES_Y0
P = BT.PRES_PITCH
COLS = BT.PRES_COLS
ROWS = BT.PRES_ROWS
N = COLS * ROWS
LEV = BT.PRES_LEV
L = BT.PRES_LEVELS
RIM = LP.PresenceLocator.RIM
TOL = LP.PresenceLocator.OVERLAP_TOL
OVL = LP.PresenceLocator.OVERLAP


def ref_pads(k, hx, hy, hr, usable, label, grid, c0w, c1w, r0w, r1w, cur):
    """PresenceLocator._mismatch's pad loop as it was in plain Python."""
    m = 0
    for rr in range(r0w, r1w + 1):
        py = Y0 + rr * P
        for cc in range(c0w, c1w + 1):
            g = rr * COLS + cc
            if not usable[g]:
                continue
            lb = label[g]
            if lb and lb != cur:
                continue
            px = X0 + cc * P
            pred = 0
            for t in range(k):
                ax = px - hx[t]
                ay = py - hy[t]
                d2 = ax * ax + ay * ay
                q = 0
                while q < L:
                    lim = hr[t] + LEV[q]
                    if lim < 0 or d2 > lim * lim:
                        break
                    q += 1
                if q > pred:
                    pred = q
            e = pred - (grid[g] if lb == cur else 0)
            m += e if e >= 0 else -e
    return m


def ref_pairs(k, hx, hy, hr):
    """... and its pair-overlap part (still Python in the locator)."""
    m = 0
    for i in range(k):
        for t in range(i + 1, k):
            lim = hr[i] + hr[t] + 2 * RIM - TOL
            ax = hx[t] - hx[i]
            ay = hy[t] - hy[i]
            if ax * ax + ay * ay < lim * lim:
                m += OVL
    return m


rng = Rng(job["seed"])
loc = LP.PresenceLocator()
usable = loc.usable
label = loc.label
grid = bytearray(N)
loc.grid = grid
hx = loc.hx
hy = loc.hy
hr = loc.hr
win = loc.win
radii = (BT.R_SMALL - RIM, BT.R_BIG - RIM, 70, 80, 110, 140, 150, 200)
bad = []
h = 0
calls = 0
nonzero = 0
ks = [0, 0, 0, 0, 0]
got = 0         # (a global made under the heap lock would grow the module's dict)
# under CPython LP.mismatch is the firmware body's twin (boardsim/target/viper_twins.py, the
# stand-in micropython.viper; not with ZENN_PLAIN_VIPER=1): the body itself is compared too
FIRMWARE = getattr(LP.mismatch, "firmware", None)
twins = 0
fw = 0
total = 0
zero = bytes(N)
for trial in range(job["trials"]):
    rng.mask(usable, N, 10)             # (usable[g] = 0 if rng.below(10) == 0 else 1, g < N)
    w = rng.below(14)
    c0 = rng.below(COLS - w) if rng.below(4) else (0 if rng.below(2) else COLS - 1 - w)
    q0 = rng.below(ROWS - w) if rng.below(4) else (0 if rng.below(2) else ROWS - 1 - w)
    c1 = c0 + w
    q1 = q0 + rng.below(14)
    if q1 >= ROWS:
        q1 = ROWS - 1
    cur = 1 + rng.below(3)
    label[:] = zero
    grid[:] = zero
    for rr in range(q0, q1 + 1):
        for cc in range(c0, c1 + 1):
            v = rng.below(8)
            label[rr * COLS + cc] = 0 if v < 2 else (cur if v < 6 else 1 + rng.below(4))
            if label[rr * COLS + cc] or rng.below(4) == 0:     # (a speck's pad: unlabelled)
                grid[rr * COLS + cc] = 1 + rng.below(L)
    loc.c0 = c0
    loc.c1 = c1
    loc.r0 = q0
    loc.r1 = q1
    loc.cur = cur
    win[0] = c0
    win[1] = c1
    win[2] = q0
    win[3] = q1
    win[4] = cur
    win[5] = 2 * RIM - TOL
    win[6] = OVL
    cx = X0 + (c0 + c1) * P // 2
    cy = Y0 + (q0 + q1) * P // 2
    for q in range(4):      # chip sets in this window: packed to partly off it
        k = 1 + rng.below(4)
        ks[k] += 1
        spread = 20 + rng.below(100 + 60 * w)
        for t in range(4):
            hx[t] = cx + rng.below(2 * spread + 1) - spread
            hy[t] = cy + rng.below(2 * spread + 1) - spread
            hr[t] = radii[rng.below(len(radii))]
        want = ref_pads(k, hx, hy, hr, usable, label, grid, c0, c1, q0, q1, cur)
        want_all = want + ref_pairs(k, hx, hy, hr)
        loc.hk = k
        if sys.implementation.name == "micropython":
            micropython.heap_lock()
        win[8 + L] = k
        got = LP.mismatch(hx, hy, hr, usable, label, win, grid)
        total = loc._mismatch()
        if sys.implementation.name == "micropython":
            micropython.heap_unlock()
        if FIRMWARE is not None:
            fw = FIRMWARE(hx, hy, hr, usable, label, win, grid)
            if fw != got and len(bad) < 5:
                bad.append(["firmware", trial, k, list(hx), list(hy), list(hr), list(win), fw, got])
            twins += 1
        calls += 1
        if want:
            nonzero += 1
        h = (h * 31 + got + 7 * total + 1000) & 0xFFFFFF
        if (got != want or total != want_all) and len(bad) < 5:
            bad.append([trial, k, list(hx), list(hy), list(hr), list(win), want, got,
                        want_all, total])
print(json.dumps({"bad": bad, "hash": h, "calls": calls, "nonzero": nonzero, "ks": ks,
                  "twins": twins}))
'''


# A run kept by runtime and job: the script is deterministic, and test [micropython] compares
# its hash with the CPython run that test [cpython] judges, which was made twice (one xdist
# group, so that both share it on one worker under `make test`)
_RUNS = {}


def run(runtime, job, tmp_path):
    key = (runtime, json.dumps(job, sort_keys=True))
    if key not in _RUNS:
        _RUNS[key] = run_script(TARGET, "presence_mismatch_target.py", runtime, job, tmp_path, timeout=300)
    return copy.deepcopy(_RUNS[key])


@pytest.mark.xdist_group("presence_mismatch_runs")
def test_mismatch_matches_the_plain_loop(runtime, tmp_path):
    """The CPython run is made once in a process, for both runtimes' tests (run())."""
    job = {"seed": 13, "trials": 300}
    r = run(runtime, job, tmp_path)
    assert r["bad"] == [], r["bad"]
    assert r["calls"] == 1200
    assert r["nonzero"] > r["calls"] // 2       # the windows hold pads the chips get wrong
    assert min(r["ks"][1:]) > 200               # every k from 1 to 4 is tried
    # under CPython the firmware's twin and its own body, each held to the reference (and
    # the twin to the body, call for call); the unix port runs the body, in viper
    assert r["twins"] == (1200 if runtime == "cpython" else 0), r["twins"]
    if runtime == "micropython":
        assert run("cpython", job, tmp_path)["hash"] == r["hash"]
