# Zenn Bowling: the rules engine. No pins: it takes a shot.ShotResult, turns it into a compact
# *outcome* (one byte), appends that to a log and updates the game. Everything the UI and the
# app show is derived from the log, so undo() and the journal's replay go through the same code
# (_step). Rules and decisions: docs/rules.md, "Zenn Bowling". Nothing is allocated after
# construction.
#
# Outcome byte: kind << 5 | zone
#   kind (bits 5..7) K_*: what became of the shot chip
#   zone (bits 0..4): zone id (docs/architecture.md). K_REST: the zone that gave the count;
#        K_ZENN, K_ZENN_HIT, K_SINK: the pin-side cup; K_OWN: the shooter's cup; K_OFF, K_GONE: off.
#        K_MANUAL (a ball set by hand, correct()): the pins of the ball instead of a zone.
# The pins an outcome is worth depend on the ball (first ball or spare attempt), which the
# engine knows from the log; the outcome itself only records what happened on the board.
from micropython import const
from array import array
from tracking.shot import FATE_REST, FATE_CUP_A, FATE_CUP_B, FATE_OFF, KIND_SMALL

from tables.board_table import ZONE_NAMES, END_ZONES, Z_A_CUP, Z_A_POCKET, Z_CENTER, Z_OFF, N_ZONES

MAX_PLAYERS = const(6)
FRAMES = const(10)
_MAX_BALLS = const(21)       # per player: 9 frames x 2 + 3

# outcome kinds
K_REST = const(0)           # at rest on the board
K_ZENN = const(1)           # into the pin-side cup through its gate (a Zenn)
K_ZENN_HIT = const(2)       # the same after a bumper/block hit (res.hit): a split when a spare
K_SINK = const(3)           # into the pin-side cup, not through the gate
K_OWN = const(4)            # into the shooter's own cup
K_OFF = const(5)            # off the board
K_GONE = const(6)           # vanished (lifted by hand, lost by the pads): counts as off the board
K_MANUAL = const(7)         # set by hand (a correction): bits 0..4 the ball's pins
OUT_SHIFT = const(5)
_OUT_ZONE = const(31)

# results of one ball (the shot event's "result")
RES_STRIKE = const(0)
RES_SPARE = const(1)
RES_SINK9 = const(2)
RES_PINS = const(3)
RES_GUTTER = const(4)
_RES_NO_BASKET = const(5)
# their names in the event stream, in one bytes object (a tuple of bytes took an object each):
# result r is _RES[_RES_AT[r]:_RES_AT[r + 1]]
_RES = b'strikesparesink9pinsgutterno_basket'
_RES_AT = b'\x00\x06\x0b\x10\x14\x1a\x23'
_RES_MASK = const(7)
_SPLIT = const(8)           # per-ball flag beside the result

# what the player has to do before the next shot
PROMPT_PLACE_POCKET = const(0)       # put the chip in the shooter's pocket (a fresh first ball)
PROMPT_PLACE_PIN_POCKET = const(1)   # put it in the pin-side pocket (after a sink without Zenn)
PROMPT_PLACE_CENTER = const(2)       # put it in the center circle (after off / own cup / gone)
PROMPT_SHOOT = const(3)              # shoot it from where it lies
PROMPT_GAME_OVER = const(4)
PROMPT_NONE = const(5)               # no game started

# pins for a chip at rest after a first ball, by zone relative to its end:
#            back4 cup3 pocket zline z3 e2 n2 n3 cup(lip: counts as its cup3)
_PINS_PIN = b'\x05\x09\x09\x00\x07\x08\x08\x07\x09'
_PINS_SHOOTER = b'\x01\x02\x02\x00\x04\x06\x06\x03\x02'



class Bowling:
    # the game interface (docs/architecture.md, "Adding a game"): ok opens the correction screen
    # (scoreboard/correction.py: correct()); no big chip belongs on the board; no turn button
    CORRECTS = True
    BIG_CHIPS = 0
    TURN = -1

    def __init__(self, events):
        self.ev = events                    # events.EventWriter (or None: silent)
        self.name = GAMES[0][1]             # the event stream's "game"
        self.log = bytearray(MAX_PLAYERS * _MAX_BALLS)   # outcomes, in the order played
        self.nlog = 0
        self.pins = bytearray(MAX_PLAYERS * _MAX_BALLS)  # per player and ball: pins
        self.bres = bytearray(MAX_PLAYERS * _MAX_BALLS)  # per player and ball: RES_* | _SPLIT
        self.fstart = bytearray(MAX_PLAYERS * FRAMES)   # per player and frame: its first ball
        self.nb = bytearray(MAX_PLAYERS)                # balls played, per player
        self.nf = bytearray(MAX_PLAYERS)                # frames started, per player
        self.ndone = bytearray(MAX_PLAYERS)             # frames finished, per player
        # per player and frame: the running score, -1 while not known. Kept up to date by
        # apply_outcome and _rebuild, so that cum() and total(), which a redraw calls for every
        # frame and player, read it instead of adding up the frames again (docs/performance.md)
        self.cums = array('h', (-1,) * (MAX_PLAYERS * FRAMES))
        self._m = bytearray(3)                          # marks of one frame, for game_over
        self.players = 0
        self.shooter_end = 0                # 0: end a, 1: end b
        # where the game stands (all 0-based)
        self.player = 0
        self.frame = 0
        self.ball = 0
        self.over = False
        self.prompt = PROMPT_NONE
        self.fresh = True                   # the next ball is a first ball (a fresh rack)
        self.base = 0                       # otherwise: the pins of the ball before it
        self.last_split = False             # the last ball was a split (a spare after a hit)
        # after an undo: the zone the chip goes back to before the ball is played again (the
        # undo event's "put_back"), -1 once app.py sees it there, after the next ball, or when
        # not known (the ball before was set by hand)
        self.away = -1
        # the last ball played (for the shot event)
        self.lp = -1
        self.lf = 0
        self.lb = 0
        self.lpins = 0
        self.lres = 0
        self.lkind = 0
        self.lzone = 0
        self.lfresh = True                  # the last ball was a first ball (a fresh rack) ...
        self.lbase = 0                      # ... or a spare attempt after this many pins

    # -- the game interface (app.py, journal.py: games/registry.py's start()) ----------------
    def begin(self, variant, players, o1, o2):
        return self.start(players, o1)

    def result(self):
        return 1                            # every ball's result is held on the displays

    def own_status(self):
        return self.last_split              # "Split!" is on the status row

    def setup_state(self, tracker):
        return -1                           # no set-up to check

    def weigh(self, res):
        return                              # the ball's verdict reads only where it rests

    def placed(self, tracker):
        # a chip put down: after an undo the chip goes back where the ball is played from
        # (away); the prompt says where until the pads see it there. True: the screen changed
        if self.away < 0:
            return False
        i = tracker.slot_of(KIND_SMALL)
        if i >= 0 and tracker.mask[i] & (1 << self.away):
            self.away = -1
            return True
        return False

    def tune(self, T):
        # the buzzer's tune after a ball (panel/buzzer.py; T: tables.tunes), -1 for none
        if self.over:
            return T.GAME_OVER
        if self.lres == RES_STRIKE:
            return T.STRIKE
        if self.lres == RES_SPARE:
            return T.SPLIT if self.last_split else T.SPARE
        return -1

    # -- game -------------------------------------------------------------------------------
    def start(self, players, shooter_end):
        if players < 1 or players > MAX_PLAYERS or shooter_end < 0 or shooter_end > 1:
            return False
        self.players = players
        self.shooter_end = shooter_end
        self.nlog = 0
        self._rebuild()
        ev = self.ev
        if ev is not None:
            ev.begin(b'game')
            ev.str_(b'game', self.name)
            ev.int_(b'players', players)
            ev.str_(b'shooter_end', b'ab', shooter_end, 1)
            ev.end()
        return True

    def pin_value(self, zone):
        # pins for a chip at rest in this one zone after a first ball
        if zone >= Z_CENTER:
            return 0
        if zone < END_ZONES:
            if self.shooter_end == 0:
                return _PINS_SHOOTER[zone]
            return _PINS_PIN[zone]
        if self.shooter_end == 1:
            return _PINS_SHOOTER[zone - END_ZONES]
        return _PINS_PIN[zone - END_ZONES]

    def classify(self, res):
        # the outcome of a shot: only the shot chip counts (slot res.mover, else slot 0)
        m = res.mover
        if m < 0:
            m = 0
        fate = res.fate[m]
        se = self.shooter_end
        if se == 0:
            pin_cup = FATE_CUP_B
        else:
            pin_cup = FATE_CUP_A
        if fate == pin_cup:
            z = (1 - se) * END_ZONES + Z_A_CUP
            if res.zenn == fate:
                if res.hit:
                    return (K_ZENN_HIT << OUT_SHIFT) | z
                return (K_ZENN << OUT_SHIFT) | z
            return (K_SINK << OUT_SHIFT) | z
        if fate == FATE_CUP_A or fate == FATE_CUP_B:
            return (K_OWN << OUT_SHIFT) | (se * END_ZONES + Z_A_CUP)
        if fate == FATE_OFF:
            return (K_OFF << OUT_SHIFT) | Z_OFF
        if fate != FATE_REST:
            return (K_GONE << OUT_SHIFT) | Z_OFF
        # at rest: the highest pin value among the zones under the chip (note 2)
        mask = res.end_mask[m]
        best = -1
        bz = -1
        for z in range(Z_CENTER):
            if mask & (1 << z):
                v = self.pin_value(z)
                if v > best:
                    best = v
                    bz = z
        if best <= 0:
            if mask & (1 << Z_CENTER):
                bz = Z_CENTER              # entirely in the center circle (or with a zline)
            elif bz < 0:
                if mask & (1 << Z_OFF):
                    return (K_OFF << OUT_SHIFT) | Z_OFF
                return (K_GONE << OUT_SHIFT) | Z_OFF     # at rest but on no zone: not seen
        return (K_REST << OUT_SHIFT) | bz

    def on_shot(self, res):
        # a resolved shot: classify, apply, write the shot event (and game_over at the end).
        # Returns the outcome, or -1 when no game is running.
        if self.players == 0 or self.over:
            return -1
        code = self.classify(res)
        self.apply_outcome(code)
        self.shot_lines()
        return code

    def shot_lines(self):
        # the lines of the shot just played: shot, and game_over at the end (on_shot's; app.py
        # plays the shot silent and has them written once the screen is shown)
        self.emit_shot()
        if self.over:
            self.emit_game_over()

    def apply_outcome(self, code):
        # append one outcome and play it (silent: the journal's replay uses this too)
        if self.players == 0 or self.over or code < 0 or code > 255:
            return False
        if (code >> OUT_SHIFT) == K_MANUAL:
            if not self.manual_ok(code & _OUT_ZONE):
                return False
        elif (code & _OUT_ZONE) >= N_ZONES:
            return False
        self.log[self.nlog] = code
        self.nlog += 1
        self._step(code)
        self._recum(self.lp)
        return True

    def undo(self):
        # take back the last ball: pop it and replay the rest of the log
        if self.nlog == 0:
            return False
        self.nlog -= 1
        self._rebuild()
        self.away = self.put_back()
        self._emit_undo()
        return True

    def put_back(self):
        # where the chip goes for the ball to play now: the pocket or the centre the prompt
        # names, or where the ball before left it (a spare attempt shoots from there); -1 when
        # that is not known (the ball before was set by hand) or no ball is to be played
        pr = self.prompt
        se = self.shooter_end
        if pr == PROMPT_PLACE_POCKET:
            return se * END_ZONES + Z_A_POCKET
        if pr == PROMPT_PLACE_PIN_POCKET:
            return (1 - se) * END_ZONES + Z_A_POCKET
        if pr == PROMPT_PLACE_CENTER:
            return Z_CENTER
        if pr == PROMPT_SHOOT and self.lp >= 0 and self.lkind == K_REST:
            return self.lzone
        return -1

    def manual_ok(self, pins):
        # a ball set by hand may be worth this many pins: a first ball 0..10 (10 a strike); a
        # spare attempt only what the rules let it be worth: no basket (0), a sink without a
        # Zenn (the frame makes 9) or a spare (the frame makes 10)
        if self.fresh:
            return 0 <= pins <= 10
        return pins == 0 or pins == 9 - self.base or pins == 10 - self.base

    def correct(self, pins):
        # the sensors got the last ball wrong: set its pins by hand (docs/controls.md). The ball
        # is taken back and played again as a K_MANUAL outcome; events: undo, then the shot
        # (with "manual": true) and game_over when it ends the game. Returns the new outcome, or
        # -1 (nothing changed) when there is no ball or the rules do not allow that value.
        if self.nlog == 0 or pins < 0 or pins > 10:
            return -1
        if not self.lfresh and not (pins == 0 or pins == 9 - self.lbase or pins == 10 - self.lbase):
            return -1
        self.nlog -= 1
        self._rebuild()
        self._emit_undo()
        code = (K_MANUAL << OUT_SHIFT) | pins
        self.apply_outcome(code)
        self.emit_shot()
        if self.over:
            self.emit_game_over()
        return code

    def _emit_undo(self):
        ev = self.ev
        if ev is not None:
            ev.begin(b'undo')
            ev.int_(b'player', self.player + 1)
            ev.int_(b'frame', self.frame + 1)
            ev.int_(b'ball', self.ball + 1)
            if self.away >= 0:
                ev.str_(b'put_back', ZONE_NAMES[self.away])
            else:
                ev.null_(b'put_back')
            ev.end()

    # -- the state machine ------------------------------------------------------------------
    def _rebuild(self):
        for p in range(MAX_PLAYERS):
            self.nb[p] = 0
            self.nf[p] = 0
            self.ndone[p] = 0
        self.player = 0
        self.frame = 0
        self.ball = 0
        self.over = False
        if self.players:
            self.prompt = PROMPT_PLACE_POCKET
        else:
            self.prompt = PROMPT_NONE
        self.fresh = True
        self.base = 0
        self.last_split = False
        self.away = -1
        self.lp = -1
        for i in range(self.nlog):
            self._step(self.log[i])
        for p in range(MAX_PLAYERS):
            self._recum(p)

    def _step(self, code):
        kind = code >> OUT_SHIFT
        zone = code & _OUT_ZONE
        p = self.player
        f = self.frame
        b = self.ball
        nb = self.nb[p]
        if b == 0:
            self.fstart[p * FRAMES + f] = nb
            self.nf[p] = f + 1
        zenn = kind == K_ZENN or kind == K_ZENN_HIT
        split = 0
        self.lfresh = self.fresh
        self.lbase = self.base
        if kind == K_MANUAL:
            pins = zone                     # checked by apply_outcome (manual_ok)
            if self.fresh:
                if pins == 10:
                    r = RES_STRIKE
                elif pins:
                    r = RES_PINS
                else:
                    r = RES_GUTTER
            elif pins and pins == 10 - self.base:
                r = RES_SPARE
            elif pins and pins == 9 - self.base:
                r = RES_SINK9
            else:
                r = _RES_NO_BASKET
        elif self.fresh:
            if zenn:
                pins = 10
                r = RES_STRIKE
            elif kind == K_SINK:
                pins = 9                    # contract 4.1
                r = RES_SINK9
            elif kind == K_REST:
                pins = self.pin_value(zone)
                if pins:
                    r = RES_PINS
                else:
                    r = RES_GUTTER
            else:
                pins = 0                    # own cup, off the board, gone
                r = RES_GUTTER
        else:
            if zenn:
                pins = 10 - self.base
                r = RES_SPARE
                if kind == K_ZENN_HIT:
                    split = _SPLIT          # note 3
            elif kind == K_SINK:
                pins = 9 - self.base        # "only 9 pins": the frame counts 9
                r = RES_SINK9
            else:
                pins = 0                    # no basket: the first ball's pins stand
                r = _RES_NO_BASKET
        i = p * _MAX_BALLS + nb
        self.pins[i] = pins
        self.bres[i] = r | split
        self.nb[p] = nb + 1
        self.lp = p
        self.lf = f
        self.lb = b
        self.lpins = pins
        self.lres = r
        self.lkind = kind
        self.lzone = zone
        self.last_split = split != 0
        self.away = -1
        # what comes next
        if f < FRAMES - 1:
            done = (not self.fresh) or r == RES_STRIKE
        elif b == 2:
            done = True
        elif self.fresh:
            done = False                    # a tenth-frame first ball always has a next ball
        else:
            done = r != RES_SPARE           # a spare at ball 2 earns ball 3
        if done:
            self.ndone[p] += 1
            self._next_player()
        elif self.fresh and r != RES_STRIKE:
            self.ball = b + 1
            self.fresh = False              # a spare attempt from where the chip is
            self.base = pins
            self._prompt_after(kind)
        else:
            self.ball = b + 1               # tenth frame: a fresh rack after a strike or spare
            self.fresh = True
            self.base = 0
            self.prompt = PROMPT_PLACE_POCKET

    def _prompt_after(self, kind):
        if kind == K_REST or kind == K_MANUAL:
            self.prompt = PROMPT_SHOOT
        elif kind == K_SINK:
            self.prompt = PROMPT_PLACE_PIN_POCKET     # contract 4.1
        else:
            self.prompt = PROMPT_PLACE_CENTER         # off the board, own cup, gone

    def _next_player(self):
        self.fresh = True
        self.base = 0
        if self.player + 1 < self.players:
            self.player += 1
        elif self.frame + 1 < FRAMES:
            self.player = 0
            self.frame += 1
        else:
            self.over = True                # position stays on the last ball played
            self.prompt = PROMPT_GAME_OVER
            return
        self.ball = 0
        self.prompt = PROMPT_PLACE_POCKET

    # -- scores -----------------------------------------------------------------------------
    def frame_score(self, p, f):
        # the score of one frame, or -1 while it is not known yet
        if f >= self.ndone[p]:
            return -1
        base = p * _MAX_BALLS
        i = self.fstart[p * FRAMES + f]
        pins = self.pins
        if f == FRAMES - 1:
            s = 0
            for k in range(i, self.nb[p]):
                s += pins[base + k]
            return s
        if (self.bres[base + i] & _RES_MASK) == RES_STRIKE or \
                pins[base + i] + pins[base + i + 1] == 10:
            if i + 2 >= self.nb[p]:
                return -1                   # bonus balls not played yet
            return pins[base + i] + pins[base + i + 1] + pins[base + i + 2]
        return pins[base + i] + pins[base + i + 1]

    def _recum(self, p):
        # player p's running scores from the frame scores (a frame not known yet, and every
        # frame after it, -1); -1 throughout for a player not in the game
        c = self.cums
        k = p * FRAMES
        s = 0
        known = p < self.players
        for f in range(FRAMES):
            if known:
                v = self.frame_score(p, f)
                if v < 0:
                    known = False
                else:
                    s += v
            c[k + f] = s if known else -1

    def cum(self, p, f):
        # the running score through frame f, or -1 while not known
        if p < 0 or p >= self.players or f < 0 or f >= FRAMES:
            return -1
        return self.cums[p * FRAMES + f]

    def total(self, p):
        # the score through the last frame whose score is known (the final score at the end)
        if p < 0 or p >= self.players:
            return 0
        c = self.cums
        k = p * FRAMES
        s = 0
        for f in range(FRAMES):
            v = c[k + f]
            if v < 0:
                return s
            s = v
        return s

    def winner(self):
        # the player (from 0) with the best total, -1 on a tie (the displays' game over)
        win = -1
        best = -1
        for q in range(self.players):
            t = self.total(q)
            if t > best:
                best = t
                win = q
            elif t == best:
                win = -1
        return win

    def balls_in_frame(self, p, f):
        if p < 0 or p >= self.players or f < 0 or f >= self.nf[p]:
            return 0
        i = self.fstart[p * FRAMES + f]
        if f + 1 < self.nf[p]:
            return self.fstart[p * FRAMES + f + 1] - i
        return self.nb[p] - i

    def _mark(self, k):
        r = self.bres[k] & _RES_MASK
        if r == RES_STRIKE:
            return 88                       # X
        if r == RES_SPARE:
            return 47                       # /
        v = self.pins[k]
        if v == 0:
            return 45                       # -
        return 48 + v

    def marks(self, p, f, buf, off):
        # standard notation for one frame into buf[off:], returns the byte count (0..3)
        n = self.balls_in_frame(p, f)
        if n == 0:
            return 0
        k = p * _MAX_BALLS + self.fstart[p * FRAMES + f]
        for j in range(n):
            buf[off + j] = self._mark(k + j)
        return n

    def is_split(self, p, f):
        # the frame's spare was a split (note 3)
        n = self.balls_in_frame(p, f)
        if n == 0:
            return False
        k = p * _MAX_BALLS + self.fstart[p * FRAMES + f]
        for j in range(n):
            if self.bres[k + j] & _SPLIT:
                return True
        return False

    # -- events -----------------------------------------------------------------------------
    def emit_shot(self):
        ev = self.ev
        if ev is None or self.lp < 0:
            return
        p = self.lp
        ev.begin(b'shot')
        ev.int_(b'player', p + 1)
        ev.str_(b'game', self.name)
        ev.int_(b'frame', self.lf + 1)
        ev.int_(b'ball', self.lb + 1)
        ev.int_(b'pins', self.lpins)
        m = self._m
        m[0] = self._mark(p * _MAX_BALLS + self.nb[p] - 1)
        ev.str_(b'mark', m, 0, 1)
        a = _RES_AT[self.lres]
        ev.str_(b'result', _RES, a, _RES_AT[self.lres + 1] - a)
        if self.lkind == K_GONE or self.lkind == K_MANUAL:
            ev.null_(b'zone')
        else:
            ev.str_(b'zone', ZONE_NAMES[self.lzone])
        ev.bool_(b'split', self.last_split)
        ev.int_(b'total', self.total(p))
        if self.lkind == K_MANUAL:
            ev.bool_(b'manual', True)
        ev.end()

    def emit_game_over(self):
        ev = self.ev
        if ev is None:
            return
        m = self._m
        ev.begin(b'game_over')
        ev.str_(b'game', self.name)
        ev.arr(b'players')
        for p in range(self.players):
            ev.obj(None)
            ev.arr(b'frames')
            for f in range(FRAMES):
                n = self.marks(p, f, m, 0)
                ev.str_(None, m, 0, n)
            ev.close_arr()
            ev.arr(b'cum')
            for f in range(FRAMES):
                v = self.cum(p, f)
                if v < 0:
                    ev.null_(None)
                else:
                    ev.int_(None, v)
            ev.close_arr()
            ev.int_(b'total', self.total(p))
            ev.close_obj()
        ev.close_arr()
        ev.end()


# the game interface's table (games/registry.py lists this module): the one game Bowling plays.
_SETUP_PLAYERS_END = const(0)       # (games/registry.py's values)
_BEST_TOTAL = const(1)
#  ID, NAME,      TITLE,           ENGINE,  VARIANT, SETUP, PLAYERS, BEST, screens (OLED, SEG),
#  SEG_TITLE
GAMES = ((1, b'bowling', b'Zenn Bowling', Bowling, 0, _SETUP_PLAYERS_END, MAX_PLAYERS, _BEST_TOTAL,
          'displays.oled_screens.bowling', 'displays.seg_screens.bowling', b'boWLing'),)
