# Test driver for firmware/scoreboard/events.py and firmware/games/bowling.py. Runs unchanged under the
# MicroPython unix port (MICROPYPATH=firmware:tests/support) and CPython (PYTHONPATH with
# firmware and a `micropython` stand-in). One JSON case per input line, one JSON result per
# output line (the loop: driver.py), so a whole test module shares one interpreter process.
#
# Every call into the firmware is made with the heap locked: under MicroPython any allocation
# raises MemoryError, which is reported as {"error": ...}.
#
# Case: {"ops": [op, ...]}, op one of
#   {"op": "start", "players": N, "end": 0|1}
#   {"op": "shot", "fate": F, "zenn": Z, "mask": M, "hit": H, "mover": m, "chips": [[fate, mask], ...]}
#   {"op": "classify", ...the same fields as shot}     the outcome only, nothing applied
#   {"op": "out", "code": C}                          apply_outcome
#   {"op": "undo"}
#   {"op": "correct", "pins": N}                      a manual correction of the last ball
#   {"op": "ew", "size": S, "calls": [[name, key, value], ...]}    an EventWriter of its own
#   {"op": "alloc"}                                   allocates under the lock (harness check)
# Result: {"steps": [{"r": ret, "st": [player, frame, ball, over, prompt, last_split, nlog],
#                     "ev": [line, ...]}, ...],
#          "final": {"marks": [[str]*10]*players, "cum": [[int]*10], "total": [int], "split": [[bool]*10]}}
import micropython
from driver import Sink, locked, rules_op, run_ops, serve
from array import array
from tracking.shot import ShotResult, KIND_SMALL, KIND_BIG, MAX_CHIPS
from scoreboard.events import EventWriter
from games.bowling import Bowling, MAX_PLAYERS, FRAMES


sink = Sink(65536)
ew = EventWriter(sink)
game = Bowling(ew)
res = ShotResult()
st = array('i', [0] * 7)
mk = bytearray(MAX_PLAYERS * FRAMES * 3)
mkn = bytearray(MAX_PLAYERS * FRAMES)
cums = array('i', [0] * (MAX_PLAYERS * FRAMES))
tots = array('i', [0] * MAX_PLAYERS)
splits = bytearray(MAX_PLAYERS * FRAMES)


def fill(op):
    res.clear()
    chips = op.get("chips")
    if chips:
        res.n = len(chips)
        for i in range(len(chips)):
            res.kind[i] = KIND_BIG if i else KIND_SMALL
            res.fate[i] = chips[i][0]
            res.end_mask[i] = chips[i][1]
    else:
        res.n = 1
        res.kind[0] = KIND_SMALL
        res.moved[0] = 1
        res.fate[0] = op.get("fate", 0)
        res.end_mask[0] = op.get("mask", 0)
    res.mover = op.get("mover", 0)
    res.zenn = op.get("zenn", 0)
    res.hit = op.get("hit", 0)


def snap_state():
    st[0] = game.player
    st[1] = game.frame
    st[2] = game.ball
    st[3] = 1 if game.over else 0
    st[4] = game.prompt
    st[5] = 1 if game.last_split else 0
    st[6] = game.nlog


def snap_final():
    for p in range(game.players):
        for f in range(FRAMES):
            k = p * FRAMES + f
            mkn[k] = game.marks(p, f, mk, k * 3)
            cums[k] = game.cum(p, f)
            splits[k] = 1 if game.is_split(p, f) else 0
        tots[p] = game.total(p)


def ew_calls(w, calls):
    for c in calls:
        name = c[0]
        if name == "begin":
            w.begin(c[1])
        elif name == "int":
            w.int_(c[1], c[2])
        elif name == "str":
            w.str_(c[1], c[2], c[3], c[4])
        elif name == "bool":
            w.bool_(c[1], c[2])
        elif name == "null":
            w.null_(c[1])
        elif name == "arr":
            w.arr(c[1])
        elif name == "close_arr":
            w.close_arr()
        elif name == "obj":
            w.obj(c[1])
        elif name == "close_obj":
            w.close_obj()
        elif name == "raw":
            w.raw(c[1])
        elif name == "end":
            w.end()


def as_bytes(v):
    if isinstance(v, str):
        return v.encode()
    return v


def run_op(op):
    kind = op["op"]
    done, r = rules_op(op, game, fill, res, snap_state)
    if done:
        pass
    elif kind == "start":
        r = locked(game.start, snap_state, op["players"], op["end"])
    elif kind == "correct":
        r = int(locked(game.correct, snap_state, op["pins"]))
    elif kind == "ew":
        s2 = Sink(65536)
        w = EventWriter(s2, op.get("size", 256))
        calls = []
        for c in op["calls"]:
            c2 = [c[0]] + [as_bytes(x) for x in c[1:]]
            if c2[0] == "str":
                if len(c2) < 4:
                    c2.append(0)
                if len(c2) < 5:
                    c2.append(-1)
                if len(c2) > 5 and c2[5]:
                    c2[2] = bytearray(c2[2])    # a bytearray value, as the engine passes
            calls.append(c2)
        micropython.heap_lock()
        ew_calls(w, calls)
        micropython.heap_unlock()
        return {"r": s2.take(), "writes": s2.writes, "lines": w.lines}
    else:
        raise ValueError("unknown op " + kind)
    lines = sink.take().split("\n")
    return {"r": r, "st": list(st), "ev": lines[:-1]}


def run_case(case):
    # every case starts from a board just switched on, as trap_driver's do: a case must not
    # depend on where the case before it (on this worker) left the game
    global game
    game = Bowling(ew)
    steps, err = run_ops(case["ops"], run_op, sink)
    if err is not None:
        return err
    micropython.heap_lock()
    snap_final()
    micropython.heap_unlock()
    fin = {"marks": [], "cum": [], "total": [], "split": []}
    for p in range(game.players):
        fin["marks"].append([bytes(mk[(p * FRAMES + f) * 3:(p * FRAMES + f) * 3 + mkn[p * FRAMES + f]]).decode()
                             for f in range(FRAMES)])
        fin["cum"].append([cums[p * FRAMES + f] for f in range(FRAMES)])
        fin["split"].append([splits[p * FRAMES + f] == 1 for f in range(FRAMES)])
        fin["total"].append(tots[p])
    return {"steps": steps, "final": fin}


serve(run_case)
