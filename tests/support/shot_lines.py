# When a shot's event lines go out against when its score is on the OLED (issue 13: the lines are
# written after the verdict's screen is flushed). tests/test_shot_lines.py.
#
#   MICROPYPATH=firmware:boardsim/target:tests/support micropython shot_lines.py < job.json
#
# Job (one JSON line): {"timeline": [...], "later": 1}. later 0: the games write their lines in
# on_shot(), as before (app.py's lines_later cleared after boot: the control). Output: one line
# "RESULT {...}": the event lines, and for every shot line whether the panel (the simulated
# SSD1306's RAM, what is on show) already showed, when the line was written, what it shows once
# the app has nothing left to draw or send (the verdict's screen: its redraw and pages go out in
# the loop turns after the verdict's own), or not.
import sys
import json

import runner as RN
import driver

_SHOT = b'{"ev":"shot"'
_MAX_SHOTS = 64
_PANEL = 1024                       # the SSD1306's RAM (128 x 64 pixels)


class Console(driver.Sink):
    """The firmware's console: keeps what is written; at each shot line (the write that begins
    one: a line goes out whole from the event writer's buffer), a copy of the panel's RAM into a
    buffer made beforehand (the heap is locked in the loop turn)."""

    def __init__(self, world):
        driver.Sink.__init__(self, 262144)
        self.world = world
        self.snaps = bytearray(_MAX_SHOTS * _PANEL)
        self.nshots = 0

    def write(self, b, off=0, n=-1):
        if n < 0:
            n = len(b) - off
        if n >= len(_SHOT) and self.nshots < _MAX_SHOTS:
            k = 0
            while k < len(_SHOT) and b[off + k] == _SHOT[k]:
                k += 1
            if k == len(_SHOT):
                ram = self.world.oled.gddram
                base = self.nshots * _PANEL
                snaps = self.snaps
                for i in range(_PANEL):
                    snaps[base + i] = ram[i]
                self.nshots += 1
        return driver.Sink.write(self, b, off, n)


class Watch(RN.Runner):
    def __init__(self, later):
        RN.Runner.__init__(self)
        self.out = Console(self.world)
        self.later = later
        self.shown_first = []       # per shot line: 1 its score was on the panel when written
        self.booted = None

    def _step(self):
        if self.sb is not None and self.sb is not self.booted:
            self.booted = self.sb
            if not self.later:
                self.sb.lines_later = 0
        idle = RN.Runner._step(self)
        sb = self.sb
        if sb is None or self.out.nshots == len(self.shown_first):
            return idle
        # the shot's screen is whole once the app has done the verdict's work (issue 13: its
        # redraw and pages go out over the turns after its own, then its lines, in the turn that
        # clears app.py's _PUT_LINES, 2, in sb.verdict): the panel then, against the panel when
        # each shot line was written
        if sb.verdict & 2:
            return idle
        con = self.out
        ram = self.world.oled.gddram
        for s in range(len(self.shown_first), con.nshots):
            base = s * _PANEL
            same = 1
            for i in range(_PANEL):
                if con.snaps[base + i] != ram[i]:
                    same = 0
                    break
            self.shown_first.append(same)
        return idle


def main():
    job = json.loads(sys.stdin.readline())
    r = Watch(job.get("later", 1))
    for o in job["timeline"]:
        r.op(o)
    r.run_ms(200)
    text = bytes(r.out.buf[:r.out.n]).decode()
    print("RESULT " + json.dumps({"lines": [ln for ln in text.split("\n") if ln.strip()],
                                  "shown_first": r.shown_first}))


main()
