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

from boardsim import live
from boardsim.draw import Painter, board_description

WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web")
EVERY_MS = 50


def describe_event(e):
    """One line for an event (as web/board.js's describeEvent)."""
    if e.get("ev") == "shot" and e.get("role"):     # trap games
        s = f"P{e.get('player')} {e['role']}, {e.get('chip')} chip: {e.get('result')}"
        if e.get("small"):
            s += f", small chip {e['small']}"
        if "shots" in e:
            s += f", shots {e['shots']}"
        if e.get("foul"):
            s += f", foul {e['foul']}"
        return s
    if e.get("ev") == "shot":
        s = f"P{e.get('player')} {e.get('result', 'shot')}"
        if "pins" in e:
            s += f" {e['pins']} pins"
        if e.get("zone"):
            s += f" ({e['zone']})"
        if e.get("frame"):
            s += f", frame {e['frame']} ball {e.get('ball')}"
        if "total" in e:
            s += f", total {e['total']}"
        return s
    if e.get("ev") == "game_over":
        if e.get("game") == "bowling":
            return "game over: " + ", ".join(f"P{i + 1} {p['total']}" for i, p in enumerate(e["players"]))
        return f"game over: winner P{e.get('winner')}" + (f" ({e['reason']})" if e.get("reason") else "")
    if e.get("ev") == "game":
        n = e.get("players")
        return f"game: {e.get('game')}" + (f", {n} player{'s' if n > 1 else ''}" if n else "")
    return json.dumps(e, separators=(",", ":"))


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
        caption = "\n".join(describe_event(e) for e in events[max(0, n - 3):n] if e.get("ev") != "boot")
        key = (json.dumps(st.get("chips")), json.dumps(st.get("lit")), st.get("frame"), caption,
               st.get("power"))
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
    data = {"board": desc or board_description(), "frames": frames, "events": events}
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
