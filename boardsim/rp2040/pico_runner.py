"""Plays a timeline through the real MicroPython image on an emulated Pico (pico.mjs, rp2040js),
the simulated table around it (boardsim/target: world.py, the pad models, the OLED and MAX7219
decoders) running here, on the host, under CPython.

    python pico_runner.py TIMELINE.jsonl [--display] [--config FILE] [--fs FILE] [--front-end hall|shift]
                          [--final PATH] [--stats]
        (PYTHONPATH=boardsim/target:ROOT; the image and boot ROM from boardsim/rp2040/images.py)

It is boardsim/target/runner.py's Runner with the firmware's step replaced by the chip running
for a slice of time: the world moves to the slice's start, its inputs (buttons, beams, the hit
sensor) and pad tables go to the chip, the chip runs to the slice's end, and what it wrote (the
OLED's I2C transactions, the MAX7219s' SPI bytes and chip select edges, the USB serial console)
comes back and feeds the same models. Slices are 1 ms while anything on the table moves, fades
or pulses, and run to the next timeline op while the table rests (nothing the chip could see
changes). Time is the chip's own emulated time: a firmware step costs what it costs on the chip
(not the unix runner's fixed STEP_US), and booting takes the chip's boot time: after a power-on
the runner waits for the firmware's "boot" event before it plays the next op.

Stdout carries the firmware's event lines as the chip wrote them; anything else the console
shows (a traceback, the REPL) goes to stderr. A traceback other than a KeyboardInterrupt ends
the run with status 1. Flash ops: "write" and "damage" edit the chip's littlefs (as a PC with the
flash would); "tear_after": N counts the boot ROM's flash program and erase calls (pico.mjs): N
more go through, the next is cut part-way (half its bytes, or "keep" of them: all but -keep when
negative) and the power is gone there (N < 0: no tear); "fail_after" is not modelled on the chip
(status 2: the ROM's flash functions cannot report an error). A checkpoint also records how many
flash operations the chip made and how many tears cut its power ("flash_ops", "torn").
"""
import json                                      # noqa: E402  (before runner: it replaces time)
import resource
import os
import subprocess                                # noqa: F401  (binds the real time module)
import sys
import tempfile                                  # noqa: F401
import time as _time                             # the real clock (runner installs vclock as time)

# (littlefs is imported by images.edit_fs() only when a flash op needs it, with the real time
# module in place: a run whose flash was prepared before it starts (--fs) needs none, issue 15)

from boardsim.rp2040 import chip as chip_mod     # noqa: E402
from boardsim.rp2040 import images               # noqa: E402

import runner as R                               # noqa: E402  boardsim/target/runner.py
import machine                                   # noqa: E402  (the stand-in: the host's pin levels)
import vclock                                    # noqa: E402
import world_table as T                          # noqa: E402

BUSY_SLICE_US = 1000
TRACE = 0
# (ZENN_PICO_STATS: the instructions and chip ms at each boot event and each "ready", recorded)
MARKS = [] if os.environ.get("ZENN_PICO_STATS") else None


def _wall():
    return _time.monotonic()
BOOT_LIMIT_MS = 30000        # a firmware that has not said "boot" by then is broken


class RealTime:
    """The real time module in sys.modules while littlefs works (and is imported: its import
    reads time.localtime, where runner.py has put vclock as `time`)."""

    def __enter__(self):
        self.vc = sys.modules["time"]
        sys.modules["time"] = _time

    def __exit__(self, *exc):
        sys.modules["time"] = self.vc


class ChipFlash:
    """The runner's flash, on the chip: files read and written through its littlefs."""

    def __init__(self, pico):
        self.pico = pico
        self.storage = None

    def power_on(self):
        pass

    def power_cut(self):
        pass

    def read_file(self, name):
        with RealTime():
            return images.read_fs(self.pico.read_flash(), name)

    def _edit(self, fn):
        with RealTime():
            self._edit_fs(fn)

    def _edit_fs(self, fn):
        self.pico.write_flash(images.edit_fs(self.pico.read_flash(), fn))

    def write_file(self, name, data):
        def w(fs):
            with fs.open(name, "wb") as f:
                f.write(data)
        self._edit(w)

    def damage(self, name, offset=-1, xor=0xFF):
        def d(fs):
            try:
                with fs.open(name, "rb") as f:
                    data = bytearray(f.read())
            except Exception:
                return
            if not data:
                return
            k = offset if 0 <= offset < len(data) else len(data) - 1
            data[k] ^= xor
            with fs.open(name, "wb") as f:
                f.write(bytes(data))
        self._edit(d)


class ChipRunner(R.Runner):
    def __init__(self, pico, display=False, config=None, front_end=None):
        super().__init__(display, config)
        # front_end ("hall" or "shift", --front-end: what the chip's config.json says, known to
        # the caller): only that front end's pad model is kept up to date here and its changes
        # sent; the other's tables stay as they were at the start, and the run fails at its end
        # if the chip read them (FrontEndCheck). None: both, whichever the firmware reads.
        # (A presence run's hall model was about a third of the runner's work a moving slice,
        # issue 15.)
        self.keep_hall = front_end != "shift"
        self.keep_pres = front_end != "hall"
        self.pico = pico
        self.flash = ChipFlash(pico)
        self.lines = 0              # event lines the chip wrote
        self.seen_ev = {}           # how many of each "ev" it wrote
        self.booted = False         # the firmware's "boot" event seen since the last power-on
        self.text = b""             # the console's partial line
        self.error = None           # a traceback's last line
        self.in_trace = False
        self.serial_out = b""       # bytes for the chip's console, sent with the next slice
        self.sent_in = {}
        w = self.world
        self.input_pins = list(w.inputs_high)
        self.sent_hall = None
        self.sent_pres = None
        self.resets = []
        self.flash_ops = 0          # the chip's flash program / erase calls so far
        self.torn = []              # (ms, operation number) of each tear that cut the power
        self.wdt_on = False         # the chip's watchdog is running (the firmware's boot() done)
        pm = T.PINMAP
        wiring = {"spiBus": pm["spi"]["bus"], "csPin": pm["spi"]["cs"], "shiftBus": pm["shift"]["bus"],
                  "loadPin": pm["shift"]["load"], "oledBus": pm["oled_i2c"]["bus"],
                  "oledAddr": pm["oled_i2c"]["addr"], "i2cHz": pm["oled_i2c"].get("freq", 400000)}
        h = w.hall
        hall = {"pad_at": list(T.PAD_AT), "n_adc": T.N_ADC, "banks": T.BANKS, "channels": T.CHANNELS,
                "adc_zero": T.ADC_ZERO, "sel": list(w.sel_ch), "bank": list(w.sel_bank),
                "noise_lsb": h.noise_lsb, "seed": h.state, "clean": list(h.clean), "base": list(h.base),
                "fault": list(h.fault)}
        p = w.pres
        pres = {"rows": p.rows, "cols": p.cols, "nsr": p.nsr, "row_sel": list(p.row_sel), "seed": p.rng,
                "state": bytes(p.state).hex(), "ragged": bytes(p.ragged).hex(), "fault": bytes(p.fault).hex(),
                "sr_fault": bytes(p.sr_fault).hex(), "nfault": p.nfault, "nlev": p.nlev, "rps": p.rps,
                "strobes": p.strobes, "coin": bytes(p.coin).hex()}
        self.pico.table(wiring, hall, pres)
        self._remember_tables()

    # -- what the chip said -------------------------------------------------------------------
    def event_lines(self):
        return self.lines

    def _console(self, data):
        self.text += data
        while b"\n" in self.text:
            line, self.text = self.text.split(b"\n", 1)
            s = line.rstrip(b"\r").decode("utf-8", "replace")
            if s.lstrip().startswith("{"):
                sys.stdout.write(s.strip() + "\n")
                sys.stdout.flush()
                self.lines += 1
                try:
                    ev = json.loads(s).get("ev")
                except (ValueError, AttributeError):
                    ev = None
                self.seen_ev[ev] = self.seen_ev.get(ev, 0) + 1
                if ev == "boot":
                    self.booted = True
                continue
            if s.strip():
                sys.stderr.write("pico: " + s + "\n")
            if s.startswith("Traceback"):
                self.in_trace = True
            elif self.in_trace and not s.startswith(" "):
                self.in_trace = False
                if not s.startswith("KeyboardInterrupt"):
                    self.error = s.strip()

    def _apply(self, a):
        w = self.world
        for o in a["out"]:
            kind = o[0]
            if kind == "i2c":
                w.i2c_write(o[1], bytes.fromhex(o[2]))
            elif kind == "spi":
                w.spi_write(o[1], bytes.fromhex(o[2]))
            elif kind == "pin":
                machine._out(o[1], o[2])
        if a["serial"]:
            self._console(a["serial"].encode("latin-1"))
        for t, why in a["resets"]:
            self.resets.append((t // 1000, why))
            self.booted = False
            self.text = b""
            sys.stderr.write(f"pico: {why} reset at {t // 1000} ms\n")
        self.flash_ops = a.get("flash_ops", self.flash_ops)
        self.wdt_on = a.get("wdt", False)
        for t, k in a.get("lost", ()):
            # a torn flash write: the power went inside it (as flash.PowerLost on the desktop)
            self.torn.append((t // 1000, k))
            sys.stderr.write(f"pico: flash operation {k} torn, the power is gone at {t // 1000} ms\n")
            self._lost_power()
        vclock._now_us[0] = a["t"]

    # -- what the table shows the chip ----------------------------------------------------------
    def _remember_tables(self):
        w = self.world
        # copies: hall_model's arrays may be memoryviews into one buffer, whose [:] is the same
        # memory (a snapshot that always equals the live table, so no change was ever sent)
        self.sent_hall = {k: list(getattr(w.hall, k)) for k in ("clean", "base", "fault")}
        p = w.pres
        self.sent_pres = {"state": bytes(p.state), "ragged": bytes(p.ragged), "fault": bytes(p.fault),
                          "sr_fault": bytes(p.sr_fault), "nfault": p.nfault}

    def _table_changes(self):
        w = self.world
        hall = {}
        for k, old in (self.sent_hall.items() if self.keep_hall else ()):
            new = list(getattr(w.hall, k))
            if new != old:
                idx = [i for i in range(len(new)) if new[i] != old[i]]
                hall[k] = [idx, [new[i] for i in idx]]
                self.sent_hall[k] = new
        p = w.pres
        pres = {}
        for k in (("state", "ragged", "fault", "sr_fault") if self.keep_pres else ()):
            v = bytes(getattr(p, k))
            if v != self.sent_pres[k]:
                pres[k] = v.hex()
                self.sent_pres[k] = v
        if self.keep_pres and p.nfault != self.sent_pres["nfault"]:
            pres["nfault"] = p.nfault
            self.sent_pres["nfault"] = p.nfault
        inputs = []
        for pin in self.input_pins:
            v = machine._level[pin]
            if self.sent_in.get(pin) != v:
                self.sent_in[pin] = v
                inputs.append([pin, v])
        return inputs, hall, pres

    def _busy(self):
        w = self.world
        return bool(w.moves or w.pulses or w.hands or w.chatter[0] or w.chatter[1] or w.fading
                    or getattr(w, "hall_dirty", False))

    # -- power ----------------------------------------------------------------------------------
    def boot(self, cause=machine.PWRON_RESET):
        self.world.power_on()
        # the world keeps a front end's pad readings up to date once the firmware opens its ADC
        # or SPI bus through the host's machine stand-in; on the chip they are the chip's own, so
        # both are opened here (whichever config.json chooses, its pads must follow the chips)
        if self.keep_hall:
            self.world.adc_open(0)
        if self.keep_pres:
            self.world.spi_open(self.world.shift_bus)
        self.booted = False
        self.text = b""
        inputs, hall, pres = self._table_changes()
        self.pico.run(vclock.now_us(), inputs, hall, pres)
        self._apply(self.pico.power(True))
        self.sb = self                   # "powered" for the base class (sb.ev.lines is ours)
        limit = vclock.now_us() + BOOT_LIMIT_MS * 1000
        while not self.booted and vclock.now_us() < limit and self.error is None and self.sb is not None:
            self._slice(vclock.now_us() + 10000)
        if MARKS is not None and self.booted:
            MARKS.append(["boot", vclock.now_ms(), self.pico.stats()["instructions"]])
        if not self.booted and self.sb is not None:     # (None: a torn write cut the power)
            R.fail(1, "the firmware on the emulated Pico did not boot within %d ms%s"
                   % (BOOT_LIMIT_MS, (": " + self.error) if self.error else ""))

    def power_cut(self):
        self._apply(self.pico.power(False))
        self._lost_power()

    def _lost_power(self):
        self.sb = None
        self.world.timers = []
        self.world.watchdog = None
        self.booted = False

    # -- time -----------------------------------------------------------------------------------
    def _slice(self, t_end):
        w = self.world
        w.advance_to(vclock.now_us())
        inputs, hall, pres = self._table_changes()
        serial, self.serial_out = self.serial_out, b""
        self._apply(self.pico.run(t_end, inputs, hall, pres, serial))
        self.steps += 1

    def run_until(self, t_end):
        while vclock.now_us() < t_end:
            now = vclock.now_us()
            self.world.advance_to(now)
            end = min(t_end, now + BUSY_SLICE_US) if self._busy() else t_end
            self._slice(end)
            if self.error is not None:
                R.fail(1, "the firmware stopped on the emulated Pico: " + self.error)
            if self.display and vclock.now_us() >= self.next_display_us:
                self.next_display_us = vclock.now_us() + R.DISPLAY_EVERY_US
                self.show_display()

    # -- ops the chip does its own way ------------------------------------------------------------
    def op(self, o):
        kind = o.get("op")
        if TRACE:
            sys.stderr.write("trace: %8.3f s wall, %8d ms chip, %d slices: %s\n"
                             % (_wall() - TRACE, vclock.now_ms(), self.steps, json.dumps(o)[:100]))
        if kind == "serial":
            if self.sb is not None:
                line = o["line"]
                self.serial_out += line.encode("latin-1") + (b"" if o.get("raw") else b"\n")
            return
        if kind == "stall":
            if self.sb is not None:
                self._apply(self.pico.stall(o["ms"]))
                self.world.advance_to(vclock.now_us())
                if not self.booted:          # the watchdog bit: wait for the firmware again
                    limit = vclock.now_us() + BOOT_LIMIT_MS * 1000
                    while not self.booted and vclock.now_us() < limit:
                        self._slice(vclock.now_us() + 10000)
                self.settle()
            return
        if kind == "flash" and "fail_after" in o:
            R.fail(2, "timeline: flash fail_after is not modelled on the emulated Pico")
        if kind == "flash" and "tear_after" in o:
            self._apply(self.pico.flash_tear(o["tear_after"], o.get("keep")))
            return
        if kind == "snapshot":
            super().op(o)
            self.snapshots[-1].update(flash_ops=self.flash_ops, torn=len(self.torn))
            return
        if kind == "fault" and "raw" in o:
            # (bench/rp2040_profile.py) every pad of hall mux o["mux"] frozen at one raw reading,
            # as tests/test_fault_budget.py does on the desktop (not a scenario's fault)
            h = self.world.hall
            for pad in range(16 * o["mux"], min(16 * o["mux"] + 16, h.n)):
                h.set_fault(pad, o["raw"])
            return
        if kind == "boot":
            self.boot()
            return
        if kind == "await" and o.get("ready"):
            # (probe.py) until the firmware has started its watchdog, the last thing its boot()
            # does before main.py's loop (at most `ms` of chip time): the objects a probe's
            # module uses are made by then (5 ms slices)
            limit = vclock.now_us() + o.get("ms", 10000) * 1000
            while not self.wdt_on and self.sb is not None and vclock.now_us() < limit:
                self.run_until(min(limit, vclock.now_us() + 5000))
            if MARKS is not None:
                MARKS.append(["ready", vclock.now_ms(), self.pico.stats()["instructions"]])
            if not self.wdt_on:
                R.fail(1, "the firmware on the emulated Pico did not start its watchdog within %d ms"
                       % o.get("ms", 10000))
            return
        if kind == "await":
            # (probe.py) until `lines` more event lines came (or more of event `ev`; with
            # "total": until the run has seen that many of `ev` in all, those before the op too),
            # at most `ms` of chip time
            ev = o.get("ev")
            want = (self.seen_ev.get(ev, 0) if ev else self.lines) + o.get("lines", 1)
            if ev and "total" in o:
                want = o["total"]
            limit = vclock.now_us() + o.get("ms", 10000) * 1000
            while (self.seen_ev.get(ev, 0) if ev else self.lines) < want and vclock.now_us() < limit:
                self.run_until(min(limit, vclock.now_us() + 20000))
            return
        super().op(o)


def initial_flash(config, image, fs_path=None):
    """The chip's littlefs before the first boot: the --fs file's bytes when given (made by
    images.prepared_flash(), the flash ops before the first boot applied); else config.json when
    given and the firmware as .mpy files (and main.py) when the image has none frozen in."""
    if fs_path:
        with open(fs_path, "rb") as f:
            return f.read()
    with RealTime():
        return images.initial_flash(config, image)


def main(argv):
    global TRACE
    if os.environ.get("ZENN_PICO_TRACE"):
        TRACE = _wall()
    if len(argv) < 2:
        R.fail(2, "usage: pico_runner.py TIMELINE [--display] [--config FILE] [--final PATH]")
    why = images.missing()
    if why:
        R.fail(2, why)
    image, bootrom = images.find_image(), images.find_bootrom()
    config = argv[argv.index("--config") + 1] if "--config" in argv else None
    fs_path = argv[argv.index("--fs") + 1] if "--fs" in argv else None
    pico = chip_mod.Pico(image, bootrom, initial_flash(config, image, fs_path), node=images.node())
    front_end = argv[argv.index("--front-end") + 1] if "--front-end" in argv else None
    try:
        r = ChipRunner(pico, display="--display" in argv, config=config, front_end=front_end)
        R.play_file(r, argv[1])
        if front_end is not None:
            # (asked after the timeline, as --stats: no chip answer before it changes)
            reads = pico.stats().get("pad_reads", [0, 0])[1 if front_end == "hall" else 0]
            if reads:
                R.fail(1, "the chip read the %s pads %d times, which this run did not keep up to date "
                       "(--front-end %s)" % ("presence" if front_end == "hall" else "hall", reads, front_end))
        stats_file = os.environ.get("ZENN_PICO_STATS")
        if "--stats" in argv or stats_file:
            st = pico.stats()
            me = resource.getrusage(resource.RUSAGE_SELF)
            if "--stats" in argv:
                sys.stderr.write("pico_runner: %d slices, %d ms emulated, %d instructions; CPU s: "
                                 "the chip (node) %.2f, the runner (the world) %.2f\n"
                                 % (r.steps, vclock.now_ms(), st["instructions"], st["cpu_us"] / 1e6,
                                    me.ru_utime + me.ru_stime))
            if stats_file:
                # (the tests' chip runs: ZENN_PICO_STATS=FILE, one JSON line a run; the
                # instructions and the emulated ms do not move with the machine's load)
                with open(stats_file, "a") as f:
                    f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                                        "slices": r.steps, "ms": vclock.now_ms(),
                                        "instructions": st["instructions"],
                                        "node_cpu_s": round(st["cpu_us"] / 1e6, 3),
                                        "marks": MARKS,
                                        "runner_cpu_s": round(me.ru_utime + me.ru_stime, 3)}) + "\n")
        if "--final" in argv:
            R.final_state(r, argv[argv.index("--final") + 1])
    finally:
        pico.close()


if __name__ == "__main__":
    main(sys.argv)
