"""The simulated table: chips on the surface, in cups, in hand; the beams, the cup throats, the
hit sensor, the buttons, the hall pads (hall_model.py), the OLED (ssd1306_model.py) and the
seven-segment chain (max7219_model.py).

It runs in the firmware's interpreter. advance_to() is called between firmware steps with the
heap unlocked; adc_read() and i2c_write() are called from inside a step with the heap locked,
so they allocate nothing.
"""
import sys
from array import array

import machine
import micropython
from micropython import const
import vclock
import world_table as T
from hall_model import HallModel
import hall_model as HM
from presence_model import PresenceModel
import presence_model as PM
from ssd1306_model import SSD1306Model
from max7219_model import MAX7219Model

_level = machine._level
_heap_lock = micropython.heap_lock
_heap_unlock = micropython.heap_unlock
_N_ADC = T.N_ADC
_BANKS = T.BANKS
_CHANNELS = T.CHANNELS
_PAD_AT = T.PAD_AT
_ADC_ZERO = T.ADC_ZERO

# where a chip is (const: the world's own checks of it compile to numbers, not global lookups)
HAND = const(0)
BOARD = const(1)
CUP_A = const(2)
CUP_B = const(3)
OFF = const(4)

PUT_MS = 150          # a hand lowering a chip onto the surface / lifting it off
# ... and that hand is over the chip around it (issue 4), which the presence pads see (the hall
# pads see magnets only). A chip lies flat on the surface, so the fingers holding it come within
# the pads' few millimetres of reach together with it:
# - a lift: the hand comes down over the chip and the fingers pinch its rim, HAND_BEFORE_MS
#   before the chip starts to rise (a reach-to-grasp's closing phase takes some 150 - 300 ms;
#   the lift op is when the hand arrives, the chip's PUT_MS fade follows);
# - a put: the hand comes into reach with the chip it carries, so from the fade's start (the
#   op's time, as before: a put's timeline is unchanged);
# - either: the fingers stay HAND_AFTER_MS after the fade (letting go, or rising with the chip
#   out of reach). Not counted in busy_until: SETTLE_MS follows the fade as before.
# So a lift shows a hand for 400 ms, a put for 250 ms, well under the firmware's hand fault
# (faults.HAND_MS, 1.5 s: a hand left hovering). The hand's disc (presence_model.HAND_R, 45 mm)
# is centred on the chip (fingers pinching it from above), so it covers the chip whole; by the
# edge part of it lies off the pads. A hand reaching into a cup is not shown.
HAND_BEFORE_MS = 150
HAND_AFTER_MS = 100
CUP_PULSE_US = 5000   # a chip falling through a cup's throat beam
HAND_PULSE_US = 80000 # a hand reaching into a cup breaks its beam too
HIT_PULSE_US = 2000   # a piezo on a bumper or block rings briefly
AMP_FULL = 1000


class Chip:
    def __init__(self, name, kind):
        self.name = name
        self.kind = kind
        self.r = T.R[kind]
        self.polarity = T.POLARITY[kind]
        self.state = HAND
        self.x = 0
        self.y = 0
        self.amp = 0
        self.fade_from = 0    # amplitude ramp for a hand putting down / lifting
        self.fade_to = 0
        self.fade_t0 = 0
        self.fade_t1 = 0
        self.after_fade = BOARD


class Move:
    def __init__(self, chip, pts, end, hits, t0_us):
        self.chip = chip
        self.pts = pts          # [(x, y, t_us)] in 0.1 mm, absolute virtual us
        self.end = end
        self.hits = hits
        self.t0 = t0_us
        self.seg = 0


class World:
    def __init__(self, seg_modules=3, front_end=None):
        # front_end (config.json's "hall" or "shift"): only that pad model is made, the other
        # is None (tools/hil on a Pico: the heap holds the firmware and one model, and the
        # presence model's arrays alone take some 37 KB); None: both, as a scenario may break
        # pads of either grid and the firmware reads the one it is configured for
        pm = T.PINMAP
        self.chips = {}
        for name, kind in (("small", "small"), ("big1", "big"), ("big2", "big"), ("big3", "big"),
                           ("small2", "small")):    # small2: a second small chip (bad input)
            self.chips[name] = Chip(name, kind)
        # the same chips in a list (in the dict's order): what a step goes through while chips
        # move, without the view and iterator objects a dict's values() makes
        self.chip_list = list(self.chips.values())
        self.hall_in = array('i', bytes(16 * len(self.chip_list)))   # update_packed's chips
        self.moves = []
        self.fading = []        # the chips with a fade under way (fade_t1 set)
        self.pulses = []        # [pin, start_us, end_us, phase]
        self.timers = []
        self.watchdog = None
        self.hall = HallModel(T) if front_end != "shift" else None
        self.oled = SSD1306Model()
        self.oled_addr = pm["oled_i2c"]["addr"]
        # MAX7219 modules on the SPI bus, latched by its chip select (machine.watch)
        self.spi_bus = pm["spi"]["bus"]
        self.seg = MAX7219Model(seg_modules, pm["spi"]["cs"])
        machine.watch(pm["spi"]["cs"], self.seg.load_edge)
        self.sel_ch = tuple(pm["mux_channel_select"])
        self.sel_bank = tuple(pm["mux_bank_select"])
        # the readers machine.ADC binds per ADC (adc_reader; MicroPython): a world without hall
        # pads (runner --lean, presence) has none, nor has CPython (World.adc_read then)
        self.adc_ctx = []       # their arrays (_adc_readers)
        self.adc_readers = _adc_readers(self) if self.hall is not None else []
        # the presence pads (front end "shift"): row strobes and 74HC165s on their own SPI bus,
        # taking in a row on the falling edge of the load pin
        sh = pm["shift"]
        self.pres = None
        if front_end != "hall":
            self.pres = PresenceModel(T)
            self.pres._levels = machine._level
            self.pres.row_sel = tuple(sh["row_select"])
            self.pres.prepare()
        self.shift_bus = sh["bus"]
        self.shift_load = sh["load"]
        # the load pin's watcher and the shift bus's readinto (PresenceModel.load_edge,
        # spi_reader): one viper call each on the unix port, closures under CPython; the
        # world's _load_edge and spi_readinto on a Pico (tools/hil)
        self.spi_flag = bytearray(1)    # 1 while a stand-in answers (stand_in)
        self.spi_readers = []           # [bus, readinto] (simtrace.py wraps the readinto)
        edge = None
        if self.pres is not None:
            edge = self.pres.load_edge()
            rd = self.pres.spi_reader(self.spi_flag, _ATTACHED, self.shift_bus)
            if rd is not None:
                self.spi_readers = [self.shift_bus, rd]
        machine.watch(sh["load"], edge or self._load_edge)
        self.hands = []         # [x, y, until_us(, 1: a put's or lift's)]: hands over the pads
        self.chatter = [0, 0]   # per cup: when its beam chatters next (virtual us; 0: never)
        self.rng = 0x9E3779B9
        self.cup_pin = (pm["cup_beam"]["a"], pm["cup_beam"]["b"])
        self.gate_pin = (pm["gate_beam"]["a"], pm["gate_beam"]["b"])
        self.hit_pin = pm["hit"]
        self.button_pin = dict(pm["buttons"])
        self.gates = (T.GATE_A, T.GATE_B)
        # each beam's bounding box (x0, y0, x1, y1): update_gates() tests the chips near it only
        self.gate_box = tuple((min(g[0], g[2]), min(g[1], g[3]), max(g[0], g[2]), max(g[1], g[3]))
                              for g in self.gates)
        self.gate_want = [1, 1]     # each gate beam's level with the chips as they lie
        self.inputs_high = [self.cup_pin[0], self.cup_pin[1], self.gate_pin[0], self.gate_pin[1],
                            self.hit_pin] + list(self.button_pin.values())
        self.hall_dirty = True  # the chips or hands changed: the pad models need an update
        # Which pad models the firmware can read: set when it opens an ADC (the hall pads) or
        # the shift registers' SPI bus (the presence pads). A model it cannot read is left
        # stale and brought up to date when it is opened (a pad's reading depends only on what
        # lies on the pads then, not on the updates before), which spares the other front
        # end's model every step.
        self.hall_used = False
        self.pres_used = False
        self.hall_stale = False
        self.pres_stale = False
        self.i2c_addr = -1
        self.lock_steps = False  # advance_to() locks the heap where it can (set by the runner)
        self.log = []           # what happened, for --display and debugging

    # -- pins the world drives -------------------------------------------------------------
    def input_level(self, pin):
        """The idle level of an input when the firmware configures it: everything we drive is
        active low (beams intact, buttons up)."""
        return 1 if pin in self.inputs_high else 0

    def power_on(self):
        for p in self.inputs_high:
            machine._level[p] = 1
        self.update_gates()

    def adc_reader(self, channel):
        """machine.ADC's read_u16 for that channel, fast (MicroPython; None: the plain one)."""
        return self.adc_readers[channel] if 0 <= channel < len(self.adc_readers) else None

    def spi_reader(self, bus):
        """machine.SPI's readinto(buf) for that bus, fast (the unix port's presence pads; None:
        the plain one)."""
        return self.spi_readers[1] if self.spi_readers and self.spi_readers[0] == bus else None

    def stand_in(self, other):
        """Another object answers the firmware's reads in the world's place (machine._world[0]),
        or the world again (other None): a bench's Replay (bench/target/b_loop.py). The readers
        are told here: they do not look at machine._world at every read."""
        _ATTACHED[0] = other if other is not None else self
        for ctx in self.adc_ctx:
            ctx[0] = 0 if other is None else 1
        self.spi_flag[0] = 0 if other is None else 1

    def adc_open(self, channel):
        self.hall_used = True
        if self.hall_stale:
            self._update_models(True, False)

    def spi_open(self, bus):
        if bus == self.shift_bus:
            self.pres_used = True
            if self.pres_stale:
                self._update_models(False, True)

    # -- the firmware's reads (heap locked) ----------------------------------------------
    def adc_read(self, channel):
        if channel >= _N_ADC:
            return 0
        lv = _level
        s = self.sel_ch
        b = self.sel_bank
        pad = _PAD_AT[((channel * _BANKS + (lv[b[0]] | (lv[b[1]] << 1) | (lv[b[2]] << 2) | (lv[b[3]] << 3)))
                       * _CHANNELS) + (lv[s[0]] | (lv[s[1]] << 1) | (lv[s[2]] << 2) | (lv[s[3]] << 3))]
        if pad < 0 or self.hall is None:
            return _ADC_ZERO
        return self.hall.read(pad)

    def i2c_scan(self):
        return [self.oled_addr]

    def i2c_write(self, addr, buf):
        if addr == self.oled_addr:
            self.oled.i2c_write(buf)
            return len(buf)
        raise OSError(19)   # ENODEV, as the chip's driver reports a missing device

    def i2c_begin(self, addr):
        pass

    def i2c_part(self, addr, buf):
        return self.i2c_write(addr, buf)

    def i2c_end(self, addr):
        pass

    def spi_write(self, bus, buf):
        if bus == self.spi_bus:
            self.seg.spi_write(buf)

    def spi_readinto(self, bus, buf):
        if bus == self.shift_bus and self.pres is not None:
            self.pres.read(buf)
            return
        for i in range(len(buf)):
            buf[i] = 0

    def _load_edge(self, pin, level):
        if level == 0 and self.pres is not None:
            self.pres.latch()

    # -- the scenario's actions (heap unlocked) ------------------------------------------
    def press(self, button, down):
        machine.drive(self.button_pin[button], 0 if down else 1)

    def put(self, name, x, y, now_us):
        c = self.chips[name]
        c.state = BOARD
        c.x = x
        c.y = y
        self._fade(c, 0, AMP_FULL, now_us, BOARD)
        self._hand_over(c, now_us)
        self.hall_dirty = True

    def lift(self, name, now_us):
        c = self.chips[name]
        if c.state == BOARD:
            self._fade(c, c.amp, 0, now_us + HAND_BEFORE_MS * 1000, HAND)
            self._hand_over(c, now_us)
            # (the pads see the hand from now, not from the fade's start HAND_BEFORE_MS on: a
            # lift showed a hand for 250 ms, not the 400 ms above)
            self.hall_dirty = True
        elif c.state in (CUP_A, CUP_B):
            end = 0 if c.state == CUP_A else 1
            self.pulses.append([self.cup_pin[end], now_us, now_us + HAND_PULSE_US, 0])
            c.state = HAND
        else:
            c.state = HAND

    def _hand_over(self, c, now_us):
        """The hand putting down or lifting chip c: over it from now until HAND_AFTER_MS after
        its fade (above)."""
        self.hands.append([c.x, c.y, c.fade_t1 + HAND_AFTER_MS * 1000, 1])

    def _fade(self, c, a0, a1, now_us, after):
        c.fade_from = a0
        c.fade_to = a1
        c.fade_t0 = now_us
        c.fade_t1 = now_us + PUT_MS * 1000
        if c not in self.fading:
            self.fading.append(c)
        c.after_fade = after
        c.amp = a0

    def move(self, name, pts, end, hits, now_us):
        c = self.chips[name]
        abs_pts = [(int(round(x * 10)), int(round(y * 10)), now_us + int(t * 1000)) for x, y, t in pts]
        for m in self.moves:
            if m.chip is c:
                self.moves.remove(m)
                break
        self.moves.append(Move(c, abs_pts, end, [now_us + int(t * 1000) for t in hits], now_us))

    def busy_until(self):
        """Virtual us when every move, fade and pulse under way has finished."""
        t = 0
        for m in self.moves:
            t = max(t, m.pts[-1][2])
        for c in self.chip_list:
            t = max(t, c.fade_t1)
        for p in self.pulses:
            t = max(t, p[2])
        for h in self.hands:
            if len(h) < 4:          # (a hand putting or lifting a chip goes with SETTLE_MS)
                t = max(t, h[2])
        return t

    # -- time passes ------------------------------------------------------------------------
    def advance_to(self, t):
        """The world at virtual time t. Returns False when it is at rest (nothing under way:
        until something changes it, a call finds nothing to do; Runner.run_until relies on
        it), True otherwise."""
        # (two functions: MicroPython takes a call's frame from the heap when it holds more
        # than 11 words, as _advance's does, and from the C stack otherwise; with the heap
        # unlocked between steps that allocation costs more than the rest of a step at rest)
        if (self.moves or self.pulses or self.hall_dirty or self.hands or self.timers
                or self.chatter[0] or self.chatter[1] or self.fading):
            if self.lock_steps:
                _heap_lock()
                quiet = self._advance_quiet(t)
                _heap_unlock()
                if quiet:
                    return True
            self._advance(t)
            return True
        return False        # a table at rest: nothing the firmware could see changes

    def _advance_quiet(self, t):
        """_advance(t) with the heap locked (lock_steps: the runner's steps under the unix
        port), unless something due at t would allocate (a move or fade ending, a hit, a pulse,
        a hand going, a chattering beam, a timer, the presence model's update, the hall model's
        first update): then False, nothing changed, and advance_to() runs it unlocked. Why: a
        call's frame of more than 11 words comes from the heap while it is unlocked, a search of
        the runner's fragmented heap of up to some 10,000 instructions, and a step of a moving
        chip makes a dozen such calls; locked, the frames come from the C stack. The same code
        runs either way (_advance). (An exception in it would leave the heap locked: the run
        ends with it anyway.)"""
        # (the presence model's update allocates: with the presence pads read, never locked; a
        # fade or a move makes the models' update due within the step, whatever hall_dirty says)
        if self.pulses or (self.pres_used and self.pres is not None):
            return False
        if self.hall_used and self.hall is not None and self.hall.ctx is None:
            return False        # (its first update makes the arrays it keeps)
        moves = self.moves
        for m in moves:
            if m.pts[-1][2] <= t or (m.hits and m.hits[0] <= t) or len(m.pts) < 2:
                return False
        ch = self.chatter
        if moves and not (self.fading or self.hands or self.timers or ch[0] or ch[1]):
            self._slide(t)
            return True
        for c in self.fading:
            if c.fade_t0 <= t and t >= c.fade_t1:
                return False
        for due in ch:
            if due and t >= due:
                return False
        for h in self.hands:
            if h[2] <= t:
                return False
        for tm in self.timers:
            if tm.callback is not None and t >= tm.due_us:
                return False
        self._advance(t)
        return True

    def _slide(self, t):
        """_advance(t) when all that is under way is chips sliding, none at its path's end nor
        at a hit (_advance_quiet checked): its steps that do something then, written out (the
        world's busy step; a call costs some 1,500 instructions, and _advance makes six)."""
        for m in self.moves:
            c = m.chip
            if c.state != BOARD:
                c.state = BOARD
                c.amp = AMP_FULL
            pts = m.pts
            seg = m.seg
            while pts[seg + 1][2] <= t:         # (never past the last point: it lies after t)
                seg += 1
            m.seg = seg
            x0, y0, t0 = pts[seg]
            x1, y1, t1 = pts[seg + 1]
            if t <= t0 or t1 == t0:
                c.x = x0
                c.y = y0
            else:
                c.x = x0 + (x1 - x0) * (t - t0) // (t1 - t0)
                c.y = y0 + (y1 - y0) * (t - t0) // (t1 - t0)
        n = self._pack_and_gates()
        want = self.gate_want
        gp = self.gate_pin
        if _level[gp[0]] != want[0]:
            self._drive(gp[0], want[0])
        if _level[gp[1]] != want[1]:
            self._drive(gp[1], want[1])
        if self.hall_used and self.hall is not None:
            self.hall.update_packed(self.hall_in, n)
            self.hall_stale = False
        else:
            self.hall_stale = True
        self.pres_stale = True          # (not read: _advance_quiet's first test)
        self.hall_dirty = False

    def _advance(self, t):
        if self.fading:
            ended = False
            for c in self.fading:
                if c.fade_t0 <= t:
                    if t >= c.fade_t1:
                        c.amp = c.fade_to
                        c.state = c.after_fade
                        c.fade_t1 = 0
                        ended = True
                    else:
                        c.amp = c.fade_from + (c.fade_to - c.fade_from) * (t - c.fade_t0) // (c.fade_t1 - c.fade_t0)
                    self.hall_dirty = True
            if ended:
                self.fading = [c for c in self.fading if c.fade_t1]
        moves = self.moves
        if moves:
            k = 0
            while k < len(moves):       # (the moves in order; a finished one taken out)
                if self._step_move(moves[k], t):
                    del moves[k]
                else:
                    k += 1
        # the chips on the board packed for the hall model and tested against the beams in one
        # pass (neither the pulses nor the faults below move a chip)
        n = self._pack_and_gates() if self.hall_dirty else -1
        self.update_gates(False)
        if self.pulses:
            self._pulses(t)
        self._faults_over_time(t)
        if self.hall_dirty:
            self._update_models(self.hall_used, self.pres_used, n)
            self.hall_dirty = False
        for tm in self.timers:
            if tm.callback is not None and t >= tm.due_us:
                tm.callback(tm)
                if tm.mode == machine.Timer.PERIODIC and tm.period > 0:
                    tm.due_us += tm.period * 1000
                else:
                    tm.callback = None

    def _update_models(self, hall, pres, n=-1):
        # the chips on the board (in chip_list's order), packed for the hall model (n of them
        # in hall_in already, or -1: _pack_and_gates() has not run since they changed): nothing
        # allocated at the step of a moving chip (HallModel.update_packed)
        if hall and self.hall is not None:
            if n < 0:
                n = self._pack_and_gates()
            self.hall.update_packed(self.hall_in, n)
            self.hall_stale = False
        else:
            self.hall_stale = True
        if pres and self.pres is not None:
            on = [c for c in self.chip_list if c.state == BOARD and c.amp > 0]
            self.pres.update([(c.x, c.y, c.r, c.amp) for c in on], [(h[0], h[1]) for h in self.hands])
            self.pres_stale = False
        else:
            self.pres_stale = True

    def _step_move(self, m, t):
        c = m.chip
        pts = m.pts
        while m.hits and m.hits[0] <= t:
            m.hits.pop(0)
            self.pulses.append([self.hit_pin, t, t + HIT_PULSE_US, 0])
        if c.state != BOARD:
            c.state = BOARD
            c.amp = AMP_FULL
        while m.seg < len(pts) - 1 and pts[m.seg + 1][2] <= t:
            m.seg += 1
        if m.seg >= len(pts) - 1:
            c.x, c.y = pts[-1][0], pts[-1][1]
            self.hall_dirty = True
            if m.end == "cup_a" or m.end == "cup_b":
                end = 0 if m.end == "cup_a" else 1
                c.state = CUP_A if end == 0 else CUP_B
                c.amp = 0
                self.pulses.append([self.cup_pin[end], t, t + CUP_PULSE_US, 0])
            elif m.end == "off":
                c.state = OFF
                c.amp = 0
            return True
        x0, y0, t0 = pts[m.seg]
        x1, y1, t1 = pts[m.seg + 1]
        if t <= t0 or t1 == t0:
            c.x, c.y = x0, y0
        else:
            c.x = x0 + (x1 - x0) * (t - t0) // (t1 - t0)
            c.y = y0 + (y1 - y0) * (t - t0) // (t1 - t0)
        self.hall_dirty = True
        return False

    def _pack_and_gates(self):
        """The chips on the board (in chip_list's order) into hall_in, 4 ints each (x, y,
        polarity, amplitude: HallModel.update_packed's), and the gate beams' levels they make
        into gate_want: each chip once against both beams, the exact test (_touches) only for
        a chip within its radius of a beam's bounding box (a disc that reaches the beam is).
        Returns how many chips. (One pass: a busy step of the world makes it every time.)"""
        a = self.hall_in
        n = 0
        ok_a = ok_b = 1
        ax0, ay0, ax1, ay1 = self.gate_box[0]
        bx0, by0, bx1, by1 = self.gate_box[1]
        for c in self.chip_list:
            if c.state == BOARD and c.amp > 0:
                x = c.x
                y = c.y
                a[n] = x
                a[n + 1] = y
                a[n + 2] = c.polarity
                a[n + 3] = c.amp
                n += 4
                r = c.r
                if (ok_a and ax0 - r <= x <= ax1 + r and ay0 - r <= y <= ay1 + r
                        and _touches(x, y, r, self.gates[0])):
                    ok_a = 0
                if (ok_b and bx0 - r <= x <= bx1 + r and by0 - r <= y <= by1 + r
                        and _touches(x, y, r, self.gates[1])):
                    ok_b = 0
        want = self.gate_want
        want[0] = ok_a
        want[1] = ok_b
        return n >> 2

    def update_gates(self, moved=True):
        """The gate beams' levels; moved: the chips may have changed since they were worked out
        (what breaks a beam changes only with the chips, as hall_dirty says)."""
        want = self.gate_want
        if moved:
            self._pack_and_gates()
        gp = self.gate_pin
        if _level[gp[0]] != want[0]:
            self._drive(gp[0], want[0])
        if _level[gp[1]] != want[1]:
            self._drive(gp[1], want[1])

    def _pulses(self, t):
        keep = []
        for p in self.pulses:
            pin, t0, t1, phase = p
            if phase == 0 and t >= t0:
                self._drive(pin, 0)
                p[3] = phase = 1
            if phase == 1 and t >= t1:
                self._drive(pin, 1)
                p[3] = phase = 2
            if phase < 2:
                keep.append(p)
        self.pulses = keep

    def _drive(self, pin, level):
        import micropython
        micropython.heap_lock()      # a hard IRQ handler runs with the heap locked
        try:
            machine.drive(pin, level)
        finally:
            micropython.heap_unlock()

    # -- faults (issue 4; the timeline's {"op": "fault", ...}) -----------------------------
    def fault(self, o, now_us):
        """Break (or mend) a part of the table. o, one of:
          {"pad": [col, row], "mode": M}   a pad of the grid of either front end (both are
                                           modelled; the firmware reads one). M: stuck_high,
                                           stuck_low, dead, numb, flicker, ok
          {"at": [x, y], "mode": M}        the pad nearest that point (mm), in either grid
          {"mux": N, "mode": M}            hall: first-level multiplexer N (pads 16N..16N+15 in
                                           wiring order; M also "same": every channel reads its
                                           first pad, "frozen": every channel frozen at one
                                           mid-scale raw reading, FROZEN_RAW); presence: shift
                                           register N (columns 8N..8N+7 of every row)
          {"cup": "a"|"b", "mode": "chatter"|"ok"}   the cup's throat beam bounces
          {"hand": [x, y], "ms": N}        a hand hovers over the pads (mm) for N ms
          {"clear": true}                  everything mended
        """
        mode = o.get("mode", "ok")
        h = self.hall
        pm = self.pres
        if "clear" in o:
            if h is not None:
                h.clear_faults()
            if pm is not None:
                pm.clear_faults()
            self.chatter = [0, 0]
        elif "pad" in o or "at" in o:
            if "pad" in o:
                hc, hr = o["pad"]
                pc, pr = o["pad"]
            else:
                x, y = int(round(o["at"][0] * 10)), int(round(o["at"][1] * 10))
                hc, hr = (-1, -1) if h is None else _nearest(x, y, h.x0, h.y0, h.pitch)
                pc, pr = (-1, -1) if pm is None else _nearest(x, y, pm.x0, pm.y0, pm.pitch)
            if h is not None and 0 <= hc < h.cols and 0 <= hr < h.rows:
                pad = h.cell[hr * h.cols + hc]
                if pad >= 0:
                    h.set_fault(pad, _hall_mode(mode))
            if pm is not None and 0 <= pc < pm.cols and 0 <= pr < pm.rows:
                pm.set_fault(pr * pm.cols + pc, _pres_mode(mode))
        elif "mux" in o:
            n = o["mux"]
            first = 16 * n
            for pad in range(first, min(first + 16, h.n if h is not None else 0)):
                if mode == "same":
                    h.set_fault(pad, HM.FAULT_ALIAS - first if pad != first else HM.FAULT_NONE)
                elif mode == "frozen":
                    h.set_fault(pad, FROZEN_RAW)
                else:
                    h.set_fault(pad, _hall_mode(mode))
            if pm is not None and 0 <= n < pm.nsr:
                pm.set_sr_fault(n, _pres_mode(mode))
        elif "cup" in o:
            end = 0 if o["cup"] == "a" else 1
            self.chatter[end] = now_us + 1000 if mode == "chatter" else 0
        elif "hand" in o:
            x, y = o["hand"]
            self.hands.append([int(round(x * 10)), int(round(y * 10)), now_us + int(o.get("ms", 1000)) * 1000])
            self.hall_dirty = True
        self.log.append(("fault", o))

    def _rand(self, n):
        s = self.rng
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self.rng = s
        return s % n

    def _faults_over_time(self, t):
        ch = self.chatter
        if ch[0] or ch[1]:
            for end in (0, 1):
                due = ch[end]
                if due and t >= due:
                    # a bouncing contact: short breaks a few tens of ms apart
                    self.pulses.append([self.cup_pin[end], t, t + 1000 + 1000 * self._rand(3), 0])
                    ch[end] = t + 15000 + 1000 * self._rand(50)
        for h in self.hands:
            if h[2] <= t:       # one has gone: keep the others
                self._hands_left(t)
                self.hall_dirty = True
                break

    def _hands_left(self, t):
        # (a function of its own: a comprehension that uses t makes t a closure cell, which
        # the function then allocates at every call, even when the comprehension never runs)
        self.hands = [h for h in self.hands if h[2] > t]

    def chip_state(self, name):
        c = self.chips[name]
        return c.state, c.x, c.y


# -- the ADC read, fast ----------------------------------------------------------------------
# Under MicroPython each ADC the firmware opens reads through a reader of its own (machine.ADC
# binds world.adc_reader(channel) on the ADC object): a viper closure giving the same reading as
# World.adc_read() and HallModel.read() (a fault anywhere, the noise to draw again, a stand-in
# answering for the world: that very code), made with the world, before the firmware boots (the
# firmware's heap does not hold them).
# On the unix port (_adc_readers) each reader's source is compiled at the world's making with
# the addresses of the arrays it reads (the pin levels, HallModel.fast: ctl, nbuf, clean; its
# channel's slice of PAD_AT; its stand-in flag) and the select pins as literals, and with the
# Python objects of its rare paths in its one closure cell: no global (a viper function that
# names one swaps the globals twice and sets up an exception handler at every call, about 350
# instructions), no object to convert to a pointer (some 120), no table to look its numbers up
# in. A read costs about 300 instructions with the call, against some 1,000 before. On a Pico
# (tools/hil, no compiler to spare heap for) the earlier closure over one array
# (_adc_readers_rp2).
_WORLDS = []            # the worlds with readers, which a reader reaches only on its rare paths
_ATTACHED = machine._world      # [the world machine reads from]: a bench may stand another in
_NB = HM.NB

_READER = """
def make(rare):
    @micropython.viper
    def read_u16() -> int:
        if ptr32(%(flag)d)[0]:              # a stand-in answers (bench/target/b_loop.py's Replay)
            return int(rare[0][0].adc_read(%(channel)d))
        lv = ptr8(%(lv)d)
        pad = int(ptr32(%(pads)d)[((lv[%(b0)d] | (lv[%(b1)d] << 1) | (lv[%(b2)d] << 2) | (lv[%(b3)d] << 3)) * %(channels)d)
                                  + (lv[%(c0)d] | (lv[%(c1)d] << 1) | (lv[%(c2)d] << 2) | (lv[%(c3)d] << 3))])
        if pad >> 31:                       # -1: no pad at that address
            return %(zero)d
        f = ptr32(%(fast)d)                 # HallModel.fast: ctl, nbuf, clean
        if f[1]:                            # a fault somewhere: HallModel.read() itself
            return int(rare[1].read(pad))
        i = int(f[0])
        if i >= %(nb)d:
            rare[1]._draw()
            i = 0
        f[0] = i + 1
        v = ((int(f[2 + %(nb)d + pad]) << 32) >> 32) + ((int(f[2 + i]) << 32) >> 32)    # (int32s)
        if v < 0:
            return 0
        if v > 65535:
            return 65535
        v >>= 4                             # 12 bits, as read_u16 gives them (hall_model.read)
        return (v << 4) | (v >> 8)
    return read_u16
"""


def _adc_readers(world):
    """The zero-argument read_u16 functions, one per ADC channel."""
    if sys.implementation.name != "micropython":
        return [_adc_closure_py(world, channel) for channel in range(_N_ADC)]
    if sys.platform == "rp2":
        return _adc_readers_rp2(world)
    import uctypes
    per = _BANKS * _CHANNELS
    rare = (_ATTACHED, world.hall)
    out = []
    for channel in range(_N_ADC):
        # [0]: 1 while a stand-in answers for the world (World.stand_in); then this channel's
        # PAD_AT (BANKS x CHANNELS; -1, no pad: 0xFFFFFFFF)
        ctx = array('I', bytes(4 * (1 + per)))
        for i in range(per):
            ctx[1 + i] = _PAD_AT[channel * per + i] & 0xFFFFFFFF
        world.adc_ctx.append(ctx)
        a = uctypes.addressof(ctx)
        c = world.sel_ch
        b = world.sel_bank
        src = _READER % {"flag": a, "pads": a + 4, "lv": uctypes.addressof(_level),
                         "fast": uctypes.addressof(world.hall.fast), "channel": channel,
                         "channels": _CHANNELS, "zero": _ADC_ZERO, "nb": _NB,
                         "c0": c[0], "c1": c[1], "c2": c[2], "c3": c[3],
                         "b0": b[0], "b1": b[1], "b2": b[2], "b3": b[3]}
        g = {"micropython": micropython}
        exec(src, g)
        out.append(g["make"](rare))
    return out


def _adc_closure_py(world, channel):
    """CPython's reader: the same reading as World.adc_read() and HallModel.read(), with the
    pins, the channel's slice of PAD_AT and the model's arrays in the closure (a third of a
    CPython game's time went to the three calls of a read)."""
    flag = array('I', bytes(4))         # 1 while a stand-in answers (World.stand_in)
    world.adc_ctx.append(flag)
    lv = _level
    c0, c1, c2, c3 = world.sel_ch
    b0, b1, b2, b3 = world.sel_bank
    per = _BANKS * _CHANNELS
    pads = _PAD_AT[channel * per:(channel + 1) * per]
    hall = world.hall
    fast = hall.fast                    # ctl, nbuf, clean
    nb = _NB
    clean0 = 2 + nb
    chans = _CHANNELS
    zero = _ADC_ZERO
    attached = _ATTACHED

    def read_u16():
        if flag[0]:
            return attached[0].adc_read(channel)
        pad = pads[(lv[b0] | (lv[b1] << 1) | (lv[b2] << 2) | (lv[b3] << 3)) * chans
                   + (lv[c0] | (lv[c1] << 1) | (lv[c2] << 2) | (lv[c3] << 3))]
        if pad < 0:
            return zero
        if fast[1]:
            return hall.read(pad)
        i = fast[0]
        if i >= nb:
            hall._draw()
            i = 0
        fast[0] = i + 1
        v = fast[clean0 + pad] + fast[2 + i]
        if v < 0:
            return 0
        if v > 65535:
            return 65535
        return ((v >> 4) << 4) | (v >> 12)
    return read_u16


# The Pico's (tools/hil): one viper closure over one array, which holds the channel, the
# addresses of the pin levels and of the hall model's arrays (HallModel.fast: ctl, nbuf, clean),
# the select pins, and this channel's slice of PAD_AT.
# ctx: [0] 1 while a stand-in answers for the world (World.stand_in), [1] CHANNELS, [2] NB,
# [3] ADC_ZERO, [4:6] the levels' address (low, high word), [6:8] HallModel.fast's, [8] the
# channel, [9:13] the channel select pins, [13:17] the bank select pins, [17] the world's index in
# _WORLDS, then PAD_AT[channel] (BANKS x CHANNELS; -1, no pad: 0xFFFFFFFF)
_CTX_PAD_AT = const(18)


def _adc_readers_rp2(world):
    import uctypes
    lv = uctypes.addressof(_level)
    fa = uctypes.addressof(world.hall.fast)
    _WORLDS.append(world)
    per = _BANKS * _CHANNELS
    out = []
    for channel in range(_N_ADC):
        ctx = array('I', bytes(4 * (_CTX_PAD_AT + per)))
        head = ((0, _CHANNELS, _NB, _ADC_ZERO, lv & 0xFFFFFFFF, lv >> 32, fa & 0xFFFFFFFF, fa >> 32,
                 channel) + world.sel_ch + world.sel_bank + (len(_WORLDS) - 1,))
        for i, v in enumerate(head):
            ctx[i] = v
        for i in range(per):
            ctx[_CTX_PAD_AT + i] = _PAD_AT[channel * per + i] & 0xFFFFFFFF
        world.adc_ctx.append(ctx)
        out.append(_adc_closure(ctx))
    return out


if sys.implementation.name == "micropython":
    def _adc_closure(ctx):
        @micropython.viper
        def read_u16() -> int:
            s = ptr32(ctx)
            if s[0]:                        # a stand-in answers (bench/target/b_loop.py's Replay)
                return int(_ATTACHED[0].adc_read(int(s[8])))
            lv = ptr8(int(s[4]) | (int(s[5]) << 32))
            bank = lv[s[13]] | (lv[s[14]] << 1) | (lv[s[15]] << 2) | (lv[s[16]] << 3)
            ch = lv[s[9]] | (lv[s[10]] << 1) | (lv[s[11]] << 2) | (lv[s[12]] << 3)
            pad = int(s[_CTX_PAD_AT + bank * int(s[1]) + ch])
            if pad >> 31:                   # -1: no pad at that address
                return int(s[3])            # ADC_ZERO
            f = ptr32(int(s[6]) | (int(s[7]) << 32))    # HallModel.fast: ctl, nbuf, clean
            if f[1]:                        # a fault somewhere: HallModel.read() itself
                return int(_WORLDS[int(s[17])].hall.read(pad))
            nb = int(s[2])
            i = int(f[0])
            if i >= nb:
                _WORLDS[int(s[17])].hall._draw()
                i = 0
            f[0] = i + 1
            s16 = 1 << 16
            w32 = s16 * s16                 # 2**32 for the sign below, made at run time (hall_model)
            n = int(f[2 + i])
            if n >> 31:
                n -= w32
            v = int(f[2 + nb + pad])
            if v >> 31:
                v -= w32
            v += n
            if v < 0:
                return 0
            if v > 65535:
                return 65535
            v >>= 4                         # 12 bits, as read_u16 gives them (hall_model.read)
            return (v << 4) | (v >> 8)
        return read_u16


def _nearest(x, y, x0, y0, pitch):
    return (x - x0 + pitch // 2) // pitch, (y - y0 + pitch // 2) // pitch


# a hall mux frozen mid-scale ({"mux": N, "mode": "frozen"}): every channel reads this raw value,
# 2768 LSB below the sensors' zero (bench/rp2040_profile.py's "raw" fault; issue 13)
FROZEN_RAW = 30000


def _hall_mode(mode):
    return {"stuck_high": 65535, "stuck_low": 0, "dead": HM.FAULT_DEAD, "numb": HM.FAULT_NUMB,
            "flicker": HM.FAULT_FLICKER, "ok": HM.FAULT_NONE}[mode]


def _pres_mode(mode):
    return {"stuck_high": PM.STUCK_ON, "stuck_low": PM.STUCK_OFF, "dead": PM.STUCK_OFF,
            "numb": PM.STUCK_OFF, "flicker": PM.FLICKER, "same": PM.STUCK_OFF, "frozen": PM.STUCK_OFF,
            "ok": PM.FAULT_NONE}[mode]


def _touches(cx, cy, r, seg):
    """A disc at (cx, cy) of radius r reaches the segment seg (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = seg
    dx, dy = x1 - x0, y1 - y0
    L2 = dx * dx + dy * dy
    t = ((cx - x0) * dx + (cy - y0) * dy)
    if t < 0:
        t = 0
    elif t > L2:
        t = L2
    ex = cx - (x0 + dx * t // L2)
    ey = cy - (y0 + dy * t // L2)
    return ex * ex + ey * ey <= r * r
