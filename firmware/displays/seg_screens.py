# The screens on the seven-segment rows (max7219.py): the same calls as ui.UI (draw_menu,
# draw_bowling, draw_trap, fault) so app.py drives either or both. Allocation-free: each row
# is composed in one preallocated 8-byte line and handed to the driver, which marks only the
# digits that changed. Layouts (docs/displays.md has pictures); a chain shorter than three
# modules shows only the top rows.
#
#   Bowling                 Trap Zenn 1              Trap Zenn 2
#   0  P1 F 3-1             tr1 FL2                  tr1 FL2      (dot: the player up)
#      player, frame-ball   trapper, fugitive
#   1  tot  187             Sh 7 L 8                 Sh 7 P 5     (shots used / left, penalty)
#      the player's total   shots used, left
#   2  Shoot                tUrn 2                   r2 tUrn2     what to do next
#      PoCKEt, SPLit        ESCAPE, SEtUP oK         r1 FLEE
#   game over:
#   0  donE P1              tr1 FL2                  1.  12 2.  9 (row 1: each player's
#   1  tot  300             Sh15 L 0                 round total, shots + penalty)
#   2  P2  192              P1 StUC                  P2 15Sh      (winner, result code)
#
# Result codes: StUC trapped_stuck, hit trapped_hit, oFF trapped_off, CUP trapped_basket,
# 15Sh out_of_shots, SAnK trapper_sank_small.
#
# The bottom row shows app.py's notice while there is one: a fault as "Err" and its first
# word, another notice as its word (_NOTICE: rEStorEd, bESt P1, not YEt ...).
#
# A shot's result while app.py holds it (held=1): bowling rows 0-1 are the ball played and
# its player's total, row 2 the result (StriKE, SPArE, SPLit, 8 PinS, GUttEr, no SPArE,
# SUnK 9); Trap Zenn row 2 the shot's word (trAPPEd, ESCAPEd, PEnALty, In bACK, ...).
from micropython import const

from displays.max7219 import DIGITS
from displays.digits import Row

# the games' values these screens read, private copies (inlined, and the screens import no
# game module; tests/test_registry.py checks them): games/bowling.py's
_PROMPT_PLACE_POCKET = const(0)
_PROMPT_PLACE_PIN_POCKET = const(1)
_PROMPT_PLACE_CENTER = const(2)
_PROMPT_SHOOT = const(3)
_RES_STRIKE = const(0)
_RES_SPARE = const(1)
_RES_SINK9 = const(2)
_RES_PINS = const(3)
_RES_GUTTER = const(4)
# games/trap.py's _PROMPT_*
_TP_SETUP = const(1)
_TP_SMALL = const(3)
_TP_BIG = const(4)
_TP_BOTH = const(5)

_P = const(80)

# a registry line's fields (games/registry.py): a game's title, and how the digits spell it
_TITLE = const(2)
_SEG_TITLE = const(10)

# the OLED menu's words (app.py) and what the digits show for them: one bytes object (a
# tuple of pairs took 36 objects of heap), each entry [length of the long word, length
# of the short one, the long word, the short one]; SegUI._word() looks one up. (A game's
# title is its registry line's SEG_TITLE: SegUI.games.)
_SHORT = (
    b"\x04\x04" b"Game" b"PLAy"
    b"\x07\x07" b"Players" b"PLAyErS"
    b"\x0b\x03" b"Shooter end" b"End"
    b"\x07\x07" b"Trapper" b"trAPPEr"
    b"\x09\x04" b"Coin flip" b"Coin"
    b"\x08\x02" b"Player 1" b"P1"
    b"\x08\x02" b"Player 2" b"P2"
    b"\x0f\x07" b"P1 won the flip" b"P1 FLiP"
    b"\x0f\x07" b"P2 won the flip" b"P2 FLiP"
    b"\x0c\x04" b"Winner traps" b"trAP"
    b"\x0c\x04" b"Winner flees" b"FLEE"
    b"\x09\x05" b"New game?" b"nEW ?"
    b"\x08\x08" b"ok = yes" b"oK = yES"
    b"\x0a\x07" b"other = no" b"ELSE no"
    b"\x09\x07" b"next / ok" b"nEXt oK"
    b"\x0a\x04" b"Best games" b"bESt"
    b"\x0c\x04" b"Best bowling" b"bESt"
    b"\x0e\x04" b"Quickest traps" b"FASt"
    b"\x0e\x07" b"next / ok=back" b"nEXt oK"
)

# app.py's notices that are no fault (docs/displays.md), in _SHORT's form; a first byte with
# 0x80 set is a prefix (its length in the low bits): the row is the word and then the first
# word after the prefix ("New best! P1 is #1" reads "bESt P1"). Any other notice is a fault.
_NOTICE = (
    b"\x0d\x08" b"Game restored" b"rEStorEd"
    b"\x12\x08" b"Watchdog: restored" b"Err boot"
    b"\x12\x07" b"Wait: chips moving" b"SLidin9"
    b"\x14\x07" b"Nothing to take back" b"no Undo"
    b"\x07\x07" b"Not now" b"not YEt"
    b"\x14\x08" b"Button not used here" b"not USEd"
    b"\x13\x06" b"Unsure: check chips" b"UnSUrE"
    b"\x11\x06" b"Calibration saved" b"StorEd"
    b"\x8a\x05" b"New best! " b"bESt "
    b"\x8d\x04" b"Board empty: " b"bAd "
    b"\x89\x03" b"Measured " b"Ch "
)


def _word_len(buf, off):
    # the length of the word at buf[off]: up to a space or the end
    k = off
    n = len(buf)
    while k < n and buf[k] != 32:
        k += 1
    return k - off


# the result codes (rules_trap's reason 1..6) in one bytes object: code r is
# _REASON[_REASON_AT[r]:_REASON_AT[r + 1]]
_REASON = b"StUChitoFFCUP15ShSAnK"
_REASON_AT = b"\x00\x00\x04\x07\x0a\x0d\x11\x15"

# what one Trap Zenn shot decided (Trap.result() 1..9), while it is held
_SHOT = b"trAPPEdtrAPPEdtrAPPEdtrAPPEdoUt 15SAnKESCAPEdPEnALtyIn bACK"
_SHOT_AT = b"\x00\x00\x07\x0e\x15\x1c\x22\x26\x2d\x34\x3b"


# the games' screens (games/registry.py names them): f(ui, engine, setup, held)
def bowling(ui, game, setup, held):
    ui.draw_bowling(game, -1, held)


def trap(ui, t, setup, held):
    ui.draw_trap(t, setup, held)


def _same(t, j, buf, off, n):
    # t[j:j + n] == buf[off:off + n], without a slice
    for k in range(n):
        if t[j + k] != buf[off + k]:
            return False
    return True


class SegUI(Row):
    # the row being composed is digits.Row's (_blank, _put, _num), DIGITS wide; a number too
    # wide for its digits shows as '-'
    def __init__(self, seg, games=()):
        Row.__init__(self, DIGITS, 45)
        self.d = seg
        self._fault = None
        self.games = games      # the registry's lines (display_set.py): their SEG_TITLEs

    # -- rows -------------------------------------------------------------------------------
    def _show(self, row, dps=0):
        self.d.line(row, self._ln, dps)

    def _word(self, row, buf, off=0, n=-1):
        # a whole row: the digits' word for the OLED's buf[off:off + n] (_SHORT), or that
        self._blank()
        if n < 0:
            n = len(buf) - off
        g = self.games
        for k in range(len(g)):             # a game's title: its line's SEG_TITLE
            t = g[k][_TITLE]
            s = g[k][_SEG_TITLE]
            if s is not None and len(t) == n and _same(t, 0, buf, off, n):
                self._put(0, s, 0, len(s))
                self._show(row)
                return
        t = _SHORT
        i = 0
        end = len(t)
        while i < end:
            a = t[i]
            j = i + 2
            if a == n and _same(t, j, buf, off, n):
                self._put(0, t, j + a, t[i + 1])
                self._show(row)
                return
            i = j + a + t[i + 1]
        self._put(0, buf, off, n)
        self._show(row)

    def _status(self, row):
        # the notice on `row` if there is one; True when it took it. A notice that is no fault
        # reads as its word (_NOTICE), a fault as "Err" and its first word
        f = self._fault
        if f is None:
            return False
        self._blank()
        n = len(f)
        t = _NOTICE
        i = 0
        end = len(t)
        while i < end:
            a = t[i] & 0x7F
            j = i + 2
            w = t[i + 1]
            if (a == n or (t[i] & 0x80 and a < n)) and _same(t, j, f, 0, a):
                col = self._put(0, t, j + a, w)
                if t[i] & 0x80:             # and the first word after the prefix
                    self._put(col, f, a, _word_len(f, a))
                self._show(row)
                return True
            i = j + a + w
        self._put(0, b"Err ")
        self._put(4, f, 0, _word_len(f, 0))
        self._show(row)
        return True

    def _last(self):
        return self.d.rows - 1 if self.d.rows < 3 else 2

    def fault(self, buf):
        # a fault shown on the bottom row until fault(None); the next draw_* restores the row
        self._fault = buf
        if buf is not None:
            self._status(self._last())

    def clear(self):
        self._blank()
        for r in range(self.d.rows):
            self._show(r)

    # -- menu -------------------------------------------------------------------------------
    def draw_menu(self, title, choice, hint, off=0, n=-1):
        self._word(0, title)
        self._word(1, choice, off, n)
        if not self._status(2):
            self._word(2, hint)
        self._rest(3)

    def _rest(self, r0):
        self._blank()
        for r in range(r0, self.d.rows):
            self._show(r)

    # -- bowling ------------------------------------------------------------------------------
    def draw_bowling(self, game, player=-1, held=0):
        p = game.player
        ln = self._ln
        np = game.players
        held = held and game.lp >= 0
        if game.over and not held:
            win = game.winner()
            self._blank()
            self._put(0, b"donE")
            if np > 1:
                if win < 0:
                    self._put(5, b"tiE")
                else:
                    ln[5] = _P
                    self._num(6, win + 1, 1)
            self._show(0)
            q = win if win >= 0 else 0
            self._total_row(1, b"tot", q, game)
            # the runner-up (the other player of two; the next best of more)
            self._blank()
            if np > 1:
                second = -1
                best = -1
                for k in range(np):
                    t = game.total(k)
                    if k != q and t > best:
                        best = t
                        second = k
                ln[0] = _P
                self._num(1, second + 1, 1)
                self._num(5, best, 3)
            if not self._status(2):
                self._show(2)
            self._rest(3)
            return
        # P1 F 3-1: the player up, or while held the ball just played
        f = game.frame
        b = game.ball
        if held:
            p = game.lp
            f = game.lf
            b = game.lb
        self._blank()
        ln[0] = _P
        self._num(1, p + 1, 1)
        ln[3] = 70                                  # F
        self._num(4, f + 1, 2)
        ln[6] = 45                                  # -
        self._num(7, b + 1, 1)
        self._show(0)
        self._total_row(1, b"tot", p, game)
        if not self._status(2):
            self._blank()
            pr = game.prompt
            r = game.lres if held else 0
            if held and r == _RES_PINS:
                c = self._num(0, game.lpins, 1)
                self._put(c + 1, b"PinS" if game.lpins > 1 else b"Pin")
            elif held and r == _RES_STRIKE:
                self._put(0, b"StriKE")
            elif held and r == _RES_SPARE and not game.last_split:
                self._put(0, b"SPArE")
            elif held and r == _RES_SINK9:
                self._put(0, b"SUnK 9")
            elif held and r == _RES_GUTTER:
                self._put(0, b"GUttEr")
            elif held and r != _RES_SPARE:
                self._put(0, b"no SPArE")
            elif game.last_split:
                self._put(0, b"SPLit")
            elif pr == _PROMPT_PLACE_POCKET:
                self._put(0, b"PoCKEt")
            elif pr == _PROMPT_PLACE_PIN_POCKET:
                self._put(0, b"Pin PoCK")
            elif pr == _PROMPT_PLACE_CENTER:
                self._put(0, b"CEntEr")
            elif pr == _PROMPT_SHOOT:
                self._put(0, b"Shoot")
            self._show(2)
        self._rest(3)

    def _total_row(self, row, word, p, game):
        self._blank()
        self._put(0, word)
        self._num(5, game.total(p), 3)
        self._show(row)

    # -- trap zenn ------------------------------------------------------------------------------
    def draw_trap(self, t, setup, held=0):
        ln = self._ln
        # roles, the player up marked by his digit's decimal point
        self._blank()
        self._put(0, b"tr")
        self._num(2, t.trapper, 1)
        self._put(4, b"FL")
        self._num(6, 3 - t.trapper if t.trapper else 0, 1)
        dps = 0
        if not t.over and t.player:
            dps = 1 << (2 if t.player == t.trapper else 6)
        self._show(0, dps)
        # shots
        self._blank()
        if t.variant == 2 and t.over:
            # each player's round as trapper: shots + penalty, lower wins
            for r in range(2):
                q = t.round_trapper(r)
                c = 0 if q == 1 else 4
                self._num(c, q, 1)
                self._num(c + 1, t.round_total(r), 3)
            self._show(1, 1 | (1 << 4))
        else:
            self._put(0, b"Sh")
            self._num(2, t.shots, 2)
            if t.variant == 1:
                ln[5] = 76                          # L
                self._num(6, t.shots_left if t.shots_left > 0 else 0, 2)
            else:
                ln[5] = _P
                self._num(6, t.rpen[t.round], 2)
            self._show(1)
        # what now, or the result
        if self._status(2):
            self._rest(3)
            return
        self._blank()
        c = 0
        r = t.result() if held else 0
        if r:
            a = _SHOT_AT[r]
            self._put(0, _SHOT, a, _SHOT_AT[r + 1] - a)
        elif t.over:
            if t.winner:
                ln[0] = _P
                self._num(1, t.winner, 1)
            else:
                self._put(0, b"tiE")
            r = t.reason
            if 0 < r < len(_REASON_AT) - 1:
                a = _REASON_AT[r]
                self._put(3, _REASON, a, _REASON_AT[r + 1] - a)
        else:
            if t.variant == 2:
                ln[0] = 114                         # r
                self._num(1, t.round + 1, 1)
                c = 3
            p = t.prompt
            if p == _TP_SETUP:
                c = self._put(c, b"SEtUP")
                if setup == 1:
                    self._put(c + 1, b"oK")
                elif setup == 0:
                    self._put(c + 1, b"no")
            elif p == _TP_SMALL or p == _TP_BIG or p == _TP_BOTH:
                self._put(c, b"CEntEr")
            elif t.lfoul:
                self._put(c, b"FouL")
            elif t.role == 1:
                self._put(c, (b"ESCAPE" if c == 0 else b"ESC") if t.escape else b"FLEE")
            else:
                c = self._put(c, b"tUrn")
                if c < DIGITS - 1 and t.variant == 1:
                    c += 1
                self._num(c, t.turn_shots + 1 if t.turn_shots < 3 else 3, 1)
        self._show(2)
        self._rest(3)
