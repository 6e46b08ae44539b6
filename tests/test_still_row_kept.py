"""A row of chips lying still is not "moved" by a verdict elsewhere on the board (hall pads,
docs/sensing.md "A still chip keeps the verdict's fit"). Three big chips side by side 3.5 mm
apart across the trapper's Zenn line (the Trap Zenn opening, as players line them up: the line
is 126 mm long, the three 117 mm) have a merged field that is flat along the row: fitted afresh
on each verdict's settled frame, the row's fit slid along it with nothing touched. The tracker
took such a slide for a move: the small chip put down in the centre circle, 250 mm away, gave a
phantom trapper's shot (a sure one, turn shot 1 gone, on main before branch rowflip). Now a chip
the last verdict's fit placed keeps that fit until its pads miss it.

Played through the real firmware on the simulated table, both runtimes, both front ends (the
presence pads see no such slide: the same game must come out).
"""
import pytest

from boardsim.testing import Table
from test_faults import hall_calibration

Y_ROW = -249.0          # across a.zline (its centre at y -270 + 3 + 19.5 - 1.5)
X_MID = 1.0
PITCH = 39.0 + 3.5      # big chips 39 mm across, 3.5 mm apart (the simulator puts them 3 mm apart at least)
ROW = {"big1": {"x": X_MID, "y": Y_ROW}, "big2": {"x": X_MID + PITCH, "y": Y_ROW},
       "big3": {"x": X_MID - PITCH, "y": Y_ROW}}


def _run(t, front_end):
    # the hall pads calibrated, as a table handed over is (README): uncalibrated, the row's fit
    # is called unsure and may wander by UNC_BADFIT, which hides the slide from the tracker
    flash = {"calib.bin": hall_calibration()} if front_end == "hall" else None
    return t.run(config={"front_end": front_end}, flash=flash)


@pytest.mark.parametrize("front_end", ["hall", "shift"])
def test_the_small_chip_put_down_far_from_a_still_row_is_no_trappers_shot(front_end, runtime):
    """The opening row on the Zenn line; the small chip put in the centre circle, taken and put
    down again as players square it up (four times); then the trapper's first real shot."""
    t = Table("trap1", players=2, trapper=1, runtime=runtime)
    t.place_all(ROW).advance_time_and_run(1000)
    for k in range(4):
        t.place("small", {"x": 0, "y": 60 + 7 * k}).advance_time_and_run(700)
        t.take("small").advance_time_and_run(700)
    t.place("small", "center").advance_time_and_run(700)
    t.shoot("big3", "a.n3")
    r = _run(t, front_end)
    shots = r.events_of("shot")
    assert [(s["role"], s["turn_shot"], s["chip"]) for s in shots] == [("trapper", 1, "big")], shots
