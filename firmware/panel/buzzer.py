# The optional piezo buzzer (config.json "buzzer": true; pin map "buzzer"): a short tune for a
# strike, a spare, a split, a trap, an escape and the game's end (each game's engine says which:
# its tune(), docs/architecture.md "Adding a game"). The tunes are notes in
# tunes.py (generated from sound/tunes.json, which the play page reads too). play() starts one;
# service(), called every loop turn, steps it by ticks: each note sets the PWM's frequency and
# duty once, nothing waits and nothing is allocated. Imported only when configured (app.py).
from micropython import const
import time

from tables import tunes as T

_DUTY = const(32768)        # a square wave: the loudest a piezo gets from one pin


class Buzzer:
    def __init__(self, pwm):
        self.pwm = pwm
        pwm.duty_u16(0)
        self.i = 0              # the next note
        self.end = 0            # the tune's end (a note index)
        self.t = time.ticks_ms()  # ticks_ms when the note sounding now ends
        self.on = 0             # 1 while a tune plays

    def play(self, k):
        # tune k (tunes.STRIKE ...) from its start, cutting off one that plays
        self.i = T.AT[k]
        self.end = T.AT[k + 1]
        self.t = time.ticks_ms()
        self.on = 1
        self.service()

    def service(self):
        if not self.on:
            return
        now = time.ticks_ms()
        if time.ticks_diff(now, self.t) < 0:
            return
        i = self.i
        if i >= self.end:
            self.pwm.duty_u16(0)
            self.on = 0
            return
        hz = T.HZ[2 * i] | T.HZ[2 * i + 1] << 8
        if hz:
            self.pwm.freq(hz)
            self.pwm.duty_u16(_DUTY)
        else:
            self.pwm.duty_u16(0)
        self.t = time.ticks_add(self.t, T.MS10[i] * 10)
        self.i = i + 1

    # -- what the games play (app.py) ----------------------------------------------------------
    def after_shot(self, g):
        # after a shot of the game g (its engine): the tune it asks for, if any
        k = g.tune(T)
        if k >= 0:
            self.play(k)
