# The `machine` module of a hardware-in-the-loop run (tools/hil.py), installed as machine.py in
# the run's directory on the Pico, ahead of the built-in module.
#
# The table is simulated (boardsim/target, copied beside it; its machine stand-in as
# simmachine.py): pads, beams, buttons, the clock and the watchdog are the simulator's, so the
# run is the same as on the desktop. The displays are real too: every I2C and SPI write goes to
# the real bus (the OLED, the MAX7219 chain, pins from wiring/pinmap.json) and to the
# simulator's models, and the real chip select follows the simulated one. A real display that
# is missing or failing is counted (REAL_ERRORS) and left out, never raised into the firmware:
# under the runner's heap lock a real OSError would turn into a MemoryError.
#
# Where the built-in module has no buses (the unix port standing in for the Pico in the tests),
# only the models get the bytes.
import sys

import simmachine as _sim
from simmachine import *            # noqa: F401,F403  Pin, ADC, Timer, WDT, reset, ...

# the stand-in's state, shared (the same objects, never rebound)
_level = _sim._level
_pins = _sim._pins
_world = _sim._world
_watch = _sim._watch
_reset_cause = _sim._reset_cause

_path = sys.path
sys.path = ()
try:
    import machine as _hw           # the built-in module
except ImportError:
    _hw = None
finally:
    sys.path = _path
    del _path

REAL_ERRORS = [0]
REAL = {"i2c": None, "spi": None, "cs": None}


def _count():
    if REAL_ERRORS[0] < 1000000:
        REAL_ERRORS[0] += 1


def _real_i2c(id, scl, sda, freq):
    if _hw is None or not hasattr(_hw, "I2C"):
        return None
    try:
        from tables import pins
        bus = _hw.I2C(id, scl=_hw.Pin(scl.id if scl is not None else pins.OLED_SCL),
                      sda=_hw.Pin(sda.id if sda is not None else pins.OLED_SDA), freq=freq)
        if pins.OLED_ADDR not in bus.scan():
            sys.stderr.write("hil: no OLED at 0x%02x on the real I2C bus\n" % pins.OLED_ADDR)
            return None
        return bus
    except Exception as e:          # noqa: BLE001  no bus: simulated only
        sys.stderr.write("hil: real I2C unavailable: %r\n" % (e,))
        return None


class I2C(_sim.I2C):
    def __init__(self, id=0, scl=None, sda=None, freq=400000, timeout=50000):
        super().__init__(id, scl, sda, freq, timeout)
        self.real = _real_i2c(id, scl, sda, freq)
        REAL["i2c"] = self.real

    def writeto(self, addr, buf, stop=True):
        r = self.real
        if r is not None:
            try:
                r.writeto(addr, buf, stop)
            except OSError:
                _count()
        return _sim.I2C.writeto(self, addr, buf, stop)


class SoftI2C(I2C):
    pass


def _cs_follow(pin, level):
    cs = REAL["cs"]
    if cs is not None:
        cs.value(level)


class SPI(_sim.SPI):
    def __init__(self, id=0, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        super().__init__(id, baudrate, polarity, phase, bits, firstbit, sck, mosi, miso)
        self.real = None
        if _hw is not None and hasattr(_hw, "SPI"):
            try:
                from tables import pins
                self.real = _hw.SPI(id, baudrate=baudrate, polarity=polarity, phase=phase,
                                    sck=_hw.Pin(pins.SPI_SCK), mosi=_hw.Pin(pins.SPI_MOSI),
                                    miso=_hw.Pin(pins.SPI_MISO))
                REAL["cs"] = _hw.Pin(pins.SPI_CS, _hw.Pin.OUT, value=1)
                watch(pins.SPI_CS, _cs_follow)      # noqa: F405  the stand-in's watch()
            except Exception as e:  # noqa: BLE001
                sys.stderr.write("hil: real SPI unavailable: %r\n" % (e,))
                self.real = None
        REAL["spi"] = self.real

    def write(self, buf):
        r = self.real
        if r is not None:
            r.write(buf)
        _sim.SPI.write(self, buf)
