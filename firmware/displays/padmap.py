# The sensor test screen (issue 4; docs/controls.md): the pad grid on the 128 x 64 OLED, to see
# while building or debugging a table which pads see a chip and which are left out as faulty.
#
#   row 0        "Hall on 12 bad 3" (or "Shift ..."): pads that see something, pads left out
#   rows 1..7    the map, the board lying along the screen, end a on the left:
#                hall pads (19 x 38): a 2 x 2 block per pad seeing a chip's field, a dot per
#                quiet pad, a slash per pad left out; presence pads (48 x 96): a pixel per
#                covered pad, left-out pads blinking
#
# Only pads whose look changed are drawn again (ssd1306.pixel marks the pages to send), so a
# still board costs one comparison per pad. Allocation-free after construction.
from micropython import const

from tables import board_table as BT
from displays.digits import put_text as _put, put_num as _num

_Y0 = const(8)
_IDLE = const(1)
_ON = const(2)
_BAD = const(3)


class PadMap:
    def __init__(self, oled, scan, loc, shift):
        self.d = oled
        self.scan = scan
        self.loc = loc
        self.shift = shift
        if shift:
            self.cols = BT.PRES_COLS
            self.rows = BT.PRES_ROWS
            self.x0 = (128 - self.rows) // 2
        else:
            self.cols = BT.PAD_COLS
            self.rows = BT.PAD_ROWS
            self.x0 = (128 - 3 * self.rows) // 2
        n = self.cols * self.rows
        self.shown = bytearray(n)       # what each pad looks like on the screen now (0: nothing)
        self.head = bytearray(21)
        self.blink = 0

    def reset(self):
        # the screen was cleared: draw everything again
        for g in range(len(self.shown)):
            self.shown[g] = 0

    def draw(self):
        d = self.d
        if d is None:
            return
        grid = self.scan.grid
        shift = self.shift
        # presence: a pad left out of the fits is one present but not usable (the locator keeps
        # no separate flags); hall: the locator's ignore flags
        ign = self.loc.usable if shift else self.loc.ignore
        t = 1200                        # hall: as locate.Locator.THRESHOLD
        self.blink ^= 1
        on = 0
        bad = 0
        cols = self.cols
        for g in range(cols * self.rows):
            if shift:
                present = (BT.PRES_PRESENT[g >> 3] >> (g & 7)) & 1
            else:
                present = BT.PAD_PRESENT[g]
            if not present:
                continue
            if (not ign[g]) if shift else ign[g]:
                s = _BAD
                bad += 1
            else:
                v = grid[g]
                if v > t or v < -t or (shift and v):
                    s = _ON
                    on += 1
                else:
                    s = _IDLE
            if shift and s == _BAD:
                s = _BAD if self.blink else _IDLE
            if s != self.shown[g]:
                self._cell(g // cols, g % cols, s)
                self.shown[g] = s
        h = self.head
        for k in range(21):
            h[k] = 32
        c = _put(h, 0, b"Shift on " if shift else b"Hall on ")
        c = _num(h, c, on)
        c = _put(h, c, b" bad ")
        _num(h, c, bad)
        d.text(0, 0, h, 0, 21)

    def _cell(self, row, col, s):
        d = self.d
        if self.shift:
            d.pixel(self.x0 + row, _Y0 + col, 1 if s == _ON or s == _BAD else 0)
            return
        x = self.x0 + 3 * row
        y = _Y0 + 3 * col
        d.pixel(x, y, 1 if s != 0 else 0)
        d.pixel(x + 1, y, 1 if s == _ON or s == _BAD else 0)
        d.pixel(x, y + 1, 1 if s == _ON or s == _BAD else 0)
        d.pixel(x + 1, y + 1, 1 if s == _ON else 0)
        if s == _BAD:
            d.pixel(x, y, 0)
