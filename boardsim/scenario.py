"""Load and validate a simulator scenario (CONTRACT section 2).

A scenario is checked here for its form and its names only: JSON, the keys, the game and
player count, chip, zone and button names, waypoints. Whether a step is possible on the board
(a chip in hand cannot be shot, a big chip does not fit in a pocket) is decided by
`boardsim.compile`, which raises the same ScenarioError.

Every problem is a ScenarioError with a one-line message; problems inside a step name it,
counting steps from 1: "step 4: unknown zone 'b.e9'".

Keys starting with "_" (at the top, in `options`, in a place or a point, in a step) are
comments and ignored, so that an example can explain itself in plain JSON; a step holding only
such keys is a comment between steps.

The result is a Scenario whose steps are normalised:

    ("place", {chip: target, ...})         target: zone str, ("border", z1, z2) or ("point", x, y)
    ("take", chip)
    ("shoot", chip, [waypoint, ...], [(chip, [waypoint, ...]), ...])
    ("flick", chip, (vx, vy))    beyond the contract: {"flick": CHIP, "v": [vx, vy]} (mm/s),
                                 simulated to rest by boardsim.physics (docs/simulator.md)
    ("press", button)
    ("wait", ms)
    ("power", "cut" | "on")
    ("snapshot", label)     beyond the contract: a test's checkpoint (boardsim.testing); the
                            runner remembers the display and the event count there
    ("hold", button, ms)    beyond the contract: a button held down for ms (a long press, a
                            stuck button)
    ("stall", ms)           beyond the contract: the firmware hangs inside one loop turn for ms
                            (the watchdog's test)
    ("flash", {...})        beyond the contract: the firmware's flash (boardsim/target/flash.py):
                            {"tear_after": N} the next N block writes go through, the one after
                            is torn and the power is gone; {"fail_after": N} from then on writes
                            fail; {"write": name, "hex": h | "text": t} a file written;
                            {"damage": name, "offset": k} a byte of a file flipped
    ("fault", {...})        beyond the contract: a part of the table breaks (issue 4;
                            boardsim/target/world.py, World.fault): {"pad": [col, row] | "at":
                            [x, y] mm, "mode": M} a pad of either front end's grid (M: stuck_high,
                            stuck_low, dead, numb, flicker, ok); {"mux": N, "mode": M | "same" |
                            "frozen"} a hall multiplexer (frozen: mid-scale) or a presence shift
                            register (frozen, same: stuck off); {"cup": "a"|"b",
                            "mode": "chatter"|"ok"}; {"hand": [x, y] mm, "ms": N} a hand hovering;
                            {"clear": true}

A waypoint is a zone str (a place to rest or pass, e.g. "b.e2"), "X.cup", "off",
("border", z1, z2), ("point", x, y) or ("hit", "side" | "X.back" | "X.block").
"""
import json
import math
from dataclasses import dataclass, field

from boardsim.geometry import REST_ZONES, ENDS
from boardsim import games as _games

# the games and their player counts: the firmware's registry (firmware/games/registry.py), read
# by boardsim/games.py: a game with SETUP_PLAYERS_END takes 1 to its PLAYERS, one with
# SETUP_TRAPPER two
CHIPS = {"small": "small", "big1": "big", "big2": "big", "big3": "big",
         "small2": "small"}     # small2: beyond the contract, a second small chip (bad input)
BUTTONS = ("next", "ok", "undo", "turn")
CUPS = tuple(f"{e}.cup" for e in ENDS)
HITS = ("side",) + tuple(f"{e}.back" for e in ENDS) + tuple(f"{e}.block" for e in ENDS)
ACTIONS = ("place", "take", "shoot", "flick", "press", "wait_ms", "power", "snapshot", "hold",
           "stall_ms", "flash", "fault")
PAD_MODES = ("stuck_high", "stuck_low", "dead", "numb", "flicker", "ok")
MUX_MODES = ("same", "frozen")      # a whole mux: one sensor on every channel, frozen mid-scale
FLICK_MAX = 6000.0      # mm/s: the fastest flick, a slam (issue 12; boardsim.physics.Params.max_speed)


class ScenarioError(ValueError):
    """A malformed or impossible scenario. str() is a one-line reason."""


@dataclass
class Scenario:
    game: str
    players: int
    options: dict = field(default_factory=dict)     # trapper: 1|2, shooter_end: "a"|"b"
    steps: list = field(default_factory=list)
    numbers: list = None    # each step's number in the file (comment-only steps are dropped)

    def number(self, i):
        """The file's step number (from 1) of steps[i]."""
        return self.numbers[i] if self.numbers else i + 1

    @property
    def shooter_end(self):
        return self.options.get("shooter_end", "a")

    @property
    def trapper(self):
        return self.options.get("trapper")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ScenarioError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"bad JSON: not UTF-8 text ({e.reason})") from None
    return loads(text)


def loads(text):
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"bad JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except ValueError as e:
        raise ScenarioError(f"bad JSON: {e}") from None
    return parse(obj)


def _no_constant(name):
    raise ValueError(f"{name} is not a number")


def _short(v):
    s = repr(v) if isinstance(v, str) else json.dumps(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _keys(obj):
    return [k for k in obj if not (isinstance(k, str) and k.startswith("_"))]


def parse(obj):
    """A scenario from its decoded JSON."""
    if not isinstance(obj, dict):
        raise ScenarioError("a scenario is a JSON object with game, players, options, steps")
    for k in _keys(obj):
        if k not in ("game", "players", "options", "steps"):
            raise ScenarioError(f"unknown key {k!r} (expected game, players, options, steps)")
    game = obj.get("game")
    known = _games.by_name()
    which = _games.names_text(known)
    if game is None:
        raise ScenarioError(f"missing 'game' ({which})")
    if not isinstance(game, str) or game not in known:
        raise ScenarioError(f"unknown game {_short(game)} ({which})")
    g = known[game]
    lo, hi = (1, g.players) if g.setup == "players_end" else (2, 2)
    players = obj.get("players", None if g.setup == "players_end" else 2)
    if players is None:
        raise ScenarioError(f"missing 'players' ({game}: 1 to {hi})")
    if not _is_int(players) or not lo <= players <= hi:
        want = f"{lo} to {hi}" if lo != hi else f"{lo}"
        raise ScenarioError(f"bad players {_short(players)}: {game} takes {want}")
    options = _options(g, obj.get("options", {}))
    steps_in = obj.get("steps", [])
    if not isinstance(steps_in, list):
        raise ScenarioError("'steps' must be a list")
    steps = []
    numbers = []
    for i, s in enumerate(steps_in, 1):
        try:
            step = _step(s)
        except ScenarioError as e:
            raise ScenarioError(f"step {i}: {e}") from None
        if step is not None:
            steps.append(step)
            numbers.append(i)
    return Scenario(game, players, options, steps, numbers)


def _options(game, opts):
    if not isinstance(opts, dict):
        raise ScenarioError("'options' must be an object")
    out = {}
    for k in _keys(opts):
        v = opts[k]
        if k == "trapper":
            if game.setup != "trapper":
                raise ScenarioError("options.trapper is for trap games only")
            if not _is_int(v) or v not in (1, 2):
                raise ScenarioError(f"bad options.trapper {_short(v)} (1 or 2)")
        elif k == "shooter_end":
            if game.setup != "players_end":
                raise ScenarioError("options.shooter_end is for bowling only")
            if v not in ENDS:
                raise ScenarioError(f"bad options.shooter_end {_short(v)} ('a' or 'b')")
        else:
            raise ScenarioError(f"unknown option {k!r} (trapper, shooter_end)")
        out[k] = v
    return out


def _chip(v):
    if not isinstance(v, str) or v not in CHIPS:
        raise ScenarioError(f"unknown chip {_short(v)} (small, big1, big2, big3, small2)")
    return v


def _zone(v, allowed=REST_ZONES):
    if v not in allowed:
        raise ScenarioError(f"unknown zone {_short(v)}")
    return v


def _spot(v, what):
    """A place target or a plain waypoint position: zone, border or point."""
    if isinstance(v, str):
        if "|" in v:
            parts = v.split("|")
            if len(parts) != 2:
                raise ScenarioError(f"bad border {_short(v)} (two zones: 'z1|z2')")
            z1, z2 = (_zone(p.strip()) for p in parts)
            if z1 == z2:
                raise ScenarioError(f"bad border {_short(v)}: the same zone twice")
            return ("border", z1, z2)
        if v in CUPS or v == "off":
            raise ScenarioError(f"{what} cannot be {v!r}")
        return _zone(v)
    if isinstance(v, dict):
        keys = set(_keys(v))
        if keys == {"x", "y"}:
            if not (_is_num(v["x"]) and _is_num(v["y"])):
                raise ScenarioError(f"bad point {_short(v)}: x and y are numbers (mm)")
            return ("point", float(v["x"]), float(v["y"]))
    raise ScenarioError(f"bad {what} {_short(v)} (a zone, 'z1|z2' or {{\"x\": mm, \"y\": mm}})")


def _waypoint(v):
    if isinstance(v, str):
        if v in CUPS or v == "off":
            return v
        return _spot(v, "waypoint")
    if isinstance(v, dict) and set(_keys(v)) == {"hit"}:
        if v["hit"] not in HITS:
            raise ScenarioError(f"bad hit {_short(v['hit'])} (side, a.back, b.back, a.block, b.block)")
        return ("hit", v["hit"])
    return _spot(v, "waypoint")


def _path(v, what):
    if not isinstance(v, list) or not v:
        raise ScenarioError(f"{what} must be a non-empty list of waypoints")
    wps = [_waypoint(w) for w in v]
    for i, w in enumerate(wps[:-1]):
        if w in CUPS or w == "off":
            raise ScenarioError(f"{what}: {w!r} must be the last waypoint")
    return wps


def _flash(v):
    if not isinstance(v, dict):
        raise ScenarioError(f"bad flash {_short(v)} (an object)")
    keys = set(_keys(v))
    if keys in ({"tear_after"}, {"fail_after"}):
        n = v[keys.pop()]
        if not _is_int(n) or n < -1:
            raise ScenarioError(f"bad flash {_short(v)}: a number of block writes")
        return dict(v)
    if keys in ({"write", "hex"}, {"write", "text"}):
        if not isinstance(v["write"], str) or not v["write"] or "/" in v["write"]:
            raise ScenarioError(f"bad flash file name {_short(v['write'])}")
        data = v.get("hex")
        if data is None:
            if not isinstance(v["text"], str):
                raise ScenarioError("flash text must be a string")
            return {"write": v["write"], "hex": v["text"].encode().hex()}
        try:
            bytes.fromhex(data)
        except (TypeError, ValueError):
            raise ScenarioError(f"bad flash hex {_short(data)}") from None
        return {"write": v["write"], "hex": data}
    if keys in ({"damage"}, {"damage", "offset"}):
        if not isinstance(v["damage"], str) or not _is_int(v.get("offset", -1)):
            raise ScenarioError(f"bad flash {_short(v)}: damage a file name at an int offset")
        return dict(v)
    raise ScenarioError(f"bad flash {_short(v)} (tear_after, fail_after, write + hex/text, damage + offset)")


def _step(s):
    if not isinstance(s, dict):
        raise ScenarioError(f"a step is an object, not {_short(s)}")
    keys = _keys(s)
    actions = [k for k in keys if k in ACTIONS]
    if not keys and s:
        return None     # a comment between steps
    if len(actions) != 1:
        if not actions:
            unknown = [k for k in keys if k not in ACTIONS]
            if unknown:
                raise ScenarioError(f"unknown key {unknown[0]!r} (a step is one of {', '.join(ACTIONS)})")
            raise ScenarioError(f"empty step (a step is one of {', '.join(ACTIONS)})")
        raise ScenarioError(f"one action per step, not {' and '.join(actions)}")
    act = actions[0]
    extra = [k for k in keys if k != act and not (act == "shoot" and k in ("path", "knocks"))
             and not (act == "flick" and k == "v") and not (act == "hold" and k == "ms")]
    if extra:
        raise ScenarioError(f"unknown key {extra[0]!r} in a {act} step")
    v = s[act]
    if act == "place":
        if not isinstance(v, dict) or not _keys(v):
            raise ScenarioError('place takes an object {chip: zone, ...}')
        return ("place", {_chip(c): _spot(v[c], "place target") for c in _keys(v)})
    if act == "take":
        return ("take", _chip(v))
    if act == "shoot":
        chip = _chip(v)
        if "path" not in s:
            raise ScenarioError("shoot needs a 'path'")
        path = _path(s["path"], "path")
        knocks = []
        kv = s.get("knocks", [])
        if not isinstance(kv, list):
            raise ScenarioError("knocks must be a list of {chip, path}")
        seen = {chip}
        for k in kv:
            if not isinstance(k, dict) or set(_keys(k)) != {"chip", "path"}:
                raise ScenarioError(f"bad knock {_short(k)} (an object with chip and path)")
            kc = _chip(k["chip"])
            if kc in seen:
                raise ScenarioError(f"{kc} moves twice in one shot" if kc != chip
                                    else f"{kc} cannot knock itself")
            seen.add(kc)
            knocks.append((kc, _path(k["path"], f"knock path of {kc}")))
        return ("shoot", chip, path, knocks)
    if act == "flick":
        chip = _chip(v)
        vel = s.get("v")
        if vel is None:
            raise ScenarioError("flick needs 'v': [vx, vy] in mm/s")
        if not (isinstance(vel, list) and len(vel) == 2 and all(_is_num(c) for c in vel)):
            raise ScenarioError(f"bad flick v {_short(vel)} ([vx, vy] in mm/s)")
        speed = math.hypot(vel[0], vel[1])
        if not 0 < speed <= FLICK_MAX:
            raise ScenarioError(f"bad flick v {_short(vel)}: the speed must be above 0 and at most {FLICK_MAX:g} mm/s")
        return ("flick", chip, (float(vel[0]), float(vel[1])))
    if act == "press":
        if v not in BUTTONS:
            raise ScenarioError(f"unknown button {_short(v)} (next, ok, undo, turn)")
        return ("press", v)
    if act == "hold":
        if v not in BUTTONS:
            raise ScenarioError(f"unknown button {_short(v)} (next, ok, undo, turn)")
        ms = s.get("ms")
        if not _is_int(ms) or ms <= 0:
            raise ScenarioError(f"bad hold ms {_short(ms)} (a whole number of ms, > 0)")
        return ("hold", v, ms)
    if act == "stall_ms":
        if not _is_int(v) or v < 0:
            raise ScenarioError(f"bad stall_ms {_short(v)} (a whole number of ms, >= 0)")
        return ("stall", v)
    if act == "flash":
        return ("flash", _flash(v))
    if act == "fault":
        return ("fault", _fault(v))
    if act == "wait_ms":
        if not _is_int(v) or v < 0:
            raise ScenarioError(f"bad wait_ms {_short(v)} (a whole number of ms, >= 0)")
        return ("wait", v)
    if act == "power":
        if v not in ("cut", "on"):
            raise ScenarioError(f"bad power {_short(v)} ('cut' or 'on')")
        return ("power", v)
    if act == "snapshot":
        if not isinstance(v, str) or not v:
            raise ScenarioError(f"bad snapshot label {_short(v)} (a non-empty string)")
        return ("snapshot", v)
    raise AssertionError(act)


def _xy(v, what):
    if isinstance(v, dict) and set(_keys(v)) == {"x", "y"}:
        v = [v["x"], v["y"]]
    if not (isinstance(v, list) and len(v) == 2 and all(_is_num(c) for c in v)):
        raise ScenarioError(f"bad {what} {_short(v)} ([x, y] in mm)")
    return [float(v[0]), float(v[1])]


def _fault(v):
    """A fault step's object, checked (World.fault takes it as it is)."""
    if not isinstance(v, dict):
        raise ScenarioError("fault takes an object: pad/at/mux + mode, cup + mode, hand + ms, clear")
    keys = set(_keys(v))
    if keys == {"clear"} and v["clear"] is True:
        return {"clear": True}
    if keys == {"pad", "mode"}:
        p = v["pad"]
        if not (isinstance(p, list) and len(p) == 2 and all(_is_int(c) and c >= 0 for c in p)):
            raise ScenarioError(f"bad fault pad {_short(p)} ([col, row] of the pad grid)")
        if v["mode"] not in PAD_MODES:
            raise ScenarioError(f"bad fault mode {_short(v['mode'])} ({', '.join(PAD_MODES)})")
        return {"pad": list(p), "mode": v["mode"]}
    if keys == {"at", "mode"}:
        if v["mode"] not in PAD_MODES:
            raise ScenarioError(f"bad fault mode {_short(v['mode'])} ({', '.join(PAD_MODES)})")
        return {"at": _xy(v["at"], "fault point"), "mode": v["mode"]}
    if keys == {"mux", "mode"}:
        if not _is_int(v["mux"]) or v["mux"] < 0:
            raise ScenarioError(f"bad fault mux {_short(v['mux'])} (a multiplexer's number, from 0)")
        if v["mode"] not in PAD_MODES + MUX_MODES:
            raise ScenarioError(f"bad fault mode {_short(v['mode'])} ({', '.join(PAD_MODES + MUX_MODES)})")
        return {"mux": v["mux"], "mode": v["mode"]}
    if keys == {"cup", "mode"}:
        if v["cup"] not in ENDS or v["mode"] not in ("chatter", "ok"):
            raise ScenarioError(f"bad cup fault {_short(v)} (cup a or b, mode chatter or ok)")
        return {"cup": v["cup"], "mode": v["mode"]}
    if keys in ({"hand"}, {"hand", "ms"}):
        ms = v.get("ms", 1000)
        if not _is_int(ms) or ms <= 0:
            raise ScenarioError(f"bad hand ms {_short(ms)} (a whole number of ms, > 0)")
        return {"hand": _xy(v["hand"], "hand point"), "ms": ms}
    raise ScenarioError(f"bad fault {_short(v)} (pad/at/mux + mode, cup + mode, hand + ms, clear)")
