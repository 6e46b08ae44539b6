# The correction screen (docs/controls.md): ok during Zenn Bowling (a game whose engine
# CORRECTS: correct(pins)) sets what the last ball counts. A part of Scoreboard
# (scoreboard/app.py), used on a button press or a redraw only.
from micropython import const

from panel.buttons import LONG

# modes (app.py's MENU ... as module-private consts: tests/test_app_modules.py checks that the
# values agree; each module keeps its own const()s so that they stay inlined, and out of its dict)
_MENU = const(0)
_GAME = const(1)

# menu pages
_PAGE_CORRECT = const(6)

# buttons (order of pins.BUTTONS)
_BTN_NEXT = const(0)
_BTN_OK = const(1)

_WHY_NOTHING = const(1)         # status_row.WHY_NAMES


class Correction:
    # -- the correction screen (docs/controls.md) ------------------------------------------------
    def open_correct(self):
        g = self.game
        if g.nlog == 0:
            self.refuse(_BTN_OK, _WHY_NOTHING)
            return
        v = self.cvals
        n = 0
        if g.lfresh:
            for k in range(11):
                v[k] = 10 - k               # X first, then 9 .. 0
            n = 11
        else:
            v[0] = 10 - g.lbase             # spare
            n = 1
            if 9 - g.lbase > 0:
                v[1] = 9 - g.lbase          # sink without a Zenn: the frame makes 9
                n = 2
            v[n] = 0                        # no basket
            n += 1
        self.ncv = n
        self.choice = 0
        for k in range(n):
            if v[k] == g.lpins:
                self.choice = k             # start at what the ball counts now
        t = self.ctitle
        t[9] = 49 + g.lp
        f = g.lf + 1
        t[12] = 49 if f > 9 else 32
        t[13] = 48 + f % 10
        t[16] = 49 + g.lb
        self.mode_before = _GAME
        self.mode = _MENU
        self.page = _PAGE_CORRECT

    def correct_button(self, b):
        # next: the next value; ok: set it; undo or turn: leave the ball as it is
        if b >= LONG:
            return
        if b == _BTN_NEXT:
            self.choice = (self.choice + 1) % self.ncv
            return
        self.mode = self.mode_before
        if b == _BTN_OK:
            g = self.game
            pins = self.cvals[self.choice]
            if pins != g.lpins:
                c = g.correct(pins)
                if c >= 0:
                    self.journal.set(c)
                    if g.over:
                        self.best_due()

    def correct_text(self):
        g = self.game
        v = self.cvals[self.choice]
        if g.lfresh:
            if v == 0:
                return b"- gutter"
            if v == 10:
                return b"X strike"
            if v == 1:
                return b"1 pin"
            p = self.pins
            p[0] = 48 + v
            return p
        if v == 0:
            return b"- no basket"
        if v == 10 - g.lbase:
            return b"/ spare"
        return b"sink: frame 9"
