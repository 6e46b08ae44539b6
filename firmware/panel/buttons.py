# The scoreboard's buttons: next, ok, undo, turn (docs/controls.md). Polled from the loop
# (people press buttons for tens of milliseconds), debounced, reported once per press, and
# once more as a long press when held. A button held far too long is reported as stuck so a
# jammed key cannot repeat an action. RAM: about 60 bytes.
from micropython import const
from array import array
import sys
import machine
import micropython
from machine import Pin
import time

from tables import pins

N_BUTTONS = const(4)
NONE = const(-1)
# event codes: button index + LONG for a long press
LONG = const(8)


# On the RP2040 with its own machine module: all four levels in one read of SIO's GPIO_IN, so that
# a poll while no button is down or settling costs one call (4 Pin.value() calls and the loop
# around them cost about 0.3 ms a step there); elsewhere the loop below reads each pin.
HW = sys.platform == "rp2" and hasattr(machine, "mem32")


@micropython.viper
def _gpio_in(mask: int) -> int:
    return int(ptr32(0xD0000004)[0]) & mask         # SIO GPIO_IN


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
        self.mask = 0                   # the buttons' GPIO bits (all high: all released)
        for g in pins.BUTTONS:
            self.mask |= 1 << g
        self.quiet = 1                  # every button released, debounced and raw

    def poll(self):
        """One event per call: a button index on press, index + LONG on a long press, or NONE."""
        first = -1              # the first button the quiet path below found down
        if self.quiet and HW:
            if _gpio_in(self.mask) == self.mask:
                return NONE             # what the loop below would return, changing nothing
            now = time.ticks_ms()
        elif self.quiet:
            # the same, pin by pin (the unix port, the simulator: some 10 % of a loop turn at
            # rest there): the loop's reads in its order, and the loop goes on from the first
            # button down (those before it, released as before, would change nothing)
            now = time.ticks_ms()
            p = self.pins
            if not p[0].value():
                first = 0
            elif not p[1].value():
                first = 1
            elif not p[2].value():
                first = 2
            elif not p[3].value():
                first = 3
            else:
                return NONE
        else:
            now = time.ticks_ms()
        ev = NONE
        quiet = 1
        for i in range(first if first > 0 else 0, N_BUTTONS):
            r = 1 if i == first else 1 - self.pins[i].value()   # active low
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
            if self.raw[i] or self.stable[i]:
                quiet = 0
        self.quiet = quiet
        return ev

    def any_stuck(self):
        if self.quiet:
            return NONE                 # a stuck button is a stable one
        for i in range(N_BUTTONS):
            if self.stuck[i]:
                return i
        return NONE
