# The games the scoreboard plays: the one place a game is registered (docs/architecture.md,
# "Adding a game"). MODULES lists the game modules, in the order of the menu's "Game" page; each
# module's GAMES table describes its games (the game interface, docs/architecture.md), one line
# a game:
#   ID       the journal's game byte (storage/journal.py): never renumber or reuse one, saved
#            games name their game by it
#   NAME     the game as the event stream spells it ("game": NAME)
#   TITLE    its entry on the menu's "Game" page
#   ENGINE   its rules engine's class: one object per class, built at boot, shared by the
#            games it plays (Trap plays trap1 and trap2)
#   VARIANT  what the engine's begin() is told: which of its games
#   SETUP    its start pages (SETUP_*, scoreboard/menus.py)
#   PLAYERS  the most players (SETUP_PLAYERS_END asks 1 .. PLAYERS)
#   BEST     what the best games keep of it (BEST_*, storage/best.py)
#   OLED, SEG  its screen on each display: "module.function", called f(ui, engine, setup, held);
#            None: that display shows nothing of it
#   SEG_TITLE  TITLE as the seven-segment menu spells it (up to 8 digits, the digits' letters:
#            b'boWLing'); None: TITLE as it is, cut to the digits
# The menus, the journal, the displays, the best games and the simulator (boardsim/games.py)
# take their list of games from here. A module that reads a line keeps its own private copy of
# the field indices below.
from micropython import const

MODULES = (
    "games.bowling",        # Zenn Bowling
    "games.trap",           # Trap Zenn 1 and 2
)

# The values below are private consts (inlined, nothing in a module's dict): a module that uses
# one keeps its own copy, and tests/test_registry.py checks that every copy agrees with these.
# start pages: what the menu asks before the game starts (o1, o2: the journal's header)
_SETUP_PLAYERS_END = const(0)   # "Players" 1 .. PLAYERS, "Shooter end" a / b: o1 the end (0, 1)
_SETUP_TRAPPER = const(1)       # two players, "Trapper" coin flip / P1 / P2 (after a flip the
                                # winner's choice): o1 the first trapper, o2 1 after a coin flip
# the best games (best.zb)
_BEST_NONE = const(0)
_BEST_TOTAL = const(1)          # each player's total, the highest first ('B' records)
_BEST_TRAP = const(2)           # each trapped round's shots + penalty, the fewest first ('T')

# a line's fields
_ID = const(0)
_NAME = const(1)
_TITLE = const(2)
_ENGINE = const(3)
_VARIANT = const(4)
_SETUP = const(5)
_PLAYERS = const(6)
_BEST = const(7)
_OLED = const(8)
_SEG = const(9)
_SEG_TITLE = const(10)


def games():
    # every game's line, in the menu's order (imports the game modules)
    out = []
    for m in MODULES:
        for g in __import__(m, None, None, ("GAMES",)).GAMES:
            out.append(g)
    return tuple(out)


def index(games, gid):
    # the index in games() of the game whose journal byte is gid, -1 for none
    for k in range(len(games)):
        if games[k][_ID] == gid:
            return k
    return -1


def engines(games, ev):
    # an engine for every game (boot only: allocates), one object per class
    out = []
    for k in range(len(games)):
        e = None
        for j in range(k):
            if games[j][_ENGINE] is games[k][_ENGINE]:
                e = out[j]
        out.append(e if e is not None else games[k][_ENGINE](ev))
    return tuple(out)
