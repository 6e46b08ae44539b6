"""The scoreboard's key screens, played through the real firmware in the simulator (both
displays on), as pictures.

    python -m tools.screens            rewrite tests/golden/screen_*.png and docs/screens/*.png
    python -m tools.screens --check    exit 1 when a picture differs from what the firmware shows

tests/golden/screen_NAME.png is the OLED pixel for pixel (128 x 64, 1 bit): tests/test_screens.py
compares the simulator's panel with it. docs/screens/NAME.png is the same picture four times
larger for reading, docs/screens/NAME_7seg.png the seven-segment rows at that moment;
docs/screens.md shows them.

One firmware run per game (RUNS): the menu is caught right after boot, the other screens at
checkpoints of a scripted game.
"""
import argparse
import os
import sys

from PIL import Image, ImageDraw

from boardsim.geometry import ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden")
DOCS = os.path.join(ROOT, "docs", "screens")
SCALE = 4
CONFIG = {"display": "both", "sevenseg_modules": 3}


# -- the games -------------------------------------------------------------------------------
def _frame(t, *balls):
    """One bowling frame from end a at end b (as tests/test_games_bowling.py plays them)."""
    t.place("small", "a.pocket")
    for i, path in enumerate(balls):
        t.shoot("small", *path)
        if i == len(balls) - 1:
            break
        if path[-1] == "b.cup":
            t.take("small")
            zenn = len(path) > 1 and path[-2] == "b.pocket"
            t.place("small", "a.pocket" if zenn else "b.pocket")
    t.take("small")


STRIKE = ["b.pocket", "b.cup"]
HELD_MS = 3000      # a shot's result stays this long (firmware/scoreboard/app.py, Scoreboard.RESULT_MS)


def bowling():
    from boardsim.testing import Table
    t = Table("bowling", players=2)
    t.place("small", "a.pocket").shoot("small", *STRIKE)     # P1 X
    t.checkpoint("bowling_strike")                  # held on P1's sheet before P2's (RESULT_MS)
    t.take("small")
    _frame(t, ["b.e2"], STRIKE)                     # P2 8/
    _frame(t, ["b.cup"], STRIKE)                    # P1 9/ (sink without a Zenn, then Zenn)
    _frame(t, ["b.e2"], ["b.z3"])                   # P2 8- (no basket)
    t.place("small", "a.pocket").shoot("small", "b.n2")
    t.advance_time_and_run(HELD_MS)                 # past the ball's result
    t.checkpoint("bowling_mid")                     # P1, frame 3, second ball to come
    t.shoot("small", {"hit": "side"}, "b.pocket", "b.cup")   # a split spare
    t.take("small")
    _frame(t, STRIKE)                               # P2
    for _ in range(6):                              # frames 4 to 9: strikes for both
        _frame(t, STRIKE)
        _frame(t, STRIKE)
    _frame(t, STRIKE, STRIKE, STRIKE)               # P1 tenth: XXX
    _frame(t, ["b.e2"], STRIKE, STRIKE)             # P2 tenth: 8/X
    t.advance_time_and_run(HELD_MS)
    t.checkpoint("bowling_over")
    return t


def _trap_setup(t, trapper=1):
    end = "a" if trapper == 1 else "b"
    t.place_all({"big1": f"{end}.zline", "big2": f"{end}.zline", "big3": f"{end}.zline",
                 "small": "center"})


def trap1():
    from boardsim.testing import Table
    t = Table("trap1", players=2, trapper=1)
    _trap_setup(t)
    t.checkpoint("trap_setup")
    t.shoot("big1", "a.n3")
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.checkpoint("trap_escape")
    t.shoot("small", "b.cup3")
    t.checkpoint("trap_trapped")                    # the shot's result, held
    t.advance_time_and_run(HELD_MS)
    t.checkpoint("trap_over")
    return t


def trap2():
    from boardsim.testing import Table
    t = Table("trap2", players=2, trapper=1)
    _trap_setup(t, 1)
    t.shoot("big1", "a.n3", knocks={"small": ["b.cup"]})     # penalty: +5
    t.take("small").place("small", "center")
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                               # round 1: 2 shots + 5
    for c in ("big1", "big2", "big3", "small"):
        t.take(c)
    _trap_setup(t, 2)
    for k, big in enumerate(("big1", "big2", "big3")):
        t.shoot(big, ("b.n3", "b.z3", "b.n2")[k])
    t.shoot("small", "a.n3")
    t.checkpoint("trap2_round2")
    t.shoot("big1", "a.z3", knocks={"small": ["a.back4"]})
    t.press("turn")
    t.shoot("small", "a.cup3")                               # round 2: 4 shots
    t.advance_time_and_run(HELD_MS)
    t.checkpoint("trap2_over")
    return t


RUNS = {"bowling": bowling, "trap1": trap1, "trap2": trap2}
# every screen, in the order docs/screens.md shows them
SCREENS = ("menu", "bowling_strike", "bowling_mid", "bowling_over", "trap_setup", "trap_escape",
           "trap_trapped", "trap_over", "trap2_round2", "trap2_over")
RUN_OF = {"menu": "bowling", "bowling_strike": "bowling", "bowling_mid": "bowling",
          "bowling_over": "bowling",
          "trap_setup": "trap1", "trap_escape": "trap1", "trap_trapped": "trap1", "trap_over": "trap1",
          "trap2_round2": "trap2", "trap2_over": "trap2"}


def play(run, runtime="micropython"):
    """Play one run; returns {screen: snapshot} (snapshot: display, frame, seg, ...) and the
    events."""
    import io
    import json
    import tempfile
    from boardsim import runtime as rt
    t = RUNS[run]()
    t.runtime = runtime
    timeline = t.timeline()
    if run == "bowling":                            # the menu, as the firmware boots into it
        timeline.insert(1, {"op": "wait", "ms": 100})
        timeline.insert(2, {"op": "snapshot", "label": "menu"})
    fd, final = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    fd, cfg = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(CONFIG, f)
    out = io.StringIO()
    try:
        rt.run(timeline, runtime, stdout=out, runner_args=["--final", final, "--config", cfg])
        with open(final) as f:
            state = json.load(f)
    finally:
        os.unlink(final)
        os.unlink(cfg)
    snaps = {s["label"]: s for s in state["snapshots"]}
    events = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.strip()]
    return snaps, events


# -- pictures ---------------------------------------------------------------------------------
def oled_image(frame_hex):
    """The panel (1024 bytes in the SSD1306's page format, as hex) as a 1-bit 128 x 64 image."""
    f = bytes.fromhex(frame_hex)
    img = Image.new("1", (128, 64))
    px = img.load()
    for y in range(64):
        for x in range(128):
            px[x, y] = 255 if (f[(y >> 3) * 128 + x] >> (y & 7)) & 1 else 0
    return img


def oled_docs_image(img):
    """The panel for reading: four times larger, light blue-white on black, a thin bezel."""
    big = img.convert("L").resize((128 * SCALE, 64 * SCALE), Image.NEAREST)
    on = (200, 230, 255)
    out = Image.new("RGB", (128 * SCALE + 16, 64 * SCALE + 16), (40, 40, 40))
    panel = Image.new("RGB", big.size, (0, 0, 0))
    panel.paste(on, mask=big)
    out.paste(panel, (8, 8))
    return out


# segment polygons in a 40 x 64 cell: A B C D E F G and DP
_SEG = {
    "A": [(10, 4), (30, 4), (26, 10), (14, 10)],
    "B": [(32, 6), (32, 30), (26, 27), (26, 12)],
    "C": [(32, 34), (32, 58), (26, 52), (26, 37)],
    "D": [(10, 60), (30, 60), (26, 54), (14, 54)],
    "E": [(8, 34), (8, 58), (14, 52), (14, 37)],
    "F": [(8, 6), (8, 30), (14, 27), (14, 12)],
    "G": [(10, 32), (14, 29), (26, 29), (30, 32), (26, 35), (14, 35)],
}
_BITS = {"A": 0x40, "B": 0x20, "C": 0x10, "D": 0x08, "E": 0x04, "F": 0x02, "G": 0x01}


def seg_image(rows):
    """Seven-segment rows (max7219_model rows(): characters with '.' for a lit point) drawn as
    red digits; the segments come from the model's reading table, so the picture is what the
    chips were told to light."""
    sys.path.insert(0, os.path.join(ROOT, "boardsim", "target"))
    try:
        from max7219_model import READING
    finally:
        sys.path.pop(0)
    back = {ch: seg for seg, ch in sorted(READING.items(), reverse=True)}
    back["'"] = 0x02
    w, h = 40, 64
    img = Image.new("RGB", (8 * w + 16, len(rows) * (h + 8) + 8), (20, 10, 10))
    d = ImageDraw.Draw(img)
    for r, text in enumerate(rows):
        cells = []
        for ch in text:
            if ch == "." and cells:
                cells[-1] |= 0x80
            else:
                cells.append(back.get(ch, 0))
        for c in range(8):
            v = cells[c] if c < len(cells) else 0
            ox, oy = 8 + c * w, 8 + r * (h + 8)
            for name, poly in _SEG.items():
                lit = v & _BITS[name]
                d.polygon([(ox + x, oy + y) for x, y in poly],
                          fill=(255, 40, 30) if lit else (50, 22, 20))
            d.ellipse([ox + 33, oy + 56, ox + 38, oy + 61],
                      fill=(255, 40, 30) if v & 0x80 else (50, 22, 20))
    return img


def same_pixels(a, b):
    return a.size == b.size and a.mode == b.mode and a.tobytes() == b.tobytes()


def pictures(snaps):
    """{path: image} for every screen in snaps."""
    out = {}
    for name, s in snaps.items():
        if name not in SCREENS:
            continue
        img = oled_image(s["frame"])
        out[os.path.join(GOLDEN, f"screen_{name}.png")] = img
        out[os.path.join(DOCS, f"{name}.png")] = oled_docs_image(img)
        out[os.path.join(DOCS, f"{name}_7seg.png")] = seg_image(s["seg"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    os.makedirs(GOLDEN, exist_ok=True)
    os.makedirs(DOCS, exist_ok=True)
    stale = []
    for run in RUNS:
        snaps, _ = play(run)
        for path, img in pictures(snaps).items():
            if a.check:
                if not os.path.exists(path) or not same_pixels(Image.open(path), img):
                    stale.append(path)
            else:
                img.save(path, optimize=True)
                print("wrote", os.path.relpath(path, ROOT))
    if stale:
        print("stale:", *[os.path.relpath(p, ROOT) for p in stale], sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
