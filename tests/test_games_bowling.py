"""Complete games of Zenn Bowling played through the pins: the real firmware under the
MicroPython unix port, its loop run with the heap locked (any allocation stops the run), on
the simulated table. Each test is one firmware run; the expected scores are worked out here
from the rules, not copied from a run."""
import pytest

from boardsim.testing import Table

# ball recipes: (first ball path, second ball path or None); shooter end a, pin end b
STRIKE = (["b.pocket", "b.cup"],)
GUTTER_OFF = (["off"],)


def test_perfect_game_is_300():
    t = Table("bowling", players=1)
    for _ in range(9):
        t.frame(["b.pocket", "b.cup"])
    t.frame(["b.pocket", "b.cup"], ["b.pocket", "b.cup"], ["b.pocket", "b.cup"])
    t.checkpoint("end")
    t.advance_time_and_run(3000)            # the last ball's result is held (app RESULT_MS)
    r = t.run()
    r.assert_text_on_display("Strike!", "end")
    over = r.last("game_over")
    assert over["game"] == "bowling"
    p = over["players"][0]
    assert p["frames"] == ["X"] * 9 + ["XXX"]
    assert p["cum"] == [30 * (i + 1) for i in range(10)]
    assert p["total"] == 300
    assert len(r.events_of("shot")) == 12
    assert all(e["result"] == "strike" for e in r.events_of("shot"))
    r.assert_text_on_display("Total 300")
    r.assert_text_on_display("Game over")


def test_all_gutters_own_cup_off_board_and_centre_score_nothing():
    t = Table("bowling", players=1)
    # ball 1 into the shooter's own cup (entered from behind), ball 2 off the board
    t.frame(["a.cup"], ["off"])
    for _ in range(8):
        t.frame(["off"], ["off"])
    t.frame(["center"], ["a.back4"])           # the tenth: entirely in the centre, then 1 pin? no basket
    r = t.run()
    shots = r.events_of("shot")
    assert [s["result"] for s in shots[:2]] == ["gutter", "no_basket"]
    assert shots[0]["pins"] == 0 and shots[-2]["result"] == "gutter" and shots[-2]["zone"] == "center"
    p = r.last("game_over")["players"][0]
    assert p["frames"] == ["--"] * 10
    assert p["total"] == 0


def test_every_pin_value_of_the_table_from_end_a():
    # first balls to every section of the table; the second ball never sinks (no basket)
    expect = [("b.cup3", 9), ("b.e2", 8), ("b.n2", 8), ("b.z3", 7), ("b.n3", 7),
              ("a.e2", 6), ("b.back4", 5), ("a.z3", 4), ("a.n3", 3), ("a.cup3", 2)]
    t = Table("bowling", players=1)
    for zone, _ in expect:
        t.frame([zone], ["center"])
    r = t.run()
    firsts = [s for s in r.events_of("shot") if s["ball"] == 1]
    assert [(s["zone"], s["pins"]) for s in firsts] == expect
    p = r.last("game_over")["players"][0]
    assert p["total"] == sum(v for _, v in expect)


def test_remaining_pin_values_and_overlaps_from_end_b():
    # shooter end b: the pin side is a. Overlapping chips get the higher count (note 2).
    expect = [("a.back4", 5), ("b.n2", 6), ("b.back4", 1), ("center", 0),
              ("a.e2|a.n2", 8), ("a.cup3|a.e2", 9), ("b.n3|b.n2", 6), ("a.z3|a.e2", 8),
              ("center|a.e2", 8), ("b.cup3|b.z3", 4)]
    t = Table("bowling", players=1, shooter_end="b")
    for zone, _ in expect:
        t.frame([zone], ["center"], shooter="b")
    r = t.run()
    firsts = [s for s in r.events_of("shot") if s["ball"] == 1]
    assert [s["pins"] for s in firsts] == [v for _, v in expect]
    assert r.last("game_over")["players"][0]["total"] == sum(v for _, v in expect)


def test_spares_from_rest_from_a_border_and_from_the_pin_pocket_and_a_split():
    t = Table("bowling", players=1)
    t.frame(["b.e2"], ["b.pocket", "b.cup"])                     # 8 /
    t.frame(["b.e2|b.n2"], ["b.pocket", "b.cup"])                # on the middle line: 8 /
    t.frame(["b.cup"], ["b.pocket", "b.cup"])                    # sunk without the blocks: 9,
                                                                  # then a spare from the pin pocket
    t.frame(["a.n3"], [{"hit": "side"}, "b.pocket", "b.cup"])    # 3 / by a split
    t.frame(["b.pocket"], ["b.pocket", "b.cup"])                 # resting in the pin pocket: 9 /
    for _ in range(4):
        t.frame(["b.z3"], ["b.pocket", "b.cup"])                 # 7 /
    # tenth: a spare, then the bonus ball from the pocket
    t.frame(["b.n3"], ["b.pocket", "b.cup"], ["b.e2"])           # 7 / 8
    r = t.run()
    p = r.last("game_over")["players"][0]
    assert p["frames"] == ["8/", "8/", "9/", "3/", "9/", "7/", "7/", "7/", "7/", "7/8"]
    firsts = [8, 8, 9, 3, 9, 7, 7, 7, 7, 7]
    bonus = firsts[1:] + [8]
    assert p["cum"][-1] == p["total"] == sum(10 + b for b in bonus)
    splits = [s for s in r.events_of("shot") if s.get("split")]
    assert [(s["frame"], s["result"]) for s in splits] == [(4, "spare")]


def test_sink_without_a_zenn_counts_nine_on_either_ball():
    t = Table("bowling", players=1)
    t.frame(["b.cup"], ["b.cup3"])              # sunk without the blocks: 9; no basket
    t.frame(["a.z3"], ["b.cup"])                # 4, then sunk without a Zenn: the frame is 9
    for _ in range(8):
        t.frame(["off"], ["off"])
    r = t.run()
    p = r.last("game_over")["players"][0]
    assert p["frames"][:2] == ["9-", "45"]
    assert p["total"] == 18
    r.assert_event("shot", frame=2, ball=2, result="sink9", pins=5)


@pytest.mark.parametrize("tenth,marks,score", [
    ([["b.pocket", "b.cup"], ["b.z3"], ["b.cup"]], "X72", 19),
    ([["b.cup3"], ["b.pocket", "b.cup"], ["b.pocket", "b.cup"]], "9/X", 20),
    ([["b.z3"], ["b.cup"]], "72", 9),
    ([["center"], ["b.pocket", "b.cup"], ["b.cup3"]], "-/9", 19),
    ([["b.pocket", "b.cup"], ["b.pocket", "b.cup"], ["b.e2"]], "XX8", 28),
])
def test_tenth_frame_shapes(tenth, marks, score):
    t = Table("bowling", players=1)
    for _ in range(9):
        t.frame(["off"], ["off"])
    t.frame(*tenth)
    r = t.run()
    p = r.last("game_over")["players"][0]
    assert p["frames"][9] == marks
    assert p["total"] == score


def test_undo_takes_back_the_last_ball_and_play_goes_on():
    t = Table("bowling", players=2)
    t.frame(["b.pocket", "b.cup"])             # P1 strike
    t.press("undo")                             # taken back: P1 frame 1 ball 1 again
    t.checkpoint("after undo")
    t.frame(["b.e2"], ["b.cup3"])              # P1: 8, no basket
    t.frame(["b.z3"], ["b.pocket", "b.cup"])   # P2: 7 /
    t.press("undo")                             # P2's spare taken back ...
    t.place("small", "b.z3")                    # ... the chip goes back where it lay
    t.shoot("small", "b.back4")                 # no basket this time
    t.take("small")
    r = t.run()
    undos = r.events_of("undo")
    assert [(u["player"], u["frame"], u["ball"]) for u in undos] == [(1, 1, 1), (2, 1, 2)]
    shots = r.events_of("shot")
    assert [(s["player"], s["frame"], s["ball"], s["mark"]) for s in shots] == [
        (1, 1, 1, "X"), (1, 1, 1, "8"), (1, 1, 2, "-"), (2, 1, 1, "7"), (2, 1, 2, "/"), (2, 1, 2, "-")]
    assert "P1 Frame 1 Ball 1" in r.display_at("after undo")[0]
    assert shots[-1]["total"] == 7


@pytest.mark.parametrize("front_end", ["hall", "shift"])
def test_a_first_ball_taken_back_picked_up_and_shot_again(front_end):
    # a player's path after undo: the chip picked up where the ball left it (from the board,
    # then out of the cup), put back in the shooter's pocket and shot again; the lifts and the
    # put-backs are no shots (with the chip's long frames: tests/test_frame_length.py)
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.e2")                  # 8 pins ...
    t.press("undo").checkpoint("after undo")                             # ... taken back
    t.take("small").place("small", "a.pocket").checkpoint("put back")
    t.shoot("small", "b.pocket", "b.cup").checkpoint("strike")           # a strike instead
    t.press("undo").take("small").place("small", "a.pocket")             # taken back from the cup
    t.shoot("small", "b.z3")                                             # 7 pins this time
    r = t.run(config={"front_end": front_end})
    assert [(e["ev"], e["frame"], e["ball"], e.get("mark"), e.get("put_back")) for e in r.events
            if e["ev"] in ("shot", "undo")] == [
        ("shot", 1, 1, "8", None), ("undo", 1, 1, None, "a.pocket"),
        ("shot", 1, 1, "X", None), ("undo", 1, 1, None, "a.pocket"), ("shot", 1, 1, "7", None)]
    assert all(e["sure"] for e in r.events_of("shot"))
    assert r.display_at("after undo")[:2] == ["P1 Frame 1 Ball 1", "Place in pocket a"]
    assert r.display_at("put back")[:2] == ["P1 Frame 1 Ball 1", "Place in pocket a"]
    assert r.display_at("strike")[1].strip() == "Strike!"
    assert r.display[0] == "P1 Frame 1 Ball 1" and r.display[1].strip() == "7 pins"


def test_six_players_take_frames_in_turn():
    t = Table("bowling", players=6)
    plan = [["b.pocket", "b.cup"], ["b.e2"], ["b.cup3"], ["a.n2"], ["center"], ["b.back4"]]
    first = [10, 8, 9, 6, 0, 5]
    for f in range(10):
        for p in range(6):
            if p == 0:
                t.frame(*([plan[0]] * (1 if f < 9 else 3)))
            elif f < 9:
                t.frame(plan[p], ["b.n3"])
            else:
                t.frame(plan[p], ["b.pocket", "b.cup"], ["b.e2"])
    r = t.run()
    over = r.last("game_over")
    assert len(over["players"]) == 6
    totals = [p["total"] for p in over["players"]]
    # frames 1-9 open (first ball only), the tenth a spare with an 8 bonus; player 1 strikes
    assert totals[0] == 300
    for p in range(1, 6):
        assert totals[p] == 9 * first[p] + 10 + 8
    order = [(s["player"], s["frame"]) for s in r.events_of("shot") if s["ball"] == 1]
    assert order[:12] == [(p, 1) for p in range(1, 7)] + [(p, 2) for p in range(1, 7)]
