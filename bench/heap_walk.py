"""Where the heap goes after boot on the emulated chip (issue 13): main.py stopped at the REPL,
every object reachable from the Scoreboard (`sb`) and from each module in `sys.modules` sized
on the chip itself. Only objects in RAM count (`id()` in 0x20000000 - 0x20042000): frozen code,
qstrs and constants in flash count nothing. Sizes are the heap blocks (16 B) an object takes,
read from its own header with machine.mem32 where its size is not fixed (a dict's, a list's or
an instance's table, an array's items), estimated by type elsewhere (a class object 80 B, a
function 16 B plus its defaults). Each object is counted once, for the first root that reaches
it: the Scoreboard's attributes first, then the modules (their dicts, functions and classes).

    .venv/bin/python -m bench.heap_walk [--presence] [--top N]

Prints `gc.mem_free()`/`mem_alloc()` with the walk's own module imported (its code and
prelude: about 3.7 KB less free than probe.heap_free(), which tests/test_rp2040.py asserts),
then the held bytes by root and by kind, and the largest single objects with their paths (a
dict's or an instance's table as used/alloc: a table grows to the next size of MicroPython's
list, 17, 23, 29, 37, 47, 59, 73, 97 ..., when full). What the walk does not reach (qstr pools,
the mounted flash, the walk's module) is mem_alloc less the walked total.
docs/performance.md, "Room on the chip's heap after boot", holds the figures.
"""
import argparse
import json
import os
import tempfile

WALK = r'''
import sys
import gc
import machine
import __main__
gc.collect()
_free = gc.mem_free()
_alloc = gc.mem_alloc()
M = machine.mem32
LO = 0x20000000
HI = 0x20042000


def rnd(n):
    return (n + 15) & ~15 if n > 0 else 0


def ram(o):
    i = id(o)
    return LO <= i < HI


try:
    from array import array as _arr
except ImportError:
    _arr = None
_fn = type(rnd)
_mod = type(sys)
_meth = type(gc.collect)
class _K:
    def m(self):
        pass
_bm = type(_K().m)
_ITEM = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4, "l": 4, "L": 4, "q": 8, "Q": 8, "f": 4, "d": 8}


def size_kids(o):
    """(kind, bytes, children)"""
    t = type(o)
    i = id(o)
    if t is dict:
        return "dict %d/%d" % (M[i + 4] >> 3, M[i + 8]), 16 + rnd(M[i + 8] * 8), ()
    if t is list:
        return "list", 16 + rnd(M[i + 4] * 4), o
    if t is tuple:
        return "tuple", rnd(8 + 4 * len(o)), o
    if t is bytearray or (_arr is not None and t is _arr):
        w = M[i + 4]
        tc = chr(w & 0xFF)
        n = M[i + 8] + (w >> 8)
        return ("bytearray" if t is bytearray else "array(" + tc + ")"), 16 + rnd(n * _ITEM.get(tc, 1)), ()
    if t is str or t is bytes:
        return t.__name__, 16 + rnd(len(o) + 1), ()
    if t is _mod:
        d = o.__dict__
        return "module", 16, [d]
    if t is _fn:
        return "function", 16, ()
    if t is _bm:
        return "bound method", 16, ()
    if t is type:
        kids = []
        try:
            kids = [o.__dict__]
        except Exception:
            pass
        return "class", 80, kids + list(getattr(o, "__bases__", ()))
    if t is float:
        return "float", 16, ()
    if t is int:
        return "bigint", 16, ()
    if ram(t):
        # an instance of a class defined in Python: its members map
        kids = []
        try:
            kids = [o.__dict__]
        except Exception:
            pass
        return "instance %s %d/%d" % (t.__name__, M[i + 4] >> 3, M[i + 8]), 16 + rnd(M[i + 8] * 8), kids + [t]
    return t.__name__, 16, ()


SEEN = bytearray((HI - LO) >> 7)     # a bit per 16-byte block (made before the walk)


def seen_set(i):
    b = (i - LO) >> 4
    SEEN[b >> 3] |= 1 << (b & 7)


def seen_has(i):
    b = (i - LO) >> 4
    return SEEN[b >> 3] & (1 << (b & 7))


by_root = {}
by_kind = {}


def walk(root, obj, path):
    stack = [(obj, path)]
    while stack:
        o, p = stack.pop()
        if not ram(o):
            continue        # in flash (frozen code's constants, qstrs) or a small int
        i = id(o)
        if seen_has(i):
            continue
        seen_set(i)
        try:
            kind, n, kids = size_kids(o)
        except Exception:
            kind, n, kids = "?" + type(o).__name__, 16, ()
        by_root[root] = by_root.get(root, 0) + n
        k = root + "|" + kind.split(" ")[0]
        by_kind[k] = by_kind.get(k, 0) + n
        if n >= MINBIG:
            print(json.dumps({"ev_": "heapbig", "b": (n, p, kind)}))
        if type(o) is dict or (kind.startswith("instance ") and kids):
            if type(o) is not dict:
                stack.append((kids[1], p + ".__class__"))
                o = kids[0]
            for kk, vv in o.items():
                stack.append((kk, p + "[k]"))
                stack.append((vv, p + "." + (kk if type(kk) is str else "[]")))
        else:
            for c in kids:
                stack.append((c, p + "."))


MINBIG = 48
sb = __main__.sb
for _o in (SEEN, by_root, by_kind):
    seen_set(id(_o))
d = sb.__dict__
FIRST = ("scan", "loc", "tracker", "fast", "ev", "journal", "oled", "ui", "engines", "games")
for k in FIRST:
    if k in d:
        walk("sb." + k, d[k], "sb." + k)
for k in sorted(d):
    walk("sb." + k, d[k], "sb." + k)
walk("sb (instance)", sb, "sb")
for name in sorted(sys.modules):
    if name.startswith("zjob") or name == "__main__":
        continue
    walk("mod " + name, sys.modules[name], name)
for k in list(__main__.__dict__):
    if k in ("sb",) or k.startswith("_"):
        continue
    walk("__main__." + k, __main__.__dict__[k], "__main__." + k)
print(json.dumps({"ev": "heapwalk", "ev_": "heapwalk", "free": _free, "alloc": _alloc, "by_root": by_root,
                  "by_kind": by_kind}))
'''


def run(presence=False):
    from boardsim.rp2040 import probe
    import io
    from boardsim import runtime
    src = "import json\n" + WALK
    tl = probe.module_timeline(src, wait_ms=200, await_ms=300000, await_ev="heapwalk")
    out = io.StringIO()
    args = []
    if presence:
        fd, cfg = tempfile.mkstemp(prefix="heapwalk-config-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"front_end": "shift"}))
        args = ["--config", cfg]
    runtime.run(tl, "rp2040", stdout=out, runner_args=args)
    big = []
    for ln in out.getvalue().splitlines():
        try:
            e = json.loads(ln)
        except ValueError:
            continue
        if e.get("ev_") == "heapbig":
            big.append(e["b"])
        if e.get("ev_") == "heapwalk":
            e["big"] = sorted(big)
            return e
    raise SystemExit("no walk line:\n" + out.getvalue()[-3000:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presence", action="store_true")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--json", help="write the whole walk here")
    a = ap.parse_args()
    e = run(a.presence)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(e, f, indent=1)
    print(f"free {e['free']} alloc {e['alloc']} walked {sum(e['by_root'].values())}")
    print("-- by root")
    for k, v in sorted(e["by_root"].items(), key=lambda kv: -kv[1]):
        print(f"{v:7d}  {k}")
    print("-- by root and kind")
    for k, v in sorted(e["by_kind"].items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"{v:7d}  {k}")
    print("-- largest objects")
    for n, p, kind in reversed(e["big"][-a.top:]):
        print(f"{n:7d}  {kind:24s} {p}")


if __name__ == "__main__":
    main()
