"""python -m boardsim render FILE.json OUT.gif|OUT.html: a replay of a scenario for bug reports
and the README. The scenario is played through the real firmware (boardsim/target/live.py,
recording mode) and sampled every EVERY ms of virtual time: where the chips are, which pads
feel them, the OLED as the panel shows it, the firmware's events.

- .gif (Pillow): the board with chips and lit pads, the OLED beside it, the last event under
  it. Frames that look the same are merged, so a replay plays in real time (or --speed x).
- .html: one self-contained page (no network): the same picture drawn by web/board.js, with
  play / pause, speed and a time slider, and the event log.
"""
import html
import json
import os

from boardsim import games as _games
from boardsim import live
from boardsim.draw import Painter, board_description

WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web")
EVERY_MS = 50


# the events in words: the same words as web/board.js's describeEvent (tests/test_play.py
# holds the two together)
SECTION = {"back4": "4-point section", "cup3": "3-point section by the cup", "pocket": "pocket",
           "zline": "Zenn line", "z3": "Z strip", "e2": "E strip", "n2": "inner N strip",
           "n3": "outer N strip", "cup": "cup"}
TRAP_RESULT = {
    "trapped_stuck": "Trapped! The small chip did not get out of the backcourt",
    "trapped_hit": "Trapped! The small chip hit a big chip in its backcourt",
    "trapped_off": "Trapped! The small chip left the board from the backcourt",
    "trapped_basket": "Trapped! The fugitive sank the small chip",
    "out_of_shots": "15 shots used: the fugitive got away",
    "trapper_sank_small": "The trapper sank the small chip",
    "escaped": "Escaped from the backcourt",
    "penalty": "A big chip sank the small chip: 5 penalty shots",
}
SMALL_AT = {"field": "in the field", "a.backcourt": "in backcourt a", "b.backcourt": "in backcourt b",
            "cup": "in a cup", "off": "off the board", "none": "not on the board"}
FOULS = {"same_chip": "foul: the same big chip twice in a turn (it counts as a shot)",
         "out_of_turn": "foul: shot out of turn", "no_shots_left": "foul: no shots left (it does not count)"}
PROMPTS = {"setup": "set up the chips", "small_to_center": "put the small chip in the center circle",
           "big_to_center": "put the big chip in the center circle",
           "both_to_center": "put both chips in the center circle"}
REFUSED = {"moving": "wait until the chips stop", "nothing": "nothing to take back", "not_now": "not now",
           "not_here": "not used here"}
PAD_FAULT = {"pad_stuck": "is stuck", "pad_dead": "is dead", "pad_off": "is blind", "pad_flicker": "flickers",
             "mux_dead": "is dead"}
CHIP_FAULT = {"too_many": "Too many chips on the board", "two_small": "Two small chips on the board",
              "big_chip": "A big chip on the board (this game uses only the small chip)"}
JOURNAL_FAULT = {"foreign": "a foreign journal file", "damaged": "the journal is damaged",
                 "refused": "a journal entry the rules refuse", "io": "a flash write failed: not saved",
                 "full": "the journal is full: not saved"}


def zone_words(z):
    if not z:
        return ""
    if z == "center":
        return "the center circle"
    if z == "off":
        return "off the board"
    end, _, key = z.partition(".")
    if key == "cup":
        return f"cup {end}"
    return f"end {end}'s {SECTION.get(key, key)}"


def _plural(n, one, many=None):
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _js(v):
    # a value as JavaScript's template strings write it
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, list):
        return " ".join(_js(x) for x in v)
    if isinstance(v, dict):
        return _fields(v)
    return str(v)


def _fields(e):
    return ", ".join(f"{k.replace('_', ' ')} {_js(v)}" for k, v in e.items() if k != "ev")


BEST_FAULT = {"io": "the flash could not be read or written: not saved"}


def _title(name):
    # the game's title from the firmware's registry (boardsim/games.py), as board.js's title()
    return _games.title(_js(name))


def _best_games(e):
    # the best games (firmware/storage/best.py): the new ones this game made, then both tables
    table = "the best bowling scores" if e.get("game") == "bowling" else "the quickest traps"
    news = ", ".join(f"P{_js(n.get('player'))} is no. {_js(n.get('rank'))}" for n in e.get("new") or [])
    bowl = ", ".join(f"{_js(r.get('rank'))}. {_js(r.get('score'))} by P{_js(r.get('player'))} (game {_js(r.get('game'))})"
                     for r in e.get("bowling") or [])
    trap = ", ".join(f"{_js(r.get('rank'))}. {_plural(r.get('shots'), 'shot')} by P{_js(r.get('player'))} "
                     f"({_title(r.get('variant'))}, game {_js(r.get('game'))})"
                     for r in e.get("trap") or [])
    head = f"New best! {news} in {table}. " if news else ("No new best. " if e.get("game") else "")
    return f"{head}Best bowling: {bowl or 'none yet'}; quickest traps: {trap or 'none yet'}"


def _bowling_result(e):
    r = e.get("result")
    z = f" ({zone_words(e['zone'])})" if e.get("zone") else ""
    if r == "strike":
        return "Strike! (a Zenn)"
    if r == "spare":
        return "Split! A spare off a bank shot" if e.get("split") else "Spare! (a Zenn)"
    if r == "sink9":
        return "sunk without a Zenn: 9 pins" if e.get("pins") == 9 else "sunk without a Zenn: the frame counts 9"
    if r == "pins":
        return _plural(e.get("pins"), "pin") + z
    if r == "gutter":
        return "gutter ball: no pins" + z
    if r == "no_basket":
        return "no basket: no more pins" + z
    return f"{_js(r)}"


def describe_event(e):
    """One line in words for an event (as web/board.js's describeEvent)."""
    ev = e.get("ev")
    P = f"P{_js(e.get('player'))}"
    if ev == "boot":
        s = "The scoreboard restarted (its watchdog)" if e.get("reset") == "watchdog" else "The scoreboard is on"
        c = e.get("calib")
        if c == "loaded":
            s += "; pads calibrated"
        elif c == "damaged":
            s += "; calibration damaged, running on defaults"
        elif c == "missing":
            s += "; pads not calibrated (defaults)"
        return s
    if ev == "game":        # what its start pages asked (its registry line's SETUP)
        if "trapper" in e:
            return (f"New game: {_title(e.get('game'))}, P{_js(e.get('trapper'))} traps first"
                    + (" (coin flip)" if e.get("coin") else ""))
        return (f"New game: {_title(e.get('game'))}, {_plural(e.get('players'), 'player')}"
                + (f", shooting from end {_js(e['shooter_end'])}" if "shooter_end" in e else ""))
    if ev == "coin":
        return f"Coin flip: P{_js(e.get('winner'))} won"
    if ev == "restored":
        how = "a watchdog restart" if e.get("reset") == "watchdog" else "a power cut"
        return (f"Game restored after {how}: {_title(e.get('game'))}, "
                f"{_plural(e.get('entries'), 'entry', 'entries')} played back"
                + (" (the last write was torn)" if e.get("torn") else ""))
    if ev == "shot":
        if e.get("role"):
            if e["role"] == "trapper":
                s = f"{P} (trapper) shot a big chip" + (f" (no. {e['slot'] + 1})" if "slot" in e else "")
            else:
                s = f"{P} (fugitive) shot the small chip" + (" to escape" if e.get("escape") else "")
            s += f": small chip {SMALL_AT.get(e.get('small'), _js(e.get('small')))}"
            if e.get("result") in TRAP_RESULT:
                s += f". {TRAP_RESULT[e['result']]}"
            if "round" in e:
                s += (f". Round {_js(e.get('round'))}: {_plural(e.get('shots'), 'trapper shot')}"
                      + (f" + {e['penalty']} penalty" if e.get("penalty") else ""))
            else:
                s += f". {_plural(e.get('shots'), 'trapper shot')} of {_js(e.get('shots', 0) + e.get('left', 0))}"
            if e.get("foul"):
                s += f"; {FOULS.get(e['foul'], e['foul'])}"
            if e.get("prompt") in PROMPTS:
                s += f"; next: {PROMPTS[e['prompt']]}"
        elif "frame" in e:
            s = f"{P}, frame {_js(e.get('frame'))}, ball {_js(e.get('ball'))}: {_bowling_result(e)}"
            if e.get("manual"):
                s += ", set by hand"
        else:
            s = f"{P} shot: {_fields({k: v for k, v in e.items() if k not in ('player', 'game')})}"
        if e.get("sure") is False:
            s += " (the pads were unsure: check the chips)"
        return s
    if ev == "undo":
        if "frame" not in e and not e.get("role"):
            return f"Shot taken back: {P} plays again"
        if e.get("role"):
            return f"Shot taken back: {P} ({e['role']}) plays again, {_plural(e.get('shots'), 'trapper shot')} so far"
        return (f"Shot taken back: {P} plays frame {_js(e.get('frame'))}, ball {_js(e.get('ball'))} again"
                + (f": put the chip back in {zone_words(e['put_back'])}" if e.get("put_back") else ""))
    if ev == "turn":
        if e.get("role") == "fugitive":
            return f"{P}'s turn: the fugitive" + (", an escape shot" if e.get("escape") else "")
        return f"{P}'s turn: the trapper, {_plural(e.get('shots'), 'shot')} so far"
    if ev == "round":
        return f"Round {_js(e.get('round'))}: P{_js(e.get('trapper'))} traps"
    if ev == "setup":
        if e.get("ok"):
            return "Set-up seen: three big chips on the Zenn line, the small chip in the center: shoot"
        return "Set up: three big chips on the trapper's Zenn line, the small chip in the center circle"
    if ev == "refused":
        return f"{_js(e.get('button'))} refused: {REFUSED.get(e.get('why'), _js(e.get('why')))}"
    if ev == "game_over":
        if isinstance(e.get("players"), list):
            ps = e.get("players", [])
            t = ", ".join(f"P{i + 1} {p['total']}" for i, p in enumerate(ps))
            if len(ps) < 2:
                return f"Game over: {t}"
            best = max(p["total"] for p in ps)
            w = [f"P{i + 1}" for i, p in enumerate(ps) if p["total"] == best]
            return f"Game over: {t}. " + (f"A tie ({', '.join(w)})" if len(w) > 1 else f"{w[0]} wins")
        if "reason" in e:
            return (f"Game over: P{_js(e.get('winner'))} wins. "
                    + TRAP_RESULT.get(e.get("reason"), _js(e.get("reason")))
                    + f" (P{_js(e.get('trapper'))} trapped, {_plural(e.get('shots'), 'shot')})")
        if not e.get("rounds"):
            return f"Game over: {_fields({k: v for k, v in e.items() if k != 'game'})}"
        rs = ", ".join(f"round {i + 1}: P{r['trapper']} {_plural(r['shots'] + r['penalty'], 'shot')}"
                       + (f" ({r['penalty']} penalty)" if r["penalty"] else "")
                       for i, r in enumerate(e.get("rounds") or []))
        who = f"P{e['winner']} wins" if e.get("winner") else "a tie"
        return f"Game over: {who}; {rs}"
    if ev == "fault":
        on = e.get("on") is not False
        what = e.get("what")
        if what == "button":
            b = _js(e.get("button"))
            return f"The {b} button is stuck down" if on else f"The {b} button is free again"
        if what == "chips":
            return CHIP_FAULT.get(e.get("why"), _js(e.get("why"))) + ("" if on else ": cleared")
        if what == "pads" and e.get("code") == "hand":
            return "A hand hovers over the pads" if on else "The hand has gone"
        if what == "pads":
            where = (f"Multiplexer {_js(e.get('mux'))}" if e.get("code") == "mux_dead"
                     else f"Pad {','.join(str(x) for x in (e.get('pad') or []))}")
            return f"{where} {PAD_FAULT.get(e.get('code'), _js(e.get('code')))}: left out of the fits"
        if what == "cup":
            return f"The beam of cup {_js(e.get('cup'))} chatters"
        if what == "journal":
            return (f"Journal: {JOURNAL_FAULT.get(e.get('why'), _js(e.get('why')))}"
                    + (f" ({e['file']})" if e.get("file") else ""))
        if what == "best":
            if e.get("why") == "damaged":
                return f"Best games: {_plural(e.get('records'), 'damaged record')} left out"
            return f"Best games: {BEST_FAULT.get(e.get('why'), _js(e.get('why')))}"
        if what == "config":
            return f"config.json: {e.get('key') or 'the file'}: {_js(e.get('msg'))}"
        return f"Fault: {_fields(e)}"
    if ev == "best":
        return _best_games(e)
    if ev == "calib":
        step = {"empty": "empty board", "small": "small chip", "big": "big chip", "save": "saved"}.get(
            e.get("step"), _js(e.get("step")))
        return (f"Calibration, {step}" + (": failed" if e.get("ok") is False else "")
                + (f": {_js(e['value'])}" if "value" in e else "")
                + (f": {_plural(e['bad'], 'bad pad')}" if "bad" in e else ""))
    return f"{(ev or 'event').replace('_', ' ')}: {_fields(e)}"


def passes_turn(shot):
    """Trap Zenn: does this shot pass the turn (the turn line after it is then its own)? The
    fugitive has one shot a turn, the trapper three (Trap Zenn 1: fifteen in all). A turn line
    no shot passed is a turn ended by the button, an entry undo takes back as it takes a shot
    (web/board.js passesTurn)."""
    return bool(shot) and (shot.get("role") == "fugitive" or shot.get("turn_shot", 0) >= 3
                           or shot.get("left") == 0)


def entry_kinds(events):
    """Per event: "entry" (a shot, or a turn ended by the button: what undo takes back),
    "undo", "game" or None."""
    out, last_shot, prev = [], None, None
    for e in events:
        ev = e.get("ev")
        k = None
        if ev == "game":
            k = "game"
        elif ev == "shot":
            k = "entry"
            last_shot = e
        elif ev == "undo":
            k = "undo"
        elif ev == "turn" and prev != "game" and not (prev in ("shot", "round") and passes_turn(last_shot)):
            k = "entry"
        out.append(k)
        prev = ev
    return out


def log_entries(events):
    """[(text, undone)] for the events in order: each in words, the entries an undo took back
    marked (as web/board.js's logEntries)."""
    out, stack = [], []
    for e, k in zip(events, entry_kinds(events)):
        d = [describe_event(e), False]
        if k == "game":
            stack = []
        elif k == "entry":
            stack.append(d)
        elif k == "undo" and stack:
            stack.pop()[1] = True
        out.append(d)
    return [tuple(d) for d in out]


def record_scenario(path, rt="micropython", every_ms=EVERY_MS):
    from boardsim.compile import compile_scenario
    from boardsim.scenario import load
    return live.record(compile_scenario(load(path)), rt, every_ms)


def render_gif(frames, events, out, speed=1.0, desc=None):
    """Write the replay as an animated GIF. Returns the number of GIF frames."""
    painter = Painter(desc or board_description())
    images, durations = [], []
    oled = None
    last_key = None
    prev_t = None
    for st in frames:
        if "oled" in st:
            oled = st["oled"]
        n = st.get("ev", 0)
        painter.track(st)
        lines = [("(taken back) " if undone else "") + text
                 for (text, undone), e in zip(log_entries(events[:n]), events[:n]) if e.get("ev") != "boot"]
        caption = "\n".join(lines[-3:])
        key = (json.dumps(st.get("chips")), json.dumps(st.get("lit")), st.get("frame"), caption,
               st.get("power"), json.dumps(painter.trails))
        dt = 0 if prev_t is None else st["t"] - prev_t
        prev_t = st["t"]
        if durations:
            durations[-1] += dt
        if key == last_key:
            continue
        last_key = key
        images.append(painter.frame(st, oled, caption))
        durations.append(0)
    if not images:
        raise ValueError("nothing was recorded")
    durations[-1] += 2000       # hold the last picture
    durations = [max(20, int(round(d / speed / 10.0)) * 10) for d in durations]
    # one palette for every frame, so that a frame differs from the one before only where
    # something changed (Pillow then stores just that rectangle)
    pal = painter.palette_image()
    images = [im.quantize(palette=pal, dither=0) for im in images]
    images[0].save(out, save_all=True, append_images=images[1:], duration=durations, loop=0,
                   optimize=False, disposal=1)
    return len(images)


def render_html(frames, events, out, title="Zenn scoreboard replay", desc=None):
    with open(os.path.join(WEB, "board.js"), encoding="utf-8") as f:
        board_js = f.read()
    with open(os.path.join(WEB, "replay.html"), encoding="utf-8") as f:
        page = f.read()
    data = {"board": desc or board_description(), "frames": frames, "events": events,
            "games": _games.as_json()}
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    page = (page.replace("/*BOARD_JS*/", board_js.replace("</", "<\\/"))
                .replace("/*DATA*/null", blob)
                .replace("{{TITLE}}", html.escape(title)))
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)


def render(path, out, rt="micropython", every_ms=EVERY_MS, speed=1.0):
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".gif", ".html", ".htm"):
        raise ValueError(f"unknown output type {ext or out!r} (.gif or .html)")
    frames, events = record_scenario(path, rt, every_ms)
    if ext == ".gif":
        render_gif(frames, events, out, speed)
    elif ext in (".html", ".htm"):
        render_html(frames, events, out, title=f"Replay of {os.path.basename(path)}")
    return frames, events
