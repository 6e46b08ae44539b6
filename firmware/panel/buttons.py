# The scoreboard's buttons: next, ok, undo, turn (docs/controls.md). Polled from the loop
# (people press buttons for tens of milliseconds), debounced, reported once per press, and
# once more as a long press when held. A button held far too long is reported as stuck so a
# jammed key cannot repeat an action. RAM: about 60 bytes.
from micropython import const
from array import array
from machine import Pin
import time

from tables import pins

N_BUTTONS = const(4)
NONE = const(-1)
# event codes: button index + LONG for a long press
LONG = const(8)


class Buttons:
    DEBOUNCE_MS = 20
    LONG_MS = 1500
    STUCK_MS = 20000

    def __init__(self):
        self.pins = tuple(Pin(g, Pin.IN, Pin.PULL_UP) for g in pins.BUTTONS)
        self.stable = bytearray(N_BUTTONS)      # 1 = pressed (debounced)
        self.raw = bytearray(N_BUTTONS)
        self.since = array('i', (0,) * N_BUTTONS)   # ticks_ms of the last raw change
        self.down_at = array('i', (0,) * N_BUTTONS)
        self.long_sent = bytearray(N_BUTTONS)
        self.stuck = bytearray(N_BUTTONS)

    def poll(self):
        """One event per call: a button index on press, index + LONG on a long press, or NONE."""
        now = time.ticks_ms()
        ev = NONE
        for i in range(N_BUTTONS):
            r = 1 - self.pins[i].value()   # active low
            if r != self.raw[i]:
                self.raw[i] = r
                self.since[i] = now
            elif r != self.stable[i] and time.ticks_diff(now, self.since[i]) >= self.DEBOUNCE_MS:
                self.stable[i] = r
                if r:
                    self.down_at[i] = now
                    self.long_sent[i] = 0
                    if ev == NONE and not self.stuck[i]:
                        ev = i
                else:
                    self.stuck[i] = 0
            elif self.stable[i] and not self.long_sent[i]:
                if time.ticks_diff(now, self.down_at[i]) >= self.LONG_MS:
                    self.long_sent[i] = 1
                    if ev == NONE:
                        ev = i + LONG
            if self.stable[i] and not self.stuck[i] and time.ticks_diff(now, self.down_at[i]) >= self.STUCK_MS:
                self.stuck[i] = 1
        return ev

    def any_stuck(self):
        for i in range(N_BUTTONS):
            if self.stuck[i]:
                return i
        return NONE
