# The menus (docs/controls.md): choosing a game (games/registry.py lists them) and its start
# pages (players and end, or trapper and coin flip: the game's SETUP), the "New game?" question
# and the best games' pages. A part of Scoreboard (scoreboard/app.py: Scoreboard inherits
# Menus), used on a button press or a redraw, never in the scan itself.
from micropython import const
import time

from panel.buttons import LONG
from scoreboard.heap import forget as _forget

# modes (app.py's MENU ... as module-private consts: tests/test_app_modules.py checks that the
# values agree; each module keeps its own const()s so that they stay inlined, and out of its dict)
_MENU = const(0)
_GAME = const(1)
_CALIB = const(3)
_SENSORS = const(4)

# menu pages
_PAGE_GAME = const(0)
_PAGE_PLAYERS = const(1)
_PAGE_END = const(2)
_PAGE_TRAPPER = const(3)
_PAGE_ROLE = const(4)
_PAGE_RESTART = const(5)
_PAGE_CORRECT = const(6)
_PAGE_BEST = const(7)

# buttons (order of pins.BUTTONS)
_BTN_NEXT = const(0)
_BTN_OK = const(1)
_BTN_UNDO = const(2)
_BTN_TURN = const(3)

_WHY_NOT_HERE = const(3)        # status_row.WHY_NAMES

# a registry line's fields (games/registry.py; the games are self.games, the registry's order)
_ID = const(0)
_TITLE = const(2)
_VARIANT = const(4)
_SETUP = const(5)
_PLAYERS = const(6)
_SETUP_PLAYERS_END = const(0)   # SETUP: "Players", "Shooter end" (else "Trapper", coin flip)

# The menus' choices, each list in one bytes object (a tuple of bytes took an object each):
# choice c of _X is _X[_X_AT[c]:_X_AT[c + 1]], drawn from there without a slice (_menu()).
# The "Game" page: the registry's games (their TITLE), then the tools
_TOOLS = b"Calibrate padsSensor testBest games"
_TOOLS_AT = b"\x00\x0e\x19\x23"
_TOOL_CALIB = const(0)
_TOOL_BEST = const(2)
_TRAPPER = b"Coin flipPlayer 1Player 2"
_TRAPPER_AT = b"\x00\x09\x11\x19"
_ROLE = b"Winner trapsWinner flees"
_ROLE_AT = b"\x00\x0c\x18"
FLIP_WON = (b"P1 won the flip", b"P2 won the flip")


class Menus:
    def menu_button(self, b):
        p = self.page
        if p == _PAGE_BEST:
            # next: the next entry; any other button back to the menu
            if b < LONG:
                if b == _BTN_NEXT:
                    self.choice = (self.choice + 1) % len(self.best_lines)
                else:
                    self.page = _PAGE_GAME
                    self.choice = len(self.games) + _TOOL_BEST
                    self.best_lines = ()
            return
        if p == _PAGE_CORRECT:
            self.correct_button(b)
            return
        if p == _PAGE_RESTART:
            if b == _BTN_OK:
                self.page = _PAGE_GAME
                self.choice = 0
                self.mode_before = _MENU
                self.journal.end()          # the game is left: not restored at the next boot
                self.check_chips()
            elif b < LONG:
                self.mode = self.mode_before
            return
        if b >= LONG:
            return
        if b == _BTN_UNDO or b == _BTN_TURN:
            self.refuse(b, _WHY_NOT_HERE)
            return
        ng = len(self.games)
        if b == _BTN_NEXT:
            n = ng + 3 if p == _PAGE_GAME else 3
            if p == _PAGE_PLAYERS:
                n = self.games[self.game_choice][_PLAYERS]
            elif p == _PAGE_END or p == _PAGE_ROLE:
                n = 2
            self.choice = (self.choice + 1) % n
        elif b == _BTN_OK:
            c = self.choice
            self.choice = 0
            if p == _PAGE_GAME:
                if c == ng + _TOOL_BEST:
                    self.best_job = 2           # read outside the loop turn (service())
                    self.need_service = 1
                    self.choice = c
                    return
                if c >= ng:
                    self.start_tool(_CALIB if c == ng + _TOOL_CALIB else _SENSORS)
                    return
                self.game_choice = c
                if self.games[c][_SETUP] == _SETUP_PLAYERS_END:
                    self.page = _PAGE_PLAYERS
                else:
                    self.page = _PAGE_TRAPPER
            elif p == _PAGE_PLAYERS:
                self.players = c + 1
                self.page = _PAGE_END
            elif p == _PAGE_END:
                self.start_game(self.players, c, 0)
            elif p == _PAGE_TRAPPER:
                if c == 0:
                    self.flip_winner = self.flip_coin()
                    self.page = _PAGE_ROLE
                else:
                    self.start_game(2, c, 0)
            elif p == _PAGE_ROLE:
                w = self.flip_winner
                self.start_game(2, w if c == 0 else 3 - w, 1)

    def flip_coin(self):
        # the scoreboard's coin: the pads' noise and the time of the press
        v = time.ticks_us()
        g = self.scan.grid
        for i in range(0, len(g), 7):
            v ^= g[i]
        v ^= v >> 8
        v ^= v >> 4
        v ^= v >> 2
        v ^= v >> 1
        w = (v & 1) + 1
        self.ev.begin(b"coin")
        self.ev.int_(b"winner", w)
        self.ev.end()
        return w

    def start_game(self, players, o1, o2):
        # the game chosen (game_choice: its registry index) with its start pages' answers
        k = self.game_choice
        g = self.engines[k]
        self.mode = _GAME
        self.game = g
        g.begin(self.games[k][_VARIANT], players, o1, o2)
        self.journal.new_game(self.games[k][_ID], players, o1, o2)
        self.setup = -1
        self.check_setup()
        self.check_chips()

    def draw_page(self, u):
        # the menu page on the displays (Scoreboard.redraw, mode MENU)
        p = self.page
        c = self.choice
        if p == _PAGE_GAME:
            ng = len(self.games)
            if c < ng:
                u.draw_menu(b"Game", self.games[c][_TITLE], b"next / ok")
            else:
                _menu(u, b"Game", _TOOLS, _TOOLS_AT, c - ng, b"next / ok")
        elif p == _PAGE_PLAYERS:
            d = self.digit
            d[0] = 49 + c
            u.draw_menu(b"Players", d, b"next / ok")
        elif p == _PAGE_END:
            d = self.digit
            d[0] = 97 + c                       # "a" or "b"
            u.draw_menu(b"Shooter end", d, b"next / ok")
        elif p == _PAGE_TRAPPER:
            _menu(u, b"Trapper", _TRAPPER, _TRAPPER_AT, c, b"next / ok")
        elif p == _PAGE_ROLE:
            _menu(u, FLIP_WON[self.flip_winner - 1], _ROLE, _ROLE_AT, c, b"next / ok")
        elif p == _PAGE_RESTART:
            u.draw_menu(b"New game?", b"ok = yes", b"other = no")
        elif p == _PAGE_CORRECT:
            u.draw_menu(self.ctitle, self.correct_text(), b"next / ok / undo=no")
        elif p == _PAGE_BEST:
            t, line = self.best_lines[c]
            u.draw_menu(t, line, b"next / ok=back")

    # -- best games (best.py, docs/persistence.md) -------------------------------------------------
    def best_due(self):
        self.best_job = 1
        self.need_service = 1

    def best_service(self):
        # outside the loop turn: a game that ended goes into best.zb (job 1), or the best games
        # are read for the menu (job 2); best.py is imported for it and dropped again
        job = self.best_job
        self.best_job = 0
        from storage import best
        g = self.game if self.mode == _GAME else None
        lines, notice = best.service(self.ev, job, g, self.journal.serial)
        _forget("storage.best")
        _forget("games.registry")          # (best.py reads it)
        if notice is not None:
            self.notice = notice
        if job == 2:
            self.best_lines = lines
            self.mode = _MENU
            self.page = _PAGE_BEST
            self.choice = 0
        self.dirty = 1


def _menu(u, title, words, at, c, hint):
    # a menu screen whose choice is word c of `words` (the lists above)
    a = at[c]
    u.draw_menu(title, words, hint, a, at[c + 1] - a)
