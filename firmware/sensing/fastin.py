# Fast inputs: the two cup throat beams, the two Zenn-gate beams and the (optional) hit sensor.
# A chip crosses a beam in a few milliseconds, faster than a pad scan, so each input is latched
# by a hard pin IRQ: the handler only bumps a counter and stamps the time (no allocation, as
# isr_rules.rst asks). The loop reads and clears the latches between shots.
# RAM: about 100 bytes.
from micropython import const
from array import array
from machine import Pin
import time

from tables import pins

CUP_A = const(0)
CUP_B = const(1)
GATE_A = const(2)
GATE_B = const(3)
HIT = const(4)
N_INPUTS = const(5)


class FastInputs:
    def __init__(self):
        self.count = array('i', (0, 0, 0, 0, 0))    # falling edges since clear()
        self.first = array('i', (0, 0, 0, 0, 0))    # ticks_ms of the first edge since clear()
        self.last = array('i', (0, 0, 0, 0, 0))     # ticks_ms of the last edge
        self.total = 0                              # edges since clear(), all inputs (activity)
        self.off = 0                                # bit i: input i switched off (disable)
        self.pins = (Pin(pins.CUP_A, Pin.IN, Pin.PULL_UP), Pin(pins.CUP_B, Pin.IN, Pin.PULL_UP),
                     Pin(pins.GATE_A, Pin.IN, Pin.PULL_UP), Pin(pins.GATE_B, Pin.IN, Pin.PULL_UP),
                     Pin(pins.HIT, Pin.IN, Pin.PULL_UP))
        # one bound method per input, made once here: the IRQ itself must not allocate
        handlers = (self._cup_a, self._cup_b, self._gate_a, self._gate_b, self._hit)
        for i in range(N_INPUTS):
            self.pins[i].irq(handlers[i], Pin.IRQ_FALLING, hard=True)

    def _latch(self, i):
        t = time.ticks_ms()
        if self.count[i] == 0:
            self.first[i] = t
        self.last[i] = t
        if self.count[i] < 1000000:
            self.count[i] += 1
        if self.total < 1000000:
            self.total += 1

    def _cup_a(self, p):
        self._latch(CUP_A)

    def _cup_b(self, p):
        self._latch(CUP_B)

    def _gate_a(self, p):
        self._latch(GATE_A)

    def _gate_b(self, p):
        self._latch(GATE_B)

    def _hit(self, p):
        self._latch(HIT)

    def clear(self):
        for i in range(N_INPUTS):
            self.count[i] = 0
        self.total = 0

    def disable(self, i):
        """Stop listening to input i (a beam that chatters, issue 4): its IRQ off, its edges
        forgotten, and the loop told through `off`."""
        self.pins[i].irq(handler=None)
        self.off |= 1 << i
        self.total -= self.count[i]
        if self.total < 0:
            self.total = 0
        self.count[i] = 0

    def blocked(self, i):
        """A beam is broken right now (active low)."""
        return self.pins[i].value() == 0
