# Test driver for the second front end: boardsim/target/presence_model.py behind the `machine`
# stand-in (row select pins, the 74HC165s' load pin, SPI.readinto), firmware/sensing/shift_scan.py,
# firmware/sensing/presence_locate.py and firmware/sensing/zones.py. Runs unchanged under the MicroPython unix
# port and CPython (MICROPYPATH / PYTHONPATH = tests/support:firmware:boardsim/target); one
# JSON case per input line, one JSON result per output line (the loop: driver.py).
#
# Every scan step and find() runs with the heap locked: under MicroPython an allocation raises
# MemoryError, reported as {"error": ...}.
#
# Cases:
#   {"op": "locate", "sets": [[[x, y, r, amp], ...], ...], "hands": [[x, y], ...], "frames": F}
#        each set: the chips (radius r, 0.1 mm) lying still; F frames scanned; then find()
#        -> {"r": [[[kind, x, y, unc, err, mask], ...], ...], "hand": [hand count per set],
#            "specks": [...], "latches": n}
#   {"op": "fault", "cell": g, "mode": m} / {"op": "fault", "sr": k, "mode": m} / {"op": "clear"}
#   {"op": "covered", "chips": [...], "frames": F}   the chips read (3 frames), then every
#        74HC165 stuck high (every pad covered) for F frames, each find()'s work counted
#        -> {"before": [...chips], "r": [...per frame], "cells": [pads flooded], "fits": [..],
#            "hand": [..], "unread": [..]}; the faults cleared after
#   {"op": "torn", "chips": [...], "hands": [[x, y], ...], "steps": s}   one frame read with the
#        hands over the pads for its first s scan steps, gone after; then find()
#        -> {"r": [...chips], "hand": count, "tried": moves, "fits": fits, "cells": pads}
#   {"op": "radii", "small": r, "big": r}                  the locator's seen radii
#   {"op": "level", "cell": g, "delta": d}                 one pad's level moved (the chips stay)
#   {"op": "alloc"}                                        allocates under the lock
#   {"op": "clock", "us": u, "budget": b}   the locator's clock run as the chip's would (u us a
#        move tried, 400 us a reading, as tests/support/find_counter.py) and its BUDGET_US b, so
#        that searches are cut and kept (_park) here too; u 0: no clock, the class's budget
#   {"op": "kept"}   the still search kept after the last find() -> {"phase": its phase (_SV,
#        0: none; 6: a touching group's held fits, _hold), "held": in phase 6 its chips held
#        at their rest fits so far (a mask)}
import micropython
from driver import alloc_check, serve
import machine
import world_table as T
from presence_model import PresenceModel
from sensing.shift_scan import PresenceScanner
from sensing.presence_locate import PresenceLocator, covered
from tables.board_table import R_SMALL, R_BIG
from tracking.shot import KIND_SMALL
from sensing import zones
from array import array


class PresWorld:
    def __init__(self):
        pm = T.PINMAP["shift"]
        self.pres = PresenceModel(T)
        self.pres._levels = machine._level
        self.pres.row_sel = tuple(pm["row_select"])
        # latch()'s fast paths, as the simulator's world takes them (world.py): the same bytes
        # and coins as its own loop (test_presence.py's fast latches test), in viper under the
        # unix port; its own loop was a fifth of this driver's CPU under CPython
        self.pres.prepare()
        self.bus = pm["bus"]
        machine.watch(pm["load"], self.edge)

    def edge(self, pin, level):
        if level == 0:
            self.pres.latch()

    def spi_readinto(self, bus, buf):
        self.pres.read(buf)

    def spi_write(self, bus, buf):
        pass


world = PresWorld()
machine.attach(world)
scan = PresenceScanner()
loc = PresenceLocator(scan)
masks = [0] * 8

# the locator's work, counted (issue 13): group fits tried (no allocation: an array, methods
# of this instance)
work = array('i', bytes(4))
_fit = loc._fit
_follow = loc._follow


def counting_fit(j, still, room, cnt):
    work[0] += 1
    return _fit(j, still, room, cnt)


def counting_follow(j, prev, still, room):
    work[0] += 1
    return _follow(j, prev, still, room)


loc._fit = counting_fit
loc._follow = counting_follow


class Clock:
    """The chip's clock as the moves tried (from `install`) and the readings would run it."""
    us = 0
    t0 = 0
    reads = 0

    def read(self):
        self.reads += 1
        return ((loc.tried - self.t0) * self.us + self.reads * 400) & 0x3FFFFFFF


clock = Clock()


def locked(fn):
    micropython.heap_lock()
    try:
        return fn()
    finally:
        micropython.heap_unlock()


def find_and_masks():
    n = loc.find(scan.grid)
    for i in range(n):
        masks[i] = zones.disc_mask(loc.x[i], loc.y[i], R_SMALL if loc.kind[i] == KIND_SMALL else R_BIG)
    return n


def case(c):
    op = c["op"]
    if op == "locate":
        frames = c.get("frames", 3)
        results = []
        hands = []
        specks = []
        hl = [tuple(h) for h in c.get("hands", [])]
        for chips in c["sets"]:
            world.pres.update([tuple(ch) for ch in chips], hl)
            n = 0
            for _ in range(frames):
                while not locked(scan.step):
                    pass
                n = locked(find_and_masks)
            found = []
            for i in range(n):
                found.append([loc.kind[i], loc.x[i], loc.y[i], loc.unc[i], loc.err[i], masks[i]])
            results.append(found)
            hands.append(loc.hand)
            specks.append([loc.speck[i] for i in range(loc.specks)])
        return {"r": results, "hand": hands, "specks": specks, "latches": world.pres.latches}
    if op == "torn":
        # a frame read while a hand left (issue 13): the hand over the chips for the frame's
        # first `steps` scan steps, gone for the rest; then find(), its moves counted
        hl = [tuple(h) for h in c.get("hands", [])]
        chips = [tuple(ch) for ch in c["chips"]]
        world.pres.update(chips, hl)
        for _ in range(c["steps"]):
            locked(scan.step)
        world.pres.update(chips, [])
        while not locked(scan.step):
            pass
        t0 = loc.tried
        work[0] = 0
        n = locked(find_and_masks)
        found = [[loc.kind[i], loc.x[i], loc.y[i], loc.unc[i], loc.err[i], masks[i]]
                 for i in range(n)]
        return {"r": found, "hand": loc.hand, "tried": loc.tried - t0, "fits": work[0],
                "cells": loc.nc}
    if op == "fault":
        if "cell" in c:
            world.pres.set_fault(c["cell"], c["mode"])
            loc.set_ignored(c["cell"], 0)
        else:
            world.pres.set_sr_fault(c["sr"], c["mode"])
        return {}
    if op == "level":
        # one pad's level moved by delta, the chips left as they lie (a pad switching at one
        # level's threshold: noise)
        g = c["cell"]
        world.pres.state[g] = max(0, min(T.PRES_LEVELS, world.pres.state[g] + c["delta"]))
        return {"level": world.pres.state[g]}
    if op == "ignore":
        loc.set_ignored(c["cell"], c.get("flag", 1))
        return {}
    if op == "clear":
        world.pres.clear_faults()
        return {}
    if op == "covered":
        world.pres.update([tuple(ch) for ch in c["chips"]], [])
        out = {"before": [], "r": [], "cells": [], "fits": [], "hand": [], "unread": []}
        for f in range(3 + c.get("frames", 3)):
            if f == 3:
                for k in range(T.PRES_SR):
                    world.pres.set_sr_fault(k, 1)     # STUCK_ON
            while not locked(scan.step):
                pass
            work[0] = 0
            n = locked(find_and_masks)
            found = [[loc.kind[i], loc.x[i], loc.y[i]] for i in range(n)]
            if f < 3:
                out["before"] = found
                continue
            out["r"].append(found)
            out["cells"].append(loc.nc)
            out["fits"].append(work[0])
            out["hand"].append(loc.hand)
            out["unread"].append(getattr(loc, "unread", -1))
        world.pres.clear_faults()
        return out
    if op == "seeds":
        # presence_locate.covered() (viper on MicroPython) over given pads, under the heap lock
        grid = bytearray(c["grid"])
        usable = bytearray(c["usable"])
        rows = bytearray(c["rows"])
        most = c["most"]
        seeds = array('H', bytes(2 * most))
        micropython.heap_lock()     # inline: a closure over six names allocates its call
        try:
            n = covered(grid, usable, rows, seeds, most)
        finally:
            micropython.heap_unlock()
        return {"n": n, "seeds": [seeds[i] for i in range(min(n, most))]}
    if op == "radii":
        loc.set_radii(c["small"], c["big"])
        return {}
    if op == "clock":
        clock.us = c["us"]
        clock.t0 = loc.tried
        clock.reads = 0
        loc.clock = clock.read if clock.us else None
        loc.BUDGET_US = c["budget"] if clock.us else PresenceLocator.BUDGET_US
        return {}
    if op == "kept":
        return {"phase": loc.seeds[192], "held": loc.seeds[192 + 5]}
    if op == "alloc":
        return alloc_check()
    return {"error": "unknown op " + op}


serve(case)
