"""Games are registered in one place (firmware/games/registry.py, docs/architecture.md "Adding a
game"): a new game is its module, its screens and one line in the registry. Shown here with a toy
game (tests/support/toy_game, not shipped): copied into a copy of the firmware with one line added
to the registry, then played through the simulator (the menu, the journal, the displays, the event
stream), under MicroPython with the heap locked in the loop and under CPython."""
import ast
import glob
import io
import json
import os
import re
import shutil
import threading
import urllib.request

import pytest

from boardsim import games as G
from boardsim.scenario import ScenarioError, parse
from boardsim.testing import Table
from records import journal_record
from runtimes import run_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
TOY = os.path.join(ROOT, "tests", "support", "toy_game")
LAST_LINE = '    "games.trap",           # Trap Zenn 1 and 2\n'
# the toy's copy of the firmware made once, on one test worker (tests/conftest.py): each copy
# is a new folder, whose .mpy build for the unix port (boardsim/mpycache.py, keyed by the folder)
# is made again, about 2 s of CPU on each worker that runs one of its tests
ONE_WORKER = ("toy_firmware",)


def test_the_registry_lists_the_shipped_games_in_the_menus_order():
    got = [(g.id, g.name, g.title, g.setup, g.players) for g in G.games(FIRMWARE)]
    assert got == [(1, "bowling", "Zenn Bowling", "players_end", 6),
                   (2, "trap1", "Trap Zenn 1", "trapper", 2),
                   (3, "trap2", "Trap Zenn 2", "trapper", 2)]
    with pytest.raises(ScenarioError, match=r"unknown game 'toy' \(bowling, trap1 or trap2\)"):
        parse({"game": "toy", "players": 1, "steps": []})


def test_each_modules_copy_of_the_line_fields_agrees_with_the_registry():
    # a module that reads a registry line keeps its own private consts for the fields (inlined)
    def consts(path):
        return G._consts(ast.parse(open(path).read()))       # (the simulator's reader of them)
    fields = {k: v for k, v in consts(os.path.join(FIRMWARE, "games", "registry.py")).items()
              if k.startswith("_")}
    assert set(fields) >= {"_ID", "_NAME", "_TITLE", "_ENGINE", "_VARIANT", "_SETUP", "_PLAYERS",
                           "_BEST", "_OLED", "_SEG", "_SEG_TITLE"}
    readers = 0
    for path in glob.glob(os.path.join(FIRMWARE, "**", "*.py"), recursive=True):
        if path.endswith("registry.py"):
            continue
        text = open(path).read()
        if "registry" not in text:
            continue
        mine = {k: v for k, v in consts(path).items() if k in fields}
        readers += bool(mine)
        for k, v in mine.items():
            assert v == fields[k], (path, k, v, fields[k])
    assert readers >= 5         # menus, journal, best, display_set, seg_screens


@pytest.fixture(scope="module")
def toy_firmware(tmp_path_factory):
    """A copy of the firmware with the toy game added the documented way: its module, its
    screens, one line in the registry."""
    fw = str(tmp_path_factory.mktemp("toy") / "firmware")
    shutil.copytree(FIRMWARE, fw, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(TOY, "games", "toy.py"), os.path.join(fw, "games", "toy.py"))
    shutil.copy(os.path.join(TOY, "displays", "toy_screens.py"), os.path.join(fw, "displays"))
    reg = os.path.join(fw, "games", "registry.py")
    text = open(reg).read()
    assert text.count(LAST_LINE) == 1
    with open(reg, "w") as f:
        f.write(text.replace(LAST_LINE, LAST_LINE + '    "games.toy",\n'))
    return fw


@pytest.fixture
def toy(toy_firmware, monkeypatch):
    monkeypatch.setenv("BOARDSIM_FIRMWARE", toy_firmware)
    return toy_firmware


def toy_game(runtime):
    t = Table("toy", players=2, runtime=runtime)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")    # P1: 2
    t.place("small", "a.pocket").shoot("small", "b.e2")                               # P2: 1
    t.checkpoint("held")
    t.take("small").place("small", "a.pocket").shoot("small", "off")                  # P1: 0
    return t


@pytest.mark.parametrize("runtime", ["micropython", "cpython"])
def test_a_toy_game_added_in_one_line_is_played_through_the_simulator(toy, runtime):
    assert [g.name for g in G.games()][-1] == "toy"
    t = toy_game(runtime)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")                  # P2: 2
    t.checkpoint("over")
    r = t.run(config={"display": "both"})
    r.assert_event("game", game="toy", players=2)
    shots = [(e["player"], e["points"], e["total"]) for e in r.events_of("shot")]
    assert shots == [(1, 2, 2), (2, 1, 1), (1, 0, 2), (2, 2, 3)]
    r.assert_event("game_over", game="toy", totals=[2, 3])
    # its screens: the OLED's and the seven segments', as the registry line names them
    held = r.display_at("held")
    assert held[0].strip() == "Toy game" and held[1].strip() == "P2 +  1", held
    over = r.display_at("over")
    assert over[1].strip() == "Game over" and over[2].strip() == "P1   2  P2   3", over
    assert r.seg_at("over")[0].strip() == "P1 2 3", r.seg_at("over")
    assert not r.events_of("fault"), r.events_of("fault")


def test_a_toy_game_comes_back_after_a_power_cut(toy):
    # the journal keeps it by its registry ID and plays it back through its engine
    t = toy_game("micropython")
    t.power_cut().power_on()
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")                  # P2: 2
    r = t.run()
    r.assert_event("restored", game="toy", entries=3)
    assert [e["total"] for e in r.events_of("shot")] == [2, 1, 2, 3]
    r.assert_event("game_over", game="toy", totals=[2, 3])


@pytest.mark.parametrize("game,gid,players,o1,o2,codes", [
    ("bowling", 1, 2, 0, 0, [14, 14, 9]),       # P1: b.e2, then no basket; P2: b.back4
    ("trap2", 3, 2, 2, 1, [1 << 4, 2 << 4, 128]),   # P2 traps first (coin): two shots, end of turn
])
def test_a_game_saved_before_the_registry_is_restored(game, gid, players, o1, o2, codes):
    # the journal's game byte is the game's ID, as before: a file written by the firmware before
    # the registry (header and entries byte for byte as docs/persistence.md has them) loads
    serial = 5
    data = journal_record(0x47, b"ZNJ1" + bytes([1]) + serial.to_bytes(4, "little") + bytes([gid, players, o1, o2]))
    for c in codes:
        data += journal_record(0x4F, bytes([c]))
    r = Table(game, players=2).run(flash={"zj%d.zj" % (serial % 8): data})
    r.assert_event("restored", game=game, entries=len(codes), torn=False)
    assert not [e for e in r.events_of("fault") if e.get("what") == "journal"], r.events


# -- every place that lists the games picks the toy up ----------------------------------------
TOY_EVENTS = [{"ev": "game", "game": "toy", "players": 2},
              {"ev": "shot", "player": 1, "game": "toy", "points": 2, "total": 2},
              {"ev": "undo", "game": "toy", "player": 1},
              {"ev": "restored", "game": "toy", "entries": 3, "reset": "power", "torn": False},
              {"ev": "game_over", "game": "toy", "totals": [2, 3]}]
TOY_WORDS = ["New game: Toy game, 2 players", "P1 shot: points 2, total 2",
             "Shot taken back: P1 plays again",
             "Game restored after a power cut: Toy game, 3 entries played back",
             "Game over: totals 2 3"]


def test_no_game_name_or_title_is_written_outside_the_registry():
    # the places that once listed the games themselves now read the registry: its titles and
    # (seven segments) SEG_TITLEs appear nowhere else
    titles = [g.title for g in G.games(FIRMWARE)]
    places = ["boardsim/render.py", "boardsim/serve.py", "boardsim/web/board.js", "boardsim/web/play.html",
              "boardsim/web/replay.html", "tools/scoremon.py", "firmware/displays/seg_screens.py",
              "firmware/scoreboard/menus.py", "firmware/displays/display_set.py"]
    for rel in places:
        text = open(os.path.join(ROOT, rel)).read()
        for t in titles + ["boWLing", "trAP 1", "trAP 2"]:
            assert not re.search(r"""["'>`]%s["'<`]""" % re.escape(t), text), (rel, t)


def test_the_host_side_reads_the_toy_from_the_registry(toy, tmp_path):
    from boardsim import render
    from boardsim.serve import make_server
    from tools import scoremon
    assert G.title("toy") == "Toy game"
    # the replay's and the log's words
    assert [render.describe_event(e) for e in TOY_EVENTS] == TOY_WORDS
    out = tmp_path / "replay.html"
    render.render_html([], TOY_EVENTS, str(out), desc={"width": 1, "length": 1})
    data = json.loads(re.search(r"const DATA = (.*);\n", out.read_text()).group(1))
    assert {"name": "toy", "title": "Toy game", "setup": "players_end", "players": 2} in data["games"]
    # the terminal scoreboard's title
    m = scoremon.Monitor()
    for e in TOY_EVENTS[:2]:
        m.feed(json.dumps(e))
    con = scoremon.Console(file=io.StringIO(), width=80)
    con.print(m.render())
    assert "Toy game" in con.file.getvalue() and "points 2" in con.file.getvalue(), con.file.getvalue()
    # the play page's list (api/board), from the firmware the server runs
    srv, session = make_server(port=0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/"
        with urllib.request.urlopen(url + "api/board", timeout=30) as r:
            games = json.load(r)["games"]
        assert games[-1] == {"name": "toy", "title": "Toy game", "setup": "players_end", "players": 2}
        assert [g["name"] for g in games] == [g.name for g in G.games()]
        _play_page_starts_the_toy(url)
    finally:
        srv.shutdown()
        srv.server_close()
        session.close()


def _play_page_starts_the_toy(url):
    # in a real browser (skipped without one, as tests/test_play.py): the form offers the toy
    # with its start pages' choices, starts it, and its events read in the same words as above
    from browser import ARGS, CHROMIUM, missing
    if missing():
        pytest.skip(missing())
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1200, "height": 950})
            errors = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(url)
            pg.wait_for_function("typeof view !== 'undefined' && view && document.querySelector('#tray div')")
            opts = pg.eval_on_selector_all("#game option", "os => os.map((o) => [o.value, o.textContent])")
            assert opts == [[g.name, g.title] for g in G.games()]
            pg.select_option("#game", "toy")
            assert pg.eval_on_selector_all("#players option", "os => os.map((o) => o.value)") == ["1", "2"]
            assert pg.is_visible("#end-l") and not pg.is_visible("#trapper-l")
            assert pg.evaluate("(evs) => evs.map(ZennBoard.describeEvent)", TOY_EVENTS) == TOY_WORDS
            pg.click("#new-game")
            pg.wait_for_function("document.querySelector('#events').innerText.includes('New game: Toy game, 2 players')",
                                 timeout=30000)
            pg.wait_for_function("document.querySelector('#oled-text').innerText.includes('Toy game')", timeout=30000)
            assert not errors, errors
        finally:
            browser.close()


SEG_MENU = """
import json
from games import registry
from displays.seg_screens import SegUI


class Seg:          # the driver's row calls, kept as text
    rows = 3

    def __init__(self):
        self.text = ["", "", ""]

    def line(self, row, ln, dps=0):
        self.text[row] = bytes(ln).decode()


games = registry.games()
d = Seg()
u = SegUI(d, games)
out = []
for g in games:
    u.draw_menu(b"Game", g[2], b"next / ok")
    out.append(d.text[1].rstrip())
print(json.dumps(out))
"""


def test_the_seven_segment_menu_spells_the_toys_title_from_its_line(toy, tmp_path):
    # seg_screens has no list of titles: a game's registry line says how the digits spell it
    fw = os.environ["BOARDSIM_FIRMWARE"]
    got, _ = run_target(SEG_MENU, "micropython", tmp_path=tmp_path, dirs=(fw, "boardsim/target"))
    assert got == ["boWLing", "trAP 1", "trAP 2", "toY"]
