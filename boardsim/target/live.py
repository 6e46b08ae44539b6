"""The runner's live modes (issue 5), for the play page (boardsim/serve.py) and for replays
(boardsim/render.py). Runs in the firmware's interpreter like runner.py, same paths:

    micropython live.py --side-fd N                          interactive
    micropython live.py TIMELINE.jsonl --side-fd N --every MS   recording

Stdout carries exactly the firmware's event lines, as with runner.py. What a viewer needs goes
on a side channel, the inherited file descriptor N, one JSON object per line ("state lines"):

    {"t": ms, "ev": event lines so far, "power": bool,
     "chips": [[name, state, x, y, amp], ...]     state: 0 hand, 1 board, 2 cup a, 3 cup b, 4 off;
                                                   x, y in 0.1 mm; amp 0..1000 (a hand fading it)
     "lit": [pad, permille, pad, permille, ...]    pads that feel a chip: |field| in 1/1000 of the
                                                   full reading of a magnet right above the pad
     "frame": n, "oled": "<2048 hex digits>", "text": [8 rows]   the panel as
                                                   SSD1306Model.frame() shows it: only when it
                                                   changed (frame n), else just "frame"
     "seg": [rows]                                 the seven-segment chain, once driven
     "moving": bool,                               a move, fade or pulse is still under way
     "sliding": bool,                              a chip is sliding (a move op under way)
     "still_ms": ms}                               how long nothing has moved

Interactive: timeline ops are read from stdin one line at a time; after each one exactly one
state line is written. Unlike runner.py, put / lift / move do not let the board settle: time
passes only through "wait" ops (the host sends them to keep virtual time with the wall clock),
so chips slide while the page watches. Extra ops: {"op": "state"} (just the state line),
{"op": "down", "button": B} and {"op": "up", "button": B} (a button goes down or comes up and
stays so while waits pass: a person holding it, so that the firmware sees a long press as it
happens, as "press" and "hold", which take their time at once, cannot show) and
{"op": "quit"}. Before a "boot" op the scoreboard is off.

Recording: the timeline is played as runner.py plays it, and a state line is written every MS
of virtual time while the firmware runs, and once at the end.
"""
import sys

import runner
from runner import Runner, vclock, fail, MICROPYTHON
import json
import binascii
import world_table as T

LIT_PERMILLE = 20       # a pad "lights" when it feels at least 2% of a magnet right above it


class LiveRunner(Runner):
    def __init__(self, side, every_ms=0, interactive=False):
        Runner.__init__(self)
        self.side = side
        self.every_us = every_ms * 1000
        self.next_sample_us = 0
        self.interactive = interactive
        self.frame_key = None
        self.frame_no = 0
        self.still_since = -1
        self.chip_order = None      # small, big1, big2, big3, then any other chip the world has

    def settle(self):
        if not self.interactive:
            Runner.settle(self)

    def op(self, o):
        kind = o.get("op")
        if kind == "down" or kind == "up":
            self.world.press(o["button"], kind == "down")
        else:
            Runner.op(self, o)

    def _step(self):
        idle = Runner._step(self)
        if self.every_us and vclock.now_us() >= self.next_sample_us:
            self.next_sample_us = vclock.now_us() + self.every_us
            self.state_line()
        return idle

    def state_line(self):
        w = self.world
        o = w.oled
        d = {"t": vclock.now_ms(), "ev": self.event_lines(), "power": self.sb is not None}
        chips = []
        if self.chip_order is None:
            first = [n for n in ("small", "big1", "big2", "big3") if n in w.chips]
            self.chip_order = first + sorted(n for n in w.chips if n not in first)
        for name in self.chip_order:
            c = w.chips[name]
            chips.append([name, c.state, c.x, c.y, c.amp])
        d["chips"] = chips
        lit = []
        field = w.hall.field
        lim = T.ADC_PEAK * LIT_PERMILLE
        for p in range(w.hall.n):
            v = field[p]
            if v < 0:
                v = -v
            if v * 1000 >= lim:
                lit.append(p)
                lit.append(v * 1000 // T.ADC_PEAK)
        d["lit"] = lit
        key = bytes(o.gddram) + bytes([o.display_on, o.inverse, o.entire_on, o.seg_remap,
                                       o.com_reverse, o.start_line, o.offset, o.mux])
        if key != self.frame_key:
            self.frame_key = key
            self.frame_no += 1
            d["oled"] = binascii.hexlify(bytes(o.frame())).decode()
            d["text"] = o.text_rows()
        d["frame"] = self.frame_no
        seg = getattr(w, "seg", None)
        if seg is not None and getattr(seg, "frames", 0):
            d["seg"] = seg.rows()
        moving = w.busy_until() > vclock.now_us() or len(w.moves) > 0
        if moving or self.still_since < 0:
            self.still_since = vclock.now_ms()
        d["moving"] = moving
        d["sliding"] = len(w.moves) > 0
        d["still_ms"] = vclock.now_ms() - self.still_since
        self.side.write(json.dumps(d) + "\n")
        if not MICROPYTHON:
            self.side.flush()


def interactive(r):
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        line = line.strip()
        if not line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            fail(2, "live: bad JSON line")
        kind = o.get("op")
        if kind == "quit":
            return
        if kind != "state":
            r.op(o)
        r.state_line()


def record(r, path):
    runner.play_file(r, path)
    r.state_line()


def main(argv):
    if "--side-fd" not in argv:
        fail(2, "usage: live.py [TIMELINE --every MS] --side-fd N")
    side = open("/dev/fd/" + argv[argv.index("--side-fd") + 1], "w")
    if "--every" in argv:
        r = LiveRunner(side, every_ms=int(argv[argv.index("--every") + 1]))
        record(r, argv[1])
    else:
        r = LiveRunner(side, interactive=True)
        interactive(r)
    side.close()


main(sys.argv)
