"""Games are registered in one place (firmware/games/registry.py, docs/architecture.md "Adding a
game"): a new game is its module, its screens and one line in the registry. Shown here with a toy
game (tests/support/toy_game, not shipped): copied into a copy of the firmware with one line added
to the registry, then played through the simulator (the menu, the journal, the displays, the event
stream), under MicroPython with the heap locked in the loop and under CPython."""
import ast
import glob
import os
import shutil

import pytest

from boardsim import games as G
from boardsim.scenario import ScenarioError, parse
from boardsim.testing import Table
from records import journal_record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
TOY = os.path.join(ROOT, "tests", "support", "toy_game")
LAST_LINE = '    "games.trap",           # Trap Zenn 1 and 2\n'


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
        out = {}
        for node in ast.parse(open(path).read()).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                v = node.value
                if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "const":
                    v = v.args[0]
                if isinstance(v, ast.Constant):
                    out[node.targets[0].id] = v.value
        return out
    fields = {k: v for k, v in consts(os.path.join(FIRMWARE, "games", "registry.py")).items()
              if k.startswith("_")}
    assert set(fields) >= {"_ID", "_NAME", "_TITLE", "_ENGINE", "_VARIANT", "_SETUP", "_PLAYERS",
                           "_BEST", "_OLED", "_SEG"}
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
    assert readers >= 4         # menus, journal, best, display_set


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
