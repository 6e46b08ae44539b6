# MAX7219 seven-segment digits, a chain of eight-digit modules on SPI, allocation-free after
# construction. Why MAX7219 and not HT16K33: docs/displays.md.
#
# The chain: module 0 is the one wired to the Pico (its DIN on MOSI), module 1 hangs off its
# DOUT, and so on; all share SCK and one chip select (LOAD). Each module is one row of 8
# characters, module 0 on top. A write is one frame of 2 bytes per module (register, data),
# shifted through the whole chain while CS is low and latched by every chip when CS rises; the
# bytes for the farthest module go out first. A module that should not change gets the no-op
# register (0x00) in that frame.
#
# What this driver does for a scan loop:
# - Characters go into `want` (segment bytes, one per digit) through text() / number() / dp();
#   nothing is sent there. A digit position whose segments changed on any module sets its bit
#   in `dirty`, and only a real change does.
# - service() sends at most one frame: the next dirty digit position, for every module in one
#   go (no-op for modules whose digit there is unchanged): 2 x modules bytes, 6 bytes for three
#   modules, a few microseconds on a 10 MHz bus plus the Python around it. flush() sends every
#   dirty position (boot, or when a stall does not matter).
# - Every buffer is made in __init__: `want`, `sent`, the frame, a scratch for numbers.
#
# Digit positions: the common eight-digit modules wire DIG0 (register 1) to the rightmost
# digit, so character column c of a row is digit register 8 - c.
#
# Segments in no-decode mode, one byte per digit: bit 7 DP, then A B C D E F G (datasheet
# table 6). FONT maps ASCII 32..127 to those bytes; letters without a seven-segment form are
# drawn as the nearest one (M as N, W and V as U, K and X as H, Z as 2). A '.' after a
# character lights that character's decimal point instead of taking a cell.
from micropython import const

from displays.digits import put_int

_REG_NOOP = const(0x00)
_REG_DIGIT0 = const(0x01)
_REG_DECODE = const(0x09)
_REG_INTENSITY = const(0x0A)
_REG_SCAN_LIMIT = const(0x0B)
_REG_SHUTDOWN = const(0x0C)
_REG_TEST = const(0x0F)

DIGITS = const(8)            # characters per module (one row)
DP = const(0x80)
_DOT = const(46)

# ASCII 32..127 in MAX7219 no-decode segment bits (DP A B C D E F G)
FONT = (
    b"\x00\x00\x22\x00\x00\x00\x00\x02\x4e\x78\x00\x00\x00\x01\x80\x25"     # ' '..'/'
    b"\x7e\x30\x6d\x79\x33\x5b\x5f\x70\x7f\x7b\x00\x00\x00\x09\x00\x65"     # '0'..'?'
    b"\x00\x77\x1f\x4e\x3d\x4f\x47\x5e\x37\x06\x3c\x37\x0e\x76\x76\x7e"     # '@'..'O'
    b"\x67\x73\x05\x5b\x0f\x3e\x3e\x3e\x37\x3b\x6d\x4e\x13\x78\x00\x08"     # 'P'..'_'
    b"\x02\x7d\x1f\x0d\x3d\x6f\x47\x7b\x17\x04\x3c\x37\x06\x15\x15\x1d"     # '`'..'o'
    b"\x67\x73\x05\x5b\x0f\x1c\x1c\x1c\x37\x3b\x6d\x4e\x06\x78\x00\x00"     # 'p'..DEL
)


class MAX7219:
    def __init__(self, spi, cs, modules=3, intensity=8):
        # spi: machine.SPI (mode 0, MSB first, up to 10 MHz); cs: an output machine.Pin
        self.spi = spi
        self.cs = cs
        self.n = modules
        self.rows = modules
        self.intensity = intensity & 15
        self.want = bytearray(DIGITS * modules)   # segments per (row, column), what to show
        self.sent = bytearray(DIGITS * modules)   # segments the chips hold (as far as we know)
        self.dirty = 0                            # bit c: column c differs on some module
        self._frame = bytearray(2 * modules)
        self._num = bytearray(8)
        self._rr = 0                              # next column service() looks at first
        self.frames = 0                           # frames sent (capped), for tests
        self.errors = 0
        cs.value(1)
        self.init_display()

    # -- the bus -----------------------------------------------------------------------------
    def _send(self):
        cs = self.cs
        cs.value(0)
        try:
            self.spi.write(self._frame)
        except OSError:
            if self.errors < 9999:
                self.errors += 1
            cs.value(1)
            return False
        cs.value(1)
        if self.frames < 1000000:
            self.frames += 1
        return True

    def _all(self, reg, data):
        # the same register write to every module, in one frame
        f = self._frame
        for i in range(self.n):
            f[2 * i] = reg
            f[2 * i + 1] = data
        return self._send()

    def init_display(self):
        # test mode off, raw segments, all eight digits scanned, brightness, digits blank, on
        self._all(_REG_TEST, 0)
        self._all(_REG_DECODE, 0)
        self._all(_REG_SCAN_LIMIT, DIGITS - 1)
        self._all(_REG_INTENSITY, self.intensity)
        for i in range(len(self.want)):
            self.want[i] = 0
            self.sent[i] = 0
        for c in range(DIGITS):
            self._all(_REG_DIGIT0 + DIGITS - 1 - c, 0)
        self.dirty = 0
        self._all(_REG_SHUTDOWN, 1)

    def service(self):
        # send at most one frame: the next dirty column, on every module at once. Returns the
        # column sent, or -1. Round robin, so a busy column cannot starve the others.
        d = self.dirty
        if not d:
            return -1
        c = self._rr
        for _ in range(DIGITS):
            if d & (1 << c):
                self._rr = (c + 1) & 7
                return c if self._column(c) else -1
            c = (c + 1) & 7
        return -1

    def flush(self):
        # every dirty column now; returns how many frames went out
        k = 0
        for c in range(DIGITS):
            if self.dirty & (1 << c):
                if self._column(c):
                    k += 1
        return k

    def _column(self, c):
        f = self._frame
        n = self.n
        reg = _REG_DIGIT0 + DIGITS - 1 - c
        for m in range(n):
            i = m * DIGITS + c
            j = 2 * (n - 1 - m)                 # the farthest module's bytes go first
            v = self.want[i]
            if v != self.sent[i]:
                f[j] = reg
                f[j + 1] = v
            else:
                f[j] = _REG_NOOP
                f[j + 1] = 0
        if not self._send():
            return False
        for m in range(n):
            i = m * DIGITS + c
            self.sent[i] = self.want[i]
        self.dirty &= ~(1 << c)
        return True

    # -- drawing -------------------------------------------------------------------------------
    def _set(self, row, col, v):
        i = row * DIGITS + col
        if self.want[i] != v:
            self.want[i] = v
            if v != self.sent[i]:
                self.dirty |= 1 << col
            else:
                self._recheck(col)

    def _recheck(self, col):
        # a column changed back to what the chips hold: clear its bit if nothing else differs
        for m in range(self.n):
            i = m * DIGITS + col
            if self.want[i] != self.sent[i]:
                return
        self.dirty &= ~(1 << col)

    def text(self, row, col, buf, off=0, n=-1):
        # buf[off:off + n] from column col of row `row`, clipped; a '.' lights the decimal point
        # of the character before it. Returns the column after the last character.
        if row < 0 or row >= self.n:
            return col
        if n < 0:
            n = len(buf) - off
        end = off + n
        k = off
        while k < end:
            ch = buf[k]
            k += 1
            v = FONT[ch - 32] if 32 <= ch < 128 else 0
            if k < end and buf[k] == _DOT and ch != _DOT:
                v |= DP
                k += 1
            if 0 <= col < DIGITS:
                self._set(row, col, v)
            col += 1
        return col

    def line(self, row, buf, dps=0):
        # a whole row from 8 ASCII characters in buf (no '.' handling); bit c of dps lights
        # the decimal point of column c
        if row < 0 or row >= self.n:
            return
        for c in range(DIGITS):
            ch = buf[c]
            v = FONT[ch - 32] if 32 <= ch < 128 else 0
            if (dps >> c) & 1:
                v |= DP
            self._set(row, c, v)

    def number(self, row, col, value, width, pad=0x20):
        # an int right-aligned in `width` columns (at most 8), without str()
        if width > 8:
            width = 8
        put_int(self._num, 0, width, value, pad, 45)     # '-' when it does not fit
        return self.text(row, col, self._num, 0, width)

    def dp(self, row, col, on=1):
        # the decimal point of one digit, on or off, leaving its character
        if row < 0 or row >= self.n or col < 0 or col >= DIGITS:
            return
        v = self.want[row * DIGITS + col]
        self._set(row, col, (v | DP) if on else (v & ~DP))
