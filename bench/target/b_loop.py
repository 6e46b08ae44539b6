"""Target side of bench/loop_cost.py: what the firmware's loop costs on the MicroPython unix
port, part by part, beside reference loops timed in the same run.

Job (one JSON line on stdin):
  {"config": PATH or null, "reps": R, "n_ref": N,
   "static": {name: timeline}, "motion": {name: timeline}}

Parts are timed where the firmware runs them, on the board a scenario left:
- find() and tracker.frame() on the frame the pads read (the real simulated table);
- everything that touches the hardware (the scan step, the buttons, the displays' service)
  and whole loop turns with the hardware stood in for by a Replay of that board, so that what
  the stand-in costs per call is the same in the part and in its reference loop: each part's
  hardware calls are counted once (Counting) and taken out with the reference loops' cost;
- the redraws of every display, and the rules, on game states made for them;
- and while a chip slides (motion timelines): find, tracker.frame, on_board (the rules and the
  journal at a verdict) and redraw as step() calls them, timed call by call.
The scan step's @micropython.viper functions are timed apart (viper_part()): the step again
with them doing nothing, and the one that makes no calls on its own; and a viper reference loop
(vref) beside the others, whose Pico cycles bench/viper_cycles.py counts.
Every time is in us per call, the best of many short batches (best()); "hw" is {kind: calls
per call of the part}.
"""
import gc
import sys
from array import array

import machine
import micropython
import b_harness as H

BATCH_US = 300        # a batch of calls lasts about this long (us)
MIN_BATCHES = 20
MAX_BATCHES = 400
REF_BATCH = 2000      # iterations per batch of a reference loop


# -- the hardware stood in for by a recording of the board -------------------------------
class Replay:
    """In place of the World for the ADC, I2C and SPI writes: the ADC returns what the real
    table read at that multiplexer address when the Replay was made (no noise: the frame holds
    still), I2C and SPI writes go nowhere; every call is counted. Reads of SPI (the presence
    front end) still go to the world."""

    def __init__(self, world):
        import world_table as T
        self.world = world
        self.T = T
        self.sel_ch = world.sel_ch
        self.sel_bank = world.sel_bank
        n = T.N_ADC * T.BANKS * T.CHANNELS
        self.vals = array('H', bytes(2 * n))
        lv = machine._level
        saved = bytes(lv)
        for adc in range(T.N_ADC):
            for bank in range(T.BANKS):
                for ch in range(T.CHANNELS):
                    for b in range(4):
                        lv[self.sel_ch[b]] = (ch >> b) & 1
                        lv[self.sel_bank[b]] = (bank >> b) & 1
                    self.vals[(adc * T.BANKS + bank) * T.CHANNELS + ch] = world.adc_read(adc)
        # the presence pads: what each row reads, latched row by row through the row select
        # pins (as the 74HC165s take it in); SPI reads on the shift bus answer from this
        self.rows = None
        pres = getattr(world, "pres", None)
        if pres is not None and pres.row_sel is not None:
            self.row_sel = pres.row_sel
            self.nsr = pres.nsr
            self.nrows = pres.rows
            self.rows = bytearray(self.nrows * self.nsr)
            buf = bytearray(self.nsr)
            for r in range(self.nrows):
                g = r ^ (r >> 1)
                for b in range(len(self.row_sel)):
                    lv[self.row_sel[b]] = (g >> b) & 1
                pres.latch()
                pres.read(buf)
                for k in range(self.nsr):
                    self.rows[r * self.nsr + k] = buf[k]
        for i in range(len(saved)):
            lv[i] = saved[i]
        self.n = array('i', bytes(4 * 8))   # adc, i2c calls, i2c bytes, spi calls, spi bytes, spi reads

    def adc_read(self, channel):
        lv = machine._level
        s = self.sel_ch
        b = self.sel_bank
        ch = lv[s[0]] | (lv[s[1]] << 1) | (lv[s[2]] << 2) | (lv[s[3]] << 3)
        bank = lv[b[0]] | (lv[b[1]] << 1) | (lv[b[2]] << 2) | (lv[b[3]] << 3)
        self.n[0] += 1
        return self.vals[(channel * 16 + bank) * 16 + ch]

    def i2c_write(self, addr, buf):
        self.n[1] += 1
        self.n[2] += len(buf)
        return len(buf)

    def i2c_begin(self, addr):
        pass

    def i2c_part(self, addr, buf):
        return self.i2c_write(addr, buf)

    def i2c_end(self, addr):
        pass

    def spi_write(self, bus, buf):
        self.n[3] += 1
        self.n[4] += len(buf)

    def spi_readinto(self, bus, buf):
        self.n[5] += 1
        self.n[6] += len(buf)
        if self.rows is None or bus != self.world.shift_bus:
            self.world.spi_readinto(bus, buf)
            return
        # the row the select pins show (a Gray code), as recorded
        lv = machine._level
        s = self.row_sel
        code = 0
        for b in range(len(s)):
            code |= lv[s[b]] << b
        r = code
        code >>= 1
        while code:
            r ^= code
            code >>= 1
        k0 = (r % self.nrows) * self.nsr
        for k in range(len(buf)):
            buf[k] = self.rows[k0 + k] if k < self.nsr else 0

    def __getattr__(self, name):
        return getattr(self.world, name)


class Installed:
    """The Replay in the World's place, and output watchers (a model latching on a chip
    select) switched off, until restore()."""

    def __init__(self, world):
        self.world = world
        self.replay = Replay(world)
        self.watch = None
        if hasattr(machine, "_watch"):
            self.watch = list(machine._watch)
            for i in range(len(machine._watch)):
                machine._watch[i] = None
        stand_in(world, self.replay)

    def restore(self):
        stand_in(self.world, None)
        if self.watch is not None:
            for i in range(len(self.watch)):
                machine._watch[i] = self.watch[i]


def stand_in(world, other):
    """other (None: the world again) answers the firmware's reads in the world's place."""
    if hasattr(world, "stand_in"):
        world.stand_in(other)       # (the world's ADC readers are told too)
    else:
        machine._world[0] = other if other is not None else world


class Counting:
    """Counts Pin.value() calls (reads and writes) while installed; the Replay counts the rest.
    The pins the firmware made call the value() bound on them (machine.Pin), so each of those is
    wrapped, besides the class's."""
    n = array('i', (0, 0))

    def __init__(self):
        self.orig = machine.Pin.value
        n = Counting.n

        def counted(orig):
            def value(v=None):
                if v is None:
                    n[0] += 1
                else:
                    n[1] += 1
                return orig(v)
            return value

        def value(pin, v=None):
            if v is None:
                n[0] += 1
            else:
                n[1] += 1
            return self.orig(pin, v)
        machine.Pin.value = value
        self.bound = []
        for p in machine._pins:
            f = p.__dict__.get("value") if p is not None else None
            if f is not None:
                self.bound.append((p, f))
                p.value = counted(f)

    def restore(self):
        machine.Pin.value = self.orig
        for p, f in self.bound:
            p.value = f


def hw_counts(inst, fn, calls):
    """{kind: calls per call} of the hardware calls fn() makes, over `calls` calls of it."""
    r = inst.replay
    for i in range(len(r.n)):
        r.n[i] = 0
    Counting.n[0] = 0
    Counting.n[1] = 0
    c = Counting()
    try:
        for _ in range(calls):
            fn()
    finally:
        c.restore()
    k = float(calls)
    out = {"pin_read": Counting.n[0] / k, "pin_write": Counting.n[1] / k, "adc": r.n[0] / k,
           "i2c": r.n[1] / k, "i2c_bytes": r.n[2] / k, "spi": r.n[3] / k, "spi_bytes": r.n[4] / k,
           "spi_read": r.n[5] / k, "spi_read_bytes": r.n[6] / k}
    return {k_: v for k_, v in out.items() if v}


# -- timing ---------------------------------------------------------------------------------
def best(fn, group=1, budget_us=400000):
    """us per call of fn(), the best of many short batches: each batch a few hundred us (calls
    in multiples of `group`, e.g. 16 steps for a whole frame), as many batches as fit in the
    budget (at least MIN_BATCHES). The heap is locked: the parts allocate nothing, and a
    collection must not land inside a batch. The machine may be busy with other work: a short
    batch is likely to run undisturbed, and the best one is taken."""
    gc.collect()
    t0 = H.real_us()
    for _ in range(group):
        fn()
    one = H.since(t0) + 1
    calls = group * max(1, BATCH_US // one)
    batches = budget_us // (calls * one // group + 1)
    if batches < MIN_BATCHES:
        batches = MIN_BATCHES
    if batches > MAX_BATCHES:
        batches = MAX_BATCHES
    b = None
    for k in range(batches):
        if k % 16 == 0:
            gc.collect()
        micropython.heap_lock()
        t0 = H.real_us()
        for _ in range(calls):
            fn()
        t = H.since(t0)
        micropython.heap_unlock()
        if b is None or t < b:
            b = t
    return b / calls


# The viper reference loop: per iteration the work of hall_scan.settle() for one pad at rest
# (two array loads, a subtraction, shifts, two compares, a store), so that its time here and its
# cycles on the RP2040 (bench/viper_cycles.py counts them from the armv6m code mpy-cross emits)
# give the ratio viper code is scaled by. Keep it as it is: its cycle count is recorded in
# bench/loop_cost.py (PICO_VREF_CYCLES).
@micropython.viper
def vref(a: ptr16, b: ptr32, n: int) -> int:
    s = 0
    i = 0
    while i < n:
        k = i & 63
        v = (int(a[k]) - 32768) << 4
        d = v - (int(b[k]) - 1048576)
        if d > 0 - 3200 and d < 3200:
            v = v + (d >> 2)
        else:
            s += 1
        b[k] = v + 1048576
        i += 1
    return s


def ref_empty(n):
    t0 = H.real_us()
    for i in range(n):
        pass
    return H.since(t0)


def ref_pin_read(p, n):
    t0 = H.real_us()
    for i in range(n):
        p.value()
    return H.since(t0)


def ref_pin_write(p, n):
    t0 = H.real_us()
    for i in range(n):
        p.value(i & 1)
    return H.since(t0)


def ref_adc(a, n):
    t0 = H.real_us()
    for i in range(n):
        a.read_u16()
    return H.since(t0)


def ref_i2c(bus, buf, n):
    t0 = H.real_us()
    for i in range(n):
        bus.writeto(60, buf)
    return H.since(t0)


def ref_spi(bus, buf, n):
    t0 = H.real_us()
    for i in range(n):
        bus.write(buf)
    return H.since(t0)


def ref_spi_read(bus, buf, n):
    t0 = H.real_us()
    for i in range(n):
        bus.readinto(buf)
    return H.since(t0)


def ref_vref(a, b, n):
    t0 = H.real_us()
    vref(a, b, n)
    return H.since(t0)


def ref_best(fn, *args):
    """The best of MAX_BATCHES short runs of a reference loop (args end with its length)."""
    b = None
    for k in range(MAX_BATCHES):
        if k % 16 == 0:
            gc.collect()
        t = fn(*args)
        if b is None or t < b:
            b = t
    return b


def references(world, n):
    """us per iteration: an empty for loop, and each stand-in call in a loop (Replay world)."""
    inst = Installed(world)
    try:
        pin_in = machine.Pin(25, machine.Pin.IN)    # the LED: nothing reads or watches it
        pin_out = machine.Pin(25, machine.Pin.OUT)
        adc = machine.ADC(machine.Pin(26))
        i2c = machine.I2C(0)
        spi = machine.SPI(0)
        small = bytearray(7)
        page = bytearray(129)
        frame = bytearray(6)
        shift = machine.SPI(getattr(world, "shift_bus", 1))
        va = array('H', (32768 + (i * 37) % 200 for i in range(64)))
        vb = array('i', (1048576 + ((i * 37) % 200) * 16 for i in range(64)))
        e = ref_best(ref_empty, n) / n
        m = n // 4
        out = {"empty": e,
               "pin_read": ref_best(ref_pin_read, pin_in, m) / m - e,
               "pin_write": ref_best(ref_pin_write, pin_out, m) / m - e,
               "adc": ref_best(ref_adc, adc, m) / m - e,
               "i2c": ref_best(ref_i2c, i2c, small, m) / m - e,
               "i2c_129": ref_best(ref_i2c, i2c, page, m) / m - e,
               "spi": ref_best(ref_spi, spi, frame, m) / m - e,
               "spi_read": ref_best(ref_spi_read, shift, frame, m) / m - e,
               # the viper reference loop, per iteration
               "vref": ref_best(ref_vref, va, vb, 4 * n) / (4 * n)}
    finally:
        inst.restore()
    return out


# -- the parts on a static board -------------------------------------------------------------
def static_parts(r, reps):
    sb = r.sb
    out = {}
    grid = sb.scan.grid
    loc = sb.loc
    out["chips"] = loc.find(grid)

    def find():
        loc.find(grid)
    out["find"] = {"us": best(find)}
    tr = sb.tracker
    out["tracker"] = {"us": best(tr.frame)}
    out["faults"] = {"us": best(sb.faults.frame)}
    inst = Installed(r.world)
    try:
        sc = sb.scan
        part = {"us": best(sc.step, 16), "hw": hw_counts(inst, sc.step, 16),
                "front_end": type(sc).__name__}
        vp = viper_part(inst, sc, part)
        if vp is not None:
            part["viper"] = vp
        out["scan_step"] = part
        out["buttons"] = {"us": best(sb.buttons.poll), "hw": hw_counts(inst, sb.buttons.poll, 4)}
        svc = sb.ui.service
        out["service_idle"] = {"us": best(svc), "hw": hw_counts(inst, svc, 4)}
        out["step"] = {"us": best(sb.step, 16), "hw": hw_counts(inst, sb.step, 16)}
        if vp is not None:
            out["step"]["viper"] = vp       # the loop step scans once: the same viper work
    finally:
        inst.restore()
    # the pads saw a noise-free frame meanwhile: let the firmware see the real table again
    r.run_ms(300)
    return out


# -- the scanners' viper functions ---------------------------------------------------------------
# Stand-ins of the same arity that do nothing (read_rows gives back the select code it was
# given, so the scanner's idea of the pins stays true).
@micropython.viper
def _nop6(a, b, c, d, e, f) -> int:
    return 0


@micropython.viper
def _nop7(a, b, c, d, e, f, g) -> int:
    return 0


@micropython.viper
def _nop8(a, b, c, d, e, f, g, h) -> int:
    return 0


@micropython.viper
def _nop9(a, b, c, d, e, f, g, h, i) -> int:
    return 0


@micropython.viper
def _nop_rows(a, code: int, c, d, e, f) -> int:
    return code


KERNELS = {"HallScanner": ("sensing.hall_scan", (("read_bank", _nop6), ("settle", _nop9))),
           "PresenceScanner": ("sensing.shift_scan", (("read_rows", _nop_rows), ("unpack", _nop8)))}


class _Call7:
    """f(a..g) as a method: a bound method, made before the heap is locked, calls it without
    allocating (a closure over this many variables would allocate at each call)."""

    def __init__(self, f, args):
        self.f = f
        self.a, self.b, self.c, self.d, self.e, self.g, self.h = args

    def run(self):
        self.f(self.a, self.b, self.c, self.d, self.e, self.g, self.h)


class _Call9:
    """As _Call7, for hall_scan.settle()'s nine arguments (issue 12: the fitted readings and
    the drift allowed from them)."""

    def __init__(self, f, args):
        self.f = f
        self.a, self.b, self.c, self.d, self.e, self.g, self.h, self.i, self.j = args

    def run(self):
        return self.f(self.a, self.b, self.c, self.d, self.e, self.g, self.h, self.i, self.j)


class _Unpack:
    """shift_scan.unpack()'s seven arguments through _Call9 (the last two dropped)."""

    def __init__(self, f):
        self.f = f

    def call(self, a, b, c, d, e, g, h, _i, _j):
        return self.f(a, b, c, d, e, g, h)


def _direct(sc):
    """The scanner's viper function without calls to Python (hall settle(), presence unpack()),
    called as step() calls it on the bank or rows the last step read (nothing changed since, as
    on a board at rest): us per step, the best of short batches, averaged over a frame's 16
    steps (banks differ in their pads)."""
    t = 0.0
    for _ in range(16):
        sc.step()
        if type(sc).__name__ == "HallScanner":
            from sensing import hall_scan as M
            pos = (sc.pos - 1) & 15
            c = _Call9(M.settle, (sc.raw, M.GRAY[pos] * 48, sc.baseline, sc.acc, sc.grid,
                                  sc.jump, sc.SMOOTH, sc.ref, sc.drift))
        else:
            from sensing import shift_scan as M
            row = (sc.row or M.PRES_STROBES) - M.STROBES_PER_STEP
            c = _Call9(_Unpack(M.unpack).call, (row, sc.rowbuf, sc.last, sc.pmask, sc.grid,
                                                sc.rows_on, sc.toggles, 0, 0))
        t += best(c.run, 1, 40000)
    return t / 16


def viper_part(inst, sc, part):
    """The scan step's viper functions: {"kind": the scanner, "unix_us": what they take of the
    step here, the stand-in calls they make included, "hw": those calls, "direct_us": the one
    that makes no calls (timed on its own)}. unix_us: the step timed again with the viper
    functions swapped for ones that do nothing, less that."""
    k = KERNELS.get(type(sc).__name__)
    if k is None:
        return None
    mod = sys.modules[k[0]]
    for name, _ in k[1]:
        if not hasattr(mod, name):
            return None                   # a scanner without them (an older firmware)
    saved = [(name, getattr(mod, name)) for name, _ in k[1]]
    for name, nop in k[1]:
        setattr(mod, name, nop)
    try:
        t0 = best(sc.step, 16)
        hw0 = hw_counts(inst, sc.step, 16)
    finally:
        for name, f in saved:
            setattr(mod, name, f)
    hw = part["hw"]
    hw_v = {}
    for kind in hw:
        n = hw[kind] - hw0.get(kind, 0)
        if n > 0:
            hw_v[kind] = n
    v = part["us"] - t0
    return {"kind": type(sc).__name__, "unix_us": v if v > 0 else 0.0, "hw": hw_v,
            "direct_us": _direct(sc), "bytecode_us": t0}


# -- the displays ------------------------------------------------------------------------------
def bowling_states(ev):
    """Two games one ball apart, late in a game of six (the heaviest bowling screen)."""
    from games.bowling import Bowling
    a = Bowling(ev)
    b = Bowling(ev)
    strike = (1 << 5) | 17          # K_ZENN into cup b (shooter end a)
    eight = (0 << 5) | 14           # K_REST in b.e2: 8 pins
    for g in (a, b):
        g.start(6, 0)
        for i in range(6 * 9 + 2):
            g.apply_outcome(strike if i % 3 else eight)
    b.apply_outcome(strike)
    return a, b


def display_parts(r, reps):
    sb = r.sb
    ga, gb = bowling_states(None)
    out = {}
    inst = Installed(r.world)
    try:
        for name, u, d in H.displays_of(sb):
            flip = [0]

            def changed():
                flip[0] ^= 1
                u.draw_bowling(ga if flip[0] else gb)
                d.dirty = 0

            def same():
                u.draw_bowling(ga)
                d.dirty = 0

            t0, t1 = sb.games[0][2], sb.games[1][2]     # the registry's first two titles

            def menu():
                flip[0] ^= 1
                u.draw_menu(b"Game", t0 if flip[0] else t1, b"next / ok")
                d.dirty = 0

            part = {"redraw_bowling_changed": {"us": best(changed, 2)},
                    "redraw_bowling_same": {"us": best(same)},
                    "redraw_menu_changed": {"us": best(menu, 2)}}
            # one unit of the bus traffic: what service() sends when everything is dirty
            full = (1 << 8) - 1

            def send():
                d.dirty = full
                d.service()
            part["service_send"] = {"us": best(send), "hw": hw_counts(inst, send, 4)}
            # how many service() calls a changed bowling screen takes to go out
            u.draw_bowling(gb)
            d.dirty = 0
            u.draw_bowling(ga)
            k = 0
            while d.dirty and k < 64:
                d.service()
                k += 1
            part["sends_after_shot"] = k
            out[name] = part
    finally:
        inst.restore()
    return out


def rules_part(r, reps):
    """bowling.on_shot() for a strike late in a game of six (events written): the best of
    `reps` games."""
    from games.bowling import Bowling
    from tracking import shot as S
    sb = r.sb
    res = S.ShotResult()
    res.n = 1
    res.kind[0] = S.KIND_SMALL
    res.moved[0] = 1
    res.fate[0] = S.FATE_CUP_B
    res.zenn = S.FATE_CUP_B
    res.mover = 0
    low = None
    games = []
    for _ in range(reps):
        g = Bowling(sb.ev)
        g.start(6, 0)
        for i in range(6 * 9 + 2):
            g.apply_outcome((1 << 5) | 17)
        games.append(g)
    gc.collect()
    micropython.heap_lock()
    for g in games:
        t0 = H.real_us()
        g.on_shot(res)
        t = H.since(t0)
        if low is None or t < low:
            low = t
    micropython.heap_unlock()
    return {"us": low}


# -- while chips move -------------------------------------------------------------------------
class Timed0:
    def __init__(self, obj, name):
        self.obj = obj
        self.name = name
        self.f = getattr(obj, name)
        self.t = array('i', bytes(4 * 2048))
        self.n = 0
        setattr(obj, name, self.call)

    def call(self):
        t0 = H.real_us()
        v = self.f()
        if self.n < 2048:
            self.t[self.n] = H.since(t0)
            self.n += 1
        return v

    def restore(self):
        delattr(self.obj, self.name)

    def stats(self):
        n = self.n
        if not n:
            return {"calls": 0}
        s = 0
        m = 0
        for i in range(n):
            v = self.t[i]
            s += v
            if v > m:
                m = v
        return {"calls": n, "mean": s / n, "max": m}


class Timed1(Timed0):
    def call(self, a):
        t0 = H.real_us()
        v = self.f(a)
        if self.n < 2048:
            self.t[self.n] = H.since(t0)
            self.n += 1
        return v


def motion_parts(r, timeline):
    sb = r.sb
    w = [Timed1(sb.loc, "find"), Timed0(sb.tracker, "frame"), Timed1(sb, "on_board"),
         Timed0(sb, "redraw")]
    try:
        H.play(r, timeline)
    finally:
        for t in w:
            t.restore()
    return {"find": w[0].stats(), "tracker": w[1].stats(), "on_board": w[2].stats(),
            "redraw": w[3].stats()}


def main():
    j = H.job()
    cfg = j.get("config")
    reps = j.get("reps", 20)
    res = {"static": {}, "motion": {}}
    r = H.runner(cfg)
    H.boot(r)
    res["ref"] = references(r.world, j.get("n_ref", 4000))
    r.power_cut()
    r = None
    for name in sorted(j.get("static", {})):
        r = H.runner(cfg)
        H.play(r, j["static"][name])
        r.run_ms(500)
        res["static"][name] = static_parts(r, reps)
        if name == "menu":
            res["displays"] = display_parts(r, reps)
            res["rules"] = rules_part(r, reps)
        r.power_cut()
        r = None
        gc.collect()
    for name in sorted(j.get("motion", {})):
        r = H.runner(cfg)
        tl = j["motion"][name]
        H.play(r, tl[:-1])          # everything up to the shot
        r.run_ms(500)
        res["motion"][name] = motion_parts(r, tl[-1:])
        r.power_cut()
        r = None
        gc.collect()
    res["config"] = cfg
    H.emit(res)


main()
