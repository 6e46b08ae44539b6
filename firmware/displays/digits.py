# Numbers and rows of text for the displays, without str() and without allocating: what the
# OLED's driver and screens (ssd1306.py, ui.py) and the seven-segment ones (max7219.py,
# seg_ui.py) share, so that a configuration with one display loads nothing of the other.
#
# - setbytes(): a run of bytes set to one value (@micropython.viper: the OLED fills whole
#   pages with it), telling whether anything changed.
# - put_int(): an int right-aligned as ASCII digits; put_text()/put_num(): bytes and an int
#   left-aligned from an index (the fault and sensor-test texts).
# - Row: a screen's line buffer, composed in place (_blank, _put, _num) before it is handed to
#   the driver; ui.UI (21 cells) and seg_ui.SegUI (8 digits) are Rows.
import sys
import micropython

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: the viper helper below runs as plain Python
        return x


@micropython.viper
def setbytes(fb: ptr8, i: int, n: int, v: int) -> int:
    # fb[i:i + n] = v (any bytearray); returns 1 if a byte changed
    changed = 0
    end = i + n
    while i < end:
        if int(fb[i]) != v:
            fb[i] = v
            changed = 1
        i += 1
    return changed


def put_int(buf, off, width, value, pad=0x20, over=42):
    # value right-aligned into buf[off:off + width] as ASCII digits, padded with `pad`; a
    # leading '-' when negative; all `over` ('*' by default) when it does not fit. Returns
    # off + width. No str().
    return _put_int(buf, off, width, value, pad, over)


@micropython.viper
def _put_int(buf: ptr8, off: int, width: int, value: int, pad: int, over: int) -> int:
    # put_int as machine code (issue 13: a digit cost the RP2040 tens of microseconds in
    # Python); value is a small int, well inside 32 bits
    neg = 0
    if value < 0:
        neg = 1
        value = 0 - value
    i = off + width - 1
    while i >= off:
        buf[i] = 48 + value % 10
        value = value // 10
        i -= 1
        if value == 0:
            break
    if neg:
        if i >= off:
            buf[i] = 45
            i -= 1
        else:
            value = 1
    if value:
        i = off + width - 1
        pad = over
    while i >= off:
        buf[i] = pad
        i -= 1
    return off + width


def put_text(t, c, s):
    # the bytes s into t from index c, clipped at t's end; returns the index after them
    return _copy(t, c, len(t), s, len(s))


@micropython.viper
def _copy(t: ptr8, c: int, tn: int, s: ptr8, n: int) -> int:
    # put_text's copy as machine code (issue 13: a fault's status text, byte by byte)
    k = 0
    while k < n and c < tn:
        t[c] = s[k]
        c += 1
        k += 1
    return c


@micropython.viper
def _copy_at(t: ptr8, c: int, tn: int, s: ptr8, k: int, n: int) -> int:
    # s[k:k + n] into t from index c, clipped at tn; returns the index after them
    end = k + n
    while k < end and c < tn:
        t[c] = s[k]
        c += 1
        k += 1
    return c


def put_num(t, c, v):
    # v >= 0 as ASCII digits into t from index c, left-aligned, clipped; returns the index after
    if v >= 10:
        c = put_num(t, c, v // 10)
    if c < len(t):
        t[c] = 48 + v % 10
        c += 1
    return c


class Row:
    # one row being composed: `width` characters; a number too wide for its cells is shown
    # as `over` characters
    def __init__(self, width, over=42):
        self._ln = bytearray(width)
        self._w = width
        self._over = over

    def _blank(self):
        setbytes(self._ln, 0, self._w, 32)

    def _put(self, col, buf, off=0, n=-1):
        # buf[off:off + n] into the line at col, clipped; returns the column after it
        if n < 0:
            n = len(buf) - off
        ln = self._ln
        w = self._w
        if col >= 0 and off >= 0 and off + n <= len(buf):
            # machine code (issue 13: a screen's texts byte by byte cost a bowling sheet
            # 1.5 ms of its 8 on the RP2040)
            return _copy_at(ln, col, w, buf, off, n)
        for k in range(n):
            if col >= w:
                break
            ln[col] = buf[off + k]
            col += 1
        return col

    def _num(self, col, value, width):
        if col + width > self._w:
            return col
        return _put_int(self._ln, col, width, value, 0x20, self._over)

