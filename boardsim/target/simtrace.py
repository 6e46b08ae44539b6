"""What the firmware sees, as a digest: every value it reads from the simulated table (pin
levels, ADC readings, bytes shifted in over SPI, the I2C scan), every clock reading, and when its
pin IRQ handlers and timer callbacks run, folded in the order they happen into two 30-bit hashes
(small ints: nothing allocated under the heap lock), with a count per kind of read.

The runner installs it when BOARDSIM_TRACE names a directory (before the firmware is imported);
at the end of the run it appends one line to DIR/<key>.txt, the key a hash of the timeline and
the config file and the runtime, so that two checkouts' runs of the same tests can be compared
line for line (bench/sim_trace.py). A change to the simulator's speed must leave every line as
it was: the firmware then sees exactly the same at every step. The line also carries a digest
of what the firmware made of it at every frame (frame(): the locator's chips, the tracker's
chips and state), so that a change to the firmware's own code that must not change its results
(a module split, issue 15) can be shown to leave them the same frame for frame.
"""
import sys

import machine
import vclock

_h = [0x1234567, 0x7654321, 0]    # two hashes and the number of values folded in
_MASK = 0x3FFFFFFF
KINDS = ("pin", "adc", "spi", "i2c", "ticks", "irq", "timer")


def _fold(kind, v):
    h = _h
    h[0] = ((h[0] * 1000003) ^ (v & _MASK) ^ kind) & _MASK
    h[1] = ((h[1] + (v & _MASK) + kind) * 69069 + 1) & _MASK
    h[2] += 1


_count = [0] * len(KINDS)         # reads per kind


_orig = {}   # the methods wrapped, by name (module-level wrappers: a closure called with keyword
             # arguments allocates on MicroPython, which the heap lock would stop)


def _value(self, v=None):
    if v is None:
        r = _orig["value"](self)
        _fold(1, r)
        _count[0] += 1
        return r
    return _orig["value"](self, v)


def _call(self, v=None):
    if v is None:
        r = _orig["call"](self)
        _fold(1, r)
        _count[0] += 1
        return r
    return _orig["call"](self, v)


def _read_u16(self):
    r = _orig["read_u16"](self)
    _fold(2, r)
    _count[1] += 1
    return r


# the closures machine.Pin and machine.ADC bind on their objects in the methods' place (machine's
# _values, the world's adc_readers), wrapped so that the traced run goes through the same code


def _pin_wrapper(f):
    def value(v=None):
        if v is None:
            r = f()
            _fold(1, r)
            _count[0] += 1
            return r
        return f(v)
    return value


def _reader_wrapper(f):
    def read_u16():
        r = f()
        _fold(2, r)
        _count[1] += 1
        return r
    return read_u16


def bank_wrapper(f):
    """A traced world's bank reader (viper_twins._bank_reader, CPython: made when the firmware's
    readers are these wrappers): each value it read folded as _reader_wrapper folds it, in the
    order it read them (each op's channels 0, 1, 2)."""
    def read_bank(ops, chp, raw):
        if not f(ops, chp, raw):
            return False
        for _p, _v, s, m in ops:
            if m & 1:
                _fold(2, raw[s])
                _count[1] += 1
            if m & 2:
                _fold(2, raw[s + 1])
                _count[1] += 1
            if m & 4:
                _fold(2, raw[s + 2])
                _count[1] += 1
        return True
    return read_bank


def strobes_wrapper(f):
    """A traced world's strobe reader (viper_twins._strobe_reader, CPython): each view it
    filled folded as _spi_wrapper folds a readinto's buffer, in strobe order."""
    def read_rows(strobe, code, sel, load, views, count):
        c = f(strobe, code, sel, load, views, count)
        if c >= 0:
            for i in range(count):
                _bytes(views[i])
        return c
    return read_rows


def _spi_wrapper(f):
    def readinto(buf):
        f(buf)
        _bytes(buf)
    return readinto


def _bytes(buf):
    for i in range(len(buf)):
        _fold(3, buf[i])
    _count[2] += 1


def _readinto(self, buf, write=0):
    _orig["readinto"](self, buf, write)
    _bytes(buf)


def _write_readinto(self, wbuf, rbuf):
    _orig["write_readinto"](self, wbuf, rbuf)
    _bytes(rbuf)


def _scan(self):
    r = _orig["scan"](self)
    for a in r:
        _fold(4, a)
    _count[3] += 1
    return r


def _readfrom_into(self, addr, buf, stop=True):
    _orig["readfrom_into"](self, addr, buf, stop)
    _bytes(buf)


_handlers = []      # [firmware's handler, its wrapper], made at its first irq() (at boot)


def _irq(self, handler=None, trigger=12, hard=False):
    if handler is not None:
        w = None
        for pair in _handlers:
            if pair[0] is handler:
                w = pair[1]
        if w is None:
            w = _irq_wrapper(handler)
            _handlers.append([handler, w])
        handler = w
    return _orig["irq"](self, handler, trigger, hard)


def _irq_wrapper(fw):
    def handler(p):
        _fold(6, p.id)
        _fold(6, vclock.now_us())
        _count[5] += 1
        fw(p)
    return handler


def _timer_init(self, mode=1, period=-1, freq=-1, callback=None):
    if callback is not None:
        callback = _timer_wrapper(callback)
    return _orig["init"](self, mode, period, freq, callback)


def _timer_wrapper(fw):
    def callback(t):
        _fold(7, vclock.now_us())
        _count[6] += 1
        fw(t)
    return callback


def install():
    P = machine.Pin
    A = machine.ADC
    S = machine.SPI
    I = machine.I2C
    T = machine.Timer
    for name, cls, attr, wrapper in (("value", P, "value", _value), ("call", P, "__call__", _call),
                                     ("irq", P, "irq", _irq), ("read_u16", A, "read_u16", _read_u16),
                                     ("readinto", S, "readinto", _readinto),
                                     ("write_readinto", S, "write_readinto", _write_readinto),
                                     ("scan", I, "scan", _scan), ("readfrom_into", I, "readfrom_into", _readfrom_into),
                                     ("init", T, "init", _timer_init)):
        if name == "value" and hasattr(machine, "_values"):
            continue            # (the pins' own closures are wrapped below)
        _orig[name] = getattr(cls, attr)
        setattr(cls, attr, wrapper)
    vs = getattr(machine, "_values", None)
    if vs is not None:
        for i in range(len(vs)):
            vs[i] = _pin_wrapper(vs[i])
    w = machine._world[0]
    rd = getattr(w, "adc_readers", None) or []
    for i in range(len(rd)):
        rd[i] = _reader_wrapper(rd[i])
    sr = getattr(w, "spi_readers", None)
    if sr:
        sr[1] = _spi_wrapper(sr[1])
    for name in ("ticks_ms", "ticks_us", "ticks_cpu", "time"):
        setattr(vclock, name, _ticks(getattr(vclock, name)))


def _ticks(f):
    def g():
        r = f()
        _fold(5, r)
        _count[4] += 1
        return r
    return g


_o = [0x2468ACE, 0x1357BDF, 0]    # the same for what the firmware made of it: the locator's chips
_last = [None, -1]                # and the tracker's state, at every frame the tracker took


def _ofold(v):
    o = _o
    o[0] = ((o[0] * 1000003) ^ (v & _MASK)) & _MASK
    o[1] = ((o[1] + (v & _MASK)) * 69069 + 1) & _MASK
    o[2] += 1


def frame(sb):
    """After a loop turn (heap unlocked): when the tracker took a new frame, fold in the
    locator's chips (kind, x, y, strength, err, unc) and the tracker's view of every chip, so
    that a change to the firmware's code (a module split, a faster fit) shows whether it left
    the results the same frame for frame, not only the event stream."""
    tr = getattr(sb, "tracker", None)
    if tr is None or (tr is _last[0] and tr.frames == _last[1]):
        return
    _last[0] = tr
    _last[1] = tr.frames
    loc = tr.loc
    n = loc.n
    _ofold(n)
    for i in range(n):
        _ofold(loc.kind[i])
        _ofold(loc.x[i])
        _ofold(loc.y[i])
        _ofold(loc.strength[i])
        _ofold(loc.err[i])
        _ofold(loc.unc[i])
    _ofold(tr.state)
    _ofold(tr.event)
    _ofold(tr.n_moved)
    for i in range(len(tr.present)):
        _ofold(tr.present[i])
        _ofold(tr.kind[i])
        _ofold(tr.x[i])
        _ofold(tr.y[i])
        _ofold(tr.mask[i])
        _ofold(tr.tunc[i])


def _key(parts):
    # FNV-1a over the bytes of the run's inputs, 30 bits per half
    h1 = 0x811C9DC5
    h2 = 0x01000193
    for b in parts:
        for c in b:
            h1 = ((h1 ^ c) * 16777619) & 0xFFFFFFFF
            h2 = ((h2 + c) * 1103515245 + 12345) & 0xFFFFFFFF
    return "%08x%08x" % (h1, h2)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def write(directory, timeline_path, config_path, steps, ms):
    """One line for this run: its key, the two hashes, the counts, steps and ms simulated."""
    rt = sys.implementation.name
    key = _key((_read(timeline_path), _read(config_path) if config_path else b"", rt.encode()))
    line = "%s %s %08x %08x n=%d %s steps=%d ms=%d out=%08x%08x folded=%d\n" % (
        key, rt, _h[0], _h[1], _h[2],
        " ".join("%s=%d" % (KINDS[i], _count[i]) for i in range(len(KINDS))), steps, ms,
        _o[0], _o[1], _o[2])
    with open(directory + "/" + key + ".txt", "a") as f:
        f.write(line)
