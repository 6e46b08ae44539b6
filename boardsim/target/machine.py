"""The `machine` stand-in: the RP2040's Pin, ADC, I2C, SPI, PWM, Timer and WDT, backed by the
simulated board (world.py). On the MicroPython unix port a machine.py on the path shadows the
built-in module; under CPython it is simply the module found.

Everything the firmware calls in its loop (Pin.value, ADC.read_u16, I2C.writeto, SPI.write,
WDT.feed) allocates nothing, so the runner can lock the heap around the firmware's step.
"""
import micropython
from micropython import const
from array import array

import vclock

_now_us = vclock._now_us

# Pin levels, one byte per GPIO (0..31). Outputs are written by the firmware, inputs by the world.
_level = bytearray(32)
_pins = [None] * 32         # the Pin object per GPIO (the last one constructed)
_world = [None]             # the World; set by the runner before the firmware boots (a bench's
                            # stand-in goes there through World.stand_in: the ADC readers see it)
_watch = [None] * 32        # per GPIO: a function(gpio, level) told when an output changes
                            # (the world watches a chip select this way), or None

PWRON_RESET = const(1)
WDT_RESET = const(3)
_reset_cause = [PWRON_RESET]


def attach(world):
    _world[0] = world
    # a reader per ADC to bind in its read_u16's place (world.adc_reader, under MicroPython: one
    # viper closure, no bound method and no global lookups at every read), or None
    _adc_fast[0] = getattr(world, "adc_reader", None)
    _spi_fast[0] = getattr(world, "spi_reader", None)


_adc_fast = [None]      # the world's adc_reader, or None
_spi_fast = [None]      # the world's spi_reader (a bus's readinto(buf), or None), or None


def detach_all():
    """Power cut: every pin forgets its mode and handler."""
    for i in range(32):
        _pins[i] = None
        _level[i] = 0


def watch(id, fn):
    """fn(id, level) is called whenever the firmware changes output `id`'s level."""
    _watch[id] = fn


def _out(id, level):
    if _level[id] != level:
        _level[id] = level
        w = _watch[id]
        if w is not None:
            w(id, level)


def reset_cause():
    return _reset_cause[0]


def unique_id():
    return b"ZENNSIM1"


def freq(*a):
    return 125000000


class ResetRequested(Exception):
    """machine.reset() ends the firmware's run; the runner boots it again."""


def reset():
    raise ResetRequested()


def soft_reset():
    raise ResetRequested()


def idle():
    pass


def disable_irq():
    return 0


def enable_irq(state=0):
    pass


class Pin:
    IN = const(0)
    OUT = const(1)
    OPEN_DRAIN = const(2)
    PULL_UP = const(1)
    PULL_DOWN = const(2)
    IRQ_FALLING = const(4)
    IRQ_RISING = const(8)

    def __init__(self, id, mode=-1, pull=-1, value=None):
        if not 0 <= id < 32:
            raise ValueError("invalid pin")
        self.id = id
        self.mode = 0 if mode == -1 else mode
        self.pull = pull
        self.handler = None
        self.trigger = 0
        # value() bound on the pin (one closure per GPIO, made before the firmware boots: its heap
        # does not hold them) while Pin.value is this module's own: an attribute of the instance
        # is found before the class's, and the call needs no self and no global lookups (about
        # half of what the method costs; the scanners call it 16 times a step). A wrapper put on
        # the class before the pin is made is what the pin calls instead (simtrace.py wraps the
        # closures in _values; bench/target/b_loop.py's Counting the pins' bound ones).
        if Pin.value is _value_method:
            self.value = _values[id]
        _pins[id] = self
        if value is not None:
            _out(id, 1 if value else 0)
        elif self.mode == Pin.IN and pull == Pin.PULL_UP:
            w = _world[0]
            _level[id] = w.input_level(id) if w is not None else 1

    def init(self, mode=-1, pull=-1, value=None):
        if mode != -1:
            self.mode = mode
        if value is not None:
            _out(self.id, 1 if value else 0)

    @micropython.native     # (machine code under MicroPython: the scanners call it for every bank)
    def value(self, v=None):
        # _out() written out: the scanners call this for every pad they read
        id = self.id
        if v is None:
            return _level[id]
        v = 1 if v else 0
        if _level[id] != v:
            _level[id] = v
            w = _watch[id]
            if w is not None:
                w(id, v)

    def __call__(self, v=None):
        if v is None:
            return _level[self.id]
        _out(self.id, 1 if v else 0)

    def on(self):
        _out(self.id, 1)

    def off(self):
        _out(self.id, 0)

    def high(self):
        _out(self.id, 1)

    def low(self):
        _out(self.id, 0)

    def toggle(self):
        _out(self.id, _level[self.id] ^ 1)

    def irq(self, handler=None, trigger=12, hard=False):
        self.handler = handler
        self.trigger = trigger
        return self


_value_method = Pin.value


def _pin_value(id):
    """Pin(id).value, a closure (above): the same as Pin.value, with id, the levels and the
    watchers in its cells."""
    lv = _level
    watch = _watch

    @micropython.native
    def value(v=None):
        if v is None:
            return lv[id]
        v = 1 if v else 0
        if lv[id] != v:
            lv[id] = v
            w = watch[id]
            if w is not None:
                w(id, v)
    return value


_values = [_pin_value(i) for i in range(32)]


def drive(id, level):
    """The world sets an input's level; a matching edge calls the pin's IRQ handler, as a hard
    IRQ does on the chip (the runner keeps the heap locked meanwhile)."""
    old = _level[id]
    _level[id] = level
    p = _pins[id]
    if p is None or p.handler is None or old == level:
        return
    if (level == 0 and p.trigger & Pin.IRQ_FALLING) or (level == 1 and p.trigger & Pin.IRQ_RISING):
        p.handler(p)


class ADC:
    CORE_TEMP = const(4)

    def __init__(self, pin):
        id = pin.id if isinstance(pin, Pin) else pin
        # ADC0..2 are GP26..28; ADC(n) with n < 5 means the channel
        self.channel = id - 26 if id >= 26 else id
        w = _world[0]
        if w is not None and hasattr(w, "adc_open"):
            w.adc_open(self.channel)      # the world keeps the hall pads' readings up to date
        # bound here, once: adc.read_u16() then allocates nothing whatever function it is (a
        # viper function looked up through the class would make a bound method at every call)
        rd = _adc_fast[0](self.channel) if _adc_fast[0] is not None else None
        self.read_u16 = rd or self.read_u16

    def read_u16(self):
        return _world[0].adc_read(self.channel)


class I2C:
    def __init__(self, id=0, scl=None, sda=None, freq=400000, timeout=50000):
        self.id = id
        self.freq = freq

    def scan(self):
        return _world[0].i2c_scan()

    def writeto(self, addr, buf, stop=True):
        return _world[0].i2c_write(addr, buf)

    def writevto(self, addr, vector, stop=True):
        n = 0
        w = _world[0]
        w.i2c_begin(addr)
        for b in vector:
            n += w.i2c_part(addr, b)
        w.i2c_end(addr)
        return n

    def readfrom_into(self, addr, buf, stop=True):
        for i in range(len(buf)):
            buf[i] = 0


class SoftI2C(I2C):
    pass


class SPI:
    MSB = const(0)
    LSB = const(1)

    def __init__(self, id=0, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        self.id = id
        w = _world[0]
        if w is not None and hasattr(w, "spi_open"):
            w.spi_open(id)                # the presence pads' shift registers, if on this bus
        # bound here, as ADC's read_u16: the presence pads' readinto(buf), one viper call on
        # the unix port (world.spi_reader), not three calls of Python
        rd = _spi_fast[0](id) if _spi_fast[0] is not None else None
        if rd is not None:
            self.readinto = rd

    def init(self, *a, **k):
        pass

    def write(self, buf):
        _world[0].spi_write(self.id, buf)

    def readinto(self, buf, write=0):
        _world[0].spi_readinto(self.id, buf)

    def write_readinto(self, wbuf, rbuf):
        _world[0].spi_write(self.id, wbuf)
        _world[0].spi_readinto(self.id, rbuf)


# What PWM outputs played (the buzzer): one entry per change of frequency or duty, as
# (ms of virtual time, gpio, frequency in Hz, duty_u16), in preallocated arrays so that the
# firmware's loop can play under the heap lock; pwm_log() reads them out (the runner's final
# state: "pwm"). Made at the first PWM (the firmware's boot), not at import: the chip tier's
# reference scripts import this module for its Pin and ADC only, and on the chip the log's
# 26 KB (three 8 KB int arrays) could not be found in a heap their earlier jobs had fragmented
# (a MemoryError at import).
_PWM_MAX = const(2048)
_pwm = []                   # [times, gpios, frequencies, duties] once a PWM exists
_pwm_n = [0]


def _pwm_make():
    if not _pwm:
        _pwm.append(array("i", [0] * _PWM_MAX))
        _pwm.append(bytearray(_PWM_MAX))
        _pwm.append(array("i", [0] * _PWM_MAX))
        _pwm.append(array("i", [0] * _PWM_MAX))


def pwm_log():
    """[[ms, gpio, hz, duty_u16], ...]: every change a PWM output made, in order (allocates)."""
    if not _pwm:
        return []
    t, g, f, d = _pwm
    return [[t[i], g[i], f[i], d[i]] for i in range(_pwm_n[0])]


class PWM:
    # the RP2040's PWM on one pin: freq() 8 Hz .. 62.5 MHz, duty_u16() 0 .. 65535; each change
    # recorded (above); a stopped (deinit) PWM records a duty of 0
    def __init__(self, pin, freq=0, duty_u16=0):
        _pwm_make()
        self.gpio = pin.id if isinstance(pin, Pin) else pin
        self.f = 0
        self.d = 0
        if freq:
            self.freq(freq)
        self.duty_u16(duty_u16)

    def _rec(self):
        n = _pwm_n[0]
        if n < _PWM_MAX:
            log = _pwm
            log[0][n] = vclock.now_ms()
            log[1][n] = self.gpio
            log[2][n] = self.f
            log[3][n] = self.d
            _pwm_n[0] = n + 1

    def freq(self, v=None):
        if v is None:
            return self.f
        if v < 8 or v > 62500000:
            raise ValueError("freq out of range")
        if v != self.f:
            self.f = v
            self._rec()

    def duty_u16(self, v=None):
        if v is None:
            return self.d
        if v < 0 or v > 65535:
            raise ValueError("duty out of range")
        if v != self.d:
            self.d = v
            self._rec()

    def deinit(self):
        self.duty_u16(0)


class Timer:
    ONE_SHOT = const(0)
    PERIODIC = const(1)

    def __init__(self, id=-1, mode=1, period=-1, freq=-1, callback=None):
        self.callback = None
        if callback is not None:
            self.init(mode=mode, period=period, freq=freq, callback=callback)

    def init(self, mode=1, period=-1, freq=-1, callback=None):
        if period < 0 and freq > 0:
            period = 1000 // freq
        self.mode = mode
        self.period = period
        self.callback = callback
        self.due_us = vclock.now_us() + period * 1000
        _world[0].timers.append(self)

    def deinit(self):
        self.callback = None


class WDT:
    def __init__(self, id=0, timeout=5000):
        # the RP2040 takes at most about 8.3 s
        if timeout > 8388:
            raise ValueError("timeout too long")
        self.timeout_us = timeout * 1000
        _world[0].watchdog = self
        self.fed_us = vclock.now_us()

    def feed(self):
        self.fed_us = _now_us[0]        # (vclock.now_us(), one call fewer: fed every loop turn)
