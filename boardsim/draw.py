"""Pictures of the table from board/geometry.json: the board description that the play page and
the HTML replay draw with (boardsim/web/board.js), and the same drawing in Pillow for GIFs.

Screen layout (both drawers): the board upright, end b at the top, end a at the bottom (a player
at end a looks up the board), SCALE px per mm with a margin; the OLED beside it, 128x64 pixels
each drawn as OLED_PX x OLED_PX, exactly the model's frame (SSD1306Model.frame()).

State lines (boardsim/target/live.py) carry chips in 0.1 mm and the lit pads as (index,
permille) pairs; pads are indexed as in the firmware's tables, which list them in the order of
Board.pad_positions().
"""
import ast
import os

from shapely.geometry import LineString, Polygon, box

from boardsim.geometry import Board, END_ZONE_KEYS, ENDS
from boardsim.scenario import CHIPS

# chip colours: the small chip white, the big ones red, blue, green (as a poker set); others
# (a second small chip, for bad-input tests) lilac
CHIP_COLOURS = {"small": "#f4f1e8", "big1": "#c8323c", "big2": "#2f5fb3", "big3": "#2e8b57"}
OTHER_COLOUR = "#c9b8f0"
ZONE_COLOURS = {"back4": "#d9b98c", "cup3": "#e6c9a0", "pocket": "#e6c9a0", "z3": "#efd9b4",
                "e2": "#f5e6c8", "n2": "#efd9b4", "n3": "#f5e6c8", "center": "#e9d3ad"}
STATE_NAMES = ("hand", "board", "cup a", "cup b", "off")
HAND, BOARD, CUP_A, CUP_B, OFF = 0, 1, 2, 3, 4


def _ring(poly):
    return [[round(x, 2), round(y, 2)] for x, y in poly.exterior.coords[:-1]]


def _polys(shape):
    return [_ring(p) for p in getattr(shape, "geoms", [shape]) if isinstance(p, Polygon) and not p.is_empty]


def board_description(board=None):
    """Everything a drawer needs, in mm (JSON-ready)."""
    b = board or Board.load()
    zones = {}
    for name, shape in b.zones.items():
        if name.endswith(".cup"):
            continue
        zones[name] = _polys(shape)
    labels = []
    letters = {"z3": "Z", "e2": "E", "n2": "N", "n3": "N"}
    points = {"back4": "4", "cup3": "3", "z3": "3", "e2": "2", "n2": "2", "n3": "3"}
    for e in ENDS:
        for key, letter in letters.items():
            c = b.zones[f"{e}.{key}"].representative_point()
            labels.append({"x": c.x, "y": c.y, "text": letter, "pts": points[key], "end": e,
                           "zone": f"{e}.{key}"})
        for key in ("back4",):
            u, v = (b.half_w - b.corner) * 0.55, b.baseline_v / 2
            x, y = b.to_board(e, u, v)
            labels.append({"x": x, "y": y, "text": "", "pts": points[key], "end": e, "zone": f"{e}.{key}"})
        x, y = b.to_board(e, (b.half_w - b.corner) * 0.55, (b.baseline_v + b.zline_v) / 2)
        labels.append({"x": x, "y": y, "text": "", "pts": points["cup3"], "end": e, "zone": f"{e}.cup3"})
    return {
        "width": b.width, "length": b.length, "corner": b.corner,
        "outline": _ring(b.outline),
        "zones": zones,
        "labels": labels,
        "blocks": [r for e in ENDS for r in _polys(b.blocks(e))],
        "cups": [[*b.cup_center(e), b.cup_radius] for e in ENDS],
        "gates": [[list(p) for p in b.gate_segment(e)] for e in ENDS],
        "pads": [[round(x, 2), round(y, 2)] for x, y in b.pad_positions()],
        "chips": {n: {"kind": k, "r": b.chip_radius(k), "colour": CHIP_COLOURS.get(n, OTHER_COLOUR)}
                  for n, k in CHIPS.items()},
        "zone_colours": ZONE_COLOURS,
        "pins": bowling_pins(),
    }


def bowling_pins():
    """What a first ball resting in each section of an end knocks down in Zenn Bowling, on the
    pin side and on the shooter's side: {"pin": {key: pins}, "shooter": {...}}, read from the
    firmware's own tables (firmware/games/bowling.py, _PINS_PIN and _PINS_SHOOTER) so that the
    board drawing says what the scoreboard counts."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "firmware", "games", "bowling.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    tables = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                getattr(node.targets[0], "id", "") in ("_PINS_PIN", "_PINS_SHOOTER"):
            tables[node.targets[0].id] = ast.literal_eval(node.value)
    keys = END_ZONE_KEYS        # the tables' order: back4 cup3 pocket zline z3 e2 n2 n3 cup
    return {"pin": dict(zip(keys, tables["_PINS_PIN"])),
            "shooter": dict(zip(keys, tables["_PINS_SHOOTER"]))}


# =============================================================================================
# Pillow drawing (GIF replays); the same picture as web/board.js
# =============================================================================================

SCALE = 0.5         # px per mm
MARGIN = 12
OLED_PX = 2
TEXT_COLS = 42      # the caption's characters per line (6 px each, beside the OLED's 256 px)
TRAIL_EDGE = "#3a2a1a"
TRAIL_REST_MS = 300 # a chip still this long starts a new trail when it moves again (web/board.js)


class BitmapFont:
    """The scoreboard's own 6x8 font (firmware/displays/font.py, read as data), for the replay's text:
    crisp at any size, every character the same width (so spaces show), nothing to install."""

    def __init__(self):
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firmware", "displays", "font.py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        consts = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                name = getattr(node.targets[0], "id", "")
                v = node.value
                if isinstance(v, ast.Call) and getattr(v.func, "id", "") == "const":
                    v = v.args[0]
                try:
                    consts[name] = ast.literal_eval(v)
                except ValueError:
                    pass
        self.font, self.first, self.last = consts["FONT"], consts["FIRST"], consts["LAST"]
        self.w, self.h = consts["WIDTH"], consts["HEIGHT"]

    def points(self, x0, y0, text, scale=1):
        """The pixels (x, y) that `text` lights with its top left corner at (x0, y0)."""
        pts = []
        for k, ch in enumerate(text):
            c = ord(ch)
            if not self.first <= c <= self.last:
                c = ord("?")
            i = (c - self.first) * self.w
            for col in range(self.w):
                b = self.font[i + col]
                for row in range(self.h):
                    if b >> row & 1:
                        x, y = x0 + (k * self.w + col) * scale, y0 + row * scale
                        for dx in range(scale):
                            for dy in range(scale):
                                pts.append((x + dx, y + dy))
        return pts

    def draw(self, dr, xy, text, fill, scale=1):
        dr.point(self.points(int(xy[0]), int(xy[1]), text, scale), fill=fill)


class Painter:
    def __init__(self, desc, scale=SCALE):
        from PIL import Image, ImageDraw
        self.Image, self.ImageDraw = Image, ImageDraw
        self.font = BitmapFont()
        self.d = desc
        self.s = scale
        self.bw = int(desc["width"] * scale) + 2 * MARGIN
        self.bh = int(desc["length"] * scale) + 2 * MARGIN
        self.ow, self.oh = 128 * OLED_PX, 64 * OLED_PX
        self.W = self.bw + self.ow + 3 * MARGIN
        self.H = self.bh
        self._board = self._board_image()
        self.trails = {}        # chip -> [(x, y) mm]: its last slide, until it is picked up
        m = MARGIN / scale / 2     # half the margin: clear of the OLED beside the board
        self._trail_box = box(-desc["width"] / 2 - m, -desc["length"] / 2 - m,
                              desc["width"] / 2 + m, desc["length"] / 2 + m)
        self.last = {}          # chip -> [x, y, state, t when it last moved]

    def xy(self, x, y):
        d = self.d
        return (MARGIN + (x + d["width"] / 2) * self.s, MARGIN + (d["length"] / 2 - y) * self.s)

    def _board_image(self):
        d = self.d
        img = self.Image.new("RGB", (self.W, self.H), "#2b2622")
        dr = self.ImageDraw.Draw(img)
        dr.polygon([self.xy(*p) for p in d["outline"]], fill="#d2ad7a", outline="#5a3d1e")
        for name, polys in d["zones"].items():
            key = name.split(".")[-1]
            if key in ("zline",):
                continue
            for ring in polys:
                dr.polygon([self.xy(*p) for p in ring], fill=d["zone_colours"].get(key), outline="#8a6a44")
        for ring in d["zones"]["a.zline"] + d["zones"]["b.zline"]:
            dr.polygon([self.xy(*p) for p in ring], fill="#3a2a1a")
        for cx, cy, r in d["cups"]:
            x0, y0 = self.xy(cx - r, cy + r)
            x1, y1 = self.xy(cx + r, cy - r)
            dr.ellipse([x0, y0, x1, y1], fill="#1a1410", outline="#000000")
        for ring in d["blocks"]:
            dr.polygon([self.xy(*p) for p in ring], fill="#6b4423", outline="#3a230f")
        for lab in d["labels"]:
            x, y = self.xy(lab["x"], lab["y"])
            text = lab["text"] or lab["pts"]
            self.font.draw(dr, (x - 3 * len(text), y - 4), text, "#7a5a34")
        for end, y in (("b", d["length"] / 2 - 12), ("a", -d["length"] / 2 + 28)):
            x, yy = self.xy(0, y)
            self.font.draw(dr, (x - 15, yy), f"end {end}", "#5a3d1e")
        self.pad_xy = [self.xy(*p) for p in d["pads"]]
        for x, y in self.pad_xy:
            dr.point((x, y), fill="#a88a60")
        # the OLED's bezel
        ox, oy = self.bw + MARGIN, MARGIN
        dr.rectangle([ox - 4, oy - 4, ox + self.ow + 3, oy + self.oh + 3], fill="#111111", outline="#444444")
        return img

    def track(self, st):
        """Follow the chips through the state lines (each one, in order): every chip's last
        slide, from where it began to move, kept until the chip is picked up."""
        t = st.get("t", 0)
        for name, state, x, y, _amp in st.get("chips", []):
            p = (x / 10.0, y / 10.0)
            last = self.last.get(name)
            if state == HAND:
                self.trails.pop(name, None)
                self.last.pop(name, None)
            elif state != BOARD:
                # in a cup or off: the trail ends where it went and stays
                if last and last[2] == BOARD and name in self.trails and t - last[3] <= 3 * TRAIL_REST_MS:
                    self.trails[name].append(p)
                if last:
                    last[2] = state
            elif last and last[2] == BOARD and (last[0], last[1]) != p:
                tr = self.trails.get(name)
                if tr is None or t - last[3] > TRAIL_REST_MS:
                    tr = self.trails[name] = [(last[0], last[1])]
                tr.append(p)
                self.last[name] = [p[0], p[1], state, t]
            elif not last or last[2] != BOARD:
                self.last[name] = [p[0], p[1], state, -10 ** 9]

    def frame(self, st, oled_hex, caption=""):
        """One picture: the board with the state line `st`, the OLED from `oled_hex` (the model's
        1024-byte frame as hex, or None for a dark panel), a caption under the OLED; the
        chips' trails as track() followed them."""
        img = self._board.copy()
        dr = self.ImageDraw.Draw(img)
        chips = self.d["chips"]
        for name, tr in self.trails.items():
            if len(tr) > 1 and name in chips:
                # a chip that flew off the board: its trail stops at the picture's edge
                line = LineString(tr).intersection(self._trail_box)
                for part in getattr(line, "geoms", [line]):
                    if part.is_empty or not hasattr(part, "coords") or len(part.coords) < 2:
                        continue
                    pts = [self.xy(*p) for p in part.coords]
                    dr.line(pts, fill=TRAIL_EDGE, width=4)     # a dark edge: a white chip's trail shows
                    dr.line(pts, fill=chips[name]["colour"], width=2)
        for name, state, x, y, amp in st.get("chips", []):
            if state != BOARD:
                continue
            r = chips[name]["r"]
            cx, cy = self.xy(x / 10.0, y / 10.0)
            rp = r * self.s
            dr.ellipse([cx - rp, cy - rp, cx + rp, cy + rp], fill=chips[name]["colour"], outline="#111111")
            dr.ellipse([cx - rp * 0.6, cy - rp * 0.6, cx + rp * 0.6, cy + rp * 0.6], outline="#ffffff")
        lit = st.get("lit", [])
        for i in range(0, len(lit), 2):
            x, y = self.pad_xy[lit[i]]
            k = min(1.0, lit[i + 1] / 600.0)
            c = (int(255 * k + 120 * (1 - k)), int(200 * k + 90 * (1 - k)), 40)
            rr = 1.5 + 2.0 * k
            dr.ellipse([x - rr, y - rr, x + rr, y + rr], fill=c, outline="#3a1d00")
        ox, oy = self.bw + MARGIN, MARGIN
        if oled_hex and st.get("power", True):
            fb = bytes.fromhex(oled_hex)
            px = self.Image.new("1", (128, 64), 0)
            pix = px.load()
            for p in range(8):
                for x in range(128):
                    b = fb[p * 128 + x]
                    if b:
                        for j in range(8):
                            if b >> j & 1:
                                pix[x, p * 8 + j] = 1
            big = px.resize((self.ow, self.oh), self.Image.NEAREST)
            colour = self.Image.new("RGB", (self.ow, self.oh), "#9fe8ff")
            black = self.Image.new("RGB", (self.ow, self.oh), "#050a0c")
            img.paste(self.Image.composite(colour, black, big), (ox, oy))
        else:
            dr.rectangle([ox, oy, ox + self.ow - 1, oy + self.oh - 1], fill="#050a0c")
        # the chips not on the board
        y = oy + self.oh + 14
        self.font.draw(dr, (ox, y), "t = %.1f s" % (st.get("t", 0) / 1000.0), "#dddddd")
        y += 14
        for name, state, _x, _y, _amp in st.get("chips", []):
            if state in (CUP_A, CUP_B, OFF):
                self.font.draw(dr, (ox, y), f"{name}: {STATE_NAMES[state]}", "#dddddd")
                y += 11
        y += 4
        for line in _wrap(caption, TEXT_COLS)[:24]:
            self.font.draw(dr, (ox, y), line, "#ffd27f")
            y += 11
        return img


    def palette_image(self):
        """A 'P' image whose palette holds every colour the frames use (board, lit pads at every
        strength, chips, OLED, text), for quantizing all frames alike."""
        Image, ImageDraw = self.Image, self.ImageDraw
        probe = Image.new("RGB", (self.W, self.H + 40), "#000000")
        probe.paste(self._board, (0, 0))
        dr = ImageDraw.Draw(probe)
        x = 0
        for i in range(0, 61):
            k = i / 60.0
            dr.rectangle([x, self.H, x + 3, self.H + 9],
                         fill=(int(255 * k + 120 * (1 - k)), int(200 * k + 90 * (1 - k)), 40))
            x += 4
        for c in list(self.d["chips"].values()):
            dr.rectangle([x, self.H, x + 9, self.H + 9], fill=c["colour"])
            x += 10
        for c in ("#9fe8ff", "#050a0c", "#dddddd", "#ffd27f", "#ffffff", "#111111", "#3a1d00", TRAIL_EDGE):
            dr.rectangle([x, self.H, x + 9, self.H + 9], fill=c)
            x += 10
        return probe.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def _wrap(text, n):
    """Lines of at most n characters: each paragraph (an event) wrapped at spaces, its
    continuation lines indented two, a word longer than a line cut."""
    out = []
    for para in text.split("\n"):
        line, width = "", n
        for word in para.split(" "):
            while len(word) > width:
                if line:
                    out.append(line)
                    line, width = "  ", n
                out.append(line + word[:width - len(line)])
                word = word[width - len(line):]
                line = "  "
            if line.strip() and len(line) + 1 + len(word) > n:
                out.append(line)
                line = "  " + word
            else:
                line = word if not line else (line + word if line == "  " else line + " " + word)
        out.append(line)
    return out
