"""What the players see after each shot, through the real firmware in the simulator (MicroPython,
heap locked in the loop): the result of a ball stays on the shooter's sheet for
Scoreboard.RESULT_MS (3 s of the simulator's virtual time) before the next player's sheet,
unless a button or a chip put down cuts it short; after an undo the prompt says where the chip
goes back, and the undo event carries it as "put_back" (docs/playing.md, docs/controls.md)."""
from boardsim.testing import Table


def strike_for_p1():
    t = Table("bowling", players=2)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")
    return t


def test_a_strike_stays_on_the_shooter_s_sheet_then_the_next_player_s_comes():
    t = strike_for_p1()
    t.checkpoint("shot")                    # the runner lets the board rest 1 s after a shot
    t.advance_time_and_run(1500)
    t.checkpoint("2.5 s")
    t.advance_time_and_run(1000)
    t.checkpoint("3.5 s")
    r = t.run(config={"display": "both"})
    for label in ("shot", "2.5 s"):
        d = r.display_at(label)
        assert d[0] == "P1 Frame 1 Ball 1" and d[1].strip() == "Strike!", (label, d)
        assert r.seg_at(label)[2].startswith("5triHE"), r.seg_at(label)
    d = r.display_at("3.5 s")
    assert d[0] == "P2 Frame 1 Ball 1" and d[1] == "Place in pocket a", d
    assert r.seg_at("3.5 s")[0] == "P2 F 1-1"


def test_a_chip_put_down_or_a_button_cuts_the_result_short():
    t = strike_for_p1()
    t.take("small").place("small", "a.pocket")      # P2 is ready within the 3 s
    t.checkpoint("placed")
    t.shoot("small", "b.e2")
    t.checkpoint("p2 result")
    t.press("next")                                 # next alone: only skips the result
    t.checkpoint("next")
    r = t.run()
    assert r.display_at("placed")[0] == "P2 Frame 1 Ball 1"
    assert r.display_at("p2 result")[:2] == ["P2 Frame 1 Ball 1", "       8 pins"]
    assert r.display_at("next")[:2] == ["P2 Frame 1 Ball 2", "Shoot where it lies"]
    assert not r.events_of("refused")


def test_after_undo_the_scoreboard_says_where_to_put_the_chip_back():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.e2")          # 8 pins
    t.shoot("small", "off")                                      # no basket, off the board
    t.press("undo")
    t.checkpoint("undone")
    t.place("small", "b.e2")                                     # back where it lay
    t.checkpoint("back")
    t.shoot("small", "b.pocket", "b.cup")                        # the spare
    t.press("undo")
    t.checkpoint("spare undone")
    t.take("small")
    t.press("undo")                                              # and the 8 pins: a fresh rack
    r = t.run()
    undos = r.events_of("undo")
    assert [u["put_back"] for u in undos] == ["b.e2", "b.e2", "a.pocket"]
    assert r.display_at("undone")[1] == "Put back: b E"
    assert r.display_at("back")[1] == "Shoot where it lies"
    assert r.display_at("spare undone")[1] == "Put back: b E"    # the chip is in the cup
    assert r.display[1] == "Place in pocket a"
    assert r.last("shot")["result"] == "spare"


def test_a_trap_zenn_2_round_s_end_is_held_before_round_2():
    t = Table("trap2", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.checkpoint("backcourt")
    t.press("turn")
    t.shoot("small", "b.cup3")                  # trapped, stuck: round 1 is over
    t.checkpoint("trapped")
    t.advance_time_and_run(3000)
    t.checkpoint("round 2")
    r = t.run(config={"display": "both"})
    assert r.display_at("backcourt")[6] == "  In the backcourt!"
    d = r.display_at("trapped")
    assert d[0] == "Trap Zenn 2  Round 2" and d[6] == "   Trapped: stuck!", d
    assert r.seg_at("trapped")[2] == "trAPPEd "
    assert r.display_at("round 2")[6] == "" and r.display_at("round 2")[1] == "Set up the chips"
    assert not r.events_of("best")              # the game goes on: no best yet
