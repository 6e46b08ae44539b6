# The status row: the most urgent condition (a stuck button, the flash failing, chips the game
# has no use for, the pads unreadable, a hand over the pads) while it lasts, else the notice
# until the next button or shot; and the events that go with them. A part of Scoreboard
# (scoreboard/app.py).
from panel.buttons import NONE
from storage import journal as J


BUTTON_NAMES = (b"next", b"ok", b"undo", b"turn")
STUCK_TEXT = (b"Stuck button: next", b"Stuck button: ok", b"Stuck button: undo",
              b"Stuck button: turn")

# chips on the board that the game has no use for (app.py's _CH_* bits, the lowest bit first)
CH_NAMES = (b"too_many", b"two_small", b"big_chip")
CH_TEXT = (b"Too many chips!", b"Two small chips!", b"Big chip: take it off")

# a button that cannot act now (a notice, with a "refused" event; app.py's _WHY_*)
WHY_NAMES = (b"moving", b"nothing", b"not_now", b"not_here")
WHY_TEXT = (b"Wait: chips moving", b"Nothing to take back", b"Not now", b"Button not used here")

J_TEXT = (None, b"Foreign journal file", b"Journal damaged", b"Journal: bad entry",
          b"Flash error: no save", b"Journal full: no save")


class StatusRow:
    def config_faults(self, faults):
        # each config.json problem (config.Config.faults: (key, message)) as an event; the first
        # one on the displays (until a button is pressed). The settings concerned run on their
        # defaults.
        self.cfg_fault = False
        for key, msg in faults:
            self.ev.begin(b"fault")
            self.ev.str_(b"what", b"config")
            self.ev.str_(b"key", key.encode())
            self.ev.str_(b"msg", msg.encode())
            self.ev.end()
        if faults:
            key = faults[0][0]
            self.notice = ("Config? " + (key if key else "bad file")).encode()
            self.cfg_fault = True

    def stuck_changed(self, s):
        ev = self.ev
        ev.begin(b"fault")
        ev.str_(b"what", b"button")
        ev.str_(b"why", b"stuck")
        ev.str_(b"button", BUTTON_NAMES[s if s != NONE else self.stuck])
        ev.bool_(b"on", s != NONE)
        ev.end()
        self.stuck = s
        self.dirty = 1

    def refuse(self, b, why):
        ev = self.ev
        ev.begin(b"refused")
        ev.str_(b"button", BUTTON_NAMES[b])
        ev.str_(b"why", WHY_NAMES[why])
        ev.end()
        self.notice = WHY_TEXT[why]

    def status(self):
        # what the status row shows: the most urgent condition, else the notice
        if self.stuck != NONE:
            return STUCK_TEXT[self.stuck]
        if self.jfault != J.F_NONE:
            return J_TEXT[self.jfault]
        c = self.chips
        if c:
            return CH_TEXT[0 if c & 1 else 1 if c & 2 else 2]
        if self.faults.unread_on:
            return b"Pads unreadable"   # nothing on the board can be read (faults.py)
        if self.faults.hand_on:
            return b"Hand over the pads"
        return self.notice
