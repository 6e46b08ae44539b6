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
CHROMIUM = "/usr/bin/chromium"
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
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}: the page was not opened")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run"])
        pg = b.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(out.as_uri())
        pg.select_option("#speed", "4")
        pg.wait_for_function("document.getElementById('log').innerText.includes('strike')")
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
