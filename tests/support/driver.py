# What every test driver in tests/support shares (bowling_driver.py, trap_driver.py,
# sensing_driver.py, presence_driver.py, cutsweep.py): the stdin/JSON loop, a stream that keeps
# what the firmware writes and the heap lock's own check. Runs unchanged under the MicroPython unix port and CPython (`micropython`
# being boardsim/target's stand-in there); tests/conftest.py starts the drivers.
#
# One JSON case per input line, one JSON result per output line, so a whole test module shares
# one interpreter process per runtime. A driver calls the firmware with the heap locked: under
# MicroPython an allocation raises MemoryError. An exception a case lets out comes back as
# {"error": "Type: message"} and the heap is unlocked for the next case.
#
# Also the one-shot case scripts' runner (run_cases, heap_locked: test_display.py,
# test_sevenseg.py), the rules drivers' op loop (run_ops) and an event-line writer (EventLines).
import sys
import json
import micropython


def unlock_all():
    """Unlock the heap however deeply it is locked. (heap_unlock() on an unlocked heap would
    wrap the depth round under MicroPython and lock it for good: lock once first.)"""
    micropython.heap_lock()
    while micropython.heap_unlock():
        pass


class Sink:
    """A stream that copies what it is given into a preallocated buffer (no allocation)."""

    def __init__(self, size):
        self.buf = bytearray(size)
        self.n = 0
        self.writes = 0

    def write(self, b, off=0, n=-1):
        if n < 0:
            n = len(b) - off
        buf = self.buf
        i = self.n
        for k in range(off, off + n):
            buf[i] = b[k]
            i += 1
        self.n = i
        self.writes += 1
        return n

    def take(self):
        s = bytes(self.buf[:self.n]).decode()
        self.n = 0
        return s


_NONE = object()


def locked(f, snap, a=_NONE, b=_NONE, c=_NONE):
    """f(a, b, c) (as many of them as are given) with the heap locked, then snap() (the
    driver's copy of the game's state) still locked: an allocation in either raises MemoryError
    under MicroPython. (Fixed arguments: a call with *args allocates.)"""
    micropython.heap_lock()
    if a is _NONE:
        r = f()
    elif b is _NONE:
        r = f(a)
    elif c is _NONE:
        r = f(a, b)
    else:
        r = f(a, b, c)
    snap()
    micropython.heap_unlock()
    return r


def rules_op(op, game, fill, res, snap):
    """The ops both rules drivers (bowling_driver.py, trap_driver.py) answer alike: (True, the
    game's answer) or (False, None) for an op of the driver's own."""
    kind = op["op"]
    if kind == "shot" or kind == "classify":
        fill(op)
        # (a number, as the drivers always answered: a bool answer becomes 0 or 1)
        return True, int(locked(game.on_shot if kind == "shot" else game.classify, snap, res))
    if kind == "out":
        return True, locked(game.apply_outcome, snap, op["code"])
    if kind == "undo":
        return True, locked(game.undo, snap)
    if kind == "alloc":
        micropython.heap_lock()
        x = [1, 2, 3]
        micropython.heap_unlock()
        return True, len(x)
    return False, None


def alloc_check():
    """The case {"op": "alloc"}: a list made with the heap locked, so that a test sees that an
    allocation is caught (MemoryError under MicroPython, nothing under CPython)."""
    micropython.heap_lock()
    try:
        x = [1, 2, 3]
    finally:
        micropython.heap_unlock()
    return {"x": len(x)}


def serve(case):
    """Answer every input line (a JSON case) with case(the decoded case)'s result as one JSON
    line, until stdin closes."""
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        try:
            r = case(json.loads(line))
        except MemoryError:
            unlock_all()
            r = {"error": "MemoryError: allocated with the heap locked"}
        except Exception as e:
            unlock_all()
            r = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(r))
        sys.stdout.write("\n")
        try:
            sys.stdout.flush()
        except AttributeError:
            pass


def heap_locked(f):
    """f() with the heap locked, unlocked again however f ends (under MicroPython an
    allocation in f raises MemoryError)."""
    micropython.heap_lock()
    try:
        return f()
    finally:
        micropython.heap_unlock()


def run_cases(cases):
    """The one-shot case scripts (test_display.py's and test_sevenseg.py's CASES): run each
    (name, case) in turn and print one JSON object, name -> what the case returned, or
    {"error": repr(the exception)} for a case that raised (the heap unlocked for the next)."""
    res = {}
    for name, case in cases:
        try:
            res[name] = case()
        except Exception as e:
            unlock_all()
            res[name] = {"error": repr(e)}
    print(json.dumps(res))


class EventLines:
    """A stream for the runner's `out` that keeps every event line the firmware writes, decoded,
    in `lines` (allocates: for the one-shot scripts that look at a whole run's events after it,
    test_fault_budget.py's and test_quiet_pads.py's)."""

    def __init__(self):
        self.lines = []
        self.cur = b""

    def write(self, buf, off=0, n=-1):
        if n < 0:
            n = len(buf) - off
        self.cur += bytes(buf[off:off + n])
        while b"\n" in self.cur:
            i = self.cur.index(b"\n")
            self.lines.append(json.loads(self.cur[:i]))
            self.cur = self.cur[i + 1:]
        return n


def run_ops(ops, run_op, sink):
    """A rules case's ops through the driver's run_op, in order (bowling_driver.py,
    trap_driver.py): (their answers, None); at the first op that raises, (the answers before it,
    the error answer naming the op), the heap unlocked and the sink emptied for the next case."""
    steps = []
    for i in range(len(ops)):
        try:
            steps.append(run_op(ops[i]))
        except Exception as e:
            unlock_all()
            sink.n = 0
            return steps, {"error": "op %d: %s: %s" % (i, type(e).__name__, e), "steps": steps}
    return steps, None
