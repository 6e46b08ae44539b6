"""The hall locator's fit in viper (firmware/sensing/hall_fit.py) on the emulated RP2040: its
armv6m machine code, 32-bit words and 30-bit small ints, against the plain code it replaced, run
under CPython on the same draws (tests/test_hall_fit.py's TARGET: seeded groups of 1 - 4 chips
anywhere on the board, saturated frames, every prior; model_pads and win_err_pads with
strengths, squared distances and residuals near 2**30 and 2**31). The chip's viper results must
be the plain code's (and CPython's run of the viper code must give them too). Skipped, with the
reason, without an emulated Pico (docs/rp2040.md).
"""
import os

import pytest

from boardsim.rp2040 import images

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())
needs_chip = pytest.mark.skipif(WHY is not None, reason=f"no emulated Pico here: {WHY}")
LONG = bool(os.environ.get("ZENN_RP2040_LONG"))


@needs_chip
def test_the_viper_fit_gives_the_plain_fits_numbers_on_the_chip(tmp_path):
    from boardsim.rp2040 import probe
    from tests.test_hall_fit import TARGET
    from tests.test_rp2040 import chip_half_matches
    # (the plain fits cost the emulator most: 8 cases in make test, 60 in make test-rp2040,
    # ZENN_RP2040_LONG=1; 16 before issue 15's cut, 52 -> 38 s of CPU in a clean clone's
    # terms: the 8 still draw groups of 1 - 4 chips, a board edge case (k = 4), a saturated
    # frame (k = 6), both starts (follow, seed), every prior and both iteration counts; the
    # 9th - 16th add a second edge case and the other saturation (k = 13), checked under the
    # unix port and CPython on 60 cases by tests/test_hall_fit.py)
    job = {"seed": 7, "cases": 60 if LONG else 8, "ref": 0, "outs": 1}
    r = probe.run_module(TARGET, job=job, files={"lcg.mpy": probe.support_mpy("lcg")},
                         await_ms=300000, wait_ms=100, settle_ms=0)
    got = r.events[-1]
    # (the chip runs the viper half (job "ref": 0); the plain fits, models and win_err beside it
    # run under CPython on the same draws: until issue 15 they ran on the chip too, most of its
    # work; tests/test_rp2040.py chip_half_matches)
    want = chip_half_matches(got, "test_hall_fit", job, tmp_path)
    assert want["same"] == job["cases"]
    assert len(got["outs"]) == job["cases"] + 16 + 8        # the fits, model_pads, win_err_pads
