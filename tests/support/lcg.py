# A 31-bit LCG for the target-side test scripts (tests/conftest.py run_script): the same numbers
# under MicroPython and CPython, small ints on the unix port.


class Rng:
    def __init__(self, seed):
        self.x = seed & 0x7FFFFFFF

    def next(self):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return self.x >> 8

    def below(self, n):
        return self.next() % n
