"""Target side (MicroPython unix port or CPython): the presence locator's find() counted frame
by frame under a clock that runs as the chip's would, for the tests of its budget in the chip's
time (tests/test_presence_budget.py, tests/test_presence_still_budget.py; issue 13).

The clock is the locator's own count of moves tried (moves(), delta(), _reach's steps) times
`us_per_move`, plus `read_us` each time it is read, from `base` (ticks of 2**30, as the chip's
time.ticks_us: small ints), so a run is deterministic whatever the host's load. us_per_move 0:
no clock is given (the locator keeps its own: none off the chip, nothing cut). Every find()
that tried a move is a row: the moves it tried, loc.cut, the chips found, loc.settled, the
still search kept after it (the phase at _SV, 0: none) and that search's sub (_SV + 11). And
`centre_most`: the most moves one chip's centring (_centre) tried in the run.

    fc = FindCounter(us_per_move, budget, base=0, read_us=0)
    ... fc.install(r.sb.loc) once the runner has its Scoreboard ...
    fc.rows()      # [[tried, cut, found, settled, phase, sub], ...]
    fc.spent       # per row: the chip's time that find() took on that clock (us)

or, for a job's timeline on the presence pads, `r = play_shift(R, job, fc)` (R: the runner
module) does the three steps.

Nothing is allocated per frame (find() runs under the runner's heap lock): the rows are
preallocated arrays, the counts small ints.
"""
import json
from array import array

SV = 192            # presence_locate._SV: where a still search is kept


class FindCounter:
    def __init__(self, us_per_move, budget, base=0, read_us=0, most=3000):
        self.us = us_per_move
        self.budget = budget
        self.base = base
        self.read_us = read_us
        self.most = most
        self.tried = array("i", [0] * most)
        self.cut = bytearray(most)
        self.found = bytearray(most)
        self.settled = bytearray(most)
        self.phase = bytearray(most)
        self.sub = array("i", [0] * most)
        self.spent = array("i", [0] * most)     # the chip's time the frame's find() took (us)
        self.n = 0
        self.reads = 0
        self.centre_most = 0
        self.loc = None
        self._find = None
        self._centre = None

    def clock(self):
        """The chip's clock as the moves tried (and the readings) would run it."""
        self.reads += 1
        return (self.base + self.loc.tried * self.us + self.reads * self.read_us) & 0x3FFFFFFF

    def install(self, loc):
        self.loc = loc
        self._find = loc.find
        self._centre = loc._centre
        if self.us:
            loc.clock = self.clock
        loc.BUDGET_US = self.budget
        loc.find = self.counted
        loc._centre = self.centred

    def counted(self, grid):
        loc = self.loc
        t0 = loc.tried
        r0 = self.reads
        n = self._find(grid)
        k = self.n
        if loc.tried != t0 and k < self.most:
            self.tried[k] = loc.tried - t0
            self.spent[k] = (loc.tried - t0) * self.us + (self.reads - r0) * self.read_us
            self.cut[k] = loc.cut
            self.found[k] = n
            self.settled[k] = loc.settled
            self.phase[k] = loc.seeds[SV]
            self.sub[k] = loc.seeds[SV + 11]
            self.n = k + 1
        return n

    def centred(self, i):
        t0 = self.loc.tried
        u = self._centre(i)
        d = self.loc.tried - t0
        if d > self.centre_most:
            self.centre_most = d
        return u

    def rows(self):
        return [[self.tried[i], self.cut[i], self.found[i], self.settled[i], self.phase[i],
                 self.sub[i]] for i in range(self.n)]


def play_shift(R, job, fc):
    """job["tl"] played on a runner (module R) with the presence pads (config written to
    job["config"]), fc installed on the locator once the runner has its Scoreboard; then 200 ms
    more of the table. Returns the runner."""
    with open(job["config"], "w") as f:
        f.write(json.dumps({"front_end": "shift"}))
    r = R.Runner(config=job["config"])
    for o in job["tl"]:
        r.op(o)
        if fc.loc is None and r.sb is not None:
            fc.install(r.sb.loc)
    r.run_ms(200)
    return r
