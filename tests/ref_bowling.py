"""An independent reference for Zenn Bowling games played through the simulator (issue 7).

- `ball_value(path, fresh, base, end)`: what one ball is worth, from the path the simulator was
  told to shoot (the rules' pin table, docs/rules.md), not from anything the firmware said.
- `Game`: a conventional bowling scorer over ball values (frames, marks, running totals, the
  tenth frame's bonus balls), fed ball by ball, with undo.
- `check_bowling_events(events)`: plays a firmware's event stream (shot, undo, game_over)
  through the scorer and checks every shot's "total" and "mark", the game_over line, and that
  no total exceeds 300; returns the Game.
"""

# pins for a chip at rest after a first ball, by zone relative to the shooter ('s') and the pin
# end ('p'); Zenn lines have no value, pockets lie inside the 3 pt sections by the cups
PIN_TABLE = {"p.cup3": 9, "p.pocket": 9, "p.e2": 8, "p.n2": 8, "p.z3": 7, "p.n3": 7,
             "s.e2": 6, "s.n2": 6, "p.back4": 5, "s.z3": 4, "s.n3": 3, "s.cup3": 2,
             "s.pocket": 2, "s.back4": 1, "center": 0}


def rel(zone, end):
    if zone in ("center", "off"):
        return zone
    return ("s" if zone[0] == end else "p") + zone[1:]


def rest_value(zone, end):
    """A chip resting in `zone` (or on a border "z1|z2": the higher of the two)."""
    return max(PIN_TABLE.get(rel(z, end), 0) for z in zone.split("|"))


def ball_value(path, fresh, base, end="a"):
    """What a ball shot along `path` (the simulator's waypoints) is worth."""
    pin = "b" if end == "a" else "a"
    last = path[-1]
    zenn = last == f"{pin}.cup" and len(path) > 1 and path[-2] == f"{pin}.pocket"
    if fresh:
        if zenn:
            return 10
        if last == f"{pin}.cup":
            return 9
        if last in ("off", f"{end}.cup") or isinstance(last, dict):
            return 0
        return rest_value(last, end)
    if zenn:
        return 10 - base
    if last == f"{pin}.cup":
        return 9 - base
    return 0


class Game:
    def __init__(self, players=1):
        self.players = players
        self.balls = []             # (player, pins) in the order played

    # where the next ball goes, from the balls so far
    def _frames(self, p):
        """[[pins, ...] per frame] of player p."""
        frames = []
        for q, v in self.balls:
            if q != p:
                continue
            if not frames or self._frame_done(frames[-1], len(frames)):
                frames.append([])
            frames[-1].append(v)
        return frames

    @staticmethod
    def _frame_done(fr, n):
        if n < 10:
            return fr[:1] == [10] or len(fr) == 2
        if len(fr) == 3:
            return True
        if len(fr) == 2:
            return not (fr[0] == 10 or fr[0] + fr[1] == 10)
        return False

    def next(self):
        """(player, frame, fresh, base) of the next ball, or None when the game is over."""
        for f in range(10):
            for p in range(self.players):
                fr = self._frames(p)
                if len(fr) <= f:
                    return p, f, True, 0
                if not self._frame_done(fr[f], f + 1):
                    cur = fr[f]
                    if f < 9 or len(cur) == 0:
                        return p, f, len(cur) == 0, cur[0] if cur else 0
                    # tenth frame: fresh after a strike or a spare
                    if len(cur) == 1:
                        return p, f, cur[0] == 10, 0 if cur[0] == 10 else cur[0]
                    if cur[0] == 10 and cur[1] != 10:
                        return p, f, False, cur[1]
                    return p, f, True, 0
        return None

    def play(self, pins):
        p = self.next()[0]
        self.balls.append((p, pins))

    def undo(self):
        self.balls.pop()

    def over(self):
        return self.next() is None

    # scores
    def cum(self, p):
        """Running totals per frame, None while a frame's score is not known."""
        fr = self._frames(p)
        flat = [v for q, v in self.balls if q == p]
        out = []
        total = 0
        i = 0
        for f in range(10):
            if f >= len(fr) or not self._frame_done(fr[f], f + 1):
                out.append(None)
                continue
            balls = fr[f]
            if f == 9:
                s = sum(balls)
            elif balls[0] == 10:
                if i + 2 >= len(flat):
                    out.append(None)
                    i += len(balls)
                    continue
                s = 10 + flat[i + 1] + flat[i + 2]
            elif balls[0] + balls[1] == 10:
                if i + 2 >= len(flat):
                    out.append(None)
                    i += len(balls)
                    continue
                s = 10 + flat[i + 2]
            else:
                s = balls[0] + balls[1]
            i += len(balls)
            if out and out[-1] is None:
                out.append(None)
                continue
            total += s
            out.append(total)
        return out

    def total(self, p):
        known = [c for c in self.cum(p) if c is not None]
        return known[-1] if known else 0

    def marks(self, p):
        out = []
        for f, balls in enumerate(self._frames(p)):
            m = ""
            fresh = True
            prev = 0
            for k, v in enumerate(balls):
                if fresh and v == 10:
                    m += "X"
                elif not fresh and prev + v == 10:
                    m += "/"
                else:
                    m += "-" if v == 0 else str(v)
                if fresh and v != 10:
                    fresh, prev = False, v
                else:
                    fresh, prev = True, 0
            out.append(m)
        return out + [""] * (10 - len(out))


def check_bowling_events(events, players=None):
    """Score the game again from its shot and undo events; check what the firmware said."""
    start = [e for e in events if e.get("ev") == "game" and e.get("game") == "bowling"]
    if players is None:
        players = start[-1]["players"] if start else 1
    g = Game(players)
    for e in events:
        ev = e.get("ev")
        if ev == "game" and e.get("game") == "bowling":
            g = Game(e["players"])
        elif ev == "undo" and "frame" in e:
            g.undo()
        elif ev == "shot" and e.get("game") == "bowling":
            nxt = g.next()
            assert nxt is not None, f"a shot after the game's end: {e}"
            p, f, fresh, base = nxt
            assert (e["player"], e["frame"]) == (p + 1, f + 1), (e, nxt)
            pins = e["pins"]
            if fresh:
                assert 0 <= pins <= 10, e
            else:
                assert pins in (0, 9 - base, 10 - base), (e, base)
            g.play(pins)
            assert e["total"] == g.total(p), (e, g.cum(p))
            assert e["mark"] == g.marks(p)[f][-1], (e, g.marks(p))
            assert g.total(p) <= 300
        elif ev == "game_over" and e.get("game") == "bowling":
            assert g.over()
            for p, pl in enumerate(e["players"]):
                assert pl["frames"] == g.marks(p), (pl, g.marks(p))
                assert pl["cum"] == g.cum(p), (pl, g.cum(p))
                assert pl["total"] == g.total(p) <= 300
    return g
