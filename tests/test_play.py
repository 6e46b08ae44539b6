"""The play page (boardsim/serve.py, boardsim/web/) driven as a person drives it, in a real
headless browser: Debian's chromium through Playwright. Skipped, saying why, when either is
missing (`make test` installs chromium when it can: `make browser`).

Also, without a browser: the page's HTTP API and the runner's interactive mode underneath it.
"""
import json
import os
import threading
import time
import urllib.request

import pytest

from boardsim import live
from boardsim.serve import make_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
SPEED = 3.0         # the table's clock runs 3x the wall clock, so a game is quick to play


@pytest.fixture(scope="module")
def server():
    srv, session = make_server(port=0, speed=SPEED)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/", session
    srv.shutdown()
    srv.server_close()
    session.close()


def _post(url, action):
    req = urllib.request.Request(url + "api/action", data=json.dumps(action).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def _get(url, path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.load(r)


def settled(url):
    """Wait until the chips rest and the scoreboard has had time to see them; the state."""
    return _until(lambda: (lambda s: s if not s["moving"] and s["still_ms"] >= 600 else None)(
        _get(url, "api/state")), what="the chips to settle")


def _until(pred, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# =============================================================================================
# the runner's interactive mode
# =============================================================================================

@pytest.mark.parametrize("rt", ["micropython", "cpython"])
def test_interactive_mode_keeps_stdout_for_events_and_time_for_waits(rt):
    t = live.Target(rt)
    try:
        st = t.send({"op": "boot"})
        assert st["t"] == 0 and st["power"] and "oled" in st and st["text"][0].strip() == "Game"
        st = t.send({"op": "put", "chip": "small", "x": 0.0, "y": 0.0})
        assert st["t"] == 0                          # no settling: time passes only by waits
        assert st["moving"]
        st = t.send({"op": "state"})
        assert "oled" not in st and st["frame"] == 1  # the OLED is sent only when it changes
        st = t.send({"op": "wait", "ms": 600})
        assert st["t"] >= 600 and not st["moving"]
        assert st["chips"][0][:4] == ["small", 1, 0, 0]
        lit = dict(zip(st["lit"][::2], st["lit"][1::2]))
        assert len(lit) >= 2 and max(lit.values()) > 300     # the pads nearest it feel it strongly
        st = t.send({"op": "press", "button": "next"})
        assert "oled" in st and "Trap Zenn 1" in "\n".join(st["text"])
        st = t.send({"op": "power", "state": "cut"})
        assert not st["power"]
    finally:
        t.close()
    events = t.wait_events(1)
    assert events == [{"ev": "boot", "reset": "power", "calib": "missing"}]  # stdout: nothing but event lines
    assert not [ln for ln in t.tail if ln.startswith("{")]


# =============================================================================================
# the HTTP API (no browser needed)
# =============================================================================================

def test_api_plays_a_game_and_explains_refusals(server):
    url, session = server
    b = _get(url, "api/board")
    assert len(b["board"]["pads"]) == 702 and b["max_speed"] == 5000
    assert _post(url, {"new": {"game": "bowling", "players": 1}}) == {"ok": True, "error": None}
    st = _get(url, "api/state")
    assert "Frame 1" in "\n".join(st["text"]) and st["game"]["game"] == "bowling"
    r = _post(url, {"place": {"big1": {"x": 0, "y": -340}}})
    assert not r["ok"] and "cup a" in r["error"]
    assert _post(url, {"place": {"small": {"x": 0, "y": -291}}})["ok"]
    settled(url)
    assert not _post(url, {"shoot": "small", "path": ["b.cup"]})["ok"]
    assert "unknown button" in _post(url, {"press": "start"})["error"]
    assert _post(url, {"flick": "small", "v": [0, 1700]})["ok"]
    # a flick under way: hands off the board until it rests
    assert "wait until" in (_post(url, {"take": "small"})["error"] or "")
    st = _until(lambda: (lambda s: s if any(e["ev"] == "shot" for e in s["events"]) else None)(
        _get(url, "api/state")), what="the shot event")
    shot = next(e for e in st["events"] if e["ev"] == "shot")
    assert (shot["result"], shot["pins"]) == ("strike", 10)
    assert st["chips"][0][1] == 3                   # in cup b


# =============================================================================================
# the page in a real browser
# =============================================================================================

@pytest.fixture(scope="module")
def page(server):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium, "
                    "or `make browser` as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (requirements.txt)")
    url, _session = server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1200, "height": 950})
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url)
        pg.wait_for_function("typeof view !== 'undefined' && view && document.querySelector('#tray div')")
        pg.errors = errors
        yield pg
        browser.close()


def oled_text(pg):
    return pg.inner_text("#oled-text")


def wait_text(pg, text, where="#oled-text", timeout=20000):
    pg.wait_for_function("([sel, t]) => document.querySelector(sel).innerText.includes(t)",
                         arg=[where, text], timeout=timeout)


def board_px(pg, x, y):
    bx, by = pg.evaluate("([x, y]) => view.px(x, y)", [x, y])
    box = pg.locator("#board").bounding_box()
    return box["x"] + bx, box["y"] + by


def drag_flick(pg, chip_xy, v):
    """Press on the chip and drag in the direction of v; the drag's length sets the speed
    (8 mm/s per mm, web/play.html)."""
    x0, y0 = board_px(pg, *chip_xy)
    x1, y1 = board_px(pg, chip_xy[0] + v[0] / 8.0, chip_xy[1] + v[1] / 8.0)
    pg.mouse.move(x0, y0)
    pg.mouse.down()
    pg.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    pg.mouse.move(x1, y1, steps=4)
    pg.mouse.up()


def test_a_person_picks_a_game_with_the_buttons_and_bowls_a_strike_then_scores(page, server):
    pg = page
    pg.click("#menu")                                   # the firmware's own menu, by hand
    wait_text(pg, "Zenn Bowling")
    pg.click("#btn-next")
    wait_text(pg, "Trap Zenn 1")
    for _ in range(10):                                 # on round the menu to bowling again
        pg.click("#btn-next")
        pg.wait_for_timeout(300)
        if "Zenn Bowling" in oled_text(pg):
            break
    wait_text(pg, "Zenn Bowling")
    pg.click("#btn-ok")                                 # game
    wait_text(pg, "Players")
    pg.click("#btn-ok")                                 # 1 player
    pg.click("#btn-ok")                                 # from end a
    wait_text(pg, "Frame 1")
    assert "P1" in oled_text(pg)

    # the canvas shows the model's pixels exactly
    st = _get(server[0], "api/state")
    frame = _get(server[0], "api/state?frame=-1")["oled"]
    lit = pg.evaluate("""() => { const c = document.getElementById('oled'), g = c.getContext('2d');
        const d = g.getImageData(0, 0, c.width, c.height).data, out = [];
        for (let y = 0; y < 64; y++) for (let x = 0; x < 128; x++) {
            const i = ((y * 3 + 1) * c.width + x * 3 + 1) * 4; out.push(d[i + 2] > 128 ? 1 : 0); }
        return out; }""")
    fb = bytes.fromhex(frame)
    want = [(fb[(y // 8) * 128 + x] >> (y % 8)) & 1 for y in range(64) for x in range(128)]
    assert st["power"] and lit == want

    # put the small chip into the shooter's pocket: pick it from the tray, click the spot
    pg.click("#put-small")
    pg.mouse.click(*board_px(pg, 0.0, -291.0))
    wait_text(pg, "small: on the board", "#tray")
    settled(server[0])

    # drag a flick straight up the board: a Zenn, strike
    drag_flick(pg, (0.0, -291.0), (0.0, 1700.0))
    wait_text(pg, "strike", "#events")
    wait_text(pg, "small: in cup b", "#tray")
    wait_text(pg, "X")

    # frame 2: pick it up, into the pocket again, 8 pins in b's E strip, then off the side
    pg.click("#take-small")
    wait_text(pg, "small: in hand", "#tray")
    settled(server[0])
    pg.click("#put-small")
    pg.mouse.click(*board_px(pg, 0.0, -291.0))
    wait_text(pg, "small: on the board", "#tray")
    settled(server[0])
    drag_flick(pg, (0.0, -291.0), (150.0, 1300.0))
    wait_text(pg, "8 pins", "#events")
    pos = settled(server[0])["chips"][0]
    drag_flick(pg, (pos[2] / 10.0, pos[3] / 10.0), (3000.0, 200.0))
    wait_text(pg, "no_basket", "#events")
    wait_text(pg, "26")                                 # the score: 10 + 8, then 8
    assert "small: off the board" in pg.inner_text("#tray")

    # a spot where no chip can lie is refused, with the reason
    pg.click("#put-big1")
    pg.mouse.click(*board_px(pg, 0.0, 340.0))
    wait_text(pg, "cup b", "#status")
    assert not pg.errors


def test_a_person_starts_a_trap_game_from_the_form_and_cuts_the_power(page):
    pg = page
    pg.select_option("#game", "trap1")
    pg.select_option("#trapper", "1")
    pg.click("#new-game")
    wait_text(pg, "trap1", "#events")
    pg.click("#power")
    pg.wait_for_function("document.getElementById('clock').innerText.includes('power off')")
    assert pg.inner_text("#oled-text").strip() == ""
    pg.click("#power")
    pg.wait_for_function("!document.getElementById('clock').innerText.includes('power off')")
    wait_text(pg, "Trap")                               # it boots and goes on with the game
    assert len(pg.locator("#events .event[data-ev=boot]").all()) == 2
    assert not pg.errors
