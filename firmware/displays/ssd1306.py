# SSD1306 128x64 OLED on I2C, allocation-free after construction.
#
# Shaped like micropython-lib's ssd1306.py, with three differences that matter in a scan loop:
# - Nothing allocates after __init__: the frame buffer is one bytearray of 8 pages, each page
#   stored as [0x40, 128 column bytes] so a page goes out as one i2c.writeto(addr, mv) on a
#   memoryview made at construction; commands go out of preallocated buffers.
# - Pages are sent only when their bytes changed (a dirty bit per page, set only on a real
#   change) and service() sends at most one page per call: about 3.1 ms on a 400 kHz bus
#   (a 7-byte address window transaction plus a 129-byte data transaction). flush() sends all
#   of them (boot, or when a stall does not matter).
# - Of a page, only the columns that changed go out (issue 13: after a shot the verdict's
#   screen changes a few cells of three or four pages): each page keeps the extent of its
#   changed columns, and the column window is narrowed to it, widened to 16, 32 or 64
#   columns (else the whole page), so that the data goes out of one scratch buffer through one
#   of 3 memoryviews made at construction (a view of any other length would allocate). 16
#   columns take 0.5 ms where the whole page takes 3.1.
# - Drawing is text on a 21 x 8 grid of 6x8 cells (font.py) from pixel column X0 = 1, a 1 px
#   margin on either side. A per-cell cache remembers which character (and inversion) each
#   cell holds, so redrawing an unchanged screen costs one comparison per cell and sends
#   nothing. (A page whose bytes change and change back before service() gets to it is still
#   sent once: draw each cell once per screen rather than clearing first.)
#
# The byte loops (glyphs, fill, invert) are @micropython.viper helpers: on the RP2040 plain
# Python costs microseconds per byte, and a full screen is over 2000 byte operations.
#
# RAM: 1032 (frame) + 168 (cell cache) + 8 page memoryviews + the instance and small buffers:
# 2176 bytes measured on the 64-bit unix port, about 1.6 KB on the RP2040; font.FONT another
# 570 bytes unless frozen.
import sys
import micropython
from micropython import const

from displays.font import FONT
from displays.digits import setbytes, put_int     # noqa: F401 (put_int: ssd1306.put_int as before)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: the viper helpers below run as plain Python
        return x

WIDTH = const(128)
HEIGHT = const(64)
PAGES = const(8)
COLS = const(21)             # text cells per row (21 x 6 = 126 px)
X0 = const(1)                # pixel column of the first cell: a 1 px margin on either side
ROWS = const(8)              # text rows, one per page
_STRIDE = const(129)         # bytes per page in the frame buffer: control byte + 128 columns
_QUESTION = const(63)        # drawn for bytes outside the font's 32..126
_INV = const(0x80)           # cell cache flag: the cell was drawn inverted
_UNKNOWN = const(0)          # cell cache value: pixels drawn over the cell, content unknown
_PART = const(16)            # a partial page's columns: 16, 32 or 64 (else the whole page)
_NONE = const(255)           # extent: no column changed

# fundamental commands (datasheet section 9 / 10)
_SET_CONTRAST = const(0x81)
_SET_ENTIRE_ON = const(0xA4)  # | 1: all pixels on regardless of RAM
_SET_NORM_INV = const(0xA6)   # | 1: inverse display
_SET_DISP = const(0xAE)       # | 1: display on
_SET_MEM_ADDR = const(0x20)
_SET_COL_ADDR = const(0x21)
_SET_PAGE_ADDR = const(0x22)
_SET_SCROLL_OFF = const(0x2E)
_SET_DISP_START_LINE = const(0x40)
_SET_SEG_REMAP = const(0xA0)  # | 1: column 127 mapped to SEG0
_SET_MUX_RATIO = const(0xA8)
_SET_COM_OUT_DIR = const(0xC0)  # | 8: scan from COM[N-1] to COM0
_SET_DISP_OFFSET = const(0xD3)
_SET_COM_PIN_CFG = const(0xDA)
_SET_DISP_CLK_DIV = const(0xD5)
_SET_PRECHARGE = const(0xD9)
_SET_VCOM_DESEL = const(0xDB)
_SET_CHARGE_PUMP = const(0x8D)

# Power-up sequence of the datasheet's application note (SSD1306 rev 1.1, "software
# initialization"), for a 128x64 module with the internal charge pump, mounted as the common
# modules are (segment remap and COM scan reversed gives an upright picture).
# The display stays off here; init_display() clears the RAM before switching it on.
_INIT = (
    _SET_DISP,                   # display off while configuring
    _SET_DISP_CLK_DIV, 0x80,     # oscillator default, divide ratio 1
    _SET_MUX_RATIO, HEIGHT - 1,  # 64 rows
    _SET_DISP_OFFSET, 0x00,
    _SET_DISP_START_LINE | 0x00,
    _SET_CHARGE_PUMP, 0x14,      # internal charge pump on (must precede display on)
    _SET_MEM_ADDR, 0x00,         # horizontal addressing: the pointer runs along a page, then on
    _SET_SEG_REMAP | 0x01,
    _SET_COM_OUT_DIR | 0x08,
    _SET_COM_PIN_CFG, 0x12,      # alternative COM pin configuration (128x64 panels)
    _SET_CONTRAST, 0xCF,
    _SET_PRECHARGE, 0xF1,        # phase 1: 1 clock, phase 2: 15 clocks (internal Vcc)
    _SET_VCOM_DESEL, 0x30,       # ~0.83 x Vcc
    _SET_ENTIRE_ON,              # output follows the RAM
    _SET_NORM_INV,               # not inverted
    _SET_SCROLL_OFF,
)


@micropython.viper
def _extent(ext: ptr8, row: int, lo: int, hi: int):
    # page row's changed columns widened to lo..hi (inclusive)
    if lo < int(ext[row]):
        ext[row] = lo
    if int(ext[row + PAGES]) == _NONE or hi > int(ext[row + PAGES]):
        ext[row + PAGES] = hi


@micropython.viper
def _cells(fb: ptr8, p: int, cells: ptr8, ci: int, buf: ptr8, k: int, n: int, rm: int, a: int,
           b: int, ext: ptr8, row: int) -> int:
    # buf[k:k + n] as glyphs into fb from byte p (page row), cells from ci: those at buf
    # indices a..b-1 in negative (cache flag _INV, mask rm ^ 0xFF), the others with the row's
    # mask rm. text() draws a run with it, row() a whole row (what were up to three text()
    # calls, each a Python call on the RP2040: issue 13). Skips cells the cache says hold the
    # same already. Returns 1 if a byte changed (the page's extent, ext, widened to them).
    font = ptr8(FONT)
    lo = 9999
    hi = -1
    end = k + n
    while k < end:
        m = rm
        flag = 0
        if k >= a and k < b:
            m = rm ^ 0xFF
            flag = _INV
        c = int(buf[k])
        if c < 32 or c > 126:
            c = _QUESTION
        if int(cells[ci]) != (c | flag):
            cells[ci] = c | flag
            g = (c - 32) * 6
            j = 0
            while j < 6:
                v = int(font[g + j]) ^ m
                if int(fb[p + j]) != v:
                    fb[p + j] = v
                    if p + j < lo:
                        lo = p + j
                    hi = p + j
                j += 1
        ci += 1
        p += 6
        k += 1
    if hi < 0:
        return 0
    base = row * _STRIDE + 1          # the page's extent widened (_extent, without a call)
    lo -= base
    hi -= base
    if lo < int(ext[row]):
        ext[row] = lo
    e = int(ext[row + PAGES])
    if e == _NONE or hi > e:
        ext[row + PAGES] = hi
    return 1


@micropython.viper
def _copy(dst: ptr8, i: int, src: ptr8, j: int, n: int):
    # dst[i:i + n] = src[j:j + n]
    end = i + n
    while i < end:
        dst[i] = src[j]
        i += 1
        j += 1


@micropython.viper
def _flip(fb: ptr8, i: int, n: int):
    end = i + n
    while i < end:
        fb[i] = int(fb[i]) ^ 0xFF
        i += 1


class SSD1306:
    def __init__(self, i2c, addr=0x3C):
        self.i2c = i2c
        self.addr = addr
        self.buf = bytearray(PAGES * _STRIDE)
        mv = memoryview(self.buf)
        pages = []
        for p in range(PAGES):
            self.buf[p * _STRIDE] = 0x40            # Co = 0, D/C# = 1: the rest is data
            pages.append(mv[p * _STRIDE:(p + 1) * _STRIDE])
        self.pages = tuple(pages)
        self._cmd = bytearray(2)
        self._cmd[0] = 0x80                         # Co = 1, D/C# = 0: one command byte
        # the address window for one page, as one command stream (Co = 0, D/C# = 0)
        self._win = bytearray((0x00, _SET_COL_ADDR, 0, WIDTH - 1, _SET_PAGE_ADDR, 0, 0))
        self._num = bytearray(12)                   # scratch for number()
        self._cells = bytearray(COLS * ROWS)        # cell cache: char | _INV, or _UNKNOWN
        self._rinv = bytearray(ROWS)                # 0xFF where invert_row() is on
        self.dirty = 0                              # bit p: page p differs from the panel
        # ... in columns ext[p] .. ext[8 + p] (_NONE: none, or not known to differ)
        self._ext = bytearray(b"\xff" * (2 * PAGES))
        # a partial page: [0x40, its columns], sent through the view of its length
        self._part = bytearray(1 + 4 * _PART)
        self._part[0] = 0x40
        pv = memoryview(self._part)
        self._parts = (pv[:1 + _PART], pv[:1 + 2 * _PART], pv)
        self._rr = 0                                # next page service() looks at first
        self.errors = 0                             # failed I2C writes (capped)
        self.init_display()

    # -- panel control ---------------------------------------------------------------------
    def write_cmd(self, c):
        self._cmd[1] = c
        try:
            self.i2c.writeto(self.addr, self._cmd)
            return True
        except OSError:
            self._error()
            return False

    def _error(self):
        if self.errors < 9999:
            self.errors += 1

    def init_display(self):
        # configure (display off), clear the panel's RAM, then switch it on: no random
        # power-up pixels are ever shown
        for c in _INIT:
            self.write_cmd(c)
        self.fill(0)
        self.dirty = 0xFF
        self.flush()
        self.write_cmd(_SET_DISP | 0x01)

    # -- sending -----------------------------------------------------------------------------
    def _send(self, p):
        # page p, or of it the columns that changed (widened to 16, 32 or 64)
        w = self._win
        w[5] = p
        w[6] = p
        ext = self._ext
        lo = ext[p]
        hi = ext[PAGES + p]
        if hi == _NONE:
            lo = 0
            hi = WIDTH - 1
        n = _PART                                   # columns sent: lo..hi, widened
        while n < hi - lo + 1:
            n += n
        if lo + n > WIDTH:
            lo = WIDTH - n
        w[2] = lo
        w[3] = lo + n - 1
        try:
            self.i2c.writeto(self.addr, w)
            if n == WIDTH:
                self.i2c.writeto(self.addr, self.pages[p])
            else:
                _copy(self._part, 1, self.buf, p * _STRIDE + 1 + lo, n)
                self.i2c.writeto(self.addr, self._parts[n // (2 * _PART)])     # 16, 32, 64
        except OSError:
            self._error()
            return False
        self.dirty &= ~(1 << p)
        ext[p] = _NONE
        ext[PAGES + p] = _NONE
        return True

    def _mark(self, p, lo, hi):
        # page p changed in columns lo..hi
        self.dirty |= 1 << p
        _extent(self._ext, p, lo, hi)

    def service(self):
        # send at most one changed page; returns its number, or -1 when nothing was sent.
        # Round robin, so a page that changes all the time cannot starve the others.
        d = self.dirty
        if not d:
            return -1
        p = self._rr
        for _ in range(PAGES):
            if d & (1 << p):
                self._rr = (p + 1) & 7
                if self._send(p):
                    return p
                return -1
            p = (p + 1) & 7
        return -1

    def flush(self):
        # send every changed page now (each at most once, even when the bus fails); returns
        # how many were sent
        n = 0
        d = self.dirty              # (the pages changed when called; the loop ends after the
        p = 0                       # last of them: a clean page costs no look, issue 13)
        while d:
            if d & 1:
                if self._send(p):
                    n += 1
            d >>= 1
            p += 1
        return n

    # -- drawing -----------------------------------------------------------------------------
    def fill(self, c):
        # every pixel off (0) or on (1); cancels invert_row()
        v = 0xFF if c else 0
        for p in range(PAGES):
            self._rinv[p] = 0
            if setbytes(self.buf, p * _STRIDE + 1, WIDTH, v):
                self._mark(p, 0, WIDTH - 1)
        # a lit cell is exactly an inverted space
        setbytes(self._cells, 0, COLS * ROWS, (32 | _INV) if c else 32)

    def text(self, row, col, buf, off=0, n=-1, inv=0):
        # draw buf[off:off + n] (bytes or bytearray; n = -1: to the end) at a text cell,
        # clipped to the row; inv draws it in negative. Returns the column after it.
        if n < 0:
            n = len(buf) - off
        if col < 0:
            off -= col
            n += col
            col = 0
        if col + n > COLS:
            n = COLS - col
        if row < 0 or row >= ROWS or n <= 0:
            return col
        a = off if inv else 0           # the run's cells in negative, or none
        if _cells(self.buf, row * _STRIDE + 1 + X0 + col * 6, self._cells, row * COLS + col,
                  buf, off, n, self._rinv[row], a, off + n if inv else 0, self._ext, row):
            self.dirty |= 1 << row
        return col + n

    def row(self, row, buf, bar=0, a=0, k=0):
        # a whole text row from buf (COLS bytes): the row in negative as a bar when bar, else
        # cells a..a+k-1 in negative; what invert_row() and text() over the row's three parts
        # draw, in one call
        if row < 0 or row >= ROWS:
            return
        v = 0xFF if bar else 0
        ri = self._rinv
        if ri[row] != v:
            ri[row] = v
            _flip(self.buf, row * _STRIDE + 1, WIDTH)
            self._mark(row, 0, WIDTH - 1)
        if k <= 0:
            a = 0
        if _cells(self.buf, row * _STRIDE + 1 + X0, self._cells, row * COLS, buf, 0, COLS, v, a,
                  a + k, self._ext, row):
            self.dirty |= 1 << row

    def number(self, row, col, value, width, inv=0, pad=0x20):
        # an int right-aligned in `width` cells (at most 12), without str()
        if width > 12:
            width = 12
        put_int(self._num, 0, width, value, pad)
        return self.text(row, col, self._num, 0, width, inv)

    def blank(self, row, col, n, inv=0):
        # n cells of spaces
        if n > COLS:
            n = COLS
        setbytes(self._num, 0, 12, 32)
        c = col
        while n > 0:
            k = n if n < 12 else 12
            c = self.text(row, c, self._num, 0, k, inv)
            n -= k
        return c

    def clear_row(self, row):
        # the whole row blank (all 128 columns), and not inverted any more
        if row < 0 or row >= ROWS:
            return
        self.invert_row(row, 0)
        self.blank(row, 0, COLS)
        # and the margins outside the cells
        self._zero(row, 0, X0)
        self._zero(row, X0 + COLS * 6, WIDTH)

    def _zero(self, row, x0, x1):
        if setbytes(self.buf, row * _STRIDE + 1 + x0, x1 - x0, 0):
            self._mark(row, x0, x1 - 1)

    def invert_row(self, row, on):
        # show the whole row (all 128 columns) in negative, as a bar; text drawn later into the
        # row is drawn in negative too
        if row < 0 or row >= ROWS:
            return
        v = 0xFF if on else 0
        if self._rinv[row] == v:
            return
        self._rinv[row] = v
        _flip(self.buf, row * _STRIDE + 1, WIDTH)
        self._mark(row, 0, WIDTH - 1)

    def pixel(self, x, y, c=1):
        # one pixel (in negative inside an inverted row)
        if x < 0 or x >= WIDTH or y < 0 or y >= HEIGHT:
            return
        p = y >> 3
        i = p * _STRIDE + 1 + x
        bit = 1 << (y & 7)
        old = self.buf[i]
        if (1 if c else 0) ^ (self._rinv[p] & 1):
            new = old | bit
        else:
            new = old & ~bit
        if new != old:
            self.buf[i] = new
            self._mark(p, x, x)
            x -= X0
            if x >= 0 and x < COLS * 6:
                self._cells[p * COLS + x // 6] = _UNKNOWN

    def hline(self, x, y, w, c=1):
        # a horizontal rule w pixels long (separators). Text drawn later over one of its cells
        # replaces the whole cell, rule included.
        if x < 0:
            w += x
            x = 0
        if x + w > WIDTH:
            w = WIDTH - x
        for i in range(x, x + w):
            self.pixel(i, y, c)
