"""The hall pads read as the RP2040's 12-bit ADC gives them (hall_model.read: read_u16 of a 12-bit
conversion, the noise before it), as on the emulated chip: a pad whose noise lies within one LSB
of 12 bits reads one value again and again, which the fault monitor must not take for a frozen
sensor (on the emulated Pico, with the loop run flat out, it flagged such pads pad_stuck within
seconds; issue 13). One that stays frozen while a chip comes and goes beside it is found.
"""
import os
import sys

from runtimes import run_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


QUIET = r'''
import sys
import json
import runner as R
import world_table as T
from driver import EventLines

job = json.loads(sys.stdin.readline())


r = R.Runner()
out = EventLines()
r.out = out
r.op({"op": "boot"})
w = r.world
w.hall.noise_lsb = job["noise_lsb"]
if job.get("frozen"):
    p = job["frozen"]
    w.hall.set_fault(p, w.hall.base[p])     # frozen at what it reads with nothing on it
# per grid cell, the longest run of frames with one and the same reading
grid = r.sb.scan.grid
n = len(grid)
last = [0] * n
run = [0] * n
longest = 0
frame = r.sb.scan.frame
for o in job["ops"]:
    if o["op"] == "frames":
        for _ in range(o["n"]):
            while r.sb.scan.frame == frame:
                r.run_ms(1)
            frame = r.sb.scan.frame
            for g in range(n):
                if grid[g] == last[g]:
                    run[g] += 1
                    if run[g] > longest:
                        longest = run[g]
                else:
                    run[g] = 0
                    last[g] = grid[g]
    else:
        r.op(o)
print(json.dumps({"faults": [e for e in out.lines if e.get("ev") == "fault"], "longest": longest}))
'''


def quiet_run(job, tmp_path):
    # under CPython (the firmware's event lines are kept by a writer that allocates)
    return run_target(QUIET, "cpython", job, name="quiet_target.py", tmp_path=tmp_path, timeout=600,
                      cwd=str(tmp_path))[0]


def test_quiet_pads_on_a_12_bit_adc_are_not_taken_for_frozen(tmp_path):
    # noise of 3 LSB of 16 bits: 0.2 LSB of the ADC's 12, so most pads read one value for good
    res = quiet_run({"noise_lsb": 3, "ops": [{"op": "frames", "n": 120}]}, tmp_path)
    assert res["longest"] >= 100, res["longest"]     # what the old check took for frozen (32)
    assert [f for f in res["faults"] if f["code"] == "pad_stuck"] == [], res["faults"]


def _pad(col, row):
    sys.path.insert(0, os.path.join(ROOT, "boardsim", "target"))
    try:
        import world_table as T
    finally:
        sys.path.pop(0)
    x = -2250 + 250 * col
    y = -4625 + 250 * row
    for p in range(T.N_PADS):
        if T.PAD_X[p] == x and T.PAD_Y[p] == y:
            return p, x / 10, y / 10
    raise AssertionError("no pad there")


def test_a_pad_frozen_while_a_chip_comes_and_goes_beside_it_is_found(tmp_path):
    p, x, y = _pad(9, 10)
    ops = []
    for _ in range(4):           # a chip put on the next pad and lifted again, four times
        ops += [{"op": "put", "chip": "small", "x": x + 25.0, "y": y}, {"op": "frames", "n": 12},
                {"op": "lift", "chip": "small"}, {"op": "frames", "n": 12}]
    res = quiet_run({"noise_lsb": 40, "frozen": p, "ops": ops}, tmp_path)
    stuck = [f["pad"] for f in res["faults"] if f["code"] == "pad_stuck"]
    assert stuck == [[9, 10]], res["faults"]
    # and without the chip beside it, the same frozen pad is never flagged
    res = quiet_run({"noise_lsb": 40, "frozen": p, "ops": [{"op": "frames", "n": 150}]}, tmp_path)
    assert [f for f in res["faults"] if f["code"] == "pad_stuck"] == []
