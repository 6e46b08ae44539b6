# The pads' tools (issue 4, docs/controls.md): the calibration, its console command and the
# sensor test screen. A part of Scoreboard (scoreboard/app.py); sensing/calib.py and
# displays/padmap.py are imported only while a tool is asked for (calib.py dropped again).
from micropython import const

from panel.buttons import LONG
from scoreboard.heap import forget as _forget
from scoreboard.menus import _menu

# modes (app.py's MENU ... as module-private consts: tests/test_app_modules.py checks that the
# values agree; each module keeps its own const()s so that they stay inlined, and out of its dict)
_MENU = const(0)
_CALIB = const(3)
_SENSORS = const(4)

_PAGE_GAME = const(0)

# buttons (order of pins.BUTTONS)
_BTN_NEXT = const(0)
_BTN_OK = const(1)
_BTN_UNDO = const(2)

_WHY_NOT_HERE = const(3)        # status_row.WHY_NAMES

# the calibration's steps (calib.py): what to do, then ok; next skips a step, undo leaves
_CAL_TEXT = b"Clear the boardSmall chip, centreBig chip, centreSave calibration"
_CAL_TEXT_AT = b"\x00\x0f\x21\x31\x41"
_CAL_STEPS = const(4)


class Tools:
    # -- the pads: calibration, sensor test, faults (issue 4) -------------------------------------
    def load_calibration(self):
        # calib.bin on flash: the pads' zeros, the chips' strength or seen size, pads left out
        # (the boot event says loaded, missing or damaged). Damaged: said on the status row too;
        # missing is a new table's state and runs well on defaults: the event says it
        from sensing import calib
        st, k = calib.load(self.scan, self.loc, self.shift)
        if st == calib.DAMAGED and self.notice is None:
            self.notice = b"Calibration damaged"
        return calib.STATUS_NAMES[st]

    def start_tool(self, m):
        # the tool's objects are made the first time, outside the loop turn (service())
        if (m == _CALIB and self.calibration is None) or (m == _SENSORS and self.padmap is None
                                                          and self.oled is not None):
            self.tool_pending = m
            self.need_service = 1
            return
        if m == _SENSORS and self.padmap is None:
            self.refuse(_BTN_OK, _WHY_NOT_HERE)   # no OLED to show the map on
            return
        self.mode_before = _MENU
        self.mode = m
        self.cstep = 0
        if m == _SENSORS:
            self.oled.fill(0)
            self.padmap.reset()

    def tool_service(self):
        m = self.tool_pending
        self.tool_pending = 0
        if m == _CALIB:
            from sensing import calib
            self.calibration = calib.Calibration(self.scan, self.loc, self.shift)
        else:
            from displays.padmap import PadMap
            self.padmap = PadMap(self.oled, self.scan, self.loc, self.shift)
        self.start_tool(m)
        self.dirty = 1

    def leave_tool(self):
        if self.mode == _SENSORS and self.oled is not None:
            self.oled.fill(0)
        self.mode = _MENU
        self.page = _PAGE_GAME
        self.choice = 0

    def tool_button(self, b):
        # sensor test: ok or undo back to the menu. Calibration: ok does the step, next skips
        # it, undo leaves (what was measured stays in use until the next boot, unsaved)
        if b >= LONG:
            return
        if self.mode == _SENSORS:
            if b == _BTN_OK or b == _BTN_UNDO:
                self.leave_tool()
            return
        if self.calib_job:
            return
        if b == _BTN_UNDO:
            self.leave_tool()
        elif b == _BTN_NEXT:
            self.cstep += 1
            if self.cstep >= _CAL_STEPS:
                self.leave_tool()
        elif b == _BTN_OK:
            self.calib_job = self.cstep + 1
            self.need_service = 1

    def command(self, line):
        # a line from the serial console (main.py; tools/calibrate): "calib empty|small|big|save"
        # runs that calibration step now, outside the loop turn, and writes its calib event
        # (calib.command); a blank line (an empty one, or spaces, tabs, a lone "\r" from a
        # terminal) is no command and is ignored; anything else is refused
        w = line.split()
        if not w:
            return
        if len(w) == 2 and w[0] in ("calib", b"calib"):
            from sensing import calib
            if calib.command(self, w[1]):
                return
            if self.calibration is None:
                _forget("sensing.calib")
        ev = self.ev
        ev.begin(b"refused")
        ev.str_(b"command", line.strip().encode() if isinstance(line, str) else line.strip())
        ev.str_(b"why", b"unknown")
        ev.end()

    def calib_service(self, menu=True):
        # one calibration step, outside the loop turn (it scans frames and allocates): its event
        # and notice (calib.step); the menu goes on to the next step after the empty board and
        # the save
        from sensing import calib
        if calib.step(self) and menu:
            self.cstep += 1
            if self.cstep >= _CAL_STEPS:
                self.leave_tool()
        self.dirty = 1


    def draw_tool(self, u):
        # the calibration's step on the displays (Scoreboard.redraw, mode CALIB)
        _menu(u, b"Calibrate pads", _CAL_TEXT, _CAL_TEXT_AT, self.cstep,
                    b"working..." if self.calib_job else
                    (b"ok=add spot / next" if self.cstep in (1, 2) else b"ok / next=skip / undo"))
