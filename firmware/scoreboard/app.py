# The scoreboard: wires the pads, the fast inputs, the tracker, the rules, the display and the
# event stream together. boot() allocates everything; step() is one turn of the scan loop and
# allocates nothing (tests run it with the heap locked). service() does what step() asks to
# have done outside its turn (need_service: opening a journal file, which allocates).
#
# Nothing lost (docs/persistence.md): every entry the rules play (a shot, an undo, a correction,
# Trap Zenn's end of turn) goes into the journal on the flash, written between shots; boot()
# plays the journal back, so after a power cut or a watchdog reset the game goes on. A
# watchdog (WDT_MS) is fed once per loop turn. The status row says what went wrong: a
# condition (a stuck button, the flash failing, chips the game has no use for) while it lasts,
# a notice (a restored game, a refused button, a bad file) until the next button or shot.
#
# One step scans one bank of pads (48 of them). A full frame takes 16 steps. While chips move
# the loop runs flat out; while everything rests it idles between steps (returned to the
# caller as milliseconds to sleep), which also lets the simulator skip ahead.
from micropython import const
import gc
import sys
import time
import micropython

from machine import WDT

# gc.collect() between the imports and in boot(): each import leaves garbage among the code it
# keeps (the loader's buffers, the module dicts it outgrew); collected at once, the next
# module's code fills those holes, and boot()'s buffers find the free heap in one piece. With
# both displays the firmware then boots in about 195 KB of heap instead of 222 (64-bit port;
# docs/performance.md, "Memory").
from tables import pins
from tracking import shot as S
from tracking import tracker as TR
gc.collect()
from scoreboard.events import EventWriter
from scoreboard.heap import forget as _forget
from sensing.fastin import FastInputs
from panel.buttons import Buttons, NONE, LONG
from sensing import faults as FA
gc.collect()
# the games (games/registry.py): their modules imported here, among the other code. The
# registry itself is read at boot only and dropped after it (boot(): _forget)
from games import registry as _registry
_GAMES = _registry.games()
_registry = None
gc.collect()
from storage import journal as J
from displays.display_set import Displays
gc.collect()
# the Scoreboard's parts other than the loop, one module each (it inherits them)
from scoreboard.status_row import StatusRow, CH_NAMES, J_TEXT
from scoreboard.menus import Menus
from scoreboard.correction import Correction
from scoreboard.tools import Tools
gc.collect()

# Only what config.json chooses is imported (issue 8: every module's code takes heap on the
# Pico): the front end's scanner and locator, the displays' drivers (displays.py). config.py and
# calib.py run at boot and are dropped again after it (_forget); calib.py comes back when the
# calibration is asked for (service(), command()), padmap.py with the sensor test.
CONFIG_PATH = "config.json"     # config.PATH

# modes
MENU = const(0)
GAME = const(1)             # a game of the registry is played: self.game, self.game_choice
CALIB = const(3)            # the pads' calibration (issue 4, docs/controls.md)
SENSORS = const(4)          # the sensor test screen: the pad map

# menu pages
_PAGE_GAME = const(0)
_PAGE_PLAYERS = const(1)
_PAGE_END = const(2)
_PAGE_TRAPPER = const(3)
_PAGE_ROLE = const(4)
_PAGE_RESTART = const(5)
_PAGE_CORRECT = const(6)
_PAGE_BEST = const(7)       # the best games (best.py), one entry a page

# buttons (order of pins.BUTTONS)
_BTN_NEXT = const(0)
_BTN_OK = const(1)
_BTN_UNDO = const(2)
_BTN_TURN = const(3)


_IDLE_MS_AT_REST = const(2)
# the journal's need_open (journal.py's _N_OPEN, _N_PREP)
_J_OPEN = const(1)          # its current game into a new file: service() in this iteration
_J_PREP = const(2)          # the next game's file prepared: a step in an iteration whose turn was
                            # light and at rest (one step is a 4 KB erase, 45 ms on the chip)

# work step() puts off to the turns after (Scoreboard.verdict, bits; issue 13: no loop turn at
# rest over 10 ms on the chip)
_PUT_EVENT = const(1)       # the tracker's event (bits _PUT_EV up): its rules and the fault
                            # monitor's frame at the next turn's start
_PUT_LINES = const(2)       # a shot's verdict: its screen a page a turn, then its lines, its save
_PUT_PAGE = const(4)        # a page turn of a verdict's screen counted (bits 2 - 5) ...
_PUT_MAX = const(42)        # ... to 10 (2 + 4 * 10; 8 pages, 8 digit columns): the lines go out then
_PUT_KEEP = const(62)       # the bits of a verdict's screen (_PUT_LINES, the page count)
_PUT_EV = const(6)
# the hall pads' refresh fit (the settled readings fitted again for a verdict) spread over the
# turns after its frame on the chip (Locator.resume; issue 13: 11.5 ms with four chips, then
# the tracker's verdict, 24 ms in one turn): _PUT_FIT while its pieces are made, _PUT_FITTED
# once they are (the frame's end then: the tracker, its event); no scan in those turns
_PUT_FIT = const(1024)
_PUT_FITTED = const(2048)
# the fault monitor's look at a frame whose verdict (Tracker._finish, put off to a turn of its own
# on the chip) brought no event: at the next turn's start, as with an event (_PUT_EVENT), so
# that no verdict's turn holds it (issue 13: the hall verdict's frame with four chips 10.3 ms)
_PUT_FAULTS = const(4096)

WDT_MS = const(5000)        # the watchdog: a loop turn that hangs this long resets the chip

# chips on the board that the game has no use for (conditions, bits; shown while they last,
# the lowest bit first)
_CH_TOO_MANY = const(1)      # more chips than the tracker has slots
_CH_TWO_SMALL = const(2)     # two small chips
_CH_BIG = const(4)           # a big chip during Zenn Bowling


# a button that cannot act now (a notice, with a "refused" event)
_WHY_MOVING = const(0)
_WHY_NOTHING = const(1)
_WHY_NOT_NOW = const(2)
_WHY_NOT_HERE = const(3)


class Scoreboard(StatusRow, Menus, Correction, Tools):
    # A shot's result stays on the displays this long (ms) before the next player's screen:
    # as a bowling centre's scoreboard shows "STRIKE" before it moves on. Cut short by any
    # button (next alone does nothing else) or a chip put down (the next player is ready);
    # the next shot shows its own result. docs/playing.md, "After each shot".
    RESULT_MS = 3000

    def __init__(self, out=None, config_path=CONFIG_PATH):
        if out is None:
            out = sys.stdout
        self.out = out
        self.config_path = config_path

    def boot(self):
        gc.collect()                # the imports' garbage (above, at the imports)
        if hasattr(micropython, "alloc_emergency_exception_buf"):   # not on the unix port
            micropython.alloc_emergency_exception_buf(100)           # errors inside pin IRQs
        self.ev = EventWriter(self.out)
        self.fast = FastInputs()
        self.buttons = Buttons()
        # config.json on flash (config.py): which pads, which displays, ...; faults reported below
        from storage import config
        c = config.load(self.config_path)
        cfg = c.values              # {key: value} of every setting, defaults filled in
        cfg_faults = c.faults
        c = None
        _forget("storage.config")           # boot only: its code is not kept
        self.shift = cfg.get("front_end") == "shift"
        if self.shift:
            # the presence pads (docs/sensing.md, "The second front end")
            from sensing.shift_scan import PresenceScanner
            from sensing.presence_locate import PresenceLocator
            gc.collect()
            self.scan = PresenceScanner()
            self.loc = PresenceLocator(self.scan)
        else:
            from sensing.hall_scan import HallScanner
            from sensing.hall_locate import Locator
            gc.collect()
            self.scan = HallScanner()
            self.loc = Locator(self.scan)     # fits again only when a pad jumped
        self.tracker = TR.Tracker(self.loc, self.fast)
        self.seen = 0               # the scanner's change count last looked at (step)
        self.hurry = 0              # 1: a pad changed at rest, no idling until the frame ends
        self.faults = FA.FaultMonitor(self.scan, self.loc, self.fast, self.tracker, self.ev, self.shift)
        # the pads' calibration (calib.py) before the displays' code is imported: calib.py is
        # imported for it and dropped again, and its import then finds more room
        self.notice = None          # the status row's notice (bytes), until a button or a shot
        cal = self.load_calibration()
        _forget("sensing.calib")
        gc.collect()
        self.calibration = None     # calib.Calibration while calibrating
        self.calib_job = 0          # the calibration step service() is to run (1..4)
        self.cstep = 0
        self.padmap = None
        self.tool_pending = 0       # CALIB / SENSORS to open once service() made its objects
        self.best_job = 0           # service(): 1 a game ended (record it), 2 show the best
        self.best_lines = ()        # the best games' pages [(title, text)] while shown
        self.ui = Displays().open(cfg, _GAMES)
        self.oled = self.ui.oled            # None when the configuration has no OLED
        # the buzzer after the displays: its pin is SPI0's MISO too (pin map), which it takes
        # over; not configured, its code is not even imported
        self.buzzer = _open_buzzer() if cfg.get("buzzer") else None
        from games import registry as R
        self.games = _GAMES         # the registry's games (games/registry.py), the menu's order
        self.engines = R.engines(_GAMES, self.ev)   # one per game, in the same order
        # bit i set: engine i writes a shot's lines in shot_lines(), which on_board() has called
        # once the verdict's screen is shown (issue 13); clear: on_shot() writes them. A small
        # int, not a bytearray: the presence image had 16 B too few of its 180 KB heap floor
        self.lines_later = 0
        for i in range(len(self.engines)):
            if hasattr(self.engines[i], "shot_lines"):
                self.lines_later |= 1 << i
        self.setup = -1          # the game's set-up check: -1 not known, 0 wrong, 1 right
        self.flip_winner = 1
        self.game = None            # the engine of the game played (or last played)
        self.mode = MENU
        self.page = _PAGE_GAME
        self.choice = 0
        self.game_choice = 0        # that game's index in the registry
        self.players = 1
        self.dirty = 1
        self.held = 0               # 1: the last shot's result is on the displays (RESULT_MS)
        self.held_t = 0             # since this ticks_ms
        self.mode_before = MENU
        self.need_service = 0
        self.verdict = 0            # work put off to the next turns (_PUT_*; step())
        self.shown = None           # what the status row shows
        self.stuck = NONE           # the button reported stuck
        self.chips = 0              # CH_* bits shown
        self.jfault = J.F_NONE      # the journal's condition shown (F_IO, F_FULL)
        self.cvals = bytearray(11)  # the correction screen's values, its title
        self.ncv = 0
        self.ctitle = bytearray(b"Correct P1 F10 B3")
        self.digit = bytearray(1)       # the players ("1" .. "6") or end ("a", "b") menu's choice
        self.pins = bytearray(b"2 pins")        # the correction screen's "2 pins" .. "9 pins"
        wd = _reset_was_watchdog()
        self.ev.begin(b"boot")
        self.ev.str_(b"reset", b"watchdog" if wd else b"power")
        self.ev.str_(b"calib", cal)     # the pads' calibration: loaded, missing or damaged
        self.ev.end()
        self.config_faults(cfg_faults)
        self.restore(wd)
        self.redraw()
        self.ui.flush()
        # the folders' package modules are namespaces only: once boot() has imported what it
        # uses nothing refers to them but sys.modules (each a dict of its submodules), so they
        # are dropped (issue 15: their heap, with the frozen image too); an import later makes
        # its package again
        _forget("games.registry")          # boot only (journal.py, display_set.py read it too)
        for name in _PACKAGES:
            _forget(name)
        gc.collect()
        self.wdt = WDT(timeout=WDT_MS)

    def restore(self, wd):
        # the game in progress from the journal (journal.py), played back through the rules
        self.journal = J.Journal(self.ev)
        g = self.journal.boot(self.engines)
        j = self.journal
        if g != J.G_NONE:
            from games import registry as R
            k = R.index(self.games, g)
            self.mode = GAME
            self.game_choice = k
            self.game = self.engines[k]
            self.players = self.game.players
            self.setup = -1
            self.ev.begin(b"restored")
            self.ev.str_(b"game", self.game.name)
            self.ev.int_(b"entries", j.played)
            self.ev.str_(b"reset", b"watchdog" if wd else b"power")
            self.ev.bool_(b"torn", j.status == J.S_TORN)
            self.ev.end()
            self.notice = b"Watchdog: restored" if wd else b"Game restored"
        if J_TEXT[j.fault] is not None and j.fault < J.F_IO:
            self.notice = J_TEXT[j.fault]

    # -- the loop --------------------------------------------------------------------------
    def step(self):
        # One turn. At rest no turn may take over 10 ms on the chip (issue 13), so the work a
        # verdict, an undo or a button brings is spread over the turns after it, one heavy piece
        # a turn (docs/architecture.md, "A loop turn's work"): the turn that ends a frame (find,
        # tracker, the rules when it brings an event; the fault monitor's frame then put off to
        # the next turn's start), a button's action or a fault's report; then the redraw; then
        # one page (and digit frame) a turn; a verdict's shot lines once its screen is sent,
        # with the save in that turn; else the save in a turn with nothing heavier.
        self.wdt.feed()
        v = self.verdict
        heavy = 0
        if v & _PUT_FAULTS:
            # (nothing it reads has changed since: this turn has not scanned yet)
            self.verdict = v & ~_PUT_FAULTS
            heavy = 1
            if self.faults.frame():
                self.dirty = 1
            v = self.verdict
        if v & _PUT_EVENT:
            # the frame the turn before ended brought an event: the rules (a verdict's, played
            # silent, its entry queued), the chips check and the fault monitor's look at that
            # frame, now (nothing they read has changed since: this turn has not scanned yet)
            self.verdict = v & _PUT_KEEP
            heavy = 1
            self.on_board(v >> _PUT_EV)
            if self.tracker.at_rest():
                self.check_chips()
            if self.faults.frame():
                self.dirty = 1          # a hand came or went: drawn in a later turn
            v = self.verdict
        ended = 0
        if v & _PUT_FIT:
            # the frame's refresh fit under way (hall pads, on the chip): a piece of it, or
            # once it is made the frame's end; nothing scanned (the fit's end reads the frame
            # in the grid), no button, as in the one turn these pieces were
            heavy = 1
            ended = 2
            if v & _PUT_FITTED:
                self.verdict = v & ~(_PUT_FIT | _PUT_FITTED)
                ended = 1               # the frame's end (below)
            else:
                self.loc.find(self.scan.grid)   # (its next piece: hall_follow.settle)
                if not self.loc.pace & 16:
                    self.verdict = v | _PUT_FITTED
        elif self.scan.step():
            ended = 1
            heavy = 1
            self.hurry = 0
            self.loc.find(self.scan.grid)
            if not self.shift and self.loc.pace & 16:
                self.verdict = v | _PUT_FIT     # its fits in the next turns (above)
                ended = 2
        elif not heavy and not (v & _PUT_LINES) and self.faults.rn and self.faults.report():
            # a fault found: its report written in a step that ends no frame (issue 13: the
            # frame's end is the loop's longest step already), and not while a verdict's screen
            # is being sent (its line would have to go first, before its score is shown)
            heavy = 1
            if self.faults.text is not None:
                self.notice = self.faults.text
                self.faults.text = None
            self.dirty = 1
        late = 0
        if ended == 1:
            # the frame's end, its fit made: the tracker
            late = self.tracker.confirm == 2    # its verdict, put off to this turn
            self.tracker.frame()
            e = self.tracker.take_event()
            if self.tracker.confirm == 2:
                # its verdict put off to the next turn (the hall pads' paced refresh, on the
                # chip): that turn calls frame() again, scanning nothing (above)
                self.verdict |= _PUT_FIT | _PUT_FITTED
                ended = 2
            elif e != TR.EV_NONE:
                ended = 2               # its work in the next turn (above); no button this turn
                self.verdict |= _PUT_EVENT | (e << _PUT_EV)
            elif self.tracker.at_rest():
                self.check_chips()      # (also when a fifth chip keeps the tracker from resting)
            if late and ended == 1:
                self.verdict |= _PUT_FAULTS
            if self.mode == SENSORS:
                self.padmap.draw()
        if self.held and time.ticks_diff(time.ticks_ms(), self.held_t) >= self.RESULT_MS:
            self.held = 0
            self.dirty = 1
        b = self.buttons.poll() if ended < 2 else NONE     # (after the event's rules, next turn)
        if b != NONE:
            self.ev.due()               # a shot's lines put off first: a button may change the game
            self.on_button(b)
            heavy = 1
        s = self.buttons.any_stuck()
        if s != self.stuck:
            self.stuck_changed(s)
        # the displays: one piece a turn, never in a turn that did any of the above
        save = 0                        # 1: the save may go in this turn
        if heavy:
            save = ended < 2 and b == NONE     # a frame's end without an event, a report
        elif self.dirty:
            self.dirty = 0
            self.redraw()
            save = 1
            for d in self.ui.drivers:
                if d.dirty:
                    save = 0            # (a redraw that changed nothing: the save may follow)
        else:
            busy = 0
            for d in self.ui.drivers:
                busy |= d.dirty
            if v & _PUT_LINES:
                # a shot's verdict: its screen is sent a page a turn; then its lines (ev.put_off:
                # the score is on the displays when they are written) and its save, in one turn
                if busy and v < _PUT_MAX:
                    self.verdict = v + _PUT_PAGE
                    self.ui.service()
                else:
                    self.verdict = 0
                    self.ev.due()
                    save = 1
            elif busy:
                self.ui.service()
                busy = 0
                for d in self.ui.drivers:
                    busy |= d.dirty
                save = not busy         # the screen's last page sent: the save may follow
            else:
                save = 2                # (nothing else in this turn: light)
        # the journal after the screen: a save written in place is about 1 ms on the chip, but a
        # file appended to (no block device at hand, or its block not found) is a littlefs commit,
        # one in 16 of them compacting the directory (a 4 KB erase, 64 - 69 ms; docs/persistence),
        # which must not hold back a verdict's score; a cut before the save ends loses that entry
        j = self.journal
        if save and j.np and not self.dirty and not (self.verdict & _PUT_LINES) and self.tracker.at_rest():
            j.write()                   # between shots: a flash write stalls the chip
        elif save == 2 and j.need_open == _J_PREP and self.tracker.at_rest():
            self.need_service |= 2      # service(): a step of the journal's preparation may follow
        if j.need_open == _J_OPEN:
            self.need_service |= 1
        if j.fault != self.jfault and (j.fault >= J.F_IO or self.jfault >= J.F_IO):
            self.jfault = j.fault if j.fault >= J.F_IO else J.F_NONE
            self.dirty = 1              # the status row: drawn next turn
        if ended == 1 and not late and self.faults.frame():
            self.dirty = 1              # a hand came or went: drawn in a later turn
        if self.buzzer is not None:
            self.buzzer.service()
        if self.tracker.at_rest():
            # at rest the loop idles between banks, unless a pad has just changed: a chip set
            # moving is then followed from the next bank on, so a fast flick is seen on its
            # way and not only gone (a frame at rest takes 48 ms, a hurried one 16). Also while a
            # verdict's or a button's work is spread over the next turns: not idling then would
            # scan more often than before, and every reading's noise (the simulator draws it per
            # conversion) would move, and with it a chip's zone by a line (issue 13: the seed
            # benches give the same events only so)
            v = self.scan.version if self.shift else self.scan.jumps  # type: ignore[attr-defined]  # either scanner
            if v != self.seen:
                self.seen = v
                self.hurry = 1
            if not self.hurry:
                return _IDLE_MS_AT_REST
        return 0

    def service(self):
        # outside the loop turn (allocates): the journal opens the current game's new file, or
        # prepares the next game's, a step an iteration, once a game has ended; a calibration
        # step scans and measures
        ns = self.need_service
        self.need_service = 0
        if self.tool_pending:
            self.tool_service()
        if self.calib_job:
            self.calib_service()
        if self.best_job:
            if self.verdict & _PUT_LINES:
                self.need_service = 1   # the game's end: its best line after its shot's lines
            else:
                self.best_service()     # (a littlefs commit): the journal's work, the next
                self.need_service = 1   # game's file prepared, from the next iteration on
                return
        if ns & 2 or self.journal.need_open != _J_PREP:
            self.journal.service(self.game)     # (a preparation's step: after a light turn)

    def mode_of_game(self):
        return self.mode_before if self.mode == MENU else self.mode

    # -- what happened on the board ------------------------------------------------------
    def on_board(self, e):
        if e == TR.EV_PLACED or e == TR.EV_CHANGED:
            self.unhold()                   # a chip put down: the next player is ready
            if self.mode == GAME and self.game.placed(self.tracker):
                self.dirty = 1              # it asked for the chip there (Bowling: put back)
        if e == TR.EV_SHOT:
            self.notice = None
            self.held = 0
            self.verdict |= _PUT_LINES      # its screen, then its lines and save (step())
            if self.mode == MENU and (self.page == _PAGE_RESTART or self.page == _PAGE_CORRECT):
                self.mode = self.mode_before    # a shot drops the question; the shot counts
            self.dirty = 1
        sure = 1
        if e == TR.EV_SHOT:
            # the pads' verdict: sure unless a chip lies too near a zone border for what the
            # pads can tell (docs/rules.md, "Unsure verdicts"); the shot line says so
            res = self.tracker.res
            if self.mode == GAME:
                self.game.weigh(res)        # what its verdict reads that the pads cannot tell
            for i in range(res.n):
                if res.kind[i] and not res.sure[i]:
                    sure = 0
            self.ev.annotate(b"shot", b"sure", sure)
        if self.mode == GAME:
            g = self.game
            if e == TR.EV_SHOT:
                if (self.lines_later >> self.game_choice) & 1:
                    # played silent: its lines are written once its screen is shown (step(),
                    # ev.due(); or before any other line, ev.begin()), issue 13: rest -> shown
                    g.ev = None
                    c = g.on_shot(self.tracker.res)
                    g.ev = self.ev
                    if c >= 0:
                        self.ev.put_off(g)
                else:
                    c = g.on_shot(self.tracker.res)
                if c >= 0:
                    self.journal.out(c)
                    if g.result():
                        self.hold()
                    if self.buzzer is not None:
                        self.buzzer.after_shot(g)
                    if g.over:
                        self.best_due()
            self.check_setup()
            self.dirty = 1
            # an unsure verdict is said on the status row too, unless the game's own word is there
            if not sure and not g.own_status():
                self.notice = b"Unsure: check chips"

    def hold(self):
        self.held = 1
        self.held_t = time.ticks_ms()

    def unhold(self):
        if self.held:
            self.held = 0
            self.dirty = 1

    def check_chips(self):
        # chips the game has no use for: conditions while they lie on the board
        m = self.mode_of_game()
        c = 0
        if m != MENU:
            tr = self.tracker
            if self.loc.n > TR.MAX:
                c |= _CH_TOO_MANY
            if tr.count(S.KIND_SMALL) > 1:
                c |= _CH_TWO_SMALL
            if m == GAME and self.game.BIG_CHIPS == 0 and tr.count(S.KIND_BIG) > 0:
                c |= _CH_BIG
        d = c ^ self.chips
        if d == 0:
            return
        ev = self.ev
        for k in range(3):
            if d & (1 << k):
                ev.begin(b"fault")
                ev.str_(b"what", b"chips")
                ev.str_(b"why", CH_NAMES[k])
                ev.bool_(b"on", (c >> k) & 1)
                ev.end()
        self.chips = c
        self.dirty = 1


    def check_setup(self):
        # the game's set-up (Trap Zenn: the chips before a round's first shot), said once it
        # changes; -1 while the game has none to check
        ok = self.game.setup_state(self.tracker)
        if ok < 0:
            self.setup = -1
        elif ok != self.setup:
            self.setup = ok
            self.ev.begin(b"setup")
            self.ev.bool_(b"ok", ok)
            self.ev.end()

    # -- buttons -------------------------------------------------------------------------------
    def on_button(self, b):
        self.cfg_fault = False              # a button press acknowledges a notice
        self.notice = None
        self.held = 0                       # ... and the result on show
        self.dirty = 1
        if self.mode == MENU:
            self.menu_button(b)
        elif self.mode == CALIB or self.mode == SENSORS:
            self.tool_button(b)
        elif b == _BTN_NEXT + LONG:
            # a long press on next asks for a new game; ok confirms, anything else goes back
            self.mode_before = self.mode
            self.mode = MENU
            self.page = _PAGE_RESTART
        elif b >= LONG or b == _BTN_NEXT:
            pass                            # its short press acted already; next alone: nothing
        elif not self.tracker.at_rest():
            self.refuse(b, _WHY_MOVING)      # the shot under way would land on the wrong ball
        elif self.mode == GAME:
            g = self.game
            if b == _BTN_UNDO:
                if g.undo():
                    self.journal.undo()
                    g.placed(self.tracker)      # the chip may lie where it goes back already
                else:
                    self.refuse(b, _WHY_NOTHING)
            elif b == _BTN_TURN and g.TURN >= 0:
                if g.end_turn():
                    self.journal.out(g.TURN)    # the journal's entry for it
                else:
                    self.refuse(b, _WHY_NOT_NOW)
            elif b == _BTN_OK and g.CORRECTS:
                self.open_correct()
            else:
                self.refuse(b, _WHY_NOT_HERE)

    # -- display ---------------------------------------------------------------------------
    def redraw(self):
        u = self.ui
        if self.mode == SENSORS:
            self.padmap.draw()          # the map takes the whole OLED, status row too
            return
        st = self.status()
        if st is not self.shown:
            self.shown = st
            u.fault(st)
        if self.mode == MENU:
            self.draw_page(u)
        elif self.mode == GAME:
            u.draw_game(self.game_choice, self.game, self.setup, self.held)
        elif self.mode == CALIB:
            self.draw_tool(u)


def _open_buzzer():
    from machine import PWM, Pin
    from panel import buzzer
    return buzzer.Buzzer(PWM(Pin(pins.BUZZER)))


_PACKAGES = ("tables", "sensing", "tracking", "games", "displays", "storage", "panel", "scoreboard")


def _reset_was_watchdog():
    import machine
    return machine.reset_cause() == getattr(machine, "WDT_RESET", 3)
