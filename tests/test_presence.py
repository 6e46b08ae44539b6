"""The second front end (config.json "front_end": "shift"): the simulator's presence pads
(boardsim/target/presence_model.py), the matrix scanner (firmware/sensing/shift_scan.py) and the
locator (firmware/sensing/presence_locate.py), through the `machine` stand-in's pins and SPI.

One long-lived driver process per runtime (tests/support/presence_driver.py); every scan step
and find() runs with the heap locked, so under MicroPython an allocation fails the test. The
reference is the host geometry (boardsim/geometry.py). docs/sensing.md has the design and the
accuracy measured by bench/sensing_accuracy.py --front-end shift.
"""
import ast
import math
import random
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from boardsim.geometry import Board, ZONE_NAMES  # noqa: E402
from conftest import driver_for  # noqa: E402

DRIVER = "presence_driver.py"      # tests/support; the drv fixture (conftest.py) runs it
KIND = {"small": 1, "big": 2}

B = Board.load()
R = {k: int(round(B.chip_radius(k) * 10)) for k in ("small", "big")}


def tenth(v):
    return int(round(v * 10))


def spot(rng, kind, margin=0.0):
    x, y = B.resting_spot(rng, kind, margin)
    return tenth(x), tenth(y)


def touching(rng, kinds):
    while True:
        x, y = spot(rng, kinds[0])
        a = rng.uniform(0, math.pi)
        chips = [(x, y, kinds[0])]
        for k in kinds[1:]:
            px, py, pk = chips[-1]
            d = R[pk] + R[k] + 5
            chips.append((int(px + d * math.cos(a)), int(py + d * math.sin(a)), k))
        if all(B.can_rest(cx / 10, cy / 10, k) for cx, cy, k in chips):
            return chips


def locate(drv, sets, frames=3, hands=()):
    chips = [[[x, y, R[k], 1000] for x, y, k in s] for s in sets]
    return drv(op="locate", sets=chips, frames=frames, hands=[list(h) for h in hands])


def match(placed, found):
    """(errors in 0.1 mm, uncs) pairing found chips with placed ones, or None."""
    if len(found) != len(placed):
        return None
    left = list(found)
    out = []
    for x, y, k in placed:
        cands = [f for f in left if f[0] == KIND[k]]
        if not cands:
            return None
        f = min(cands, key=lambda f: math.hypot(f[1] - x, f[2] - y))
        left.remove(f)
        out.append((math.hypot(f[1] - x, f[2] - y), f[3]))
    return out


def test_single_chips_anywhere_kind_position_and_uncertainty(drv):
    rng = random.Random(71)
    sets = [[spot(rng, k) + (k,)] for k in ("small", "big") for _ in range(40)]
    r = locate(drv, sets)
    errs = []
    for s, found in zip(sets, r["r"]):
        m = match(s, found)
        assert m is not None, (s, found)
        for e, unc in m:
            errs.append(e)
            assert e <= unc + 5, (s, found)       # the uncertainty it reports holds
    errs.sort()
    assert max(errs) < 45, errs[-5:]
    assert sum(errs) / len(errs) < 18
    assert r["hand"] == [0] * len(sets)


def test_touching_pairs_and_rows_of_three(drv):
    rng = random.Random(72)
    sets = [touching(rng, kinds) for kinds in (("small", "small"), ("small", "big"), ("big", "big"))
            for _ in range(8)]
    sets += [touching(rng, [rng.choice(("small", "big")) for _ in range(3)]) for _ in range(16)]
    missed = []
    errs = []
    for s, found in zip(sets, locate(drv, sets)["r"]):
        m = match(s, found)
        if m is None:
            missed.append((s, found))
        else:
            errs += [e for e, _ in m]
    assert len(missed) <= 1, missed
    errs.sort()
    assert errs[int(0.95 * len(errs))] < 50, errs[-5:]


def test_three_big_chips_on_a_zenn_line_are_all_on_it(drv):
    sets = []
    for end in ("a", "b"):
        for du in (-12.0, 0.0, 9.0):
            row = []
            for i in (-1, 0, 1):
                x, y = B.to_board(end, du + i * (2 * B.chip_radius("big") + 0.5), B.zline_v)
                row.append((tenth(x), tenth(y), "big"))
            sets.append(row)
    for s, found in zip(sets, locate(drv, sets)["r"]):
        assert match(s, found) is not None, (s, found)
        for f in found:
            names = {ZONE_NAMES[i] for i in range(len(ZONE_NAMES)) if f[5] >> i & 1}
            assert names & {"a.zline", "b.zline"}, (s, found)


def test_a_hand_hovering_is_a_hand_not_chips(drv):
    r = locate(drv, [[], [(tenth(60), tenth(150), "small")]], hands=[(0, 1000)])
    assert r["r"] == [[], [[1, r["r"][1][0][1], r["r"][1][0][2]] + r["r"][1][0][3:]]]
    assert r["hand"] == [1, 1]
    # a chip under the hand is not reported (it cannot be told from the hand)
    r = locate(drv, [[(0, 1000, "small")]], hands=[(0, 1000)])
    assert r["r"] == [[]] and r["hand"] == [1]


def test_a_pad_stuck_on_is_a_speck_not_a_chip(drv):
    cols = 48
    g = 30 * cols + 20
    drv(op="fault", cell=g, mode=1)
    try:
        r = locate(drv, [[], [(0, 0, "big")]])
        assert r["r"][0] == [] and r["specks"][0] == [g]
        assert len(r["r"][1]) == 1 and r["specks"][1] == [g]
    finally:
        drv(op="clear")


def test_chips_over_ignored_pads_are_found_less_surely(drv):
    """A dead shift register's columns ignored: a chip across them is fitted from the pads it
    has, with a larger uncertainty."""
    x, y = -2350 + 100 * 8 - 40, 500   # half over column 8, the first of register 1 (8..15)
    r0 = locate(drv, [[(x, y, "big")]])["r"][0]
    drv(op="fault", sr=1, mode=2)
    for row in range(96):
        for c in range(8, 16):
            drv(op="ignore", cell=row * 48 + c)
    try:
        r1 = locate(drv, [[(x, y, "big")]])["r"][0]
    finally:
        drv(op="clear")
        for row in range(96):
            for c in range(8, 16):
                drv(op="ignore", cell=row * 48 + c, flag=0)
    assert len(r0) == 1 and len(r1) == 1
    assert r1[0][3] > r0[0][3] + 40
    assert math.hypot(r1[0][1] - x, r1[0][2] - y) <= r1[0][3] + 5


def test_both_runtimes_give_the_same_numbers():
    rng = random.Random(73)
    sets = [touching(rng, [rng.choice(("small", "big")) for _ in range(rng.choice((1, 2)))]) for _ in range(10)]
    out = {}
    for rt in ("micropython", "cpython"):
        d = driver_for(rt, DRIVER)
        try:
            out[rt] = locate(d, sets, frames=2)
        finally:
            d.close()
    assert out["micropython"] == out["cpython"]


# -- small ints --------------------------------------------------------------------------------------
class _Checked(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(ast.Name("_chk", ast.Load()), [node], []), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Subscript):
            load = ast.Subscript(t.value, t.slice, ast.Load())
        elif isinstance(t, ast.Attribute):
            load = ast.Attribute(t.value, t.attr, ast.Load())
        else:
            load = ast.Name(t.id, ast.Load())
        val = ast.Call(ast.Name("_chk", ast.Load()), [ast.BinOp(load, node.op, node.value)], [])
        return ast.copy_location(ast.Assign([t], val), node)


def _chk(v):
    if isinstance(v, int) and not -(1 << 30) <= v < (1 << 30):
        raise OverflowError("intermediate %d is not a small int on the RP2040" % v)
    return v


def test_no_intermediate_leaves_the_rp2040s_small_ints():
    for d in ("firmware", "boardsim/target"):
        if str(ROOT / d) not in sys.path:
            sys.path.append(str(ROOT / d))
    import world_table as T
    from presence_model import PresenceModel
    path = ROOT / "firmware" / "sensing" / "presence_locate.py"
    tree = _Checked().visit(ast.parse(path.read_text()))
    ast.fix_missing_locations(tree)
    mod = type(sys)("checked_locate_presence")
    mod.__dict__["_chk"] = _chk
    exec(compile(tree, str(path), "exec"), mod.__dict__)
    loc = mod.PresenceLocator()
    pm = PresenceModel(T)
    rng = random.Random(74)
    grid = bytearray(48 * 96)
    for s in [touching(rng, [rng.choice(("small", "big")) for _ in range(rng.choice((1, 2, 3)))]) for _ in range(6)]:
        pm.update([(x, y, R[k], 1000) for x, y, k in s], [(rng.randint(-2000, 2000), rng.randint(-4000, 4000))])
        for g in range(len(grid)):
            grid[g] = pm.state[g]
        loc.find(grid)
    for g in range(len(grid)):
        grid[g] = 1
    loc.find(grid)
