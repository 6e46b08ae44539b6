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
from micropython import const

_QUOTE = const(34)
_BSLASH = const(92)
_COMMA = const(44)
_COLON = const(58)
_MINUS = const(45)
_ZERO = const(48)
_NL = const(10)

_HEX = b'0123456789abcdef'


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

    def begin(self, ev):
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
        self._put(_QUOTE)
        for i in range(off, off + n):
            c = s[i]
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
