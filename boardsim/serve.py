"""python -m boardsim serve [--port N] [--runtime R] [--speed X]: the simulator as a page on
localhost, to play with. The real firmware runs behind it (boardsim/target/live.py, interactive
mode) on the simulated table; the page shows the board, the chips and the pads that feel them,
and the OLED pixel for pixel as the SSD1306 model decodes it.

A person picks a game (the firmware's own menu is played with button presses, or driven by
hand), flicks chips with the mouse (boardsim/physics.py simulates the flick; the firmware sees
the same move op a scenario's flick gives), puts chips down and picks them up, presses the four
buttons and cuts the power.

The HTTP API (JSON), used by web/play.html:
    GET  /                  the page (web/play.html, web/board.js)
    GET  /api/board         the board description (boardsim/draw.py), the physics limits and
                            the firmware's games (boardsim/games.py as_json(): the page's form)
    GET  /api/tunes         the buzzer's tunes, sound/tunes.json's "tunes" ({name: [[hz, ms]]},
                            hz 0 a rest), or {"tunes": {}, "error": why}
    GET  /api/state?frame=F&ev=E&epoch=N&since=V   the latest state line; the OLED only when its
                            frame number differs from F; the firmware's events from index E on
                            (all of it when N is not the current firmware's epoch). "version"
                            counts the changes a page shows (anything but the clock); with since
                            = the version the page has, the answer waits until the next change,
                            HOLD_S at most (the page then asks again at once, rather than 20
                            times a second for nothing)
    POST /api/action        one action, answered {"ok": true} or {"ok": false, "error": reason}:
        {"press": BUTTON}  {"hold": BUTTON, "ms": N}  {"flick": CHIP, "v": [vx, vy]}
        {"down": BUTTON}  {"up": BUTTON}   a button goes down / comes up now and stays so while
                            the clock runs (the page's buttons: a long press shows as it happens)
        {"place": {CHIP: {"x": mm, "y": mm}}}  {"take": CHIP}  {"power": "cut"|"on"}
        {"put_back": true}  the chips where they lay before the shot the last undo took back:
                            Zenn Bowling's chip into the zone the firmware's undo event names
                            ("put_back"), at the spot it was flicked from when that is known;
                            otherwise the spots before the page's last flick
    GET /api/state's "put_back": null or [{"chip", "where"}], where ["board", x, y] (mm),
                            ["zone", name] or ["hand"]: what {"put_back": true} would do
        {"wait_ms": N}      (lets N ms of virtual time pass at once)
        {"new": {"game": G, "players": N, "options": {...}}}   restart the firmware and go
                            through its menu to that game (CONTRACT 2's options)
Actions other than new, hold, down, up, put_back and wait_ms are scenario steps
(boardsim/scenario.py) and go through the same compiler, so a refused step says why exactly as
`boardsim run` would. A chip off the board is in the player's hand: it can be put down again,
and "take" of it just says so (it comes back "in hand").

Hands (place, take, flick) while chips slide are refused; while the table is only settling (a
chip just put down or lifted, a hand's reach into a cup, a shot's chip at rest for less than
SETTLED_MS) they wait for it, so that a put down right after a pick up just works.

Time: the firmware's virtual clock is kept with the wall clock (times --speed): a clock thread
sends "wait" ops every TICK_S. Nobody watching (no poll for IDLE_S) pauses the table.
"""
import bisect
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from boardsim import live, physics
from boardsim.compile import Compiler, _default_board
from boardsim.draw import board_description
from boardsim.render import entry_kinds
from boardsim.scenario import BUTTONS, CHIPS, FLICK_MAX, Scenario, ScenarioError, parse
from boardsim import games as _games

WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web")
# the scoreboard's buzzer tunes, the one source (firmware/tables/tunes.py is generated from it): the
# page plays the same notes
TUNES = os.path.join(os.path.dirname(WEB), os.pardir, "sound", "tunes.json")
TICK_S = 0.04
IDLE_S = 15.0
HOLD_S = 0.25           # a poll with nothing new waits this long at most: the clock's pace then
MAX_CATCH_UP_MS = 500
SETTLED_MS = 600        # the scoreboard takes a chip as at rest after 400 ms still (tracker.py)
QUIET_WAIT_S = 3.0      # how long a hand waits (wall clock) for a settling table to rest
MIN_DOWN_MS = 60        # a click's press lasts at least this (virtual), and a button stays up at
MIN_UP_MS = 60          # least this long between two presses, so that the firmware's 20 ms
                        # debounce sees both even when they come within one clock tick
PUT_BACK_LIFT_MS = 400  # putting chips back: the lifts done before the chips are put down
BOWLING_CHIP = "small"  # Zenn Bowling's one chip (the undo event's put_back is where it goes)


class Session:
    """One firmware on one simulated table, shared by every page open on the server."""

    def __init__(self, rt="micropython", speed=1.0):
        self.rt = rt
        self.speed = speed
        self.board = _default_board()
        self.lock = threading.RLock()
        self.target = None
        self.state = {}
        self.oled = None
        self.text = []
        self.error = None
        self.game = None
        self.last_poll = time.monotonic()
        self.stopped = False
        self.epoch = 0          # one per firmware started: a page seeing it change starts afresh
        self.held = {}          # buttons held down from the page: button -> virtual ms when pressed
        self.released = {}      # button -> virtual ms when it last came up
        self.flicks = []        # [(event lines before it, chips before it)], for put_back
        self.version = 0        # bumped when what a page shows changed (not the clock alone)
        self._shown = None
        self.changed = threading.Condition(self.lock)
        self.restart(None)
        self._clock = threading.Thread(target=self._tick, daemon=True)
        self._clock.start()

    # -- the firmware ----------------------------------------------------------------------
    def restart(self, game):
        """A new firmware (fresh flash, chips in hand). game: None (it boots to its menu) or
        {"game", "players", "options"}: the menu presses to that game follow."""
        with self.lock:
            if self.target is not None:
                self.target.close()
            self.epoch += 1
            self.compiler = Compiler(self.board)
            self.compiler.state = {c: ("hand",) for c in CHIPS}
            self.compiler.power = True
            self.error = None
            self.oled = None
            self.text = []
            self.held = {}
            self.released = {}
            self.flicks = []
            self.target = live.Target(self.rt)
            if game is None:
                ops = [{"op": "boot"}]
                self.game = None
            else:
                scn = Scenario(game["game"], game["players"], game.get("options", {}), [])
                ops = self.compiler.compile(scn)
                self.game = {"game": scn.game, "players": scn.players, "options": scn.options}
                self.compiler.state = {c: ("hand",) for c in CHIPS}
            for op in ops:
                self._send(op)
            self.wall0 = time.monotonic()
            self.virt0 = self.state.get("t", 0)

    def _send(self, op):
        try:
            st = self.target.send(op)
        except live.TargetFailure as e:
            self.error = str(e)
            raise
        if "oled" in st:
            self.oled = st["oled"]
            self.text = st.get("text", [])
        self.state = st
        self._note_change()
        return st

    def _note_change(self):
        """A new version when what a page shows changed: the state line but its clock (t, and
        still_ms but whether it passed SETTLED_MS: the page's "the pads feel it"), the events
        read so far, the firmware, its error, the buttons held, the flicks (put_back)."""
        with self.lock:
            st = self.state
            shown = ({k: v for k, v in st.items() if k not in ("t", "still_ms")},
                     st.get("still_ms", 0) >= SETTLED_MS, len(self.target.events) if self.target else 0,
                     self.epoch, self.error, sorted(self.held), len(self.flicks), self.game)
            if shown != self._shown:
                self._shown = shown
                self.version += 1
                self.changed.notify_all()

    def _rebase(self):
        # an op may take virtual time at once (a press 270 ms, wait_ms N): the wall clock
        # keeps pace from here rather than stalling the table until it catches up
        self.wall0 = time.monotonic()
        self.virt0 = self.state.get("t", 0)

    def _tick(self):
        while not self.stopped:
            time.sleep(TICK_S)
            with self.lock:
                self._tick_once()
                self._note_change()     # also the events read since (the firmware's stdout)

    def _tick_once(self):
        """The firmware's clock kept with the wall clock's (or paused)."""
        now = time.monotonic()
        if self.error or now - self.last_poll > IDLE_S:
            self.wall0 += TICK_S        # paused: do not catch up later
            self._release_all()         # nobody watching holds a button
            return
        want = self.virt0 + (now - self.wall0) * 1000.0 * self.speed
        lag = want - self.state.get("t", 0)
        if lag >= 1:
            try:
                self._send({"op": "wait", "ms": int(min(lag, MAX_CATCH_UP_MS))})
            except live.TargetFailure:
                return
            if lag > MAX_CATCH_UP_MS:   # too far behind: keep the pace from here
                self.wall0 = now
                self.virt0 = self.state["t"]

    def close(self):
        self.stopped = True
        with self.lock:
            if self.target is not None:
                self.target.close()

    # -- what the page asks --------------------------------------------------------------------
    def snapshot(self, frame=None, ev=0, epoch=None, since=None):
        with self.lock:
            self.last_poll = time.monotonic()
            if since == self.version:       # the page has this: wait for the next change
                end = self.last_poll + HOLD_S
                while since == self.version and not self.stopped:
                    left = end - time.monotonic()
                    if left <= 0:
                        break
                    self.changed.wait(left)
            if epoch != self.epoch:
                frame, ev = None, 0
            st = dict(self.state)
            st.pop("oled", None)
            st.pop("text", None)
            if frame != st.get("frame"):
                st["oled"] = self.oled
            st["text"] = self.text
            events = list(self.target.events) if self.target else []
            st["events"] = events[ev:]
            st["ev_total"] = len(events)
            st["game"] = self.game
            st["epoch"] = self.epoch
            st["error"] = self.error
            st["held"] = sorted(self.held)
            st["put_back"] = self._put_back_offer(events)
            st["wall_ms"] = int((time.monotonic() - self.wall0) * 1000)
            st["version"] = self.version
            return st

    def act(self, a):
        """One action from the page (see the module's doc). Returns None or a reason."""
        if not isinstance(a, dict):
            return ("an action is one object: press, hold, down, up, flick, place, take, "
                    "put_back, power, wait_ms or new")
        try:
            if any(k in a for k in ("place", "take", "flick", "put_back")):
                # hands: not while chips slide; a table only settling is waited for
                why = self._wait_quiet()
                if why:
                    return why
            with self.lock:
                return self._act(a)
        except ScenarioError as e:
            msg = str(e)
            return msg[len("step 1: "):] if msg.startswith("step 1: ") else msg
        except live.TargetFailure as e:
            return str(e)

    def _quiet(self):
        st = self.state
        return not st.get("moving") and st.get("still_ms", SETTLED_MS) >= SETTLED_MS

    def _wait_quiet(self):
        end = time.monotonic() + QUIET_WAIT_S / min(1.0, self.speed)
        while True:
            with self.lock:
                if self.error or self._quiet():
                    return None
                if self.state.get("sliding", self.state.get("moving")) or time.monotonic() > end:
                    return "wait until the chips have come to rest and the scoreboard has seen them"
            time.sleep(0.02)

    def _act(self, a):
        if "new" in a:
            g = a["new"] or {}
            if g.get("menu"):
                self.restart(None)
                return None
            s = parse({"game": g.get("game"), "players": g.get("players"),
                       "options": g.get("options", {}), "steps": []})
            self.restart({"game": s.game, "players": s.players, "options": s.options})
            return None
        if self.error:
            return "the firmware stopped; start a new game"
        if "hold" in a:
            if a["hold"] not in BUTTONS:
                return f"unknown button {a['hold']!r}"
            ms = a.get("ms", 2500)
            if not isinstance(ms, int) or not 0 < ms <= 10000:
                return "hold ms: 1 to 10000"
            self._send({"op": "hold", "button": a["hold"], "ms": ms})
            self._rebase()
            return None
        if "down" in a or "up" in a:
            return self._button(a)
        if "put_back" in a:
            return self._put_back()
        step = parse({"game": "bowling", "players": 1, "steps": [a]}).steps[0]
        kind = step[0]
        if kind in ("place", "take", "flick", "shoot") and not self._quiet():
            return "wait until the chips have come to rest and the scoreboard has seen them"
        if kind == "shoot":
            return "flick the chip instead (shoot takes waypoint paths: boardsim run)"
        if kind == "take" and self.compiler.state[step[1]][0] == "off":
            # off the board it is in the player's hand already
            self.compiler.state[step[1]] = ("hand",)
            self._send({"op": "lift", "chip": step[1]})
            return None
        if kind == "flick":
            self.flicks.append((self.state.get("ev", 0), dict(self.compiler.state)))
        for op in self.compiler.step(step):
            self._send(op)
        self._rebase()
        return None

    # -- buttons held from the page --------------------------------------------------------------
    def _button(self, a):
        down = "down" in a
        b = a["down"] if down else a["up"]
        if b not in BUTTONS:
            return f"unknown button {b!r}"
        if down:
            if b not in self.held:
                short = MIN_UP_MS - (self.state.get("t", 0) - self.released.get(b, -MIN_UP_MS))
                if short > 0:
                    self._send({"op": "wait", "ms": int(short)})
                    self._rebase()
                self.held[b] = self.state.get("t", 0)
                self._send({"op": "down", "button": b})
            return None
        if b not in self.held:
            return None                 # already up (released when nobody watched)
        short = MIN_DOWN_MS - (self.state.get("t", 0) - self.held[b])
        if short > 0:
            self._send({"op": "wait", "ms": int(short)})
            self._rebase()
        del self.held[b]
        self._send({"op": "up", "button": b})
        self.released[b] = self.state.get("t", 0)
        return None

    def _release_all(self):
        for b in list(self.held):
            del self.held[b]
            try:
                self._send({"op": "up", "button": b})
            except live.TargetFailure:
                pass

    # -- after undo: the chips back where they lay -----------------------------------------------
    def _undone_chips(self, events):
        """Where the chips go back to before the entry the last undo took back, or None when
        the last entry was not taken back or that is not known: {chip: state} (the
        compiler's form, ("zone", name) for a zone) or None.

        The firmware says where (Zenn Bowling's undo event: "put_back", the zone the chip
        must be in before the ball is played again), whoever moved the chip; the page's own
        flicks give the exact spot where it lay, used when it lies in that zone, and are all
        there is for Trap Zenn (and a bowling undo without put_back). Entries are shots and,
        in Trap Zenn, turns ended by the button (render.entry_kinds); undo takes back the
        last one."""
        stack, undone, zone = [], None, None
        flicks = self.flicks
        starts = [n0 for n0, _c in flicks]
        for i, (e, kind) in enumerate(zip(events, entry_kinds(events))):
            if kind == "game":
                stack, undone, zone = [], None, None
            elif kind == "entry" and e.get("ev") == "shot":
                if e.get("manual"):
                    snap = undone               # a corrected ball: the same ball played again
                else:                           # the last flick before the shot's line
                    k = bisect.bisect_right(starts, i)
                    snap = flicks[k - 1][1] if k else None
                stack.append(snap)
                undone, zone = None, None
            elif kind == "entry":
                stack.append(None)              # the trapper ended his turn with the button
                undone, zone = None, None
            elif kind == "undo":
                undone = stack.pop() if stack else None
                zone = e.get("put_back")
        if zone:
            st = (undone or {}).get(BOWLING_CHIP)
            if st and st[0] == "board" and zone in self.board.zone_of_point(st[1], st[2]):
                return {BOWLING_CHIP: st}       # the very spot, which is in the zone
            return {BOWLING_CHIP: ("zone", zone)}
        return undone

    def _put_back_offer(self, events):
        # the page asks 20 times a second: the walk over the events only when they changed
        key = (self.epoch, len(events), len(self.flicks))
        if key != getattr(self, "_undone_key", None):
            self._undone_key = key
            self._undone = self._undone_chips(events)
        chips = self._undone
        if chips is None:
            return None
        moves = self._put_back_moves(chips)
        if not moves:
            return None
        return [{"chip": c, "where": list(st)} for c, st in sorted(moves.items())]

    def _put_back_moves(self, chips):
        """{chip: where it goes} for the chips that are not there now."""
        now = self.compiler.state
        out = {}
        for c, st in chips.items():
            cur = now.get(c, ("hand",))
            if st[0] == "zone":
                if cur[0] != "board" or st[1] not in self.board.zone_of_point(cur[1], cur[2]):
                    out[c] = st
            elif st[0] == "board":
                if cur[0] != "board" or abs(cur[1] - st[1]) > 0.5 or abs(cur[2] - st[2]) > 0.5:
                    out[c] = st
            elif st[0] in ("hand", "off") and cur[0] in ("board", "cup"):
                out[c] = ("hand",)
        return out

    def _put_back(self):
        if not self._quiet():
            return "wait until the chips have come to rest and the scoreboard has seen them"
        chips = self._undone_chips(list(self.target.events))
        moves = self._put_back_moves(chips) if chips else {}
        if not moves:
            return "nothing to put back: no shot was taken back since the last one"
        lifted = False
        for c in moves:
            if self.compiler.state[c][0] in ("board", "cup", "off"):
                if self.compiler.state[c][0] == "off":
                    self.compiler.state[c] = ("hand",)
                    self._send({"op": "lift", "chip": c})
                else:
                    for op in self.compiler.step(("take", c)):
                        self._send(op)
                    lifted = True
        if lifted:      # the hands take the chips off before they put them down again
            self._send({"op": "wait", "ms": PUT_BACK_LIFT_MS})
        # a spot: that point; a zone: a free spot in it (the compiler's place of a zone)
        places = {c: ("point", st[1], st[2]) if st[0] == "board" else st[1]
                  for c, st in moves.items() if st[0] in ("board", "zone")}
        if places:
            for op in self.compiler.place(places):
                self._send(op)
        self._rebase()
        return None


def load_tunes(path=TUNES):
    """{"tunes": {name: [[hz, ms], ...]}} from sound/tunes.json, or {"tunes": {}, "error": why}
    (the page then plays nothing and says so)."""
    try:
        with open(path, encoding="utf-8") as f:
            tunes = json.load(f)["tunes"]
        for name, notes in tunes.items():
            if not all(isinstance(n, list) and len(n) == 2 and all(isinstance(v, int) and v >= 0 for v in n)
                       for n in notes):
                raise ValueError(f"{name}: a note is not [hz, ms]")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return {"tunes": {}, "error": f"sound/tunes.json: {e}"}
    return {"tunes": tunes}


class Handler(BaseHTTPRequestHandler):
    session = None
    quiet = True

    def log_message(self, fmt, *args):
        if not self.quiet:
            sys.stderr.write("serve: " + fmt % args + "\n")

    def _send(self, code, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass            # the page went away (closed while its poll waited)

    def _json(self, obj, code=200):
        self._send(code, json.dumps(obj, separators=(",", ":")))

    def do_GET(self):
        u = urlparse(self.path)
        if u.path in ("/", "/index.html"):
            with open(os.path.join(WEB, "play.html"), "rb") as f:
                return self._send(200, f.read(), "text/html; charset=utf-8")
        if u.path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        if u.path == "/board.js":
            with open(os.path.join(WEB, "board.js"), "rb") as f:
                return self._send(200, f.read(), "text/javascript; charset=utf-8")
        if u.path == "/api/board":
            p = physics.PARAMS
            return self._json({"board": board_description(self.session.board),
                               "decel": p.decel, "max_speed": min(p.max_speed, FLICK_MAX),
                               "jump_speed": p.jump_speed, "buttons": list(BUTTONS),
                               "games": _games.as_json(), "chips": list(CHIPS)})
        if u.path == "/api/tunes":
            return self._json(load_tunes())
        if u.path == "/api/state":
            q = parse_qs(u.query)
            frame = int(q["frame"][0]) if "frame" in q and q["frame"][0].lstrip("-").isdigit() else None
            ev = int(q["ev"][0]) if "ev" in q and q["ev"][0].isdigit() else 0
            epoch = int(q["epoch"][0]) if "epoch" in q and q["epoch"][0].isdigit() else None
            since = int(q["since"][0]) if "since" in q and q["since"][0].isdigit() else None
            return self._json(self.session.snapshot(frame, ev, epoch, since))
        self._send(404, "not found", "text/plain")

    def do_POST(self):
        u = urlparse(self.path)
        if u.path != "/api/action":
            return self._send(404, "not found", "text/plain")
        n = int(self.headers.get("Content-Length") or 0)
        try:
            a = json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            return self._json({"ok": False, "error": "bad JSON"}, 400)
        err = self.session.act(a)
        self._json({"ok": err is None, "error": err})


def make_server(port=8000, rt="micropython", speed=1.0, host="127.0.0.1"):
    """(server, session): a server bound to host:port (0 picks a free port), not yet serving."""
    session = Session(rt, speed)

    class H(Handler):
        pass
    H.session = session
    srv = ThreadingHTTPServer((host, port), H)
    srv.daemon_threads = True
    return srv, session


def serve(port=8000, rt="micropython", speed=1.0, quiet=True):
    srv, session = make_server(port, rt, speed)
    Handler.quiet = quiet
    url = f"http://127.0.0.1:{srv.server_address[1]}/"
    print(f"Zenn scoreboard simulator ({rt}) on {url}  (Ctrl-C stops it)", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
        session.close()
    return 0
