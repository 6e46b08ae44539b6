"""python -m boardsim render: replays as GIF (Pillow) and self-contained HTML, recorded from the
real firmware; the recording plays the same game as `boardsim run` (same event lines)."""
import io
import math
import json
import os
import subprocess
import sys

import pytest
from PIL import Image

from boardsim import render, runtime
from boardsim.compile import compile_scenario
from boardsim.draw import MARGIN, OLED_PX, Painter, board_description
from boardsim.scenario import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = {"game": "bowling", "players": 1, "steps": [
    {"place": {"small": "a.pocket"}},
    {"flick": "small", "v": [0, 1700]},
    {"take": "small"},
    {"place": {"small": "a.pocket", "big1": "b.e2"}},
]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("render")
    path = d / "s.json"
    path.write_text(json.dumps(SCENARIO))
    frames, events = render.record_scenario(str(path), "micropython", 50)
    return d, path, frames, events


def test_the_recording_is_the_same_game_as_run(recorded):
    _d, _path, frames, events = recorded
    out = io.StringIO()
    runtime.run(compile_scenario(parse(SCENARIO)), "micropython", stdout=out)
    assert events == [json.loads(ln) for ln in out.getvalue().splitlines()]
    assert [e["result"] for e in events if e["ev"] == "shot"] == ["strike"]
    ts = [f["t"] for f in frames]
    assert ts == sorted(ts) and ts[-1] > 3000
    assert all(b - a <= 60 for a, b in zip(ts, ts[1:]))        # sampled every 50 ms (+ a step)
    assert "oled" in frames[0]
    assert frames[-1]["ev"] == len(events)
    # the small chip sinks into cup b on the way, the big one lies in b's E strip at the end
    assert any(f["chips"][0][1] == 3 for f in frames)
    assert frames[-1]["chips"][1][1] == 1 and frames[-1]["lit"]


def test_gif_replay(recorded, tmp_path):
    _d, _path, frames, events = recorded
    out = tmp_path / "r.gif"
    n = render.render_gif(frames, events, str(out))
    im = Image.open(out)
    assert im.format == "GIF" and im.n_frames == n > 5
    total = 0
    for k in range(im.n_frames):
        im.seek(k)
        total += im.info["duration"]
    # real time: the recording's span plus two seconds on the last picture (10 ms GIF ticks)
    span = frames[-1]["t"] - frames[0]["t"]
    assert abs(total - (span + 2000)) <= 10 * n
    im.seek(im.n_frames - 1)
    last = im.convert("RGB")
    p = Painter(board_description())
    # the OLED shows the model's pixels: its first lit pixel in the recording is lit in the GIF
    oled = next(f["oled"] for f in reversed(frames) if "oled" in f)
    fb = bytes.fromhex(oled)
    x, y = next((x, y) for y in range(64) for x in range(128) if fb[(y // 8) * 128 + x] >> (y % 8) & 1)
    px = last.getpixel((p.bw + MARGIN + x * OLED_PX, MARGIN + y * OLED_PX))
    assert px == (0x9F, 0xE8, 0xFF)
    # the big chip (red) where the recording says it lies
    _n, _s, bx, by, _a = frames[-1]["chips"][1]
    cx, cy = p.xy(bx / 10, by / 10)
    rp = board_description()["chips"]["big1"]["r"] * p.s
    ring = [last.getpixel((int(cx + 0.8 * rp * math.cos(k * 0.5)), int(cy + 0.8 * rp * math.sin(k * 0.5))))
            for k in range(12)]
    red = [c for c in ring if c[0] > 150 and c[1] < 90 and c[2] < 90]
    assert len(red) >= 8, ring            # a few may be lit pads drawn over it


def test_html_replay_is_self_contained_and_plays(recorded, tmp_path):
    _d, _path, frames, events = recorded
    out = tmp_path / "r.html"
    render.render_html(frames, events, str(out))
    text = out.read_text()
    assert "src=\"http" not in text and "href=\"http" not in text and "<script src" not in text
    assert "ZennBoard" in text
    from browser import ARGS, CHROMIUM, missing
    if missing():
        pytest.skip(missing() + ": the page was not opened")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = b.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(out.as_uri())
        pg.select_option("#speed", "4")
        pg.wait_for_function("document.getElementById('log').innerText.includes('Strike')")
        pg.wait_for_function("parseInt(document.getElementById('pos').value) > 20")
        n = pg.evaluate("frames.length")
        b.close()
    assert n == len(frames) and not errors


def test_render_cli(recorded, tmp_path):
    _d, path, _f, _e = recorded
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "boardsim", "render", str(path), str(tmp_path / "x.txt")],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 2 and "(.gif or .html)" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"game": "bowling", "players": 1, "steps": [{"flick": "small", "v": [0, 1]}]}))
    p = subprocess.run([sys.executable, "-m", "boardsim", "render", str(bad), str(tmp_path / "x.gif")],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 2 and p.stderr.startswith("error: step 1: flick small: it is in hand")


# =============================================================================================
# issue 14: the replay's text and trails, the OLED in a terminal
# =============================================================================================

def _ink(c):
    # a caption pixel, also where a font smooths its edges (the background is #2b2622)
    return c[0] > 110 and c[1] > 90 and c[0] - c[2] > 40


def _word_gaps(img, min_gap):
    """Runs of at least min_gap empty columns between the inked pixels (one text line)."""
    w, h = img.size
    px = img.load()
    cols = [any(_ink(px[x, y]) for y in range(h)) for x in range(w)]
    xs = [x for x, c in enumerate(cols) if c]
    gaps, run = 0, 0
    for x in range(xs[0], xs[-1] + 1):
        if cols[x]:
            gaps += run >= min_gap
            run = 0
        else:
            run += 1
    return gaps


def test_gif_caption_keeps_the_spaces_between_words():
    p = Painter(board_description())
    text = "P1 pins 8 pins"
    img = p.frame({"t": 0, "chips": [], "lit": []}, None, text)
    # the caption's one line: its rows and columns in the caption's colour
    px = img.load()
    top = MARGIN + p.oh + 30        # under the OLED and the clock line
    rows = [y for y in range(top, img.size[1]) if any(_ink(px[x, y]) for x in range(p.bw, img.size[0]))]
    assert rows and rows[-1] - rows[0] < 14                 # one line
    line = img.crop((p.bw, rows[0], img.size[0], rows[-1] + 1))
    # every space shows as a gap wider than any gap inside a word
    assert _word_gaps(line, 4) == text.count(" ")


def test_gif_draws_each_chips_trail_until_it_is_picked_up():
    desc = board_description()
    p = Painter(desc)
    big = lambda x, y, state=1: ["big1", state, x, y, 1000]
    path = [(1000, -2000), (1000, -1000), (1000, 0), (1000, 1000), (1000, 2000)]
    for k, (x, y) in enumerate(path):                   # big1 slides up the board (0.1 mm)
        p.track({"t": 1000 + 20 * k, "chips": [big(x, y)]})
    img = p.frame({"t": 1100, "chips": [big(1000, 2000)], "lit": []}, None)
    red = desc["chips"]["big1"]["colour"]
    want = tuple(int(red[i:i + 2], 16) for i in (1, 3, 5))
    for y_mm in (-150, -50, 50):                        # along the way, away from the chip
        assert img.getpixel(tuple(int(v) for v in p.xy(100, y_mm))) == want
    # a chip picked up takes its trail with it
    p.track({"t": 2000, "chips": [big(0, 0, 0)]})
    img = p.frame({"t": 2000, "chips": [big(0, 0, 0)], "lit": []}, None)
    assert img.getpixel(tuple(int(v) for v in p.xy(100, -50))) != want


SMALL_SCENARIO = {"game": "bowling", "players": 1, "steps": [
    {"place": {"small": "a.pocket"}}, {"shoot": "small", "path": ["b.pocket", "b.cup"]}]}


def _display(tmp_path, columns):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SMALL_SCENARIO))
    env = dict(os.environ, COLUMNS=str(columns))
    p = subprocess.run([sys.executable, "-m", "boardsim", "run", str(path), "--display", "--runtime", "cpython"],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr
    return p.stderr.splitlines(), p.stdout


def _frames(lines):
    """[(header, [box lines])] of the OLED frames drawn on stderr."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("-- OLED at "):
            j = i + 1
            while not lines[j].startswith("\u2514"):
                j += 1
            out.append((lines[i], lines[i + 1:j + 1]))
            i = j
        i += 1
    return out


def test_display_fits_an_80_column_terminal_pixel_for_pixel(tmp_path):
    from boardsim.oled_tty import pixels_from_art, pixels_from_quad
    wide, out_wide = _display(tmp_path, 200)
    narrow, out_narrow = _display(tmp_path, 80)
    assert out_wide == out_narrow and out_wide                  # the same events on stdout
    assert max(len(ln) for ln in narrow) <= 80
    assert max(len(ln) for ln in wide) == 130                    # wide enough: as before
    fw, fn = _frames(wide), _frames(narrow)
    assert len(fw) == len(fn) > 2
    for (hw, bw), (hn, bn) in zip(fw, fn):
        assert hw == hn and len(bn) == 34 and len(bn[1]) == 66
        assert pixels_from_quad(bn[1:-1]) == pixels_from_art(bw[1:-1])
    assert any(any(r) for r in pixels_from_art(fw[-1][1][1:-1]))  # the screens are not blank


def test_display_says_how_wide_the_terminal_must_be(tmp_path):
    lines, _ = _display(tmp_path, 40)
    notes = [ln for ln in lines if "columns wide" in ln]
    assert len(notes) == 1 and "66 columns" in notes[0] and "this one has 40" in notes[0]
