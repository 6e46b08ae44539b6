"""Plays a timeline (docs/architecture.md) through the real firmware on the simulated table.

    micropython runner.py TIMELINE.jsonl [--display]      (MICROPYPATH=firmware:boardsim/target)
    python      runner.py TIMELINE.jsonl [--display]      (PYTHONPATH=firmware:boardsim/target)

--config FILE: the firmware's config.json (firmware/storage/config.py) is FILE instead of config.json
in the current directory; the simulated seven-segment chain has as many modules as it asks.
--lean (tools/hil on a Pico, docs/hil.md): only the pad model of the front end FILE chooses, and
the firmware's flash a directory ("flash" here) on the device's own flash instead of a littlefs
on a RAM block device: the Pico's heap holds neither beside the firmware.

The firmware's flash (flash.py) is its working directory: a littlefs on a RAM block device
under MicroPython, the run's temporary directory (boardsim/runtime.py) under CPython. It keeps
its files across {"op": "power"} cuts within the run; {"op": "flash", ...} tears or fails its
writes or writes and damages files (flash_op). {"op": "stall", "ms": N} hangs the firmware for
N ms inside a loop turn, so that the watchdog bites. Work the firmware asks to have done outside
its locked loop turn (need_service: opening a journal file) runs right after the turn.

Stdout carries exactly the firmware's event lines. The firmware's step() runs with the heap
locked under MicroPython: an allocation in the loop stops the run with exit status 3.
"""
import sys

# The interpreter puts this script's own folder first on the module path; MICROPYPATH lists it
# again, after the same folders compiled to .mpy (boardsim/mpycache.py), which the first entry
# would hide: every target module compiled from source at every start (some 60 ms of CPU)
if len(sys.path) > 1 and sys.path[0] in sys.path[1:]:
    sys.path.pop(0)

import vclock  # noqa: E402

sys.modules["time"] = vclock      # the firmware's `time` is the virtual clock
import json                        # noqa: E402
import machine                     # noqa: E402
import micropython                 # noqa: E402
import flash                       # noqa: E402
from world import World            # noqa: E402

MICROPYTHON = sys.implementation.name == "micropython"
# the world's steps with the heap locked where they allocate nothing (World._advance_quiet): under
# the unix port's MicroPython (on a Pico, tools/hil's runner, the virtual clock's microseconds
# pass 2**30 within a game and would allocate)
LOCK_WORLD = MICROPYTHON and sys.platform != "rp2"
STEP_US = 1000        # what one firmware step costs on the Pico (bench/loop_cost.py measures it)
SETTLE_MS = 1000      # after a hand or a shot, the board rests this long before the next step
PRESS_MS = 120
BETWEEN_PRESS_MS = 150
DISPLAY_EVERY_US = 250000
# BOARDSIM_FIT_MS: what a frame in which the pads changed and chips are seen costs on top of its
# steps, charged at its end (the locator's fit). 0: nothing, as before. On the RP2040 such frames
# take 130 - 170 ms (the fit of moving chips; docs/rp2040.md) where the unix runner's take 16:
# the tests play games with the chip's frame lengths on the unix port (tests/test_frame_length.py)
FIT_US = 0
# BOARDSIM_HAND_MS: what a frame in which the pads changed and the locator saw a hand costs
# instead (presence pads: it tries every set of up to four chips on the hand's patch before it
# calls it a hand; on the RP2040 such frames take 140 - 310 ms, a lift's second frame 290 - 310,
# where the unix runner's take 16). 0: as FIT_US
HAND_US = 0


class CPythonOut:
    """The firmware writes events with stream.write(buf, off, n), as MicroPython streams allow."""

    def __init__(self):
        self.raw = sys.stdout.buffer

    def write(self, buf, off=0, n=-1):
        if n < 0:
            n = len(buf) - off
        self.raw.write(bytes(buf[off:off + n]))
        self.raw.flush()
        return n


class Runner:
    def __init__(self, display=False, config=None, lean=False):
        self.config = config
        self.world = World(_seg_modules(config), _front_end(config) if lean else None)
        self.world.lock_steps = LOCK_WORLD
        machine.attach(self.world)
        self.display = display
        self.sb = None
        self.out = sys.stdout if MICROPYTHON else CPythonOut()
        self.fw_modules = None
        self.last_frame = None
        self.next_display_us = 0
        self.steps = 0
        self.heap_after_boot = None
        self.snapshots = []
        self.lines_before = 0     # event lines written by firmware runs before the last boot
        # the firmware's working directory (flash.py)
        self.flash = flash.Flash(_here() + "/flash" if lean else None, raw=True)
        self.fit_frame = -1         # the frame and pad changes FIT_US was last charged for
        self.busy_until = 0         # the firmware's fit runs until then (virtual us)
        self.fit_seen = -1

    # -- power ------------------------------------------------------------------------------
    def boot(self, cause=machine.PWRON_RESET):
        machine._reset_cause[0] = cause
        self.flash.power_on()
        self.world.power_on()
        before = set(sys.modules)
        from scoreboard import app
        if self.config is None:
            self.sb = app.Scoreboard(self.out)
        else:
            self.sb = app.Scoreboard(self.out, self.config)
        self.sb.boot()
        self.fw_modules = set(sys.modules) - before
        self.heap_after_boot = _heap_in_use()

    def event_lines(self):
        return self.lines_before + (self.sb.ev.lines if self.sb is not None else 0)

    def power_cut(self):
        if self.sb is not None:
            self.lines_before += self.sb.ev.lines
        self.sb = None
        machine.detach_all()
        self.world.timers = []
        self.world.watchdog = None
        for name in self.fw_modules or ():
            del sys.modules[name]
        self.fw_modules = None
        self.flash.power_cut()

    # -- time ---------------------------------------------------------------------------------
    def run_until(self, t_end):
        w = self.world
        now_us = vclock._now_us          # the clock itself: one step is a few Python calls fewer
        advance_to = w.advance_to
        # _step() written out below unless a subclass has its own: MicroPython takes the frame
        # of a call to _step() (its three exception handlers) from the heap, with the heap
        # unlocked: a search of the heap for free blocks, and garbage, at every step
        own = type(self)._step is not Runner._step
        lock = micropython.heap_lock
        unlock = micropython.heap_unlock
        # the module's settings and the runner's own, read once a call, not at every step (a
        # global or an attribute is a dictionary lookup at each use under MicroPython: the loop
        # around a step at rest cost 16 k instructions, 8 k so): main() sets them before the
        # timeline plays
        step_us = STEP_US
        trace = _trace
        fit = FIT_US or HAND_US
        display = self.display
        # the world at rest (World.advance_to returns False: no move, fade, pulse, hand, chatter,
        # timer or model update under way) stays so until an op changes it, between calls of
        # run_until, or the firmware starts a timer (machine.Timer: world.timers): until then
        # advance_to would find nothing to do at each step (some 4,000 instructions a step at
        # rest). A subclass's own _step may do anything: the world is asked at every step then.
        active = True
        steps = self.steps
        try:
            while now_us[0] < t_end:
                if active or own or w.timers:
                    active = advance_to(now_us[0])
                sb = self.sb
                if sb is None or (fit and now_us[0] < self.busy_until):
                    now_us[0] += step_us      # (busy: the world goes on, beams and all, in steps)
                    continue
                if own:
                    idle_ms = self._step()
                else:
                    lock()
                    try:
                        idle_ms = sb.step()
                    except BaseException as e:   # (flash.PowerLost is one)
                        unlock()
                        idle_ms = self._step_failed(e)
                    else:
                        unlock()
                        if trace is not None:
                            trace.frame(sb)
                        if sb.need_service:
                            idle_ms = self._service(idle_ms)
                steps += 1
                now_us[0] += step_us + idle_ms * 1000
                if fit and self.sb is not None:
                    self.busy_until = now_us[0] + self._fit_cost()
                wd = w.watchdog
                if wd is not None and now_us[0] - wd.fed_us > wd.timeout_us:
                    self._watchdog()
                if display and now_us[0] >= self.next_display_us:
                    self.next_display_us = now_us[0] + DISPLAY_EVERY_US
                    self.show_display()
        finally:
            self.steps = steps

    def _fit_cost(self):
        """FIT_US once a frame ended in which a pad changed and chips are seen (HAND_US, when
        set, if a hand was seen), else 0."""
        sc = self.sb.scan
        if sc.frame == self.fit_frame:
            return 0
        self.fit_frame = sc.frame
        v = sc.version if self.sb.shift else sc.jumps
        if v == self.fit_seen:
            return 0
        self.fit_seen = v
        if HAND_US and getattr(self.sb.loc, "hand", 0):
            return HAND_US
        return FIT_US if self.sb.loc.n else 0

    def _step(self):
        """One loop turn of the firmware, the heap locked (run_until() has it written out)."""
        micropython.heap_lock()
        try:
            idle = self.sb.step()
        except BaseException as e:   # (flash.PowerLost is one)
            micropython.heap_unlock()
            return self._step_failed(e)
        micropython.heap_unlock()
        if _trace is not None:
            _trace.frame(self.sb)     # the locator's and tracker's results (simtrace.py)
        if getattr(self.sb, "need_service", 0):
            return self._service(idle)
        return idle

    def _step_failed(self, e):
        """The loop turn raised e (the heap unlocked again): the idle ms to give."""
        if isinstance(e, machine.ResetRequested):
            self.power_cut()
            self.boot(machine.PWRON_RESET)
            return 0
        if isinstance(e, flash.PowerLost):
            self.power_cut()          # a torn flash write: the power is gone (until "power on")
            return 0
        if isinstance(e, MemoryError):
            if hasattr(sys, "print_exception"):
                # where (the innermost frames: the emergency exception buffer's, on a Pico)
                sys.print_exception(e, sys.stderr)
            fail(3, "the firmware allocated memory inside its loop (heap locked) at t=%d ms" % vclock.now_ms())
        raise e

    def _service(self, idle):
        # work the firmware keeps out of its locked loop turn (opening a journal file)
        try:
            self.sb.service()
        except flash.PowerLost:
            self.power_cut()
            return 0
        return idle

    def _watchdog(self):
        wd = self.world.watchdog
        if self.sb is not None and wd is not None and vclock.now_us() - wd.fed_us > wd.timeout_us:
            self.power_cut()
            self.boot(machine.WDT_RESET)

    def run_ms(self, ms):
        self.run_until(vclock.now_us() + ms * 1000)

    def settle(self):
        self.run_until(max(self.world.busy_until(), vclock.now_us()) + SETTLE_MS * 1000)

    def show_display(self):
        w = self.world
        seg = w.seg.rows() if w.seg.frames else None     # only once the firmware drives it
        frame = (bytes(w.oled.gddram), seg)
        if frame == self.last_frame:
            return
        self.last_frame = frame
        if w.oled.display_on:
            sys.stderr.write("-- OLED at %d ms --\n%s\n" % (vclock.now_ms(), w.oled.ascii_art()))
        if seg is not None:
            sys.stderr.write("-- 7-segment at %d ms --\n%s\n" % (vclock.now_ms(), w.seg.ascii_art()))

    # -- the timeline ---------------------------------------------------------------------
    def op(self, o):
        w = self.world
        kind = o.get("op")
        now = vclock.now_us()
        if kind == "boot":
            vclock.set_origin(o.get("ticks_origin_ms", 0))
            self.boot()
        elif kind == "press":
            w.press(o["button"], True)
            self.run_ms(o.get("ms", PRESS_MS))
            w.press(o["button"], False)
            self.run_ms(o.get("between", BETWEEN_PRESS_MS))   # (a chip test's menu: shorter)
        elif kind == "hold":
            w.press(o["button"], True)
            self.run_ms(o["ms"])
            w.press(o["button"], False)
            self.run_ms(BETWEEN_PRESS_MS)
        elif kind == "wait":
            self.run_ms(o["ms"])
        elif kind == "put":
            w.put(o["chip"], int(round(o["x"] * 10)), int(round(o["y"] * 10)), now)
            if o.get("settle", True):
                self.settle()
            else:       # (a test's set-up: only until the chip lies still and the hand that
                # put it is gone, without the SETTLE_MS rest after)
                self.run_until(max([w.busy_until(), vclock.now_us()] + [h[2] for h in w.hands]))
        elif kind == "lift":
            w.lift(o["chip"], now)
            if o.get("settle", True):
                self.settle()       # (False: a test's second hand, lifting with this one)
        elif kind == "move":
            for m in o["moves"]:
                w.move(m["chip"], m["pts"], m.get("end", "rest"), m.get("hits", []), now)
            self.settle()
        elif kind == "snapshot":
            # a test's checkpoint: the display and how many event lines were written by now
            o_ = self.world.oled
            self.snapshots.append({"label": o.get("label"), "display": o_.text_rows(),
                                   "frame": _hex(o_.frame()), "seg": self.world.seg.rows(),
                                   "inverted": [o_.inverted_cells(i) for i in range(8)],
                                   "events": self.event_lines(), "ms": vclock.now_ms()})
        elif kind == "power":
            if o["state"] == "cut":
                self.power_cut()
            else:
                self.boot()
                self.settle()         # the Pico takes a moment to come up; the pads see the chips
        elif kind == "serial":
            # a line from the host on the serial console (main.py hands it to command())
            if self.sb is not None:
                try:
                    self.sb.command(o["line"])
                except flash.PowerLost:
                    self.power_cut()        # a torn flash write: the power is gone
        elif kind == "fault":
            # a part of the table breaks or mends (world.fault; issue 4); a hovering hand stays
            # its ms while the steps after it run (wait_ms to watch it)
            w.fault(o, now)
        elif kind == "stall":
            # the firmware hangs inside one loop turn for this long (a test of the watchdog)
            if self.sb is not None:
                vclock.advance_us(o["ms"] * 1000)
                self._watchdog()
                self.settle()
        elif kind == "flash":
            self.flash_op(o)
        else:
            fail(2, "timeline: unknown op %r" % (kind,))
        if self.display:
            self.show_display()

    def flash_op(self, o):
        """The flash (flash.py): tear or fail after N more block writes, or a hand writing or
        damaging a file (as if the flash were read and written by a PC; best with the power off)."""
        st = self.flash.storage
        if "tear_after" in o:
            if st is not None:
                st.tear_at = st.writes + o["tear_after"]
        elif "fail_after" in o:
            if st is not None:
                st.fail_at = -1 if o["fail_after"] < 0 else st.writes + o["fail_after"]
        elif "write" in o:
            self.flash.write_file(o["write"], _unhex(o["hex"]))
        elif "damage" in o:
            self.flash.damage(o["damage"], o.get("offset", -1), o.get("xor", 0xFF))
        else:
            fail(2, "timeline: bad flash op %r" % (o,))


def _unhex(h):
    import binascii
    return binascii.unhexlify(h)


def _heap_in_use():
    try:
        import gc
        gc.collect()
        return gc.mem_alloc()
    except (ImportError, AttributeError):
        return None


def _hex(b):
    import binascii
    return binascii.hexlify(bytes(b)).decode()


def _front_end(path):
    # the front end config.json chooses ("hall" when it says nothing valid, as config.py)
    if path is not None:
        try:
            with open(path) as f:
                fe = json.loads(f.read()).get("front_end", "hall")
            if fe in ("hall", "shift"):
                return fe
        except (OSError, ValueError, AttributeError):
            pass
    return "hall"


def _here():
    import os
    return os.getcwd()


def _seg_modules(path):
    # the chain length config.json asks for (3, the default, when it says nothing valid)
    if path is not None:
        try:
            with open(path) as f:
                n = json.loads(f.read()).get("sevenseg_modules", 3)
            if isinstance(n, int) and 1 <= n <= 8:
                return n
        except (OSError, ValueError, AttributeError):
            pass
    return 3


def final_state(r, path):
    """What a test asserts on besides the events: the display's text, where the chips are."""
    o = r.world.oled
    state = {
        "display": o.text_rows(),
        "frame": _hex(o.frame()),
        "seg": r.world.seg.rows(),
        "inverted": [o.inverted_cells(i) for i in range(8)],
        "chips": {n: list(r.world.chip_state(n)) for n in r.world.chips},
        "ms": vclock.now_ms(),
        "steps": r.steps,
        "heap_after_boot": r.heap_after_boot,
        "snapshots": r.snapshots,
        "runtime": sys.implementation.name,
        "pwm": machine.pwm_log(),               # what the buzzer played (machine.PWM)
    }
    cal = r.flash.read_file("calib.bin")         # the pads' calibration (calib.py), if saved
    state["calib_bin"] = _hex(cal) if cal else None
    with open(path, "w") as f:
        f.write(json.dumps(state))


_trace = None      # simtrace, when BOARDSIM_TRACE asks for it


def _getenv(name):
    import os
    try:
        return os.getenv(name)
    except AttributeError:
        return None


def fail(code, msg):
    sys.stderr.write("runner: " + msg + "\n")
    sys.exit(code)


def play_file(r, path):
    """Play a timeline file on runner r: boot first unless the file does (after any flash
    ops, which prepare the flash the firmware boots from), then 200 ms for the last step."""
    with open(path) as f:
        lines = f.read().split("\n")
    booted = False
    for i, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            fail(2, "timeline line %d: bad JSON" % (i + 1))
        if not booted and o.get("op") not in ("boot", "flash"):
            r.op({"op": "boot"})
        booted = booted or o.get("op") != "flash"
        r.op(o)
    if not booted:
        r.op({"op": "boot"})
    r.run_ms(200)


def main(argv):
    if len(argv) < 2:
        fail(2, "usage: runner.py TIMELINE [--display]")
    r = Runner(display="--display" in argv,
               config=argv[argv.index("--config") + 1] if "--config" in argv else None,
               lean="--lean" in argv)
    global FIT_US, HAND_US
    FIT_US = int(_getenv("BOARDSIM_FIT_MS") or 0) * 1000
    HAND_US = int(_getenv("BOARDSIM_HAND_MS") or 0) * 1000
    trace_dir = _getenv("BOARDSIM_TRACE")
    if trace_dir:
        import simtrace     # what the firmware sees, digested (simtrace.py): after the world is
        simtrace.install()  # attached (it sets ADC.read_u16), before the firmware boots
        global _trace
        _trace = simtrace
    play_file(r, argv[1])
    if trace_dir:
        simtrace.write(trace_dir, argv[1], r.config, r.steps, vclock.now_ms())
    if "--stats" in argv:
        sys.stderr.write("runner: %d steps, %d ms simulated\n" % (r.steps, vclock.now_ms()))
    if "--final" in argv:
        final_state(r, argv[argv.index("--final") + 1])


if __name__ == "__main__":     # live.py imports the Runner for the play page and render
    main(sys.argv)
