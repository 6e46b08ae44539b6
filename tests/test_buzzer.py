"""The optional buzzer (firmware/panel/buzzer.py, config.json "buzzer"): the firmware in the simulator
(MicroPython, heap locked in the loop) plays each tune of sound/tunes.json, note for note, on
the pin map's buzzer pin through machine.PWM, whose model records every change; off by default.
Times are the simulator's virtual milliseconds."""
import json
import os

from boardsim.testing import Table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNES = json.load(open(os.path.join(ROOT, "sound", "tunes.json")))["tunes"]
PINMAP = json.load(open(os.path.join(ROOT, "wiring", "pinmap.json")))
LATE_MS = 3             # a note may start this much late (the loop idles 2 ms at rest); the
                        # notes are timed from the tune's start, so the next one is as short


def played(log):
    """The tunes heard: [[(hz, ms), ...] per tune], rests inside a tune kept as (0, ms); a gap
    longer than 600 ms (or the end) closes a tune."""
    segs = []
    f = d = 0
    t0 = None
    for t, gpio, hz, duty in log:
        assert gpio == PINMAP["buzzer"]["pin"]
        if t0 is not None and t > t0:
            segs.append((t0, t, f if d else 0))
        f, d, t0 = hz, duty, t
    tunes = []
    cur = []
    for a, b, hz in segs:
        if hz == 0 and b - a > 600:
            if cur:
                tunes.append(cur)
            cur = []
            continue
        if cur and cur[-1][0] == hz and hz:
            raise AssertionError("two notes of one pitch run together")
        cur.append((hz, b - a))
    if cur:
        tunes.append(cur)
    # a tune's last note ends with the duty set to 0: a rest that follows belongs to no tune
    return [[n for n in tune] for tune in tunes]


def same_tune(heard, name):
    want = [tuple(n) for n in TUNES[name]]
    assert [h for h, _ in heard] == [h for h, _ in want], (name, heard)
    for (h, ms), (_, want_ms) in zip(heard, want):
        assert abs(ms - want_ms) <= LATE_MS, (name, heard)
    assert abs(sum(ms for _, ms in heard) - sum(ms for _, ms in want)) <= LATE_MS


def test_bowling_plays_strike_spare_split_and_the_game_s_end():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")     # X
    t.place("small", "a.pocket").shoot("small", "b.e2")                                # 8
    t.shoot("small", "b.pocket", "b.cup").take("small")                                # /
    t.place("small", "a.pocket").shoot("small", "b.e2")                                # 8
    t.shoot("small", {"hit": "side"}, "b.pocket", "b.cup").take("small")               # / split
    for _ in range(7):
        t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")
    t.place("small", "a.pocket").shoot("small", "b.z3")                                # 7 ...
    t.shoot("small", "b.n2")                                                           # ... 7-
    t.advance_time_and_run(2000)
    r = t.run(config={"buzzer": True})
    assert r.last("game_over")
    tunes = played(r.state["pwm"])
    names = ["strike", "spare", "split"] + ["strike"] * 7 + ["game_over"]
    assert len(tunes) == len(names), tunes
    for heard, name in zip(tunes, names):
        same_tune(heard, name)
    assert r.state["pwm"][-1][3] == 0                  # silent at the end


def test_trap_plays_escaped_trapped_and_the_game_s_end():
    t = Table("trap2", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.e2")                                   # escaped
    t.shoot("big1", "a.n3", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                                 # trapped: round 1 over
    for c in ("big1", "big2", "big3", "small"):
        t.take(c)
    t.place_all({"big1": "b.zline", "big2": "b.zline", "big3": "b.zline", "small": "center"})
    t.shoot("big1", "b.z3", knocks={"small": ["a.back4"]})
    t.press("turn")
    t.shoot("small", "a.cup3")                                 # trapped: the game is over
    t.advance_time_and_run(2000)
    r = t.run(config={"buzzer": True})
    assert r.last("game_over")["game"] == "trap2"
    tunes = played(r.state["pwm"])
    names = ["escaped", "trapped", "game_over"]
    assert len(tunes) == len(names), tunes
    for heard, name in zip(tunes, names):
        same_tune(heard, name)


def test_without_the_setting_the_buzzer_pin_stays_silent():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")
    r = t.run()
    assert r.last("shot")["result"] == "strike"
    assert r.state["pwm"] == []
