"""Where the settle window's stillness begins, and begins again, on the desktop (issue 13).

Plays timelines through the firmware under CPython in this process (boardsim/target/runner.py's
Runner, the virtual clock; BOARDSIM_FIT_MS's frame lengths with --fit-ms) and watches the
tracker every frame: when its stillness began (still_since), the refresh asked (confirm), the
verdict. For each shot it prints the table's rest (the world's last move end) -> the first still
frame -> the verdict, and every stillness begun again while every chip of the world had been at
rest for --rest-ms or more (a "restart at rest": the anchor a fit that lagged the chip).

    .venv/bin/python bench/settle_trace.py --shots "8 pins" --phases 0,3,6,9,12,15 --fit-ms 130
    .venv/bin/python bench/settle_trace.py --physics 40 --seed 3 --fit-ms 130
"""
import argparse
import json
import os
import random
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import subprocess  # noqa: E402,F401  (before runner: time is the virtual clock after it)
from boardsim.testing import Table  # noqa: E402
for _d in ("firmware", os.path.join("boardsim", "target")):
    sys.path.insert(0, os.path.join(ROOT, _d))

import runner as RU  # noqa: E402  (boardsim/target/runner.py: time is the virtual clock)
import vclock  # noqa: E402


class Watch:
    """runner's trace hook: called after every loop turn."""

    def __init__(self, world, rest_ms, verbose):
        self.world = world
        self.rest_ms = rest_ms
        self.verbose = verbose
        self.frames = -1
        self.moving_until = 0          # virtual ms: the last move under way ends then
        self.shots = []                # per activity: dict
        self.cur = None
        self.prev_since = None

    def _moves_end(self):
        t = 0
        for m in self.world.moves:
            e = m.pts[-1][2] // 1000
            if e > t:
                t = e
        return t

    def frame(self, sb):
        tr = getattr(sb, "tracker", None)
        if tr is None or tr.frames == self.frames:
            return
        self.frames = tr.frames
        now = vclock.now_ms()
        me = self._moves_end()
        if me > self.moving_until:
            self.moving_until = me
        if tr.state == 1:              # ACTIVE
            if self.cur is None:
                self.cur = {"t_begin": now, "rest": None, "still": None, "restarts": [],
                            "verdict": None, "frames": []}
            c = self.cur
            loc = tr.loc
            chips = [(loc.kind[i], loc.x[i], loc.y[i]) for i in range(loc.n)]
            c["frames"].append((now, tr.still, tr.still_since, tr.confirm, chips,
                                [(loc.wander[i]) for i in range(loc.n)]))
            at_rest = self.moving_until <= now - self.rest_ms
            if tr.still and self.prev_since is not None and tr.still_since != self.prev_since:
                # the stillness (re)begun in this frame (or counted from an earlier frame)
                if c["still"] is None or not at_rest:
                    c["still"] = tr.still_since
                else:
                    c["restarts"].append((now, now - self.moving_until, tr.still_since))
            self.prev_since = tr.still_since
            c["since"] = tr.still_since
        elif self.cur is not None:
            c = self.cur
            c["verdict"] = now
            c["event"] = tr.event
            c["rest"] = self.moving_until
            self.shots.append(c)
            self.cur = None
            self.prev_since = None


class Lines:
    """The firmware's event stream, each line with the virtual ms it was written at."""
    got = []

    def __init__(self):
        self.buf = b""
        Lines.got = []

    def write(self, buf, off=0, n=-1):
        if n < 0:
            n = len(buf) - off
        self.buf += bytes(buf[off:off + n])
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            Lines.got.append((vclock.now_ms(), line.decode()))
        return n


def _runner(fit_ms, rest_ms, verbose, config):
    """A runner with the fit's cost set and its frames watched, stdout muted: (runner, watch,
    the stdout to give back with _done)."""
    RU.FIT_US = fit_ms * 1000
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")
    r = RU.Runner(config=config)
    r.out = Lines()
    w = Watch(r.world, rest_ms, verbose)
    RU._trace = w
    return r, w, out


def _done(out):
    sys.stdout.close()
    sys.stdout = out
    RU._trace = None


def play(tl, fit_ms, rest_ms, verbose=False, config=None):
    r, w, out = _runner(fit_ms, rest_ms, verbose, config)
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w") as f:
        for o in tl:
            f.write(json.dumps(o) + "\n")
    try:
        RU.play_file(r, path)
    finally:
        _done(out)
        os.unlink(path)
    return w.shots


SHOTS = {
    "strike": lambda t: t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup"),
    "8 pins": lambda t: t.place("small", "a.pocket").shoot("small", "b.e2"),
}


def scripted(name, phase):
    tl = SHOTS[name](Table("bowling", players=1)).timeline()
    if phase:
        k = next(i for i, o in enumerate(tl) if o["op"] == "move")
        tl.insert(k, {"op": "wait", "ms": phase})
    return tl


def _play_ops(r, ops, booted):
    """runner.play_file's loop over ops (boot first unless they do, after any flash ops)."""
    for o in ops:
        if not booted and o.get("op") not in ("boot", "flash"):
            r.op({"op": "boot"})
        booted = booted or o.get("op") != "flash"
        r.op(o)
    return booted


def play_phases(name, phases, fit_ms, rest_ms, config=None):
    """[play(scripted(name, ph), ...) for ph in phases], the part of the timeline before the
    phase's wait played once: each phase's rest (its wait, the shot, 200 ms as play_file ends)
    played in a copy of this process made there (os.fork: the runner, the firmware, the world
    and the virtual clock as they are, so that the rest is played from the state the whole
    timeline reaches there; issue 15: the boot and the put-down were about half a run). The
    copies run one after the other, each sending its shots back as JSON."""
    tl = scripted(name, 0)
    k = next(i for i, o in enumerate(tl) if o["op"] == "move")
    r, w, out = _runner(fit_ms, rest_ms, False, config)
    got = []
    try:
        booted = _play_ops(r, tl[:k], False)
        for ph in phases:
            rd, wr = os.pipe()
            pid = os.fork()
            if pid == 0:                # the copy: this phase's rest, its shots to the pipe
                code = 1
                try:
                    os.close(rd)
                    rest = ([{"op": "wait", "ms": ph}] if ph else []) + tl[k:]
                    if not _play_ops(r, rest, booted):
                        r.op({"op": "boot"})
                    r.run_ms(200)
                    data = json.dumps(w.shots).encode()
                    while data:
                        data = data[os.write(wr, data):]
                    code = 0
                except BaseException:
                    import traceback
                    traceback.print_exc()
                finally:
                    os._exit(code)
            os.close(wr)
            chunks = []
            while True:
                b = os.read(rd, 65536)
                if not b:
                    break
                chunks.append(b)
            os.close(rd)
            _, status = os.waitpid(pid, 0)
            if status != 0:
                raise RuntimeError("settle_trace: phase %d's run failed (status %d)" % (ph, status))
            got.append(json.loads(b"".join(chunks)))
    finally:
        _done(out)
    return got


def report(label, shots, show_frames=False):
    for s in shots:
        if s["rest"] is None or s["rest"] < s["t_begin"] - 50:
            if not show_frames:
                continue    # no move of the world's: a chip put down or taken
        still = (s["still"] - s["rest"]) if s["still"] is not None else None
        rs = " ".join("+%d(at rest %d ms, from %+d)" % (t - s["rest"], a, since - s["rest"])
                      for t, a, since in s["restarts"])
        print("%-28s rest -> still %s -> verdict %+d ms (at %d, event %d)%s" % (
            label, still, s["verdict"] - s["rest"], s["verdict"], s.get("event", -1),
            ("  RESTART " + rs) if rs else ""))
        if show_frames:
            for f in s["frames"]:
                if f[0] >= s["rest"] - 600:
                    print("    t %+5d still %d since %+5d confirm %d chips %s wander %s" % (
                        f[0] - s["rest"], f[1], f[2] - s["rest"], f[3],
                        [(k, x, y) for k, x, y in f[4]], f[5]))


def physics(args):
    """shot_truth's random flicks (one session a --fit-ms value): rest -> verdict per shot."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import shot_truth as ST
    from boardsim.geometry import Board
    board = Board.load()
    shots = ST.make_shots(args.seed, args.physics, board, ST.Truth(board))
    tl = ST.timeline(shots)
    fd, cfg = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"front_end": args.front_end}, f)
    for fit in [int(x) for x in args.fit_ms.split(",")]:
        got = [s for s in play(tl, fit, args.rest_ms, config=cfg)
               if s["rest"] is not None and s["rest"] >= s["t_begin"] - 50]
        lat = sorted(s["verdict"] - s["rest"] for s in got)
        rs = [s for s in got if s["restarts"]]
        report("seed %d fit %d" % (args.seed, fit), got, args.frames)
        if lat:
            print("seed %d fit %d: %d shots at rest on the board; rest -> verdict min %d median %d "
                  "max %d ms; over 450: %d; a stillness begun again at rest (>= %d ms): %d" % (
                      args.seed, fit, len(lat), lat[0], lat[len(lat) // 2], lat[-1],
                      len([x for x in lat if x > 450]), args.rest_ms, len(rs)))
            late = [s for s in got if s["still"] is not None and s["verdict"] - s["still"] > 420]
            print("   verdict more than 420 ms after the stillness first began: %d" % len(late))
    os.unlink(cfg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shots", default="8 pins")
    ap.add_argument("--phases", default="0")
    ap.add_argument("--fit-ms", default="0", help="comma-separated BOARDSIM_FIT_MS values")
    ap.add_argument("--rest-ms", type=int, default=100,
                    help="a restart counts when every chip rested this long before it")
    ap.add_argument("--frames", action="store_true", help="print every shot's frames")
    ap.add_argument("--physics", type=int, default=0,
                    help="instead: this many of bench/shot_truth.py's random bowling shots")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--front-end", default="hall")
    ap.add_argument("--json", action="store_true",
                    help="one JSON line a shot (rest, since: the stillness judged on, verdict)")
    ap.add_argument("--scenario", help="instead: this scenario file (examples/*.json)")
    ap.add_argument("--whole", action="store_true",
                    help="play each phase's whole timeline (else the part before its wait once, "
                         "each phase's rest in a copy of the process made there)")
    args = ap.parse_args()
    if args.scenario:
        from boardsim.compile import compile_scenario
        from boardsim.scenario import parse
        with open(args.scenario) as f:
            tl = compile_scenario(parse(json.load(f)))
        for fit in [int(x) for x in args.fit_ms.split(",")]:
            report("%s fit %d" % (os.path.basename(args.scenario), fit),
                   [s for s in play(tl, fit, args.rest_ms) if s["rest"] is not None],
                   args.frames)
            for t, line in Lines.got:
                print("  %6d %s" % (t, line))
        return
    if args.physics:
        physics(args)
        return
    cfg = None
    if args.front_end != "hall":
        fd, cfg = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"front_end": args.front_end}, f)
    phases = [int(x) for x in args.phases.split(",")]
    for fit in [int(x) for x in args.fit_ms.split(",")]:
        for name in args.shots.split(","):
            if args.whole or not hasattr(os, "fork"):
                runs = [play(scripted(name, ph), fit, args.rest_ms, config=cfg) for ph in phases]
            else:
                runs = play_phases(name, phases, fit, args.rest_ms, config=cfg)
            for ph, shots in zip(phases, runs):
                if args.json:
                    for c in shots:
                        if c["rest"] is not None and c["rest"] >= c["t_begin"] - 50:
                            print(json.dumps({"shot": name, "fit_ms": fit, "phase": ph,
                                              "rest": c["rest"], "since": c["since"],
                                              "verdict": c["verdict"]}))
                    continue
                report("%s fit %d phase %d" % (name, fit, ph), shots, args.frames)


if __name__ == "__main__":
    main()
