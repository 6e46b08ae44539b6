"""The hall pads of the simulated table: what each linear hall sensor reads with the chips
where they are. Runs in the firmware's interpreter (MicroPython unix port or CPython), same code,
same numbers: integers only, noise from an integer xorshift32.

A pad reads  ADC_ZERO + its own offset + the field of every chip + noise,  where a chip at
horizontal distance rho adds  polarity * ADC_PEAK * amplitude/1000 * FIELD(rho^2) / FIELD_SCALE
(FIELD: B_z of a vertical dipole at the magnet height, tabulated against rho^2 by
tools/gen_tables.py, interpolated linearly here). Small chips are north up (+), big chips south
up (-). `amplitude_permille` lets a hand fade a chip in or out (and can model magnet tolerance).

- update(chips) and update_packed(array, n) (the world's, allocating nothing under MicroPython)
  are called between firmware steps with the heap unlocked; they recompute only the pads within
  FIELD_REACH of a chip, before or after.
- read(pad) is called from ADC.read_u16 with the heap locked: it allocates nothing. It reads as
  the RP2040's ADC does: the sensor's voltage, noise included, converted to 12 bits,
  which the rp2 port's read_u16() scales to 16 (value << 4 | value >> 8). The 16-bit readings
  the model used to give were finer than any Pico's: a pad whose noise lies within one LSB of
  12 bits reads one value again and again there (the fault monitor took such pads as frozen on
  the emulated chip; issue 13).

Fault hooks (issue 4): fault[pad] is FAULT_NONE, a stuck raw value 0..65535, FAULT_DEAD (the
output sits at ground: reads 0 plus noise), FAULT_NUMB (the sensor no longer sees the field:
reads its offset plus noise), FAULT_FLICKER (a loose contact: each read is either the true
reading or ground, at random) or FAULT_ALIAS - k (the read gets pad k's sensor instead: a
multiplexer whose channel select is stuck reads one sensor on all of its channels).
"""
import sys
from array import array

FAULT_NONE = -1
FAULT_DEAD = -2
FAULT_NUMB = -3
FAULT_FLICKER = -4
FAULT_ALIAS = -100000

_MASK32 = 0xFFFFFFFF
NB = 1024             # noise values made ahead (the same sequence, drawn in batches)
_SUM = 0x3FF          # nraw: the byte sum (bit 15: the coin)


class HallModel:
    def __init__(self, table, seed=0x2545F491):
        T = table
        self.T = T
        n = T.N_PADS
        self.n = n
        self.base = array('i', (T.ADC_ZERO + T.PAD_OFFSET[p] for p in range(n)))
        self.field = array('i', (0 for _ in range(n)))      # sum of the chips' fields, LSB
        self.fault = array('i', (FAULT_NONE for _ in range(n)))
        # The noise, drawn NB values at a time (_draw: one xorshift32 step per value, in viper
        # under MicroPython): nraw the byte sums (0..1020) with bit 8 of the state after each
        # in bit 15 (a flickering pad's coin), nbuf the sums scaled by noise_lsb (ntab, int32:
        # no sign to put back in viper). ctl: [the next one to use,
        # how many pads have a fault] (an array: the world's fast ADC read shares it).
        # the state after the last value drawn, in an array: a 32-bit state returned from viper
        # as an int is a heap object on the RP2040 (ints past 2**30), which the heap-locked
        # loop turn of a HIL run on a Pico cannot make
        self.rng = array('I', (seed & _MASK32 or 1,))
        self.nraw = array('H', bytes(2 * NB))
        # ctl, nbuf and clean (base + field: the noiseless reading) are views of one array, so
        # that the world's fast ADC read (world.py) reaches all three through one pointer
        self.fast = array('i', bytes(4 * (2 + NB + n)))
        mv = memoryview(self.fast)
        self.ctl = mv[0:2]
        self.nbuf = mv[2:2 + NB]
        self.clean = mv[2 + NB:2 + NB + n]
        self.ctl[0] = NB
        for p in range(n):
            self.clean[p] = self.base[p]
        self._lsb = T.NOISE_LSB
        self.ntab = _scale_table(self._lsb)
        self.chips = ()         # the chips of the last update (CPython; MicroPython keeps pk)
        # MicroPython: the chips of the last update packed, [n, x, y, polarity, amplitude, ...]
        self.pk = array('i', bytes(4 * (1 + 4 * 16)))
        # the pad grid, recovered from the pad positions: grid cell -> pad, -1 where none
        xs = sorted(set(T.PAD_X))
        ys = sorted(set(T.PAD_Y))
        steps = [b - a for a, b in zip(xs, xs[1:])] + [b - a for a, b in zip(ys, ys[1:])]
        self.pitch = min(steps) if steps else 1
        self.x0 = xs[0]
        self.y0 = ys[0]
        self.cols = (xs[-1] - xs[0]) // self.pitch + 1
        self.rows = (ys[-1] - ys[0]) // self.pitch + 1
        self.cell = array('h', (-1 for _ in range(self.cols * self.rows)))
        for p in range(n):
            c = (T.PAD_X[p] - self.x0) // self.pitch
            r = (T.PAD_Y[p] - self.y0) // self.pitch
            self.cell[r * self.cols + c] = p
        self.reach = T.FIELD_REACH
        self.reach2 = T.FIELD_REACH * T.FIELD_REACH
        self.mark = array('i', (0 for _ in range(n)))
        self.stamp = 0
        self.ctx = None         # _update_viper's arrays, made at its first call

    # -- the field ---------------------------------------------------------------------------
    def profile(self, d2):
        """FIELD at rho^2 = d2 (0.01 mm^2), linearly interpolated; 0 beyond FIELD_REACH."""
        if d2 >= self.reach2:
            return 0
        T = self.T
        b = d2 // T.FIELD_BIN
        f0 = T.FIELD[b]
        return f0 + (T.FIELD[b + 1] - f0) * (d2 - b * T.FIELD_BIN) // T.FIELD_BIN

    def chip_field(self, pad, chip):
        x, y, pol, amp = chip
        T = self.T
        dx = T.PAD_X[pad] - x
        dy = T.PAD_Y[pad] - y
        f = self.profile(dx * dx + dy * dy)
        return pol * T.ADC_PEAK * amp * f // (1000 * T.FIELD_SCALE)

    def _pads_near(self, x, y, out):
        """Append to `out` every pad within FIELD_REACH of (x, y) not yet marked this update."""
        p = self.pitch
        c0 = (x - self.reach - self.x0) // p
        c1 = (x + self.reach - self.x0) // p + 1
        r0 = (y - self.reach - self.y0) // p
        r1 = (y + self.reach - self.y0) // p + 1
        c0 = max(c0, 0)
        r0 = max(r0, 0)
        c1 = min(c1, self.cols - 1)
        r1 = min(r1, self.rows - 1)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                pad = self.cell[r * self.cols + c]
                if pad >= 0 and self.mark[pad] != self.stamp:
                    self.mark[pad] = self.stamp
                    out.append(pad)

    def update(self, chips):
        """chips: a sequence of (x, y, polarity, amplitude_permille), positions in 0.1 mm."""
        if _refield is not None:
            a = array('i', bytes(16 * len(chips)))
            for k, c in enumerate(chips):
                for i in range(4):
                    a[4 * k + i] = c[i]
            self.update_packed(a, len(chips))
            return
        new = tuple(tuple(c) for c in chips)
        if new == self.chips:
            return
        self.stamp += 1
        dirty = []
        for c in self.chips:
            self._pads_near(c[0], c[1], dirty)
        for c in new:
            self._pads_near(c[0], c[1], dirty)
        self.chips = new
        # chip_field() for every dirty pad and chip, written out (the same integer steps)
        T = self.T
        px = T.PAD_X
        py = T.PAD_Y
        table = T.FIELD
        fbin = T.FIELD_BIN
        reach2 = self.reach2
        peak = T.ADC_PEAK
        div = 1000 * T.FIELD_SCALE
        field = self.field
        clean = self.clean
        base = self.base
        for pad in dirty:
            x0 = px[pad]
            y0 = py[pad]
            f = 0
            for x, y, pol, amp in new:
                dx = x0 - x
                dy = y0 - y
                d2 = dx * dx + dy * dy
                if d2 < reach2:
                    b = d2 // fbin
                    f0 = table[b]
                    f += pol * peak * amp * (f0 + (table[b + 1] - f0) * (d2 - b * fbin) // fbin) // div
            field[pad] = f
            clean[pad] = base[pad] + f

    def update_packed(self, a, n):
        """update() of n chips given as array a: x, y, polarity, amplitude, 4 ints a chip. What
        the world calls at every step while a chip moves: under MicroPython nothing allocated
        (an allocation between steps costs some 5,000 instructions in the runner's fragmented
        heap) and the chips compared in machine code (_changes): only the field of the chips
        that moved, came or went is taken off or added (_refield), pad by pad within their
        reach, the same integers as update()'s sum over every chip."""
        if _refield is None:
            self._update_unpacked(a, n)
            return
        if self.ctx is None:
            self._prepare()
        pk = self.pk
        if pk[0] + n > 16:
            self._too_many(a, n)
            return
        nch = _changes(pk, a, n, self.carr, self.T.ADC_PEAK)
        if nch == 0:
            return                      # the same chips as before
        self.ctx[2] = nch
        _refield(self.ctx, self.cell, self.geo, self.ftab, self.carr, self.field, self.clean, self.base)

    def _update_unpacked(self, a, n):
        # CPython: update() as it is (apart: the comprehension would make a a closure cell)
        self.update([tuple(a[4 * i:4 * i + 4]) for i in range(n)])

    def _prepare(self):
        # _refield's arrays, at the first update (apart from update_packed: its generator would
        # make T a closure cell there, allocated at every call)
        T = self.T
        self.ctx = array('i', (0, 0, 0, self.cols, self.rows, self.x0, self.y0, self.pitch,
                               self.reach, self.reach2, T.FIELD_BIN, 1000 * T.FIELD_SCALE))
        # each pad's place from the grid's corner (x0, y0), never negative: no sign to put back
        self.geo = array('i', (T.PAD_X[p] - self.x0 if k == 0 else T.PAD_Y[p] - self.y0
                               for p in range(self.n) for k in (0, 1)))
        self.ftab = array('i', T.FIELD)
        self.carr = array('i', bytes(4 * 4 * 16))

    def _too_many(self, a, n):
        # (apart: its generator would make pk and a closure cells, allocated at every call of
        # update_packed)
        if n != self.pk[0] or any(self.pk[1 + i] != a[i] for i in range(4 * n)):
            raise ValueError("hall_model: more than 16 chips")

    # -- faults (issue 4) --------------------------------------------------------------------
    def set_fault(self, pad, mode):
        self.fault[pad] = mode
        self._count()

    def clear_faults(self):
        for p in range(self.n):
            self.fault[p] = FAULT_NONE
        self._count()

    def _count(self):
        n = 0
        for p in range(self.n):
            if self.fault[p] != FAULT_NONE:
                n += 1
        self.ctl[1] = n

    # -- the noise -------------------------------------------------------------------------------
    @property
    def noise_lsb(self):
        return self._lsb

    @noise_lsb.setter
    def noise_lsb(self, lsb):
        # (heap unlocked: a test's setting) the values drawn but not used yet take the new scale
        self._lsb = lsb
        self.ntab = _scale_table(lsb)
        for i in range(self.ctl[0], NB):
            self.nbuf[i] = self.ntab[self.nraw[i] & _SUM]

    @property
    def state(self):
        return self.rng[0]

    def _draw(self):
        _draw(self.nraw, self.nbuf, NB, self.rng, self.ntab)
        self.ctl[0] = 0

    # -- the ADC's side (heap locked) ---------------------------------------------------------
    def noise(self):
        """About N(0, NOISE_LSB): the sum of the four bytes of one xorshift32 output."""
        ctl = self.ctl
        i = ctl[0]
        if i >= NB:
            self._draw()
            i = 0
        ctl[0] = i + 1
        return self.nbuf[i]

    def read(self, pad):
        ctl = self.ctl
        if not ctl[1]:
            i = ctl[0]
            if i >= NB:
                self._draw()
                i = 0
            ctl[0] = i + 1
            v = self.clean[pad] + self.nbuf[i]
            if v < 0:
                return 0
            if v > 65535:
                return 65535
            return ((v >> 4) << 4) | (v >> 12)      # 12 bits, as read_u16 gives them
        f = self.fault[pad]
        if f <= FAULT_ALIAS:
            pad = FAULT_ALIAS - f
            f = self.fault[pad] if self.fault[pad] > FAULT_ALIAS else FAULT_NONE
        if f == FAULT_NONE:
            v = self.clean[pad] + self.noise()
        elif f >= 0:
            v = f & 0xFFFF
            return ((v >> 4) << 4) | (v >> 12)
        elif f == FAULT_DEAD:
            v = self.noise()
        elif f == FAULT_FLICKER:
            v = self.noise()
            if self.nraw[self.ctl[0] - 1] >> 15:
                v += self.clean[pad]
        else:
            v = self.base[pad] + self.noise()
        if v < 0:
            return 0
        if v > 65535:
            return 65535
        return ((v >> 4) << 4) | (v >> 12)


def _scale_table(lsb):
    # a byte sum u (0..1020) -> its noise: the sum of four uniform bytes has a standard
    # deviation of 147.8, so (u - 510) * 7 / 1035 is about N(0, 1)
    return array('i', ((u - 510) * lsb * 7 // 1035 for u in range(1021)))


if sys.implementation.name == "micropython":
    import micropython

    @micropython.viper
    def _refield(ctx: ptr32, cell: ptr16, geo: ptr32, ftab: ptr32, chips: ptr32, field: ptr32,
                 clean: ptr32, base: ptr32):
        """HallModel.update_packed(): for each of the ctx[2] chips that changed (_changes: x, y,
        pol * ADC_PEAK * amp, 1 to add its field or 0 to take it off), its field at every pad
        within its reach added to or taken off that pad's (field is the sum of the chips' own
        fields, each an integer worked out as update() does: the sum the same as update()'s
        from scratch, whatever the order). (A ptr32 loads without sign on the 64-bit port: a
        value with bit 31 set is taken 2**32 back down. 2**32 is made at run time: a literal
        that big is an object to mpy-cross's viper, which then refuses the function, as
        tools/hil's -march=x64 build found.) Before: every pad in reach of any chip, old or
        new, moved or not, from every chip (some 30,000 instructions a step of one chip)."""
        s16 = 1 << 16
        w32 = s16 * s16
        nch = int(ctx[2])
        cols = int(ctx[3])
        rows = int(ctx[4])
        gx0 = int(ctx[5])
        gy0 = int(ctx[6])
        pitch = int(ctx[7])
        reach = int(ctx[8])
        reach2 = int(ctx[9])
        fbin = int(ctx[10])
        div = int(ctx[11])
        kk = div // 1000                # (div is 1000 * FIELD_SCALE: update())
        if gx0 >> 31:
            gx0 -= w32
        if gy0 >> 31:
            gy0 -= w32
        j = 0
        while j < nch:
            cx = int(chips[4 * j])
            cy = int(chips[4 * j + 1])
            m = int(chips[4 * j + 2])
            add = int(chips[4 * j + 3])
            if cx >> 31:
                cx -= w32
            if cy >> 31:
                cy -= w32
            if m >> 31:
                m -= w32
            cx -= gx0                   # (from the grid's corner, as geo)
            cy -= gy0
            # m * t // div within 32-bit words (viper's ints on the RP2040, where m * t reaches
            # 2**38): div = 1000 * kk and m = q * 1000 + rm, q * t = u * kk + v, so the quotient
            # is u + (v * 1000 + rm * t) // div, exactly
            q = m // 1000
            rm = m - q * 1000
            c0 = (cx - reach) // pitch
            c1 = (cx + reach) // pitch + 1
            r0 = (cy - reach) // pitch
            r1 = (cy + reach) // pitch + 1
            if c0 < 0:
                c0 = 0
            if r0 < 0:
                r0 = 0
            if c1 > cols - 1:
                c1 = cols - 1
            if r1 > rows - 1:
                r1 = rows - 1
            r = r0
            while r <= r1:
                c = c0
                while c <= c1:
                    pad = int(cell[r * cols + c])
                    if (pad & 0x8000) == 0:
                        dx = int(geo[2 * pad]) - cx
                        dy = int(geo[2 * pad + 1]) - cy
                        d2 = dx * dx + dy * dy
                        if d2 < reach2:
                            b = d2 // fbin
                            f0 = int(ftab[b])
                            f1 = int(ftab[b + 1])
                            if f0 >> 31:
                                f0 -= w32
                            if f1 >> 31:
                                f1 -= w32
                            t = f0 + (f1 - f0) * (d2 - b * fbin) // fbin
                            qt = q * t
                            u = qt // kk
                            f = u + ((qt - u * kk) * 1000 + rm * t) // div
                            v = int(field[pad])
                            if v >> 31:
                                v -= w32
                            if add:
                                v += f
                            else:
                                v -= f
                            field[pad] = v
                            f = int(base[pad])
                            if f >> 31:
                                f -= w32
                            clean[pad] = f + v
                    c += 1
                r += 1
            j += 1

    @micropython.viper
    def _changes(pk: ptr32, a: ptr32, n: int, carr: ptr32, peak: int) -> int:
        """HallModel.update_packed(): the chips of the last update (pk: n, then x, y, polarity,
        amplitude each) against a's n: each of pk's with no equal one in a, to take off, and
        each of a's with none in pk, to add, into carr as (x, y, pol * ADC_PEAK * amp, 1 to
        add or 0); a into pk. Returns how many (0: the same chips). (ptr32 loads are unsigned
        on the 64-bit port: the signs put back as _refield does.)"""
        s16 = 1 << 16
        w32 = s16 * s16
        nold = int(pk[0])
        used = 0                        # a's chips matched, a bit each (16 at most)
        nch = 0
        j = 0
        while j < nold + n:
            if j < nold:                # one of pk's: taken off unless a has it
                src = pk
                o = 1 + 4 * j
                k = 0
                while k < n:
                    if ((used >> k) & 1) == 0 and int(a[4 * k]) == int(pk[o]) and int(a[4 * k + 1]) == int(pk[o + 1]) \
                            and int(a[4 * k + 2]) == int(pk[o + 2]) and int(a[4 * k + 3]) == int(pk[o + 3]):
                        used |= 1 << k
                        break
                    k += 1
                if k < n:
                    j += 1
                    continue
                add = 0
            else:                       # one of a's: added unless it matched
                k = j - nold
                if (used >> k) & 1:
                    j += 1
                    continue
                src = a
                o = 4 * k
                add = 1
            pol = int(src[o + 2])
            amp = int(src[o + 3])
            if pol >> 31:
                pol -= w32
            if amp >> 31:
                amp -= w32
            carr[4 * nch] = src[o]
            carr[4 * nch + 1] = src[o + 1]
            carr[4 * nch + 2] = pol * peak * amp
            carr[4 * nch + 3] = add
            nch += 1
            j += 1
        k = 0
        while k < 4 * n:
            pk[1 + k] = a[k]
            k += 1
        pk[0] = n
        return nch

    @micropython.viper
    def _draw(raw: ptr16, buf: ptr32, n: int, st: ptr32, tab: ptr32):
        """n values of the noise from the state st[0] (xorshift32), left there after the last.
        (The mask made at run time: a literal 0xFFFFFFFF is an object to mpy-cross's viper, two
        conversions a value; the four bytes summed two at a time; the coin beside the sum in
        raw; some 200 instructions a value on the unix port before, about 110 so.)"""
        s = uint(st[0])
        m = uint(0xFFFF)
        m = (m << 16) | m
        i = 0
        while i < n:
            s ^= (s << 13) & m
            s ^= s >> 17
            s ^= (s << 5) & m
            u = (s & 0x00FF00FF) + ((s >> 8) & 0x00FF00FF)
            u = (u & 0xFFFF) + (u >> 16)
            buf[i] = tab[u]
            raw[i] = u | ((s << 7) & 0x8000)        # (bit 8 of s into bit 15)
            i += 1
        st[0] = s
else:
    _refield = None     # CPython: update() runs the same steps as Python

    def _update_unpacked_cpython(self, a, n):
        """update_packed() under CPython: as _changes and _refield do under MicroPython, only
        the chips that changed (each one gone taken off, each one come added, matched as equal
        4-tuples) have their field taken off or added, pad by pad within their reach; each
        chip's field at a pad the same integer as update()'s term for it, so every pad's sum
        is the one update() makes from scratch (the same values, pad for pad). update() took
        every pad in reach of every chip, moved or not, from every chip: with four chips on
        the board some 15 % of a CPython hall game."""
        new = tuple(tuple(a[4 * i:4 * i + 4]) for i in range(n))
        old = self.chips
        if new == old:
            return
        gone = list(old)
        come = []
        for c in new:
            if c in gone:
                gone.remove(c)
            else:
                come.append(c)
        self.chips = new
        for c in gone:
            _refield_py(self, c, -1)
        for c in come:
            _refield_py(self, c, 1)

    def _refield_py(self, chip, sign):
        x, y, pol, amp = chip
        T = self.T
        m = pol * T.ADC_PEAK * amp
        if m == 0:
            return                      # (every term of it 0)
        p = self.pitch
        reach = self.reach
        cols = self.cols
        c0 = max((x - reach - self.x0) // p, 0)
        c1 = min((x + reach - self.x0) // p + 1, cols - 1)
        r0 = max((y - reach - self.y0) // p, 0)
        r1 = min((y + reach - self.y0) // p + 1, self.rows - 1)
        px = T.PAD_X
        py = T.PAD_Y
        table = T.FIELD
        fbin = T.FIELD_BIN
        reach2 = self.reach2
        div = 1000 * T.FIELD_SCALE
        cell = self.cell
        field = self.field
        clean = self.clean
        base = self.base
        for r in range(r0, r1 + 1):
            row = r * cols
            for pad in cell[row + c0:row + c1 + 1]:
                if pad < 0:
                    continue
                dx = px[pad] - x
                dy = py[pad] - y
                d2 = dx * dx + dy * dy
                if d2 < reach2:
                    b = d2 // fbin
                    f0 = table[b]
                    f = m * (f0 + (table[b + 1] - f0) * (d2 - b * fbin) // fbin) // div
                    v = field[pad] + (f if sign > 0 else -f)
                    field[pad] = v
                    clean[pad] = base[pad] + v

    HallModel._update_unpacked = _update_unpacked_cpython

    def _draw(raw, buf, n, st, tab):
        """The same in plain Python (CPython)."""
        s = st[0]
        for i in range(n):
            s ^= (s << 13) & _MASK32
            s ^= s >> 17
            s ^= (s << 5) & _MASK32
            u = (s & 255) + ((s >> 8) & 255) + ((s >> 16) & 255) + (s >> 24)
            raw[i] = u | (((s >> 8) & 1) << 15)
            buf[i] = tab[u]
        st[0] = s
