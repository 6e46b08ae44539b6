"""A chip taken by hand from beside others is no shot (docs/rules.md, "A shot"), on both front
ends: the chips beside it may come back a little off their rest fits, within PLACE_NUDGE
(tracking/tracker.py, _nudged_by_placing), as beside a chip put down. Hall pads: the taken
chip's field fades under its neighbours' and pulls their fits as it goes (big1 3.9 mm in the
group of four: a phantom first ball of 8 pins where the small chip lay, or in Trap Zenn a
phantom trapper's shot, on main before branch takebeside). Presence pads: the hand hides the
group, which is fitted afresh without the taken chip (tests/test_off_or_lifted.py's touching
take, session 17).

Played through the real firmware on the simulated table, under both runtimes: the takes at
several phases of the scan, then what players do around them: a chip taken from a group
behind a cup, one taken while the hand nudges its neighbour 4 mm, two taken at once. After
them one real shot, which must be the game's first.
"""
import pytest

from boardsim.testing import Table

GROUP = {"big1": {"x": 0, "y": 150}, "big2": {"x": 42.5, "y": 150},
         "big3": {"x": 21.25, "y": 187}, "small": {"x": -37.5, "y": 150}}
# behind cup a (centre (0, -340) mm, radius 24): big1's rim 6.5 mm from the cup's
BEHIND_CUP = {"big1": {"x": 0, "y": -390}, "big2": {"x": 42.5, "y": -390}}
SMALL_BEHIND_CUP = {"x": -37.5, "y": -390}


class HandsTable(Table):
    """A Table with a second hand: take_with(a, b) lifts chip a and, at the same moment, takes
    chip b too or (`nudge`: a point) slides b there, as a hand brushing it does."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._with = set()          # the take steps whose lift the next step's op goes with

    def take_with(self, chip, other, nudge=None):
        self._with.add(len(self.steps))
        self.take(chip)
        return self.shoot(other, nudge) if nudge else self.take(other)

    def timeline(self):
        ops = super().timeline()
        takes = [i for i, s in enumerate(self.steps) if "take" in s]
        lifts = [o for o in ops if o.get("op") == "lift"]
        assert len(takes) == len(lifts)
        for i, o in zip(takes, lifts):
            if i in self._with:
                o["settle"] = False     # (boardsim/target/runner.py: the next op at once)
        return ops


def _shots(r):
    return [(s.get("ball"), s.get("role"), s["zone"] if "zone" in s else s["small"], s["sure"])
            for s in r.events_of("shot")]


@pytest.mark.parametrize("front_end", ["hall", "shift"])
def test_a_chip_taken_from_a_touching_group_at_every_phase_of_the_scan_is_no_shot(front_end, runtime):
    """The small chip taken from a group of four touching chips, put back and taken again, each
    take 3 ms later in the scan than the one before (a frame is 16 steps)."""
    t = Table("bowling", players=1, runtime=runtime)
    t.place_all(GROUP)
    for k in range(0, 16, 3):
        if k:
            t.place("small", GROUP["small"])
        t.advance_time_and_run(1500 + k)
        t.take("small")
    t.place("small", "a.pocket").shoot("small", "b.e2")
    r = t.run(config={"front_end": front_end})
    assert _shots(r) == [(1, None, "b.e2", True)], r.events_of("shot")


def _players_takes(t):
    """Behind cup a: the small chip taken from beside big1; put back and taken while the hand
    nudges big1 4 mm; put back and taken with big2 at once."""
    t.place_all(dict(BEHIND_CUP, small=SMALL_BEHIND_CUP))
    t.advance_time_and_run(1500)
    t.take("small")
    t.place("small", SMALL_BEHIND_CUP).advance_time_and_run(1500)
    t.take_with("small", "big1", nudge={"x": 0, "y": -394})
    t.place("small", SMALL_BEHIND_CUP).advance_time_and_run(1500)
    t.take_with("small", "big2")
    return t


@pytest.mark.parametrize("front_end", ["hall", "shift"])
def test_chips_taken_from_beside_others_as_players_do_are_no_shot_bowling(front_end, runtime):
    t = _players_takes(HandsTable("bowling", players=1, runtime=runtime))
    t.place("small", "a.pocket").shoot("small", "b.e2")
    r = t.run(config={"front_end": front_end})
    assert _shots(r) == [(1, None, "b.e2", True)], r.events_of("shot")


@pytest.mark.parametrize("front_end", ["hall", "shift"])
def test_chips_taken_from_beside_others_as_players_do_are_no_shot_trap(front_end, runtime):
    """Trap Zenn: a phantom shot is the trapper's first of the turn (a big chip moved, the
    small chip not on the board)."""
    t = _players_takes(HandsTable("trap1", players=2, trapper=1, runtime=runtime))
    t.place_all({"small": "center", "big2": "a.e2"})
    t.shoot("big2", "b.e2")
    r = t.run(config={"front_end": front_end})
    shots = r.events_of("shot")
    assert [(s["role"], s["turn_shot"], s["small"]) for s in shots] == [("trapper", 1, "field")], shots
