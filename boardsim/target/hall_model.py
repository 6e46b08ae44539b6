"""The hall pads of the simulated table: what each linear hall sensor reads with the chips
where they are. Runs in the firmware's interpreter (MicroPython unix port or CPython), same code,
same numbers: integers only, noise from an integer xorshift32.

A pad reads  ADC_ZERO + its own offset + the field of every chip + noise,  where a chip at
horizontal distance rho adds  polarity * ADC_PEAK * amplitude/1000 * FIELD(rho^2) / FIELD_SCALE
(FIELD: B_z of a vertical dipole at the magnet height, tabulated against rho^2 by
tools/gen_tables.py, interpolated linearly here). Small chips are north up (+), big chips south
up (-). `amplitude_permille` lets a hand fade a chip in or out (and can model magnet tolerance).

- update(chips) is called between firmware steps with the heap unlocked: it may allocate, but
  recomputes only the pads within FIELD_REACH of a chip, before or after.
- read(pad) is called from ADC.read_u16 with the heap locked: it allocates nothing.

Fault hooks (issue 4): fault[pad] is FAULT_NONE, a stuck raw value 0..65535, FAULT_DEAD (the
output sits at ground: reads 0 plus noise), FAULT_NUMB (the sensor no longer sees the field:
reads its offset plus noise), FAULT_FLICKER (a loose contact: each read is either the true
reading or ground, at random) or FAULT_ALIAS - k (the read gets pad k's sensor instead: a
multiplexer whose channel select is stuck reads one sensor on all of its channels).
"""
from array import array

FAULT_NONE = -1
FAULT_DEAD = -2
FAULT_NUMB = -3
FAULT_FLICKER = -4
FAULT_ALIAS = -100000

_MASK32 = 0xFFFFFFFF


class HallModel:
    def __init__(self, table, seed=0x2545F491):
        T = table
        self.T = T
        n = T.N_PADS
        self.n = n
        self.base = array('i', (T.ADC_ZERO + T.PAD_OFFSET[p] for p in range(n)))
        self.field = array('i', (0 for _ in range(n)))      # sum of the chips' fields, LSB
        self.clean = array('i', self.base)                   # base + field: the noiseless reading
        self.fault = array('i', (FAULT_NONE for _ in range(n)))
        self.noise_lsb = T.NOISE_LSB
        self.state = seed & _MASK32 or 1
        self.chips = ()
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
        for pad in dirty:
            f = 0
            for c in new:
                f += self.chip_field(pad, c)
            self.field[pad] = f
            self.clean[pad] = self.base[pad] + f

    # -- faults (issue 4) --------------------------------------------------------------------
    def set_fault(self, pad, mode):
        self.fault[pad] = mode

    def clear_faults(self):
        for p in range(self.n):
            self.fault[p] = FAULT_NONE

    # -- the ADC's side (heap locked) ---------------------------------------------------------
    def noise(self):
        """About N(0, NOISE_LSB): the sum of the four bytes of one xorshift32 output."""
        s = self.state
        s ^= (s << 13) & _MASK32
        s ^= s >> 17
        s ^= (s << 5) & _MASK32
        self.state = s
        u = (s & 255) + ((s >> 8) & 255) + ((s >> 16) & 255) + (s >> 24) - 510
        # the sum of four uniform bytes has a standard deviation of 147.8
        return u * self.noise_lsb * 7 // 1035

    def read(self, pad):
        f = self.fault[pad]
        if f <= FAULT_ALIAS:
            pad = FAULT_ALIAS - f
            f = self.fault[pad] if self.fault[pad] > FAULT_ALIAS else FAULT_NONE
        if f == FAULT_NONE:
            v = self.clean[pad] + self.noise()
        elif f >= 0:
            return f & 0xFFFF
        elif f == FAULT_DEAD:
            v = self.noise()
        elif f == FAULT_FLICKER:
            v = self.noise()
            if self.state & 256:
                v += self.clean[pad]
        else:
            v = self.base[pad] + self.noise()
        if v < 0:
            return 0
        if v > 65535:
            return 65535
        return v
