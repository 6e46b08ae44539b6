# Test driver for firmware/games/trap.py. Runs unchanged under the MicroPython unix port
# (MICROPYPATH=firmware:tests/support) and CPython (PYTHONPATH with firmware and the
# `micropython` stand-in in boardsim/target). One JSON case per input line, one JSON result per
# output line (the loop: driver.py), so a whole test module shares one interpreter process.
#
# Every call into the engine is made with the heap locked: under MicroPython any allocation
# raises MemoryError, which is reported as {"error": ...}. Each case starts on a fresh engine.
#
# Case: {"log_size": N (optional), "ops": [op, ...]}, op one of
#   {"op": "start", "variant": 1|2, "trapper": 1|2, "coin": bool}
#   {"op": "shot", "mover": slot, "chips": [[slot, kind, fate, moved, start, end], ...]}
#   (and "tied": a bit per slot that may have moved first as well, ShotResult.tied)
#        kind "small"|"big", fate "rest"|"cup_a"|"cup_b"|"off"|"gone", start / end zone names
#        joined by "+" ("" for none), turned into masks with board_table's ids
#   {"op": "classify", ...the same fields as shot}     the outcome only, nothing applied
#   {"op": "end_turn"} | {"op": "undo"} | {"op": "out", "code": C}
#   {"op": "setup", "chips": [[kind, zones], ...]}     setup_ok on a tracker stand-in
#   {"op": "alloc"}                                    allocates under the lock (harness check)
# Result: {"steps": [{"r": ret, "st": {...}, "ev": [line, ...]}, ...]}
from driver import Sink, locked, rules_op, run_ops, serve
from array import array
from tracking.shot import ShotResult, KIND_SMALL, KIND_BIG, MAX_CHIPS
from scoreboard.events import EventWriter
from tables.board_table import ZONE_NAMES
from games import trap as RT

FATES = {"rest": 0, "cup_a": 1, "cup_b": 2, "off": 3, "gone": 4}
KINDS = {"small": KIND_SMALL, "big": KIND_BIG}
ZONE_ID = {}
for _i in range(len(ZONE_NAMES)):
    ZONE_ID[ZONE_NAMES[_i].decode()] = _i

ST_KEYS = ("role", "player", "trapper", "round", "shots", "shots_left", "turn_shots",
           "turn_mask", "small", "fresh", "escape", "escape_end", "over", "winner", "reason",
           "prompt", "rshots0", "rshots1", "rpen0", "rpen1", "rreason0", "rreason1",
           "lfoul", "lres", "nlog", "folded")


class TrackerStub:
    def __init__(self):
        self.present = bytearray(MAX_CHIPS)
        self.kind = bytearray(MAX_CHIPS)
        self.mask = array('i', [0] * MAX_CHIPS)


sink = Sink(65536)
ew = EventWriter(sink)
res = ShotResult()
trk = TrackerStub()
st = array('i', [0] * len(ST_KEYS))
game = None


def mask_of(names):
    m = 0
    if names:
        for n in names.split("+"):
            m |= 1 << ZONE_ID[n]
    return m


def fill(op):
    res.clear()
    res.n = MAX_CHIPS
    for c in op["chips"]:
        i = c[0]
        res.kind[i] = KINDS[c[1]]
        res.fate[i] = FATES[c[2]]
        res.moved[i] = 1 if c[3] else 0
        res.start_mask[i] = mask_of(c[4])
        res.end_mask[i] = mask_of(c[5])
    res.mover = op["mover"]
    res.tied = op.get("tied", 0)


def snap():
    g = game
    st[0] = g.role
    st[1] = g.player
    st[2] = g.trapper
    st[3] = g.round
    st[4] = g.shots
    st[5] = g.shots_left
    st[6] = g.turn_shots
    st[7] = g.turn_mask
    st[8] = g.small
    st[9] = 1 if g.fresh else 0
    st[10] = 1 if g.escape else 0
    st[11] = g.escape_end
    st[12] = 1 if g.over else 0
    st[13] = g.winner
    st[14] = g.reason
    st[15] = g.prompt
    st[16] = g.rshots[0]
    st[17] = g.rshots[1]
    st[18] = g.rpen[0]
    st[19] = g.rpen[1]
    st[20] = g.rreason[0]
    st[21] = g.rreason[1]
    st[22] = g.lfoul
    st[23] = g.lres
    st[24] = g.nlog
    st[25] = g.folded


def run_op(op):
    kind = op["op"]
    done, r = rules_op(op, game, fill, res, snap)
    if done:
        pass
    elif kind == "start":
        r = locked(game.start, snap, op["variant"], op["trapper"], op.get("coin", False))
    elif kind == "end_turn":
        r = locked(game.end_turn, snap)
    elif kind == "setup":
        for i in range(MAX_CHIPS):
            trk.present[i] = 0
            trk.kind[i] = 0
            trk.mask[i] = 0
        chips = op["chips"]
        for i in range(len(chips)):
            trk.present[i] = 1
            trk.kind[i] = KINDS[chips[i][0]]
            trk.mask[i] = mask_of(chips[i][1])
        r = locked(game.setup_ok, snap, trk)
    else:
        raise ValueError("unknown op " + kind)
    lines = sink.take().split("\n")
    d = {}
    for i in range(len(ST_KEYS)):
        d[ST_KEYS[i]] = st[i]
    return {"r": r, "st": d, "ev": lines[:-1]}


def run_case(case):
    global game
    sink.n = 0
    game = RT.Trap(ew, case.get("log_size", RT.LOG_SIZE))
    steps, err = run_ops(case["ops"], run_op, sink)
    if err is not None:
        return err
    return {"steps": steps}


serve(run_case)
