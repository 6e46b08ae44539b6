"""The flick physics (boardsim/physics.py) against cases worked out by hand, and flicks judged
by the real firmware exactly like waypoint paths.

Hand formulas: Coulomb sliding friction is a constant deceleration a, so a chip at speed v stops
after v^2 / (2a) and has speed sqrt(v0^2 - 2 a d) after d mm; a frictionless wall with
restitution e keeps the velocity along it and turns the part across it into -e times itself; a
head-on knock of masses m1 -> m2 (at rest) with restitution e leaves m2 at (1 + e) m1 v / (m1 + m2).
"""
import math

import pytest
from shapely.geometry import LineString, Point

from boardsim import physics as P
from boardsim.compile import compile_scenario
from boardsim.geometry import Board
from boardsim.scenario import ScenarioError, parse
from boardsim.testing import Table

B = Board.load()
A = P.PARAMS.decel
R_SMALL = B.chip_radius("small")
R_BIG = B.chip_radius("big")
POCKET_A = (0.0, B.to_board("a", 0, B.gate_v)[1])       # the middle of end a's pocket


def flick(chips, mover, v, params=P.PARAMS):
    return P.simulate_flick(B, chips, mover, v, params)


def direction_after(move, t_ms, span=40.0):
    """The unit direction of travel from time t_ms to t_ms + span along a move's points."""
    pts = move["pts"]

    def at(t):
        for (x0, y0, t0), (x1, y1, t1) in zip(pts, pts[1:]):
            if t0 <= t <= t1:
                f = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
                return x0 + f * (x1 - x0), y0 + f * (y1 - y0)
        return pts[-1][0], pts[-1][1]
    (x0, y0), (x1, y1) = at(t_ms + 2.0), at(t_ms + 2.0 + span)
    L = math.hypot(x1 - x0, y1 - y0)
    return (x1 - x0) / L, (y1 - y0) / L


@pytest.mark.parametrize("v", [600.0, 1200.0, 1800.0])
def test_a_straight_slide_stops_where_friction_says(v):
    start = (-150.0, -400.0)         # clear of the blocks and cups all the way
    moves, final = flick({"big1": ("big", *start)}, "big1", (0.0, v))
    assert final["big1"][0] == "board"
    travelled = final["big1"][2] - start[1]
    assert travelled == pytest.approx(v * v / (2 * A), abs=1.0)
    assert final["big1"][1] == pytest.approx(start[0], abs=1e-6)
    # and it takes v / a seconds
    assert moves[0]["pts"][-1][2] == pytest.approx(1000.0 * v / A, abs=2.0)
    assert moves[0]["hits"] == [] and moves[0]["end"] == "rest"


def test_a_slide_across_the_board_obeys_the_same_friction():
    moves, final = flick({"small": ("small", -150.0, 0.0)}, "small", (900.0, 0.0))
    assert final["small"][1] - (-150.0) == pytest.approx(900.0 ** 2 / (2 * A), abs=1.0)


def _corner_case(params):
    # a chip sliding straight down (towards end a) at x = 200 meets the 45-degree corner
    # between the right side and a's back bumper (y = x - 660 there), not the side itself
    moves, final = flick({"small": ("small", 200.0, -300.0)}, "small", (0.0, -1500.0), params)
    m = moves[0]
    assert len(m["hits"]) >= 1
    return m, direction_after(m, m["hits"][0])


def test_a_bounce_off_a_45_degree_corner_leaves_at_the_mirrored_angle():
    m, (dx, dy) = _corner_case(P.Params(bumper_e=1.0))
    # in (0, -1), wall normal (-1, 1)/sqrt 2: out along (-1, 0), 45 degrees on the other side
    assert dx == pytest.approx(-1.0, abs=0.01)
    assert dy == pytest.approx(0.0, abs=0.02)
    # the hit happens on the corner's face: the contact lies on the segment y = x - 660
    x, y = next((px, py) for px, py, t in m["pts"] if t == m["hits"][0])
    d = abs(x - y - 660.0) / math.sqrt(2)
    assert d == pytest.approx(R_SMALL, abs=1.5)
    assert 180.0 < x + R_SMALL / math.sqrt(2) < 240.0


def test_a_corner_bounce_with_a_rubber_bumper_loses_only_the_part_across_it():
    e = P.PARAMS.bumper_e
    m, (dx, dy) = _corner_case(P.PARAMS)
    # along the wall -1/2 (1, 1) is kept, across it e/2 (-1, 1) reversed: (-(1+e)/2, -(1-e)/2)
    want = (-(1 + e) / 2, -(1 - e) / 2)
    n = math.hypot(*want)
    assert dx == pytest.approx(want[0] / n, abs=0.01)
    assert dy == pytest.approx(want[1] / n, abs=0.02)


def test_a_side_bounce_reverses_across_and_keeps_along():
    moves, _ = flick({"small": ("small", 0.0, 0.0)}, "small", (1200.0, 600.0), P.Params(bumper_e=1.0))
    m = moves[0]
    dx, dy = direction_after(m, m["hits"][0])
    assert (dx, dy) == (pytest.approx(-2 / math.sqrt(5), abs=0.01), pytest.approx(1 / math.sqrt(5), abs=0.01))


def _speed_to(distance):
    return math.sqrt(2 * A * distance)


def test_a_chip_flicked_at_the_pocket_drops_into_the_cup_through_the_gate():
    # from end a's pocket straight up the board: through b's Zenn blocks into b's cup. It drops
    # as soon as its centre is over the hole, cup_radius before the cup's centre
    cx, cy = B.cup_center("b")
    to_lip = cy - B.cup_radius - POCKET_A[1]
    v = _speed_to(to_lip) * 1.05
    moves, final = flick({"small": ("small", *POCKET_A)}, "small", (0.0, v))
    assert final == {"small": ("cup", "b")}
    m = moves[0]
    assert m["end"] == "cup_b" and m["hits"] == []      # between the blocks, touching neither
    path = LineString([(x, y) for x, y, _t in m["pts"]])
    (gx0, gy0), (gx1, gy1) = B.gate_segment("b")
    assert path.intersects(LineString([(gx0, gy0), (gx1, gy1)]))
    # it drops where its centre first lies over the hole
    x, y, _t = m["pts"][-1]
    assert math.hypot(x - cx, y - cy) < B.cup_radius
    assert math.hypot(x - cx, y - cy) > B.cup_radius - 4.0


def test_a_chip_a_little_too_slow_hangs_on_the_lip():
    cx, cy = B.cup_center("b")
    to_lip = cy - B.cup_radius - POCKET_A[1]
    v = _speed_to(to_lip - 5.0)
    moves, final = flick({"small": ("small", *POCKET_A)}, "small", (0.0, v))
    state, x, y = final["small"]
    assert state == "board"
    d = math.hypot(x - cx, y - cy)
    assert B.cup_radius < d < B.cup_radius + R_SMALL      # centre outside, the disc over the hole
    assert Point(x, y).buffer(R_SMALL).intersects(B.cup_hole("b"))
    assert y - POCKET_A[1] == pytest.approx(v * v / (2 * A), abs=1.0)


def test_a_big_chip_cannot_pass_the_gate():
    x, y = B.to_board("a", 0.0, B.block_v1 + R_BIG + 15.0)     # in front of a's blocks, facing them
    moves, final = flick({"big1": ("big", x, y)}, "big1", (0.0, -1500.0))
    assert final["big1"][0] == "board"
    assert moves[0]["hits"]                                    # it rang the blocks
    assert final["big1"][2] > y - 15.0 - 0.5                   # and bounced back from them


def test_off_the_board_means_jumping_a_bumper_fast():
    # across the side bumper faster than jump_speed: off; slower: a bounce
    fast = P.PARAMS.jump_speed + 600.0
    v_fast = math.sqrt(fast ** 2 + 2 * A * (B.half_w - R_SMALL))
    moves, final = flick({"small": ("small", 0.0, 0.0)}, "small", (v_fast, 0.0))
    assert final == {"small": ("off",)}
    assert moves[0]["end"] == "off" and len(moves[0]["hits"]) == 1
    x = moves[0]["pts"][-1][0]
    assert x > B.half_w + R_SMALL - 1.0                        # gone past the edge, disc and all
    slow = P.PARAMS.jump_speed - 300.0
    v_slow = math.sqrt(slow ** 2 + 2 * A * (B.half_w - R_SMALL))
    moves, final = flick({"small": ("small", 0.0, 0.0)}, "small", (v_slow, 0.0))
    assert final["small"][0] == "board" and final["small"][1] < B.half_w - R_SMALL


def test_a_head_on_knock_moves_the_other_chip_as_momentum_says():
    gap = 100.0
    small = (0.0, -100.0)
    big = (0.0, small[1] + R_SMALL + R_BIG + gap)
    v0 = 1500.0
    moves, final = flick({"small": ("small", *small), "big1": ("big", *big)}, "small", (0.0, v0))
    by_chip = {m["chip"]: m for m in moves}
    assert set(by_chip) == {"small", "big1"}
    m1 = P.PARAMS.big_mass * (R_SMALL / R_BIG) ** 2
    m2 = P.PARAMS.big_mass
    e = P.PARAMS.chip_e
    v = math.sqrt(v0 ** 2 - 2 * A * gap)                       # at contact
    v2 = (1 + e) * m1 * v / (m1 + m2)
    v1 = (m1 - e * m2) * v / (m1 + m2)                         # negative: the small chip bounces back
    assert final["big1"][2] - big[1] == pytest.approx(v2 * v2 / (2 * A), rel=0.03)
    assert v1 < 0
    contact_y = big[1] - R_SMALL - R_BIG
    assert contact_y - final["small"][2] == pytest.approx(v1 * v1 / (2 * A), abs=3.0)
    # the knocked chip starts moving when they touch, from where it lay
    t_contact = 1000 * (v0 - v) / A
    assert by_chip["big1"]["pts"][0][:2] == [0.0, big[1]]
    assert by_chip["big1"]["pts"][0][2] == pytest.approx(t_contact, abs=1.5)


def test_flicks_are_deterministic():
    chips = {"small": ("small", 0.0, -250.0), "big1": ("big", 10.0, 0.0), "big2": ("big", -60.0, 120.0)}
    a = flick(chips, "small", (300.0, 2600.0))
    b = flick(chips, "small", (300.0, 2600.0))
    assert a == b
    assert len(a[0]) >= 2


def test_flick_steps_are_checked():
    def err(step, before=({"place": {"small": "a.pocket"}},)):
        with pytest.raises(ScenarioError) as e:
            compile_scenario(parse({"game": "bowling", "players": 1, "steps": list(before) + [step]}))
        return str(e.value)
    assert "flick needs 'v'" in err({"flick": "small"})
    assert "bad flick v" in err({"flick": "small", "v": [1, 2, 3]})
    assert "at most 6000" in err({"flick": "small", "v": [0, 6100]})
    assert "above 0" in err({"flick": "small", "v": [0, 0]})
    assert "it is in hand" in err({"flick": "big1", "v": [0, 1000]})
    assert "too slow" in err({"flick": "small", "v": [0, 20]})
    assert "unknown chip" in err({"flick": "tiny", "v": [0, 1000]})
    # a slam (issue 12: shots up to 6 m/s) is a scenario step like any other, so that a failure
    # the shot bench finds at that speed replays as one
    tl = compile_scenario(parse({"game": "bowling", "players": 1, "steps": [
        {"place": {"small": "a.pocket"}}, {"flick": "small", "v": [0, 6000]}]}))
    assert any(op.get("op") == "move" for op in tl)


def test_a_flick_compiles_to_the_same_move_op_as_a_path():
    tl = compile_scenario(parse({"game": "bowling", "players": 1, "steps": [
        {"place": {"small": "a.pocket"}}, {"flick": "small", "v": [0, 1700]},
        {"place": {"big1": "center"}}]}))
    move = tl[-2]
    assert move["op"] == "move" and set(move["moves"][0]) == {"chip", "pts", "end", "hits"}
    ts = [t for _x, _y, t in move["moves"][0]["pts"]]
    assert ts == sorted(set(ts))
    assert move["moves"][0]["end"] == "cup_b"
    assert tl[-1]["op"] == "put"                 # the compiler knows the small chip is gone


def test_the_firmware_judges_flicks_as_it_judges_paths():
    cx, cy = B.cup_center("b")
    zenn = _speed_to(cy - B.cup_radius - POCKET_A[1]) * 1.05
    t = Table("bowling", players=1)
    t.place("small", "a.pocket")
    t.steps.append({"flick": "small", "v": [0, round(zenn)]})          # a Zenn: strike
    t.take("small")
    # frame 2: to b's E strip by a path (8 pins), then over the side bumper by a flick (off)
    t.place("small", "a.pocket")
    t.shoot("small", "b.e2")
    t.steps.append({"flick": "small", "v": [3000, 200]})
    # frame 3: to b's E strip by a flick: 8 pins as well
    t.place("small", "a.pocket")
    t.steps.append({"flick": "small", "v": [150, round(_speed_to(430.0))]})
    r = t.run()
    shots = r.events_of("shot")
    assert [(s["result"], s["pins"], s["zone"]) for s in shots] == [
        ("strike", 10, "b.cup"), ("pins", 8, "b.e2"), ("no_basket", 0, "off"), ("pins", 8, "b.e2")]
