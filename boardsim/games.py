"""The firmware's games as its registry lists them (firmware/games/registry.py and each game
module's GAMES table), read from the source on the host, so that the scenarios (scenario.py)
and the menu presses (compile.py) know every game the firmware plays without a list of their own.

    for g in games():  g.name, g.title, g.setup ("players_end" | "trapper"), g.players (most)
    title("trap1")     "Trap Zenn 1" (the menu's title; an unknown name as it is)
    as_json()          [{"name", "title", "setup", "players"}]: the play page's and the HTML
                       replay's list (boardsim/serve.py's api/board, render.py)

Host-side viewers (render.py, web/board.js, tools/scoremon.py) take every game's name and title
from here; what they draw of one game's own events (a bowling sheet, a trap game's rounds) is
keyed by the contract's name for it, and a game without a sheet of its own reads in words.

The firmware folder is the repository's, or $BOARDSIM_FIRMWARE (runtime.firmware_dir()): a test
plays a game added to a copy of the firmware that way (tests/test_registry.py).
"""
import ast
import os
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # (no shapely: tools/scoremon)

SETUPS = {"_SETUP_PLAYERS_END": "players_end", "_SETUP_TRAPPER": "trapper"}
FIELDS = ("ID", "NAME", "TITLE", "ENGINE", "VARIANT", "SETUP", "PLAYERS", "BEST", "OLED", "SEG")


@dataclass(frozen=True)
class Game:
    id: int
    name: str
    title: str
    setup: str          # "players_end" or "trapper" (the registry's SETUP_*)
    players: int        # the most players
    module: str


def firmware_dir():
    return os.environ.get("BOARDSIM_FIRMWARE") or os.path.join(ROOT, "firmware")


_memo = {}


def games(firmware=None):
    """Every game the firmware's registry lists, in the menu's order."""
    fw = firmware or firmware_dir()
    reg = os.path.join(fw, "games", "registry.py")
    key = (fw, os.stat(reg).st_mtime_ns)
    if key not in _memo:
        _memo[key] = tuple(_read(fw, reg))
    return _memo[key]


def by_name(firmware=None):
    return {g.name: g for g in games(firmware)}


def title(name, firmware=None):
    """The game's title on the menu (its registry line's TITLE); a name the registry does not
    list, as it is."""
    g = by_name(firmware).get(name)
    return g.title if g else str(name)


def as_json(firmware=None):
    return [{"name": g.name, "title": g.title, "setup": g.setup, "players": g.players}
            for g in games(firmware)]


def names_text(names):
    """"bowling, trap1 or trap2"."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _consts(tree):
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "const":
                v = v.args[0]
            if isinstance(v, ast.Constant):
                out[node.targets[0].id] = v.value
    return out


def _value(node, names):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, node.id)         # an engine's class: its name
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, names) for e in node.elts)
    raise ValueError(f"cannot read {ast.dump(node)[:60]} in a GAMES table")


def _read(fw, reg):
    with open(reg) as f:
        rtree = ast.parse(f.read())
    rconst = _consts(rtree)
    modules = next(ast.literal_eval(n.value) for n in rtree.body
                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "MODULES")
    fields = {k: rconst["_" + k] for k in FIELDS}
    setups = {rconst[k]: v for k, v in SETUPS.items()}
    for m in modules:
        path = os.path.join(fw, *m.split(".")) + ".py"
        with open(path) as f:
            tree = ast.parse(f.read())
        names = dict(rconst)
        names.update(_consts(tree))
        table = next(n.value for n in tree.body
                     if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "GAMES")
        for line in _value(table, names):
            yield Game(id=line[fields["ID"]], name=line[fields["NAME"]].decode(),
                       title=line[fields["TITLE"]].decode(), setup=setups[line[fields["SETUP"]]],
                       players=line[fields["PLAYERS"]], module=m)
