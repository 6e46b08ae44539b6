"""The hall locator's work on a frame that no chips give (issue 13; sensing/hall_locate.py, CROWD).

On the emulated RP2040 with every hall mux frozen mid-scale (`bench.rp2040_profile --faults
frozen --trace`), one frame took 305 ms: the fault monitor had left out 44 muxes, and the pads
of the last two, 30 of them, all at one reading, were fewer than MAX_PLAUSIBLE (48) and so
fitted as 8 chips (24 joint fits), chips that were not there. The same on the desktop: two muxes
frozen mid-scale, 32 pads in 7 clusters, fitted as 8 chips in 40 joint fits. A frame with more
candidates than the board's 4 chips lift (CROWD, 16) is now read only if its candidates peak at
MAX_FOUND places at most and at most MAX_FOUND of them read exactly what a neighbour reads (a
field is never that flat): else it is not fitted (unread), as a frame of 48.

The real firmware on the simulated table under CPython (deterministic), the locator's joint
fits counted per find(): no fit and no chip made up while the muxes are frozen, the frames
counted unread, the fault monitor names both muxes dead and the frames read again. The control:
the same run with the rule switched off makes the fits and the chips. No wall-clock time is
asserted."""
import pytest

from conftest import run_script

TARGET = r'''
import sys
import json
import runner as R
from sensing import hall_locate as HL
from driver import EventLines

job = json.loads(sys.stdin.readline())
if job["off"]:
    HL.CROWD = 10000            # the rule switched off (the control)
r = R.Runner()
out = EventLines()
r.out = out
r.op({"op": "boot"})
loc = r.sb.loc
fits = [0]
f_fit = loc._fit_group


def counted_fit(*a):
    fits[0] += 1
    return f_fit(*a)


loc._fit_group = counted_fit
rows = []
f_find = loc.find


def traced_find(grid):
    fits[0] = 0
    n = f_find(grid)
    rows.append([fits[0], n, loc.unread])
    return n


loc.find = traced_find
r.run_ms(1500)
k0 = len(rows)
w = r.world
for m in job["muxes"]:
    for p in range(16 * m, min(16 * m + 16, w.hall.n)):
        w.hall.set_fault(p, 30000)
r.run_ms(job["ms"])
after = rows[k0:]
print(json.dumps({"healthy": rows[:k0], "after": after,
                  "faults": [[e["code"], e.get("mux")] for e in out.lines if e.get("ev") == "fault"],
                  "boots": sum(1 for e in out.lines if e.get("ev") == "boot")}))
'''

MUXES = [5, 17]


def run(tmp_path, off):
    return run_script(TARGET, "locator_bound_target.py", "cpython",
                      {"muxes": MUXES, "ms": 4000, "off": off}, tmp_path, timeout=900)


def test_pads_frozen_mid_scale_are_not_fitted_as_chips(tmp_path):
    r = run(tmp_path, off=False)
    after = r["after"]
    assert len(after) > 40
    assert max(f for f, n, u in after) == 0, after[:5]          # no joint fit at all
    assert max(n for f, n, u in after) == 0                     # no chip made up
    assert max(u for f, n, u in after) >= 5                     # the frames counted unread ...
    assert after[-1][2] == 0                                    # ... until the muxes were left out
    assert sorted(r["faults"]) == [["mux_dead", m] for m in MUXES]
    assert r["boots"] == 1


def test_the_count_can_fail(tmp_path):
    r = run(tmp_path, off=True)
    assert max(f for f, n, u in r["after"]) > 20
    assert max(n for f, n, u in r["after"]) == 8
