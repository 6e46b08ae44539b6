"""The locator's unreadable frames as a fault (issue 13; firmware/sensing/faults.py, C_UNREAD).

A frame the locator cannot read (hall: 48 or more pads beyond its threshold; presence: 256 or
more pads covered: no chips do that) is not fitted, and the locator counts such frames in a row
(`unread`). The fault monitor reports them once they last UNREAD_MS, as a condition:
`{"ev": "fault", "what": "pads", "code": "unreadable", "pad": null, "on": true}`, the status
row saying `Pads unreadable` while it lasts, and `"on": false` once the frames read again.

Through the real firmware on the simulated table, under MicroPython (heap locked around every
loop turn) and CPython; on the emulated RP2040 too (the chip tier, skipped without an image).
- hall pads out of calibration: calib.bin's zeros 3000 LSB below what the sensors read with no
  chip (a file from another board, or zeros drifted): every pad beyond the threshold, nothing the
  fault monitor can name (no rail, no frozen or flickering pad, no mux reading one sensor). The
  calibration of the empty board (`calib empty` from the console) makes the frames readable.
- presence pads under a cloth: a block of 20 x 16 pads covered (no whole shift register), then
  uncovered.
"""
import os
import sys

import pytest

from boardsim.rp2040 import images
from boardsim.testing import run_timeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _d in ("firmware", os.path.join("boardsim", "target")):
    if os.path.join(ROOT, _d) not in sys.path:
        sys.path.append(os.path.join(ROOT, _d))
from tables import board_table as BT  # noqa: E402
import world_table as WT  # noqa: E402
from sensing import calib as CAL  # noqa: E402
from sensing import faults as FA  # noqa: E402

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())
RUNTIMES = ["micropython", "cpython",
            pytest.param("rp2040", marks=pytest.mark.skipif(WHY is not None,
                                                            reason=f"no emulated Pico here: {WHY}"))]

OFF_BY = 3000       # LSB: calib.bin's zeros this far below the sensors' (THRESHOLD 1200)
# How long after UNREAD_MS of unreadable frames the display is looked at, and after the frames
# read again. Measured (2026-12-02, snapshots every 100 ms): the condition and its status row
# came 2,000 - 2,100 ms after the boot event (hall) or after the cloth (presence) under the unix
# port, CPython and on the emulated chip; uncovered, the presence status row was clear 200 ms
# later on the chip, 300 - 400 ms under the unix port. (UNREAD_MS + 1,000 and 1,000 before issue
# 15: on the chip, 8 ms of the host's CPU a chip ms, these were 1.5 s of its 5 s a run.)
MARGIN_MS = 500
READ_MS = 600
# (the hall pads' calibration of the empty board typed at the console, then READ_MS: the status
# row was clear 300 - 400 ms after the line on the emulated chip, 100 - 200 ms under the unix
# port and CPython (snapshots every 100 ms, 2026-12-04); 1,000 ms before, 400 ms of the chip's
# loop at rest more, issue 15)
UNREAD = {"ev": "fault", "what": "pads", "code": "unreadable", "pad": None}


def shifted_calibration(by):
    """calib.bin with every hall pad's zero `by` LSB below what its sensor reads on the empty
    simulated board."""
    n = BT.PAD_COLS * BT.PAD_ROWS
    base = [BT.ADC_ZERO - by] * n
    for p in range(WT.N_PADS):
        g = ((WT.PAD_Y[p] - BT.PAD_Y0) // BT.PAD_PITCH) * BT.PAD_COLS + (WT.PAD_X[p] - BT.PAD_X0) // BT.PAD_PITCH
        base[g] = BT.ADC_ZERO + WT.PAD_OFFSET[p] - by
    return bytes(CAL.encode(False, n, base, BT.ADC_PEAK, BT.ADC_PEAK, bytearray(n)))


def faults(r):
    return [e for e in r.events if e.get("ev") == "fault"]


def is_unread(e, on):
    return all(e.get(k) == v for k, v in UNREAD.items()) and e.get("on") is on


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_hall_pads_out_of_calibration_are_reported_unreadable_until_calibrated(runtime):
    tl = [{"op": "flash", "write": "calib.bin", "hex": shifted_calibration(OFF_BY).hex()},
          {"op": "boot"},
          {"op": "wait", "ms": FA.FaultMonitor.UNREAD_MS // 2},
          {"op": "snapshot", "label": "early"},          # not yet: it may be a fault being named
          {"op": "wait", "ms": FA.FaultMonitor.UNREAD_MS // 2 + MARGIN_MS},
          {"op": "snapshot", "label": "unread"},
          {"op": "serial", "line": "calib empty"},       # the zeros measured again
          {"op": "wait", "ms": READ_MS},
          {"op": "snapshot", "label": "read"}]
    r = run_timeline(tl, runtime)
    assert r.last("boot")["calib"] == "loaded"
    f = faults(r)
    # the condition, once on and once off, and nothing else said of the pads
    assert len(f) == 2 and is_unread(f[0], True) and is_unread(f[1], False), f
    assert r.display_at("early")[7] != "Pads unreadable"
    assert r.display_at("unread")[7] == "Pads unreadable"
    assert r.display_at("read")[7] != "Pads unreadable"
    assert [e["step"] for e in r.events if e.get("ev") == "calib"] == ["empty"]
    assert len(r.events_of("boot")) == 1          # no watchdog reset


def test_a_calibrated_board_is_never_unreadable():
    """The control: the same run with the sensors' own zeros says nothing."""
    tl = [{"op": "flash", "write": "calib.bin", "hex": shifted_calibration(0).hex()},
          {"op": "boot"}, {"op": "wait", "ms": 2 * FA.FaultMonitor.UNREAD_MS},
          {"op": "snapshot", "label": "rest"}]
    r = run_timeline(tl, "micropython")
    assert faults(r) == []
    assert r.display_at("rest")[7] != "Pads unreadable"


COVER_COLS = range(10, 30)
COVER_ROWS = range(20, 36)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_presence_pads_under_a_cloth_are_reported_unreadable_until_uncovered(runtime):
    assert len(COVER_COLS) * len(COVER_ROWS) >= 256 and len(COVER_ROWS) < BT.PRES_ROWS
    tl = [{"op": "boot"}, {"op": "wait", "ms": 500}]
    tl += [{"op": "fault", "pad": [c, r], "mode": "stuck_high"} for r in COVER_ROWS for c in COVER_COLS]
    tl += [{"op": "wait", "ms": FA.FaultMonitor.UNREAD_MS + MARGIN_MS},
           {"op": "snapshot", "label": "unread"},
           {"op": "fault", "clear": True},
           {"op": "wait", "ms": READ_MS},
           {"op": "snapshot", "label": "read"}]
    r = run_timeline(tl, runtime, config={"front_end": "shift"})
    f = faults(r)
    unread = [e for e in f if e.get("code") == "unreadable"]
    assert len(unread) == 2 and is_unread(unread[0], True) and is_unread(unread[1], False), f
    # the locator takes a group that large for a hand (presence_locate.py): the hand condition
    # may come and go with it; no pad is blamed
    assert all(e.get("code") in ("unreadable", "hand") for e in f), f
    assert r.display_at("unread")[7] == "Pads unreadable"     # before the hand: more urgent
    assert r.display_at("read")[7] not in ("Pads unreadable", "Hand over the pads")
    assert len(r.events_of("boot")) == 1
