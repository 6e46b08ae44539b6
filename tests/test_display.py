"""The OLED stack: firmware/displays/ssd1306.py (driver), firmware/displays/oled_screens.py (screens), firmware/displays/font.py and
the simulator's panel, boardsim/target/ssd1306_model.py.

The driver talks to the model through a fake I2C object that forwards every write transaction
unchanged, so what is checked is what the panel would receive. Every case runs under the real
MicroPython unix port and under CPython (one process per runtime for all cases; the same source,
CASES below). Drawing and sending run with micropython.heap_lock() held, so under MicroPython any
allocation fails the case. The bowling screens are compared pixel-exact with checked-in PNGs
(tests/golden/bowling_*.png); UPDATE_GOLDEN=1 rewrites them (look at them before committing).
"""
import os
from pathlib import Path

import pytest
from PIL import Image

from runtimes import case_result as get, cases_fixture, mpy_cross_armv6m

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
GOLDEN = ROOT / "tests" / "golden"

# ---------------------------------------------------------------------------------------------
# The cases, run inside the target runtime. Each case_* returns something JSON can carry.
CASES = r'''
import binascii
import micropython
from driver import heap_locked, locked, run_cases
from displays import font
from displays.ssd1306 import SSD1306, put_int
from ssd1306_model import SSD1306Model
from displays.oled_screens import UI
from games import bowling as RB

ADDR = 60


class FakeI2C:
    # forwards each writeto() to the model as one transaction; counts them. log: a list to
    # record copies into (allocates: only outside the heap lock)
    def __init__(self, model):
        self.model = model
        self.n = 0
        self.nbytes = 0
        self.log = None
        self.fail = 0

    def writeto(self, addr, buf, stop=True):
        if self.fail or addr != ADDR:
            raise OSError(19)
        self.n += 1
        self.nbytes += len(buf)
        if self.log is not None:
            self.log.append(bytes(buf))
        self.model.i2c_write(buf)
        return len(buf)


def rig(garbage=True):
    m = SSD1306Model()
    if garbage:                           # the panel's RAM is random after power-up
        for i in range(len(m.gddram)):
            m.gddram[i] = (i * 73 + 41) & 0xFF
    i2c = FakeI2C(m)
    d = SSD1306(i2c, ADDR)
    return m, i2c, d


def hexs(b):
    return binascii.hexlify(bytes(b)).decode()


def _score(balls):
    # conventional bowling over ball pins: marks per frame (bytes) and running totals (-1: not
    # known yet); also where the player stands (frame, ball, done)
    frames = []
    i = 0
    for f in range(10):
        if i >= len(balls):
            break
        if f < 9:
            n = 1 if balls[i] == 10 else 2
        else:
            n = 3
        frames.append(balls[i:i + n])
        i += n
    marks = []
    for f, fb in enumerate(frames):
        s = b""
        for j, v in enumerate(fb):
            # a '/' completes a rack of 10 begun by the ball before (not after X or /)
            fresh = j == 0 or fb[j - 1] == 10 or (j == 2 and fb[0] != 10 and fb[0] + fb[1] == 10) \
                or (j == 2 and fb[0] == 10 and fb[1] == 10)
            if not fresh and fb[j - 1] + v == 10:
                s += b"/"
            elif v == 10:
                s += b"X"
            elif v == 0:
                s += b"-"
            else:
                s += bytes((48 + v,))
        marks.append(s)
    cum = []
    flat = []
    starts = []
    for fb in frames:
        starts.append(len(flat))
        flat.extend(fb)
    t = 0
    for f, fb in enumerate(frames):
        k = starts[f]
        if f == 9:
            need = 3 if len(fb) >= 2 and (fb[0] == 10 or fb[0] + fb[1] == 10) else 2
            if len(fb) < need:
                break
            t += sum(fb)
        elif fb[0] == 10:
            if len(flat) < k + 3:
                break
            t += 10 + flat[k + 1] + flat[k + 2]
        elif len(fb) < 2:
            break
        elif fb[0] + fb[1] == 10:
            if len(flat) < k + 3:
                break
            t += 10 + flat[k + 2]
        else:
            t += fb[0] + fb[1]
        cum.append(t)
    while len(cum) < 10:
        cum.append(-1)
    while len(marks) < 10:
        marks.append(b"")
    return marks, cum


class FakeGame:
    # the bowling engine's display API (rules_bowling.Bowling) over fixed balls per player
    def __init__(self, balls, player, frame, ball, prompt, over=False, split=False):
        self.players = len(balls)
        self._m = []
        self._c = []
        for b in balls:
            m, c = _score(b)
            self._m.append(m)
            self._c.append(c)
        self.player = player
        self.frame = frame
        self.ball = ball
        self.prompt = prompt
        self.over = over
        self.last_split = split
        self.shooter_end = 0
        self.away = -1
        # what the screen reads of the engine's own arrays (issue 13: a call a frame saved):
        # each player's frames started (marks() gives none from there on) and running totals,
        # player p's frame f at p * 10 + f
        self.nf = bytearray(len(balls))
        self.cums = []
        for p in range(len(balls)):
            for f in range(10):
                if len(self._m[p][f]):
                    self.nf[p] = f + 1
                self.cums.append(self._c[p][f])

    def marks(self, p, f, buf, off):
        m = self._m[p][f]
        for i in range(len(m)):
            buf[off + i] = m[i]
        return len(m)

    def cum(self, p, f):
        return self._c[p][f]

    def total(self, p):
        t = 0
        for v in self._c[p]:
            if v >= 0:
                t = v
        return t

    winner = RB.Bowling.winner      # the engine's own


SPARES = (9, 1) * 9
GAMES = {
    # two players: P1 has just made a split spare in frame 4, P2 is up
    "mid": ((10, 9, 1, 7, 2, 8, 2), (9, 1, 10, 8, 1), 1, 3, 0, RB.PROMPT_PLACE_POCKET, False,
            True),
    # four players, P3 on the third ball of the tenth frame (the tenth's marks so far: "X9")
    "tenth4": ((10, 10, 9, 1, 8, 1, 10, 7, 3, 9, 0, 10, 10, 8, 2, 10),
               (7, 2, 8, 1, 9, 0, 6, 3, 10, 8, 1, 7, 2, 9, 0, 8, 1, 6, 3),
               SPARES + (10, 9),
               (0, 0, 5, 4) + (10,) * 7,
               2, 9, 2, RB.PROMPT_PLACE_PIN_POCKET, False, False),
    # two players, game over: a perfect game against a tenth of "X9/", P2's sheet shown
    "over": ((10,) * 12, SPARES + (10, 9, 1), 1, 9, 2, RB.PROMPT_GAME_OVER, True, False),
}


def game(name):
    g = GAMES[name]
    n = len(g) - 6
    return FakeGame(g[:n], *g[n:])


# -- cases -------------------------------------------------------------------------------------
def case_init():
    m = SSD1306Model()
    for i in range(len(m.gddram)):
        m.gddram[i] = 0xA5
    i2c = FakeI2C(m)
    i2c.log = []
    SSD1306(i2c, ADDR)
    st = {}
    for k in ("display_on", "mode", "charge_pump", "mux", "offset", "start_line", "seg_remap",
              "com_reverse", "com_pins", "clock", "precharge", "vcomh", "contrast", "inverse",
              "entire_on", "scrolling", "unknown", "errors"):
        st[k] = getattr(m, k)
    return {"log": [hexs(b) for b in i2c.log], "state": st, "ram": hexs(m.gddram)}


def _draw_text(d):
    d.text(0, 0, b"Zenn scoreboard")
    d.number(1, 0, 187, 3)
    d.number(1, 4, -42, 4)
    d.number(1, 9, 0, 2, 0, 48)
    d.number(1, 12, 12345, 3)
    d.text(2, 2, b"xxABCDEyy", 2, 5)
    d.text(3, 18, b"clipped")
    d.text(4, 0, b"\x01\x7f~")
    d.invert_row(5, 1)
    d.text(5, 1, b"bar")
    d.text(6, 3, b"cells", 0, -1, 1)
    return d.flush()


def case_text():
    m, i2c, d = rig()
    sent = heap_locked(lambda: _draw_text(d))
    return {"rows": m.text_rows(), "inv5": m.inverted_cells(5), "inv6": m.inverted_cells(6),
            "corner5": m.pixel(127, 40), "corner6": m.pixel(127, 48), "sent": sent,
            "put": [_put(5, 5, 48), _put(-7, 3, 32), _put(1234, 3, 32), _put(5, 3, 48)]}


def _put(v, w, pad):
    b = bytearray(w)
    put_int(b, 0, w, v, pad)
    return bytes(b).decode()


def _svc(d, i2c):
    # one service() call under the lock: (page sent, transactions, bytes)
    n0 = i2c.n
    b0 = i2c.nbytes
    p = heap_locked(d.service)
    return [p, i2c.n - n0, i2c.nbytes - b0]


def case_dirty():
    m, i2c, d = rig()
    out = {}
    out["after_init"] = [d.dirty, _svc(d, i2c)]
    micropython.heap_lock()
    try:
        d.text(2, 0, b"hello")
        d.text(5, 3, b"x")
        d.text(6, 0, b"")
    finally:
        micropython.heap_unlock()
    out["dirty"] = d.dirty
    out["svc"] = [_svc(d, i2c), _svc(d, i2c), _svc(d, i2c)]
    out["rows"] = m.text_rows()
    micropython.heap_lock()
    try:
        d.text(2, 0, b"hello")              # the same again
        d.text(5, 3, b"x")
        d.invert_row(3, 0)                  # already not inverted
        d.clear_row(7)                      # already blank
        d.number(6, 0, 0, 0)
    finally:
        micropython.heap_unlock()
    out["same_dirty"] = d.dirty
    out["same_svc"] = _svc(d, i2c)
    micropython.heap_lock()
    try:
        d.fill(1)
    finally:
        micropython.heap_unlock()
    out["fill_dirty"] = d.dirty
    out["fill_svc"] = [_svc(d, i2c) for _ in range(9)]
    out["lit"] = m.pixel(0, 0) + m.pixel(127, 63)
    # the bus fails: the page stays dirty, errors counted, nothing raised
    d.text(0, 0, b"Q")
    i2c.fail = 1
    r = _svc(d, i2c)
    out["fail"] = [r[0], d.dirty, d.errors]
    i2c.fail = 0
    out["retry"] = [_svc(d, i2c), d.dirty]
    return out


def case_roundrobin():
    # a page that changes before every service() call cannot starve the others
    m, i2c, d = rig()
    d.text(1, 0, b"a")
    d.text(4, 0, b"b")
    d.text(6, 0, b"c")
    order = []
    for k in range(4):
        d.text(0, 0, b"0123"[k:k + 1])
        order.append(_svc(d, i2c)[0])
    return order


def case_pixels():
    m, i2c, d = rig()
    micropython.heap_lock()
    try:
        d.hline(0, 7, 128)
        d.hline(-5, 8, 10)
        d.pixel(127, 63)
        d.pixel(200, 0)
        d.flush()
    finally:
        micropython.heap_unlock()
    row7 = [m.pixel(x, 7) for x in range(128)]
    row8 = [m.pixel(x, 8) for x in range(128)]
    d.text(0, 0, b"A")                      # replaces its whole cell, rule included
    d.flush()
    return {"row7": sum(row7), "row8": sum(row8), "corner": m.pixel(127, 63),
            "after_text": sum(m.pixel(x, 7) for x in range(128)), "rows": m.text_rows()}


def _w(m, b):
    micropython.heap_lock()
    try:
        m.i2c_write(b)
    finally:
        micropython.heap_unlock()


def case_model():
    out = {}
    m = SSD1306Model()
    # horizontal addressing in a 8 x 2 window: 20 bytes wrap back to the window's start
    _w(m, b"\x00\x20\x00\x21\x78\x7f\x22\x06\x07")
    _w(m, b"\x40" + bytes(range(1, 21)))
    out["h"] = [hexs(m.gddram[6 * 128 + 120:6 * 128 + 128]), hexs(m.gddram[7 * 128 + 120:]),
                m.col, m.page]
    # vertical addressing: down the pages, then the next column
    m = SSD1306Model()
    _w(m, b"\x00\x20\x01\x21\x00\x01\x22\x00\x02")
    _w(m, b"\x40\x01\x02\x03\x04\x05\x06\x07")
    out["v"] = [m.gddram[0], m.gddram[128], m.gddram[256], m.gddram[1], m.gddram[129],
                m.gddram[257], m.gddram[2], m.col, m.page]
    # page addressing (the reset default): the column wraps, the page stays
    m = SSD1306Model()
    _w(m, b"\x00\xb3\x0e\x17")
    _w(m, b"\x40\x11\x22\x33")
    out["p"] = [m.gddram[3 * 128 + 126], m.gddram[3 * 128 + 127], m.gddram[3 * 128 + 0],
                m.col, m.page]
    # arguments arriving one transaction each (0x80 per byte, as micropython-lib sends them),
    # Co = 1 pairs chained in one transaction, a data byte through Co = 1, unknown commands
    m = SSD1306Model()
    for c in (0x81, 0x42, 0x21, 0x10, 0x20, 0x22, 0x01, 0x01, 0x20, 0x00):
        _w(m, bytes((0x80, c)))
    _w(m, b"\x80\xaf\x80\xa7\xc0\x55\x40\x66\x77")
    _w(m, b"\x80\xd6\x00\xe3")
    _w(m, b"")
    out["mixed"] = [m.contrast, m.col_start, m.col_end, m.page_start, m.mode, m.display_on,
                    m.inverse, m.gddram[128 + 16], m.gddram[128 + 17], m.gddram[128 + 18],
                    m.unknown, m.last_unknown, m.commands, m.transactions, m.data_bytes]
    # a panel that is off shows nothing; inverse flips; entire-on lights everything
    m = SSD1306Model()
    _w(m, b"\x00\xa1\xc8\x20\x00\x40")
    _w(m, b"\x40\x01")
    a = m.pixel(0, 0)
    _w(m, b"\x80\xaf")
    b = m.pixel(0, 0)
    _w(m, b"\x80\xa7")
    c = m.pixel(0, 0) + m.pixel(1, 0)
    _w(m, b"\x80\xa6\x80\xa5")
    e = m.pixel(5, 50)
    _w(m, b"\x00\xa4\xa0\xc0")               # not remapped: the picture turns upside down
    f = m.pixel(127, 63)
    out["view"] = [a, b, c, e, f]
    return out


def case_bowling(name):
    m, i2c, d = rig()
    u = UI(d)
    g = game(name)
    locked(u.draw_bowling, d.flush, g)
    # the same screen again: nothing changes, nothing is sent
    n0 = i2c.n
    micropython.heap_lock()
    try:
        u.draw_bowling(g)
        again = d.dirty
        for _ in range(8):
            d.service()
    finally:
        micropython.heap_unlock()
    return {"frame": hexs(m.frame()), "rows": m.text_rows(),
            "inv": [m.inverted_cells(r) for r in range(8)], "again": [again, i2c.n - n0]}


def case_screens():
    # menu, fault and a change of screen, each under the lock; what each leaves on the panel
    m, i2c, d = rig()
    u = UI(d)
    out = {}
    g = game("mid")

    def shot(f):
        locked(f, d.flush)
        return {"rows": m.text_rows(), "inv": [m.inverted_cells(r) for r in range(8)],
                "bar": [m.pixel(127, 8 * r) for r in range(8)]}

    out["menu"] = shot(lambda: u.draw_menu(b"Game", b"Zenn Bowling", b"next / ok"))
    out["fault"] = shot(lambda: u.fault(b"Pad 17 stuck"))
    out["menu_fault"] = shot(lambda: u.draw_menu(b"Players", b"2", b"next / ok"))
    out["bowling_fault"] = shot(lambda: u.draw_bowling(g))
    out["unfault"] = shot(lambda: u.fault(None))
    out["bowling"] = shot(lambda: u.draw_bowling(g))
    out["prompt"] = shot(lambda: u.prompt(b"Trap: shoot big chip"))
    out["other"] = shot(lambda: u.draw_bowling(g, 0))
    out["clear"] = shot(u.clear)
    return out


def case_real_engine():
    # the real engine through the same screen (its API as the UI uses it)
    m, i2c, d = rig()
    u = UI(d)
    g = RB.Bowling(None)
    g.start(3, 0)
    locked(u.draw_bowling, d.flush, g)
    return m.text_rows()


def case_held():
    # the real engine: each ball's result held on the sheet of the player who played it, then
    # the next player's sheet; after an undo, where the chip goes back. Drawn under the lock.
    m, i2c, d = rig()
    u = UI(d)
    g = RB.Bowling(None)
    g.start(2, 0)
    out = {}

    def draw(name, held):
        micropython.heap_lock()
        try:
            u.draw_bowling(g, -1, held)
            d.flush()
        finally:
            micropython.heap_unlock()
        out[name] = {"rows": m.text_rows(), "inv": [m.inverted_cells(r) for r in range(8)],
                     "bar1": m.pixel(127, 8)}

    def ball(code):
        g.apply_outcome(code)

    ZENN = RB.K_ZENN << RB.OUT_SHIFT | 17
    ball(ZENN)                                      # P1: strike
    draw("strike", 1)
    draw("strike_after", 0)
    ball(RB.K_REST << RB.OUT_SHIFT | 14)            # P2: 8 pins on b.e2
    draw("pins", 1)
    ball(RB.K_ZENN_HIT << RB.OUT_SHIFT | 17)        # P2: a split spare
    draw("split", 1)
    ball(RB.K_REST << RB.OUT_SHIFT | 18)            # P1: gutter (the centre circle)
    draw("gutter", 1)
    ball(RB.K_OFF << RB.OUT_SHIFT | 19)             # P1: no basket
    draw("no_basket", 1)
    ball(RB.K_SINK << RB.OUT_SHIFT | 17)            # P2: sunk without a Zenn: 9 pins
    draw("sink", 1)
    draw("sink_after", 0)
    ball(RB.K_OWN << RB.OUT_SHIFT | 8)              # P2: no basket
    g.undo()                                        # ... taken back: the chip to the pin pocket
    out["away_pin_pocket"] = g.away
    ball(RB.K_OWN << RB.OUT_SHIFT | 8)
    ball(RB.K_REST << RB.OUT_SHIFT | 16)            # P1: 7 pins on b.n3
    ball(RB.K_OFF << RB.OUT_SHIFT | 19)             # P1: no basket, off the board
    g.undo()                                        # taken back: the chip goes back on b.n3
    out["away"] = g.away
    draw("undo", 0)
    g.away = -1                                     # (app.py: the pads see it there)
    draw("back", 0)
    g.undo()                                        # the 7 pins too: a fresh rack, pocket a
    out["away_fresh"] = g.away
    return out


def case_partial():
    # the panel the model decodes from partial pages equals the frame buffer after every round:
    # random text (plain, negative), rows with a bar and a highlight, pixels, rules, cleared
    # rows, one or two at a time, then every dirty page sent (heap locked); and the bytes
    # that went out against whole pages
    m, i2c, d = rig()
    seed = 7
    msg = bytearray(b"Frame 10 Ball 3 X9/ 8-")
    row = bytearray(21)
    bad = 0
    b0 = i2c.nbytes
    sent = 0
    for t in range(300):
        micropython.heap_lock()
        try:
            for _ in range(1 + (t & 1)):
                seed = (seed * 1103515245 + 12345) & 0x3FFFFFFF
                k = (seed >> 4) % 7
                r = (seed >> 8) & 7
                c = (seed >> 11) % 21
                n = 1 + (seed >> 16) % 6
                if k == 0:
                    d.text(r, c, msg, (seed >> 20) % 16, n, (seed >> 24) & 1)
                elif k == 1:
                    for i in range(21):
                        row[i] = msg[(i + seed) % len(msg)]
                    d.row(r, row, (seed >> 20) & 1, c, n)
                elif k == 2:
                    d.pixel((seed >> 11) & 127, (seed >> 18) & 63, (seed >> 25) & 1)
                elif k == 3:
                    d.hline((seed >> 11) & 127, (seed >> 18) & 63, n * 5)
                elif k == 4:
                    d.clear_row(r)
                elif k == 5:
                    d.invert_row(r, (seed >> 20) & 1)
                else:
                    d.number(r, c, (seed >> 12) % 300, 3)
            while d.dirty:
                d.service()
                sent += 1
        finally:
            micropython.heap_unlock()
        f = m.gddram
        for p in range(8):
            for x in range(128):
                if f[p * 128 + x] != d.buf[p * 129 + 1 + x]:
                    bad += 1
    return {"bad": bad, "pages": sent, "bytes": i2c.nbytes - b0}


def case_ram():
    import gc
    gc.collect()
    a = gc.mem_free() if hasattr(gc, "mem_free") else 0
    m = SSD1306Model()
    i2c = FakeI2C(m)
    gc.collect()
    b = gc.mem_free() if hasattr(gc, "mem_free") else 0
    d = SSD1306(i2c, ADDR)
    gc.collect()
    c = gc.mem_free() if hasattr(gc, "mem_free") else 0
    u = UI(d)
    gc.collect()
    e = gc.mem_free() if hasattr(gc, "mem_free") else 0
    return {"driver": b - c, "ui": c - e}


run_cases([("init", case_init), ("text", case_text), ("dirty", case_dirty),
           ("roundrobin", case_roundrobin), ("pixels", case_pixels), ("model", case_model),
           ("screens", case_screens), ("real_engine", case_real_engine), ("held", case_held),
           ("ram", case_ram), ("partial", case_partial)]
          + [("bowling_" + name, lambda name=name: case_bowling(name)) for name in GAMES])
'''


# one process per runtime runs every case (tests/support/runtimes.py)
results = cases_fixture(CASES, "display")


def commands(log):
    # the command bytes of a transaction log, in order (control bytes decoded)
    out = []
    for h in log:
        b = bytes.fromhex(h)
        i = 0
        while i < len(b):
            ctrl = b[i]
            i += 1
            if ctrl & 0x80:
                if not ctrl & 0x40:
                    out.append(b[i])
                i += 1
            else:
                if not ctrl & 0x40:
                    out.extend(b[i:])
                break
    return out


# ---------------------------------------------------------------------------------------------
def test_init_sequence(results):
    r = get(results, "init")
    cmds = commands(r["log"])
    # off first, on last, nothing unknown to the panel
    assert cmds[0] == 0xAE
    assert cmds[-1] == 0xAF and cmds.count(0xAF) == 1
    # the settings the datasheet's initialisation flow asks for, on a 128x64 module with the
    # internal charge pump, horizontal addressing for page-wise writes
    st = r["state"]
    assert st == {"display_on": 1, "mode": 0, "charge_pump": 1, "mux": 63, "offset": 0,
                  "start_line": 0, "seg_remap": 1, "com_reverse": 1, "com_pins": 0x12,
                  "clock": 0x80, "precharge": 0xF1, "vcomh": 0x30, "contrast": 0xCF,
                  "inverse": 0, "entire_on": 0, "scrolling": 0, "unknown": 0, "errors": 0}
    seq = bytes(cmds)
    for pair in (b"\x8d\x14", b"\x20\x00", b"\xa8\x3f", b"\xda\x12", b"\xd3\x00", b"\xd5\x80"):
        assert pair in seq
    # the charge pump is enabled before the display goes on
    assert seq.index(b"\x8d\x14") < seq.index(b"\xaf")
    # the random power-up RAM is cleared while the display is still off: all 8 pages sent as
    # data before the one display-on command
    on_at = max(i for i, h in enumerate(r["log"]) if h.endswith("af") and len(h) == 4)
    data = [h for h in r["log"][:on_at] if h.startswith("40")]
    assert len(data) == 8 and all(len(h) == 2 * 129 for h in data)
    assert r["ram"] == "00" * 1024


def test_text_appears(results):
    r = get(results, "text")
    rows = r["rows"]
    assert rows[0] == "Zenn scoreboard"
    assert rows[1] == "187  -42 00 ***"
    assert rows[2] == "  ABCDE"
    assert rows[3] == " " * 18 + "cli"
    assert rows[4] == "??~"                 # bytes outside 32..126 draw as '?'
    assert rows[5] == " bar"
    assert rows[6] == "   cells"
    assert r["inv5"] == "#" * 21 and r["corner5"] == 1       # invert_row: a full-width bar
    assert r["inv6"] == "   #####" and r["corner6"] == 0    # inverted cells only
    assert r["sent"] == 7
    assert r["put"] == ["00005", " -7", "***", "005"]


def test_only_changed_pages_are_sent(results):
    r = get(results, "dirty")
    assert r["after_init"] == [0, [-1, 0, 0]]
    assert r["dirty"] == (1 << 2) | (1 << 5)
    # one page per call: the address window (7 bytes) and of the page the columns that changed,
    # widened to a multiple of 16 (the control byte and 16 k columns): "hello" in cells 0 - 4
    # (pixel columns 1 - 30), "x" in cell 3 (19 - 24)
    assert r["svc"] == [[2, 2, 7 + 1 + 32], [5, 2, 7 + 1 + 16], [-1, 0, 0]]
    assert r["rows"][2] == "hello" and r["rows"][5] == "   x"
    # drawing what is already there marks nothing and sends nothing
    assert r["same_dirty"] == 0
    assert r["same_svc"] == [-1, 0, 0]


def test_service_sends_at_most_one_page(results):
    r = get(results, "dirty")
    assert r["fill_dirty"] == 0xFF
    pages = [s[0] for s in r["fill_svc"]]
    assert sorted(pages[:8]) == list(range(8)) and pages[8] == -1
    assert all(s[1:] == [2, 136] for s in r["fill_svc"][:8])
    assert r["lit"] == 2


def test_bus_errors_keep_the_page(results):
    r = get(results, "dirty")
    assert r["fail"] == [-1, 1, 1]
    assert r["retry"] == [[0, 2, 7 + 1 + 16], 0]       # "Q" in cell 0: 16 columns


def test_partial_pages_give_the_same_panel(results):
    r = get(results, "partial")
    assert r["bad"] == 0
    assert r["pages"] > 300
    # fewer bytes than whole pages: each page 7 + 129 bytes
    assert r["bytes"] < r["pages"] * (7 + 129) * 2 // 3, r


def test_round_robin(results):
    # page 0 changes before every call, yet 1, 4 and 6 go out in turn
    order = get(results, "roundrobin")
    assert order == [0, 1, 4, 6]


def test_pixels_and_rules(results):
    r = get(results, "pixels")
    assert r["row7"] == 128 and r["row8"] == 5 and r["corner"] == 1
    assert r["after_text"] == 128 - 6
    assert r["rows"][0].startswith("A?")     # the rest of the row is rule, no glyph


def test_model_addressing(results):
    r = get(results, "model")
    # horizontal: page 6 cols 120..127 = 1..8, page 7 = 9..16, then back to page 6 col 120
    assert r["h"] == ["1112131405060708", "090a0b0c0d0e0f10", 124, 6]
    # vertical: 7 bytes in a 2 x 3 window, the seventh wraps to the first cell
    assert r["v"] == [7, 2, 3, 4, 5, 6, 0, 0, 1]
    # page mode: from column 126 the pointer wraps to the page-mode column start (126 again)
    assert r["p"] == [0x33, 0x22, 0, 127, 3]
    assert r["mixed"] == [0x42, 0x10, 0x20, 1, 0, 1, 1, 0x55, 0x66, 0x77, 1, 0xD6, 8, 13, 3]
    assert r["view"] == [0, 1, 1, 1, 1]


def test_real_engine_start_screen(results):
    rows = get(results, "real_engine")
    assert rows[0] == "P1 Frame 1 Ball 1"
    assert rows[1] == "Place in pocket a"
    assert rows[2] == "|   |   |   |   |   |"
    assert rows[6] == " P1   0 P2   0 P3   0"


def test_screens(results):
    r = get(results, "screens")
    menu = r["menu"]
    assert menu["rows"] == ["        Game", "", "", "    Zenn Bowling", "", "", "", "      next / ok"]
    assert menu["bar"] == [1, 0, 0, 0, 0, 0, 0, 0]
    assert menu["inv"][3] == "   ##############"
    assert r["fault"]["rows"][7] == "Pad 17 stuck" and r["fault"]["bar"][7] == 1
    # the fault stays on every screen until cleared
    assert r["menu_fault"]["rows"][7] == "Pad 17 stuck" and r["menu_fault"]["rows"][3] == "          2"
    assert r["bowling_fault"]["rows"][7] == "Pad 17 stuck"
    assert r["unfault"]["rows"][7] == "" and r["unfault"]["bar"][7] == 0
    assert r["bowling"]["rows"][0] == "P2 Frame 4 Ball 1"
    assert r["prompt"]["rows"][1] == "Trap: shoot big chip"
    # another player's sheet: no frame highlighted, the player up still marked in the totals
    other = r["other"]
    assert other["rows"][0] == "P1 Frame 4 Ball 1"
    assert other["rows"][2] == "|  X| 9/| 72| 8/|   |"
    assert other["inv"][2] == "" and other["inv"][6] == "       #######"
    assert r["clear"]["rows"] == [""] * 8 and r["clear"]["bar"] == [0] * 8


def test_each_ball_s_result_is_held_on_its_player_s_sheet(results):
    r = get(results, "held")
    s = r["strike"]
    assert s["rows"][:3] == ["P1 Frame 1 Ball 1", "       Strike!", "|  X|   |   |   |   |"]
    assert s["bar1"] == 1 and s["inv"][1] == "#" * 21          # the result in negative
    assert s["inv"][2] == " ###"                               # the frame just played
    assert s["inv"][6] == "#######"                            # the player who shot
    a = r["strike_after"]["rows"]
    assert a[:2] == ["P2 Frame 1 Ball 1", "Place in pocket a"] and r["strike_after"]["bar1"] == 0
    assert r["pins"]["rows"][:3] == ["P2 Frame 1 Ball 1", "       8 pins", "|  8|   |   |   |   |"]
    assert r["split"]["rows"][:3] == ["P2 Frame 1 Ball 2", "    Split! Spare", "| 8/|   |   |   |   |"]
    assert r["gutter"]["rows"][:3] == ["P1 Frame 2 Ball 1", "       Gutter", "|  X|  -|   |   |   |"]
    assert r["no_basket"]["rows"][:3] == ["P1 Frame 2 Ball 2", "      No basket",
                                          "|  X| --|   |   |   |"]
    assert r["sink"]["rows"][:2] == ["P2 Frame 2 Ball 1", "    Sunk: 9 pins"]
    assert r["sink_after"]["rows"][:2] == ["P2 Frame 2 Ball 2", "Place in pin pocket b"]


def test_after_undo_the_prompt_says_where_the_chip_goes_back(results):
    r = get(results, "held")
    assert r["away_pin_pocket"] == 11                          # b.pocket
    assert r["away"] == 16                                     # b.n3, where the 7 pins lay
    assert r["undo"]["rows"][:2] == ["P1 Frame 3 Ball 2", "Put back: b outer N"]
    assert r["back"]["rows"][1] == "Shoot where it lies"
    assert r["away_fresh"] == 2                                # a.pocket


EXPECTED_ROWS = {
    "mid": ["P2 Frame 4 Ball 1", "Place in pocket a",
            "| 9/|  X| 81|   |   |", "| 20| 39| 48|   |   |",
            "|   |   |   |   |   |", "|   |   |   |   |   |",
            " P1  46 P2  48", "Split!"],
    "tenth4": ["P3 Frame 10 Ball 3", "Place in pin pocket b",
               "| 9/| 9/| 9/| 9/| 9/|", "| 19| 38| 57| 76| 95|",
               "| 9/| 9/| 9/| 9/| X9|", "|114|133|152|172|   |",
               " P1 192 P2 100 P3 172", " P4 159"],
    "over": ["P2 Total 192", "Game over, P1 wins",
             "| 9/| 9/| 9/| 9/| 9/|", "| 19| 38| 57| 76| 95|",
             "| 9/| 9/| 9/| 9/|X9/|", "|114|133|152|172|192|",
             " P1 300 P2 192", ""],
}
EXPECTED_INVERTED = {
    "mid": ["#" * 21, "", " " * 13 + "###", "", "", "", "       #######", ""],
    "tenth4": ["#" * 21, "", "", "", " " * 17 + "###", "", " " * 14 + "#######", ""],
    "over": ["#" * 21, "", "", "", "", "", "", ""],
}


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_bowling_screen(results, name):
    r = get(results, "bowling_" + name)
    assert r["rows"] == EXPECTED_ROWS[name]
    assert r["inv"] == EXPECTED_INVERTED[name]
    # drawn again unchanged: no page dirty, no I2C traffic
    assert r["again"] == [0, 0]


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_bowling_golden(results, name):
    r = get(results, "bowling_" + name)
    frame = bytes.fromhex(r["frame"])
    img = Image.new("1", (128, 64))
    for y in range(64):
        for x in range(128):
            img.putpixel((x, y), (frame[(y >> 3) * 128 + x] >> (y & 7)) & 1)
    path = GOLDEN / ("bowling_%s.png" % name)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        img.save(path)
    assert path.exists(), "no golden image %s (UPDATE_GOLDEN=1 writes it)" % path
    want = Image.open(path).convert("1")
    assert want.size == img.size
    diff = [(x, y) for y in range(64) for x in range(128)
            if bool(want.getpixel((x, y))) != bool(img.getpixel((x, y)))]
    assert not diff, "%d pixels differ from %s, first %s" % (len(diff), path.name, diff[:5])


def test_font_glyphs_unique_and_in_range():
    ns = {}
    src = (FIRMWARE / "displays" / "font.py").read_text().replace("from micropython import const", "const = int")
    exec(compile(src, "font.py", "exec"), ns)
    font = ns["FONT"]
    assert len(font) == 95 * 6
    glyphs = [font[i:i + 6] for i in range(0, len(font), 6)]
    assert len(set(glyphs)) == 95                               # text_rows can read them back
    assert all(g[5] == 0 for g in glyphs)                       # the blank spacing column
    assert all(b < 0x80 for g in glyphs if g != glyphs[ord("|") - 32] for b in g)


@pytest.mark.parametrize("name", ["displays/font.py", "displays/ssd1306.py", "displays/oled_screens.py"])
def test_mpy_cross_armv6m(name, tmp_path):
    p = mpy_cross_armv6m(name, tmp_path)
    assert p.returncode == 0, p.stderr
