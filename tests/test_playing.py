"""docs/playing.md, the players' guide: its picture of the board is what tools/playing.py draws
from board/geometry.json and the firmware's pin counts, and it explains every message the
scoreboard puts on its status row and every result it holds after a shot."""
import os
import re

from tools import playing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*path):
    with open(os.path.join(ROOT, *path)) as f:
        return f.read()


def test_the_board_picture_is_current():
    assert playing.main(["--check"]) == 0, "make the picture again: python -m tools.playing"


def test_the_picture_s_pins_are_the_firmware_s():
    pins = playing.pin_values()
    # the booklet's list, shot from end a at end b (docs/rules.md)
    assert [pins[f"b.{k}"] for k in ("cup3", "e2", "n2", "z3", "n3", "back4")] == [9, 8, 8, 7, 7, 5]
    assert [pins[f"a.{k}"] for k in ("e2", "n2", "z3", "n3", "cup3", "back4")] == [6, 6, 4, 3, 2, 1]
    assert pins["center"] == 0


def _texts(source, names):
    # the bytes literals of the tuples `names` in a firmware module's source
    out = []
    for name in names:
        m = re.search(name + r" = \((.*?)\)\n", source, re.S)
        assert m, name
        out += [t for t in re.findall(r'b"([^"]*)"', m.group(1)) if t]
    return out


def test_every_status_message_and_result_is_explained():
    guide = read("docs", "playing.md")
    app = read("firmware", "scoreboard", "status_row.py")
    texts = _texts(app, ["WHY_TEXT", "CH_TEXT", "J_TEXT"])
    texts += ["Unsure: check chips", "Game restored", "Watchdog: restored", "Hand over the pads",
              "Calibration damaged", "Split!", "Same chip twice!", "Out of turn!", "No shots left",
              "Set-up OK", "Put back: b E", "Place in pocket a", "Place in pin pocket b",
              "Place in centre", "Shoot where it lies"]
    ui = read("firmware", "displays", "oled_screens.py")
    shot = re.search(r"_SHOT = \((.*?)\)\n", ui, re.S).group(1)
    joined = "".join(re.findall(r'b"([^"]*)"', shot))
    at = re.search(r'_SHOT_AT = b"(.*?)"', ui).group(1).encode().decode("unicode_escape")
    offs = [ord(c) for c in at]
    texts += [joined[offs[i]:offs[i + 1]] for i in range(1, len(offs) - 1)]
    texts += ["Strike!", "Spare!", "Split! Spare", "Gutter", "No basket", "Sunk: 9 pins",
              "Sunk, no Zenn: 9"]
    missing = [t for t in texts if t not in guide]
    assert not missing, f"docs/playing.md does not explain: {missing}"
    assert "Trapped: stuck!" in texts and "In the backcourt!" in texts


def test_the_readme_links_the_guide():
    assert "docs/playing.md" in read("README.md")
