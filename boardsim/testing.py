"""Test vocabulary for games played through the real firmware on the simulated table, in the
spirit of Mission Pinball Framework's MpfTestCase: put chips down, shoot them, press buttons,
let time pass, then assert on the events the firmware wrote and on what its display showed.

    t = Table("bowling", players=1)
    t.place("small", "a.pocket")
    t.shoot("small", "b.pocket", "b.cup")
    t.checkpoint("after strike")             # remember the display here
    r = t.run()                              # under MicroPython, heap locked in the loop
    r.assert_event("shot", result="strike", pins=10)
    assert "X" in r.display_at("after strike")[2]

A Table builds a CONTRACT section 2 scenario (plus checkpoints), compiles it and plays it in
one firmware run, so a test costs one process. A scenario is compiled once (compile_cached):
the same game under both runtimes, or with each front end, is routed once.
"""
import glob
import hashlib
import io
import json
import os
import tempfile

from boardsim import games as _games
from boardsim import runtime
from boardsim.compile import compile_scenario
from boardsim.scenario import parse


class Table:
    def __init__(self, game="bowling", players=1, runtime="micropython", **options):
        self.game = game
        self.players = players
        self.runtime = runtime
        self.options = dict(options)
        self.steps = []

    # -- what players do ---------------------------------------------------------------------
    def place(self, chip, where):
        self.steps.append({"place": {chip: where}})
        return self

    def place_all(self, spots):
        self.steps.append({"place": dict(spots)})
        return self

    def take(self, chip):
        self.steps.append({"take": chip})
        return self

    def shoot(self, chip, *path, knocks=None):
        step = {"shoot": chip, "path": list(path)}
        if knocks:
            step["knocks"] = [{"chip": c, "path": list(p)} for c, p in knocks.items()]
        self.steps.append(step)
        return self

    def frame(self, *balls, shooter="a"):
        """One bowling frame: the chip put in the shooter's pocket, each ball shot (a list of
        waypoints), then the chip taken off the board (or out of the cup) for the next bowler.
        Between balls the chip goes where the scoreboard asks: after a Zenn back to the
        shooter's pocket (tenth frame), after a sink without one to the pin-side pocket, after
        a gutter to the centre, out of the shooter's own cup to the centre."""
        pin = "b" if shooter == "a" else "a"
        self.place("small", f"{shooter}.pocket")
        for i, path in enumerate(balls):
            self.shoot("small", *path)
            if i == len(balls) - 1:
                break
            if path[-1] == "off":
                self.place("small", "center")
            elif path[-1] == f"{pin}.cup":
                self.take("small")
                zenn = len(path) > 1 and path[-2] == f"{pin}.pocket"
                self.place("small", f"{shooter}.pocket" if zenn else f"{pin}.pocket")
            elif path[-1] == f"{shooter}.cup":
                self.take("small")
                self.place("small", "center")
        if balls[-1][-1] != "off":
            self.take("small")
        return self

    def trap_start(self, trapper=1):
        """A trap game's opening position: the three big chips on the trapper's Zenn line, the
        small chip in the centre circle."""
        end = "a" if trapper == 1 else "b"
        return self.place_all({"big1": f"{end}.zline", "big2": f"{end}.zline", "big3": f"{end}.zline",
                               "small": "center"})

    def press(self, button):
        self.steps.append({"press": button})
        return self

    def hit_button_and_run(self, button, ms=200):
        return self.press(button).advance_time_and_run(ms)

    def advance_time_and_run(self, ms):
        self.steps.append({"wait_ms": int(ms)})
        return self

    def power_cut(self):
        self.steps.append({"power": "cut"})
        return self

    def power_on(self):
        self.steps.append({"power": "on"})
        return self

    def fault(self, **spec):
        """A part of the table breaks (a simulator step beyond the contract's: {"fault": spec};
        boardsim/scenario.py lists them): fault(pad=[c, r], mode="dead"), fault(mux=3,
        mode="same"), fault(cup="a", mode="chatter"), fault(hand=[0, 100], ms=1500)."""
        self.steps.append({"fault": dict(spec)})
        return self

    def checkpoint(self, label):
        """Remember the display and the event count at this point of the game (a simulator
        step beyond the contract's: {"snapshot": label})."""
        self.steps.append({"snapshot": label})
        return self

    # -- running -----------------------------------------------------------------------------
    def scenario(self):
        s = {"game": self.game, "players": self.players, "options": self.options, "steps": self.steps}
        return s

    def timeline(self):
        return compile_cached(self.scenario())

    def run(self, heapsize=None, config=None, flash=None):
        """config: the firmware's config.json as a dict (firmware/storage/config.py), or None.
        flash: {name: bytes} put on the Pico's flash before the first boot."""
        tl = self.timeline()
        for name, data in (flash or {}).items():
            tl.insert(0, {"op": "flash", "write": name, "hex": data.hex()})
        return run_timeline(tl, self.runtime, heapsize=heapsize, config=config)


# -- compiled scenarios, kept ----------------------------------------------------------------
# Routing a game's shots takes 0.1 - 2 s of the host's time (boardsim/compile.py); tests play
# many games twice (both runtimes, both front ends). The compiled timeline is kept by the hash
# of the scenario and of every file that decides what it compiles to (boardsim/*.py, board/,
# wiring/): in this process, and in build/compiled/ for the other test workers (written whole,
# renamed into place). ZENN_NO_COMPILE_CACHE=1 compiles every time.
_CACHE_DIR = os.path.join(runtime.ROOT, "build", "compiled")
_compiled = {}
_sources = []


def _sources_digest():
    if not _sources:
        h = hashlib.sha1()
        for p in sorted(glob.glob(os.path.join(runtime.ROOT, "boardsim", "*.py"))
                        + glob.glob(os.path.join(runtime.ROOT, "board", "*.json"))
                + glob.glob(os.path.join(runtime.ROOT, "wiring", "*.json"))):
            with open(p, "rb") as f:
                h.update(os.path.basename(p).encode() + b"\0" + f.read() + b"\0")
        _sources.append(h.hexdigest()[:16])
    return _sources[0]


def compile_cached(scenario):
    """compile_scenario(parse(scenario)), a fresh list each call, compiled once per scenario."""
    if os.environ.get("ZENN_NO_COMPILE_CACHE"):
        return compile_scenario(parse(scenario))
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"))
    # (the menu presses follow the firmware's registry of games: boardsim/games.py)
    games = repr(_games.games())
    key = hashlib.sha1((_sources_digest() + games + text).encode()).hexdigest()
    got = _compiled.get(key)
    path = os.path.join(_CACHE_DIR, key + ".json")
    if got is None:
        try:
            with open(path) as f:
                got = f.read()
        except OSError:
            got = json.dumps(compile_scenario(parse(scenario)), separators=(",", ":"))
            try:
                os.makedirs(_CACHE_DIR, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=_CACHE_DIR, suffix=".tmp")
                with os.fdopen(fd, "w") as f:
                    f.write(got)
                os.replace(tmp, path)
            except OSError:
                pass        # (a read-only checkout: kept in this process only)
        _compiled[key] = got
    return json.loads(got)


def run_timeline(tl, runtime_name="micropython", heapsize=None, config=None):
    """A compiled timeline through the runner: its events and final state as a Result."""
    fd, final = tempfile.mkstemp(prefix="boardsim-final-", suffix=".json")
    os.close(fd)
    args = ["--final", final]
    cfg = None
    if config is not None:
        fd, cfg = tempfile.mkstemp(prefix="boardsim-config-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config))
        args += ["--config", cfg]
    out = io.StringIO()
    try:
        runtime.run(tl, runtime_name, stdout=out, heapsize=heapsize, runner_args=args)
        with open(final) as f:
            state = json.load(f)
    finally:
        os.unlink(final)
        if cfg is not None:
            os.unlink(cfg)
    events = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.strip()]
    return Result(events, state)


class Result:
    def __init__(self, events, state):
        self.events = events
        self.state = state
        self.display = state["display"]
        self.snapshots = {s["label"]: s for s in state.get("snapshots", [])}

    def events_of(self, ev):
        return [e for e in self.events if e.get("ev") == ev]

    def last(self, ev):
        es = self.events_of(ev)
        assert es, f"no {ev!r} event in {self.events}"
        return es[-1]

    def assert_event(self, ev, **fields):
        """Some event `ev` has all these fields (MPF: assertEventCalledWith)."""
        for e in self.events_of(ev):
            if all(e.get(k) == v for k, v in fields.items()):
                return e
        raise AssertionError(f"no {ev!r} event with {fields}; got {self.events_of(ev)}")

    def assert_no_event(self, ev, **fields):
        for e in self.events_of(ev):
            if all(e.get(k) == v for k, v in fields.items()):
                raise AssertionError(f"unexpected {ev!r} event {e}")

    def display_at(self, label):
        return self.snapshots[label]["display"]

    def seg_at(self, label):
        """The seven-segment rows at a checkpoint (max7219_model.rows(): dots included)."""
        return self.snapshots[label]["seg"]

    def events_before(self, label):
        return self.events[: self.snapshots[label]["events"]]

    def assert_text_on_display(self, text, label=None):
        rows = self.display if label is None else self.display_at(label)
        assert any(text in r for r in rows), f"{text!r} not on the display:\n" + "\n".join(rows)
