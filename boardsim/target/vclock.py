"""The virtual clock: installed as the firmware's `time` module by the runner, so that a
whole game runs in a second or two and the same scenario gives the same ticks on every run.
Like MPF's time-travel loop, time only moves when the runner says so (or the firmware sleeps).
Ticks wrap like the RP2040's (ticks_ms at 2**30), so the firmware's ticks_diff is exercised.
"""
_PERIOD = 1 << 30
_MASK = _PERIOD - 1
_HALF = _PERIOD >> 1

_now_us = [0]   # virtual microseconds since the simulated power-on (a small int: < 2**62)
_base_ms = [0]  # where ticks_ms started (tests start near the wrap to exercise it)


def advance_us(us):
    _now_us[0] += us


def now_us():
    return _now_us[0]


def now_ms():
    return _now_us[0] // 1000


def set_origin(ms):
    _base_ms[0] = ms & _MASK


def ticks_ms():
    return (_base_ms[0] + _now_us[0] // 1000) & _MASK


def ticks_us():
    return (_base_ms[0] * 1000 + _now_us[0]) & _MASK


def ticks_cpu():
    return ticks_us()


def ticks_add(t, delta):
    return (t + delta) & _MASK


def ticks_diff(a, b):
    return ((a - b + _HALF) & _MASK) - _HALF


def sleep_ms(ms):
    if ms > 0:
        _now_us[0] += ms * 1000


def sleep_us(us):
    if us > 0:
        _now_us[0] += us


def sleep(s):
    sleep_ms(int(s * 1000))


def time():
    return 1764000000 + _now_us[0] // 1000000
