# A 31-bit LCG for the target-side test scripts (tests/conftest.py run_script): the same numbers
# under MicroPython and CPython, and small ints on every port: the state is kept as two halves
# (15 and 16 bits) and the product is taken mod 2**31 in pieces below 2**30, because the scripts
# draw numbers with the heap locked and on the RP2040 an int of 2**30 or more is a heap object
# (tests/test_rp2040.py runs them there). x(n+1) = (x(n) * 1103515245 + 12345) mod 2**31.

_A_H = 1103515245 >> 16         # 16838
_A_L = 1103515245 & 0xFFFF      # 20077
_A_L15 = _A_L & 0x7FFF
_C = 12345


import sys
# On the RP2040 (tests/test_rp2040*.py: the reference scripts' own draws on the emulated chip) the
# draws run in viper (Rng below is then _ChipRng): the same steps on machine words (every value
# below 2**31: the same numbers; the chip's answers are compared with CPython's on the same draws),
# at a small part of the bytecode's instructions. The draws were about half of some scripts' chip
# time, a board's pads drawn in mask() most of others' (issue 15).
_V = sys.platform == "rp2"
if _V:
    import micropython
    from array import array

    @micropython.viper
    def _next_v(st: ptr32) -> int:
        h = st[0]
        l = st[1]
        t0 = (l & 0xFF) * 20077 + 12345
        t1 = (l >> 8) * 20077
        s = ((t1 & 0xFF) << 8) + t0
        h = (((h * 20077) & 0x7FFF) + (((l & 0x7FFF) * 16838) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
        l = s & 0xFFFF
        st[0] = h
        st[1] = l
        return (h << 8) | (l >> 8)

    @micropython.viper
    def _mask_v(buf: ptr8, n: int, m: int, st: ptr32):
        h = st[0]
        l = st[1]
        i = 0
        while i < n:
            t0 = (l & 0xFF) * 20077 + 12345
            t1 = (l >> 8) * 20077
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * 20077) & 0x7FFF) + (((l & 0x7FFF) * 16838) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            buf[i] = 1 if ((h << 8) | (l >> 8)) % m else 0
            i += 1
        st[0] = h
        st[1] = l

    @micropython.viper
    def _churn_v(buf: ptr8, n: int, mm: int, allowed: ptr8, st: ptr32):
        m_off = mm & 0xFFFF
        m_on = mm >> 16
        h = st[0]
        l = st[1]
        i = 0
        while i < n:
            on = buf[i]
            m = 0
            if on:
                m = m_off
            elif (allowed[i >> 3] >> (i & 7)) & 1:
                m = m_on
            if m:
                t0 = (l & 0xFF) * 20077 + 12345
                t1 = (l >> 8) * 20077
                s = ((t1 & 0xFF) << 8) + t0
                h = (((h * 20077) & 0x7FFF) + (((l & 0x7FFF) * 16838) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
                l = s & 0xFFFF
                if ((h << 8) | (l >> 8)) % m == 0:
                    buf[i] = 0 if on else 1
            i += 1
        st[0] = h
        st[1] = l

    @micropython.viper
    def _fill_v(buf: ptr32, n: int, lo: int, m: int, st: ptr32):
        h = st[0]
        l = st[1]
        i = 0
        while i < n:
            t0 = (l & 0xFF) * 20077 + 12345
            t1 = (l >> 8) * 20077
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * 20077) & 0x7FFF) + (((l & 0x7FFF) * 16838) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            buf[i] = lo + ((h << 8) | (l >> 8)) % m
            i += 1
        st[0] = h
        st[1] = l


class Rng:
    def __init__(self, seed):
        self.h = (seed >> 16) & 0x7FFF
        self.l = seed & 0xFFFF

    def next(self):
        h = self.h
        l = self.l
        t0 = (l & 0xFF) * _A_L + _C                 # < 2**25
        t1 = (l >> 8) * _A_L                        # < 2**24
        s = ((t1 & 0xFF) << 8) + t0                 # l * A_L + C = (t1 >> 8) * 2**16 + s
        carry = (t1 >> 8) + (s >> 16)
        self.l = s & 0xFFFF
        self.h = (((h * _A_L15) & 0x7FFF) + (((l & 0x7FFF) * _A_H) & 0x7FFF) + carry) & 0x7FFF
        return (self.h << 8) | (self.l >> 8)        # x >> 8

    def below(self, n):
        return self.next() % n

    def mask(self, buf, n, m):
        """buf[i] = 0 where below(m) gives 0, else 1, for i < n: the numbers of n below(m) calls
        (the reference scripts draw a board's pads so; a call a draw cost the emulated chip most
        of their time), next() inlined on locals."""
        h = self.h
        l = self.l
        a_l = _A_L
        a_h = _A_H
        a_l15 = _A_L15
        c = _C
        for i in range(n):
            t0 = (l & 0xFF) * a_l + c
            t1 = (l >> 8) * a_l
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            buf[i] = 1 if ((h << 8) | (l >> 8)) % m else 0
        self.h = h
        self.l = l

    def churn(self, buf, n, m_off, m_on, allowed):
        """For i < n: a set buf[i] cleared where below(m_off) gives 0; a clear one set where
        bit i of `allowed` (bit i & 7 of byte i >> 3) is set and below(m_on) gives 0; no number
        drawn for a clear one not allowed. The numbers of those below() calls, in order, next()
        inlined on locals (as mask(): the flood script's pads drawn so each trial)."""
        h = self.h
        l = self.l
        a_l = _A_L
        a_h = _A_H
        a_l15 = _A_L15
        c = _C
        for i in range(n):
            on = buf[i]
            if on:
                m = m_off
            elif (allowed[i >> 3] >> (i & 7)) & 1:
                m = m_on
            else:
                continue
            t0 = (l & 0xFF) * a_l + c
            t1 = (l >> 8) * a_l
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            if ((h << 8) | (l >> 8)) % m == 0:
                buf[i] = 0 if on else 1
        self.h = h
        self.l = l

    def fill(self, buf, n, lo, hi):
        """buf[i] = lo + below(hi - lo + 1) for i < n: the numbers of n such calls, next()
        inlined on locals (as mask())."""
        h = self.h
        l = self.l
        a_l = _A_L
        a_h = _A_H
        a_l15 = _A_L15
        c = _C
        m = hi - lo + 1
        for i in range(n):
            t0 = (l & 0xFF) * a_l + c
            t1 = (l >> 8) * a_l
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            buf[i] = lo + ((h << 8) | (l >> 8)) % m
        self.h = h
        self.l = l

    def cells(self, grid, usable, n, dens):
        """For i < n: grid[i] = 0 where below(100) >= dens, else 1 + below(4); then usable[i] =
        0 where below(10) gives 0, else 1: the numbers of those below() calls, in that order,
        next() inlined on locals (as mask(): tests/test_fault_holes.py's grids drawn so; nearly
        all of that script's time went to these draws)."""
        h = self.h
        l = self.l
        a_l = _A_L
        a_h = _A_H
        a_l15 = _A_L15
        c = _C
        for i in range(n):
            t0 = (l & 0xFF) * a_l + c
            t1 = (l >> 8) * a_l
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            if ((h << 8) | (l >> 8)) % 100 >= dens:
                grid[i] = 0
            else:
                t0 = (l & 0xFF) * a_l + c
                t1 = (l >> 8) * a_l
                s = ((t1 & 0xFF) << 8) + t0
                h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
                l = s & 0xFFFF
                grid[i] = 1 + ((h << 8) | (l >> 8)) % 4
            t0 = (l & 0xFF) * a_l + c
            t1 = (l >> 8) * a_l
            s = ((t1 & 0xFF) << 8) + t0
            h = (((h * a_l15) & 0x7FFF) + (((l & 0x7FFF) * a_h) & 0x7FFF) + (t1 >> 8) + (s >> 16)) & 0x7FFF
            l = s & 0xFFFF
            usable[i] = 1 if ((h << 8) | (l >> 8)) % 10 else 0
        self.h = h
        self.l = l


if _V:
    _PlainRng = Rng

    class _ChipRng(_PlainRng):
        """Rng with its state in an array (st: h, l) for the viper draws; cells() (and what
        the viper draws do not take) through the plain code."""

        def __init__(self, seed):
            _PlainRng.__init__(self, seed)
            self.st = array('i', [self.h, self.l])

        def next(self):
            return _next_v(self.st)

        def below(self, n):
            return _next_v(self.st) % n

        def mask(self, buf, n, m):
            if isinstance(buf, bytearray) and 0 < m < 0x40000000:
                _mask_v(buf, n, m, self.st)
            else:
                self._plain(_PlainRng.mask, buf, n, m)

        def churn(self, buf, n, m_off, m_on, allowed):
            if isinstance(buf, bytearray) and 0 < m_off < 0x10000 and 0 < m_on < 0x4000:
                _churn_v(buf, n, m_off | (m_on << 16), allowed, self.st)
            else:
                self._plain(_PlainRng.churn, buf, n, m_off, m_on, allowed)

        def fill(self, buf, n, lo, hi):
            # (in viper into a 4-byte int array only, lo and hi small ints)
            if (isinstance(buf, array) and 0 < n <= len(buf) and isinstance(buf[0], int)
                    and len(bytes(memoryview(buf)[:1])) == 4 and -0x20000000 < lo <= hi < 0x20000000):
                _fill_v(buf, n, lo, hi - lo + 1, self.st)
            else:
                self._plain(_PlainRng.fill, buf, n, lo, hi)

        def cells(self, grid, usable, n, dens):
            self._plain(_PlainRng.cells, grid, usable, n, dens)

        def _plain(self, fn, *args):
            st = self.st
            self.h = st[0]
            self.l = st[1]
            fn(self, *args)
            st[0] = self.h
            st[1] = self.l

    Rng = _ChipRng
