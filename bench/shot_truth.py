"""Random physical shots through the firmware, judged against the physics (issue 12).

Each shot is a flick simulated by the simulator's physics (boardsim/physics.py, pymunk): a chip
put down at a random spot (anywhere it can rest, in the shooter's pocket, in a back section,
by an edge), flicked at a random speed (0.1 - 6 m/s, log-uniform) in a random direction. The
firmware plays them in long sessions (SHOTS_PER_RUN shots a run, one process each) under the
MicroPython unix port or CPython, and every shot is judged against where the physics left the
chip, with the board's true geometry (boardsim/geometry.py: shapely zones), not the firmware's:

  seen      a chip that moved 3 mm or more gave exactly one shot event (one that moved less may
            give one or none); a hand lifting the chip before each shot gave none
  exact     the event's verdict is the rules' verdict from the true final position: for a first
            ball the pins (the highest value under the chip's true disc, the pin cup through
            the gate or not, own cup, off), for a second ball basket or not
  sure-but-wrong  not exact, and the event said "sure"
  unsure    the event said "sure": false

Zenn Bowling: one game of six players a run (no run reaches its game's end). Trap Zenn
(--game trap): a run per game, a set-up of three big chips (mostly on the trapper's Zenn line)
and the small one (centre, a backcourt or anywhere), the trapper's flick of a big chip (mostly
aimed at the small one: chips knock each other), the turn ended, the fugitive's flick; each
shot judged by the firmware's own Trap engine (rules_trap.py, under CPython) fed with the true
positions: role, chip, where the small chip is, result, foul. A chip moved 0.3 - 3.5 mm may or
may not count as moved: either verdict is exact then.

    nice .venv/bin/python bench/shot_truth.py --shots 200 --front-end hall   # 13 min, loaded
    nice .venv/bin/python bench/shot_truth.py --game trap --shots 40 --front-end shift
    .venv/bin/python -m boardsim run FAILURE.json    # a failure's scenario, printed below it

Prints a table per kind of shot (start, speed) and each failure with a scenario (CONTRACT
section 2 plus the simulator's flick step) that replays it. On presence pads (--front-end
shift, also with --report) each move of 3 mm or more not seen is replayed through the physics
and the pads that differ between where the chip lay and where it rests are counted (the pads'
own model): a move that changes no pad, or one or two (what a pad flickering at its threshold
also gives), is one the 10 mm grid cannot see (docs/sensing.md).
"""
import argparse
import json
import math
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from shapely.geometry import LineString, Point  # noqa: E402

from boardsim.geometry import Board  # noqa: E402
from boardsim.physics import simulate_flick  # noqa: E402
from boardsim.testing import compile_cached, run_timeline  # noqa: E402

SHOTS_PER_RUN = 40       # a six-player game has at least 60 balls: no run reaches game over
WAIT_MS = 1500           # after a shot's move (the runner rests SETTLE_MS more)
SEEN_MM = 3.0            # a chip moved this far must give a shot event
PLAYERS = 6
MARKER = "turn"          # a button bowling refuses at rest: a "refused" event between shots

PIN_TABLE = {"p.cup3": 9, "p.pocket": 9, "p.e2": 8, "p.n2": 8, "p.z3": 7, "p.n3": 7,
             "s.e2": 6, "s.n2": 6, "p.back4": 5, "s.z3": 4, "s.n3": 3, "s.cup3": 2,
             "s.pocket": 2, "s.back4": 1, "center": 0}
STARTS = ("spot", "pocket", "back", "edge")
SPEEDS = ((0, 300, "nudge <0.3"), (300, 1000, "weak 0.3-1"), (1000, 3000, "medium 1-3"),
          (3000, 6001, "hard 3-6"))


def speed_kind(v):
    for lo, hi, name in SPEEDS:
        if lo <= v < hi:
            return name
    return SPEEDS[-1][2]


class Truth:
    """The rules' verdicts from the true geometry."""

    def __init__(self, board):
        self.b = board
        self.r = board.chip_radius("small")

    def start_spot(self, rng, kind):
        b = self.b
        r = self.r
        while True:
            if kind == "pocket":
                x, y = b.to_board("a", rng.uniform(-3, 3), rng.uniform(b.pocket_v0 + r, b.pocket_v1 - r))
            elif kind == "back":
                x, y = b.to_board(rng.choice("ab"), rng.uniform(-b.half_w, b.half_w),
                                  rng.uniform(r, b.baseline_v))
            elif kind == "edge":
                x, y = b.resting_spot(rng, "small")
                # pulled out to within 0 - 30 mm of the outline along the nearest direction
                d = b.outline.exterior.distance(Point(x, y)) - r
                if d > 30:
                    p = b.outline.exterior.interpolate(b.outline.exterior.project(Point(x, y)))
                    k = (d - rng.uniform(0, 30)) / (d + r)
                    x, y = x + (p.x - x) * k, y + (p.y - y) * k
            else:
                x, y = b.resting_spot(rng, "small")
            if b.can_rest(x, y, "small", 0.2):
                return round(x, 2), round(y, 2)

    def through_gate(self, pts, end):
        """The chip's swept disc crossed the gate beam of `end` (or lay on it)."""
        g0, g1 = self.b.gate_segment(end)
        gate = LineString([g0, g1])
        path = [(p[0], p[1]) for p in pts]
        shape = LineString(path) if len(path) > 1 else Point(path[0])
        return shape.buffer(self.r).intersects(gate)

    def first_ball(self, final, pts, shooter, on_beam):
        pin = "b" if shooter == "a" else "a"
        if final[0] == "cup":
            if final[1] != pin:
                return 0
            return 10 if on_beam or self.through_gate(pts, pin) else 9
        if final[0] == "off":
            return 0
        zones = self.zones(final[1], final[2])
        return max((PIN_TABLE.get(rel(z, shooter), 0) for z in zones), default=0)

    def zones(self, x, y):
        return self.b.zones_of_disc(x, y, self.r)


def rel(zone, end):
    if zone in ("center", "off"):
        return zone
    return ("s" if zone[0] == end else "p") + zone[1:]


def draw_shots(seed, n, truth):
    """The shots' random draws (start, velocity), in the order the seed gives them."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        kind = STARTS[k % len(STARTS)]
        x, y = truth.start_spot(rng, kind)
        v = math.exp(rng.uniform(math.log(100), math.log(6000)))
        a = rng.uniform(0, 2 * math.pi)
        out.append((kind, x, y, round(v * math.cos(a), 1), round(v * math.sin(a), 1)))
    return out


def simulate_shots(draws, board, simulate=simulate_flick):
    """Each drawn shot through the physics (independent of the others: run in any process).
    simulate: simulate_flick, or a kept one of the same (tests/test_shots_physics.py)."""
    shots = []
    for kind, x, y, vx, vy in draws:
        moves, final = simulate(board, {"small": ("small", x, y)}, "small", (vx, vy))
        mv = next((m for m in moves if m["chip"] == "small"), None)
        pts = mv["pts"] if mv else [[x, y, 0]]
        if final.get("small", ("board",))[0] == "board" and "small" in final:
            dist = math.hypot(final["small"][1] - x, final["small"][2] - y)
        elif "small" in final:
            dist = 1e9
        else:
            dist = 0.0
            final["small"] = ("board", x, y)
        shots.append({"kind": kind, "x": x, "y": y, "v": [vx, vy], "speed": math.hypot(vx, vy),
                      "moves": moves, "final": final["small"], "pts": pts, "dist": dist})
    return shots


def make_shots(seed, n, board, truth):
    return simulate_shots(draw_shots(seed, n, truth), board)


def timeline(shots):
    # (the game's start, the same for every batch: compiled once, boardsim/testing.py)
    tl = compile_cached({"game": "bowling", "players": PLAYERS, "steps": []})
    where = None
    for s in shots:
        if where is not None:
            tl.append({"op": "lift", "chip": "small"})
        tl.append({"op": "put", "chip": "small", "x": s["x"], "y": s["y"]})
        tl.append({"op": "press", "button": MARKER})
        if s["moves"]:
            tl.append({"op": "move", "moves": s["moves"]})
        tl.append({"op": "wait", "ms": WAIT_MS})
        tl.append({"op": "press", "button": MARKER})
        where = s["final"]
    return tl


def judge(shots, events, truth):
    """Per shot: a dict of what was seen and judged."""
    shooter = "a"
    for e in events:
        if e.get("ev") == "start" and e.get("game") == "bowling":
            shooter = e.get("shooter_end", "a")
    # windows: events after the 2k-th marker up to the (2k+1)-th are shot k's; between the
    # (2k+1)-th and the (2k+2)-th, its lift and put (no shot allowed)
    win = []
    cur = []
    for e in events:
        if e.get("ev") == "refused" and e.get("button") == MARKER:
            win.append(cur)
            cur = []
        else:
            cur.append(e)
    win.append(cur)
    out = []
    base = {}            # (player, frame) -> the firmware's first-ball pins
    for k, s in enumerate(shots):
        shot_ev = [e for e in (win[2 * k + 1] if 2 * k + 1 < len(win) else []) if e.get("ev") == "shot"]
        hand_ev = [e for e in (win[2 * k] if 2 * k < len(win) else []) if e.get("ev") == "shot"]
        r = {"kind": s["kind"], "speed": speed_kind(s["speed"]), "must": s["dist"] >= SEEN_MM,
             "n_events": len(shot_ev), "hand_shots": len(hand_ev), "s": s,
             "prev": shots[k - 1] if k else None}
        on_beam = truth.through_gate([[s["x"], s["y"]]], "b" if shooter == "a" else "a")
        if len(shot_ev) == 1:
            e = shot_ev[0]
            key = (e.get("player"), e.get("frame"))
            if e.get("ball") == 1 or key not in base:
                want = truth.first_ball(s["final"], s["pts"], shooter, on_beam)
                got = e.get("pins")
                base[key] = got
            else:
                fb = truth.first_ball(s["final"], s["pts"], shooter, on_beam)
                b0 = base[key]
                want = (10 - b0) if fb == 10 else (9 - b0) if fb == 9 and s["final"][0] == "cup" else 0
                got = e.get("pins")
            r.update(want=want, got=got, sure=bool(e.get("sure", True)), exact=want == got,
                     ball=e.get("ball"), zone=e.get("zone"))
        out.append(r)
    return out


# -- Trap Zenn: set-ups with collisions -------------------------------------------------------
TRAP_MARKER = "ok"       # a button Trap Zenn refuses at rest
BIGS = ("big1", "big2", "big3")
AMBIGUOUS_MM = (0.3, 3.5)    # a chip moved this much may or may not count as moved


class _Sink:
    def __init__(self):
        self.data = bytearray()

    def write(self, buf, off=0, n=None):
        n = len(buf) - off if n is None else n
        self.data += bytes(buf[off:off + n])


def _firmware_rules():
    """The firmware's own Trap engine and ShotResult under CPython: the rules' verdict from the
    true positions (what the sensing should have handed them)."""
    fw = os.path.join(ROOT, "firmware")
    tgt = os.path.join(ROOT, "boardsim", "target")
    for d in (tgt, fw):
        if d not in sys.path:
            sys.path.insert(0, d)
    from scoreboard import events
    from games import trap as rules_trap
    from tracking import shot
    return events, rules_trap, shot


class TrapTruth(Truth):
    def mask(self, kind, x, y):
        from boardsim.geometry import ZONE_ID
        r = self.b.chip_radius(kind)
        zs = self.b.zones_of_disc(x, y, r)
        disc = Point(x, y).buffer(r, 64)
        for e in "ab":
            if disc.intersection(self.b.zones[f"{e}.cup"]).area > 1e-9:
                zs.add(f"{e}.cup")
        m = 0
        for z in zs:
            m |= 1 << ZONE_ID[z]
        return m

    def setup(self, rng):
        """Three big chips and the small one where they can rest apart: the bigs on or near the
        trapper's Zenn line (a) or anywhere, the small in the centre, a backcourt or anywhere."""
        b = self.b
        while True:
            pos = {}
            for name in BIGS:
                if rng.random() < 0.6:
                    x, y = rng.uniform(-70, 70), -b.half_l + b.zline_v + rng.uniform(-25, 25)
                else:
                    x, y = b.resting_spot(rng, "big")
                pos[name] = ("big", round(x, 2), round(y, 2))
            u = rng.random()
            if u < 0.35:
                x, y = rng.uniform(-35, 35), rng.uniform(-35, 35)
            elif u < 0.7:
                x, y = b.to_board(rng.choice("ab"), rng.uniform(-b.half_w, b.half_w),
                                  rng.uniform(0, b.zline_v))
            else:
                x, y = b.resting_spot(rng, "small")
            pos["small"] = ("small", round(x, 2), round(y, 2))
            if all(b.can_rest(x, y, k, 0.5) for k, x, y in pos.values()) and all(
                    math.hypot(p[1] - q[1], p[2] - q[2]) > b.chip_radius(p[0]) + b.chip_radius(q[0]) + 1.0
                    for i, p in enumerate(pos.values()) for q in list(pos.values())[i + 1:]):
                return pos


def _flick_v(rng, pos, mover, aim):
    k, x, y = pos[mover]
    if aim is not None and rng.random() < 0.7:
        a = math.atan2(aim[2] - y, aim[1] - x) + rng.gauss(0, 0.2)
    else:
        a = rng.uniform(0, 2 * math.pi)
    v = math.exp(rng.uniform(math.log(100), math.log(6000)))
    return round(v * math.cos(a), 1), round(v * math.sin(a), 1), v


def make_trap_games(seed, n_games, board, truth, simulate=simulate_flick):
    """Each game: a set-up, a trapper flick of a big chip (mostly aimed at the small one, so
    chips knock each other), the end of the turn, a fugitive flick of the small chip.
    simulate: as simulate_shots'."""
    rng = random.Random(seed)
    games = []
    for _ in range(n_games):
        pos = truth.setup(rng)
        shots = []
        cur = dict(pos)
        for mover in (rng.choice(BIGS), "small"):
            if mover not in cur:
                break
            vx, vy, v = _flick_v(rng, cur, mover, cur.get("small") if mover != "small" else None)
            moves, final = simulate(board, cur, mover, (vx, vy))
            after = dict(cur)
            for c, st in final.items():
                if st[0] == "board":
                    after[c] = (cur[c][0], st[1], st[2])
                else:
                    after.pop(c)
            shots.append({"mover": mover, "v": [vx, vy], "speed": v, "before": cur, "after": after,
                          "final": final, "moves": moves})
            cur = after
        games.append({"setup": pos, "shots": shots})
    return games


def trap_timeline(games_one):
    g = games_one
    tl = compile_cached({"game": "trap1", "players": 2, "options": {"trapper": 1}, "steps": []})
    for name in BIGS + ("small",):
        k, x, y = g["setup"][name]
        tl.append({"op": "put", "chip": name, "x": x, "y": y})
    for i, s in enumerate(g["shots"]):
        tl.append({"op": "press", "button": TRAP_MARKER})
        tl.append({"op": "move", "moves": s["moves"]})
        tl.append({"op": "wait", "ms": WAIT_MS})
        tl.append({"op": "press", "button": TRAP_MARKER})
        if i == 0:
            tl.append({"op": "press", "button": "turn"})
    return tl


def trap_truth_events(g, truth):
    """The rules' shot events from the true positions: [[(role, chip, small, result, foul)] or
    None (a chip moved an ambiguous amount)] per shot."""
    events, rules_trap, shot = _firmware_rules()
    sink = _Sink()
    ev = events.EventWriter(sink)
    t = rules_trap.Trap(ev)
    t.start(1, 1, False)
    slot = {n: i for i, n in enumerate(BIGS + ("small",))}
    out = []
    for i, s in enumerate(g["shots"]):
        res = shot.ShotResult()
        res.clear()
        res.n = 4
        amb = False
        any_moved = False
        for name, i_ in slot.items():
            if name not in s["before"]:
                continue
            k, x0, y0 = s["before"][name]
            res.kind[i_] = shot.KIND_SMALL if k == "small" else shot.KIND_BIG
            res.start_mask[i_] = truth.mask(k, x0, y0)
            f = s["final"].get(name)
            if f is None:
                res.fate[i_] = shot.FATE_REST
                res.end_mask[i_] = res.start_mask[i_]
                continue
            if f[0] == "board":
                d = math.hypot(f[1] - x0, f[2] - y0)
                res.fate[i_] = shot.FATE_REST
                res.end_mask[i_] = truth.mask(k, f[1], f[2])
                if AMBIGUOUS_MM[0] <= d < AMBIGUOUS_MM[1]:
                    amb = True
                if d >= AMBIGUOUS_MM[1]:
                    res.moved[i_] = 1
                    any_moved = True
                elif d >= AMBIGUOUS_MM[0] and name == s["mover"]:
                    res.moved[i_] = 1
            else:
                res.fate[i_] = {"a": shot.FATE_CUP_A, "b": shot.FATE_CUP_B}.get(f[1], shot.FATE_OFF) \
                    if f[0] == "cup" else shot.FATE_OFF
                res.moved[i_] = 1
                any_moved = True
        res.mover = slot[s["mover"]]
        n0 = len(sink.data)
        if any_moved or res.moved[res.mover]:
            t.on_shot(res)
        lines = [json.loads(ln) for ln in bytes(sink.data[n0:]).decode().splitlines() if ln.strip()]
        got = [_trap_key(e) for e in lines if e.get("ev") == "shot"]
        out.append({"events": got, "ambiguous": amb, "must": any_moved})
        if i == 0:
            t.end_turn()
    return out


def _trap_key(e):
    return (e.get("role"), e.get("chip"), e.get("small"), e.get("result"), e.get("foul"))


def judge_trap(games, runs_events, truth):
    out = []
    for g, events in zip(games, runs_events):
        want = trap_truth_events(g, truth)
        win = [[]]
        for e in events:
            if e.get("ev") == "refused" and e.get("button") == TRAP_MARKER:
                win.append([])
            else:
                win[-1].append(e)
        for i, s in enumerate(g["shots"]):
            w = win[2 * i + 1] if 2 * i + 1 < len(win) else []
            got = [e for e in w if e.get("ev") == "shot"]
            tw = want[i]
            kind = "trapper" if i == 0 else "fugitive"
            r = {"kind": kind, "speed": speed_kind(s["speed"]), "must": tw["must"],
                 "n_events": len(got), "g": g, "i": i,
                 # chips put down for the set-up: no shot allowed before the first marker
                 "hand_shots": sum(1 for e in win[0] if e.get("ev") == "shot") if i == 0 else 0}
            if got and tw["events"]:
                e = got[0]
                r.update(want=tw["events"][0], got=_trap_key(e), sure=bool(e.get("sure", True)),
                         ball=None, zone=e.get("small"))
                r["exact"] = r["want"] == r["got"] or tw["ambiguous"]
            elif got and not tw["events"] and not tw["ambiguous"]:
                r.update(want=None, got=_trap_key(got[0]), sure=bool(got[0].get("sure", True)),
                         ball=None, zone=None, exact=False)
            out.append(r)
            if len(got) != 1 and i == 0:
                break       # the game went elsewhere: the next shot is not comparable
    return out


def trap_scenario_of(g):
    steps = [{"place": {n: {"x": x, "y": y} for n, (k, x, y) in g["setup"].items()}}]
    for i, s in enumerate(g["shots"]):
        steps.append({"flick": s["mover"], "v": s["v"]})
        if i == 0:
            steps.append({"press": "turn"})
    steps.append({"wait_ms": 2000})
    return {"game": "trap1", "players": 2, "options": {"trapper": 1}, "steps": steps}


def scenario_of(s, prev=None):
    """A scenario that replays one shot (a first ball of a one-player game), after the shot
    before it and the lift between when that one left the chip on the board (what the pads
    and the tracker saw just before can matter: a failure may not show without it)."""
    steps = []
    if prev is not None and prev["final"][0] == "board":
        steps += [{"place": {"small": {"x": prev["x"], "y": prev["y"]}}},
                  {"flick": "small", "v": prev["v"]}, {"wait_ms": WAIT_MS}, {"take": "small"}]
    steps += [{"place": {"small": {"x": s["x"], "y": s["y"]}}},
              {"flick": "small", "v": s["v"]}, {"wait_ms": 2000}]
    return {"game": "bowling", "players": 1, "steps": steps}


def run_batch(shots, front_end, runtime, truth):
    r = run_timeline(timeline(shots), runtime, config={"front_end": front_end})
    return judge(shots, r.events, truth)


def table(results, front_end, out=sys.stdout):
    rows = {}
    for r in results:
        for key in ((r["kind"], r["speed"]), ("all", "")):
            t = rows.setdefault(key, {"n": 0, "must": 0, "seen": 0, "exact": 0, "sbw": 0,
                                      "unsure": 0, "extra": 0, "hand": 0})
            t["n"] += 1
            if r["must"]:
                t["must"] += 1
                if r["n_events"] == 1:
                    t["seen"] += 1
            if r["n_events"] > 1:
                t["extra"] += 1
            if r["hand_shots"]:
                t["hand"] += 1
            if "exact" in r:
                if r["exact"]:
                    t["exact"] += 1
                elif r["sure"]:
                    t["sbw"] += 1
                if not r["sure"]:
                    t["unsure"] += 1
    out.write(f"\nfront end {front_end}\n")
    out.write(f"| start | speed (m/s) | shots | moved >= 3 mm | seen | judged | exact | sure but wrong | unsure | two events | shot on a lift |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
    for key in sorted(rows, key=lambda k: (k[0] == "all", k)):
        t = rows[key]
        judged = sum(1 for r in results if "exact" in r and (key[0] == "all" or (r["kind"], r["speed"]) == key))
        pct = f"{100.0 * t['exact'] / judged:.1f} %" if judged else "-"
        out.write(f"| {key[0]} | {key[1]} | {t['n']} | {t['must']} | {t['seen']} | {judged} | "
                  f"{t['exact']} ({pct}) | {t['sbw']} | {t['unsure']} | {t['extra']} | {t['hand']} |\n")


def failures(results):
    bad = []
    for r in results:
        why = []
        if r["must"] and r["n_events"] == 0:
            why.append("not seen")
        if r["n_events"] > 1:
            why.append(f"{r['n_events']} shot events")
        if r["hand_shots"]:
            why.append("a shot event while chips were lifted or put down before it")
        if "exact" in r and not r["exact"]:
            what = f"{r['got']} pins (ball {r['ball']}, zone {r['zone']})" if r.get("ball") else str(r["got"])
            why.append(f"{'SURE ' if r['sure'] else 'unsure '}{what}, the physics says {r['want']}")
        if why:
            bad.append((why, r))
    return bad


def record(r, game):
    """What is kept of a judged shot (a JSON line of --results): the table's fields, and the
    scenario that replays it with a line that says what it was."""
    out = {k: r[k] for k in ("kind", "speed", "must", "n_events", "hand_shots") if k in r}
    for k in ("want", "got", "sure", "exact", "ball", "zone"):
        if k in r:
            out[k] = r[k]
    if game == "trap":
        out["scenario"] = trap_scenario_of(r["g"])
        out["what"] = f"{r['kind']} shot {r['i'] + 1} {r['speed']}"
    else:
        s = r["s"]
        out["scenario"] = scenario_of(s, r.get("prev"))
        # the same shots through the bench's own timeline (tests/test_shots_physics.py's
        # @example(draws=...)): a failure that needs the run's history shows there
        out["example"] = [[q["kind"], q["x"], q["y"], math.hypot(*q["v"]), math.atan2(q["v"][1], q["v"][0]) % (2 * math.pi)]
                          for q in ((r["prev"], s) if r.get("prev") else (s,))]
        out["what"] = (f"{r['kind']} {r['speed']} ({s['speed']:.0f} mm/s, moved {min(s['dist'], 9999):.1f} mm, "
                       f"ends {list(s['final'])})")
    return out


_BOARD = []


def _board():
    if not _BOARD:
        _BOARD.append(Board.load())
    return _BOARD[0]


def _bowling_job(job):
    """One firmware run of drawn bowling shots (a worker process): physics, run, judge."""
    draws, front_end, runtime = job
    board = _board()
    shots = simulate_shots(draws, board)
    return [record(r, "bowling") for r in run_batch(shots, front_end, runtime, Truth(board))]


def _trap_job(job):
    g, front_end, runtime = job
    return [record(r, "trap") for r in judge_trap([g], [run_trap_game(g, front_end, runtime)], TrapTruth(_board()))]


# -- presence pads: which unseen moves no firmware could see (issue 12, task of the pad layout) --
_PADS = []


def _pad_table():
    if not _PADS:
        tgt = os.path.join(ROOT, "boardsim", "target")
        if tgt not in sys.path:
            sys.path.insert(0, tgt)
        import world_table as W
        _PADS.append(W)
    return _PADS[0]


def pads_covered(kind, x, y):
    """The presence pads a chip resting at (x, y) mm is seen by, by the simulator's own rule
    (boardsim/target/presence_model.py: level k of a pad sees the chip when the pad's centre
    lies within the chip's radius less the rim, plus that pad's reach for the level; pads that
    do not exist left out): {cell: level}, levels above 0."""
    W = _pad_table()
    r = W.R[kind] - W.PRES_RIM
    L = W.PRES_LEVELS
    xs, ys = x * 10.0, y * 10.0
    p = W.PRES_PITCH
    out = {}
    c0 = max(int((xs - r - 60 - W.PRES_X0) // p), 0)
    c1 = min(int((xs + r + 60 - W.PRES_X0) // p) + 1, W.PRES_COLS - 1)
    r0 = max(int((ys - r - 60 - W.PRES_Y0) // p), 0)
    r1 = min(int((ys + r + 60 - W.PRES_Y0) // p) + 1, W.PRES_ROWS - 1)
    for row in range(r0, r1 + 1):
        for col in range(c0, c1 + 1):
            g = row * W.PRES_COLS + col
            if not (W.PRES_PRESENT[g >> 3] >> (g & 7)) & 1:
                continue
            dx = W.PRES_X0 + col * p - xs
            dy = W.PRES_Y0 + row * p - ys
            lev = 0
            while lev < L:
                lim = r + W.PRES_REACH[g * L + lev]
                if lim < 0 or dx * dx + dy * dy > lim * lim:
                    break
                lev += 1
            if lev:
                out[g] = lev
    return out


def pads_changed(kind, x0, y0, x1, y1):
    """How many pads read another level with the chip resting at (x1, y1) than at (x0, y0)."""
    a = pads_covered(kind, x0, y0)
    b = pads_covered(kind, x1, y1)
    return sum(1 for g in set(a) | set(b) if a.get(g, 0) != b.get(g, 0))


# the largest move of a chip that changes no pad's level on the 10 mm grid of four levels (docs/sensing.md,
# bench/presence_cells.py): below it a move may be invisible to any firmware
PAD_BLIND_MM = {"small": 2.2, "big": 2.2}


def unseen_moves(r):
    """The chips a record's shot moved 3 mm or more, replayed through the physics from its
    scenario: [(chip, kind, mm moved, pads changed from start to rest)] (chips that left the
    board or dropped into a cup are left out: those are no small moves)."""
    board = _board()
    sc = r["scenario"]
    pos = {}
    out = []
    if "example" in r:
        kind, x, y, speed, angle = r["example"][-1]
        pos = {"small": ("small", x, y)}
        flicks = [("small", (round(speed * math.cos(angle), 1), round(speed * math.sin(angle), 1)))]
        want = 0
    else:
        pos = {n: ("small" if n == "small" else "big", p["x"], p["y"]) for n, p in sc["steps"][0]["place"].items()}
        flicks = [(st["flick"], tuple(st["v"])) for st in sc["steps"][1:] if "flick" in st]
        want = 0 if r["kind"] == "trapper" else 1
    for k, (mover, v) in enumerate(flicks):
        _moves, final = simulate_flick(board, pos, mover, v)
        after = dict(pos)
        for c, f in final.items():
            if f[0] == "board":
                after[c] = (pos[c][0], f[1], f[2])
            else:
                after.pop(c)
        if k == want:
            for c, (kd, x0, y0) in pos.items():
                f = final.get(c)
                if f is None or f[0] != "board":
                    continue
                d = math.hypot(f[1] - x0, f[2] - y0)
                if d >= SEEN_MM:
                    out.append((c, kd, d, pads_changed(kd, x0, y0, f[1], f[2])))
            break
        pos = after
    return out


def pad_report(records, out=sys.stdout):
    """Presence pads: the moves of 3 mm or more of the shots not seen, by what the pads could
    show of them (no pad changed between where the chip lay and where it rests; one or two, as
    a pad flickering at its threshold also gives; more) and whether they are within the largest
    move the pads can miss (PAD_BLIND_MM; 6.4 mm small, 5.6 mm big with one threshold)."""
    rows = []
    for r in records:
        if r.get("must") and r.get("n_events") == 0:
            for c, kd, d, flips in unseen_moves(r):
                rows.append((r, c, kd, d, flips))
    out.write(f"\npresence pads: {len(rows)} moves of 3 mm or more in {sum(1 for r in records if r.get('must') and r.get('n_events') == 0)} shots not seen\n")
    if not rows:
        return rows
    out.write("| chip | moved (mm) | within the grid's blind move | pads changed, start to rest | shot |\n|---|---|---|---|---|\n")
    for r, c, kd, d, flips in sorted(rows, key=lambda t: t[3]):
        out.write(f"| {c} ({kd}) | {d:.2f} | {'yes' if d < PAD_BLIND_MM[kd] else 'NO'} | {flips} | {r['what']} |\n")
    n0 = sum(1 for t in rows if t[4] == 0)
    n12 = sum(1 for t in rows if 1 <= t[4] <= 2)
    inside = sum(1 for t in rows if t[3] < PAD_BLIND_MM[t[2]])
    out.write(f"no pad changed: {n0}; one or two pads: {n12}; more: {len(rows) - n0 - n12}; "
              f"within the pads' blind move ({PAD_BLIND_MM['small']} mm small, {PAD_BLIND_MM['big']} mm big): {inside} of {len(rows)}\n")
    return rows


def report(records, front_end, head, out=sys.stdout):
    out.write(head + "\n")
    table(records, front_end, out)
    bad = failures(records)
    if front_end == "shift":
        pad_report(records, out)
    out.write(f"\n{len(bad)} failures\n")
    for why, r in bad:
        out.write(f"- {r['what']}: {'; '.join(why)}\n  {json.dumps(r['scenario'], separators=(',', ':'))}\n")
        if r.get("example"):
            out.write(f"  @example(draws={[tuple(d) for d in r['example']]})\n")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shots", type=int, default=200)
    ap.add_argument("--front-end", choices=("hall", "shift"), default="hall")
    ap.add_argument("--runtime", choices=("micropython", "cpython"), default="micropython")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--failures", help="write the failures' scenarios (JSON lines) here")
    ap.add_argument("--game", choices=("bowling", "trap"), default="bowling")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="firmware runs at once (processes; physics runs in them too)")
    ap.add_argument("--results", help="append each judged shot here as a JSON line, as it comes "
                    "(a long run can be stopped and still reported with --report)")
    ap.add_argument("--report", metavar="RESULTS", nargs="+",
                    help="print the table and failures of results files (a shot in two of them, "
                    "as --reverse runs give, counted once), run nothing")
    ap.add_argument("--reverse", action="store_true",
                    help="play the runs last first: a second process of the same seed and --shots "
                    "from the other end halves a long run's wall time on a shared machine (stop "
                    "both when they meet; --report both files)")
    ap.add_argument("--skip-done", metavar="RESULTS", nargs="+", default=[],
                    help="Trap Zenn: leave out the games already judged in these results files "
                    "(finish a stopped run: --report them all together afterwards)")
    a = ap.parse_args(argv)
    if a.skip_done and a.game != "trap":
        ap.error("--skip-done knows Trap Zenn's games only (a bowling run's shots depend on the "
                 "shots before them)")
    if a.report:
        records = []
        seen = set()
        for path in a.report:
            with open(path) as f:
                for ln in f:
                    if not ln.strip():
                        continue
                    r = json.loads(ln)
                    key = json.dumps([r.get("scenario"), r.get("what"), r.get("example")], sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        records.append(r)
        bad = report(records, a.front_end, f"{' + '.join(a.report)}: {len(records)} shots")
        _write_failures(a.failures, bad)
        return 0
    board = _board()
    t0 = time.time()
    if a.game == "trap":
        truth = TrapTruth(board)
        games = make_trap_games(a.seed, (a.shots + 1) // 2, board, truth)
        done = set()
        for path in a.skip_done:
            with open(path) as f:
                done.update(json.dumps(json.loads(ln)["scenario"], sort_keys=True) for ln in f if ln.strip())
        jobs = [(g, a.front_end, a.runtime) for g in games
                if json.dumps(json.loads(json.dumps(trap_scenario_of(g))), sort_keys=True) not in done]
        if a.skip_done:
            sys.stderr.write(f"{len(games) - len(jobs)} of {len(games)} games already judged\n")
        fn = _trap_job
    else:
        draws = draw_shots(a.seed, a.shots, Truth(board))
        jobs = [(draws[i:i + SHOTS_PER_RUN], a.front_end, a.runtime) for i in range(0, len(draws), SHOTS_PER_RUN)]
        fn = _bowling_job
    if a.reverse:
        jobs.reverse()
    t1 = time.time()
    records = []
    sink = open(a.results, "a") if a.results else None

    def take(rs):
        records.extend(rs)
        if sink:
            for r in rs:
                sink.write(json.dumps(r, separators=(",", ":")) + "\n")
            sink.flush()
        sys.stderr.write(f"\r{len(records)} shots judged ({time.time() - t1:.0f} s)")

    if a.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(max_workers=a.jobs) as ex:
            for fut in as_completed([ex.submit(fn, j) for j in jobs]):
                take(fut.result())
    else:
        for j in jobs:
            take(fn(j))
    t2 = time.time()
    sys.stderr.write("\n")
    if sink:
        sink.close()
    game = " --game trap" if a.game == "trap" else ""
    bad = report(records, a.front_end,
                 f"bench/shot_truth.py{game} --shots {a.shots} --front-end {a.front_end} --runtime {a.runtime} "
                 f"--seed {a.seed} -j {a.jobs}: set-up {t1 - t0:.0f} s, physics and firmware {t2 - t1:.0f} s")
    _write_failures(a.failures, bad)
    return 0


def _write_failures(path, bad):
    if path:
        with open(path, "w") as f:
            for _why, r in bad:
                f.write(json.dumps(r["scenario"]) + "\n")


def run_trap_game(g, front_end, runtime):
    return run_timeline(trap_timeline(g), runtime, config={"front_end": front_end}).events


if __name__ == "__main__":
    sys.exit(main())
