"""Scenario -> timeline (docs/architecture.md, "Timeline"): what a hand, a button and a shot do
to the simulated table, in millimetres and milliseconds.

    timeline = compile_scenario(scenario)          # list of dicts, the first {"op": "boot", ...}

The timeline starts with the menu presses that get the firmware to the scenario's game (MENU
below), then one or more ops per step. The compiler keeps track of every chip (in hand, on the
board at x, y, in a cup, off the board) to route shots and to reject steps that cannot happen.

Spots (place, and where a shot stops):
  - a zone: the disc lies entirely inside the zone and overlaps no other zone except those that
    contain it (a.pocket lies in a.cup3); among such centres the one farthest from every border,
    obstacle and chip (pole of inaccessibility of the free centres, GAP mm between chips).
    Several chips put into one zone in one step are spread apart. A shot that ends in a zone
    ends at least MIN_MOVE mm from where it began when the zone allows it.
  - `X.zline` is too narrow to hold a chip: a chip "on the Zenn line" overlaps it, its centre
    on a line along it (in front of the blocks, since a chip cannot lie on them), avoiding the
    pocket where it can.
  - a border "z1|z2": the centre lies on the border of the two zones (where one's outline runs
    inside the other), at the middle of the longest usable stretch: the disc touches no
    obstacle or chip and overlaps the fewest zones other than z1, z2 and those containing them.
  - a point: as given, refused when the disc would overlap an obstacle, a chip or the edge.

Routes (shoot, knocks): the chip's disc keeps CLEAR mm from everything it must not touch: the
Zenn blocks, the cup holes, the gate beams, the chips at rest (not those the shot knocks) and
the board's edge. Distances are exact (numpy: discs, segments, boxes; class Prim). A chip goes
straight from waypoint to waypoint where it can, otherwise along the shortest path through a
visibility graph of via points: circumscribed rings around every obstacle, the edge's corners
moved in, and the straight way into each pocket (class Router, A*, then shortcuts).
  - The target cup may be entered on the leg that ends in it. A gate may be touched only on a
    leg that starts or ends in it; a chip that lies in a pocket and is not told to go on into
    that pocket's cup first leaves forwards, so "X.cup" without "X.pocket" before it always
    enters from behind or the side.
  - A hit is a point CLEAR + HIT_GAP mm from the bumper or block face, where a bounce from the
    previous point to the next would touch it (side, back) or the block face nearest that way.
  - "off": to the edge point that is quickest to reach, then one chip diameter past the edge.
  - Knocked chips start when the shooter comes within touching distance (or closest), route
    around the chips at rest and where the shooter came to rest, and move in the same op.
Speed: SPEED mm/ms, braking to a stop over the last BRAKE_MM when the chip comes to rest.
"""
import heapq
import math
import os

import numpy as np
import shapely
from shapely.geometry import LineString, MultiLineString, Point
from shapely.ops import polylabel, unary_union

from boardsim import games as _games
from boardsim.geometry import Board, ENDS, REST_ZONES
from boardsim.scenario import CHIPS, ScenarioError

# -- the firmware's menu ----------------------------------------------------------------------
# One screen per row, in the order the firmware shows them: the values `next` steps through
# (the first one is shown first, `next` wraps), which games show the screen (the game's start
# pages: its SETUP in the firmware's registry, boardsim/games.py), and the value a scenario
# wants. `ok` confirms a screen. Adjust here when the firmware's menu changes.
def _setup(s):
    return _games.by_name()[s.game].setup


MENU = (
    # screen         values                          shown for                         wanted
    ("Game",         lambda s: [g.name for g in _games.games()],
                                                     lambda s: True,                   lambda s: s.game),
    ("Players",      lambda s: range(1, _games.by_name()[s.game].players + 1),
                                                     lambda s: _setup(s) == "players_end", lambda s: s.players),
    ("Shooter end",  ("a", "b"),                     lambda s: _setup(s) == "players_end", lambda s: s.shooter_end),
    ("Trapper",      ("coin", 1, 2),                 lambda s: _setup(s) == "trapper", lambda s: s.trapper or "coin"),
    # after a coin flip the scoreboard shows the winner and asks what he does
    ("Winner",       ("traps", "flees"),             lambda s: _setup(s) == "trapper" and not s.trapper,
                                                                                       lambda s: "traps"),
)
MENU_NEXT, MENU_OK = "next", "ok"
MENU_DONE_MS = 300

# -- motion -----------------------------------------------------------------------------------
SPEED = 1.2            # mm per ms (1.2 m/s)
BRAKE_MM = 100.0       # a chip that comes to rest slows to a stop over its last 100 mm
BRAKE_STEP_MM = 10.0   # points on the braking stretch, so that linear interpolation brakes too

# -- clearances (mm) -------------------------------------------------------------------------
CLEAR = 0.5            # a moving chip keeps this far from what it must not touch
VIA = 1.0              # via points lie this much farther out
GAP = 3.0              # between chips put down or coming to rest
MIN_MARGIN = 0.5       # a spot at least this far inside its zone and from obstacles
GOOD_MARGIN = 3.0      # several chips in a zone: room enough for each, no need to search further
HIT_GAP = 0.2          # a chip "touching" a bumper or block for a hit: CLEAR + HIT_GAP away
MIN_MOVE = 20.0        # a shot that ends in a zone ends at least this far from where it began
RING = 16              # via points around each obstacle corner


def compile_scenario(scenario, board=None):
    """The timeline for a validated Scenario (boardsim.scenario). Raises ScenarioError."""
    return Compiler(board or _default_board()).compile(scenario)


_BOARD = None


def _default_board():
    global _BOARD
    if _BOARD is None:
        _BOARD = Board.load()
    return _BOARD


def menu_presses(scenario):
    """The buttons that take the firmware's boot menu to the scenario's game."""
    out = []
    for _screen, values, shown, wanted in MENU:
        if not shown(scenario):
            continue
        if callable(values):
            values = list(values(scenario))
        out += [MENU_NEXT] * values.index(wanted(scenario)) + [MENU_OK]
    return out


# =============================================================================================
# Segment geometry (numpy, exact for discs, segments and convex polygons)
# =============================================================================================

def _cross(ax, ay, bx, by):
    return ax * by - ay * bx


def _pts_to_seg(P, C, D):
    """Distances from points P (N,2) to the one segment C-D."""
    d = D - C
    L2 = float(d @ d)
    if L2 == 0.0:
        return np.hypot(P[:, 0] - C[0], P[:, 1] - C[1])
    t = _clip01(((P - C) @ d) / L2)
    q = C + t[:, None] * d
    return np.hypot(P[:, 0] - q[:, 0], P[:, 1] - q[:, 1])


def _segs_to_pt(A, B, C):
    """Distances from segments A-B (N,2 each) to the one point C."""
    return _Segs(A, B).to_pt(C)


def _segs_to_seg(A, B, C, D):
    """Distances from segments A-B to the one segment C-D (0 where they cross)."""
    s = _Segs(A, B)
    return s.to_seg(C, D, s.to_pt(C), s.to_pt(D))


class _Segs:
    """Segments A-B (N,2 each) and what every distance to them needs, made once: a router's
    free() measures the same segments against every obstacle, a polygon's every vertex ends two
    of its edges (the same numpy operations on the same numbers as measuring each afresh, so
    the same distances to the last bit: the routes, and so the timelines, do not change)."""

    def __init__(self, A, B):
        self.A = A
        self.B = B
        self.d = d = B - A
        L2 = np.einsum("ij,ij->i", d, d)
        self.zero = L2 == 0.0
        self.den = np.where(self.zero, 1.0, L2)

    def to_pt(self, C):
        """Distances to the one point C."""
        A, d = self.A, self.d
        t = np.einsum("ij,ij->i", C - A, d) / self.den
        t = _clip01(np.where(self.zero, 0.0, t))
        q = A + t[:, None] * d
        return np.hypot(C[0] - q[:, 0], C[1] - q[:, 1])

    def to_seg(self, C, D, to_c, to_d):
        """Distances to the one segment C-D (0 where they cross), given those to C and D."""
        A, B, ab = self.A, self.B, self.d
        to_cd = _pts_to_seg(A, C, D)
        dist = np.minimum(np.minimum(to_c, to_d),
                          np.minimum(to_cd, to_cd if B is A else _pts_to_seg(B, C, D)))
        o1 = _cross(ab[:, 0], ab[:, 1], C[0] - A[:, 0], C[1] - A[:, 1])
        o2 = _cross(ab[:, 0], ab[:, 1], D[0] - A[:, 0], D[1] - A[:, 1])
        cd = D - C
        o3 = _cross(cd[0], cd[1], A[:, 0] - C[0], A[:, 1] - C[1])
        o4 = _cross(cd[0], cd[1], B[:, 0] - C[0], B[:, 1] - C[1])
        crossing = (o1 * o2 < 0) & (o3 * o4 < 0)
        return np.where(crossing, 0.0, dist)


def _clip01(t):
    return np.clip(t, 0.0, 1.0)


class Prim:
    """Something a chip must keep clear of: a point, a segment or a convex polygon (CCW), grown
    by R (a disc is a point with R = its radius)."""

    def __init__(self, label, verts, R=0.0):
        self.label = label
        self.v = np.asarray(verts, dtype=float).reshape(-1, 2)
        self.R = float(R)

    def dist(self, A, B, segs=None):
        """Distances from segments A-B (N,2 each) to the shape (segs: their _Segs, made once
        by a caller that measures them against several shapes)."""
        v = self.v
        s = segs if segs is not None else _Segs(A, B)
        if len(v) == 1:
            return s.to_pt(v[0])
        if len(v) == 2:
            return s.to_seg(v[0], v[1], s.to_pt(v[0]), s.to_pt(v[1]))
        d = None
        inside = np.ones(len(A), dtype=bool)
        to_v = [s.to_pt(c) for c in v]
        for i in range(len(v)):
            c, e = v[i], v[(i + 1) % len(v)]
            di = s.to_seg(c, e, to_v[i], to_v[(i + 1) % len(v)])
            d = di if d is None else np.minimum(d, di)
            inside &= _cross(e[0] - c[0], e[1] - c[1], A[:, 0] - c[0], A[:, 1] - c[1]) >= 0
        return np.where(inside, 0.0, d)

    def dist_pt(self, p):
        P = np.asarray(p, dtype=float).reshape(1, 2)
        return float(self.dist(P, P)[0])

    def ring(self, reach, n=RING):
        """Via points around the shape: a circumscribed polygon at `reach` from it."""
        rho = reach / math.cos(math.pi / n)
        ang = np.arange(n) * (2 * math.pi / n)
        dirs = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        pts = (self.v[:, None, :] + rho * dirs[None, :, :]).reshape(-1, 2)
        keep = self.dist(pts, pts) >= reach - 1e-6
        return pts[keep]


class Table:
    """The board as Prims, for routing chips of either size."""

    def __init__(self, board):
        self.board = board
        self.fixed = []
        for e in ENDS:
            cx, cy = board.cup_center(e)
            self.fixed.append(Prim(f"cup {e}", [(cx, cy)], board.cup_radius))
            g = board.gap / 2
            for side, u0, u1 in (("left", -g - board.block_width, -g), ("right", g, g + board.block_width)):
                corners = [board.to_board(e, u, v) for u, v in
                           ((u0, board.block_v0), (u1, board.block_v0), (u1, board.block_v1), (u0, board.block_v1))]
                if _area2(corners) < 0:
                    corners.reverse()
                self.fixed.append(Prim(f"{e}.block {side}", corners))
            self.fixed.append(Prim(f"gate {e}", board.gate_segment(e)))
        # the outline as half-planes n.p >= d (inward normals)
        ring = list(board.outline.exterior.coords)[:-1]
        if _area2(ring) < 0:
            ring.reverse()
        self.outline_pts = np.array(ring)
        self.halfplanes = []
        for i in range(len(ring)):
            (x0, y0), (x1, y1) = ring[i], ring[(i + 1) % len(ring)]
            L = math.hypot(x1 - x0, y1 - y0)
            n = np.array([-(y1 - y0) / L, (x1 - x0) / L])
            self.halfplanes.append((n, float(n @ np.array([x0, y0])), np.array([x0, y0]), np.array([x1, y1])))

    def inside(self, P, margin):
        """Points P (N,2) at least `margin` inside the outline."""
        ok = np.ones(len(P), dtype=bool)
        for n, d, _a, _b in self.halfplanes:
            ok &= P @ n >= d + margin - 1e-9
        return ok

    def inset_corners(self, margin):
        """The outline's corners moved `margin` inwards (the outline is convex)."""
        out = []
        k = len(self.halfplanes)
        for i in range(k):
            n1 = self.halfplanes[i - 1][0]
            n2 = self.halfplanes[i][0]
            v = self.halfplanes[i][2]
            out.append(v + margin * (n1 + n2) / (1 + n1 @ n2))
        return np.array(out)

    def edge_distance(self, p):
        return min(float(np.asarray(p) @ n - d) for n, d, _a, _b in self.halfplanes)

    def gate(self, end):
        return next(p for p in self.fixed if p.label == f"gate {end}")

    def cup(self, end):
        return next(p for p in self.fixed if p.label == f"cup {end}")


def _area2(pts):
    return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))


class Router:
    """Shortest collision-free paths for a disc of radius r among `prims` on `table`."""

    def __init__(self, table, r, prims, extra_vias=()):
        self.table = table
        self.r = r
        self.prims = list(prims)
        self.extra_vias = list(extra_vias)
        self._nodes = None
        self._vis = None

    def free(self, A, B):
        A = np.asarray(A, dtype=float).reshape(-1, 2)
        B = np.asarray(B, dtype=float).reshape(-1, 2)
        m = self.r + CLEAR
        ok = self.table.inside(A, m) & self.table.inside(B, m)
        segs = _Segs(A, B)
        for p in self.prims:
            ok &= p.dist(A, B, segs) >= p.R + m - 1e-9
        return ok

    def free_pt(self, p):
        return bool(self.free(p, p)[0])

    def nodes(self):
        if self._nodes is None:
            m = self.r + CLEAR
            parts = [self.table.inset_corners(m + VIA)]
            for p in self.prims:
                parts.append(p.ring(p.R + m + VIA))
            if self.extra_vias:
                parts.append(np.asarray(self.extra_vias, dtype=float).reshape(-1, 2))
            pts = np.concatenate(parts)
            self._nodes = pts[self.free(pts, pts)]
        return self._nodes

    def route(self, p, q):
        """[p, ..., q] or None. p and q must be free."""
        p = np.asarray(p, dtype=float)
        q = np.asarray(q, dtype=float)
        if np.allclose(p, q):
            return [p, q]
        if self.free(p, q)[0]:
            return [p, q]
        N = self.nodes()
        P = np.concatenate([N, p[None], q[None]])
        s, g = len(P) - 2, len(P) - 1
        h = np.hypot(P[:, 0] - q[0], P[:, 1] - q[1])
        to_q = self.free(N, np.repeat(q[None], len(N), axis=0))
        best = {s: 0.0}
        came = {}
        heap = [(h[s], s)]
        done = set()
        while heap:
            _f, u = heapq.heappop(heap)
            if u in done:
                continue
            if u == g:
                break
            done.add(u)
            if u == s:
                ok = np.append(self.free(np.repeat(p[None], len(N), axis=0), N), [False, False])
            else:
                ok = np.append(self._row(u), [False, bool(to_q[u])])
            d = np.hypot(P[:, 0] - P[u, 0], P[:, 1] - P[u, 1])
            gu = best[u]
            for v in np.nonzero(ok)[0]:
                v = int(v)
                if v in done or v == u:
                    continue
                nv = gu + d[v]
                if nv < best.get(v, math.inf) - 1e-9:
                    best[v] = nv
                    came[v] = u
                    heapq.heappush(heap, (nv + h[v], v))
        if g not in came:
            return None
        path = [g]
        while path[-1] != s:
            path.append(came[path[-1]])
        pts = [P[i] for i in reversed(path)]
        return self._shortcut(pts)

    def _row(self, u):
        """Which nodes node u sees. The whole visibility matrix at once: numpy does it in one
        pass faster than row by row as the search expands."""
        if self._vis is None:
            N = self.nodes()
            i, j = np.triu_indices(len(N), 1)
            vis = np.zeros((len(N), len(N)), dtype=bool)
            ok = self.free(N[i], N[j])
            vis[i[ok], j[ok]] = True
            self._vis = vis | vis.T
        return self._vis[u]

    def _shortcut(self, pts):
        out = [pts[0]]
        i = 0
        while i < len(pts) - 1:
            rest = np.array(pts[i + 1:])
            ok = self.free(np.repeat(pts[i][None], len(rest), axis=0), rest)
            j = i + 1 + int(np.nonzero(ok)[0].max()) if ok.any() else i + 1
            out.append(pts[j])
            i = j
        return out


# =============================================================================================
# The compiler
# =============================================================================================

class Compiler:
    _shared = {}    # per board: what does not change from one scenario to the next

    def __init__(self, board):
        self.board = board
        self.zones = board.zones
        self._obstacles = board.obstacles
        if id(board) not in self._shared:
            containers = {z: {o for o in REST_ZONES if o != z and
                              self.zones[o].buffer(1e-6).covers(self.zones[z])} for z in REST_ZONES}
            self._shared[id(board)] = (board, Table(board), containers, {})
        _b, self.table, self._containers, self._region_cache = self._shared[id(board)]

    # -- chips --------------------------------------------------------------------------------
    def r(self, chip):
        return self.board.chip_radius(CHIPS[chip])

    def _where(self, chip):
        st = self.state[chip]
        return {"hand": "in hand", "off": "off the board", "board": "on the board",
                "cup": f"in cup {st[1] if st[0] == 'cup' else ''}"}[st[0]]

    def on_board(self, exclude=()):
        """[(chip, x, y, r)] of chips lying on the board."""
        return [(c, st[1], st[2], self.r(c)) for c, st in self.state.items()
                if st[0] == "board" and c not in exclude]

    # -- the whole scenario --------------------------------------------------------------------
    def compile(self, scn):
        self.state = {c: ("hand",) for c in CHIPS}
        self.power = True
        tl = [{"op": "boot", "game": scn.game, "players": scn.players, "options": dict(scn.options)}]
        tl += [{"op": "press", "button": b} for b in menu_presses(scn)]
        tl.append({"op": "wait", "ms": MENU_DONE_MS})
        for i, step in enumerate(scn.steps):
            try:
                tl += self.step(step)
            except ScenarioError as e:
                raise ScenarioError(f"step {scn.number(i)}: {e}") from None
        return tl

    def step(self, step):
        kind = step[0]
        if kind == "press":
            return [{"op": "press", "button": step[1]}]
        if kind == "wait":
            return [{"op": "wait", "ms": step[1]}]
        if kind == "snapshot":
            return [{"op": "snapshot", "label": step[1]}]
        if kind == "hold":
            return [{"op": "hold", "button": step[1], "ms": step[2]}]
        if kind == "stall":
            return [{"op": "stall", "ms": step[1]}]
        if kind == "flash":
            return [dict({"op": "flash"}, **step[1])]
        if kind == "fault":
            return [dict({"op": "fault"}, **step[1])]
        if kind == "power":
            want = step[1] == "on"
            if want == self.power:
                raise ScenarioError(f"power is already {'on' if want else 'cut'}")
            self.power = want
            return [{"op": "power", "state": step[1]}]
        if kind == "take":
            chip = step[1]
            if self.state[chip][0] not in ("board", "cup"):
                raise ScenarioError(f"take {chip}: it is {self._where(chip)}, not on the board or in a cup")
            self.state[chip] = ("hand",)
            return [{"op": "lift", "chip": chip}]
        if kind == "place":
            return self.place(step[1])
        if kind == "shoot":
            return self.shoot(step[1], step[2], step[3])
        if kind == "flick":
            from boardsim import physics
            return physics.flick(self, step[1], step[2])
        raise AssertionError(kind)

    # -- place ----------------------------------------------------------------------------------
    def place(self, targets):
        for chip in targets:
            if self.state[chip][0] in ("board", "cup"):
                raise ScenarioError(f"place {chip}: it is {self._where(chip)}; take it first")
        spots = {}
        # fixed points first, then borders, then zones (which spread around the others)
        for chip, t in targets.items():
            if isinstance(t, tuple) and t[0] == "point":
                spots[chip] = self.point_spot(chip, t[1], t[2], self._others(), rest=True)
                self.state[chip] = ("board",) + spots[chip]
        for chip, t in targets.items():
            if isinstance(t, tuple) and t[0] == "border":
                spots[chip] = self.border_spot(chip, t[1], t[2], self._others())
                self.state[chip] = ("board",) + spots[chip]
        groups = {}
        for chip, t in targets.items():
            if isinstance(t, str):
                groups.setdefault(t, []).append(chip)
        for zone, chips in groups.items():
            for chip, xy in zip(chips, self.zone_spots(zone, chips, self._others())):
                spots[chip] = xy
                self.state[chip] = ("board",) + xy
        return [{"op": "put", "chip": c, "x": _mm(spots[c][0]), "y": _mm(spots[c][1])} for c in targets]

    def _others(self):
        """Discs to keep clear of when choosing a spot: the chips on the board."""
        return [(x, y, r) for _c, x, y, r in self.on_board()]

    # -- spots ----------------------------------------------------------------------------------
    def point_spot(self, chip, x, y, others, rest):
        """A point as given; refused where the disc would overlap the edge, an obstacle or a
        chip (a chip coming to rest keeps GAP from the others, one passing by CLEAR)."""
        r = self.r(chip)
        p = np.array([x, y])
        where = f"({x:g}, {y:g})"
        clear = 0.0 if rest else CLEAR
        if not self.table.inside(p[None], r + clear)[0]:
            raise ScenarioError(f"{chip} at {where} would not lie entirely on the board")
        for prim in self.table.fixed:
            if not prim.label.startswith("gate") and prim.dist_pt(p) < prim.R + r + clear:
                raise ScenarioError(f"{chip} at {where} would overlap the {prim.label}")
        for ox, oy, orr in others:
            if math.hypot(x - ox, y - oy) < r + orr + (GAP if rest else CLEAR):
                raise ScenarioError(f"{chip} at {where} would touch the chip at ({ox:.1f}, {oy:.1f})")
        return (float(x), float(y))

    def _zone_region(self, zone, r):
        """Centres where a disc of radius r lies entirely in `zone`, touching no obstacle and
        overlapping no other zone (zones containing this one excepted)."""
        key = (zone, r)
        if key not in self._region_cache:
            z = self.zones[zone]
            others = [self.zones[o] for o in REST_ZONES
                      if o != zone and o not in self._containers[zone]]
            region = z.difference(unary_union(others + [self._obstacles]))
            self._region_cache[key] = region.buffer(-r, quad_segs=16)
        return self._region_cache[key]

    def _free_region(self, zone, r, others, avoid=()):
        region = self._zone_region(zone, r)
        cut = [Point(ox, oy).buffer(r + orr + GAP, quad_segs=16) for ox, oy, orr in others]
        cut += [Point(ax, ay).buffer(ar, quad_segs=16) for ax, ay, ar in avoid]
        if cut:
            region = region.difference(unary_union(cut))
        return region

    # a polygon's pole by its exact geometry (WKB): the same zone with the same chips beside it
    # comes again and again in a run's scenarios (2 of 3 polylabel calls in test_compile's)
    _poles = {}
    POLES_KEPT = 4096

    @classmethod
    def _pole(cls, region):
        """(x, y, clearance) of the point deepest inside `region`, or None."""
        best = None
        for poly in getattr(region, "geoms", [region]):
            if poly.is_empty or poly.geom_type != "Polygon" or poly.area <= 0:
                continue
            key = poly.wkb
            got = cls._poles.get(key)
            if got is None:
                got = cls._poly_pole(poly)
                if not os.environ.get("ZENN_NO_COMPILE_CACHE"):
                    if len(cls._poles) >= cls.POLES_KEPT:
                        cls._poles.clear()
                    cls._poles[key] = got
            if best is None or got[2] > best[2]:
                best = got
        return best

    @staticmethod
    def _poly_pole(poly):
        """(x, y, clearance) of the point deepest inside the one polygon `poly`."""
        pt = polylabel(poly, tolerance=0.05)
        d = poly.boundary.distance(pt)
        # the middle of the plateau of nearly equal clearance (a pocket's is a short line)
        core = poly.buffer(-(d - 0.1)) if d > 0.1 else None
        if core is not None and not core.is_empty and core.contains(core.centroid):
            c = core.centroid
            dc = poly.boundary.distance(c)
            if dc >= d - 0.1:
                pt, d = c, dc
        return (pt.x, pt.y, d)

    def zone_spots(self, zone, chips, others, avoid=()):
        """Spots for `chips` (names) in `zone`, spread apart, clear of `others` (x, y, r)."""
        if zone.endswith(".zline"):
            out = []
            for chip in chips:
                xy = self.zline_spot(chip, zone, others + [(x, y, self.r(c)) for c, (x, y) in zip(chips, out)])
                out.append(xy)
            return out
        radii = [self.r(c) for c in chips]
        if len(chips) == 1:
            pole = self._pole(self._free_region(zone, radii[0], others, avoid))
            if avoid and (pole is None or pole[2] < MIN_MARGIN):
                pole = self._pole(self._free_region(zone, radii[0], others))
            if pole is None or pole[2] < MIN_MARGIN:
                self._no_room(chips[0], zone, others)
            return [(pole[0], pole[1])]
        # several chips: one after the other, each at the pole of what the others leave. When
        # that leaves one of them short of room (the first took the middle), try again from
        # first positions on the rim, re-placing each chip with the others fixed; keep the
        # arrangement whose tightest chip has the most room.
        starts = [None]
        base = self._zone_region(zone, radii[0])
        for poly in getattr(base, "geoms", [base]):
            if poly.geom_type == "Polygon" and not poly.is_empty:
                ring = poly.exterior
                starts += [ring.interpolate(f, normalized=True) for f in np.linspace(0, 1, 6, endpoint=False)]
        best = None
        for s in starts:
            if best is not None and best[0] >= GOOD_MARGIN:
                break
            pos = [None] * len(chips)
            if s is not None:
                pos[0] = (s.x, s.y, 0.0)
            for rnd in range(1 if s is None else 3):
                for i in range(len(chips)):
                    if rnd == 0 and pos[i] is not None:
                        continue
                    near = others + [(p[0], p[1], radii[j]) for j, p in enumerate(pos) if j != i and p is not None]
                    pos[i] = self._pole(self._free_region(zone, radii[i], near))
                    if pos[i] is None:
                        break
                if any(p is None for p in pos):
                    break
            if any(p is None for p in pos):
                continue
            score = min(p[2] for p in pos)
            if best is None or score > best[0]:
                best = (score, pos)
        if best is None or best[0] < MIN_MARGIN:
            raise ScenarioError(f"no room for {', '.join(chips)} together entirely inside {zone}")
        return [(p[0], p[1]) for p in best[1]]

    def _no_room(self, chip, zone, others):
        alone = self._pole(self._zone_region(zone, self.r(chip)))
        if alone is None or alone[2] < MIN_MARGIN:
            raise ScenarioError(f"{chip} cannot lie entirely inside {zone}")
        raise ScenarioError(f"no room left for {chip} entirely inside {zone} beside the other chips")

    # the spots found on lines, by everything they depend on (the board, the disc's radius, the
    # lines' exact geometry, the zones allowed and needed, the chips beside): a scenario's chips
    # put on the same border beside the same chips, again and again in a run's scenarios (a spot
    # not found is looked for again, to say where in its error)
    _line_spots = {}

    def _line_spot(self, chip, lines, allowed, others, what, must=()):
        """A centre on `lines` (shapely) where the disc touches no obstacle or chip, overlaps
        every zone in `must` and the fewest zones outside `allowed`: the middle of the longest
        such stretch (ties: the first)."""
        if os.environ.get("ZENN_NO_COMPILE_CACHE"):
            return self._line_spot_found(chip, lines, allowed, others, what, must)
        key = (id(self.board), self.r(chip), lines.wkb, frozenset(allowed),
               tuple(tuple(o) for o in others), frozenset(must))
        got = self._line_spots.get(key)
        if got is None:
            got = self._line_spot_found(chip, lines, allowed, others, what, must)
            if len(self._line_spots) >= self.POLES_KEPT:
                self._line_spots.clear()
            self._line_spots[key] = got
        return got

    def _line_spot_found(self, chip, lines, allowed, others, what, must=()):
        r = self.r(chip)
        usable = lines.intersection(self.board.outline.buffer(-(r + CLEAR), join_style="mitre"))
        blocked = [self._obstacles.buffer(r + CLEAR, quad_segs=16)]
        blocked += [Point(ox, oy).buffer(r + orr + GAP, quad_segs=16) for ox, oy, orr in others]
        usable = usable.difference(unary_union(blocked))
        pieces = [g for g in _lines_of(usable) if g.length > 0]
        if not pieces:
            raise ScenarioError(f"no free spot for {chip} {what}")
        step = 0.5
        samples, owner = [], []
        for k, piece in enumerate(pieces):
            n = max(2, int(piece.length / step) + 1)
            samples += [piece.interpolate(f, normalized=True) for f in np.linspace(0, 1, n)]
            owner += [k] * n
        samples = np.array(samples, dtype=object)
        owner = np.array(owner)
        counts = np.zeros(len(samples), dtype=int)
        for z in REST_ZONES:
            near = shapely.dwithin(self.zones[z], samples, r - 1e-6)
            if z in must:
                counts[~near] += 1000
            elif z not in allowed:
                counts[near] += 1
        best = None     # ((count, -length), (x, y))
        i = 0
        while i < len(samples):
            j = i
            while j + 1 < len(samples) and owner[j + 1] == owner[i] and counts[j + 1] == counts[i]:
                j += 1
            piece = pieces[owner[i]]
            length = samples[i].distance(samples[j]) if i != j else 0.0
            key = (int(counts[i]), -round(length, 6))
            if best is None or key < best[0]:
                mid = piece.interpolate((piece.project(samples[i]) + piece.project(samples[j])) / 2)
                best = (key, (mid.x, mid.y))
            i = j + 1
        if best[0][0] >= 1000:
            raise ScenarioError(f"no free spot for {chip} {what}")
        return best[1]

    def border_spot(self, chip, z1, z2, others):
        a, b = self.zones[z1], self.zones[z2]
        lines = unary_union([a.boundary.intersection(b), b.boundary.intersection(a)])
        if not _lines_of(lines):
            raise ScenarioError(f"{z1} and {z2} share no border")
        allowed = {z1, z2} | self._containers[z1] | self._containers[z2]
        return self._line_spot(chip, lines, allowed, others, f"on the border of {z1} and {z2}")

    def zline_spot(self, chip, zone, others):
        """"On the Zenn line": the disc overlaps it. Centres on lines along it, from its middle
        to nearly a radius in front of it or behind it; avoiding the pocket where possible."""
        end = zone.split(".")[0]
        b = self.board
        r = self.r(chip)
        h = b.zline_length / 2 + r - 1.0
        reach = b.zline_width / 2 + r - 1.0
        lines = [LineString([b.to_board(end, -h, b.zline_v + dv), b.to_board(end, h, b.zline_v + dv)])
                 for dv in np.arange(-reach, reach + 1e-9, 1.0)]
        allowed = {zone, f"{end}.cup3", f"{end}.z3", f"{end}.e2", f"{end}.n2", f"{end}.n3"}
        return self._line_spot(chip, MultiLineString(lines), allowed, others, f"on {zone}", must=(zone,))

    # -- shoot ----------------------------------------------------------------------------------
    def shoot(self, chip, path, knocks):
        self._routers = {}      # (ZENN_NO_COMPILE_CACHE: this shot's routers only, as before)
        if self.state[chip][0] != "board":
            raise ScenarioError(f"shoot {chip}: it is {self._where(chip)}")
        for kc, _ in knocks:
            if self.state[kc][0] != "board":
                raise ScenarioError(f"knock {kc}: it is {self._where(kc)}")
        knocked = [kc for kc, _ in knocks]
        movers = [chip] + knocked
        still = [(x, y, r) for c, x, y, r in self.on_board(exclude=movers)]
        knocked_at = [(self.state[c][1], self.state[c][2], self.r(c)) for c in knocked]
        # the shooter: around the chips at rest, ending clear of the knocked chips' places too
        plan = self.plan(chip, path, still, spot_others=still + knocked_at)
        moves = [plan]
        t_of, _ = _timed(plan)
        settled = [] if plan["end"] != "rest" else [(plan["pts"][-1][0], plan["pts"][-1][1], self.r(chip))]
        for kc, kpath in knocks:
            kx, ky = self.state[kc][1], self.state[kc][2]
            kplan = self.plan(kc, kpath, still + settled, spot_others=still + settled)
            t0 = _time_at_contact(t_of, kx, ky, self.r(chip) + self.r(kc))
            moves.append(kplan)
            kplan["t0"] = t0
            if kplan["end"] == "rest":
                settled.append((kplan["pts"][-1][0], kplan["pts"][-1][1], self.r(kc)))
        out = []
        for m in moves:
            pts, index = _timed(m, m.get("t0", 0.0))
            ts = _int_times([t for _x, _y, t in pts])
            hits = [ts[index[i]] for i in m["hit_idx"]]
            out.append({"chip": m["chip"], "pts": [[_mm(x), _mm(y), t] for (x, y, _t), t in zip(pts, ts)],
                        "end": m["end"], "hits": hits})
            end = m["end"]
            if end == "rest":
                self.state[m["chip"]] = ("board", float(m["pts"][-1][0]), float(m["pts"][-1][1]))
            elif end == "off":
                self.state[m["chip"]] = ("off",)
            else:
                self.state[m["chip"]] = ("cup", end[-1])
        return [{"op": "move", "moves": out}]

    # Plans already routed, by everything a plan depends on (the board, the chip, where it lies,
    # its path, the discs it avoids and those its spots keep clear of): a game routes the same
    # shot from the same place again and again (a bowling frame's "off" from the pocket, each
    # test's nine open frames), and routing is most of compiling (0.1 - 2 s a shot). The
    # router is deterministic, so a kept plan is the plan routed again; a plan that raised is
    # not kept. ZENN_NO_COMPILE_CACHE=1 routes every time (boardsim/testing.py).
    _plans = {}
    PLANS_KEPT = 4096

    def plan(self, chip, path, still, spot_others):
        """Route `chip` from where it lies along `path`. still: discs it must not touch.
        Returns {"chip", "pts": [(x, y)], "end", "hit_idx": [index in pts], "dense": [...]}
        (a new dict each call: shoot() adds to it)."""
        key = (id(self.board), chip, tuple(self.state[chip]), _frozen(path), _frozen(still),
               _frozen(spot_others))
        got = self._plans.get(key)
        if got is None:
            got = self._plan(chip, path, still, spot_others)
            if not os.environ.get("ZENN_NO_COMPILE_CACHE"):
                if len(self._plans) >= self.PLANS_KEPT:
                    self._plans.clear()
                self._plans[key] = got
        return dict(got, pts=list(got["pts"]), hit_idx=list(got["hit_idx"]))

    def _plan(self, chip, path, still, spot_others):
        r = self.r(chip)
        start = np.array(self.state[chip][1:3])
        prims = list(self.table.fixed) + [Prim(f"chip at ({x:.1f}, {y:.1f})", [(x, y)], R)
                                          for x, y, R in still]
        # 1. where each waypoint is
        pos = []
        for i, w in enumerate(path):
            last = i == len(path) - 1
            if isinstance(w, str) and w.endswith(".cup"):
                pos.append(np.array(self.board.cup_center(w[0])))
            elif w == "off" or (isinstance(w, tuple) and w[0] == "hit"):
                pos.append(None)
            elif isinstance(w, str):
                avoid = [(start[0], start[1], MIN_MOVE)] if last else []
                pos.append(np.array(self.zone_spots(w, [chip], spot_others, avoid)[0]))
            elif w[0] == "border":
                pos.append(np.array(self.border_spot(chip, w[1], w[2], spot_others)))
            else:
                pos.append(np.array(self.point_spot(chip, w[1], w[2], spot_others if last else still, rest=last)))
        for i, w in enumerate(path):
            if isinstance(w, tuple) and w[0] == "hit":
                prev = pos[i - 1] if i > 0 else start
                nxt = next((p for p in pos[i + 1:] if p is not None), None)
                pos[i] = self.hit_point(w[1], prev, nxt, r, prims)
        # 2. legs
        pts = [start]
        hit_idx = []
        prev_w = None
        end = "rest"
        for i, w in enumerate(path):
            p = pts[-1]
            if w == "off":
                leg, out_pt = self.leg_off(chip, p, prims, prev_w)
                pts = _dedupe(pts + leg[1:] + [out_pt])
                end = "off"
                break
            q = pos[i]
            cup_end = w[0] if isinstance(w, str) and w.endswith(".cup") else None
            via_pocket = cup_end is not None and prev_w == f"{cup_end}.pocket"
            leg = self.leg(chip, p, q, prims, cup_end, via_pocket, _describe(w))
            pts = _dedupe(pts + leg[1:])
            if isinstance(w, tuple) and w[0] == "hit":
                hit_idx.append(len(pts) - 1)
            if cup_end:
                end = f"cup_{cup_end}"
            prev_w = w
        if end == "rest" and sum(float(np.hypot(*(b - a))) for a, b in zip(pts, pts[1:])) < 1.0:
            raise ScenarioError(f"{chip} would not move: it already lies where the path ends")
        return {"chip": chip, "pts": [tuple(map(float, p)) for p in pts], "end": end, "hit_idx": hit_idx}

    def _touches_gate(self, p, r, end):
        g = self.table.gate(end)
        return g.dist_pt(p) < r + CLEAR

    def leg(self, chip, p, q, prims, cup_end, via_pocket, what):
        """Route from p to q. The cup `cup_end` may be entered; a gate only when p or q lies in
        it (a chip in a pocket leaves through its gate; one going into the pocket crosses it;
        a chip in pocket X going into cup X crosses it only when the path says X.pocket)."""
        r = self.r(chip)
        exempt = set()
        if cup_end:
            exempt.add(f"cup {cup_end}")
        exits = []
        for e in ENDS:
            if self._touches_gate(q, r, e):
                exempt.add(f"gate {e}")
            elif self._touches_gate(p, r, e):
                if via_pocket and e == cup_end:
                    exempt.add(f"gate {e}")
                else:
                    exits.append(e)
        for prim in prims:
            if prim.label.startswith("gate") or prim.label in exempt:
                continue
            if prim.dist_pt(p) < prim.R + r + CLEAR:
                exempt.add(prim.label)      # it starts in contact: it may move off
            elif prim.dist_pt(q) < prim.R + r + CLEAR:
                raise ScenarioError(f"{chip} cannot {what}: it would touch the {prim.label}")
        pts = [np.asarray(p, dtype=float)]
        for e in exits:
            # out of the pocket, forwards, before the gate counts again
            b = self.board
            xp = np.array(b.to_board(e, 0.0, b.block_v1 + r + CLEAR + 2 * VIA))
            hop = self._route(r, prims, exempt | {f"gate {e}"}, pts[-1], xp)
            if hop is None:
                raise ScenarioError(f"{chip} cannot leave the {e} pocket (something lies in front of it)")
            pts += hop[1:]
        rest = self._route(r, prims, exempt, pts[-1], q)
        if rest is None:
            raise ScenarioError(f"no way for {chip} to {what} without touching something else")
        return pts + rest[1:]

    # Routers kept from shot to shot and scenario to scenario, by everything a route depends on
    # (the board, the radius, each obstacle's label, corners and reach): a router's via points
    # and visibility matrix, most of a route's cost, are made once for the fixed obstacles and
    # the same chips at rest (a bowling frame's, each test's open frames). A router holds
    # nothing else, so a kept one routes as a new one would. ZENN_NO_COMPILE_CACHE=1: a shot's
    # own only.
    _kept_routers = {}
    ROUTERS_KEPT = 64

    def _route(self, r, prims, exempt, p, q):
        active = [pr for pr in prims if pr.label not in exempt]
        key = (id(self.board), r, tuple((pr.label, pr.v.tobytes(), pr.R) for pr in active))
        kept = self._routers if os.environ.get("ZENN_NO_COMPILE_CACHE") else self._kept_routers
        router = kept.get(key)
        if router is None:
            vias = []
            b = self.board
            for e in ENDS:  # the way into a pocket: straight down its middle
                vias.append(b.to_board(e, 0.0, b.block_v1 + r + CLEAR + 2 * VIA))
                vias.append(b.to_board(e, 0.0, b.gate_v))
            router = Router(self.table, r, active, vias)
            if len(kept) >= self.ROUTERS_KEPT:
                kept.clear()
            kept[key] = router
        return router.route(p, q)

    def leg_off(self, chip, p, prims, prev_w):
        """To the nearest edge it can reach, then one chip diameter past it."""
        r = self.r(chip)
        cands = []
        for n, _d, a, bb in self.table.halfplanes:
            L = float(np.hypot(*(bb - a)))
            for s in np.arange(r + 2.0, L - r - 2.0 + 1e-9, 10.0):
                e = a + (bb - a) * (s / L)
                cands.append((e + n * (r + CLEAR + VIA), e - n * (2 * r)))
        ok = Router(self.table, r, [pr for pr in prims if not pr.label.startswith("gate")]).free(
            np.array([c[0] for c in cands]), np.array([c[0] for c in cands]))
        cands = [c for c, good in zip(cands, ok) if good]
        cands.sort(key=lambda c: float(np.hypot(*(c[0] - p))))
        best = None
        tried = 0
        for launch, out in cands:
            if best is not None and float(np.hypot(*(launch - p))) >= best[0]:
                break
            try:
                leg = self.leg(chip, p, launch, prims, None, False, "the edge")
            except ScenarioError:
                continue
            length = sum(float(np.hypot(*(b - a))) for a, b in zip(leg, leg[1:]))
            if best is None or length < best[0]:
                best = (length, leg, out)
            tried += 1
            if tried >= 12:
                break
        if best is None:
            raise ScenarioError(f"no way for {chip} off the board")
        return best[1], best[2]

    def hit_point(self, what, prev, nxt, r, prims):
        """Where the chip touches the bumper or block `what`, bouncing from prev towards nxt."""
        b = self.board
        d = r + CLEAR + HIT_GAP
        router = Router(self.table, r, [pr for pr in prims if not pr.label.startswith("gate")])


        def cost(c):
            return float(np.hypot(*(c - prev))) + (float(np.hypot(*(nxt - c))) if nxt is not None else 0.0)

        cands = []
        if what == "side":
            lim = b.half_l - b.corner - r
            # a chip bouncing off one side bumper goes on to the other one
            sides = [-1.0, 1.0] if abs(abs(prev[0]) - (b.half_w - d)) > 1.0 else [-math.copysign(1.0, prev[0])]
            for sgn in sides:
                xs = sgn * (b.half_w - d)
                y = _reflect(prev[0], prev[1], nxt, xs, axis=0)
                for dy in _shifts():
                    cands.append(np.array([xs, float(np.clip(y + dy, -lim, lim))]))
        else:
            end, part = what.split(".")
            pu, pv = _to_end(b, end, prev)
            nu_nv = _to_end(b, end, nxt) if nxt is not None else None
            if part == "back":
                lim = b.half_w - b.corner - r
                u = _reflect(pv, pu, None if nu_nv is None else (nu_nv[1], nu_nv[0]), d, axis=0)
                for du in _shifts():
                    cands.append(np.array(b.to_board(end, float(np.clip(u + du, -lim, lim)), d)))
            else:   # a Zenn block: its front, back or outer face
                g, w = b.gap / 2, b.block_width
                for sgn in (-1.0, 1.0):
                    u_in, u_out = sgn * g, sgn * (g + w)
                    for f in (0.2, 0.5, 0.8):
                        u = u_in + (u_out - u_in) * f
                        cands.append(np.array(b.to_board(end, u, b.block_v1 + d)))
                        cands.append(np.array(b.to_board(end, u, b.block_v0 - d)))
                        v = b.block_v0 + (b.block_v1 - b.block_v0) * f
                        cands.append(np.array(b.to_board(end, u_out + sgn * d, v)))
        C = np.array(cands)
        ok = router.free(C, C)
        for e in ENDS:
            g = self.table.gate(e)
            ok &= g.dist(C, C) >= r + CLEAR
        cands = [c for c, good in zip(cands, ok) if good]
        if not cands:
            raise ScenarioError(f"no free spot to hit {what}")
        # a chip that already touches the bumper (two hits in a row) bounces somewhere else
        away = [c for c in cands if float(np.hypot(*(c - prev))) >= 2 * r]
        return min(away or cands, key=cost)


# -- helpers ------------------------------------------------------------------------------------

def _frozen(v):
    """A plan's argument as a key: lists as tuples, floats exactly (-0.0 apart from 0.0)."""
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, np.ndarray):
        return ("array",) + _frozen(v.tolist())
    if isinstance(v, float):
        return ("f", v.hex())
    return v


def _dedupe(pts):
    out = [pts[0]]
    for p in pts[1:]:
        if float(np.hypot(*(np.asarray(p) - np.asarray(out[-1])))) > 1e-6:
            out.append(p)
    return out


def _shifts():
    out = [0.0]
    for k in range(1, 21):
        out += [15.0 * k, -15.0 * k]
    return out


def _reflect(pa, pb, nxt, line, axis=0):
    """Bounce point on the line {coordinate `axis` == line} for a chip going from p to nxt:
    returns the other coordinate. p = (pa, pb) with pa along `axis`."""
    if nxt is None:
        return pb
    qa, qb = nxt[0], nxt[1]
    qa2 = 2 * line - qa
    if abs(qa2 - pa) < 1e-9:
        return pb
    t = (line - pa) / (qa2 - pa)
    return pb + t * (qb - pb)


def _to_end(b, end, p):
    x, y = float(p[0]), float(p[1])
    return (x, y + b.half_l) if end == "a" else (-x, b.half_l - y)


def _lines_of(g):
    if g.is_empty:
        return []
    if g.geom_type == "LineString":
        return [g]
    if g.geom_type == "MultiLineString":
        return list(g.geoms)
    if hasattr(g, "geoms"):
        out = []
        for x in g.geoms:
            out += _lines_of(x)
        return out
    return []


def _describe(w):
    if isinstance(w, str):
        return f"reach {w}"
    if w[0] == "border":
        return f"reach {w[1]}|{w[2]}"
    if w[0] == "point":
        return f"reach ({w[1]:g}, {w[2]:g})"
    return f"hit {w[1]}"


def _mm(v):
    return round(float(v), 2) + 0.0     # no -0.0


def _timed(plan, t0=0.0):
    """[(x, y, t_ms)]: constant speed, braking to a stop over the last BRAKE_MM when the chip
    comes to rest (a chip dropping into a cup or leaving the board keeps its speed)."""
    pts = [np.asarray(p, dtype=float) for p in plan["pts"]]
    seg = [float(np.hypot(*(b - a))) for a, b in zip(pts, pts[1:])]
    total = sum(seg)
    brake = min(BRAKE_MM, total) if plan["end"] == "rest" else 0.0
    s_brake = total - brake
    T = s_brake / SPEED + (2 * brake / SPEED if brake > 0 else 0.0)

    def t_at(s):
        if s <= s_brake or brake <= 0:
            return s / SPEED
        a = SPEED * SPEED / (2 * brake)
        return T - math.sqrt(max(0.0, 2 * (total - s) / a))

    out = [(pts[0][0], pts[0][1], t0)]
    index = [0]             # plan point i is out[index[i]]
    s = 0.0
    for i, L in enumerate(seg):
        a, b = pts[i], pts[i + 1]
        s_end = s + L
        if brake > 0 and L > 0:
            # extra points where the chip brakes, so that linear interpolation brakes too
            k = max(1, math.floor((s - s_brake) / BRAKE_STEP_MM) + 1)
            while s_brake + k * BRAKE_STEP_MM < s_end - 1e-6:
                m = s_brake + k * BRAKE_STEP_MM
                if m > s + 1e-6:
                    f = (m - s) / L
                    out.append((a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), t0 + t_at(m)))
                k += 1
        s = s_end
        index.append(len(out))
        out.append((b[0], b[1], t0 + t_at(s)))
    if len(out) == 1:
        out.append((pts[0][0], pts[0][1], t0 + 1.0))
    return out, index


def _int_times(ts):
    out = []
    for t in ts:
        v = int(round(t))
        if out and v <= out[-1]:
            v = out[-1] + 1
        out.append(v)
    return out


def _time_at_contact(timed, x, y, reach):
    """When the moving chip (timed points) first comes within `reach` of (x, y), or else
    closest to it."""
    best = None
    for (x0, y0, t0), (x1, y1, t1) in zip(timed, timed[1:]):
        for f in np.linspace(0, 1, 21):
            px, py = x0 + f * (x1 - x0), y0 + f * (y1 - y0)
            d = math.hypot(px - x, py - y)
            t = t0 + f * (t1 - t0)
            if d <= reach + 1.0:
                return t
            if best is None or d < best[0]:
                best = (d, t)
    return best[1] if best else 0.0
