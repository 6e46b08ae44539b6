# A toy game, not shipped (tests/test_registry.py adds it to a copy of the firmware): what a new
# game is, through the game interface (docs/architecture.md, "Adding a game"). Each player in
# turn shoots the small chip ROUNDS times: into a cup 2 points, at rest on the board 1, off the
# board (or lifted) 0. The highest total wins.
from micropython import const
from tracking.shot import FATE_REST, FATE_CUP_A, FATE_CUP_B

MAX_PLAYERS = const(2)
ROUNDS = const(2)
_MAX_SHOTS = const(4)           # MAX_PLAYERS * ROUNDS
_SETUP_PLAYERS_END = const(0)   # games/registry.py's values
_BEST_NONE = const(0)


class Toy:
    CORRECTS = False            # ok corrects nothing
    BIG_CHIPS = 0               # a big chip has no business on the board
    TURN = -1                   # no turn button

    def __init__(self, events):
        self.ev = events
        self.name = GAMES[0][1]
        self.log = bytearray(_MAX_SHOTS)        # outcomes: the points of each shot
        self.nlog = 0
        self.totals = bytearray(MAX_PLAYERS)
        self.players = 0
        self.player = 0
        self.over = False
        self.lp = -1                            # the last shot's player, its points
        self.lpts = 0

    # -- the game interface ------------------------------------------------------------------
    def begin(self, variant, players, o1, o2):
        if players < 1 or players > MAX_PLAYERS:
            return False
        self.players = players
        self.nlog = 0
        self._rebuild()
        ev = self.ev
        if ev is not None:
            ev.begin(b"game")
            ev.str_(b"game", self.name)
            ev.int_(b"players", players)
            ev.end()
        return True

    def on_shot(self, res):
        if self.players == 0 or self.over:
            return -1
        m = res.mover if res.mover >= 0 else 0
        f = res.fate[m]
        code = 2 if f == FATE_CUP_A or f == FATE_CUP_B else 1 if f == FATE_REST else 0
        self.apply_outcome(code)
        ev = self.ev
        if ev is not None:
            ev.begin(b"shot")
            ev.int_(b"player", self.lp + 1)
            ev.str_(b"game", self.name)
            ev.int_(b"points", code)
            ev.int_(b"total", self.totals[self.lp])
            ev.end()
            if self.over:
                ev.begin(b"game_over")
                ev.str_(b"game", self.name)
                ev.arr(b"totals")
                for p in range(self.players):
                    ev.int_(None, self.totals[p])
                ev.close_arr()
                ev.end()
        return code

    def apply_outcome(self, code):
        if self.players == 0 or self.over or code < 0 or code > 2:
            return False
        self.log[self.nlog] = code
        self.nlog += 1
        self._step(code)
        return True

    def undo(self):
        if self.nlog == 0:
            return False
        self.nlog -= 1
        self._rebuild()
        return True

    def end_turn(self):
        return False

    def result(self):
        return 1 if self.lp >= 0 else 0        # each shot's points are held on the displays

    def own_status(self):
        return 0

    def setup_state(self, tracker):
        return -1

    def weigh(self, res):
        return

    def placed(self, tracker):
        return False

    def tune(self, T):
        return T.GAME_OVER if self.over else -1

    # -- the state, from the log -------------------------------------------------------------
    def _rebuild(self):
        for p in range(MAX_PLAYERS):
            self.totals[p] = 0
        self.player = 0
        self.over = False
        self.lp = -1
        for i in range(self.nlog):
            self._step(self.log[i])

    def _step(self, code):
        p = self.player
        self.totals[p] += code
        self.lp = p
        self.lpts = code
        self.player = (p + 1) % self.players
        if self.nlog >= self.players * ROUNDS:
            self.over = True


#  ID, NAME, TITLE, ENGINE, VARIANT, SETUP, PLAYERS, BEST, screens (OLED, SEG), SEG_TITLE
GAMES = ((200, b"toy", b"Toy game", Toy, 0, _SETUP_PLAYERS_END, MAX_PLAYERS, _BEST_NONE,
          "displays.toy_screens.oled", "displays.toy_screens.seg", b"toY"),)
