"""The presence pads of the simulated table (front end "shift", docs/sensing.md): IR reflective
pads on a square grid, each telling how much of its window something covers in PRES_LEVELS
steps, read as a matrix: a strobe (row select pins, a Gray code) lights a line of PRES_RPS rows
at one level's LED current, the 74HC165s take in its columns on the falling edge of their
parallel load pin and SPI shifts them out (row by row of the line). Runs in the firmware's
interpreter (MicroPython unix port or CPython), same code, same numbers: integers only.

A pad sees a chip at level k when its centre lies within  seen radius + PRES_REACH[cell * L + k]
of the chip's centre, where the seen radius is the chip's radius less PRES_RIM (its rounded rim
reflects too little) and PRES_REACH is where that pad's switching point for the level puts the
edge across its window (tools/gen_tables.py); its level (state) is how many levels see one. A chip counts once a hand has lowered it most of the way (amplitude at
least half). A hand hovering over the pads covers them too: a disc of HAND_R, its rim ragged
(the cells within HAND_RAGGED of it switch at random, read by read). The world shows one over
each chip put down or lifted (world.py, HAND_BEFORE_MS; docs/simulator.md, "Hands") and where a
test's {"fault": {"hand": ...}} step hovers one.

- update(chips, hands) between firmware steps (heap unlocked; recomputes the cells near what
  moved, before and after).
- latch() from the load pin's falling edge and read(buf) from SPI.readinto, with the heap
  locked: they allocate nothing.

Faults (issue 4): per cell FAULT_NONE, STUCK_ON (reads covered), STUCK_OFF (never covered) or
FLICKER (random, read by read); a whole shift register (8 columns of every row) likewise.
"""
import sys
from array import array

FAULT_NONE = 0
STUCK_ON = 1
STUCK_OFF = 2
FLICKER = 3

HAND_R = 450          # a palm, 0.1 mm
HAND_RAGGED = 60
SEEN_PERMILLE = 500   # a chip being put down is seen from this amplitude on

_MASK32 = 0xFFFFFFFF


def gray_row(code):
    """The strobe a Gray code selects."""
    r = code
    s = code >> 1
    while s:
        r ^= s
        s >>= 1
    return r


class PresenceModel:
    def __init__(self, table, seed=0x1B873593):
        T = table
        self.T = T
        self.cols = T.PRES_COLS
        self.rows = T.PRES_ROWS
        self.pitch = T.PRES_PITCH
        self.x0 = T.PRES_X0
        self.y0 = T.PRES_Y0
        self.nsr = T.PRES_SR                  # registers a row
        self.nlev = T.PRES_LEVELS
        self.rps = T.PRES_RPS
        self.strobes = T.PRES_STROBES
        n = self.cols * self.rows
        self.n = n
        self.present = bytearray(n)
        for g in range(n):
            self.present[g] = (T.PRES_PRESENT[g >> 3] >> (g & 7)) & 1
        self.reach = T.PRES_REACH
        self.rim = T.PRES_RIM
        self.state = bytearray(n)             # the level each pad sees now, faults aside
                                              # (update() alone writes it, and counts stamp)
        self.ragged = bytearray(n)            # 1: on a hand's ragged rim
        self.coin = bytearray(n)              # the coin a random pad shows this line read
        self.nragged = 0                      # cells on a ragged rim (fast path)
        self.fault = bytearray(n)
        self.sr_fault = bytearray(self.nsr)   # per shift register
        self.nfault = 0                       # cells and registers with a fault (fast path)
        self.latched = bytearray(self.nsr * self.rps)    # what the 165s took in at the last load
        # the ragged rims' and flickering pads' coin (xorshift32), its state in an array: a
        # 32-bit int is a heap object on the RP2040, which the heap-locked loop turn of a HIL
        # run on a Pico cannot make (_bit in viper there)
        self._rs = array('I', (seed & _MASK32 or 1,))
        self.things = ()                      # (x, y, seen radius) of what covers pads
        self.mark = array('i', (0 for _ in range(n)))
        self.stamp = 0
        self.row_sel = None                   # the row select pins (set by the world)
        self._levels = None                   # machine._level (set by the world)
        self.latches = 0
        self.rsel = None                      # the row select pins as bytes, and the sizes:
        self.dims = array('i', (0, self.strobes, self.cols, self.nsr, self.nlev, self.rps, 0))

    # -- what lies on the pads ------------------------------------------------------------------
    def _near(self, x, y, r, out):
        p = self.pitch
        reach = r + 60
        c0 = max((x - reach - self.x0) // p, 0)
        c1 = min((x + reach - self.x0) // p + 1, self.cols - 1)
        r0 = max((y - reach - self.y0) // p, 0)
        r1 = min((y + reach - self.y0) // p + 1, self.rows - 1)
        for rr in range(r0, r1 + 1):
            for cc in range(c0, c1 + 1):
                g = rr * self.cols + cc
                if self.mark[g] != self.stamp:
                    self.mark[g] = self.stamp
                    out.append(g)

    def update(self, chips, hands=()):
        """chips: (x, y, radius, amplitude_permille), hands: (x, y); 0.1 mm."""
        things = []
        for x, y, r, amp in chips:
            if amp >= SEEN_PERMILLE:
                things.append((x, y, r - self.rim, 0))
        for x, y in hands:
            things.append((x, y, HAND_R, 1))
        things = tuple(things)
        if things == self.things:
            return
        # the pads near what came or went (a thing that moved is both): a pad near nothing
        # that changed keeps its level (it depends only on the things that reach it), and each
        # pad near one is made again from all of them. (Every thing's pads, moved or not, were
        # made again before: with four chips at rest beside a moving one, most of the work.)
        gone = list(self.things)
        come = []
        for t in things:
            if t in gone:
                gone.remove(t)
            else:
                come.append(t)
        self.stamp += 1
        dirty = []
        for t in gone:
            self._near(t[0], t[1], t[2] + (HAND_RAGGED if t[3] else 0), dirty)
        for t in come:
            self._near(t[0], t[1], t[2] + (HAND_RAGGED if t[3] else 0), dirty)
        self.things = things
        p = self.pitch
        for g in dirty:
            px = self.x0 + (g % self.cols) * p
            py = self.y0 + (g // self.cols) * p
            on = 0
            rag = 0
            if self.present[g]:
                L = self.nlev
                for x, y, r, hand in things:
                    dx = px - x
                    dy = py - y
                    d2 = dx * dx + dy * dy
                    if hand:
                        lim = r + self.reach[g * L]
                        if d2 <= lim * lim:
                            if d2 > (lim - HAND_RAGGED) * (lim - HAND_RAGGED):
                                rag = 1
                            else:
                                on = L
                        elif d2 <= (lim + HAND_RAGGED) * (lim + HAND_RAGGED):
                            rag = 1
                        continue
                    k = 0
                    while k < L:
                        lim = r + self.reach[g * L + k]
                        if lim < 0 or d2 > lim * lim:
                            break
                        k += 1
                    if k > on:
                        on = k
            self.state[g] = on
            r = 1 if rag and not on else 0
            self.nragged += r - self.ragged[g]
            self.ragged[g] = r

    # -- faults ---------------------------------------------------------------------------------
    def set_fault(self, g, mode):
        self.fault[g] = mode
        self._count()

    def set_sr_fault(self, k, mode):
        self.sr_fault[k] = mode
        self._count()

    def clear_faults(self):
        for g in range(self.n):
            self.fault[g] = 0
        for k in range(self.nsr):
            self.sr_fault[k] = 0
        self._count()

    def _count(self):
        n = 0
        for g in range(self.n):
            if self.fault[g]:
                n += 1
        for k in range(self.nsr):
            if self.sr_fault[k]:
                n += 1
        self.nfault = n

    @property
    def rng(self):
        return self._rs[0]

    def _bit(self):
        if _bit_viper is not None:
            return _bit_viper(self._rs)
        st = self._rs
        s = st[0]
        s ^= (s << 13) & _MASK32
        s ^= s >> 17
        s ^= (s << 5) & _MASK32
        st[0] = s
        return (s >> 7) & 1

    # -- the firmware's side (heap locked) ------------------------------------------------------
    def latch(self):
        """The 74HC165s take in the selected line at its level (falling edge of the parallel
        load): PRES_RPS rows, PRES_SR registers each, bit 7 - j of register k: column 8k + j."""
        self.latches += 1
        if _latch_viper is not None and self.rsel is not None:
            if not self.nfault and not self.nragged:
                _latch_viper(self._levels, self.rsel, self.state, self.latched, self.dims)
            else:                   # (the loop below in viper: 10 times faster on the unix port)
                self.dims[6] = self.nfault
                _latch_odd_viper(self._levels, self.rsel, self.state, self.latched, self.dims,
                                 self.ragged, self.fault, self.sr_fault, self.coin, self._rs)
            return
        lv = self._levels
        sel = self.row_sel
        code = 0
        for i in range(len(sel)):
            code |= lv[sel[i]] << i
        s = gray_row(code)
        out = self.latched
        if s >= self.strobes:
            for k in range(len(out)):
                out[k] = 0
            return
        lev = s % self.nlev
        cols = self.cols
        for h in range(self.rps):
            base = (s // self.nlev * self.rps + h) * cols
            for k in range(self.nsr):
                v = 0
                for j in range(8):
                    c = 8 * k + j
                    if c >= cols:
                        break
                    g = base + c
                    b = 1 if self.state[g] > lev else 0
                    # what switches at random (a hand's ragged rim, a flickering pad) does so
                    # as a whole pad: a coin at the line's first level, kept for the others
                    rnd = self.ragged[g]
                    if self.nfault:
                        f = self.fault[g] or self.sr_fault[k]
                        if f == STUCK_ON:
                            b = 1
                            rnd = 0
                        elif f == STUCK_OFF:
                            b = 0
                            rnd = 0
                        elif f == FLICKER:
                            rnd = 1
                    if rnd:
                        if lev == 0:
                            self.coin[g] = self._bit()
                        b = self.coin[g]
                    if b:
                        v |= 0x80 >> j
                out[h * self.nsr + k] = v

    def prepare(self):
        """After row_sel is set (heap unlocked): latch() may take its fast path from now on."""
        self.rsel = bytes(self.row_sel)
        self.dims[0] = len(self.row_sel)

    def load_edge(self):
        """The load pin's watcher, fn(pin, level) (machine.watch): latch() at its falling
        edge, once prepared (else None): on the unix port one viper call (_fast_edge below);
        not on a Pico (tools/hil: no compiler to spare heap for)."""
        if self.rsel is None or sys.platform == "rp2":
            return None
        return _fast_edge(self)

    def spi_reader(self, flag, attached, bus):
        """SPI.readinto(buf) for the shift bus, bound on the firmware's SPI object (machine.py):
        read() in one viper call while flag[0] is 0, else attached[0].spi_readinto(bus, buf)
        (a stand-in's: World.stand_in), once prepared (else None); not on a Pico."""
        if self.rsel is None or sys.platform == "rp2":
            return None
        return _fast_readinto(self, flag, attached, bus)

    def read(self, buf):
        """SPI.readinto: the latched line, first register first (further bytes read 0)."""
        n = len(buf)
        m = len(self.latched)
        if _copy_viper is not None and n == m and self.rsel is not None:
            _copy_viper(self.latched, buf, n)       # (prepared: the loop below, in viper)
            return
        for i in range(n):
            buf[i] = self.latched[i] if i < m else 0


if sys.implementation.name == "micropython":
    import micropython

    @micropython.viper
    def _latch_viper(lv: ptr8, sel: ptr8, state: ptr8, out: ptr8, dims: ptr32):
        """latch() with no fault and no ragged rim anywhere (no random bits to draw): the
        selected line's cells at its level, in the same bytes."""
        nsel = int(dims[0])
        strobes = int(dims[1])
        cols = int(dims[2])
        nsr = int(dims[3])
        nlev = int(dims[4])
        rps = int(dims[5])
        code = 0
        i = 0
        while i < nsel:
            code |= int(lv[sel[i]]) << i
            i += 1
        s = code                        # gray_row(code)
        t = code >> 1
        while t != 0:
            s ^= t
            t >>= 1
        if s >= strobes:
            k = 0
            while k < nsr * rps:
                out[k] = 0
                k += 1
            return
        lev = s % nlev
        h = 0
        while h < rps:
            base = (s // nlev * rps + h) * cols
            k = 0
            while k < nsr:
                v = 0
                j = 0
                while j < 8:
                    c = 8 * k + j
                    if c >= cols:
                        break
                    if int(state[base + c]) > lev:
                        v |= 0x80 >> j
                    j += 1
                out[h * nsr + k] = v
                k += 1
            h += 1

    @micropython.viper
    def _latch_odd_viper(lv: ptr8, sel: ptr8, state: ptr8, out: ptr8, dims: ptr32, ragged: ptr8,
                         fault: ptr8, sr_fault: ptr8, coin: ptr8, st: ptr32):
        """latch() with a ragged rim or a fault somewhere (dims[6]: nfault): _latch_viper's
        bytes with each cell's fault and coin as latch() makes them, the coins drawn from the
        xorshift32 state st[0] in the same order (_bit)."""
        nsel = int(dims[0])
        strobes = int(dims[1])
        cols = int(dims[2])
        nsr = int(dims[3])
        nlev = int(dims[4])
        rps = int(dims[5])
        nf = int(dims[6])
        code = 0
        i = 0
        while i < nsel:
            code |= int(lv[sel[i]]) << i
            i += 1
        s = code                        # gray_row(code)
        t = code >> 1
        while t != 0:
            s ^= t
            t >>= 1
        if s >= strobes:
            k = 0
            while k < nsr * rps:
                out[k] = 0
                k += 1
            return
        m = uint(0xFFFF)
        m = (m << 16) | m
        lev = s % nlev
        h = 0
        while h < rps:
            base = (s // nlev * rps + h) * cols
            k = 0
            while k < nsr:
                v = 0
                j = 0
                while j < 8:
                    c = 8 * k + j
                    if c >= cols:
                        break
                    g = base + c
                    b = 0
                    if int(state[g]) > lev:
                        b = 1
                    rnd = int(ragged[g])
                    if nf:
                        f = int(fault[g])
                        if f == 0:
                            f = int(sr_fault[k])
                        if f == 1:              # STUCK_ON
                            b = 1
                            rnd = 0
                        elif f == 2:            # STUCK_OFF
                            b = 0
                            rnd = 0
                        elif f == 3:            # FLICKER
                            rnd = 1
                    if rnd:
                        if lev == 0:            # _bit()
                            x = uint(st[0])
                            x ^= (x << 13) & m
                            x ^= x >> 17
                            x ^= (x << 5) & m
                            st[0] = x
                            coin[g] = (x >> 7) & 1
                        b = int(coin[g])
                    if b:
                        v |= 0x80 >> j
                    j += 1
                out[h * nsr + k] = v
                k += 1
            h += 1

    # The load pin's watcher and the shift bus's readinto (world.py binds them) on the unix port:
    # latch() and read() in one viper call each from the firmware's Pin.value() and
    # SPI.readinto(), their source compiled with the model's sizes and the addresses of the
    # arrays they read as literals, and the model in their one closure cell. A strobe went
    # through five calls of Python before (the world's _load_edge, latch(), _latch_viper; the
    # world's spi_readinto, read(), _copy_viper), with the attributes and globals they look
    # up: some 40 % of a game on these pads (docs/performance.md). The same bytes, coins and
    # random state: latch()'s two viper paths written out (_latch_viper, _latch_odd_viper).
    _EDGE = """
def make(rare):
    @micropython.viper
    def edge(pin: int, level: int):
        if level != 0:
            return
        rare.latches = int(rare.latches) + 1
        nf = int(rare.nfault)
        odd = nf != 0 or int(rare.nragged) != 0
        lv = ptr8(%(lv)d)
        sel = ptr8(%(sel)d)
        state = ptr8(%(state)d)
        out = ptr8(%(out)d)
        ragged = ptr8(%(ragged)d)
        fault = ptr8(%(fault)d)
        sr_fault = ptr8(%(sr_fault)d)
        coin = ptr8(%(coin)d)
        st = ptr32(%(rs)d)
        code = 0
        i = 0
        while i < %(nsel)d:
            code |= int(lv[sel[i]]) << i
            i += 1
        s = code                        # gray_row(code)
        t = code >> 1
        while t != 0:
            s ^= t
            t >>= 1
        if s >= %(strobes)d:
            k = 0
            while k < %(nout)d:
                out[k] = 0
                k += 1
            return
        kept = ptr8(%(kept)d)
        stamp = ptr32(%(stamp)d)
        n = int(rare.stamp)
        if not odd:
            if stamp[s] == n:
                # the line as latched before with the same levels (no update() since: its
                # count, rare.stamp, the same) and nothing random read
                k = 0
                while k < %(nout)d:
                    out[k] = kept[s * %(nout)d + k]
                    k += 1
                return
        m = uint(0xFFFF)
        m = (m << 16) | m
        lev = s %% %(nlev)d
        h = 0
        while h < %(rps)d:
            base = (s // %(nlev)d * %(rps)d + h) * %(cols)d
            k = 0
            while k < %(nsr)d:
                v = 0
                j = 0
                while j < 8:
                    c = 8 * k + j
                    if c >= %(cols)d:
                        break
                    g = base + c
                    b = 0
                    if int(state[g]) > lev:
                        b = 1
                    if odd:
                        rnd = int(ragged[g])
                        if nf:
                            f = int(fault[g])
                            if f == 0:
                                f = int(sr_fault[k])
                            if f == 1:              # STUCK_ON
                                b = 1
                                rnd = 0
                            elif f == 2:            # STUCK_OFF
                                b = 0
                                rnd = 0
                            elif f == 3:            # FLICKER
                                rnd = 1
                        if rnd:
                            if lev == 0:            # _bit()
                                x = uint(st[0])
                                x ^= (x << 13) & m
                                x ^= x >> 17
                                x ^= (x << 5) & m
                                st[0] = x
                                coin[g] = (x >> 7) & 1
                            b = int(coin[g])
                    if b:
                        v |= 0x80 >> j
                    j += 1
                out[h * %(nsr)d + k] = v
                k += 1
            h += 1
        if not odd:
            k = 0
            while k < %(nout)d:
                kept[s * %(nout)d + k] = out[k]
                k += 1
            stamp[s] = n
    return edge
"""
    _READINTO = """
def make(rare):
    @micropython.viper
    def readinto(buf):
        if ptr8(%(flag)d)[0]:               # a stand-in answers (World.stand_in)
            rare[1][0].spi_readinto(%(bus)d, buf)
            return
        if int(len(buf)) != %(n)d:
            rare[0].read(buf)
            return
        src = ptr8(%(src)d)
        dst = ptr8(buf)
        i = 0
        while i < %(n)d:
            dst[i] = src[i]
            i += 1
    return readinto
"""

    def _compiled(text, rare, **k):
        g = {"micropython": micropython}
        exec(text % k, g)
        return g["make"](rare)

    def _fast_edge(model):
        import uctypes
        a = uctypes.addressof
        # each strobe's line as last latched with nothing random, and the model's stamp then
        # (update()'s count of changes; -1: none): most strobes latch the same line step after
        # step (at rest, the latch's loop was most of the world's work in a game)
        model.kept_lines = bytearray(model.strobes * len(model.latched))
        model.kept_gen = array('i', (-1 for _ in range(model.strobes)))
        return _compiled(_EDGE, model, kept=a(model.kept_lines), stamp=a(model.kept_gen),
                         lv=a(model._levels), sel=a(model.rsel),
                         state=a(model.state), out=a(model.latched), ragged=a(model.ragged),
                         fault=a(model.fault), sr_fault=a(model.sr_fault), coin=a(model.coin),
                         rs=a(model._rs), nsel=len(model.rsel),
                         strobes=model.strobes, nout=len(model.latched), nlev=model.nlev,
                         rps=model.rps, cols=model.cols, nsr=model.nsr)

    def _fast_readinto(model, flag, attached, bus):
        import uctypes
        return _compiled(_READINTO, (model, attached), flag=uctypes.addressof(flag), bus=bus,
                         n=len(model.latched), src=uctypes.addressof(model.latched))

    @micropython.viper
    def _copy_viper(src: ptr8, dst: ptr8, n: int):
        """read(): the n bytes latched into the SPI's buffer."""
        i = 0
        while i < n:
            dst[i] = src[i]
            i += 1

    @micropython.viper
    def _bit_viper(st: ptr32) -> int:
        """_bit(): one xorshift32 step of the state st[0] (32-bit words on every port)."""
        s = uint(st[0])
        s ^= (s << 13) & uint(0xFFFFFFFF)
        s ^= s >> 17
        s ^= (s << 5) & uint(0xFFFFFFFF)
        st[0] = s
        return int((s >> 7) & 1)
else:
    def _fast_edge(model):
        """CPython: latch() called from the watcher itself (not through the world's method)."""
        latch = model.latch

        def edge(pin, level):
            if level == 0:
                latch()
        return edge

    def _fast_readinto(model, flag, attached, bus):
        """CPython: read() written out in the bound readinto (not through SPI.readinto, the
        world's spi_readinto and read())."""
        latched = model.latched
        n = len(latched)
        read = model.read

        def readinto(buf):
            if flag[0]:
                attached[0].spi_readinto(bus, buf)
            elif len(buf) == n:
                buf[:] = latched
            else:
                read(buf)
        return readinto

    _latch_viper = None     # CPython: latch() and read() as below (the same bytes, coins and all)
    _latch_odd_viper = None
    _bit_viper = None
    _copy_viper = None
    _plain_latch = PresenceModel.latch
    # '1' where a pad's level is above the strobe's level, else '0', for each level
    _BITS = [bytes(0x31 if v > lev else 0x30 for v in range(256)) for lev in range(16)]
    _GRAY = [gray_row(c) for c in range(1024)]       # the strobe a code selects

    def _latch_cpython(self):
        """latch() with each row's bits made whole by one translate() and int(.., 2) (the first
        column the top bit), then what is random or faulty set cell by cell in the order
        latch() visits them (its coins drawn alike): the loop of latch() cost about 100 us a
        latch under CPython, 12 latches a firmware step, most of a CPython game on these pads."""
        if self.rsel is None:
            return _plain_latch(self)
        self.latches += 1
        lv = self._levels
        code = 0
        i = 0
        for p in self.rsel:
            code |= lv[p] << i
            i += 1
        s = _GRAY[code] if code < 1024 else gray_row(code)
        out = self.latched
        nsr = self.nsr
        if s >= self.strobes:
            out[:] = bytes(len(out))
            return
        nlev = self.nlev
        cols = self.cols
        lev = s % nlev
        bits = _BITS[lev] if lev < 16 else bytes(0x31 if v > lev else 0x30 for v in range(256))
        pad = b"0" * (8 * nsr - cols)
        base = s // nlev * self.rps * cols
        state = self.state
        odd = self.nragged or self.nfault
        if not odd:
            # nothing random: the line's bytes follow from its rows' levels alone, kept by the
            # strobe with those levels (most strobes see the same levels frame after frame)
            rows = state[base:base + self.rps * cols]
            kept = self._kept.get(s)
            if kept is not None and kept[0] == rows:
                out[:] = kept[1]
                return
        k = 0
        for h in range(self.rps):
            b = base + h * cols
            v = int(state[b:b + cols].translate(bits) + pad, 2)
            if odd:
                v = _odd_row(self, v, b, lev)
            out[k:k + nsr] = v.to_bytes(nsr, "big")
            k += nsr
        if not odd:
            self._kept[s] = (rows, bytes(out))

    def _odd_row(self, v, b, lev):
        """Row b's bits v (column c at bit 8 * nsr - 1 - c) with its ragged and faulty cells
        as latch() makes them."""
        top = 8 * self.nsr - 1
        cols = self.cols
        coin = self.coin
        ragged = self.ragged
        if not self.nfault:
            g = ragged.find(1, b, b + cols)
            while g >= 0:
                if lev == 0:
                    coin[g] = self._bit()
                bit = 1 << (top - (g - b))
                v = v | bit if coin[g] else v & ~bit
                g = ragged.find(1, g + 1, b + cols)
            return v
        fault = self.fault
        sr_fault = self.sr_fault
        for c in range(cols):
            g = b + c
            rnd = ragged[g]
            f = fault[g] or sr_fault[c >> 3]
            bit = 1 << (top - c)
            if f == STUCK_ON:
                v |= bit
                continue
            if f == STUCK_OFF:
                v &= ~bit
                continue
            if f == FLICKER:
                rnd = 1
            if rnd:
                if lev == 0:
                    coin[g] = self._bit()
                v = v | bit if coin[g] else v & ~bit
        return v

    def _read_cpython(self, buf):
        m = len(self.latched)
        if len(buf) == m:
            buf[:] = self.latched
            return
        for i in range(len(buf)):
            buf[i] = self.latched[i] if i < m else 0

    PresenceModel.latch = _latch_cpython
    PresenceModel.read = _read_cpython
    PresenceModel._kept = None

    _plain_prepare = PresenceModel.prepare

    def _prepare_cpython(self):
        _plain_prepare(self)
        self._kept = {}         # strobe -> (its rows' levels, the bytes latched): _latch_cpython

    PresenceModel.prepare = _prepare_cpython
