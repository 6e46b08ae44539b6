# The scoreboard: wires the pads, the fast inputs, the tracker, the rules, the display and the
# event stream together. boot() allocates everything; step() is one turn of the scan loop and
# allocates nothing (tests run it with the heap locked).
#
# One step scans one bank of pads (48 of them). A full frame takes 16 steps. While chips move
# the loop runs flat out; while everything rests it idles between steps (returned to the
# caller as milliseconds to sleep), which also lets the simulator skip ahead.
from micropython import const
import sys
import time
import micropython

import pins
import shot as S
import tracker as TR
from events import EventWriter
from fastin import FastInputs
from buttons import Buttons, NONE, LONG
from hall_scan import HallScanner
from locate import Locator
from rules_bowling import Bowling
from rules_trap import Trap, PROMPT_SETUP as TRAP_SETUP
import config
from displays import Displays

# modes
MENU = const(0)
BOWLING = const(1)
TRAP = const(2)

# menu pages
PAGE_GAME = const(0)
PAGE_PLAYERS = const(1)
PAGE_END = const(2)
PAGE_TRAPPER = const(3)
PAGE_ROLE = const(4)
PAGE_RESTART = const(5)

# buttons (order of pins.BUTTONS)
BTN_NEXT = const(0)
BTN_OK = const(1)
BTN_UNDO = const(2)
BTN_TURN = const(3)

GAMES = (b"Zenn Bowling", b"Trap Zenn 1", b"Trap Zenn 2")
ENDS = (b"a", b"b")
TRAPPER = (b"Coin flip", b"Player 1", b"Player 2")
ROLE = (b"Winner traps", b"Winner flees")
DIGITS = (b"1", b"2", b"3", b"4", b"5", b"6")
FLIP_WON = (b"P1 won the flip", b"P2 won the flip")

IDLE_MS_AT_REST = const(2)


class Scoreboard:
    def __init__(self, out=None, config_path=config.PATH):
        if out is None:
            out = sys.stdout
        self.out = out
        self.config_path = config_path

    def boot(self):
        if hasattr(micropython, "alloc_emergency_exception_buf"):   # not on the unix port
            micropython.alloc_emergency_exception_buf(100)           # errors inside pin IRQs
        self.ev = EventWriter(self.out)
        self.fast = FastInputs()
        self.buttons = Buttons()
        self.scan = HallScanner()
        self.loc = Locator()
        self.tracker = TR.Tracker(self.loc, self.fast)
        # config.json on flash (config.py): which displays, ...; faults reported below
        self.cfg = config.load(self.config_path)
        self.ui = Displays().open(self.cfg)
        self.oled = self.ui.oled            # None when the configuration has no OLED
        self.bowling = Bowling(self.ev)
        self.trap = Trap(self.ev)
        self.setup = -1          # trap set-up check: -1 not known, 0 wrong, 1 right
        self.flip_winner = 1
        self.game = None
        self.mode = MENU
        self.page = PAGE_GAME
        self.choice = 0
        self.game_choice = 0
        self.players = 1
        self.dirty = 1
        self.ev.begin(b"boot")
        self.ev.str_(b"reset", b"watchdog" if _reset_was_watchdog() else b"power")
        self.ev.end()
        self.config_faults()
        self.redraw()
        self.ui.flush()

    # -- the loop --------------------------------------------------------------------------
    def step(self):
        if self.scan.step():
            self.loc.find(self.scan.grid)
            self.tracker.frame()
            e = self.tracker.take_event()
            if e != TR.EV_NONE:
                self.on_board(e)
        b = self.buttons.poll()
        if b != NONE:
            self.on_button(b)
        if self.dirty:
            self.dirty = 0
            self.redraw()
        self.ui.service()
        if self.tracker.at_rest():
            return IDLE_MS_AT_REST
        return 0

    def config_faults(self):
        # each config.json problem as an event; the first one on the displays (until a button
        # is pressed). The settings concerned run on their defaults.
        self.cfg_fault = False
        for key, msg in self.cfg.faults:
            self.ev.begin(b"fault")
            self.ev.str_(b"what", b"config")
            self.ev.str_(b"key", key.encode())
            self.ev.str_(b"msg", msg.encode())
            self.ev.end()
        if self.cfg.faults:
            key = self.cfg.faults[0][0]
            self.ui.fault(("Config? " + (key if key else "bad file")).encode())
            self.cfg_fault = True

    # -- what happened on the board ------------------------------------------------------
    def on_board(self, e):
        if self.mode == BOWLING:
            if e == TR.EV_SHOT:
                self.bowling.on_shot(self.tracker.res)
            self.dirty = 1
        elif self.mode == TRAP:
            t = self.trap
            if e == TR.EV_SHOT:
                t.on_shot(self.tracker.res)
            if t.prompt == TRAP_SETUP:
                self.check_setup()
            else:
                self.setup = -1
            self.dirty = 1

    def check_setup(self):
        ok = 1 if self.trap.setup_ok(self.tracker) else 0
        if ok != self.setup:
            self.setup = ok
            self.ev.begin(b"setup")
            self.ev.bool_(b"ok", ok)
            self.ev.end()

    # -- buttons -------------------------------------------------------------------------------
    def on_button(self, b):
        if self.cfg_fault:                  # a button press acknowledges a config fault
            self.cfg_fault = False
            self.ui.fault(None)
        if self.mode == MENU:
            self.menu_button(b)
        elif b == BTN_NEXT + LONG:
            # a long press on next asks for a new game; ok confirms, anything else goes back
            self.mode_before = self.mode
            self.mode = MENU
            self.page = PAGE_RESTART
        elif self.mode == BOWLING:
            if b == BTN_UNDO:
                self.bowling.undo()
        elif self.mode == TRAP:
            if b == BTN_UNDO:
                self.trap.undo()
            elif b == BTN_TURN:
                self.trap.end_turn()
        self.dirty = 1

    def menu_button(self, b):
        p = self.page
        if p == PAGE_RESTART:
            if b == BTN_OK:
                self.page = PAGE_GAME
                self.choice = 0
            else:
                self.mode = self.mode_before
            return
        if b == BTN_NEXT:
            n = 3
            if p == PAGE_PLAYERS:
                n = 6
            elif p == PAGE_END or p == PAGE_ROLE:
                n = 2
            self.choice = (self.choice + 1) % n
        elif b == BTN_OK:
            c = self.choice
            self.choice = 0
            if p == PAGE_GAME:
                self.game_choice = c
                self.page = PAGE_PLAYERS if c == 0 else PAGE_TRAPPER
            elif p == PAGE_PLAYERS:
                self.players = c + 1
                self.page = PAGE_END
            elif p == PAGE_END:
                self.mode = BOWLING
                self.bowling.start(self.players, c)
            elif p == PAGE_TRAPPER:
                if c == 0:
                    self.flip_winner = self.flip_coin()
                    self.page = PAGE_ROLE
                else:
                    self.start_trap(c, False)
            elif p == PAGE_ROLE:
                w = self.flip_winner
                self.start_trap(w if c == 0 else 3 - w, True)

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

    def start_trap(self, trapper, coin):
        self.mode = TRAP
        self.trap.start(self.game_choice, trapper, coin)
        self.setup = -1
        self.check_setup()

    # -- display ---------------------------------------------------------------------------
    def redraw(self):
        u = self.ui
        if self.mode == MENU:
            p = self.page
            c = self.choice
            if p == PAGE_GAME:
                u.draw_menu(b"Game", GAMES[c], b"next / ok")
            elif p == PAGE_PLAYERS:
                u.draw_menu(b"Players", DIGITS[c], b"next / ok")
            elif p == PAGE_END:
                u.draw_menu(b"Shooter end", ENDS[c], b"next / ok")
            elif p == PAGE_TRAPPER:
                u.draw_menu(b"Trapper", TRAPPER[c], b"next / ok")
            elif p == PAGE_ROLE:
                u.draw_menu(FLIP_WON[self.flip_winner - 1], ROLE[c], b"next / ok")
            elif p == PAGE_RESTART:
                u.draw_menu(b"New game?", b"ok = yes", b"other = no")
        elif self.mode == BOWLING:
            u.draw_bowling(self.bowling)
        elif self.mode == TRAP:
            u.draw_trap(self.trap, self.setup)


def _reset_was_watchdog():
    import machine
    return machine.reset_cause() == getattr(machine, "WDT_RESET", 3)
