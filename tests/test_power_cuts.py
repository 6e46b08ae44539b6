"""Power cuts at every step of complete games of all three kinds (issue 7), under the MicroPython
unix port with the firmware's flash a real littlefs on a RAM block device
(boardsim/target/flash.py). One MicroPython process per game runs tests/support/cutsweep.py:

- fork: the game never cut; after every firmware loop turn the flash image is played back by
  the firmware's own journal code, and every block write of that turn is torn in a copy: the
  game restored is always the one on the scoreboard before or after that turn;
- cuts: the game again, the power cut and switched on after every step once the game has begun:
  the same game comes back, the display says "Game restored", and it ends as the uncut one;
- tears: the game from the start until a journal write is torn and the power is lost in the
  middle of it, for writes spread over the game: the game comes back as it was before or
  after the loop turn of that write.

Every bowling game is scored again from its shot events by the reference scorer of
tests/support/ref_bowling.py."""
import os

import pytest

from boardsim.testing import Table
from ref_bowling import check_bowling_events
from runtimes import run_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(ROOT, "tests", "support", "cutsweep.py")
TEARS = 1           # real tears per game (the fork run tears every write in a copy)


def sweep(table, tears=TEARS):
    return _run({"timeline": table.timeline(), "tears": tears})


def _run(job):
    return run_target(None, "micropython", job, name=SWEEP, heapsize="8M", timeout=600, cwd=None,
                      marker="RESULT ")[0]


def check(res, shots_at_least):
    fork, cuts = res["fork"], res["cuts"]
    assert fork["nbad"] == 0, fork["bad"]
    assert cuts["nbad"] == 0, cuts["bad"]
    assert res["tears"] == [], res["tears"]
    assert len(res["picked"]) == TEARS
    assert fork["shots"] >= shots_at_least
    assert fork["checks"] >= shots_at_least and fork["torn"] >= fork["checks"]
    # the shots' verdicts were on the displays at the end of their turns, saved (cutsweep.py;
    # the one that ends the game leaves no game to compare)
    assert fork["shown"] >= shots_at_least - 1, fork["shown"]
    assert cuts["cuts"] >= shots_at_least and cuts["shown"] == cuts["cuts"]
    assert len(fork["game_over"]) == 1
    assert cuts["game_over"] == fork["game_over"]
    return fork["game_over"][0]


def bowling_game():
    t = Table("bowling", players=1)

    def frame(*balls, between=()):
        t.place("small", "a.pocket")
        for i, path in enumerate(balls):
            t.shoot("small", *path)
            for act in (between[i] if i < len(between) else ()):
                act()
        t.take("small")

    frame(["b.pocket", "b.cup"])                                    # X
    frame(["b.e2"], ["b.pocket", "b.cup"])                          # 8 /
    frame(["b.cup"], ["b.n2"], between=[[lambda: t.take("small"),   # sunk without a Zenn: 9,
                                         lambda: t.place("small", "b.pocket")]])  # then no basket
    t.place("small", "a.pocket")
    t.shoot("small", "a.n3")                                        # 3 ...
    t.press("undo")                                                 # ... taken back
    t.take("small")
    t.place("small", "a.pocket")
    t.shoot("small", "b.z3")                                        # 7, set to 6 by hand:
    t.press("ok").press("next").press("ok")
    t.shoot("small", "b.pocket", "b.cup")                           # 6 /
    t.take("small")
    for _ in range(5):
        frame(["b.pocket", "b.cup"])                                # X X X X X
    t.place("small", "a.pocket")
    t.shoot("small", "off")                                         # - -
    t.place("small", "center")
    t.shoot("small", "off")
    return t


def test_power_cuts_through_a_bowling_game():
    res = sweep(bowling_game())
    over = check(res, 14)
    check_bowling_events(res["fork"]["events"])
    p = over["players"][0]
    assert p["frames"] == ["X", "8/", "9-", "6/", "X", "X", "X", "X", "X", "--"]
    assert p["total"] == 20 + 19 + 9 + 20 + 30 + 30 + 30 + 20 + 10 + 0


def test_power_cuts_through_a_trap_zenn_1_game():
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big1", "a.n3")
    t.press("turn")                                 # a turn of one chip
    t.shoot("small", "b.e2")
    t.shoot("big3", "a.z3")
    t.press("undo")                                 # taken back (the chip stays where it went)
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                      # the escape fails: trapped
    res = sweep(t)
    over = check(res, 4)
    assert over == {"ev": "game_over", "game": "trap1", "winner": 1, "trapper": 1, "shots": 2,
                    "reason": "trapped_stuck"}


def test_power_cuts_through_a_trap_zenn_2_game():
    t = Table("trap2", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                      # round 1: trapped after 1 shot
    t.take("small").place("small", "center")        # round 2: player 2 traps
    t.shoot("big3", "a.n2", knocks={"small": ["a.back4"]})
    t.press("turn")
    t.shoot("small", "a.cup3")                      # trapped after 1 shot: a tie
    res = sweep(t)
    over = check(res, 4)
    assert over["rounds"] == [{"trapper": 1, "shots": 1, "penalty": 0, "reason": "trapped_stuck"},
                              {"trapper": 2, "shots": 1, "penalty": 0, "reason": "trapped_stuck"}]
    assert over["winner"] is None


@pytest.fixture(autouse=True)
def _no_files_in_the_repo():
    yield
    assert not [f for f in os.listdir(ROOT) if f.endswith(".zj")], "journal files in the repo root"
