"""Trap Zenn 1 and 2 played through the pins: the real firmware under the MicroPython unix
port, its loop run with the heap locked, on the simulated table (the three big chips and the
small chip told apart by their magnets' polarity). One firmware run per test."""
import pytest

from boardsim.testing import Table


def trap_into_b(t):
    """The trapper (player 1) knocks the small chip entirely into end b's 4 pt section with
    big2 and ends his turn."""
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")


def over(r):
    return r.last("game_over")


def test_setup_is_checked_from_the_pads():
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.e2", "small": "center"})
    t.checkpoint("wrong")
    t.take("big3").place("big3", "a.zline")
    t.checkpoint("right")
    r = t.run()
    assert [e["ok"] for e in r.events_of("setup")][-2:] == [False, True]
    assert "Set-up OK" in r.display_at("right")[7]
    assert "Set-up OK" not in r.display_at("wrong")[7]


def test_escape_that_stays_in_the_zone_is_trapped_stuck():
    t = Table("trap1", players=2, trapper=1).trap_start()
    trap_into_b(t)
    t.shoot("small", "b.cup3")                  # still entirely in b's backcourt
    t.checkpoint("trapped")
    t.advance_time_and_run(3000)                # the shot's result is held (app RESULT_MS)
    r = t.run()
    assert over(r) == {"ev": "game_over", "game": "trap1", "winner": 1, "trapper": 1,
                       "shots": 1, "reason": "trapped_stuck"}
    assert r.display_at("trapped")[6] == "   Trapped: stuck!"
    r.assert_text_on_display("P1 wins: stuck")


def test_escape_hitting_a_big_chip_in_the_zone_is_trapped_hit():
    t = Table("trap1", players=2, trapper=1).trap_start()
    t.shoot("big1", "b.cup3")                   # a big chip lies in b's backcourt
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.e2", knocks={"big1": ["b.n2"]})
    r = t.run()
    o = over(r)
    assert (o["winner"], o["shots"], o["reason"]) == (1, 2, "trapped_hit")


def test_escape_off_the_board_is_trapped_off():
    t = Table("trap1", players=2, trapper=1).trap_start()
    trap_into_b(t)
    t.shoot("small", "off")
    r = t.run()
    assert (over(r)["winner"], over(r)["reason"]) == (1, "trapped_off")


def test_fugitive_sinking_the_small_chip_is_trapped_basket():
    t = Table("trap1", players=2, trapper=1).trap_start()
    trap_into_b(t)
    t.shoot("small", "b.cup")
    r = t.run()
    assert (over(r)["winner"], over(r)["reason"]) == (1, "trapped_basket")


def test_trapper_knocking_the_small_chip_into_a_cup_loses():
    t = Table("trap1", players=2, trapper=1).trap_start()
    t.shoot("big2", "a.e2", knocks={"small": ["b.cup"]})
    r = t.run()
    o = over(r)
    assert (o["winner"], o["trapper"], o["shots"], o["reason"]) == (2, 1, 1, "trapper_sank_small")


def test_escape_into_the_other_backcourt_and_a_partial_escape_are_not_trapped():
    t = Table("trap1", players=2, trapper=1).trap_start()
    trap_into_b(t)
    t.shoot("small", "a.back4")                 # from one backcourt zone into the other
    t.shoot("big1", "a.n2")                     # the trapper's next turn: one shot
    t.press("turn")
    t.shoot("small", "a.cup3|a.e2")             # partly out: escaped
    t.checkpoint("escaped")
    r = t.run()
    r.assert_no_event("game_over")
    smalls = [s for s in r.events_of("shot") if s["chip"] == "small"]
    assert [(s["escape"], s["result"]) for s in smalls] == [(True, "escaped"), (True, "escaped")]
    assert smalls[0]["small"] == "a.backcourt" and smalls[1]["small"] == "field"


def test_a_turn_of_one_two_and_three_chips():
    t = Table("trap1", players=2, trapper=1).trap_start()
    t.shoot("big1", "a.n3")
    t.press("turn")                             # one chip
    t.shoot("small", "b.e2")
    t.shoot("big2", "a.z3")
    t.shoot("big3", "a.n2")
    t.press("turn")                             # two chips
    t.shoot("small", "b.n2")
    t.shoot("big1", "b.n3")
    t.shoot("big2", "b.z3")
    t.shoot("big3", "a.e2")                     # three chips: the turn ends by itself
    t.shoot("small", "a.n3")
    r = t.run()
    turns = [(e["player"], e["role"]) for e in r.events_of("turn")]
    assert turns == [(1, "trapper"), (2, "fugitive"), (1, "trapper"), (2, "fugitive"),
                     (1, "trapper"), (2, "fugitive"), (1, "trapper")]
    bigs = [s for s in r.events_of("shot") if s["chip"] == "big"]
    assert [s["turn_shot"] for s in bigs] == [1, 1, 2, 1, 2, 3]
    assert bigs[-1]["shots"] == 6 and bigs[-1]["left"] == 9


def test_same_big_chip_twice_in_a_turn_is_flagged():
    t = Table("trap1", players=2, trapper=1).trap_start()
    t.shoot("big1", "a.n3")
    t.shoot("big1", "b.n3")
    t.checkpoint("foul")
    r = t.run()
    bigs = r.events_of("shot")
    assert [s["foul"] for s in bigs] == [None, "same_chip"]
    assert "Same chip twice!" in r.display_at("foul")[7]


def test_sunk_big_chip_and_small_chip_knocked_off_go_to_the_centre():
    t = Table("trap1", players=2, trapper=1).trap_start()
    t.shoot("big1", "b.cup")                    # a big chip sunk
    t.checkpoint("big sunk")
    t.take("big1").place("big1", "b.e2")        # (the centre is taken by the small chip)
    t.shoot("big2", "a.e2", knocks={"small": ["off"]})
    t.checkpoint("small off")
    t.place("small", "center")
    t.shoot("big3", "a.n2")
    r = t.run()
    r.assert_no_event("game_over")
    shots = r.events_of("shot")
    assert [s["prompt"] for s in shots] == ["big_to_center", "small_to_center", "shoot"]
    assert "Big chip to centre" in r.display_at("big sunk")[1]
    assert "Small chip to centre" in r.display_at("small off")[1]
    assert shots[-1]["shots"] == 3


def _fifteen_shots(t, last_knock=None):
    """Five trapper turns of three shots with a fugitive shot between them; the fifteenth
    shot may knock the small chip somewhere."""
    spots = ["a.n3", "a.z3", "a.n2"], ["b.n3", "b.z3", "b.n2"]
    for turn in range(5):
        for k, big in enumerate(("big1", "big2", "big3")):
            dest = spots[turn % 2][k]
            if turn == 4 and k == 2 and last_knock:
                t.shoot(big, dest, knocks={"small": [last_knock]})
            else:
                t.shoot(big, dest)
        if turn < 4:
            t.shoot("small", ("a.e2", "center", "b.e2", "center")[turn])


def test_fifteen_shots_without_a_trap_is_out_of_shots():
    t = Table("trap1", players=2, trapper=1).trap_start()
    _fifteen_shots(t)
    r = t.run()
    o = over(r)
    assert (o["winner"], o["shots"], o["reason"]) == (2, 15, "out_of_shots")


@pytest.mark.parametrize("escape,reason,winner", [
    ("a.e2", "out_of_shots", 2),
    # the escape leaves the board from the 4 pt section within a frame at rest, before any
    # frame sees it move: off, not lifted, since it did not fade in place (docs/sensing.md)
    ("off", "trapped_off", 1),
])
def test_fifteenth_shot_trapping_still_gives_the_escape_shot(escape, reason, winner):
    t = Table("trap1", players=2, trapper=1).trap_start()
    _fifteen_shots(t, last_knock="a.back4")
    t.shoot("small", escape)
    r = t.run()
    o = over(r)
    assert (o["winner"], o["shots"], o["reason"]) == (winner, 15, reason)


def test_trap2_rounds_with_a_penalty_and_a_tie():
    t = Table("trap2", players=2, trapper=1)
    t.trap_start(1)
    t.shoot("big1", "a.n3", knocks={"small": ["b.cup"]})    # penalty: +5, small to the centre
    t.take("small").place("small", "center")
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                              # trapped: 2 shots + 5
    # round 2: player 2 traps from end b
    for c in ("big1", "big2", "big3", "small"):
        t.take(c)
    t.trap_start(2)
    for k, big in enumerate(("big1", "big2", "big3")):
        t.shoot(big, ("b.n3", "b.z3", "b.n2")[k])
    t.shoot("small", "a.n3")
    for k, big in enumerate(("big1", "big2", "big3")):
        t.shoot(big, ("a.z3", "a.n2", "a.e2")[k])
    t.shoot("small", "b.e2")
    t.shoot("big1", "b.z3", knocks={"small": ["a.back4"]})  # the seventh shot traps ...
    t.press("turn")
    t.shoot("small", "a.cup3")                              # ... and the escape fails
    t.advance_time_and_run(3000)
    r = t.run()
    o = over(r)
    assert o["game"] == "trap2"
    assert o["rounds"] == [{"trapper": 1, "shots": 2, "penalty": 5, "reason": "trapped_stuck"},
                           {"trapper": 2, "shots": 7, "penalty": 0, "reason": "trapped_stuck"}]
    assert o["winner"] is None
    r.assert_text_on_display("A tie")


@pytest.mark.parametrize("game", ["trap1", "trap2"])
def test_both_runtimes_play_trap_games_alike(game):
    """The same trap game under CPython prints exactly the lines it prints under MicroPython."""
    runs = {}
    for rt in ("micropython", "cpython"):
        t = Table(game, players=2, trapper=2, runtime=rt).trap_start(2)
        t.shoot("big3", "b.n2", knocks={"small": ["a.back4"]})
        t.shoot("big1", "b.z3")
        t.press("turn")
        t.shoot("small", "a.cup3|a.e2")
        t.shoot("big2", "a.n3", knocks={"small": ["off"]})
        t.place("small", "center")
        runs[rt] = t.run().events
    assert runs["micropython"] == runs["cpython"]
    assert [e["ev"] for e in runs["micropython"]].count("shot") == 4


def test_without_a_trapper_the_scoreboard_flips_the_coin_and_the_winner_traps():
    t = Table("trap1", players=2).trap_start(1)
    t.checkpoint("after the flip")
    r = t.run()
    coin = r.last("coin")
    game = r.last("game")
    assert coin["winner"] in (1, 2)
    assert game["coin"] is True and game["trapper"] == coin["winner"]
    assert f"Trapper P{coin['winner']}" in r.display_at("after the flip")[2]
