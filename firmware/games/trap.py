# Trap Zenn 1 and Trap Zenn 2: the rules engine. No pins: it takes a shot.ShotResult, turns it
# into a compact *outcome* (one byte: what happened on the board), appends that to a log and
# plays it. Everything the UI and the app show is derived from the log (on top of a base
# snapshot), so undo() and the journal's replay go through the same code (_step). Rules and
# decisions: docs/rules.md, "Trap Zenn 1 and 2". Nothing is allocated after construction.
#
# Outcome byte (facts only; what they mean is decided by _step from the game state):
#   bits 0..2  LOC_*: where the small chip is after the shot
#   bit 3      _O_BIG_OUT: a big chip sank or left the board (it goes to the center circle)
#   bits 4..5  trapper shot: the tracker slot of the big chip that moved first
#              fugitive shot: _O_HIT_A / _O_HIT_B, a big chip that moved lay at least partly in
#              backcourt a / b when the shot began
#   bit 6      _O_FUGITIVE: the small chip moved first (a fugitive shot); clear: a trapper shot
#   bit 7      a control entry: END_TURN (0x80) is the only one (the end-of-turn button)
from micropython import const
from array import array
from tracking.shot import KIND_SMALL, KIND_BIG, FATE_REST, FATE_CUP_A, FATE_CUP_B, FATE_OFF, MAX_CHIPS
from tables.board_table import (Z_A_BACK4, Z_A_CUP3, Z_A_POCKET, Z_A_ZLINE, Z_A_CUP,
                         Z_B_ZLINE, Z_CENTER, Z_OFF, END_ZONES)

_TRAP1_SHOTS = const(15)     # Trap Zenn 1: the trapper's shots
_TURN_SHOTS = const(3)       # at most three big-chip shots per trapper turn
_PENALTY = const(5)          # Trap Zenn 2: a big chip knocking the small chip into a basket
_ROUNDS = const(2)           # Trap Zenn 2: each player traps once
LOG_SIZE = const(512)       # outcomes kept for undo; older ones are folded into the base

# where the small chip is after a shot
_LOC_FIELD = const(0)        # on the board, not entirely inside a backcourt zone
_LOC_BACK_A = const(1)       # entirely inside the backcourt zone of end a
_LOC_BACK_B = const(2)       # entirely inside the backcourt zone of end b
_LOC_CUP = const(3)          # in either cup
_LOC_OFF = const(4)          # off the board
_LOC_NONE = const(5)         # not on the board when the shot began, or lifted during it
# the event stream's words for these, each list in one bytes object (a tuple of bytes took an
# object each): word i of _X is _X[_X_AT[i]:_X_AT[i + 1]], written without a slice (_name())
_LOC = b'fielda.backcourtb.backcourtcupoffnone'
_LOC_AT = b'\x00\x05\x10\x1b\x1e\x21\x25'

_O_LOC = const(7)
_O_BIG_OUT = const(8)
_O_SLOT_SHIFT = const(4)
_O_HIT_A = const(16)
_O_HIT_B = const(32)
_O_FUGITIVE = const(64)
END_TURN = const(128)

# roles
_ROLE_TRAPPER = const(0)
_ROLE_FUGITIVE = const(1)
_ROLE = b'trapperfugitive'
_ROLE_AT = b'\x00\x07\x0f'

# why a game (Trap Zenn 1) or a round (Trap Zenn 2) ended; the contract's names
_R_NONE = const(0)
_R_STUCK = const(1)
_R_HIT = const(2)
_R_OFF = const(3)
_R_BASKET = const(4)
_R_OUT_OF_SHOTS = const(5)
_R_SANK_SMALL = const(6)
# what one shot decided (the shot event's "result"): a reason above, or one of these
_RES_ESCAPED = const(7)      # an escape shot that got out
_RES_PENALTY = const(8)      # Trap Zenn 2: a big chip sank the small chip, 5 penalty shots
_RESULT = b'playtrapped_stucktrapped_hittrapped_offtrapped_basketout_of_shotstrapper_sank_smallescapedpenalty'
_RESULT_AT = b'\x00\x04\x11\x1c\x27\x35\x41\x53\x5a\x61'

# fouls of one shot (the shot event's "foul"; the UI's flag)
_FOUL_NONE = const(0)
_FOUL_SAME_CHIP = const(1)   # the same big chip shot twice in one turn: counts as a shot
_FOUL_OUT_OF_TURN = const(2) # shot by the player whose turn it was not: counts as that player's turn
_FOUL_NO_SHOTS = const(3)    # Trap Zenn 1: a big chip shot after the 15th shot: does not count
_FOUL = b'same_chipout_of_turnno_shots_left'
_FOUL_AT = b'\x00\x00\x09\x14\x21'

# what the players have to do before the next shot
_PROMPT_NONE = const(0)            # no game started
_PROMPT_SETUP = const(1)           # three big chips on the trapper's Zenn line, small chip in the center
_PROMPT_SHOOT = const(2)           # `player` shoots (`role`; `escape`: it must get out)
_PROMPT_SMALL_CENTER = const(3)    # put the small chip in the center circle, then shoot
_PROMPT_BIG_CENTER = const(4)      # put the sunk / off big chip in the center circle, then shoot
_PROMPT_BOTH_CENTER = const(5)     # both of the above
_PROMPT_GAME_OVER = const(6)
_PROMPT = b'nonesetupshootsmall_to_centerbig_to_centerboth_to_centergame_over'
_PROMPT_AT = b'\x00\x04\x09\x0e\x1d\x2a\x38\x41'

_NEED_SMALL = const(1)
_NEED_BIG = const(2)

# what passed after the last entry (which extra events follow it)
_PASS_NONE = const(0)
_PASS_TURN = const(1)       # the other player's turn
_PASS_ROUND = const(2)      # Trap Zenn 2: a new round, roles swapped

# the backcourt zone of an end: back4 + cup3 (pocket inside), the Zenn line's part behind the
# section border (a chip over the border also overlaps a front-court strip) and the cup
BACK_A = (1 << Z_A_BACK4) | (1 << Z_A_CUP3) | (1 << Z_A_POCKET) | (1 << Z_A_ZLINE) | (1 << Z_A_CUP)
BACK_B = BACK_A << END_ZONES
# "lies at least partly in" a backcourt: the same less the Zenn line. cup3 reaches up to the
# section border, so a chip over the line's back half meets cup3; one touching only the line's
# front half (wholly in front of the border) is not in the backcourt at all (issue 12)
PART_A = BACK_A & ~(1 << Z_A_ZLINE)
PART_B = PART_A << END_ZONES
CENTER_BIT = 1 << Z_CENTER
# a chip at rest lies on the board (bumpers all round): a rest mask's "off" bit is the fit's
# error at the edge, not a part of the chip out of its zone (issue 12, the shot bench's seed 43:
# a small chip 0.8 mm from the side, wholly in b.cup3, was fitted over the edge: "field")
_OFF_BIT = 1 << Z_OFF

# the state snapshot (the base the log is played on): indices into Trap.base
_S_ROLE = const(0)
_S_TRAPPER = const(1)
_S_ROUND = const(2)
_S_SHOTS = const(3)
_S_TURN = const(4)
_S_TMASK = const(5)
_S_SMALL = const(6)
_S_NEED = const(7)
_S_FRESH = const(8)
_S_OVER = const(9)
_S_WINNER = const(10)
_S_REASON = const(11)
_S_RSHOTS = const(12)       # 12, 13
_S_RPEN = const(14)         # 14, 15
_S_RREASON = const(16)      # 16, 17
_S_LP = const(18)
_S_LROLE = const(19)
_S_LSLOT = const(20)
_S_LFOUL = const(21)
_S_LRES = const(22)
_S_LESC = const(23)
_S_LPASS = const(24)
_S_LTURN = const(25)
_S_LSMALL = const(26)
_S_N = const(27)


def _name(ev, key, words, at, i):
    # word i of a list above as the string field `key`
    a = at[i]
    ev.str_(key, words, a, at[i + 1] - a)


def is_back(loc):
    return loc == _LOC_BACK_A or loc == _LOC_BACK_B


def small_loc(fate, mask):
    # LOC_* of a small chip from its fate and its zone mask at rest
    if fate == FATE_CUP_A or fate == FATE_CUP_B:
        return _LOC_CUP
    if fate == FATE_OFF:
        return _LOC_OFF
    if fate != FATE_REST:
        return _LOC_NONE            # vanished where it lay: lifted by hand
    mask &= ~_OFF_BIT
    if mask != 0:
        if mask & ~BACK_A == 0:
            return _LOC_BACK_A
        if mask & ~BACK_B == 0:
            return _LOC_BACK_B
    return _LOC_FIELD


class Trap:
    # the game interface (docs/architecture.md, "Adding a game"): ok corrects nothing; the
    # three big chips are the trapper's; the turn button ends the trapper's turn (end_turn(),
    # journalled as TURN)
    CORRECTS = False
    BIG_CHIPS = 3
    TURN = END_TURN
    players = 2                     # (Trap Zenn is a two-player game)

    def __init__(self, events, log_size=LOG_SIZE):
        self.ev = events                    # events.EventWriter (or None: silent)
        self.name = b''                     # the event stream's "game" (start(): trap1, trap2)
        self.log = bytearray(log_size)      # outcomes and END_TURN, in the order played
        self.nlog = 0
        self.folded = 0                     # entries folded into the base (not undoable)
        self.base = array('i', [0] * _S_N)  # the state before log[0]
        self.rshots = array('i', [0] * _ROUNDS)   # per round: the trapper's shots
        self.rpen = array('i', [0] * _ROUNDS)     # per round: penalty shots (Trap Zenn 2)
        self.rreason = bytearray(_ROUNDS)         # per round: R_* once it ended
        self.variant = 0                    # 1 or 2; 0: no game started
        self.first = 0                      # the player who traps first (round 1)
        self.coin = False                   # the first trapper was chosen by a coin flip
        # where the game stands. Players are numbered 1 and 2, as in the events; 0: nobody
        self.role = _ROLE_TRAPPER            # the role to shoot next
        self.player = 0                     # the player to shoot next
        self.trapper = 0                    # the trapper (of this round)
        self.round = 0                      # Trap Zenn 2: 0 or 1
        self.shots = 0                      # the trapper's shots (this round)
        self.shots_left = -1                # Trap Zenn 1: 15 - shots; Trap Zenn 2: -1
        self.turn_shots = 0                 # shots in this trapper turn (0..3)
        self.turn_mask = 0                  # big chips (tracker slots, bits) shot this turn
        self.small = _LOC_FIELD              # where the small chip was left by the last shot
        self.need = 0                       # _NEED_* bits: chips to put in the center circle
        self.fresh = True                   # no shot yet in this game / round: set up
        self.escape = False                 # the fugitive's next shot is an escape shot
        self.escape_end = -1                # its backcourt: 0 end a, 1 end b
        self.over = False
        self.winner = 0                     # 1 or 2; 0 while playing and on a tie
        self.reason = _R_NONE                # R_* (Trap Zenn 2: that of the last round)
        self.prompt = _PROMPT_NONE
        # the last entry played (for the events and the UI's flags)
        self.lp = 0                         # its player (0: an END_TURN, or nothing yet)
        self.lrole = _ROLE_TRAPPER
        self.lslot = 0                      # the big chip's slot (trapper shots)
        self.lfoul = _FOUL_NONE
        self.lres = _R_NONE                  # RESULT_NAMES index
        self.lesc = False                   # it was an escape shot
        self.lpass = _PASS_NONE
        self.lturn = 0                      # trapper shots: its number in the turn (1..3)
        self.lsmall = _LOC_FIELD             # where it left the small chip

    # -- the game interface (app.py, journal.py: games/registry.py's start()) ----------------
    def begin(self, variant, players, o1, o2):
        return self.start(variant, o1, o2)

    def result(self):
        # what the last shot decided, worth holding on the displays (0: nothing): its result
        # (1..8: trapped, out of shots, sank small, escaped, penalty), 9 for a trapper's shot
        # that left the small chip entirely in a backcourt
        if self.lp == 0:
            return 0
        if self.lres:
            return self.lres
        if self.lrole == _ROLE_TRAPPER and is_back(self.lsmall):
            return 9
        return 0

    def own_status(self):
        return self.lfoul                   # the foul is on the status row

    def setup_state(self, tracker):
        # before a round's first shot: 1 the chips are set up, 0 not yet; -1 no set-up now
        if self.prompt != _PROMPT_SETUP:
            return -1
        return 1 if self.setup_ok(tracker) else 0

    def placed(self, tracker):
        return False

    def tune(self, T):
        # the buzzer's tune after a shot (panel/buzzer.py; T: tables.tunes), -1 for none: the
        # game's end, a trap (Trap Zenn 2's first round), an escape
        if self.over:
            return T.GAME_OVER
        if _R_STUCK <= self.lres <= _R_BASKET:
            return T.TRAPPED
        if self.lres == _RES_ESCAPED:
            return T.ESCAPED
        return -1

    # -- game -------------------------------------------------------------------------------
    def start(self, variant, trapper, coin_flipped):
        if variant < 1 or variant > 2 or trapper < 1 or trapper > 2:
            return False
        self.variant = variant
        self.name = GAMES[variant - 1][1]
        self.first = trapper
        self.coin = True if coin_flipped else False
        self.nlog = 0
        self.folded = 0
        self._initial()
        self._save()
        self._rebuild()
        ev = self.ev
        if ev is not None:
            ev.begin(b'game')
            ev.str_(b'game', self.name)
            ev.int_(b'trapper', trapper)
            ev.bool_(b'coin', self.coin)
            ev.end()
            self._emit_turn()
        return True

    def setup_ok(self, tracker):
        # the tracker's rest snapshot shows the set-up: three big chips overlapping the
        # trapper's Zenn line, the small chip entirely inside the center circle, nothing else
        if self.variant == 0 or self.over:
            return False
        if self.trapper == 1:
            zl = 1 << Z_A_ZLINE
        else:
            zl = 1 << Z_B_ZLINE
        nb = 0
        ns = 0
        for i in range(MAX_CHIPS):
            if not tracker.present[i]:
                continue
            k = tracker.kind[i]
            m = tracker.mask[i]
            if k == KIND_BIG:
                if not (m & zl):
                    return False
                nb += 1
            elif k == KIND_SMALL:
                if m != CENTER_BIT:
                    return False
                ns += 1
            else:
                return False
        return nb == _TURN_SHOTS and ns == 1

    def classify(self, res):
        # the outcome of a shot, or -1 when no chip moved
        m = res.mover
        if m < 0 or m >= MAX_CHIPS:
            return -1
        mk = res.kind[m]
        if res.tied:
            # the pads could not tell which of these moved first (unsure, docs/rules.md): the
            # shot is taken for the player whose turn it is when one of his chips is among them
            want = KIND_SMALL if self.role == _ROLE_FUGITIVE else KIND_BIG
            if mk != want:
                for i in range(MAX_CHIPS):
                    if (res.tied & (1 << i)) and res.kind[i] == want:
                        m = i
                        mk = want
                        break
        if mk != KIND_SMALL and mk != KIND_BIG:
            return -1
        loc = _LOC_NONE
        code = 0
        for i in range(MAX_CHIPS):
            k = res.kind[i]
            if k == KIND_SMALL:
                loc = small_loc(res.fate[i], res.end_mask[i])
            elif k == KIND_BIG:
                f = res.fate[i]
                if f == FATE_CUP_A or f == FATE_CUP_B or f == FATE_OFF:
                    code |= _O_BIG_OUT
                if mk == KIND_SMALL and res.moved[i]:
                    s = res.start_mask[i]
                    if s & PART_A:
                        code |= _O_HIT_A
                    if s & PART_B:
                        code |= _O_HIT_B
        if mk == KIND_SMALL:
            return code | _O_FUGITIVE | loc
        return code | (m << _O_SLOT_SHIFT) | loc

    def weigh(self, res):
        # before on_shot (app.py): clear res.sure of a chip whose reading this shot's verdict
        # relies on when the pads could not tell it for sure. The tracker judges where the
        # chips a shot moved came to rest; the verdict also reads where the small chip lies when
        # the shot did not move it (a trapper's shot past it leaves it in a backcourt or not),
        # where it lay when the fugitive shoots (an escape shot or not), and whether a big chip
        # he moved lay partly in a backcourt (trapped_hit): positions put down by hand or left
        # by an earlier shot, never judged for these. Each is unsure when the rule's answer
        # differs between the zones the chip surely overlapped and those it may have
        # (res.start_lo / start_hi; docs/rules.md, "Unsure verdicts"; issue 12: sure verdicts
        # for a small chip 0.04 mm over the backcourt's border, a big chip 0.9 mm in front of it)
        code = self.classify(res)
        if code < 0:
            return
        fug = code & _O_FUGITIVE
        for i in range(MAX_CHIPS):
            k = res.kind[i]
            lo = res.start_lo[i]
            hi = res.start_hi[i]
            if lo == hi:
                continue
            if k == KIND_SMALL:
                if fug or (not res.moved[i] and res.fate[i] == FATE_REST):
                    if small_loc(FATE_REST, lo) != small_loc(FATE_REST, hi):
                        res.sure[i] = 0
            elif k == KIND_BIG and fug and res.moved[i]:
                if ((lo & PART_A) == 0) != ((hi & PART_A) == 0) or \
                        ((lo & PART_B) == 0) != ((hi & PART_B) == 0):
                    res.sure[i] = 0

    def on_shot(self, res):
        # a resolved shot: classify, apply, write its events. Returns the outcome, or -1 when
        # no game is running or nothing moved.
        if self.variant == 0 or self.over:
            return -1
        code = self.classify(res)
        if code < 0 or not self.apply_outcome(code):
            return -1
        self._emit_after()
        return code

    def end_turn(self):
        # the end-of-turn button: the trapper stops after one or two shots
        if not self.apply_outcome(END_TURN):
            return False
        self._emit_after()
        return True

    def apply_outcome(self, code):
        # append one entry and play it (silent: the journal's replay uses this too)
        if self.variant == 0 or self.over:
            return False
        if code == END_TURN:
            if self.role != _ROLE_TRAPPER or self.turn_shots == 0:
                return False
        elif code < 0 or code >= END_TURN or (code & _O_LOC) > _LOC_NONE:
            return False
        if self.nlog == len(self.log):
            self._fold()
        self.log[self.nlog] = code
        self.nlog += 1
        self._step(code)
        return True

    def undo(self):
        # take back the last entry (a shot or an END_TURN): pop it and replay the rest
        if self.variant == 0 or self.nlog == 0:
            return False
        self.nlog -= 1
        self._rebuild()
        ev = self.ev
        if ev is not None:
            ev.begin(b'undo')
            ev.str_(b'game', self.name)
            ev.int_(b'player', self.player)
            _name(ev, b'role', _ROLE, _ROLE_AT, self.role)
            ev.int_(b'shots', self.shots)
            ev.bool_(b'escape', self.escape)
            ev.end()
        return True

    # -- queries ----------------------------------------------------------------------------
    def round_trapper(self, r):
        if r == 0:
            return self.first
        return 3 - self.first

    def round_total(self, r):
        return self.rshots[r] + self.rpen[r]

    def fugitive(self):
        return 3 - self.trapper

    # -- the state machine ------------------------------------------------------------------
    def _new_round(self):
        """A round's start: the trapper to set up, no shots yet, the small chip to be placed."""
        self.role = _ROLE_TRAPPER
        self.shots = 0
        self.turn_shots = 0
        self.turn_mask = 0
        self.small = _LOC_FIELD
        self.need = 0
        self.fresh = True

    def _initial(self):
        self.trapper = self.first
        self.round = 0
        self._new_round()
        self.over = False
        self.winner = 0
        self.reason = _R_NONE
        for r in range(_ROUNDS):
            self.rshots[r] = 0
            self.rpen[r] = 0
            self.rreason[r] = _R_NONE
        self.lp = 0
        self.lrole = _ROLE_TRAPPER
        self.lslot = 0
        self.lfoul = _FOUL_NONE
        self.lres = _R_NONE
        self.lesc = False
        self.lpass = _PASS_NONE
        self.lturn = 0
        self.lsmall = _LOC_FIELD

    def _save(self):
        b = self.base
        b[_S_ROLE] = self.role
        b[_S_TRAPPER] = self.trapper
        b[_S_ROUND] = self.round
        b[_S_SHOTS] = self.shots
        b[_S_TURN] = self.turn_shots
        b[_S_TMASK] = self.turn_mask
        b[_S_SMALL] = self.small
        b[_S_NEED] = self.need
        b[_S_FRESH] = 1 if self.fresh else 0
        b[_S_OVER] = 1 if self.over else 0
        b[_S_WINNER] = self.winner
        b[_S_REASON] = self.reason
        for r in range(_ROUNDS):
            b[_S_RSHOTS + r] = self.rshots[r]
            b[_S_RPEN + r] = self.rpen[r]
            b[_S_RREASON + r] = self.rreason[r]
        b[_S_LP] = self.lp
        b[_S_LROLE] = self.lrole
        b[_S_LSLOT] = self.lslot
        b[_S_LFOUL] = self.lfoul
        b[_S_LRES] = self.lres
        b[_S_LESC] = 1 if self.lesc else 0
        b[_S_LPASS] = self.lpass
        b[_S_LTURN] = self.lturn
        b[_S_LSMALL] = self.lsmall

    def _load(self):
        b = self.base
        self.role = b[_S_ROLE]
        self.trapper = b[_S_TRAPPER]
        self.round = b[_S_ROUND]
        self.shots = b[_S_SHOTS]
        self.turn_shots = b[_S_TURN]
        self.turn_mask = b[_S_TMASK]
        self.small = b[_S_SMALL]
        self.need = b[_S_NEED]
        self.fresh = b[_S_FRESH] != 0
        self.over = b[_S_OVER] != 0
        self.winner = b[_S_WINNER]
        self.reason = b[_S_REASON]
        for r in range(_ROUNDS):
            self.rshots[r] = b[_S_RSHOTS + r]
            self.rpen[r] = b[_S_RPEN + r]
            self.rreason[r] = b[_S_RREASON + r]
        self.lp = b[_S_LP]
        self.lrole = b[_S_LROLE]
        self.lslot = b[_S_LSLOT]
        self.lfoul = b[_S_LFOUL]
        self.lres = b[_S_LRES]
        self.lesc = b[_S_LESC] != 0
        self.lpass = b[_S_LPASS]
        self.lturn = b[_S_LTURN]
        self.lsmall = b[_S_LSMALL]

    def _rebuild(self):
        self._load()
        self._derive()
        for i in range(self.nlog):
            self._step(self.log[i])

    def _fold(self):
        # the log is full: play its older half into the base, keep the newer half
        k = len(self.log) >> 1
        self._load()
        for i in range(k):
            self._step(self.log[i])
        self._save()
        for i in range(k, self.nlog):
            self.log[i - k] = self.log[i]
        self.nlog -= k
        self.folded += k
        self._rebuild()

    def _step(self, code):
        self.lpass = _PASS_NONE
        self.lfoul = _FOUL_NONE
        self.lres = _R_NONE
        self.lesc = False
        self.lturn = 0
        if code == END_TURN:
            self.lp = 0
            self.lrole = _ROLE_TRAPPER
            self._to_fugitive()
        else:
            self.need = 0
            if code & _O_BIG_OUT:
                self.need = _NEED_BIG
            self.fresh = False
            if code & _O_FUGITIVE:
                self._fugitive_shot(code)
            else:
                self._trapper_shot(code)
        self._derive()

    def _trapper_shot(self, code):
        loc = code & _O_LOC
        slot = (code >> _O_SLOT_SHIFT) & 3
        self.lp = self.trapper
        self.lrole = _ROLE_TRAPPER
        self.lslot = slot
        self.lsmall = loc
        counts = True
        if self.role == _ROLE_FUGITIVE:
            if self.variant == 1 and self.shots >= _TRAP1_SHOTS:
                self.lfoul = _FOUL_NO_SHOTS
                counts = False
            else:
                self.lfoul = _FOUL_OUT_OF_TURN      # the fugitive's turn is passed over
                self.role = _ROLE_TRAPPER
                self.turn_shots = 0
                self.turn_mask = 0
        if counts:
            if self.turn_mask & (1 << slot):
                self.lfoul = _FOUL_SAME_CHIP
            self.turn_mask |= 1 << slot
            self.turn_shots += 1
            self.shots += 1
            self.rshots[self.round] = self.shots
            self.lturn = self.turn_shots
        self.small = loc
        if loc == _LOC_CUP:
            if self.variant == 1:
                self._trap1_over(_R_SANK_SMALL)
                return
            self.rpen[self.round] += _PENALTY
            self.lres = _RES_PENALTY
            self.need |= _NEED_SMALL
        elif loc == _LOC_OFF:
            self.need |= _NEED_SMALL
        if not counts:
            # after the 15th shot: the escape shot is still owed unless this freed the small chip
            if not is_back(loc):
                self._trap1_over(_R_OUT_OF_SHOTS)
            return
        if self.turn_shots >= _TURN_SHOTS or (self.variant == 1 and self.shots >= _TRAP1_SHOTS):
            self._to_fugitive()

    def _to_fugitive(self):
        # the trapper's turn is over
        self.role = _ROLE_FUGITIVE
        self.lpass = _PASS_TURN
        if self.variant == 1 and self.shots >= _TRAP1_SHOTS and not is_back(self.small):
            self._trap1_over(_R_OUT_OF_SHOTS)

    def _fugitive_shot(self, code):
        loc = code & _O_LOC
        self.lp = 3 - self.trapper
        self.lrole = _ROLE_FUGITIVE
        self.lsmall = loc
        if self.role == _ROLE_TRAPPER and self.turn_shots == 0:
            self.lfoul = _FOUL_OUT_OF_TURN          # the trapper's turn is passed over
        esc = self.small if is_back(self.small) else _LOC_FIELD
        self.lesc = esc != _LOC_FIELD
        self.small = loc
        r = _R_NONE
        if loc == _LOC_CUP:
            r = _R_BASKET
        elif esc != _LOC_FIELD:
            if loc == _LOC_OFF:
                r = _R_OFF
            elif code & (_O_HIT_A if esc == _LOC_BACK_A else _O_HIT_B):
                r = _R_HIT
            elif loc == esc:
                r = _R_STUCK
        if r != _R_NONE:
            self._trapped(r)
            return
        if esc != _LOC_FIELD:
            self.lres = _RES_ESCAPED
        if loc == _LOC_OFF:
            self.need |= _NEED_SMALL
        if self.variant == 1 and self.shots >= _TRAP1_SHOTS:
            self._trap1_over(_R_OUT_OF_SHOTS)
            return
        self.role = _ROLE_TRAPPER
        self.turn_shots = 0
        self.turn_mask = 0
        self.lpass = _PASS_TURN

    def _trapped(self, r):
        self.lres = r
        if self.variant == 1:
            self._trap1_over(r)
            return
        rd = self.round
        self.rreason[rd] = r
        self.reason = r
        if rd + 1 >= _ROUNDS:
            self.over = True
            t0 = self.round_total(0)
            t1 = self.round_total(1)
            if t0 < t1:
                self.winner = self.first
            elif t1 < t0:
                self.winner = 3 - self.first
            else:
                self.winner = 0
            return
        # the next round: roles swap, a new set-up
        self.round = rd + 1
        self.trapper = 3 - self.trapper
        self._new_round()
        self.lpass = _PASS_ROUND

    def _trap1_over(self, r):
        self.over = True
        self.reason = r
        self.rreason[0] = r
        if self.lres == _R_NONE:
            self.lres = r                  # an escape that ends the game keeps "escaped"
        if r == _R_OUT_OF_SHOTS or r == _R_SANK_SMALL:
            self.winner = 3 - self.trapper
        else:
            self.winner = self.trapper

    def _derive(self):
        # the fields the UI reads that follow from the rest
        if self.role == _ROLE_TRAPPER:
            self.player = self.trapper
        else:
            self.player = 3 - self.trapper
        if self.variant == 1:
            self.shots_left = _TRAP1_SHOTS - self.shots
        else:
            self.shots_left = -1
        self.escape = (not self.over) and self.role == _ROLE_FUGITIVE and is_back(self.small)
        if self.escape:
            self.escape_end = self.small - _LOC_BACK_A
        else:
            self.escape_end = -1
        if self.variant == 0:
            self.prompt = _PROMPT_NONE
        elif self.over:
            self.prompt = _PROMPT_GAME_OVER
        elif self.need == _NEED_SMALL | _NEED_BIG:
            self.prompt = _PROMPT_BOTH_CENTER
        elif self.need == _NEED_SMALL:
            self.prompt = _PROMPT_SMALL_CENTER
        elif self.need == _NEED_BIG:
            self.prompt = _PROMPT_BIG_CENTER
        elif self.fresh:
            self.prompt = _PROMPT_SETUP
        else:
            self.prompt = _PROMPT_SHOOT

    # -- events -----------------------------------------------------------------------------
    def shot_lines(self):
        # the lines of the shot just played (on_shot's; app.py plays the shot silent and has
        # them written once the screen is shown)
        self._emit_after()

    def _emit_after(self):
        # the events of the entry just played: shot (not for END_TURN), then game_over, or
        # round and turn, or turn
        if self.ev is None:
            return
        if self.lp:
            self._emit_shot()
        if self.over:
            self._emit_game_over()
            return
        if self.lpass == _PASS_ROUND:
            self._emit_round()
        if self.lpass != _PASS_NONE:
            self._emit_turn()

    def _emit_shot(self):
        ev = self.ev
        ev.begin(b'shot')
        ev.int_(b'player', self.lp)
        ev.str_(b'game', self.name)
        _name(ev, b'role', _ROLE, _ROLE_AT, self.lrole)
        if self.lrole == _ROLE_TRAPPER:
            ev.str_(b'chip', b'big')
            ev.int_(b'slot', self.lslot)
        else:
            ev.str_(b'chip', b'small')
        ev.int_(b'shots', self.rshots[self.round if self.lpass != _PASS_ROUND else self.round - 1])
        if self.variant == 1:
            ev.int_(b'left', _TRAP1_SHOTS - self.shots)
        else:
            rd = self.round if self.lpass != _PASS_ROUND else self.round - 1
            ev.int_(b'round', rd + 1)
            ev.int_(b'penalty', self.rpen[rd])
        ev.int_(b'turn_shot', self.lturn)
        _name(ev, b'small', _LOC, _LOC_AT, self.lsmall)
        ev.bool_(b'escape', self.lesc)
        _name(ev, b'result', _RESULT, _RESULT_AT, self.lres)
        if self.lfoul == _FOUL_NONE:
            ev.null_(b'foul')
        else:
            _name(ev, b'foul', _FOUL, _FOUL_AT, self.lfoul)
        _name(ev, b'prompt', _PROMPT, _PROMPT_AT, self.prompt)
        ev.end()

    def _emit_turn(self):
        ev = self.ev
        ev.begin(b'turn')
        ev.int_(b'player', self.player)
        _name(ev, b'role', _ROLE, _ROLE_AT, self.role)
        ev.bool_(b'escape', self.escape)
        ev.int_(b'shots', self.shots)
        ev.end()

    def _emit_round(self):
        ev = self.ev
        ev.begin(b'round')
        ev.str_(b'game', self.name)
        ev.int_(b'round', self.round + 1)
        ev.int_(b'trapper', self.trapper)
        ev.end()

    def _emit_game_over(self):
        ev = self.ev
        ev.begin(b'game_over')
        ev.str_(b'game', self.name)
        if self.variant == 1:
            ev.int_(b'winner', self.winner)
            ev.int_(b'trapper', self.trapper)
            ev.int_(b'shots', self.shots)
            _name(ev, b'reason', _RESULT, _RESULT_AT, self.reason)
        else:
            ev.arr(b'rounds')
            for r in range(_ROUNDS):
                ev.obj(None)
                ev.int_(b'trapper', self.round_trapper(r))
                ev.int_(b'shots', self.rshots[r])
                ev.int_(b'penalty', self.rpen[r])
                _name(ev, b'reason', _RESULT, _RESULT_AT, self.rreason[r])
                ev.close_obj()
            ev.close_arr()
            if self.winner:
                ev.int_(b'winner', self.winner)
            else:
                ev.null_(b'winner')
        ev.end()


# the game interface's table (games/registry.py lists this module): the two games Trap plays,
# line v - 1 for variant v.
_SETUP_TRAPPER = const(1)           # (games/registry.py's values)
_BEST_TRAP = const(2)
#  ID, NAME,    TITLE,          ENGINE, VARIANT, SETUP, PLAYERS, BEST, screens (OLED, SEG),
#  SEG_TITLE
GAMES = ((2, b'trap1', b'Trap Zenn 1', Trap, 1, _SETUP_TRAPPER, 2, _BEST_TRAP,
          'displays.oled_screens.trap', 'displays.seg_screens.trap', b'trAP 1'),
         (3, b'trap2', b'Trap Zenn 2', Trap, 2, _SETUP_TRAPPER, 2, _BEST_TRAP,
          'displays.oled_screens.trap', 'displays.seg_screens.trap', b'trAP 2'))
