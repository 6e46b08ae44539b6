"""The firmware's memory: allocations per loop iteration after boot, the heap it holds after
boot with 236 KB of heap (what the stock RPI_PICO image leaves free at main.py, measured on the
emulated RP2040: ../shared/FACTS.md; it was taken as 192 KB before that was measured), the RAM its code takes once imported,
and its size as .mpy for the RP2040 (tools/build_firmware.py). docs/performance.md keeps the
figures; tests/test_budgets.py holds them to bounds.

    .venv/bin/python -m bench.memory [--display NAME] [--source]

Measured on the MicroPython unix port (64-bit), importing the firmware from .mpy files built
for it (mpy-cross -march=x64 with the Pico build's options; --source: from the .py files, as
the simulator does), in each configuration that changes the hardware (display x front end).
Objects there are pointer-heavy and pointers are 8 bytes, so the heap figures are an upper
bound of the Pico's (32-bit pointers); pico_estimate() gives an estimate of the Pico's, printed
apart and labelled as one. The simulated table (world.py and its tables) is on the same heap but
is measured first and left out; the run gets -X heapsize=<236K + that>, so that the firmware
itself has 236 KB.
"""
import argparse
import atexit
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import _target as T  # noqa: E402

HEAP = 236 * 1024      # free at main.py on the RP2040 (stock image, measured)
GAMES_ROOM = 512 * 1024      # the games' heap beyond the image's copies (measure(), below)
FIRMWARE = os.path.join(ROOT, "firmware")


# -- the loop's allocations are counted over these games ------------------------------------
def scenarios():
    """{name: scenario} covering the loop's paths: menus, every kind of bowling ball, undo, a
    long press back to the menu, a trap set-up check and trap shots with the turn button."""
    from boardsim.testing import Table
    b = Table("bowling", players=2)
    b.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")     # strike
    b.place("small", "a.pocket").shoot("small", "b.e2")                                # 8 pins
    b.shoot("small", "b.pocket", "b.cup").take("small")                                # spare
    b.place("small", "a.pocket").shoot("small", "off")                                 # gutter
    b.place("small", "center").shoot("small", "b.cup").take("small")                   # sink 9
    b.press("undo").advance_time_and_run(300)
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.e2", "small": "center"})
    t.take("big3").place("big3", "a.zline")                                            # set-up ok
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.e2")
    return {"bowling": b.scenario(), "trap": t.scenario()}


def timelines():
    return {name: T.timeline(s) for name, s in scenarios().items()}


# -- builds ------------------------------------------------------------------------------------
def firmware_sources():
    """Paths under firmware/ ("sensing/zones.py"; the folders are packages)."""
    from tools.build_firmware import firmware_files
    return firmware_files(FIRMWARE)


def _path(m):
    # a module's dotted name -> its file under firmware/ (sensing.zones -> sensing/zones)
    return m.replace(".", "/")


def build_host_mpy(out, modules):
    """These firmware modules as .mpy for the unix port (x64: digits.py and ssd1306.py have
    viper code), with the options of the Pico's build (tools/build_firmware.py: OPT)."""
    from tools.build_firmware import compile_mpy
    for m in modules:
        name = _path(m) + ".py"
        os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
        r = compile_mpy(os.path.join(FIRMWARE, name), os.path.join(out, name[:-3] + ".mpy"), name,
                        arch="x64")
        if r.returncode != 0:
            raise SystemExit(f"mpy-cross -march=x64 failed on {name}:\n{r.stderr}")


_HOST_MPY = {}


def host_mpy():
    """A folder of every firmware module but main.py as build_host_mpy() makes it, built once
    per process for the sources as they are (their bytes are the key) and kept until it ends:
    each front end's measure() and the boots of tests/test_budgets.py built the same folder
    again (about 1.8 s of CPU each). Read only: nothing writes into it."""
    names = [n for n in firmware_sources() if n != "main.py"]
    key = _sources_key()
    fw = _HOST_MPY.get(key)
    if fw is None:
        fw = tempfile.mkdtemp(prefix="zenn-host-mpy-")
        atexit.register(shutil.rmtree, fw, True)
        build_host_mpy(fw, [n[:-3].replace("/", ".") for n in names])
        _HOST_MPY[key] = fw
    return fw


def _sources_key():
    """A hash of every firmware module but main.py, names and bytes."""
    h = hashlib.sha1()
    for n in firmware_sources():
        if n != "main.py":
            with open(os.path.join(FIRMWARE, n), "rb") as f:
                h.update(n.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def code_size():
    """{module: (source bytes, .mpy bytes)} for the RP2040 (tools/build_firmware.py). Raises
    SystemExit when a module does not compile."""
    from tools import build_firmware
    out = tempfile.mkdtemp(prefix="zenn-mpy-")
    try:
        rows = build_firmware.build(out=out, quiet=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {n: (s, b) for n, s, b in rows}


# -- displays ----------------------------------------------------------------------------------
def settings():
    """{key: (default, allowed)} of firmware/storage/config.py's SETTINGS ({} without it)."""
    path = os.path.join(FIRMWARE, "storage", "config.py")
    if not os.path.exists(path):
        return {}
    spec = importlib.util.spec_from_file_location("_zenn_config", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {row[0]: (row[1], row[2]) for row in getattr(mod, "SETTINGS", ())}


def display_choices():
    """The values config.json's "display" may take (firmware/storage/config.py), or [None] for
    firmware without a configuration (its one display)."""
    s = settings().get("display")
    if s is None or not isinstance(s[1], tuple):
        return [None]
    return list(s[1])


def front_end_choices():
    """The values config.json's "front_end" may take (firmware/storage/config.py), or [None]."""
    s = settings().get("front_end")
    if s is None or not isinstance(s[1], tuple):
        return [None]
    return list(s[1])


def configurations():
    """(display, front end) pairs worth measuring: every display on the first (default)
    front end, then every other front end with every display."""
    ds = display_choices()
    fs = front_end_choices()
    return [(d, fs[0]) for d in ds] + [(d, f) for f in fs[1:] for d in ds]


def config_file(tmp, display, front_end=None):
    if display is None and front_end is None:
        return None
    cfg = {}
    if display is not None:
        cfg["display"] = display
    if front_end is not None:
        cfg["front_end"] = front_end
    path = os.path.join(tmp, f"config-{display}-{front_end}.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def string_pool(lines):
    """{module: (new strings, bytes the string pool grew by)} from b_memory.py's "QSTR name"
    lines, each followed by micropython.qstr_info()'s ("base": before the firmware, "boot":
    what boot() added)."""
    out = {}
    prev = None
    name = None
    for ln in lines:
        if ln.startswith("QSTR "):
            name = ln[5:].strip()
        elif name is not None and "n_total_bytes=" in ln:
            n = int(ln.split("n_qstr=")[1].split(",")[0])
            b = int(ln.split("n_total_bytes=")[1].split(",")[0].split()[0])
            if prev is not None:
                out[name] = (n - prev[0], b - prev[1])
            prev = (n, b)
            name = None
    return out


# what a configuration's boot imports and the heap in use before it (b_memory.py's first run),
# and whether it boots in a heap in one piece (its "fit" run), once a process for the same
# sources, configuration, heap and firmware folder: measure() of a front end with both displays
# and tests/test_budgets.py's boots of the same configuration made both runs twice (0.4 s of
# CPU a configuration)
_FIRST = {}
_FITS = {}


def _first_run(cfg, display, front_end):
    """(the result of b_memory.py's run with no modules, the firmware modules boot imports)."""
    key = (_sources_key(), display, front_end)
    if key not in _FIRST:
        first, _ = T.run("b_memory.py", {"config": cfg, "modules": None})
        mods = [m for m in first["imported"] if os.path.exists(os.path.join(FIRMWARE, _path(m) + ".py"))]
        _FIRST[key] = (first, mods)
    first, mods = _FIRST[key]
    return dict(first), list(mods)


def _fits(cfg, display, front_end, mods, big, heap, fw):
    """None when the firmware boots with `heap` bytes in one piece (in a heap of `big` bytes),
    else the error's last line."""
    key = (_sources_key(), display, front_end, heap, big, fw)
    if key not in _FITS:
        try:
            T.run("b_memory.py", {"config": cfg, "modules": mods, "fit": heap},
                  heapsize=big, firmware=fw)
            _FITS[key] = None
        except T.TargetFailed as e:
            _FITS[key] = str(e).splitlines()[-1]
    return _FITS[key]


def boots_in_heap(display=None, front_end=None, heap=HEAP, fw=None):
    """(True, None) when the firmware boots in this configuration with `heap` bytes of heap in
    one piece (b_memory.py's "fit"), else (False, the error's last line). fw: a folder of the
    firmware's .mpy built by build_host_mpy() (built here when None)."""
    tmp = tempfile.mkdtemp(prefix="zenn-fit-")
    try:
        cfg = config_file(tmp, display, front_end)
        first, mods = _first_run(cfg, display, front_end)
        if fw is None:
            fw = host_mpy()
        big = first["base"] + 2 * heap + 1024 * 1024
        why = _fits(cfg, display, front_end, mods, big, heap, fw)
        return why is None, why
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the Pico's heap, estimated ----------------------------------------------------------------
def pico_estimate(res, sizes):
    """The heap the firmware would hold after boot on the Pico (RP2040, 32-bit), estimated from
    this 64-bit measurement `res` and the armv6m .mpy sizes `sizes` (code_size()). An estimate:
    docs/performance.md, "Memory", says how far to trust it.

    What is as large on both: a module's bytecode and native code, its strings' characters and
    its bytes constants' data. Those come from the .mpy file, so the file's size (the armv6m
    build, which holds all of them plus a few bytes of headers and of qstrs the interpreter
    has already: so a little too much) is taken whole. The rest of the code's heap is objects
    and tables of pointers (functions, classes, dicts, tuples, constant tables, the qstr
    pool's entries), in 32-byte blocks here: pointers, object headers and small-int slots are
    4 bytes on the Pico, 8 here, and its blocks are 16 bytes, so that rest is halved. Of what
    boot() keeps, the bytearrays and arrays (res["buffers"]) are taken whole and the rest is
    halved. Returns {"code", "boot", "firmware", "free"}."""
    same = 0
    for m in res["modules"]:
        same += sizes.get(_path(m) + ".mpy", (0, 0))[1]
    same = min(same, res["code"])
    code = same + (res["code"] - same) // 2
    buf = min(res.get("buffers", 0), res["boot"])
    boot = buf + (res["boot"] - buf) // 2
    return {"code": code, "boot": boot, "firmware": code + boot,
            "free": res["heap"] - code - boot}


# -- the measurement ---------------------------------------------------------------------------
def measure(display=None, source=False, tls=None, heap=HEAP, locked=True, front_end=None,
            sizes=None, smallest=False):
    """The memory figures of the firmware booted with config.json {"display": display,
    "front_end": front_end} (None: not in the file). With `sizes` (code_size()), "pico" holds
    the Pico estimate (pico_estimate()); with `smallest`, "smallest_heap" the smallest heap in
    one piece it boots in (to 4 KB: a dozen boots more)."""
    tmp = tempfile.mkdtemp(prefix="zenn-mem-")
    tls = timelines() if tls is None else tls
    try:
        cfg = config_file(tmp, display, front_end)
        # 1. which firmware modules boot imports, and what the simulated table takes
        first, mods = _first_run(cfg, display, front_end)
        base = first["base"]
        fw = FIRMWARE
        if not source:
            # every module, not only those still imported after boot: boot imports some and
            # drops them again (config, calib), and the fit run below needs them
            fw = host_mpy()
        # 2. the figures, with room to spare, and the loop's allocations over the games
        big = base + 2 * heap + 1024 * 1024       # the flash image is built with copies
        # The games' run in a heap 512 KB smaller: b_memory.py reads gc.mem_alloc() around
        # every step, a walk of the whole heap's allocation table that took 80 % of the run in
        # the larger one. This one holds the flash image's copies at the runner's start (256 KB
        # less fails there, MemoryError) and, between the step counter's collections, the
        # simulator's garbage (at most 160 KB over 737 KB in use, both front ends): the same
        # figures.
        games_heap = base + 2 * heap + GAMES_ROOM
        res, lines = T.run("b_memory.py", {"config": cfg, "modules": mods, "timelines": tls},
                           heapsize=games_heap, firmware=fw)
        res["strings"] = string_pool(lines)
        # 3. does it boot with `heap` bytes free in one piece (a ballast takes the rest)?
        def boots(n):
            why = _fits(cfg, display, front_end, mods, big, n, fw)
            if why is not None and n == heap:
                res["boot_failure"] = why
            return why is None
        res["boots_in_heap"] = boots(heap)
        if smallest:
            # the smallest heap it boots in, to 4 KB (roughly: with the holes the imports
            # leave, booting is not quite monotonic in the heap's size)
            lo, hi = (heap // 2, heap) if res["boots_in_heap"] else (heap, 2 * heap)
            while hi - lo > 4096:
                mid = (lo + hi) // 2
                if boots(mid):
                    hi = mid
                else:
                    lo = mid
            res["smallest_heap"] = hi
        # 4. the same games with the heap locked around each step (the runner's check)
        if locked:
            try:
                lk, _ = T.run("b_memory.py", {"config": cfg, "locked": True, "timelines": tls},
                              heapsize=big + 1024 * 1024, firmware=fw)
                res["locked"] = lk["locked"]
            except T.TargetFailed as e:
                res["locked_error"] = str(e).splitlines()[-1]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["heap"] = heap
    res["free"] = heap - res["firmware"]
    steps = sum(res["steps"].values())
    res["iterations"] = steps // 16
    res["alloc_total"] = sum(res["alloc"].values())
    res["alloc_per_iteration"] = res["alloc_total"] / max(1, res["iterations"])
    res["collections_total"] = sum(res["collections"].values())
    res["display"] = display
    res["front_end"] = front_end
    res["source"] = source
    if sizes:
        res["pico"] = pico_estimate(res, sizes)
    return res


def _name(r):
    return "%s/%s" % (r["display"], r["front_end"])


def report(results, sizes):
    print("Memory (MicroPython unix port, 64-bit; firmware imported from %s)"
          % ("source" if results[0]["source"] else ".mpy built for it"))
    print()
    print(f"{'display/front end':18} {'iterations':>10} {'alloc B/it':>10} {'locked':>7} "
          f"{'code B':>8} {'boot B':>8} {'firmware B':>10} {'free of 236K':>12} "
          f"{'boots in 236K':>13}")
    for r in results:
        print(f"{_name(r):18} {r['iterations']:10d} {r['alloc_per_iteration']:10.1f} "
              f"{'FAIL' if r.get('locked_error') else 'ok':>7} "
              f"{r['code']:8d} {r['boot']:8d} {r['firmware']:10d} {r['free']:12d} "
              f"{'yes' if r['boots_in_heap'] else 'no':>13}")
    print("  iterations: loop iterations (16 steps) played over the games in bench/memory.py's")
    print("  scenarios(); alloc B/it: bytes step() kept allocated, per iteration (gc.mem_alloc()")
    print("  around each step, collected before it); locked: the same games with the heap locked")
    print("  around each step (ok: no MemoryError)")
    for r in results:
        if "smallest_heap" in r:
            print(f"  {_name(r)} boots in {r['smallest_heap'] // 1024} KB of heap at the least "
                  f"(holds {r['firmware'] // 1024} KB after boot)")
        if r.get("locked_error"):
            print(f"  {_name(r)}: {r['locked_error']}")
        if not r["boots_in_heap"]:
            print(f"  {_name(r)} with 236K: {r['boot_failure']}")
    if any("pico" in r for r in results):
        print()
        print("Pico (RP2040, 32-bit) ESTIMATE of the same, from the figures above and the .mpy "
              "sizes")
        print("(bench/memory.py pico_estimate(); docs/performance.md says how far to trust it):")
        print(f"{'display/front end':18} {'code B':>8} {'boot B':>8} {'firmware B':>10} "
              f"{'free of 236K':>12}")
        for r in results:
            p = r.get("pico")
            if p:
                print(f"{_name(r):18} {p['code']:8d} {p['boot']:8d} {p['firmware']:10d} "
                      f"{p['free']:12d}")
    print()
    r = max(results, key=lambda r: r["firmware"])
    st = r.get("strings", {})
    print(f"code RAM per module ({_name(r)}; in import order, each with the modules it "
          f"pulls in first);")
    print("strings: the new names and short strings it brings, pool B: what the string pool")
    print("grew by for them (the pool grows by doubling: the import that needs the next one is")
    print("charged all of it), rest B: its bytecode, constants and objects")
    print(f"  {'module':16} {'code B':>7} {'strings':>7} {'pool B':>7} {'rest B':>7}")
    for m, b in sorted(r["modules"].items(), key=lambda kv: -kv[1]):
        n, p = st.get(m, (0, 0))
        print(f"  {m:16} {b:7d} {n:7d} {p:7d} {b - p:7d}")
    tn = sum(st.get(m, (0, 0))[0] for m in r["modules"])
    tp = sum(st.get(m, (0, 0))[1] for m in r["modules"])
    print(f"  {'all':16} {r['code']:7d} {tn:7d} {tp:7d} {r['code'] - tp:7d}")
    print()
    print(f"{'module (.mpy, armv6m)':24} {'source':>8} {'built':>8}")
    for n, (s, b) in sorted(sizes.items()):
        print(f"  {n:22} {s:8d} {b:8d}")
    print(f"  {'total':22} {sum(v[0] for v in sizes.values()):8d} {sum(v[1] for v in sizes.values()):8d}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--display", help="one display choice (config.json); default: each")
    ap.add_argument("--front-end", help="one front end (config.json); default: each")
    ap.add_argument("--source", action="store_true", help="import the .py files, not .mpy")
    ap.add_argument("--smallest", action="store_true",
                    help="also find the smallest heap each boots in (slow)")
    a = ap.parse_args(argv)
    choices = [c for c in configurations()
               if (a.display is None or c[0] == a.display)
               and (a.front_end is None or c[1] == a.front_end)]
    if not choices:
        choices = [(a.display, a.front_end)]
    try:
        sizes = code_size()
    except SystemExit as e:
        print(f"code size: {e}")
        sizes = {}
    tls = timelines()
    results = [measure(d, a.source, tls, front_end=f, sizes=sizes, smallest=a.smallest)
               for d, f in choices]
    report(results, sizes)


if __name__ == "__main__":
    main()
