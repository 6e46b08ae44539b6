# What every test driver in tests/support shares (bowling_driver.py, trap_driver.py,
# sensing_driver.py, presence_driver.py): the stdin/JSON loop and a stream that keeps what the
# firmware writes. Runs unchanged under the MicroPython unix port and CPython (`micropython`
# being boardsim/target's stand-in there); tests/conftest.py starts the drivers.
#
# One JSON case per input line, one JSON result per output line, so a whole test module shares
# one interpreter process per runtime. A driver calls the firmware with the heap locked: under
# MicroPython an allocation raises MemoryError. An exception a case lets out comes back as
# {"error": "Type: message"} and the heap is unlocked for the next case.
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

    def write(self, b, off, n):
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
