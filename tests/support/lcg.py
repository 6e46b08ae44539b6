# A 31-bit LCG for the target-side test scripts (tests/conftest.py run_script): the same numbers
# under MicroPython and CPython, and small ints on every port: the state is kept as two halves
# (15 and 16 bits) and the product is taken mod 2**31 in pieces below 2**30, because the scripts
# draw numbers with the heap locked and on the RP2040 an int of 2**30 or more is a heap object
# (tests/test_rp2040.py runs them there). x(n+1) = (x(n) * 1103515245 + 12345) mod 2**31.

_A_H = 1103515245 >> 16         # 16838
_A_L = 1103515245 & 0xFFFF      # 20077
_A_L15 = _A_L & 0x7FFF
_C = 12345


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
