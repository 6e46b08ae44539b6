"""The board, read from board/geometry.json: zones as shapely shapes, the pad grid, the hall
sensors' field profile. Host side only (CPython). Everything else derives from this module:
the firmware's tables, the simulator's world and the drawings.

Coordinates: millimetres, origin at the centre, x across, y towards end b. End a is y < 0.
"""
import json
import math
import os
from functools import cached_property

from shapely.geometry import Point, Polygon, box
from shapely import affinity

from boardsim import ROOT  # noqa: E402  (where it was; imported from here by many)
DEFAULT_GEOMETRY = os.path.join(ROOT, "board", "geometry.json")

ENDS = ("a", "b")
# Zone ids shared with the firmware (docs/architecture.md). Order matters.
END_ZONE_KEYS = ("back4", "cup3", "pocket", "zline", "z3", "e2", "n2", "n3", "cup")
END_ZONES = len(END_ZONE_KEYS)
ZONE_NAMES = tuple(f"{e}.{k}" for e in ENDS for k in END_ZONE_KEYS) + ("center", "off")
ZONE_ID = {name: i for i, name in enumerate(ZONE_NAMES)}
Z_CENTER = ZONE_ID["center"]
Z_OFF = ZONE_ID["off"]
# zones a chip can rest in (the cup is not a surface; "off" is nowhere)
REST_ZONES = tuple(n for n in ZONE_NAMES if not n.endswith(".cup") and n != "off")
CHIP_KINDS = ("small", "big")


class GeometryError(ValueError):
    pass


class Board:
    """One board's dimensions and the shapes derived from them."""

    def __init__(self, params):
        self.p = params
        try:
            b, ln, cup, blk = params["board"], params["lines"], params["cup"], params["blocks"]
            self.width = float(b["width"])
            self.length = float(b["length"])
            self.corner = float(b["corner"])
            self.baseline_v = float(ln["baseline_v"])
            self.zline_v = float(ln["zline_v"])
            self.zline_length = float(ln["zline_length"])
            self.zline_width = float(ln["zline_width"])
            self.center_radius = float(ln["center_radius"])
            self.cup_v = float(cup["v"])
            self.cup_radius = float(cup["radius"])
            self.gap = float(blk["gap"])
            self.block_width = float(blk["width"])
            self.block_depth = float(blk["depth"])
            self.chip_diameter = {k: float(params["chips"][k]["diameter"]) for k in CHIP_KINDS}
            self.pads = dict(params["pads"])
            # the presence pads of the second front end (docs/sensing.md); defaults if absent
            # (without "levels": one threshold, half the window covered; one row a strobe)
            self.presence = {"pitch": 10, "aperture": 2.5, "threshold_spread": 0.15, "rim": 1.0,
                             "levels": [0.0], "rows_per_strobe": 1}
            self.presence.update(params.get("presence", {}))
        except (KeyError, TypeError, ValueError) as e:
            raise GeometryError(f"board geometry: missing or bad value: {e}") from e
        self._check()

    @classmethod
    def load(cls, path=DEFAULT_GEOMETRY):
        with open(path) as f:
            return cls(json.load(f))

    # -- sanity: the booklet's statements hold -------------------------------------------
    def _check(self):
        small, big = self.chip_diameter["small"], self.chip_diameter["big"]
        problems = []
        if not small < big:
            problems.append("small chips must be smaller than big ones")
        if not small < self.gap < big:
            problems.append("the gap between the Zenn blocks must pass a small chip and stop a big one")
        if not 2 * self.cup_radius > big:
            problems.append("a big chip must fit into the cup")
        if not self.zline_length >= 3 * big:
            problems.append("the Zenn line must hold three big chips side by side")
        if not self.pocket_v1 - self.pocket_v0 >= small:
            problems.append("the pocket must hold a small chip behind the Zenn line")
        if not self.baseline_v < self.cup_v - self.cup_radius:
            problems.append("the cup must lie in front of the baseline")
        if not self.cup_v + self.cup_radius < self.block_v0:
            problems.append("the cup must lie behind the Zenn blocks")
        if not self.zline_v + self.zline_width < self.length / 2 - self.center_radius:
            problems.append("the centre circle must lie in the front courts")
        if problems:
            raise GeometryError("board geometry: " + "; ".join(problems))

    # -- derived dimensions (end coordinates u, v) ---------------------------------------
    @property
    def half_w(self):
        return self.width / 2

    @property
    def half_l(self):
        return self.length / 2

    @property
    def strip_u(self):
        """The border between an outer and an inner strip (the middle line is u = 0)."""
        return self.width / 4

    @property
    def block_v1(self):
        """The blocks' front face: the back edge of the Zenn line."""
        return self.zline_v - self.zline_width / 2

    @property
    def block_v0(self):
        return self.block_v1 - self.block_depth

    @property
    def pocket_v0(self):
        return self.block_v0

    @property
    def pocket_v1(self):
        return self.block_v1

    @property
    def gate_v(self):
        """The beam between the blocks crosses the gap at mid depth."""
        return (self.block_v0 + self.block_v1) / 2

    # -- end <-> board coordinates --------------------------------------------------------
    def to_board(self, end, u, v):
        if end == "a":
            return u, v - self.half_l
        return -u, self.half_l - v

    def to_end(self, x, y):
        if y < 0:
            return "a", x, y + self.half_l
        return "b", -x, self.half_l - y

    def _end_shape(self, end, shape):
        """A shape drawn in end-a coordinates (u, v), moved to `end` in board coordinates."""
        s = affinity.translate(shape, 0, -self.half_l)
        if end == "b":
            s = affinity.rotate(s, 180, origin=(0, 0))
        return s

    # -- shapes ----------------------------------------------------------------------------
    @cached_property
    def outline(self):
        w, l, c = self.half_w, self.half_l, self.corner
        return Polygon([(-w + c, -l), (w - c, -l), (w, -l + c), (w, l - c),
                        (w - c, l), (-w + c, l), (-w, l - c), (-w, -l + c)])

    @cached_property
    def center_circle(self):
        return Point(0, 0).buffer(self.center_radius, 256)

    def cup_hole(self, end):
        return self._end_shape(end, Point(0, self.cup_v).buffer(self.cup_radius, 128))

    def cup_center(self, end):
        return self.to_board(end, 0.0, self.cup_v)

    def blocks(self, end):
        g, w = self.gap / 2, self.block_width
        left = box(-g - w, self.block_v0, -g, self.block_v1)
        right = box(g, self.block_v0, g + w, self.block_v1)
        return self._end_shape(end, left.union(right))

    def gate_segment(self, end):
        """The beam between the Zenn blocks, as two board points."""
        g = self.gap / 2
        return self.to_board(end, -g, self.gate_v), self.to_board(end, g, self.gate_v)

    @cached_property
    def zones(self):
        """Zone name -> shapely shape (board coordinates). Zones overlap where the contract
        says so: the pocket lies in cup3, the Zenn line across cup3 and the strips; the
        strips exclude the centre circle, which takes priority over them."""
        W, L = self.half_w, self.half_l
        big = 4 * max(W, L)
        zones = {}
        for end in ENDS:
            half = self.outline.intersection(self._end_shape(end, box(-big, 0, big, L)))

            def region(shape):
                return half.intersection(self._end_shape(end, shape))

            zones[f"{end}.back4"] = region(box(-big, -big, big, self.baseline_v))
            zones[f"{end}.cup3"] = region(box(-big, self.baseline_v, big, self.zline_v))
            zones[f"{end}.pocket"] = region(box(-self.gap / 2, self.pocket_v0, self.gap / 2, self.pocket_v1))
            zones[f"{end}.zline"] = region(box(-self.zline_length / 2, self.zline_v - self.zline_width / 2,
                                               self.zline_length / 2, self.zline_v + self.zline_width / 2))
            s = self.strip_u
            for key, u0, u1 in (("z3", -big, -s), ("e2", -s, 0), ("n2", 0, s), ("n3", s, big)):
                zones[f"{end}.{key}"] = region(box(u0, self.zline_v, u1, big)).difference(self.center_circle)
            zones[f"{end}.cup"] = self.cup_hole(end)
        zones["center"] = self.center_circle
        return zones

    @cached_property
    def obstacles(self):
        """Where a chip cannot rest: the Zenn blocks and the cup holes."""
        shapes = [self.blocks(e) for e in ENDS] + [self.cup_hole(e) for e in ENDS]
        u = shapes[0]
        for s in shapes[1:]:
            u = u.union(s)
        return u

    def chip_radius(self, kind):
        return self.chip_diameter[kind] / 2

    def can_rest(self, x, y, kind, margin=0.0):
        """A chip of `kind` centred at (x, y), mm, lies whole on the board, clear of the cups and
        blocks (by `margin` more)."""
        key = (kind, margin)
        cache = self.__dict__.setdefault("_rest_shapes", {})
        if key not in cache:
            r = self.chip_radius(kind)
            cache[key] = (self.outline.buffer(-r - margin), self.obstacles.buffer(r + margin))
        inner, obst = cache[key]
        p = Point(x, y)
        return inner.contains(p) and not obst.contains(p)

    def resting_spot(self, rng, kind, margin=0.0):
        """A random (x, y), mm, where a chip of `kind` can rest (can_rest), drawn from rng."""
        while True:
            x = rng.uniform(-self.half_w, self.half_w)
            y = rng.uniform(-self.half_l, self.half_l)
            if self.can_rest(x, y, kind, margin):
                return x, y

    def zones_of_disc(self, x, y, r, eps=1e-9):
        """The zones a chip's disc overlaps (true geometry: the reference for tests)."""
        disc = Point(x, y).buffer(r, 64)
        out = set()
        for name, shape in self.zones.items():
            if name.endswith(".cup"):
                continue
            if disc.intersection(shape).area > eps:
                out.add(name)
        if not self.outline.buffer(1e-6).contains(disc):
            out.add("off")
        return out

    def zone_of_point(self, x, y):
        """Zones that contain a point (for a chip's centre)."""
        p = Point(x, y)
        return {n for n, s in self.zones.items() if s.covers(p)}

    # -- pads ---------------------------------------------------------------------------------
    @cached_property
    def pad_grid(self):
        """(cols, rows, pitch, x0, y0, present): the square pad grid, centred on the board.
        A pad is left out where no sensor can sit: outside the outline, under a cup hole.
        (_grid() makes each end's hole once, where this made both at every pad inside the
        outline: 3,356 buffered circles a grid, 0.75 s of CPU; the same pads.)"""
        return self._grid(float(self.pads["pitch"]))

    @cached_property
    def presence_grid(self):
        """(cols, rows, pitch, x0, y0, present) of the presence pads (front end "shift"), laid
        out as pad_grid is, at their own pitch."""
        return self._grid(float(self.presence["pitch"]))

    def _grid(self, pitch):
        cols = int(self.width // pitch)
        rows = int(self.length // pitch)
        x0 = -(cols - 1) * pitch / 2
        y0 = -(rows - 1) * pitch / 2
        holes = [self.cup_hole(e).buffer(2) for e in ENDS]
        present = []
        for r in range(rows):
            for c in range(cols):
                p = Point(x0 + c * pitch, y0 + r * pitch)
                present.append(self.outline.contains(p) and not any(h.contains(p) for h in holes))
        return cols, rows, pitch, x0, y0, present

    def pad_positions(self):
        cols, rows, pitch, x0, y0, present = self.pad_grid
        return [(x0 + (g % cols) * pitch, y0 + (g // cols) * pitch) for g in range(cols * rows) if present[g]]

    # -- hall sensors -----------------------------------------------------------------------
    def hall_profile(self, rho):
        """B_z of a vertical dipole at height h, at horizontal distance rho, with B_z(0) = 1."""
        h = float(self.pads["magnet_height"])
        return h ** 5 * (2 * h * h - rho * rho) / (2 * h * h * (rho * rho + h * h) ** 2.5)
