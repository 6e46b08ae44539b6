"""Target side of bench/memory.py and tests/test_budgets.py: the firmware's heap, measured on
the MicroPython unix port.

Job (one JSON line on stdin):
  {"config": PATH or null, "modules": [name, ...] or null, "timelines": {name: [op, ...]},
   "locked": false, "fit": BYTES or null}
- "modules" null: only boots the firmware and reports which modules it imported ("imported")
  and the heap in use before them ("base": the interpreter, the simulated table, its flash).
- "locked": plays each timeline from a fresh boot with the heap locked around each step, as
  the runner does (an allocation there ends the run: exit status 3); {"locked": {name: steps}}.
- "fit": a ballast takes all the free heap but BYTES in one piece (fill_heap()), then the
  firmware is imported and booted:
  {"fit": true, "free": ...} with what is left, and the largest free block in the
  micropython.mem_info() printed before the result; exit status 1 (MemoryError) if it does
  not fit.
- otherwise: imports the modules one by one, boots, and plays each timeline on that firmware.
  Result (one "RESULT {...}" line):
  base       heap in use before anything of the firmware
  code       heap the firmware's modules take once imported
  modules    {module: bytes} the same per module, in import order (a module's first import
             also counts the modules it imports that were not imported yet)
  boot       heap Scoreboard.boot() keeps (its objects, and modules it imports lazily)
  firmware   code + boot: the firmware's heap after boot, the simulated table left out
  buffers    bytes held in bytearrays and arrays reachable from the Scoreboard after boot
             (the same size on the Pico: bench/memory.py's estimate keeps them whole)
  steps      {timeline: steps run}
  (and before the result, "QSTR name" lines each followed by micropython.qstr_info()'s line:
  the string pool after each import, bench/memory.py's "strings")
  alloc      {timeline: bytes step() kept allocated}, alloc_steps {timeline: steps that did},
             collections {timeline: steps inside which a collection ran} (see StepCounter)
"""
import gc
import sys
from array import array

import micropython      # noqa: E402
import b_harness as H   # noqa: E402

# the firmware's modules in dependency order (leaves first), so each is charged for its own
# code; modules not listed here (new ones) come after these, by name, and app.py last
ORDER = ("tables.pins", "tables.board_table", "tracking.shot", "displays.font", "sensing.zones",
         "scoreboard.events", "sensing.fastin", "panel.buttons", "sensing.hall_scan", "sensing.hall_fit",
         "sensing.hall_seed", "sensing.hall_follow",
         "sensing.hall_locate", "tracking.tracker", "games.bowling", "games.trap", "storage.journal",
         "displays.digits", "displays.ssd1306", "displays.oled_screens", "displays.max7219",
         "displays.seg_screens", "storage.config", "displays.display_set")
APP = "scoreboard.app"
# the folders (packages without __init__.py): a module object each in sys.modules, not modules
PACKAGES = ("tables", "tracking", "displays", "sensing", "scoreboard", "panel", "games", "storage")


class StepCounter:
    """Stands in for Scoreboard.step: runs it with the heap unlocked (inside the runner's lock)
    and reads gc.mem_alloc() around it, so what a step keeps allocated shows as a positive
    difference. A MicroPython function whose frame is larger than VM_MAX_STATE_ON_STACK takes
    the frame from the heap and gives it back on return when the heap is unlocked, as on the
    Pico: that leaves nothing behind, but with the heap full of the simulator's garbage it can
    start a collection inside the step (a negative difference, counted in `collections`; such
    a step's own allocation would be hidden, so the heap is collected every COLLECT steps to
    keep them rare, and the locked replay catches what they hide)."""
    COLLECT = 32

    def __init__(self, sb):
        self.orig = sb.step
        self.alloc = 0
        self.alloc_steps = 0
        self.collections = 0
        self.n = 0

    def step(self):
        micropython.heap_unlock()
        self.n += 1
        if self.n >= self.COLLECT:
            self.n = 0
            gc.collect()
        m0 = gc.mem_alloc()
        idle = self.orig()
        d = gc.mem_alloc() - m0
        if d > 0:
            self.alloc += d
            self.alloc_steps += 1
        elif d < 0:
            self.collections += 1
        micropython.heap_lock()         # as the runner had it
        return idle


def fill_heap(leave):
    """Ballast that takes all the free heap but one run of `leave` bytes in one piece (a list
    of objects, kept), as a Pico's heap is after boot.py: first `leave` is set aside in one
    block, then everything else is filled, the holes the simulated table left included (down
    to single blocks, with floats), then the block set aside is given back."""
    gc.collect()
    slots = [None] * 32768
    reserve = bytearray(leave)
    n = 0
    size = 1 << 20
    while size >= 16 and n < len(slots):
        try:
            slots[n] = bytearray(size)
            n += 1
        except MemoryError:
            size >>= 1
    while n < len(slots):
        try:
            slots[n] = n + 0.5          # a float: one block of its own
            n += 1
        except MemoryError:
            break
    reserve = None      # noqa: F841 (given back)
    gc.collect()
    return slots


def buffers(root, sim=()):
    """Bytes in the bytearrays and arrays reachable from `root` through instance attributes,
    lists, tuples and dicts (each counted once): the part of the objects boot() makes that
    is raw data, as large on the Pico as here. Modules, classes and functions are code; what
    is reachable from `sim` (the simulated table) is not the firmware's."""
    seen = set()
    _walk(sim, seen)
    return _walk(root, seen)


def _walk(root, seen):
    todo = [root]
    total = 0
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        t = type(o)
        if t is bytearray or t is array:
            total += len(bytes(o))
        elif t is list or t is tuple:
            todo.extend(o)
        elif t is dict:
            todo.extend(o.values())
        elif t is bytes or t is str or t is int or t is bool or t is float or o is None:
            pass
        elif t.__name__ in ("module", "type", "function", "bound_method", "closure",
                            "memoryview"):
            pass
        else:
            d = getattr(o, "__dict__", None)
            if d is not None:
                todo.extend(d.values())
    return total


def _qstr(name):
    # the string pool after `name` (micropython.qstr_info(): n_qstr, n_total_bytes), for the
    # host to tell a module's strings from the rest of its code (bench/memory.py)
    print("QSTR " + name)
    micropython.qstr_info()


def emit_meminfo():
    gc.collect()
    print("MEMINFO-BEGIN")
    micropython.mem_info()
    print("MEMINFO-END")


def main():
    j = H.job()
    cfg = j.get("config")
    # the simulated table first: it is not the firmware's
    r = H.runner(cfg)
    base = H.heap()
    wanted = j.get("modules")
    if j.get("locked"):
        res = {"locked": {}}
        for name in sorted(j.get("timelines", {})):
            H.play(r, j["timelines"][name])
            r.run_ms(200)
            res["locked"][name] = r.steps
            r.power_cut()
            r = None
            gc.collect()
            r = H.runner(cfg)
        H.emit(res)
        return
    if j.get("fit"):
        ballast = fill_heap(j["fit"])     # noqa: F841 (held to the end)
        for name in wanted:
            __import__(name)
        H.boot(r)
        free = gc.mem_free()
        emit_meminfo()
        H.emit({"fit": True, "free": free})
        return
    if wanted is None:
        before = set(sys.modules)
        H.boot(r)
        H.emit({"base": base, "imported": sorted(set(sys.modules) - before - set(PACKAGES))})
        return
    order = [m for m in ORDER if m in wanted]
    order += sorted(m for m in wanted if m not in ORDER and m != APP)
    order += [m for m in wanted if m == APP]
    mods = {}
    prev = base
    _qstr("base")
    for name in order:
        __import__(name)
        now = H.heap()
        mods[name] = now - prev
        prev = now
        _qstr(name)
    code = prev - base
    sb = H.boot(r)
    boot = H.heap() - prev
    _qstr("boot")
    res = {"base": base, "code": code, "modules": mods, "boot": boot, "firmware": code + boot,
           "buffers": buffers(sb, [r.world, r.flash, r.out]), "steps": {}, "alloc": {}, "alloc_steps": {}, "collections": {}}
    # allocations in the loop: every timeline, one after the other, on this booted firmware
    counter = StepCounter(sb)
    sb.step = counter.step
    for name in sorted(j.get("timelines", {})):
        s0 = r.steps
        a0 = counter.alloc
        n0 = counter.alloc_steps
        c0 = counter.collections
        H.play(r, j["timelines"][name])
        r.run_ms(200)
        res["steps"][name] = r.steps - s0
        res["alloc"][name] = counter.alloc - a0
        res["alloc_steps"][name] = counter.alloc_steps - n0
        res["collections"][name] = counter.collections - c0
    H.emit(res)


main()
