"""The seven-segment stack (firmware/displays/max7219.py, firmware/displays/seg_screens.py, the simulator's
boardsim/target/max7219_model.py) and the configuration that picks the displays
(firmware/storage/config.py, firmware/displays/display_set.py, app.py).

The driver talks to the model through the simulator's own `machine` stand-in: a real SPI
object forwarding the bytes and a real chip-select Pin whose rising edge latches the chain,
so what is checked is what the chips would receive. The unit cases run under the MicroPython
unix port (drawing and sending with the heap locked: an allocation fails the case) and under
CPython; the model reads digits with its own table of how people read segment patterns.
The end-to-end cases play games through the real firmware with a config.json.
"""
import json
import os
import sys
from pathlib import Path

import pytest

from boardsim.testing import Table
from runtimes import case_result as get, cases_fixture, mpy_cross_armv6m

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"

CASES = r'''
import sys
import vclock
sys.modules["time"] = vclock
import machine
from driver import heap_locked, run_cases
from displays.max7219 import MAX7219, FONT
from max7219_model import MAX7219Model, READING
from displays.seg_screens import SegUI
from storage import config
from games import bowling as RB
from games import trap as RT
from games import registry

GAMES = registry.games()        # the menu's titles: each line's SEG_TITLE

CS = 17


class World:
    def __init__(self, n):
        self.seg = MAX7219Model(n, CS)
        machine.watch(CS, self.seg.load_edge)
        self.fail = 0

    def spi_write(self, bus, buf):
        if self.fail:
            raise OSError(5)
        self.seg.spi_write(buf)


def rig(n=3, intensity=8):
    w = World(n)
    machine.attach(w)
    spi = machine.SPI(0)
    cs = machine.Pin(CS, machine.Pin.OUT, value=1)
    d = MAX7219(spi, cs, n, intensity)
    return w, w.seg, d


def case_init():
    w, m, d = rig(3, 5)
    out = []
    for c in m.chips:
        out.append([c.decode, c.scan_limit, c.intensity, c.shutdown, c.test])
    return {"chips": out, "rows": m.rows(), "frames": m.frames, "errors": m.errors,
            "bytes": m.bytes, "dirty": d.dirty}


def case_text():
    w, m, d = rig()
    def draw():
        d.text(0, 0, b"P1 F 3-1")
        d.text(1, 0, b"3.14")
        d.number(1, 5, 187, 3)
        d.text(2, 6, b"too long")
        d.dp(2, 0)
        return d.flush()
    sent = heap_locked(draw)
    return {"rows": m.rows(), "sent": sent, "dirty": d.dirty, "errors": m.errors}


def case_changed_only():
    w, m, d = rig()
    d.text(0, 0, b"12345678")
    d.text(1, 0, b"abcdefgh")
    d.flush()
    out = {}
    f0 = m.frames
    res = [0, 0, 0]

    def same():
        d.text(0, 0, b"12345678")
        d.text(1, 0, b"abcdefgh")
        res[0] = d.dirty
        res[1] = d.service()
    heap_locked(same)
    out["same"] = [res[0], res[1], m.frames - f0]
    writes = [c.writes for c in m.chips]
    def one():
        d.text(1, 3, b"X")                  # one digit of the middle module
        res[0] = d.dirty
        res[1] = d.service()
        res[2] = d.service()
    heap_locked(one)
    out["one"] = list(res)
    out["one_writes"] = [c.writes - writes[i] for i, c in enumerate(m.chips)]
    out["one_bytes"] = m.bytes
    out["rows"] = m.rows()
    # changed and changed back before service(): nothing to send
    def back():
        d.text(2, 0, b"Z")
        d.text(2, 0, b" ")
        return d.dirty
    out["back"] = heap_locked(back)
    # every column dirty: one frame per service() call, round robin, then nothing
    d.text(2, 0, b"--------")
    cols = [0] * 9

    def svc():
        for i in range(9):
            cols[i] = d.service()
    heap_locked(svc)
    out["svc"] = cols
    return out


def case_bus():
    w, m, d = rig()
    # bytes clocked with LOAD high are not latched
    machine.SPI(0).write(b"\x01\x7e")
    e = m.errors
    w.fail = 1
    d.text(0, 0, b"8")
    r = d.service()
    st = [r, d.dirty, d.errors]
    w.fail = 0
    return {"unframed": e, "fail": st, "retry": [d.service(), d.dirty], "rows": m.rows()}


def case_codeb():
    m = MAX7219Model(1, CS)
    machine.watch(CS, m.load_edge)
    machine._level[CS] = 0
    for reg, val in ((0x0C, 1), (0x0B, 7), (0x09, 0xFF), (0x08, 1), (0x07, 0x8A), (0x06, 12),
                     (0x01, 15)):
        m.spi_write(bytes((reg, val)))
        machine._level[CS] = 1
        m.load_edge(CS, 1)
        machine._level[CS] = 0
    machine._level[CS] = 1
    r = m.rows()[0]
    # scan limit 3: only digits 0..3 (the right half) shown
    machine._level[CS] = 0
    m.spi_write(b"\x0b\x03")
    machine._level[CS] = 1
    m.load_edge(CS, 1)
    return [r, m.rows()[0]]


def case_font():
    # every printable character the layouts use reads back as itself (or its known stand-in)
    out = {}
    for c in range(32, 127):
        out[chr(c)] = READING.get(FONT[c - 32] & 0x7F, "~")
    return out


class Game:
    # the bowling engine's display API over fixed values
    def __init__(self, players, player, frame, ball, prompt, totals, over=False, split=False):
        self.players = players
        self.player = player
        self.frame = frame
        self.ball = ball
        self.prompt = prompt
        self.totals = totals
        self.over = over
        self.last_split = split

    def total(self, p):
        return self.totals[p]

    winner = RB.Bowling.winner      # the engine's own



# app.py's notices (a few faults among them), each on its own
NOTICES = ("Game restored", "Watchdog: restored", "Wait: chips moving", "Nothing to take back",
           "Not now", "Button not used here", "Unsure: check chips", "Calibration saved",
           "New best! P2 is #1", "Board empty: 3 bad", "Measured 1398 (2)", "Config? display",
           "Journal damaged", "Flash error: no save", "Stuck button: undo", "Too many chips!",
           "Calibration damaged", "Best games: no save", "Game", "Game restored!")


def case_layouts():
    w, m, d = rig()
    u = SegUI(d, GAMES)
    out = {}
    def shot(f):
        heap_locked(f)
        d.flush()
        return m.rows()
    out["menu"] = shot(lambda: u.draw_menu(b"Game", b"Zenn Bowling", b"next / ok"))
    out["menu_unknown"] = shot(lambda: u.draw_menu(b"Something", b"Else entirely", b""))
    g = Game(2, 1, 9, 2, RB.PROMPT_PLACE_PIN_POCKET, [192, 172])
    out["bowling"] = shot(lambda: u.draw_bowling(g))
    g = Game(3, 0, 3, 1, RB.PROMPT_SHOOT, [46, 48, 12], split=True)
    out["split"] = shot(lambda: u.draw_bowling(g))
    g = Game(3, 0, 9, 2, RB.PROMPT_GAME_OVER, [300, 192, 201], over=True)
    out["over"] = shot(lambda: u.draw_bowling(g))
    g = Game(2, 0, 9, 2, RB.PROMPT_GAME_OVER, [150, 150], over=True)
    out["tie"] = shot(lambda: u.draw_bowling(g))
    out["fault"] = shot(lambda: u.fault(b"Config? display"))
    out["fault_kept"] = shot(lambda: u.draw_bowling(g))
    out["unfault"] = shot(lambda: u.fault(None) or u.draw_bowling(g))
    out["notices"] = {}
    for note in NOTICES:
        buf = note.encode()                 # (the notice is made before the heap is locked)
        out["notices"][note] = shot(lambda: u.fault(buf))[2]
    u.fault(None)
    t = RT.Trap(None)
    t.start(2, 2, False)
    out["trap2_start"] = shot(lambda: u.draw_trap(t, 0))
    out["clear"] = shot(u.clear)
    return out


def case_short_chain():
    # one module: only the top row; nothing breaks below it
    w, m, d = rig(1)
    u = SegUI(d, GAMES)
    heap_locked(lambda: u.draw_menu(b"Game", b"Trap Zenn 1", b"next / ok"))
    heap_locked(lambda: u.fault(b"Config? display"))
    d.flush()
    return m.rows()


def case_config():
    out = {}
    for name, text in (
            ("empty", "{}"),
            ("good", '{"display": "both", "sevenseg_modules": 2, "_about": "comment"}'),
            ("bad_value", '{"display": "lcd", "sevenseg_intensity": 9}'),
            ("bad_range", '{"sevenseg_modules": 9, "sevenseg_intensity": true}'),
            ("unknown", '{"colour": "red"}'),
            ("not_json", '{"display": oled}'),
            ("not_object", '["oled"]')):
        c = config.parse(text)
        out[name] = [c.values, c.faults]
    c = config.load("/nonexistent/config.json")
    out["missing"] = [c.values, c.faults, c.source]
    return out


run_cases([("init", case_init), ("text", case_text), ("changed", case_changed_only),
           ("bus", case_bus), ("codeb", case_codeb), ("font", case_font),
           ("layouts", case_layouts), ("short", case_short_chain), ("config", case_config)])
'''


# one process per runtime runs every case (tests/support/runtimes.py)
results = cases_fixture(CASES, "seg")


def test_init_configures_every_chip(results):
    r = get(results, "init")
    # decode off, all 8 digits scanned, the intensity asked for, running, test mode off
    assert r["chips"] == [[0, 7, 5, 0, 0]] * 3
    assert r["rows"] == [" " * 8] * 3
    # 4 set-up frames, 8 blanking frames, display on: each frame 2 bytes per module
    assert r["frames"] == 13 and r["bytes"] == 13 * 6
    assert r["errors"] == 0 and r["dirty"] == 0


def test_text_numbers_and_decimal_points(results):
    r = get(results, "text")
    # a '.' lights the point of the character before it; clipped at the row's end; a point
    # alone on a blank digit
    assert r["rows"] == ["P1 F 3-1", "3.14  187", " .     to"]
    assert r["sent"] == 7 and r["dirty"] == 0 and r["errors"] == 0


def test_changed_digits_only(results):
    r = get(results, "changed")
    # the same text again: nothing dirty, nothing sent
    assert r["same"] == [0, -1, 0]
    # one digit of the middle module: one column dirty, one frame, only that chip acts
    # (the others get the no-op register in the same frame)
    assert r["one"] == [1 << 3, 3, -1]
    assert r["one_writes"] == [0, 1, 0]
    assert r["rows"][1] == "abcHeF9h"          # X drawn as H; f and g as people read them
    # changed and changed back before sending: nothing to send
    assert r["back"] == 0
    # every column dirty: one frame per service() call, round robin from where it left off
    assert r["svc"] == [4, 5, 6, 7, 0, 1, 2, 3, -1]


def test_bus_framing_and_errors(results):
    r = get(results, "bus")
    assert r["unframed"] == 1                  # clocked with LOAD high: never latched
    assert r["fail"] == [-1, 1, 1]             # the column stays dirty, the error counted
    assert r["retry"] == [0, 0] and r["rows"][0] == "8       "


def test_model_code_b_and_scan_limit(results):
    # Code B: 1, '-' with its point, H, zeros, blank; then a scan limit of 3 shows digits
    # 0..3 only, the right half
    assert get(results, "codeb") == ["1-.H0000 ", "    000 "]


def test_font_reads_as_written(results):
    f = get(results, "font")
    for ch in "0123456789ACEFHJLPUbcdhinortuy-_ ":
        assert f[ch] == ch, (ch, f[ch])
    # letters with no segment form of their own are drawn as a readable stand-in
    assert (f["S"], f["s"], f["O"], f["o"], f["I"], f["M"], f["W"], f["K"], f["g"]) == \
        ("5", "5", "0", "o", "I", "N", "U", "H", "9")


def test_layouts(results):
    r = get(results, "layouts")
    assert r["menu"] == ["PLAy    ", "boULin9 ", "nEHt oH "]
    assert r["menu_unknown"] == ["5onethin", "EI5e ent", "        "]   # the OLED text, cut
    assert r["bowling"] == ["P2 F10-3", "tot  172", "Pin PoCH"]
    assert r["split"] == ["P1 F 4-2", "tot   46", "5PLit   "]
    # game over: the winner and his total, the runner-up; a tie says so
    assert r["over"] == ["donE P1 ", "tot  300", "P3   201"]
    assert r["tie"] == ["donE tiE", "tot  150", "P2   150"]
    # a fault takes the bottom row and keeps it over redraws until cleared
    assert r["fault"][2] == r["fault_kept"][2] == "Err ConF"
    assert r["unfault"][2] == "P2   150"
    # a notice that is no fault reads as its word, not as an error (a restored game is
    # "rEStorEd", not "Err Game"); faults still read "Err" and their first word
    assert r["notices"] == {
        "Game restored": "rE5torEd", "Watchdog: restored": "Err boot", "Wait: chips moving": "5Lidin9 ",
        "Nothing to take back": "no Undo ", "Not now": "not yEt ", "Button not used here": "not U5Ed",
        "Unsure: check chips": "Un5UrE  ", "Calibration saved": "5torEd  ", "New best! P2 is #1": "bE5t P2 ",
        "Board empty: 3 bad": "bAd 3   ", "Measured 1398 (2)": "Ch 1398 ", "Config? display": "Err ConF",
        "Journal damaged": "Err Jour", "Flash error: no save": "Err FIa5", "Stuck button: undo": "Err 5tuc",
        "Too many chips!": "Err too ", "Calibration damaged": "Err CaIi", "Best games: no save": "Err be5t",
        "Game": "Err Gane", "Game restored!": "Err Gane"}
    # trap: roles with the player up's point (player 2 traps first), shots and penalty
    assert r["trap2_start"] == ["tr2. FL1 ", "5h 0 P 0", "r1 5EtUP"]
    assert r["clear"] == [" " * 8] * 3


def test_a_short_chain_shows_the_top_row_and_faults(results):
    assert get(results, "short") == ["Err ConF"]


MINE = ("display", "sevenseg_modules", "sevenseg_intensity")


def test_config_validation(results):
    # the display settings (other settings share the file: only these are compared here)
    c = {name: [{k: v[0][k] for k in MINE}] + v[1:] for name, v in get(results, "config").items()}
    defaults = {"display": "oled", "sevenseg_modules": 3, "sevenseg_intensity": 8}
    assert c["missing"] == [defaults, [], "defaults"]
    assert c["empty"] == [defaults, []]
    assert c["good"] == [dict(defaults, display="both", sevenseg_modules=2), []]
    # a wrong value: a fault naming the setting and what it may be; that setting keeps its
    # default, the others are taken
    assert c["bad_value"] == [dict(defaults, sevenseg_intensity=9),
                              [["display", "display must be oled / sevenseg / both"]]]
    assert c["bad_range"] == [defaults, [["sevenseg_intensity", "sevenseg_intensity must be 0..15"],
                                         ["sevenseg_modules", "sevenseg_modules must be 1..8"]]]
    assert c["unknown"] == [defaults, [["colour", "unknown setting colour"]]]
    assert c["not_json"] == [defaults, [["", "config.json is not JSON"]]]
    assert c["not_object"] == [defaults, [["", "config.json is not an object"]]]


def test_config_module_is_general():
    # a new setting is one row of SETTINGS (the sensing front end will add one)
    sys.path.insert(0, str(FIRMWARE))
    try:
        from storage import config
    finally:
        sys.path.remove(str(FIRMWARE))
    keys = [row[0] for row in config.SETTINGS]
    assert len(keys) == len(set(keys))
    for key, default, allowed in config.SETTINGS:
        assert config.check(key, default, allowed) is None, key


# -- end to end: the firmware reads config.json at boot ---------------------------------------
def bowling_start():
    t = Table("bowling", players=2)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")
    t.place("small", "a.pocket").shoot("small", "b.e2")
    t.checkpoint("p2 result")                       # the ball's result, held (app RESULT_MS)
    t.advance_time_and_run(3000)
    t.checkpoint("p2")
    return t


def test_sevenseg_only():
    r = bowling_start().run(config={"display": "sevenseg"})
    assert r.seg_at("p2 result") == ["P2 F 1-1", "tot    0", "8 Pin5  "]
    assert r.seg_at("p2") == ["P2 F 1-2", "tot    0", "5hoot   "]
    assert r.display_at("p2") == [""] * 8          # no OLED driven
    assert not r.events_of("fault")


def test_both_displays_and_a_two_module_chain():
    r = bowling_start().run(config={"display": "both", "sevenseg_modules": 2,
                                    "sevenseg_intensity": 15})
    assert r.seg_at("p2") == ["P2 F 1-2", "tot    0"]
    assert r.display_at("p2")[0] == "P2 Frame 1 Ball 2"


def test_a_bad_config_is_reported_and_the_defaults_run():
    t = Table("bowling", players=1)
    t.place("small", "a.pocket")
    r = t.run(config={"display": "hologram", "sevenseg_modules": 3})
    assert r.events_of("fault") == [{"ev": "fault", "what": "config", "key": "display",
                                     "msg": "display must be oled / sevenseg / both"}]
    assert r.events[0]["ev"] == "boot" and r.events[1]["ev"] == "fault"
    # the default display (the OLED) runs the game; the first button press cleared the fault
    assert r.display[0] == "P1 Frame 1 Ball 1" and r.display[7] == ""
    assert r.state["seg"] == [" " * 8] * 3         # the chain is not driven


def test_a_bad_config_shows_on_the_display_until_a_button():
    from boardsim import runtime
    import io
    import tempfile
    fd, cfg = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write("{not json")
    fd, final = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        out = io.StringIO()
        runtime.run([{"op": "boot"}, {"op": "wait", "ms": 100}, {"op": "snapshot", "label": "boot"},
                     {"op": "press", "button": "next"}], stdout=out,
                    runner_args=["--config", cfg, "--final", final])
        state = json.load(open(final))
    finally:
        os.unlink(cfg)
        os.unlink(final)
    events = [json.loads(ln) for ln in out.getvalue().splitlines()]
    assert events[1] == {"ev": "fault", "what": "config", "key": "", "msg": "config.json is not JSON"}
    boot = state["snapshots"][0]["display"]
    assert boot[7] == "Config? bad file" and boot[3].strip() == "Zenn Bowling"
    assert state["display"][7].strip() == "next / ok" and state["display"][3].strip() == "Trap Zenn 1"


@pytest.mark.parametrize("name", ["storage/config.py", "displays/max7219.py", "displays/seg_screens.py",
                                  "displays/display_set.py", "scoreboard/app.py"])
def test_mpy_cross_armv6m(name, tmp_path):
    p = mpy_cross_armv6m(name, tmp_path)
    assert p.returncode == 0, p.stderr
