"""firmware/main.py runs each loop turn with the heap locked, as the tests run the loop: a call of a
function with over 11 words of locals and stack then keeps them on the C stack. Unlocked,
MicroPython takes a heap block for each such call, found by a search of the heap's free blocks
that lasts as long as the heap's layout makes it (on the emulated chip 0.03 ms a call locked,
0.1 ms on a fresh heap, 0.36 ms among small holes: a 16-step frame 1.4 - 4.1 ms longer and moving
with whatever was allocated outside the turns; issue 13, docs/performance.md "Frames on the C
stack"). main.py's own source is run under the MicroPython unix port with a stand-in Scoreboard
whose step() tries an allocation each turn; service() and console commands stay outside the lock,
and an exception out of a turn leaves the heap unlocked."""
import json
import os
import subprocess

from tests.support.runtimes import ROOT, argv_for

APP = '''
TURNS = 6


class Stop(Exception):
    pass


class Scoreboard:
    def __init__(self):
        self.need_service = 0
        self.locked = bytearray(TURNS)      # 1: the turn's allocation failed (heap locked)
        self.served = bytearray(TURNS)      # ... service()'s allocation did not
        self.n = 0
        self.stop = Stop()                  # (made here: raised with the heap locked)

    def boot(self):
        pass

    def step(self):
        try:
            bytearray(1)
        except MemoryError:
            self.locked[self.n] = 1
        self.n += 1
        if self.n == TURNS:
            raise self.stop
        self.need_service = 1
        return 0

    def service(self):
        self.need_service = 0
        bytearray(1)                        # (raises if main.py left the heap locked)
        self.served[self.n - 1] = 1

    def command(self, line):
        pass
'''

RUN = '''
import sys
import json
from scoreboard import app
g = {"__name__": "__main__"}
try:
    exec(open(sys.argv[1]).read(), g)
except app.Stop:
    pass
sb = g["sb"]
after = 1
try:
    bytearray(1)
except MemoryError:
    after = 0
print(json.dumps({"locked": list(sb.locked), "served": list(sb.served), "unlocked_after": after}))
'''


def test_main_py_runs_each_turn_with_the_heap_locked(tmp_path):
    (tmp_path / "scoreboard").mkdir()
    (tmp_path / "scoreboard" / "__init__.py").write_text("")
    (tmp_path / "scoreboard" / "app.py").write_text(APP)
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ)
    env.pop("MICROPYPATH", None)        # (the stand-in, not the firmware's scoreboard package)
    argv = argv_for("micropython", tmp_path / "run.py") + [os.path.join(ROOT, "firmware", "main.py")]
    p = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["locked"] == [1] * 6, r
    assert r["served"] == [1] * 5 + [0], r
    assert r["unlocked_after"] == 1, r
