"""The players' picture of the board (docs/playing_board.png, shown in docs/playing.md): the board
from board/geometry.json (boardsim/draw.py's board description), twice:

- Zenn Bowling shot from end a: each section with its letter and the pins a first ball that
  stops there knocks down, as the firmware counts them (rules_bowling.Bowling.pin_value);
- Trap Zenn: the two backcourts, the Zenn lines where each trapper sets up, the centre circle.

    python -m tools.playing            rewrite docs/playing_board.png
    python -m tools.playing --check    exit 1 when it differs from what the sources give
"""
import argparse
import os
import sys

from PIL import Image, ImageDraw, ImageFont

from boardsim.draw import board_description
from boardsim.geometry import ROOT, Board

OUT = os.path.join(ROOT, "docs", "playing_board.png")
S = 0.62                # px per mm
M = 40                  # margin (px), room for the end labels
TITLE = 34
LETTERS = {"z3": "Z", "e2": "E", "n2": "inner N", "n3": "outer N", "back4": "4 pt", "cup3": "3 pt"}


def pin_values():
    """{zone name: pins} of a first ball from end a, from the firmware's own rules."""
    sys.path[:0] = [os.path.join(ROOT, "firmware"), os.path.join(ROOT, "boardsim", "target")]
    try:
        from games import bowling as rules_bowling
        from tables import board_table
    finally:
        del sys.path[:2]
    g = rules_bowling.Bowling(None)
    g.start(1, 0)
    return {board_table.ZONE_NAMES[z].decode(): g.pin_value(z) for z in range(board_table.N_ZONES)}


def _font(size):
    return ImageFont.load_default(size=size)


class Panel:
    def __init__(self, desc, board, title):
        self.d = desc
        self.b = board
        self.w = int(desc["width"] * S) + 2 * M
        self.h = int(desc["length"] * S) + 2 * M + TITLE
        self.img = Image.new("RGB", (self.w, self.h), "white")
        self.dr = ImageDraw.Draw(self.img)
        self.dr.text((self.w / 2, 14), title, fill="black", font=_font(16), anchor="mm")

    def xy(self, x, y):
        d = self.d
        return (M + (x + d["width"] / 2) * S, TITLE + M + (d["length"] / 2 - y) * S)

    def board(self, fills):
        d, dr = self.d, self.dr
        dr.polygon([self.xy(*p) for p in d["outline"]], fill="#d2ad7a", outline="#5a3d1e")
        for name, polys in d["zones"].items():
            key = name.split(".")[-1]
            if key in ("zline", "pocket"):
                continue
            for ring in polys:
                dr.polygon([self.xy(*p) for p in ring], fill=fills(name), outline="#8a6a44")
        for name in ("a.pocket", "b.pocket"):
            for ring in d["zones"][name]:
                dr.polygon([self.xy(*p) for p in ring], fill=fills(name), outline="#8a6a44")
        for ring in d["zones"]["a.zline"] + d["zones"]["b.zline"]:
            dr.polygon([self.xy(*p) for p in ring], fill="#3a2a1a")
        for cx, cy, r in d["cups"]:
            x0, y0 = self.xy(cx - r, cy + r)
            x1, y1 = self.xy(cx + r, cy - r)
            dr.ellipse([x0, y0, x1, y1], fill="#1a1410")
        for ring in d["blocks"]:
            dr.polygon([self.xy(*p) for p in ring], fill="#6b4423")
        f = _font(13)
        top = self.xy(0, d["length"] / 2)
        bot = self.xy(0, -d["length"] / 2)
        dr.text((top[0], top[1] - 14), "end b", fill="black", font=f, anchor="mm")
        dr.text((bot[0], bot[1] + 14), "end a", fill="black", font=f, anchor="mm")

    def label(self, x, y, *lines, size=12, fill="black"):
        f = _font(size)
        px, py = self.xy(x, y)
        n = len(lines)
        for i, t in enumerate(lines):
            self.dr.text((px, py + (i - (n - 1) / 2) * (size + 1)), t, fill=fill, font=f, anchor="mm")

    def spots(self):
        """{zone: (x, y)} where each section's label goes (mm)."""
        b, out = self.b, {}
        for lab in self.d["labels"]:
            key = {"Z": "z3", "E": "e2"}.get(lab["text"])
            if lab["text"] == "N":
                key = "n2" if abs(lab["x"]) < b.width / 4 else "n3"
            if lab["text"] == "":
                key = "back4" if lab["pts"] == "4" else "cup3"
            out[f"{lab['end']}.{key}"] = (lab["x"], lab["y"])
        return out


def bowling(desc, board, pins):
    p = Panel(desc, board, "Zenn Bowling, shot from end a")
    p.board(lambda name: "#f0d9a8" if name.startswith("b.") else "#e3cda6")
    for zone, (x, y) in p.spots().items():
        end, key = zone.split(".")
        v = pins[zone]
        p.label(x, y, LETTERS[key], f"{v} pin" + ("s" if v != 1 else ""))
    for end in ("a", "b"):
        cx, cy = board.cup_center(end)
        if end == "b":
            p.label(cx + board.cup_radius + 62, cy, "Zenn: strike", "sink: 9 pins", size=11)
        else:
            p.label(cx - board.cup_radius - 62, cy, "own cup:", "gutter", size=11)
        x, y = board.to_board(end, 88, board.zline_v - 18)
        p.label(x, y, "pocket", size=11, fill="#3a2a1a")
    p.label(0, 0, "centre circle", "gutter", size=11)
    p.label(0, -desc["length"] / 2 + 14, "shooter's side", size=11, fill="#5a3d1e")
    p.label(0, desc["length"] / 2 - 14, "pin side", size=11, fill="#5a3d1e")
    return p.img


def trap(desc, board):
    p = Panel(desc, board, "Trap Zenn: the backcourts")

    def fill(name):
        if name.split(".")[-1] in ("back4", "cup3", "pocket"):
            return "#9cc3e6" if name.startswith("a.") else "#e6a39c"
        return "#efe3c8"
    p.board(fill)
    for zone, (x, y) in p.spots().items():
        end, key = zone.split(".")
        if key in ("back4", "cup3"):
            p.label(x, y, LETTERS[key], size=11)
        else:
            p.label(x, y, LETTERS[key], size=12)
    for end, who in (("a", "P1"), ("b", "P2")):
        x, y = board.to_board(end, 0, board.baseline_v / 2 - 12)
        p.label(x, y, f"backcourt {end}", size=12)
        x, y = board.to_board(end, 0, board.zline_v + 16)
        p.label(x, y, f"Zenn line {end}: {who} traps from here", size=10)
    p.label(0, 0, "small chip", "starts here", size=11)
    return p.img


def picture():
    board = Board.load()
    desc = board_description(board)
    a = bowling(desc, board, pin_values())
    b = trap(desc, board)
    out = Image.new("RGB", (a.width + b.width, max(a.height, b.height)), "white")
    out.paste(a, (0, 0))
    out.paste(b, (a.width, 0))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    img = picture()
    if a.check:
        old = Image.open(OUT).convert("RGB") if os.path.exists(OUT) else None
        if old is None or old.tobytes() != img.tobytes():
            print(f"{os.path.relpath(OUT, ROOT)} is stale: python -m tools.playing")
            return 1
        return 0
    img.save(OUT, optimize=True)
    print(f"wrote {os.path.relpath(OUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
