# The screens, drawn on the OLED's 21 x 8 text grid (ssd1306.py) from the game objects.
# Allocation-free: every row is composed in one preallocated line buffer and handed to the
# driver, whose cell cache skips unchanged cells and whose dirty pages send only what changed,
# so drawing the same screen twice costs a little CPU and no I2C traffic. Each draw_* call sets
# every row (text and inversion), so a screen never depends on what was shown before it.
# Call a draw_* function when something changed, not every loop turn: a changed bowling screen
# costs a few ms of Python on the RP2040 (most of it the engine's cum()).
#
# Bowling screen (the bowler's view):
#   0  P1 Frame 3 Ball 1       header, in negative (game over: "P1 Total 187")
#   1  Place in pocket         what to do next
#   2  |  X| 9/| 72|  X| 8-|   marks, frames 1-5 (the frame being played in negative)
#   3  | 20| 37| 46| 66| 74|   running totals under them (blank while not known)
#   4  |   |   |   |   |   |   marks, frames 6-10 (the tenth up to three: "X9/")
#   5  |   |   |   |   |   |   running totals
#   6   P1 187 P2 203 P3  99   every player's total (the player up in negative)
#   7  Split!                  status: a fault (in negative) before "Split!"; with 4-6
#                              players this row holds the totals of P4-P6 instead of "Split!"
#
# A ball's result (held=1, app.py keeps it for Scoreboard.RESULT_MS): the sheet of the player
# who shot, the header naming the ball played, row 1 the result in negative ("Strike!",
# "Spare!", "Split! Spare", "8 pins", "Gutter", "No basket" ...), the frame just played
# highlighted; then the next player's sheet as above.
#
# RAM: 21 + 4 bytes of buffers and the object itself.
from micropython import const

from displays.ssd1306 import COLS
from tables.board_table import END_ZONES
from displays.digits import Row

# the games' values these screens read, private copies (inlined, and the screens import no
# game module; tests/test_registry.py checks them): games/bowling.py's
_PROMPT_PLACE_POCKET = const(0)
_PROMPT_PLACE_PIN_POCKET = const(1)
_PROMPT_PLACE_CENTER = const(2)
_PROMPT_SHOOT = const(3)
_PROMPT_GAME_OVER = const(4)
_RES_STRIKE = const(0)
_RES_SPARE = const(1)
_RES_SINK9 = const(2)
_RES_PINS = const(3)
_RES_GUTTER = const(4)
# games/trap.py's _PROMPT_*
_TP_SETUP = const(1)
_TP_SHOOT = const(2)
_TP_SMALL = const(3)
_TP_BIG = const(4)
_TP_BOTH = const(5)
_TP_OVER = const(6)

_STATUS = const(7)      # the bottom row: faults
_PROMPT = const(1)

_BAR = const(124)       # '|': the font draws it over the full cell height

# how a Trap Zenn game ended (rules_trap's reason 1..6), in one bytes object: reason r is
# _REASON[_REASON_AT[r]:_REASON_AT[r + 1]]
_REASON = b"stuckhit a bigoff boardin a cup15 shotssank small"
_REASON_AT = b"\x00\x00\x05\x0e\x17\x1f\x27\x31"

# what one Trap Zenn shot decided (rules_trap's lres 1..8), shown while it is held; 9: the
# trapper left the small chip in a backcourt
_SHOT = (b"Trapped: stuck!Trapped: hit a big!Trapped: off board!Trapped: in a cup!"
         b"Out of shots!Big sank small!Escaped!Penalty: +5 shotsIn the backcourt!")
_SHOT_AT = b"\x00\x00\x0f\x22\x35\x47\x54\x63\x6b\x7c\x8d"


# the board's sections as players call them (docs/playing.md's picture), for "Put back: b E":
# zone z of an end (0..8: back4 cup3 pocket zline z3 e2 n2 n3 cup), 9 the centre circle
_PLACE = b'4pt3ptpocketZenn lineZEinner Nouter Ncup lipcentre'
_PLACE_AT = b'\x00\x03\x06\x0c\x15\x16\x17\x1e%,2'


# the games' screens (games/registry.py names them): f(ui, engine, setup, held)
def bowling(ui, game, setup, held):
    ui.draw_bowling(game, -1, held)


def trap(ui, t, setup, held):
    ui.draw_trap(t, setup, held)


def _prompt_text(prompt):
    if prompt == _PROMPT_PLACE_POCKET:
        return b"Place in pocket"
    if prompt == _PROMPT_PLACE_PIN_POCKET:
        return b"Place in pin pocket"
    if prompt == _PROMPT_PLACE_CENTER:
        return b"Place in centre"
    if prompt == _PROMPT_SHOOT:
        return b"Shoot where it lies"
    if prompt == _PROMPT_GAME_OVER:
        return b"Game over"
    return b""


class UI(Row):
    # the row being composed is digits.Row's (_blank, _put, _num), COLS cells
    def __init__(self, oled):
        Row.__init__(self, COLS)
        self.d = oled
        self._mk = bytearray(4)        # one frame's marks
        self._fault = None             # bytes shown on the status row, or None

    # -- rows ------------------------------------------------------------------------------
    def _show(self, row, bar=0, a=0, k=0):
        # the composed line onto row `row`: the whole row in negative when bar, else cells
        # a..a+k-1 in negative
        self.d.row(row, self._ln, bar, a, k)

    def line(self, row, buf, off=0, n=-1, center=False, inv=False):
        # a whole row of text (padded with blanks), centred or from the left, optionally as
        # a bar in negative
        if n < 0:
            n = len(buf) - off
        if n > COLS:
            n = COLS
        self._blank()
        self._put((COLS - n) // 2 if center else 0, buf, off, n)
        self._show(row, 1 if inv else 0)

    def clear(self):
        self._blank()
        for r in range(8):
            self._show(r)

    def prompt(self, buf):
        # the prompt line (row 1) of a game screen
        self.line(_PROMPT, buf)

    def fault(self, buf):
        # a fault line in negative on the bottom row, kept on every screen until fault(None)
        # (which blanks the row; the next draw_* fills it again)
        self._fault = buf
        if buf is None:
            self._blank()
            self._show(_STATUS)
        else:
            self.line(_STATUS, buf, 0, -1, False, True)

    def _status(self):
        # the fault line if there is one; True when it took the row
        if self._fault is None:
            return False
        self.line(_STATUS, self._fault, 0, -1, False, True)
        return True

    # -- menu -------------------------------------------------------------------------------
    def draw_menu(self, title, choice, hint, off=0, n=-1):
        # title as a bar on top, the current choice (choice[off:off + n]; n = -1: to the end)
        # highlighted in the middle, a hint below
        self.line(0, title, 0, -1, True, True)
        self._blank()
        self._show(1)
        self._show(2)
        if n < 0:
            n = len(choice) - off
        if n > COLS - 2:
            n = COLS - 2
        a = (COLS - n - 2) // 2
        self._put(a + 1, choice, off, n)
        self._show(3, 0, a, n + 2)
        self._blank()
        self._show(4)
        self._show(5)
        self._show(6)
        if not self._status():
            self.line(_STATUS, hint, 0, -1, True)

    # -- bowling ----------------------------------------------------------------------------
    def draw_bowling(self, game, player=-1, held=0):
        # the sheet of `player` (0-based; -1: the player up); held: the last ball's result, on
        # the sheet of the player who played it
        if held and game.lp >= 0:
            p = game.lp
            over = False
            f1 = game.lf + 1
            b1 = game.lb + 1
            cur = game.lf
        else:
            held = 0
            p = game.player if player < 0 else player
            over = game.over
            f1 = game.frame + 1
            b1 = game.ball + 1
            cur = -1 if over or p != game.player else game.frame
        ln = self._ln
        d = self.d
        # header
        self._blank()
        ln[0] = 80                                  # P
        c = self._num(1, p + 1, 1)
        if over:
            c = self._put(c, b" Total ")
            self._num(c, game.total(p), 3)
        else:
            c = self._put(c, b" Frame ")
            c = self._num(c, f1, 2 if f1 > 9 else 1)
            c = self._put(c, b" Ball ")
            self._num(c, b1, 1)
        d.row(0, ln, 1)
        # prompt, or the result in negative
        self._blank()
        if held:
            self._ball_result(game)
        elif over:
            self._game_over(game)
        elif game.prompt == _PROMPT_SHOOT and game.away >= 0:
            self._put_back(game.away)
        else:
            pr = game.prompt
            c = self._put(0, _prompt_text(pr))
            if pr == _PROMPT_PLACE_POCKET or pr == _PROMPT_PLACE_PIN_POCKET:
                # which end's pocket: the shooter's, or the pin side's
                e = game.shooter_end if pr == _PROMPT_PLACE_POCKET else 1 - game.shooter_end
                ln[c + 1] = 97 + e
        d.row(_PROMPT, ln, held)
        # the frames, two rows of five, marks over running totals. The engine's arrays are
        # read here where its methods would cost a call a frame (issue 13: the verdict's screen
        # is drawn between the chip's rest and the score shown): frames from nf[p] on have no
        # balls (marks() gives 0 for them), cums[] is what cum() returns for a player in the game
        known = True
        nfp = game.nf[p]
        cums = game.cums
        kc = p * 10                             # (bowling's FRAMES)
        mk = self._mk
        for h in range(2):
            self._blank()
            ln[0] = _BAR
            a = 0
            for k in range(5):
                f = 5 * h + k
                base = 1 + 4 * k
                if f < nfp:
                    n = game.marks(p, f, mk, 0)
                    if n > 3:
                        n = 3
                    if n > 0:
                        self._put(base + 3 - n, mk, 0, n)
                ln[base + 3] = _BAR
                if f == cur:
                    a = base
            if cur >= 5 * h and cur < 5 * h + 5:
                d.row(2 + 2 * h, ln, 0, a, 3)
            else:
                d.row(2 + 2 * h, ln)
            self._blank()
            ln[0] = _BAR
            for k in range(5):
                base = 1 + 4 * k
                if known:
                    v = cums[kc + 5 * h + k]
                    if v < 0:
                        known = False           # and so are all later frames
                    else:
                        self._num(base, v, 3)
                ln[base + 3] = _BAR
            d.row(3 + 2 * h, ln)
        # totals, three players a row
        np = game.players
        up = p if held else -1 if over else game.player
        self._totals(game, 6, 0, np if np < 3 else 3, up)
        if self._status():
            return
        if np > 3:
            self._totals(game, 7, 3, np, up)
        else:
            self._blank()
            if game.last_split:
                self._put(0, b"Split!")
            d.row(_STATUS, ln)

    def _totals(self, game, row, p0, p1, up):
        self._blank()
        a = 0
        k = 0
        for q in range(p0, p1):
            c = 7 * (q - p0)                        # " P1 187": the blank pads the highlight
            self._ln[c + 1] = 80                    # P
            self._num(c + 2, q + 1, 1)
            self._num(c + 4, game.total(q), 3)
            if q == up:
                a = c
                k = 7
        self.d.row(row, self._ln, 0, a, k)

    def _put_back(self, z):
        # after an undo, until the chip is seen there: "Put back: b E", "Put back: centre"
        c = self._put(0, b"Put back: ")
        if z >= 2 * END_ZONES:
            z = 9
        else:
            self._ln[c] = 97 + z // END_ZONES          # a or b
            c += 2
            z = z % END_ZONES
        a = _PLACE_AT[z]
        self._put(c, _PLACE, a, _PLACE_AT[z + 1] - a)

    def _ball_result(self, game):
        # the last ball's result in words, centred on the line being composed
        r = game.lres
        if r == _RES_PINS:
            v = game.lpins
            c = 7 if v > 1 else 8
            c = self._num(c, v, 1)
            self._put(c, b" pins" if v > 1 else b" pin")
            return
        if r == _RES_STRIKE:
            t = b"Strike!"
        elif r == _RES_SPARE:
            t = b"Split! Spare" if game.last_split else b"Spare!"
        elif r == _RES_SINK9:
            t = b"Sunk: 9 pins" if game.lfresh else b"Sunk, no Zenn: 9"
        elif r == _RES_GUTTER:
            t = b"Gutter"
        else:
            t = b"No basket"
        self._put((COLS - len(t)) // 2, t)

    def _game_over(self, game):
        # "Game over", and who won when there was more than one player
        c = self._put(0, b"Game over")
        if game.players < 2:
            return
        win = game.winner()
        if win < 0:
            self._put(c, b", a tie")
        else:
            c = self._put(c, b", P")
            c = self._num(c, win + 1, 1)
            self._put(c, b" wins")

    # -- trap zenn ------------------------------------------------------------------------
    # Trap screen:
    #   0  Trap Zenn 1             header, in negative ("Trap Zenn 2  Round 1")
    #   1  P1 trap: shoot          what to do next (prompt)
    #   2  Trapper P1  Fugit. P2   the roles (the player up in negative)
    #   3  Shots  7  Left  8       the trapper's shots (Trap Zenn 2: "Shots 7 Pen 5")
    #   4  Turn shot 2 of 3        or "Escape shot!" for the fugitive
    #   5  R1 P1 12  R2 P2  9      Trap Zenn 2: each round's shots + penalty
    #   6  P1 wins: trapped stuck  the result, once the game is over
    #   7  Same chip twice!        status: a fault, a foul, or the set-up check
    def draw_trap(self, t, setup, held=0):
        # t: rules_trap.Trap; setup: -1 not checked, 0 wrong, 1 right (before the first shot);
        # held: row 6 shows what the last shot decided, in negative
        ln = self._ln
        self._blank()
        c = self._put(0, b"Trap Zenn ")
        c = self._num(c, t.variant, 1)
        if t.variant == 2:
            c = self._put(c, b"  Round ")
            self._num(c, t.round + 1, 1)
        self._show(0, 1)
        # prompt
        self._blank()
        p = t.prompt
        if p == _TP_SETUP:
            self._put(0, b"Set up the chips")
        elif p == _TP_SMALL:
            self._put(0, b"Small chip to centre")
        elif p == _TP_BIG:
            self._put(0, b"Big chip to centre")
        elif p == _TP_BOTH:
            self._put(0, b"Chips to centre")
        elif p == _TP_OVER:
            self._put(0, b"Game over")
        elif p == _TP_SHOOT:
            ln[0] = 80
            c = self._num(1, t.player, 1)
            c = self._put(c, b" trap: shoot" if t.role == 0 else b" flee: shoot")
        self._show(_PROMPT)
        # roles
        self._blank()
        self._put(0, b"Trapper P")
        self._num(9, t.trapper, 1)
        self._put(12, b"Fugit. P")
        self._num(20, 3 - t.trapper if t.trapper else 0, 1)
        if t.over or t.trapper == 0:
            self._show(2)
        elif t.role == 0:
            self._show(2, 0, 0, 10)
        else:
            self._show(2, 0, 12, 9)
        # shots
        self._blank()
        c = self._put(0, b"Shots ")
        c = self._num(c, t.shots, 3)
        if t.variant == 1:
            c = self._put(c, b"  Left ")
            self._num(c, t.shots_left if t.shots_left > 0 else 0, 2)
        else:
            c = self._put(c, b"  Pen ")
            self._num(c, t.rpen[t.round], 2)
        self._show(3)
        # turn
        self._blank()
        if not t.over:
            if t.role == 1:
                self._put(0, b"Escape shot!" if t.escape else b"Fugitive's turn")
            else:
                c = self._put(0, b"Turn shot ")
                c = self._num(c, t.turn_shots + 1 if t.turn_shots < 3 else 3, 1)
                self._put(c, b" of 3")
        self._show(4)
        # rounds (Trap Zenn 2)
        self._blank()
        if t.variant == 2:
            for r in range(2):
                if r > t.round:
                    break
                c = 11 * r
                c = self._put(c, b"R")
                c = self._num(c, r + 1, 1)
                c = self._put(c, b" P")
                c = self._num(c, t.round_trapper(r), 1)
                c = self._num(c + 1, t.round_total(r), 3)
        self._show(5)
        # result
        self._blank()
        h = t.result() if held else 0
        if h:
            a = _SHOT_AT[h]
            n = _SHOT_AT[h + 1] - a
            self._put((COLS - n) // 2, _SHOT, a, n)
        elif t.over:
            if t.winner:
                ln[0] = 80
                c = self._num(1, t.winner, 1)
                c = self._put(c, b" wins: ")
            else:
                c = self._put(0, b"A tie: ")
            r = t.reason
            if 0 < r < len(_REASON_AT) - 1:
                a = _REASON_AT[r]
                self._put(c, _REASON, a, _REASON_AT[r + 1] - a)
        self._show(6, 1 if h else 0)
        if self._status():
            return
        self._blank()
        if t.lfoul == 1:
            self._put(0, b"Same chip twice!")
        elif t.lfoul == 2:
            self._put(0, b"Out of turn!")
        elif t.lfoul == 3:
            self._put(0, b"No shots left")
        elif setup == 1:
            self._put(0, b"Set-up OK")
        elif setup == 0:
            c = self._put(0, b"3 big on Zenn line ")
            ln[c] = 96 + t.trapper                  # the trapper's end: a or b
        self._show(_STATUS)

