"""Flick physics: chips sliding, bouncing and dropping on the board (pymunk), for the scenario
step {"flick": CHIP, "v": [vx, vy]} and the play page. Host side only (CPython).

A flick gives one chip a velocity (mm/s, board coordinates: docs/architecture.md); the host
simulates every chip on the board to rest and turns what happened into the same timeline "move"
op that a waypoint shot compiles to, so the firmware sees a flick exactly as it sees a path:

    moves, final = simulate_flick(board, {"small": ("small", x, y), "big1": ("big", x, y)}, "small", (0, 1600))
    # moves: [{"chip", "pts": [[x, y, t_ms], ...], "end": "rest"|"cup_a"|"cup_b"|"off", "hits": [t_ms]}]
    # final: {chip: ("board", x, y) | ("cup", "a"|"b") | ("off",)} for every chip that moved

The model (parameters in Params; docs/simulator.md gives the reasons):
- The board is seen from above. Each chip is a rigid disc of its diameter (board/geometry.json),
  mass in proportion to its area, no spin (chips slide; their spin does not change where they
  go in this model), sliding with Coulomb friction: a constant deceleration `decel` against the
  velocity until it stops (a straight slide from speed v stops after v^2 / (2 decel)).
- Bumpers (sides, backs and the four 45-degree corners) and the Zenn blocks are straight walls
  without friction: a bounce keeps the velocity along the wall and reverses the part across it,
  scaled by the restitution (`bumper_e`, `block_e`); with restitution 1 it leaves at the mirrored
  angle. Chips knock each other with restitution `chip_e`, also without friction.
- A cup is a hole: a chip drops in as soon as its centre is over it (within the cup's radius
  of its centre). A chip whose centre stays outside slides on; it can come to rest hanging on the
  lip, overlapping the hole.
- Off the board: the bumpers are low. A chip that meets a bumper with its speed across the
  bumper above `jump_speed` jumps it and leaves the board (it flies on without friction until its
  disc is clear of the outline). Slower chips bounce. The blocks are never jumped.
- Every contact with a bumper or block rings the hit sensor: its time goes into "hits".

Deterministic: the same chips and velocity give the same moves (fixed time step, chips added in
name order). Times in the move are milliseconds from the flick, positions millimetres, both
rounded to 0.01; points every `sample_ms` while a chip moves and at each contact, so that the
straight lines between them follow the simulated path.
"""
import math
from dataclasses import dataclass

import pymunk

from boardsim.geometry import ENDS

CHIP, BUMPER, BLOCK = 1, 2, 3
G = 9810.0      # mm/s^2


@dataclass(frozen=True)
class Params:
    decel: float = 0.2 * G        # sliding friction: mu_k = 0.2 (a chip on a lacquered board)
    chip_e: float = 0.85          # chip on chip (clay poker chips)
    bumper_e: float = 0.8         # rubber bumpers
    block_e: float = 0.6          # wooden Zenn blocks
    jump_speed: float = 2500.0    # mm/s across a bumper: faster chips jump it and leave the board
    max_speed: float = 6000.0     # the fastest flick the simulator takes (a slam; the scenario refuses more)
    dt: float = 0.0005            # s per physics step
    sample_ms: float = 10.0       # a point of the path every this many ms while moving
    max_s: float = 30.0           # give up (everything stops where it is) after this long
    big_mass: float = 10.0        # g, a 39 mm poker chip; a small one weighs in proportion to its area


PARAMS = Params()


class Track:
    """One chip's motion: points from when it started moving, its end, the bumper/block hits."""

    def __init__(self, name):
        self.name = name
        self.pts = []
        self.hits = []
        self.end = None     # None while moving, then "rest", "cup_a", "cup_b", "off"

    def add(self, x, y, t_ms):
        p = [_r(x), _r(y), _r(t_ms)]
        if self.pts and p[2] <= self.pts[-1][2]:
            self.pts[-1] = p
        else:
            self.pts.append(p)

    def as_move(self):
        return {"chip": self.name, "pts": self.pts, "end": self.end, "hits": self.hits}


def _r(v):
    return round(float(v), 2) + 0.0


class Sim:
    """The board's walls and the chips on it, in one pymunk space (mm, s)."""

    def __init__(self, board, params=PARAMS):
        self.board = board
        self.p = params
        self.space = pymunk.Space()
        self.space.gravity = (0.0, 0.0)
        self.space.collision_slop = 0.05
        self.chips = {}         # name -> (body, shape, kind)
        self.tracks = {}
        self.t_ms = 0.0
        self.jumped = set()
        self._contacts = []     # (chip name, wall) begun this step
        self._walls(board)
        sp = self.space
        sp.on_collision(CHIP, BUMPER, begin=self._wall_begin, pre_solve=self._wall_pre, data=BUMPER)
        sp.on_collision(CHIP, BLOCK, begin=self._wall_begin, data=BLOCK)
        sp.on_collision(CHIP, CHIP, begin=self._chip_begin)
        self.cups = [(e, board.cup_center(e)) for e in ENDS]

    def _walls(self, board):
        sb = self.space.static_body
        ring = list(board.outline.exterior.coords)[:-1]
        for a, b in zip(ring, ring[1:] + ring[:1]):
            s = pymunk.Segment(sb, a, b, 0.0)
            s.elasticity = self.p.bumper_e
            s.friction = 0.0
            s.collision_type = BUMPER
            self.space.add(s)
        for e in ENDS:
            for poly in board.blocks(e).geoms:
                s = pymunk.Poly(sb, list(poly.exterior.coords)[:-1])
                s.elasticity = self.p.block_e
                s.friction = 0.0
                s.collision_type = BLOCK
                self.space.add(s)
        # the outline as inward half-planes, to tell when a jumping chip is clear of it
        self.halfplanes = []
        if _area2(ring) < 0:
            ring.reverse()
        for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1]):
            L = math.hypot(x1 - x0, y1 - y0)
            nx, ny = -(y1 - y0) / L, (x1 - x0) / L
            self.halfplanes.append((nx, ny, nx * x0 + ny * y0))

    # -- chips --------------------------------------------------------------------------------
    def add_chip(self, name, kind, x, y, v=(0.0, 0.0)):
        r = self.board.chip_radius(kind)
        big_r = self.board.chip_radius("big")
        mass = self.p.big_mass * (r / big_r) ** 2
        body = pymunk.Body(mass, math.inf)
        body.position = (float(x), float(y))
        body.velocity = (float(v[0]), float(v[1]))
        body.velocity_func = self._friction
        shape = pymunk.Circle(body, r)
        shape.elasticity = 1.0
        shape.friction = 0.0
        shape.collision_type = CHIP
        body.chip = name
        self.space.add(body, shape)
        self.chips[name] = (body, shape, kind)

    def _friction(self, body, gravity, damping, dt):
        if body.chip in self.jumped:
            return          # in the air
        vx, vy = body.velocity
        s = math.hypot(vx, vy)
        dv = self.p.decel * dt
        if s <= dv:
            body.velocity = (0.0, 0.0)
        else:
            f = (s - dv) / s
            body.velocity = (vx * f, vy * f)

    # -- contacts ----------------------------------------------------------------------------------
    def _wall_begin(self, arb, space, kind):
        chip_shape = arb.shapes[0]
        body = chip_shape.body
        name = body.chip
        if kind == BUMPER:
            if name in self.jumped:
                arb.process_collision = False
                return
            n = arb.normal                      # from the chip towards the wall
            vn = body.velocity.dot(n)
            if vn > self.p.jump_speed:
                self.jumped.add(name)
                arb.process_collision = False
        self._contacts.append(name)

    def _wall_pre(self, arb, space, kind):
        if arb.shapes[0].body.chip in self.jumped:
            arb.process_collision = False

    def _chip_begin(self, arb, space, data):
        arb.restitution = self.p.chip_e

    # -- running ---------------------------------------------------------------------------------
    def _moving(self, body):
        vx, vy = body.velocity
        return vx != 0.0 or vy != 0.0

    def run(self):
        """Simulate until every chip rests, dropped or left. Returns the tracks of the chips that
        moved, in the order they started moving."""
        p = self.p
        steps_per_sample = max(1, int(round(p.sample_ms / 1000.0 / p.dt)))
        started = []
        k = 0
        t_ms = 0.0
        max_k = int(p.max_s / p.dt)
        # chips flicked start now, from where they lie
        for name in sorted(self.chips):
            body = self.chips[name][0]
            if self._moving(body):
                self._start(name, body, t_ms, started)
        while True:
            self._contacts = []
            before = {n: tuple(b.position) for n, (b, _s, _k) in self.chips.items() if n not in self.tracks}
            self.space.step(p.dt)
            k += 1
            t_ms = k * p.dt * 1000.0
            for name in sorted(self.chips):
                body = self.chips[name][0]
                if name not in self.tracks and self._moving(body):
                    # it starts moving now, from where it lay before this step
                    self._start(name, body, t_ms - p.dt * 1000.0, started, before[name])
            for name in self._contacts:
                tr = self.tracks.get(name)
                if tr is not None:
                    tr.hits.append(_r(t_ms))
                    x, y = self.chips[name][0].position
                    tr.add(x, y, t_ms)
            for name in list(self.chips):
                body = self.chips[name][0]
                tr = self.tracks.get(name)
                if tr is None:
                    continue
                x, y = body.position
                gone = self._dropped(x, y) or self._left(name, x, y)
                if gone:
                    tr.add(x, y, t_ms)
                    tr.end = gone
                    self.space.remove(body, self.chips[name][1])
                    del self.chips[name]
                elif k % steps_per_sample == 0:
                    tr.add(x, y, t_ms)
            moving = [n for n, (b, _s, _k) in self.chips.items() if self._moving(b)]
            if not moving or k >= max_k:
                break
        self.t_ms = t_ms
        for name, tr in self.tracks.items():
            if tr.end is None:
                x, y = self.chips[name][0].position
                tr.add(x, y, t_ms)
                tr.end = "rest"
        return [self.tracks[n] for n in started]

    def _start(self, name, body, t_ms, started, at=None):
        tr = self.tracks[name] = Track(name)
        x, y = at if at is not None else body.position
        tr.add(x, y, max(0.0, t_ms))
        started.append(name)

    def _dropped(self, x, y):
        for e, (cx, cy) in self.cups:
            if math.hypot(x - cx, y - cy) < self.board.cup_radius:
                return f"cup_{e}"
        return None

    def _left(self, name, x, y):
        if name not in self.jumped:
            return None
        r = self.chips[name][1].radius
        for nx, ny, d in self.halfplanes:
            if nx * x + ny * y - d < -r:
                return "off"
        return None


def _area2(pts):
    return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))


def simulate_flick(board, chips, mover, v, params=PARAMS):
    """chips: {name: (kind, x, y)} of the chips lying on the board; `mover` among them gets the
    velocity v (mm/s). Returns (moves, final): the timeline's move list and where each chip
    that moved ended up."""
    sim = Sim(board, params)
    for name in sorted(chips):
        kind, x, y = chips[name]
        sim.add_chip(name, kind, x, y, v if name == mover else (0.0, 0.0))
    tracks = sim.run()
    final = {}
    for tr in tracks:
        if tr.end == "rest":
            final[tr.name] = ("board", tr.pts[-1][0], tr.pts[-1][1])
        elif tr.end == "off":
            final[tr.name] = ("off",)
        else:
            final[tr.name] = ("cup", tr.end[-1])
    return [tr.as_move() for tr in tracks], final


def slide_distance(speed, params=PARAMS):
    """How far a chip sliding freely at `speed` mm/s goes before it stops (mm)."""
    return speed * speed / (2.0 * params.decel)


def speed_for(distance, params=PARAMS):
    """The speed (mm/s) that carries a freely sliding chip `distance` mm."""
    return math.sqrt(2.0 * params.decel * distance)


def flick(compiler, chip, v, params=PARAMS):
    """The scenario step ("flick", chip, v) for boardsim.compile.Compiler: simulates every chip on
    the board, updates the compiler's chip states, returns the timeline's ops."""
    from boardsim.scenario import CHIPS, ScenarioError
    if compiler.state[chip][0] != "board":
        raise ScenarioError(f"flick {chip}: it is {compiler._where(chip)}")
    chips = {c: (CHIPS[c], x, y) for c, x, y, _r in compiler.on_board()}
    moves, final = simulate_flick(compiler.board, chips, chip, v, params)
    mine = next((m for m in moves if m["chip"] == chip), None)
    if mine is None or final.get(chip, ("",))[0] == "board" and math.hypot(
            final[chip][1] - chips[chip][1], final[chip][2] - chips[chip][2]) < 1.0:
        raise ScenarioError(f"flick {chip}: too slow, it would not move")
    for c, st in final.items():
        compiler.state[c] = st
    return [{"op": "move", "moves": moves}]
