"""The OLED's key screens for each game, pixel for pixel, and the seven-segment rows beside
them: the real firmware in the simulator (MicroPython, heap locked in the loop, both displays
configured) plays the scripted games of tools/screens.py; each checkpoint's panel must equal
tests/golden/screen_NAME.png, and docs/screens/ must show the same (`make screens` rewrites
them all; look at them before committing)."""
import os

import pytest
from PIL import Image

from tools import screens

SEG = {
    "menu": ["PLAy    ", "boULin9 ", "nEHt oH "],
    "bowling_strike": ["P1 F 1-1", "tot    0", "5triHE  "],
    "bowling_mid": ["P1 F 3-2", "tot   38", "5hoot   "],
    "bowling_over": ["donE P1 ", "tot  268", "bE5t P1 "],     # a new best (a fresh flash)
    "trap_setup": ["tr1. FL2 ", "5h 0 L15", "5EtUP oH"],
    "trap_escape": ["tr1 FL2. ", "5h 2 L13", "E5CAPE  "],
    "trap_trapped": ["tr1 FL2 ", "5h 2 L13", "bE5t P1 "],
    "trap_over": ["tr1 FL2 ", "5h 2 L13", "bE5t P1 "],
    "trap2_round2": ["tr2. FL1 ", "5h 3 P 0", "r2 tUrn1"],
    "trap2_over": ["tr2 FL1 ", "1.  72.  4", "bE5t P2 "],
}
OLED_TOP = {
    "menu": "        Game",
    "bowling_strike": "P1 Frame 1 Ball 1",
    "bowling_mid": "P1 Frame 3 Ball 2",
    "bowling_over": "P2 Total 244",
    "trap_setup": "Trap Zenn 1",
    "trap_escape": "Trap Zenn 1",
    "trap_trapped": "Trap Zenn 1",
    "trap_over": "Trap Zenn 1",
    "trap2_round2": "Trap Zenn 2  Round 2",
    "trap2_over": "Trap Zenn 2  Round 2",
}
GAME_OVER = {
    "bowling": lambda o: [p["total"] for p in o["players"]] == [268, 244],
    "trap1": lambda o: (o["winner"], o["shots"], o["reason"]) == (1, 2, "trapped_stuck"),
    "trap2": lambda o: o["winner"] == 2 and [r["shots"] + r["penalty"] for r in o["rounds"]] == [7, 4],
}


# what the row under the header says: a shot's result held in negative, then the game's word
OLED_ROW = {"bowling_strike": (1, "       Strike!"), "bowling_mid": (1, "Shoot where it lies"),
            "trap_trapped": (6, "   Trapped: stuck!"), "trap_over": (6, "P1 wins: stuck")}


@pytest.mark.parametrize("run", sorted(screens.RUNS))
def test_key_screens(run):
    snaps, events = screens.play(run)
    overs = [e for e in events if e["ev"] == "game_over"]
    assert len(overs) == 1 and GAME_OVER[run](overs[0]), overs
    names = [n for n in screens.SCREENS if screens.RUN_OF[n] == run]
    assert sorted(snaps) == sorted(names)
    pictures = screens.pictures(snaps)
    problems = []
    for name in names:
        s = snaps[name]
        assert s["display"][0] == OLED_TOP[name], (name, s["display"])
        if name in OLED_ROW:
            row, text = OLED_ROW[name]
            assert s["display"][row] == text, (name, s["display"])
        assert s["seg"] == SEG[name], (name, s["seg"])
        for path, img in pictures.items():
            if os.path.basename(path) not in (f"screen_{name}.png", f"{name}.png", f"{name}_7seg.png"):
                continue
            if not os.path.exists(path):
                problems.append(f"missing {path} (make screens)")
                continue
            want = Image.open(path)
            if want.mode != img.mode:
                want = want.convert(img.mode)
            if not screens.same_pixels(want, img):
                diff = sum(1 for a, b in zip(want.getdata(), img.getdata()) if a != b)
                problems.append(f"{os.path.relpath(path, screens.ROOT)}: {diff} pixels differ")
    assert not problems, "\n".join(problems)


def test_golden_images_are_one_bit_panels():
    for name in screens.SCREENS:
        img = Image.open(os.path.join(screens.GOLDEN, f"screen_{name}.png"))
        assert img.size == (128, 64) and img.mode == "1", name
