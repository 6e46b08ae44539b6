"""tools/monitor: the scoreboard's event stream as a live scoreboard in the terminal, and every
game saved to a file.

    tools/monitor /dev/ttyACM0                      the Pico on USB serial (pyserial)
    python -m boardsim run GAME.json | tools/monitor -      the simulator
    tools/monitor --sheet games/20260101-201500-bowling.jsonl     a saved game as a score sheet

Reads one JSON object per line (CONTRACT section 3); anything else on the line (the
MicroPython banner, a traceback, a REPL prompt) is ignored. Each game, from its "game" event to
its "game_over" (or the next "game"), is saved as the event lines themselves, one per line,
in --dir (default ./games), named after the time it started and the game; the file is written
as the events come, so a game cut short by a crash is kept as far as it went.
`--sheet FILE` plays a saved game back through the same code and prints the final sheet.
"""
import argparse
import json
import os
import sys
import time

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from boardsim import games as registry

BAUD = 115200
# the games with a sheet of their own here (the contract's names); any other game the
# firmware's registry lists shows its title and its latest events
TRAP_GAMES = ("trap1", "trap2")


# -- bowling arithmetic (host side, from the shot events) ---------------------------------
def bowling_cum(frames):
    """Running totals from each frame's pins ([[10], [8, 2], ..., [10, 10, 10]]); None where
    not known yet (a strike or spare waiting for its bonus balls, or not played)."""
    flat = []
    starts = []
    for f in frames:
        starts.append(len(flat))
        flat.extend(f)
    cum = []
    t = 0
    for i, f in enumerate(frames):
        k = starts[i]
        if i == 9:
            need = 3 if len(f) >= 2 and (f[0] == 10 or f[0] + f[1] == 10) else 2
            if len(f) < need:
                break
            t += sum(f)
        elif f and f[0] == 10:
            if len(flat) < k + 3:
                break
            t += 10 + flat[k + 1] + flat[k + 2]
        elif len(f) < 2:
            break
        elif f[0] + f[1] == 10:
            if len(flat) < k + 3:
                break
            t += 10 + flat[k + 2]
        else:
            t += f[0] + f[1]
        cum.append(t)
    return cum + [None] * (10 - len(cum))


class Monitor:
    """The state of the game being played, fed one event line at a time."""

    def __init__(self, save_dir=None, clock=time.localtime):
        self.save_dir = save_dir
        self.clock = clock
        self.game = None            # the "game" event
        self.balls = {}             # bowling: player -> [(frame, ball, pins, mark)]
        self.trap = {}              # trap: the latest facts
        self.over = None            # the "game_over" event
        self.last = None            # the latest event
        self.log = []               # every event of this game
        self.file = None
        self.saved = []             # paths of games saved (closed)
        self.faults = []
        self.lines = 0

    # -- input ---------------------------------------------------------------------------
    def feed(self, line):
        """One line of the stream; returns the event (a dict) or None for other text."""
        line = line.strip()
        if not line.startswith("{"):
            return None
        try:
            e = json.loads(line)
        except ValueError:
            return None
        if not isinstance(e, dict) or "ev" not in e:
            return None
        self.lines += 1
        self.last = e
        ev = e["ev"]
        if ev == "game":
            self._close()
            self.game = e
            self.balls = {p: [] for p in range(1, e.get("players", 2) + 1)}
            self.trap = {"trapper": e.get("trapper"), "round": 1, "rounds": []}
            self.over = None
            self.log = []
            self._open(e)
        elif ev == "fault":
            self.faults.append(e)
        if self.game is not None:
            self.log.append(e)
            if self.file is not None:
                self.file.write(json.dumps(e, separators=(",", ":")) + "\n")
                self.file.flush()
            if ev == "shot":
                self._shot(e)
            elif ev == "undo":
                self._undo(e)
            elif ev in ("turn", "round", "setup", "coin"):
                self.trap[ev] = e
                if ev == "round":
                    self.trap["round"] = e.get("round", 1)
                    self.trap["trapper"] = e.get("trapper")
            elif ev == "game_over":
                self.over = e
                self._close()
        return e

    def _shot(self, e):
        if self.game.get("game") == "bowling":
            self.balls.setdefault(e["player"], []).append(
                (e["frame"], e["ball"], e.get("pins", 0), e.get("mark", "?")))
        else:
            self.trap["shot"] = e

    def _undo(self, e):
        if self.game.get("game") == "bowling":
            b = self.balls.get(e.get("player"), [])
            for i in range(len(b) - 1, -1, -1):
                if b[i][0] == e.get("frame") and b[i][1] == e.get("ball"):
                    del b[i]
                    break
        else:
            self.trap["undone"] = e

    # -- files -----------------------------------------------------------------------------
    def _open(self, e):
        if not self.save_dir:
            return
        os.makedirs(self.save_dir, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", self.clock())
        base = os.path.join(self.save_dir, f"{stamp}-{e.get('game', 'game')}")
        path = base + ".jsonl"
        k = 1
        while os.path.exists(path):
            k += 1
            path = f"{base}-{k}.jsonl"
        self.file = open(path, "w")
        self.path = path

    def _close(self):
        if self.file is not None:
            self.file.close()
            self.file = None
            self.saved.append(self.path)

    def close(self):
        self._close()

    # -- what the screen shows -----------------------------------------------------------
    def bowling_frames(self, p):
        """Player p's marks (strings) and pins (lists) per frame, from the shot events."""
        marks = [""] * 10
        pins = [[] for _ in range(10)]
        for f, _, n, m in self.balls.get(p, []):
            if 1 <= f <= 10:
                marks[f - 1] += m
                pins[f - 1].append(n)
        while pins and not pins[-1]:
            pins.pop()
        return marks, pins

    def render(self):
        if self.game is None:
            return Panel(Text("waiting for a game ... (%d events)" % self.lines),
                         title="Zenn scoreboard")
        g = self.game.get("game")
        body = (self._render_bowling() if g == "bowling" else self._render_trap() if g in TRAP_GAMES
                else self._render_events())
        parts = [body]
        if self.faults:
            parts.append(Text("fault: " + self.faults[-1].get("msg", self.faults[-1].get("what", "?")),
                              style="bold red"))
        title = registry.title(g)
        return Panel(Group(*parts), title=title + (" - game over" if self.over else ""))

    def _render_bowling(self):
        t = Table(show_lines=True, expand=False)
        t.add_column("player")
        for f in range(1, 11):
            t.add_column(str(f), justify="right", min_width=3 if f < 10 else 4)
        t.add_column("total", justify="right")
        players = self.game.get("players", 1)
        up = self.last.get("player") if self.last and self.last.get("ev") == "shot" else None
        for p in range(1, players + 1):
            if self.over:
                s = self.over["players"][p - 1]
                marks, cum, total = s["frames"], s["cum"], s["total"]
                marks = marks + [""] * (10 - len(marks))
            else:
                marks, pins = self.bowling_frames(p)
                cum = bowling_cum(pins)
                total = max([c for c in cum if c is not None], default=0)
            cells = []
            for f in range(10):
                c = cum[f] if f < len(cum) else None
                cells.append(f"{marks[f]}\n{'' if c is None else c}")
            name = f"P{p}"
            t.add_row(Text(name, style="bold reverse" if p == up and not self.over else ""),
                      *cells, str(total))
        lines = [t]
        if self.over:
            totals = [s["total"] for s in self.over["players"]]
            best = max(totals)
            winners = [i + 1 for i, v in enumerate(totals) if v == best]
            lines.append(Text("winner: P%d" % winners[0] if len(winners) == 1 else "a tie",
                              style="bold green"))
        elif self.last and self.last.get("ev") == "shot":
            e = self.last
            lines.append(Text("last: P%d frame %d ball %d: %s (%s%s)" % (
                e["player"], e["frame"], e["ball"], e.get("mark", "?"), e.get("result", ""),
                ", split" if e.get("split") else "")))
        return Group(*lines)

    def _render_events(self):
        # a game without a sheet here: its last events, field by field
        t = Table(show_header=False, box=None)
        t.add_column(style="bold")
        t.add_column()
        for e in self.log[-8:]:
            t.add_row(e.get("ev", "?"), ", ".join(f"{k} {v}" for k, v in e.items() if k not in ("ev", "game")))
        return t

    def _render_trap(self):
        tr = self.trap
        g = self.game.get("game")
        t = Table(show_header=False, box=None)
        t.add_column(style="bold")
        t.add_column()
        trapper = tr.get("trapper")
        if trapper:
            t.add_row("trapper", f"P{trapper}")
            t.add_row("fugitive", f"P{3 - trapper}")
        if g == "trap2":
            t.add_row("round", str(tr.get("round", 1)))
        s = tr.get("shot")
        if s:
            t.add_row("trapper shots", str(s.get("shots", 0)))
            if "left" in s:
                t.add_row("shots left", str(s["left"]))
            if "penalty" in s:
                t.add_row("penalty", str(s["penalty"]))
            t.add_row("small chip", s.get("small", "?"))
            t.add_row("last shot", "P%s %s (%s)%s" % (s.get("player"), s.get("chip"), s.get("result"),
                                                      ", foul: " + s["foul"] if s.get("foul") else ""))
        turn = tr.get("turn")
        if turn and not self.over:
            t.add_row("up", "P%s, %s%s" % (turn.get("player"), turn.get("role"),
                                           " - escape shot!" if turn.get("escape") else ""))
        setup = tr.get("setup")
        if setup and not s:
            t.add_row("set-up", "OK" if setup.get("ok") else "three big chips on the Zenn line")
        parts = [t]
        o = self.over
        if o:
            if g == "trap2":
                r = Table(title="rounds")
                for col in ("round", "trapper", "shots", "penalty", "total", "reason"):
                    r.add_column(col)
                for i, rd in enumerate(o.get("rounds", [])):
                    r.add_row(str(i + 1), f"P{rd['trapper']}", str(rd["shots"]), str(rd["penalty"]),
                              str(rd["shots"] + rd["penalty"]), rd["reason"])
                parts.append(r)
            else:
                parts.append(Text("trapper P%s took %s shots: %s" % (o.get("trapper"), o.get("shots"),
                                                                     o.get("reason"))))
            w = o.get("winner")
            parts.append(Text(f"winner: P{w}" if w else "a tie", style="bold green"))
        return Group(*parts)


# -- input sources ---------------------------------------------------------------------------
def lines_from(source, baud=BAUD):
    """Text lines from '-' (stdin) or a serial port (pyserial)."""
    if source == "-":
        for line in sys.stdin:
            yield line
        return
    import serial
    port = serial.Serial(source, baud, timeout=0.5)
    buf = b""
    try:
        while True:
            try:
                chunk = port.read(256)
            except serial.SerialException:
                return                          # unplugged
            if not chunk:
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                yield line.decode("utf-8", "replace")
    finally:
        port.close()


def monitor(source, save_dir, console, count=0, live=True):
    """Follow the stream; returns the paths of the games saved. count > 0: stop after that
    many games have ended."""
    m = Monitor(save_dir)
    done = 0
    try:
        if live and console.is_terminal:
            from rich.live import Live
            with Live(m.render(), console=console, refresh_per_second=8) as lv:
                for line in lines_from(source):
                    e = m.feed(line)
                    if e is not None:
                        lv.update(m.render())
                        if e["ev"] == "game_over":
                            done += 1
                            if count and done >= count:
                                break
        else:
            for line in lines_from(source):
                e = m.feed(line)
                if e is not None and e["ev"] == "game_over":
                    console.print(m.render())
                    done += 1
                    if count and done >= count:
                        break
            if m.game is not None and m.over is None:
                console.print(m.render())
    except KeyboardInterrupt:
        pass
    finally:
        m.close()
    for p in m.saved:
        console.print(f"saved {p}")
    return m.saved


def sheet(path, console):
    """A saved game printed as a score sheet."""
    m = Monitor(None)
    with open(path) as f:
        for line in f:
            m.feed(line)
    if m.game is None:
        raise SystemExit(f"{path}: no game in it")
    console.print(m.render())
    if m.over is None:
        console.print(Text("(the game did not end)", style="yellow"))
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/monitor", description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", help="serial port (e.g. /dev/ttyACM0), or - for stdin")
    ap.add_argument("--sheet", metavar="GAMEFILE", help="print a saved game as a score sheet")
    ap.add_argument("--dir", default="games", help="where games are saved (default: ./games)")
    ap.add_argument("--count", type=int, default=0, help="stop after this many games ended")
    ap.add_argument("--plain", action="store_true", help="no live view: print each game when it ends")
    ap.add_argument("--width", type=int, default=None, help="terminal width for the output")
    a = ap.parse_args(argv)
    console = Console(width=a.width)
    if a.sheet:
        sheet(a.sheet, console)
        return 0
    if not a.source:
        ap.error("give a serial port, - for stdin, or --sheet GAMEFILE")
    monitor(a.source, a.dir, console, a.count, live=not a.plain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
