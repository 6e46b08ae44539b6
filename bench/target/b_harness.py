"""Target side of the benches (bench/*.py): the real firmware on the simulated table, played by
boardsim/target/runner.py's Runner (the same steps, heap lock, flash, watchdog and timeline ops
as every game test), with the real clock kept for timing.

Runs under the MicroPython unix port (MICROPYPATH=bench/target:firmware:boardsim/target).
Importing this module installs the virtual clock as the firmware's `time` (the runner does);
real_us() and since() read the real one.
"""
import sys
import time as _real      # before the runner puts the virtual clock in its place

if sys.implementation.name != "micropython":
    raise SystemExit("the benches run under the MicroPython unix port")

import runner as R         # noqa: E402  (boardsim/target/runner.py; runs nothing on import)
import gc                  # noqa: E402
import json                # noqa: E402
import micropython         # noqa: E402
import vclock              # noqa: E402


def real_us():
    return _real.ticks_us()


def since(t0):
    return _real.ticks_diff(_real.ticks_us(), t0)


def emit(obj):
    """The result line the host side reads (bench/_target.py)."""
    sys.stdout.write("RESULT " + json.dumps(obj) + "\n")


def job():
    """The host's job: one JSON object on the first line of stdin."""
    return json.loads(sys.stdin.readline())


def heap():
    gc.collect()
    return gc.mem_alloc()


class Sink:
    """The firmware's event stream: counts what is written, allocates nothing."""

    def __init__(self):
        self.bytes = 0

    def write(self, buf, off=0, n=-1):
        if n < 0:
            n = len(buf) - off
        self.bytes += n
        return n


class LoopAllocated(Exception):
    pass


def _noop():
    pass


def runner(config_path=None):
    """A Runner on a fresh simulated table, its event lines going nowhere. The flash is
    mounted already, as the Pico's filesystem is before main.py runs (so that what mounting
    takes is not charged to the firmware): the runner's first boot does not mount it again."""
    r = R.Runner(display=False, config=config_path)
    r.out = Sink()
    r.flash.power_on()
    r.flash.power_on = _noop
    return r


def boot(r, o=None):
    r.op(o if o is not None else {"op": "boot"})
    try:
        del r.flash.power_on        # later boots (power cuts) mount it as the runner does
    except (AttributeError, KeyError):
        pass
    return r.sb


def play(r, timeline):
    """Play a compiled timeline (boardsim/compile.py) as the runner's main() does. A step that
    allocates with the heap locked ends the runner (exit status 3), as in every game test."""
    for o in timeline:
        if r.sb is None and o.get("op") not in ("boot", "flash"):
            boot(r)
        if o.get("op") == "boot":
            if r.sb is None:
                boot(r, o)
            continue
        r.op(o)
    if r.sb is None:
        boot(r)


def displays_of(sb):
    """[(name, ui, driver)] for each display the booted firmware drives: app.py's Displays
    (uis / drivers) when it has one, else its single ui.UI on the OLED."""
    u = sb.ui
    if hasattr(u, "uis"):
        return [(type(u.drivers[i]).__name__, u.uis[i], u.drivers[i]) for i in range(len(u.uis))]
    return [(type(sb.oled).__name__, u, sb.oled)]
