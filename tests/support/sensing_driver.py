# Test driver for the sensing chain: boardsim/target/hall_model.py behind the `machine` stand-in
# (boardsim/target/machine.py), firmware/sensing/hall_scan.py, firmware/sensing/hall_locate.py, firmware/sensing/zones.py.
# Runs unchanged under the MicroPython unix port (MICROPYPATH=tests/support:firmware:boardsim/target)
# and CPython (the same directories on PYTHONPATH). One JSON case per input line, one JSON result
# per output line (the loop: driver.py), so a whole test module shares one interpreter process.
#
# Every firmware call in a loop (HallScanner.step, Locator.find, zones.*) runs with the heap
# locked: under MicroPython an allocation raises MemoryError, reported as {"error": ...}.
#
# Cases:
#   {"op": "points", "pts": [[x, y], ...]}             -> {"m": [point_mask, ...]}
#   {"op": "discs", "d": [[x, y, r], ...]}             -> {"m": [disc_mask, ...]}
#   {"op": "locate", "sets": [[[x, y, pol, amp], ...], ...], "frames": F}
#        each set: the world's chips; F frames scanned; then find()
#        -> {"r": [[[kind, x, y, strength, err, mask], ...], ...], "frame": scanner frame count}
#   {"op": "grid", "sets": [...], "noise": N}          the same, but each set read once straight
#        from the model into a grid with an ideal baseline (no scanner), noise N LSB
#   {"op": "faulty", "chips": [...], "mode": "frozen" | "noise", "v": V, "frames": F}
#        the chips read once (as "grid"), then F frames of every present pad frozen at V
#        (mode frozen) or noisy at random within +-V (noise), each find()'s work counted
#        -> {"before": [...chips], "r": [[...chips] per frame], "fits": [..], "iters": [..],
#            "cands": [..], "unread": [..]}
#   {"op": "gray"}                                     -> {"max_flips": most select pins changed
#        between two ADC reads of different pads, "reads": reads so far}
#   {"op": "alloc"}                                    allocates under the lock (harness check)
import micropython
from driver import alloc_check, serve
import machine
import world_table as T
from hall_model import HallModel
from sensing.hall_scan import HallScanner
from sensing.hall_locate import Locator
from tables.board_table import R_SMALL, R_BIG, PAD_COLS, PAD_ROWS, PAD_PITCH, PAD_X0, PAD_Y0
from array import array
from tracking.shot import KIND_SMALL
from sensing import zones


class HallWorld:
    """Just the hall pads of world.World: the ADC reads the pad its multiplexers select."""

    def __init__(self):
        pm = T.PINMAP
        self.hall = HallModel(T)
        self.sel_ch = tuple(pm["mux_channel_select"])
        self.sel_bank = tuple(pm["mux_bank_select"])
        self.last = -1
        self.max_flips = 0
        self.reads = 0

    def adc_read(self, channel):
        lv = machine._level
        s = self.sel_ch
        b = self.sel_bank
        ch = lv[s[0]] | (lv[s[1]] << 1) | (lv[s[2]] << 2) | (lv[s[3]] << 3)
        bank = lv[b[0]] | (lv[b[1]] << 1) | (lv[b[2]] << 2) | (lv[b[3]] << 3)
        state = (bank << 4) | ch
        if self.last >= 0 and state != self.last:
            d = state ^ self.last
            flips = 0
            while d:
                flips += d & 1
                d >>= 1
            if flips > self.max_flips:
                self.max_flips = flips
        self.last = state
        self.reads += 1
        pad = T.PAD_AT[(channel * T.BANKS + bank) * T.CHANNELS + ch]
        if pad < 0:
            return T.ADC_ZERO
        return self.hall.read(pad)


world = HallWorld()
machine.attach(world)
scan = HallScanner()
scan.calibrate_empty(4)
loc = Locator()
masks = [0] * 8

# the locator's work, counted (issue 13): joint fits and Gauss-Newton iterations (each makes
# one window) and candidates examined, through counting methods of this instance (no allocation)
work = array('i', bytes(4 * 3))
_fit_group = loc._fit_group
_window = loc._window
_strongest = loc._strongest


def counting_fit_group():
    work[0] += 1
    return _fit_group()


def counting_window():
    work[1] += 1
    return _window()


def counting_strongest(nc, t):
    work[2] += 1
    return _strongest(nc, t)


loc._fit_group = counting_fit_group
loc._window = counting_window
loc._strongest = counting_strongest
# pad -> grid index, for grids read straight from the model
GRID_OF = [((T.PAD_Y[p] - PAD_Y0) // PAD_PITCH) * PAD_COLS + (T.PAD_X[p] - PAD_X0) // PAD_PITCH
           for p in range(T.N_PADS)]
direct = array('h', bytes(2 * PAD_COLS * PAD_ROWS))


def locate_into(grid, results):
    micropython.heap_lock()
    try:
        n = loc.find(grid)
        # a zone mask per chip, as the tracker does it
        for i in range(n):
            masks[i] = zones.disc_mask(loc.x[i], loc.y[i], R_SMALL if loc.kind[i] == KIND_SMALL else R_BIG)
    finally:
        micropython.heap_unlock()
    found = []
    for i in range(n):
        found.append([loc.kind[i], loc.x[i], loc.y[i], loc.strength[i], loc.err[i], masks[i]])
    results.append(found)


def locked_step():
    micropython.heap_lock()
    try:
        done = scan.step()
    finally:
        micropython.heap_unlock()
    return done


def case(c):
    op = c["op"]
    if op == "points":
        pts = c["pts"]
        res = [0] * len(pts)
        micropython.heap_lock()
        try:
            for i in range(len(pts)):
                p = pts[i]
                res[i] = zones.point_mask(p[0], p[1])
        finally:
            micropython.heap_unlock()
        return {"m": res}
    if op == "discs":
        ds = c["d"]
        res = [0] * len(ds)
        micropython.heap_lock()
        try:
            for i in range(len(ds)):
                d = ds[i]
                res[i] = zones.disc_mask(d[0], d[1], d[2])
        finally:
            micropython.heap_unlock()
        return {"m": res}
    if op == "locate":
        frames = c.get("frames", 3)
        results = []
        for chips in c["sets"]:
            world.hall.update(chips)
            for _ in range(frames):
                while not locked_step():
                    pass
            locate_into(scan.grid, results)
        return {"r": results, "frame": scan.frame}
    if op == "grid":
        h = world.hall
        keep = h.noise_lsb
        h.noise_lsb = c.get("noise", keep)
        results = []
        try:
            for chips in c["sets"]:
                h.update(chips)
                for p in range(T.N_PADS):
                    direct[GRID_OF[p]] = h.read(p) - h.base[p]
                locate_into(direct, results)
        finally:
            h.noise_lsb = keep
        return {"r": results}
    if op == "faulty":
        h = world.hall
        h.update(c["chips"])
        for p in range(T.N_PADS):
            direct[GRID_OF[p]] = h.read(p) - h.base[p]
        before = []
        locate_into(direct, before)
        v = c["v"]
        seed = 12345
        out = {"before": before[0], "r": [], "fits": [], "iters": [], "cands": [], "unread": []}
        for _ in range(c.get("frames", 3)):
            for p in range(T.N_PADS):
                if c["mode"] == "frozen":
                    direct[GRID_OF[p]] = v
                else:
                    seed = (seed * 1103515245 + 12345) & 0x3FFFFFFF
                    direct[GRID_OF[p]] = (seed >> 8) % (2 * v + 1) - v
            for k in range(3):
                work[k] = 0
            locate_into(direct, out["r"])
            out["fits"].append(work[0])
            out["iters"].append(work[1])
            out["cands"].append(work[2])
            out["unread"].append(getattr(loc, "unread", -1))
        return out
    if op == "gray":
        return {"max_flips": world.max_flips, "reads": world.reads}
    if op == "alloc":
        return alloc_check()
    return {"error": "unknown op " + op}


serve(case)
