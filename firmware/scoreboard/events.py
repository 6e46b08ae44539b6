# JSON-lines event writer: one JSON object per line, built in a preallocated bytearray and
# handed to stream.write(buf, 0, n) when the buffer fills and at the end of each line, so a
# line may be longer than the buffer. Nothing is allocated after construction.
#
#   ew.begin(b'shot')             {"ev":"shot"
#   ew.int_(b'player', 1)         ,"player":1
#   ew.arr(b'cum')                ,"cum":[
#   ew.int_(None, 20)             20          (key None: an element of the open array)
#   ew.close_arr()                ]
#   ew.end()                      }\n         and flush
#
# Keys are bytes literals written as they are (no escaping: keep them plain ASCII).
# String values are escaped (quote, backslash, control bytes). Ints are written digit by digit;
# any small int works, negative ones included.
import sys
import micropython
from micropython import const

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: the viper helpers below run as plain Python
        return x

_QUOTE = const(34)
_BSLASH = const(92)
_COMMA = const(44)
_COLON = const(58)
_MINUS = const(45)
_ZERO = const(48)
_NL = const(10)

_HEX = b'0123456789abcdef'


@micropython.viper
def _copy(dst: ptr8, i: int, src: ptr8, off: int, n: int) -> int:
    # dst[i:i + n] = src[off:off + n]; returns i + n (issue 13: a byte at a time through
    # _put() cost about 25 us on the RP2040, a fault event some ms)
    e = off + n
    while off < e:
        dst[i] = src[off]
        i += 1
        off += 1
    return i


@micropython.viper
def _plain(dst: ptr8, i: int, room: int, src: ptr8, off: int, n: int) -> int:
    # str_()'s bytes that need no escape, src[off:] into dst[i:], at most n and at most room:
    # how many were copied (0: src[off] needs an escape, or there is no room)
    k = 0
    while k < n and k < room:
        c = int(src[off + k])
        if c == _QUOTE or c == _BSLASH or c < 32:
            break
        dst[i + k] = c
        k += 1
    return k


@micropython.viper
def _key(dst: ptr8, i: int, k: ptr8, n: int, sep: int) -> int:
    # ,"k":  into dst from i (the comma only when sep); returns the index after it
    if sep:
        dst[i] = _COMMA
        i += 1
    dst[i] = _QUOTE
    i += 1
    j = 0
    while j < n:
        dst[i] = k[j]
        i += 1
        j += 1
    dst[i] = _QUOTE
    dst[i + 1] = _COLON
    return i + 2


@micropython.viper
def _qstr(dst: ptr8, i: int, src: ptr8, off: int, n: int) -> int:
    # "src[off:off + n]" into dst from i when no byte needs an escape: the index after it,
    # else -1 (dst is then left to the byte-by-byte path, which writes over it)
    dst[i] = _QUOTE
    i += 1
    e = off + n
    while off < e:
        c = int(src[off])
        if c == _QUOTE or c == _BSLASH or c < 32:
            return -1
        dst[i] = c
        i += 1
        off += 1
    dst[i] = _QUOTE
    return i + 1


@micropython.viper
def _uint(dst: ptr8, i: int, v: int) -> int:
    # 0 <= v < 10**6 as decimal digits into dst from i; the index after them
    d = 1
    while d * 10 <= v:
        d *= 10
    while d:
        q = v // d
        dst[i] = _ZERO + q
        i += 1
        v -= q * d
        d //= 10
    return i


class EventWriter:
    def __init__(self, stream, size=256):
        self.stream = stream        # anything with write(buf, off, n); None discards
        self.buf = bytearray(size)
        self.n = 0                  # bytes waiting in buf
        self.sep = 0                # 1 when the next key or element needs a comma before it
        self.lines = 0              # lines written (ended) so far
        self._dig = bytearray(12)   # digits of one int, least significant first
        self._aev = None            # annotate(): the event, its key and bool value, and
        self._akey = None           # whether the line being written is that event
        self._aval = False
        self._ahit = False
        self._due = None            # put_off(): the game whose shot lines are still to come

    # -- low level --------------------------------------------------------------------------
    def flush(self):
        if self.n:
            if self.stream is not None:
                self.stream.write(self.buf, 0, self.n)
            self.n = 0

    def _put(self, c):
        self.buf[self.n] = c
        self.n += 1
        if self.n == len(self.buf):
            self.flush()

    def _bytes(self, b, off, n):
        buf = self.buf
        cap = len(buf)
        i = self.n
        if i + n < cap:                 # fits with room to spare: no flush on the way
            self.n = _copy(buf, i, b, off, n)
            return
        for k in range(off, off + n):
            buf[i] = b[k]
            i += 1
            if i == cap:
                self.n = i
                self.flush()
                i = 0
        self.n = i

    def raw(self, b):
        # bytes exactly as given; the caller keeps the JSON valid (commas are not managed)
        self._bytes(b, 0, len(b))

    def key(self, k):
        # ,"k":   (or only the comma for an array element when k is None)
        if k is not None and self.n + len(k) + 4 < len(self.buf):
            self.n = _key(self.buf, self.n, k, len(k), self.sep)    # at once: no flush due
            self.sep = 0
            return
        if self.sep:
            self._put(_COMMA)
        self.sep = 0
        if k is not None:
            self._put(_QUOTE)
            self._bytes(k, 0, len(k))
            self._put(_QUOTE)
            self._put(_COLON)

    # -- lines ------------------------------------------------------------------------------
    def annotate(self, ev, key, value):
        """The next line of event `ev` gets ,"key":true|false before its closing brace: a field
        the caller adds to a line another module writes (app.py: the pads' "sure" on a shot)."""
        self._aev = ev
        self._akey = key
        self._aval = value

    def put_off(self, game):
        """The lines of the shot `game` just played silent (its ev None) come later: game.
        shot_lines() writes them at due() (app.py: once the verdict's screen is on the
        displays, issue 13: rest -> score shown), or at once before any other line begins,
        so that the stream is byte for byte what it would have been."""
        self._due = game

    def due(self):
        # the shot lines put off, if any, now (the game must not have changed since)
        g = self._due
        if g is not None:
            self._due = None
            g.shot_lines()

    def begin(self, ev):
        if self._due is not None:
            self.due()              # a shot's lines put off come first
        self._put(123)              # {
        self.sep = 0
        self._ahit = self._aev is not None and ev == self._aev
        self.str_(b'ev', ev)

    def end(self):
        if self._ahit:
            self._ahit = False
            self._aev = None
            self.bool_(self._akey, self._aval)
        self._put(125)              # }
        self._put(_NL)
        self.sep = 0
        self.lines += 1
        self.flush()

    # -- values (k is the key, or None for an element of an array) ---------------------------
    def int_(self, k, v):
        self.key(k)
        if 0 <= v < 1000000 and self.n + 7 < len(self.buf):
            self.n = _uint(self.buf, self.n, v)     # at once: no flush due
            self.sep = 1
            return
        if v < 0:
            self._put(_MINUS)
        else:
            v = -v                  # work on the negative side: -v of the smallest int would overflow
        d = self._dig
        nd = 0
        if v == 0:
            d[0] = _ZERO
            nd = 1
        while v:
            m = v % -10             # in -9..0
            d[nd] = _ZERO - m
            nd += 1
            v = (v - m) // 10
        while nd:
            nd -= 1
            self._put(d[nd])
        self.sep = 1

    def str_(self, k, s, off=0, n=-1):
        self.key(k)
        if n < 0:
            n = len(s) - off
        i = self.n
        if i + n + 2 < len(self.buf):
            j = _qstr(self.buf, i, s, off, n)     # "s" at once when nothing needs an escape
            if j >= 0:
                self.n = j
                self.sep = 1
                return
        self._put(_QUOTE)
        i = off
        end = off + n
        buf = self.buf
        while i < end:
            # a run of bytes that need no escape at once, as long as the buffer has room
            # beyond it (a full buffer is flushed by _put below, as before)
            r = _plain(buf, self.n, len(buf) - 1 - self.n, s, i, end - i)
            if r:
                self.n += r
                i += r
                continue
            c = s[i]
            i += 1
            if c == _QUOTE or c == _BSLASH:
                self._put(_BSLASH)
                self._put(c)
            elif c < 32:
                self._bytes(b'\\u00', 0, 4)
                self._put(_HEX[c >> 4])
                self._put(_HEX[c & 15])
            else:
                self._put(c)
        self._put(_QUOTE)
        self.sep = 1

    def bool_(self, k, v):
        self.key(k)
        if v:
            self._bytes(b'true', 0, 4)
        else:
            self._bytes(b'false', 0, 5)
        self.sep = 1

    def null_(self, k):
        self.key(k)
        self._bytes(b'null', 0, 4)
        self.sep = 1

    def arr(self, k):
        self.key(k)
        self._put(91)               # [
        self.sep = 0

    def close_arr(self):
        self._put(93)               # ]
        self.sep = 1

    def obj(self, k):
        self.key(k)
        self._put(123)              # {
        self.sep = 0

    def close_obj(self):
        self._put(125)              # }
        self.sep = 1
