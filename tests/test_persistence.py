"""Nothing lost (issue 7), end to end through the real firmware under MicroPython on the
simulated table: power cuts and the watchdog resume the game from the journal, a damaged or
foreign journal and a wrong config.json give a clear fault and lose nothing else, the flash
failing or tearing a write, corrections with the buttons, buttons at the wrong time or held
down, chips the game has no use for. docs/persistence.md, docs/controls.md."""
from boardsim.testing import Table
from ref_bowling import check_bowling_events

HEADER, OUT = 17, 5         # journal record sizes (docs/persistence.md)
PREP = 14                   # the P record a file prepared at boot begins with (a game started after a boot)


def strike(t):
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")


def faults(r, what):
    return [e for e in r.events_of("fault") if e.get("what") == what]


def status(r, label=None):
    rows = r.display if label is None else r.display_at(label)
    return rows[7].strip()


def test_a_power_cut_between_shots_resumes_the_game_and_says_so():
    t = Table("bowling", players=2)
    strike(t)                                           # P1: X
    t.place("small", "a.pocket").shoot("small", "b.e2")     # P2: 8 ...
    t.power_cut().power_on()
    t.checkpoint("on")
    t.shoot("small", "b.pocket", "b.cup").take("small")     # ... / after the cut
    t.checkpoint("shot")
    r = t.run()
    rest = r.last("restored")
    assert rest == {"ev": "restored", "game": "bowling", "entries": 2, "reset": "power", "torn": False}
    assert [e["reset"] for e in r.events_of("boot")] == ["power", "power"]
    assert status(r, "on") == "Game restored"
    assert "P2 Frame 1 Ball 2" in r.display_at("on")[0]
    assert status(r, "shot") == ""                       # a shot clears the notice
    shots = r.events_of("shot")
    assert [(s["player"], s["mark"]) for s in shots] == [(1, "X"), (2, "8"), (2, "/")]
    check_bowling_events(r.events)


def test_a_watchdog_reset_resumes_the_game_and_says_what_happened():
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big1", "a.n3")
    t.advance_time_and_run(12000)                       # a long rest: the loop feeds the dog
    t.steps.append({"stall_ms": 6000})                  # the loop hangs: the watchdog bites
    t.checkpoint("reset")
    t.press("turn")                                     # the turn goes on after the reset
    t.shoot("small", "b.e2")
    r = t.run()
    assert [e["reset"] for e in r.events_of("boot")] == ["power", "watchdog"]
    assert r.last("restored") == {"ev": "restored", "game": "trap1", "entries": 1,
                                  "reset": "watchdog", "torn": False}
    assert status(r, "reset") == "Watchdog: restored"
    turns = r.events_of("turn")
    assert (turns[-2]["player"], turns[-2]["role"]) == (2, "fugitive")
    assert r.events_of("shot")[-1]["role"] == "fugitive"


def test_a_damaged_journal_restores_up_to_the_damage_with_a_fault():
    t = Table("bowling", players=1)
    strike(t)
    strike(t)
    strike(t)
    t.power_cut()
    # the first game on an empty flash has serial 1: zj1.zj (prepared at boot: its P record
    # first); its third record's type byte
    t.steps.append({"flash": {"damage": "zj1.zj", "offset": PREP + HEADER + 2 * OUT}})
    t.power_on()
    t.checkpoint("on")
    strike(t)
    r = t.run()
    f = faults(r, "journal")
    assert f == [{"ev": "fault", "what": "journal", "why": "damaged", "file": "zj1.zj"}]
    assert r.last("restored")["entries"] == 2
    assert status(r, "on") == "Journal damaged"
    assert "P1 Frame 3 Ball 1" in r.display_at("on")[0]
    assert r.events_of("shot")[-1]["frame"] == 3


def test_a_foreign_file_and_a_wrong_config_are_reported_and_the_game_goes_on():
    t = Table("bowling", players=1)
    strike(t)
    t.power_cut()
    t.steps.append({"flash": {"write": "zj5.zj", "text": "not a journal at all\n"}})
    t.steps.append({"flash": {"write": "config.json", "text": '{"display": "tv"}'}})
    t.power_on()
    t.checkpoint("on")
    t.press("next")                                     # a button acknowledges the notices
    t.checkpoint("ack")
    strike(t)
    r = t.run()
    assert faults(r, "journal") == [{"ev": "fault", "what": "journal", "why": "foreign", "file": "zj5.zj"}]
    assert faults(r, "config")[0]["key"] == "display"
    assert r.last("restored")["entries"] == 1
    assert status(r, "on") == "Foreign journal file"
    assert status(r, "ack") == ""
    assert [s["frame"] for s in r.events_of("shot")] == [1, 2]


def test_a_write_torn_by_a_power_cut_loses_at_most_that_shot():
    t = Table("bowling", players=1)
    strike(t)
    t.steps.append({"flash": {"tear_after": 0}})        # the next flash write is torn
    t.place("small", "a.pocket").shoot("small", "b.e2")     # its record: the power goes
    t.power_cut().power_on()
    t.checkpoint("on")
    r = t.run()
    assert len(r.events_of("boot")) == 2
    entries = r.last("restored")["entries"]
    assert entries in (1, 2)
    assert status(r, "on") == "Game restored"
    # the restored game is the one before the torn shot or after it, never anything else
    row = r.display_at("on")[0]
    assert ("P1 Frame 2 Ball 1" in row) if entries == 1 else ("P1 Frame 2 Ball 2" in row)


def test_a_save_torn_by_a_power_cut_comes_after_the_score_was_shown():
    """Issue 13: the shot's save goes out after its score is on the screen and its line is
    written, in the same loop turn (one save in 16 is littlefs compacting its directory, 64 - 69
    ms on the chip, which must not hold back the score). The save torn: the score and the line
    were out before the power went; after power on the game is the one before the shot or after
    it, as ever. (Before: the power went inside the save, the screen still the strike's, no
    line for the shot.)"""
    t = Table("bowling", players=1)
    strike(t)
    t.steps.append({"flash": {"tear_after": 0}})        # the next flash write is torn
    t.place("small", "a.pocket").shoot("small", "b.e2")     # its record: the power goes
    t.checkpoint("torn")
    t.power_cut().power_on()
    t.checkpoint("on")
    r = t.run()
    assert len(r.events_of("boot")) == 2
    shots = r.events_of("shot")
    assert [s["frame"] for s in shots] == [1, 2]        # the torn shot's line came out first
    assert r.display_at("torn")[1].strip() == "8 pins"  # and its score was shown
    entries = r.last("restored")["entries"]
    assert entries in (1, 2)
    row = r.display_at("on")[0]
    assert ("P1 Frame 2 Ball 1" in row) if entries == 1 else ("P1 Frame 2 Ball 2" in row)


def test_a_failing_flash_is_shown_and_play_goes_on():
    t = Table("bowling", players=1)
    strike(t)
    t.steps.append({"flash": {"fail_after": 0}})        # from now on every write fails
    strike(t)
    t.checkpoint("failing")
    strike(t)
    r = t.run()
    f = faults(r, "journal")
    assert f and all(e["why"] == "io" for e in f)
    assert status(r, "failing") == "Flash error: no save"
    assert [s["frame"] for s in r.events_of("shot")] == [1, 2, 3]    # the game goes on


def test_correct_the_last_ball_with_the_buttons_and_it_survives_a_power_cut():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.z3")     # 7 (the pads say)
    t.press("ok")
    t.checkpoint("screen")
    t.press("next").press("next")                       # 7 -> 6 -> 5
    t.checkpoint("five")
    t.press("ok")
    t.checkpoint("set")
    t.press("ok").press("undo")                         # opened and left: nothing changes
    t.power_cut().power_on()
    t.checkpoint("on")
    t.shoot("small", "b.pocket", "b.cup").take("small")
    r = t.run()
    scr = r.display_at("screen")
    assert scr[0].strip() == "Correct P1 F 1 B1" and scr[3].strip() == "7 pins"
    assert r.display_at("five")[3].strip() == "5 pins"
    undo, shot = r.events_of("undo")[0], r.events_of("shot")[1]
    assert (undo["frame"], undo["ball"]) == (1, 1)
    assert (shot["pins"], shot["manual"], shot["zone"]) == (5, True, None)
    assert "Shoot where it lies" in r.display_at("set")[1]
    assert len(r.events_of("undo")) == 1
    assert r.last("restored")["entries"] == 2           # the shot and its correction
    assert r.events_of("shot")[-1]["mark"] == "/" and r.events_of("shot")[-1]["pins"] == 5
    check_bowling_events(r.events)


def test_a_shot_while_a_question_is_on_the_screen_counts():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.e2")
    t.press("ok")                                       # the correction screen ...
    t.shoot("small", "b.pocket", "b.cup")               # ... a shot drops it and counts
    t.take("small")
    t.steps.append({"hold": "next", "ms": 1800})        # "New game?" ...
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")     # ... a shot
    r = t.run()
    assert [s["mark"] for s in r.events_of("shot")] == ["8", "/", "X"]
    check_bowling_events(r.events)


def test_buttons_at_the_wrong_time_are_refused_with_a_message():
    t = Table("trap1", players=2, trapper=1)
    t.press("undo")                                     # nothing to take back
    t.checkpoint("nothing")
    t.press("turn")                                     # no trapper shot yet this turn
    t.checkpoint("not now")
    t.press("ok")                                       # no use in a trap game
    t.checkpoint("not here")
    r = t.run()
    assert [(e["button"], e["why"]) for e in r.events_of("refused")] == [
        ("undo", "nothing"), ("turn", "not_now"), ("ok", "not_here")]
    assert status(r, "nothing") == "Nothing to take back"
    assert status(r, "not now") == "Not now"
    assert status(r, "not here") == "Button not used here"


def test_a_stuck_button_is_shown_while_it_is_held_and_does_nothing_more():
    t = Table("bowling", players=1)
    strike(t)
    strike(t)
    t.steps.append({"hold": "undo", "ms": 25000})       # jammed for 25 s
    t.checkpoint("released")
    r = t.run()
    f = faults(r, "button")
    assert f == [{"ev": "fault", "what": "button", "why": "stuck", "button": "undo", "on": True},
                 {"ev": "fault", "what": "button", "why": "stuck", "button": "undo", "on": False}]
    assert len(r.events_of("undo")) == 1                # the press itself, once
    assert status(r, "released") == ""


def test_chips_the_game_has_no_use_for_are_reported_while_they_lie_there():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket")
    t.place("big1", "b.n3")
    t.checkpoint("big")
    t.take("big1")
    t.place("small2", "b.e2")
    t.checkpoint("two")
    t.take("small2")
    t.checkpoint("clean")
    t.shoot("small", "b.pocket", "b.cup")
    r = t.run()
    f = [(e["why"], e["on"]) for e in faults(r, "chips")]
    assert f == [("big_chip", True), ("big_chip", False), ("two_small", True), ("two_small", False)]
    assert status(r, "big") == "Big chip: take it off"
    assert status(r, "two") == "Two small chips!"
    assert status(r, "clean") == ""
    assert r.events_of("shot")[0]["result"] == "strike"  # nothing lost: the shot counts


def test_a_fifth_chip_and_a_second_small_chip_in_a_trap_game():
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.place("small2", "b.n2")                           # five chips: one more than the slots
    t.checkpoint("five")
    t.take("big3")                                      # four, two of them small
    t.checkpoint("two")
    t.take("small2")
    t.checkpoint("clean")
    t.shoot("big1", "a.n3")
    r = t.run()
    f = [(e["why"], e["on"]) for e in faults(r, "chips")]
    assert f[0] == ("too_many", True) and ("too_many", False) in f
    assert f[-1] == ("two_small", False) and ("two_small", True) in f
    assert status(r, "five") == "Too many chips!"
    assert status(r, "two") == "Two small chips!"
    assert status(r, "clean") == "3 big on Zenn line a"  # back to the set-up check
    assert r.events_of("shot")[0]["chip"] == "big"      # play goes on
