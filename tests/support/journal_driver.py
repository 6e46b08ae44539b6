# Test driver for firmware/storage/journal.py (tests/test_journal.py). Runs unchanged under the
# MicroPython unix port (the journal on a real littlefs: boardsim/target/flash.py) and CPython
# (a temporary directory). One JSON case per input line, one JSON result per output line.
#
# Every entry is recorded and written the way app.py does it, with the heap locked: under
# MicroPython an allocation in out/undo/set/end/write fails the case.
#
# Case: {"ops": [op, ...]}, op one of
#   {"op": "wipe"}                                 an empty flash
#   {"op": "new", "game": G, "players": P, "o1": A, "o2": B}   a game started (+ service)
#   {"op": "out", "code": C}  {"op": "undo"}  {"op": "set", "pins": N}  {"op": "end"}
#   {"op": "service"}                              service() when the journal asks for it
#   {"op": "prep", "max": K}                       service(), then again while the journal asks
#                                                  (the next game's file prepared after a game;
#                                                  at most K calls; "alloc": the heap bytes of each)
#   {"op": "rawflip", "block": B, "at": I, "xor": X}   a byte of a block changed, littlefs bypassed
#   {"op": "boot"}                                 a new Journal and engines: boot() (r "lost"
#                                                  when a tear cut it: the power off and on)
#   {"op": "files"}                                {name: size}
#   {"op": "read", "name": N}  {"op": "put", "name": N, "hex": H, "only": bool}  (only: the
#                                                  other journal files removed)
#   {"op": "truncate", "name": N, "n": K}  {"op": "flip", "name": N, "at": I, "xor": X}
#   {"op": "break"}                                the open file's next write fails (EIO)
#   {"op": "fail", "after": K}                     MicroPython: the flash fails after K writes
#   {"op": "alloc"}                                allocates under the lock (harness check)
# Result: {"steps": [{"r": ..., "st": state, "fault": F, "need": need_open, "ev": [line]}]}
import sys
import array
import gc
import json
import os
import micropython

import flash
from storage import journal as J
from games import registry as R
from scoreboard.events import EventWriter
from games.bowling import Bowling
from games.trap import Trap

MP = sys.implementation.name == "micropython"


class Sink:
    def __init__(self, size):
        self.buf = bytearray(size)
        self.n = 0

    def write(self, b, off=0, n=-1):
        if n < 0:
            n = len(b) - off
        for k in range(off, off + n):
            self.buf[self.n] = b[k]
            self.n += 1
        return n

    def take(self):
        s = bytes(self.buf[:self.n]).decode()
        self.n = 0
        return [x for x in s.split("\n") if x]


class Broken:
    """A file whose writes fail, as littlefs reports a flash error."""

    def __init__(self, f):
        self.f = f
        self.exc = OSError(5)       # raised with the heap locked: made beforehand

    def write(self, b, off=0, n=-1):
        raise self.exc

    def flush(self):
        raise self.exc

    def close(self):
        self.f.close()


# a game's file written in place (issue 13): the flash's block device at hand to the journal (as
# the runner's is, boardsim/target/flash.py), and the block writes counted (the hook runs with
# the heap locked: counters only)
raw = [False]
counts = array.array("i", [0, 0, 0, 0])     # programs, erases, bytes programmed, pages (256 B)


# ZENN_FLASH_TRACE=FILE (MicroPython): every block write (erase, block, offset, length, a hash of
# the bytes) appended to FILE, a line each, the service() calls of a "prep" op marked, each case
# ended by a line "case": the flash operations of two versions of the journal compared
# (docs/performance.md). Kept in a list made beforehand (the hook runs with the heap locked).
TRACE = os.getenv("ZENN_FLASH_TRACE") if MP else None
trace = [0] * (5 * 400) if TRACE else None
tn = [0]
if TRACE:
    # littlefs mounted without its file times (VfsLfs2's mtime): the clock's bytes in its commits
    # moved its block allocator's seed, so two runs of the same code wrote other blocks
    class _Lfs:
        @staticmethod
        def mkfs(bd):
            os.VfsLfs2.mkfs(bd)

        def __new__(cls, bd):
            return os.VfsLfs2(bd, mtime=False)

    class _Os:
        VfsLfs2 = _Lfs
        chdir = os.chdir
        mount = os.mount
        umount = os.umount
        mkdir = os.mkdir
        listdir = os.listdir
        remove = os.remove

    flash.os = _Os


def count(erase, block, off, buf, n):
    if erase:
        counts[1] += 1
    else:
        counts[0] += 1
        counts[2] += n
    if trace is not None and tn[0] < len(trace):
        h = 0
        if not erase:
            for i in range(n):
                h = (h * 31 + buf[i]) & 0x3FFFFFFF
        k = tn[0]
        trace[k] = erase
        trace[k + 1] = block
        trace[k + 2] = off
        trace[k + 3] = n
        trace[k + 4] = h
        tn[0] = k + 5


trace_file = open(TRACE, "a") if TRACE else None     # (an absolute path: the flash is the cwd)


def trace_mark(what):
    # a line of its own between the block writes (outside the heap lock)
    if trace is not None:
        trace_out()
        trace_file.write(what + "\n")
        trace_file.flush()


def trace_out():
    if trace is None:
        return
    for k in range(0, tn[0], 5):
        trace_file.write("%s %d %d %d %d\n" % ("erase" if trace[k] else "prog", trace[k + 1],
                                               trace[k + 2], trace[k + 3], trace[k + 4]))
    if tn[0] == len(trace):
        trace_file.write("overflow\n")     # (more writes in one op than it holds: not compared)
    tn[0] = 0


def set_raw(on):
    raw[0] = on
    f = fl[0]
    f.raw = on
    if MP and f.bd is not None:
        if on:
            sys.modules[flash.RAW_MODULE] = f.bd
        elif sys.modules.get(flash.RAW_MODULE) is not None:
            del sys.modules[flash.RAW_MODULE]
    if MP:
        f.storage.hook = count


sink = Sink(65536)
ew = EventWriter(sink)
fl = [flash.Flash()]
fl[0].power_on()
cur = {}


def fresh_engines():
    cur["b"] = Bowling(ew)
    cur["t"] = Trap(ew)
    cur["j"] = J.Journal(ew)
    cur["g"] = J.G_NONE


def engines():
    # one per game of the registry (games/registry.py): bowling, trap1, trap2
    return (cur["b"], cur["t"], cur["t"])


def engine():
    return engines()[R.index(R.games(), cur["g"])] if cur["g"] != J.G_NONE else cur["b"]


def state():
    g = cur["g"]
    e = engine()
    if g == J.G_NONE:
        return "none"
    if e is cur["b"]:
        head = "b%d%d" % (e.players, e.shooter_end)
    else:
        head = "t%d%d%d" % (e.variant, e.first, 1 if e.coin else 0)
    return head + (":over" if e.over else "") + ":" + bytes(e.log[:e.nlog]).hex()


def wipe():
    j = cur.get("j")
    if j is not None and j.f is not None:
        try:
            j.f.close()
        except OSError:
            pass
        j.f = None
    if MP:
        fl[0].power_cut()
        fl[0] = flash.Flash(raw=raw[0])
        fl[0].power_on()
        fl[0].storage.hook = count
    else:
        for n in os.listdir("."):
            os.remove(n)
    fresh_engines()


res = [0]


def entry(kind, arg):
    # as app.py does it in its loop turn: the rules, then the journal; with the heap locked
    e = engine()
    j = cur["j"]
    b = cur["b"]
    micropython.heap_lock()
    try:
        if kind == 0:
            ok = e.apply_outcome(arg)
            if ok:
                j.out(arg)
        elif kind == 1:
            ok = e.undo()
            if ok:
                j.undo()
        elif kind == 2:
            ok = b.correct(arg)
            if ok >= 0:
                j.set(ok)
        else:
            j.end()
            ok = True
        j.write()
        res[0] = ok
    except flash.PowerLost:
        res[0] = "lost"
    finally:
        micropython.heap_unlock()
    if res[0] == "lost":
        cycle()
    return res[0]


def cycle():
    # the power went inside a write: off and on again (the journal's objects are dead)
    fl[0].power_cut()
    fl[0].power_on()
    cur["j"].f = None


def read(name):
    try:
        with open(name, "rb") as f:
            return f.read()
    except OSError:
        return None


def put(name, data):
    j = cur.get("j")
    if j is not None and j.f is not None:
        j.f.close()                 # a hand on the flash: the scoreboard is off
        j.f = None
    with open(name, "wb") as f:
        f.write(data)


def run_op(op):
    k = op["op"]
    j = cur.get("j")
    r = None
    if k == "wipe":
        wipe()
    elif k == "new":
        g = op["game"]
        e = engines()[R.index(R.games(), g)]
        r = J.start_engine(e, g, op["players"], op["o1"], op["o2"])
        if r:
            cur["g"] = g
            j.new_game(g, op["players"], op["o1"], op["o2"])
            try:
                j.service(e)
            except flash.PowerLost:
                r = "lost"
                cycle()
    elif k == "out":
        r = entry(0, op["code"])
    elif k == "undo":
        r = entry(1, 0)
    elif k == "set":
        r = entry(2, op["pins"])
    elif k == "end":
        r = entry(3, 0)
        cur["g"] = J.G_NONE
    elif k == "service":
        r = j.need_open
        if j.need_open:
            j.service(engine())
    elif k == "prep":
        # the app's loop after a game's end: service() called, then again while the journal
        # asks for it (the next game's file prepared a step a call); r: the block writes of
        # each call (programs, erases)
        r = []
        alloc = []                  # MicroPython: the heap bytes each call allocated
        try:
            while len(r) != op.get("max", -1):
                c0, c1 = counts[0], counts[1]
                e = engine()
                if MP:
                    gc.collect()
                    gc.disable()
                    a0 = gc.mem_alloc()
                j.service(e)
                if MP:
                    alloc.append(gc.mem_alloc() - a0)
                    gc.enable()
                trace_mark("call")
                r.append([counts[0] - c0, counts[1] - c1])
                if j.need_open != 2:
                    break
        except flash.PowerLost:
            gc.enable()
            r.append("lost")
            cycle()
            fresh_engines()
        cur["alloc"] = alloc
    elif k == "boot":
        if j is not None and type(j.dev if type(j.dev) is not tuple else j.dev[2]) is not int:
            cycle()                 # a preparation under way: the power goes (its file not closed)
        elif j is not None and j.f is not None:
            j.f.close()
        fresh_engines()
        try:
            g = cur["j"].boot(engines())
        except flash.PowerLost:     # cut while boot wrote (the next game's file prepared)
            cycle()
            fresh_engines()
            return {"r": "lost", "st": "none", "fault": 0, "need": False, "ev": sink.take(),
                    "w": fl[0].storage.writes if MP else 0, "blk": -1}
        cur["g"] = g
        jj = cur["j"]
        if g == J.G_NONE:
            # the newest game as played back, even when it is over or left
            cur["g"] = jj.game if jj.status != J.S_NONE else J.G_NONE
        r = {"g": g, "status": jj.status, "played": jj.played, "ended": jj.ended,
             "serial": jj.serial, "open": jj.f is not None}
    elif k == "files":
        r = {}
        for n in J.FILES:
            d = read(n)
            if d is not None:
                r[n] = len(d)
    elif k == "read":
        d = read(op["name"])
        r = None if d is None else bytes(d).hex()
    elif k == "put":
        put(op["name"], bytes.fromhex(op["hex"]))
        if op.get("only"):
            for n in J.FILES:
                if n != op["name"] and read(n) is not None:
                    os.remove(n)
    elif k == "truncate":
        d = read(op["name"])
        put(op["name"], d[:op["n"]])
    elif k == "flip":
        d = bytearray(read(op["name"]))
        d[op["at"]] ^= op.get("xor", 0xFF)
        put(op["name"], d)
    elif k == "rawflip":
        # a byte of a block changed under littlefs (damage: no program, no count)
        st = fl[0].storage
        st.bio.seek(op["block"] * st.bs + op["at"])
        c = st.bio.read(1)[0]
        st.bio.seek(op["block"] * st.bs + op["at"])
        st.bio.write(bytes([c ^ op["xor"]]))
    elif k == "break":
        j.f = Broken(j.f)
    elif k == "fail":
        if MP:
            st = fl[0].storage
            st.fail_at = -1 if op["after"] < 0 else st.writes + op["after"]
        r = MP
    elif k == "raw":
        set_raw(op["on"])
        r = MP
    elif k == "tear":
        st = fl[0].storage
        st.tear_at = -1 if op["after"] < 0 else st.writes + op["after"]
        r = MP
    elif k == "counts":
        r = list(counts)
        for i in range(4):
            counts[i] = 0
    elif k == "alloc":
        micropython.heap_lock()
        try:
            x = [1, 2, 3]
        finally:
            micropython.heap_unlock()
        r = len(x)
    else:
        raise ValueError("unknown op " + k)
    j = cur["j"]
    out = {"r": r, "st": state(), "fault": j.fault, "need": j.need_open, "ev": sink.take(),
           "w": fl[0].storage.writes if MP else 0,
           "blk": j.dev[1] if type(j.dev) is tuple and j.page is not None else -1}
    # the block of the file prepared for the next game (journal.py: dev's third item, or dev:
    # nonce << 16 | block; -1, -2 none; a list, its state: under way)
    prep = j.dev[2] if type(j.dev) is tuple else j.dev
    if type(prep) is not int:
        out["prep_busy"] = True
    elif prep >= 0:
        out["prep"] = prep & 0xFFFF
    if k == "prep" and MP:
        out["alloc"] = cur["alloc"]
    return out


fresh_engines()
while True:
    line = sys.stdin.readline()
    if not line:
        break
    case = json.loads(line)
    steps = []
    try:
        for op in case["ops"]:
            steps.append(run_op(op))
            trace_out()
        out = {"steps": steps}
    except Exception as e:
        out = {"steps": steps, "error": "%s: %s" % (type(e).__name__, e)}
    trace_mark("case")
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
