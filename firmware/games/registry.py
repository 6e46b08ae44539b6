# The games the scoreboard plays: the one place a game is registered (docs/architecture.md,
# "Adding a game"). The menus, the journal, the event names, the displays, the best games and
# the simulator (boardsim/games.py reads this file) all take their list of games from here.
#
# A game is its rules module (games/<game>.py, an engine class with the interface in
# docs/architecture.md), its screens (a function per display, f(ui, engine, setup, held)) and
# one line below:
#   ID       the journal's game byte (storage/journal.py): never renumber or reuse one, saved
#            games name their game by it
#   NAME     the game as the event stream spells it ("game": NAME)
#   TITLE    its entry in the menu's "Game" page (in this order, before the tools)
#   MODULE, CLASS  its engine: one object per class, built at boot and shared by the games it
#            plays (Trap plays trap1 and trap2)
#   VARIANT  what the engine's begin() is told: which of its games
#   SETUP    its start pages (SETUP_*, scoreboard/menus.py)
#   PLAYERS  the most players (SETUP_PLAYERS_END asks 1 .. PLAYERS)
#   BEST     what the best games keep of it (BEST_*, storage/best.py)
#   OLED, SEG  its screen on each display, "module.function"; None: that display shows nothing
#            of it
from micropython import const

# start pages: what the menu asks before the game starts, and the header the journal keeps
SETUP_PLAYERS_END = const(0)    # "Players" 1 .. PLAYERS, "Shooter end" a / b: o1 the end (0, 1)
SETUP_TRAPPER = const(1)        # two players, "Trapper" coin flip / P1 / P2 (after a flip the
                                # winner's choice): o1 the first trapper, o2 1 after a coin flip

# the best games (best.zb)
BEST_NONE = const(0)
BEST_TOTAL = const(1)           # each player's total, the highest first ('B' records)
BEST_TRAP = const(2)            # each trapped round's shots + penalty, the fewest first ('T')

ID = const(0)
NAME = const(1)
TITLE = const(2)
MODULE = const(3)
CLASS = const(4)
VARIANT = const(5)
SETUP = const(6)
PLAYERS = const(7)
BEST = const(8)
OLED = const(9)
SEG = const(10)

GAMES = (
    (1, b"bowling", b"Zenn Bowling", "games.bowling", "Bowling", 0, SETUP_PLAYERS_END, 6, BEST_TOTAL,
     "displays.oled_screens.bowling", "displays.seg_screens.bowling"),
    (2, b"trap1", b"Trap Zenn 1", "games.trap", "Trap", 1, SETUP_TRAPPER, 2, BEST_TRAP,
     "displays.oled_screens.trap", "displays.seg_screens.trap"),
    (3, b"trap2", b"Trap Zenn 2", "games.trap", "Trap", 2, SETUP_TRAPPER, 2, BEST_TRAP,
     "displays.oled_screens.trap", "displays.seg_screens.trap"),
)


def index(gid):
    # the registry's index of the game whose journal byte is gid, -1 for none
    for k in range(len(GAMES)):
        if GAMES[k][ID] == gid:
            return k
    return -1


def index_of_name(name):
    for k in range(len(GAMES)):
        if GAMES[k][NAME] == name:
            return k
    return -1


def name_of(module, variant):
    # the event stream's name of an engine's game (the engine's begin() asks)
    for g in GAMES:
        if g[MODULE] == module and g[VARIANT] == variant:
            return g[NAME]
    return b""


def load(spec):
    # "package.module.attr" -> that attribute, the module imported (boot only: allocates)
    i = spec.rfind(".")
    a = spec[i + 1:]
    return getattr(__import__(spec[:i], None, None, (a,)), a)


def engines(ev):
    # one engine per class, for every game in the order above (boot only: allocates)
    out = []
    for k in range(len(GAMES)):
        g = GAMES[k]
        e = None
        for j in range(k):
            if GAMES[j][MODULE] == g[MODULE] and GAMES[j][CLASS] == g[CLASS]:
                e = out[j]
        if e is None:
            e = load(g[MODULE] + "." + g[CLASS])(ev)
        out.append(e)
    return tuple(out)


def start(k, engine, players, o1, o2):
    # game k on its engine, from its start pages' answers (or a journal's header); False when
    # there is no such game or its rules refuse these options
    if k < 0 or k >= len(GAMES):
        return False
    return engine.begin(GAMES[k][VARIANT], players, o1, o2)
