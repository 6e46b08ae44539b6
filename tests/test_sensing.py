"""The sensing chain: the simulator's hall pads (boardsim/target/hall_model.py), the scanner
(firmware/sensing/hall_scan.py), the locator (firmware/sensing/hall_locate.py) and the zones (firmware/sensing/zones.py).

Firmware runs under both the real MicroPython unix port and CPython, through one long-lived
driver process per runtime (tests/support/sensing_driver.py): every scan step, find() and zone
mask runs with the heap locked, so under MicroPython an allocation fails the test. The reference
is the host geometry (boardsim/geometry.py, shapely). A last test checks, under CPython, that no
intermediate in locate.py or zones.py reaches 2**30 (the RP2040's small ints).
"""
import ast
import functools
import math
import random
import sys
from pathlib import Path

from shapely.geometry import Point

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from boardsim.geometry import Board, ZONE_NAMES  # noqa: E402
from conftest import driver_for  # noqa: E402
from runtimes import on_both_runtimes  # noqa: E402
import placed  # noqa: E402
from placed import tenth  # noqa: E402
from smallints import chk, load_checked  # noqa: E402

DRIVER = "sensing_driver.py"      # tests/support; the drv fixture (conftest.py) runs it
KIND_SMALL, KIND_BIG = 1, 2
POL = {"small": 1, "big": -1}
KIND = {"small": KIND_SMALL, "big": KIND_BIG}

B = Board.load()
R = {k: int(round(B.chip_radius(k) * 10)) for k in ("small", "big")}
REST = {n: s for n, s in B.zones.items() if not n.endswith(".cup")}


def names(mask):
    return {ZONE_NAMES[i] for i in range(len(ZONE_NAMES)) if mask >> i & 1}


def resting_spot(rng, kind, margin=0.0):
    return placed.resting_spot(B, rng, kind, margin)


def border_gap(x, y, r):
    """How close the disc comes to deciding any zone (or 'off') differently, in mm: the least
    |distance(centre, zone) - r| over the zones the centre is not in, and the outline."""
    p = Point(x, y)
    g = abs(B.outline.exterior.distance(p) - r)
    for s in REST.values():
        d = s.distance(p)
        if d > 0:
            g = min(g, abs(d - r))
    return g


# -- the harness ------------------------------------------------------------------------------------
def test_the_driver_notices_an_allocation():
    d = driver_for("micropython", DRIVER)
    try:
        assert "MemoryError" in d.run_many([{"op": "alloc"}], expect_error=True)[0].get("error", "")
    finally:
        d.close()


# -- zones ----------------------------------------------------------------------------------------
def test_point_mask_matches_the_board_geometry(drv):
    rng = random.Random(11)
    pts = [(rng.randint(-2450, 2450), rng.randint(-4850, 4850)) for _ in range(3000)]
    # and points bunched where zones meet: the Zenn lines, the pockets, the strips, the circle
    for _ in range(1500):
        y = rng.choice((-2700, 2700, -2910, -3900, 0, -600, 600)) + rng.randint(-60, 60)
        pts.append((rng.randint(-1400, 1400), y))
    got = drv(op="points", pts=pts)["m"]
    for (x, y), m in zip(pts, got):
        exp = {n for n in B.zone_of_point(x / 10, y / 10) if not n.endswith(".cup")} or {"off"}
        g = names(m)
        if g != exp:
            # only a point on a border may differ, and then only by a zone touching it
            p = Point(x / 10, y / 10)
            on_border = min(s.boundary.distance(p) for s in B.zones.values()) < 1e-6
            assert on_border and g <= exp | {"off"}, (x, y, g, exp)


@functools.lru_cache(maxsize=None)
def disc_cases():
    """1,500 seeded discs clear of every border, each with the zones the host geometry gives
    it: made once a process, for both runtimes' tests (its shapely work was 0.5 s each)."""
    rng = random.Random(12)
    discs = []
    while len(discs) < 1500:
        kind = rng.choice(("small", "big"))
        r = B.chip_radius(kind)
        x = rng.uniform(-B.half_w, B.half_w)
        y = rng.choice((rng.uniform(-B.half_l, B.half_l), rng.uniform(-300, -180),
                        rng.uniform(200, 300), rng.uniform(-90, 90)))
        x, y = tenth(x) / 10, tenth(y) / 10
        if not B.outline.contains(Point(x, y)) or border_gap(x, y, r) < 0.5:
            continue
        discs.append((x, y, kind, frozenset(B.zones_of_disc(x, y, r))))
    return tuple(discs)


def test_disc_mask_matches_the_board_geometry(drv):
    discs = disc_cases()
    got = drv(op="discs", d=[[tenth(x), tenth(y), R[k]] for x, y, k, _ in discs])["m"]
    assert len(got) == len(discs)
    for (x, y, k, zones), m in zip(discs, got):
        assert names(m) == zones, (x, y, k)


# -- locating chips -------------------------------------------------------------------------------
def locate(drv, sets, noise=40):
    """Chips of each set put on the board, one frame read straight from the pads."""
    chips = [[[x, y, POL[k], 1000] for x, y, k in s] for s in sets]
    return drv(op="grid", sets=chips, noise=noise)["r"]


def match(chips, found):
    """Found chips to placed ones, nearest of the right kind first: a list of errors (mm), or
    None if a chip is missing, extra, or of the wrong kind."""
    m = placed.match(chips, found, KIND)
    return None if m is None else [e / 10 for _, e in m]


def errors(drv, sets):
    """Every chip's error (mm) over sets each located in one frame; every chip must be found."""
    errs = []
    for s, found in zip(sets, locate(drv, sets)):
        e = match(s, found)
        assert e is not None, (s, found)
        errs += e
    return errs


def errors_and_misses(drv, sets, noise):
    """Located in one frame at this noise: every chip's error (mm) over the sets found as placed,
    the sets that were not (with what was found), and the (set, found) pairs that were."""
    errs, missed, matched = [], [], []
    for s, found in zip(sets, locate(drv, sets, noise=noise)):
        e = match(s, found)
        if e is None:
            missed.append((s, found))
        else:
            errs += e
            matched.append((s, found))
    return errs, missed, matched


def test_single_chips_anywhere(drv):
    rng = random.Random(21)
    sets = [[resting_spot(rng, k) + (k,)] for k in ("small", "big") for _ in range(60)]
    errs = errors(drv, sets)
    assert max(errs) < 1.5, max(errs)
    assert sum(errs) / len(errs) < 0.4


def test_chips_at_the_edges_corners_and_cups(drv):
    sets = []
    hw, hl, c = B.half_w, B.half_l, B.corner
    for k in ("small", "big"):
        r = B.chip_radius(k)
        for t in (0.1, 0.37, 0.5, 0.83):
            sets.append([(tenth(hw - r), tenth(-hl + c + (2 * hl - 2 * c) * t), k)])     # side bumper
        for x in (-100, 0, 80):
            sets.append([(tenth(x), tenth(hl - r), k)])                                # back bumper
        # in a 45-degree corner, touching its edge
        for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
            u = hw - c / 2 - r / math.sqrt(2)
            v = hl - c / 2 - r / math.sqrt(2)
            sets.append([(tenth(sx * u), tenth(sy * v), k)])
        # touching a cup's rim (no pads under the cup hole), all round
        for a in range(0, 360, 45):
            cx, cy = B.cup_center("a")
            d = B.cup_radius + r + 0.5
            x, y = cx + d * math.cos(math.radians(a)), cy + d * math.sin(math.radians(a))
            if not B.blocks("a").buffer(r).contains(Point(x, y)) and B.outline.buffer(-r).contains(Point(x, y)):
                sets.append([(tenth(x), tenth(y), k)])
    for s, found in zip(sets, locate(drv, sets)):
        e = match(s, found)
        assert e is not None, (s, found)
        assert max(e) < 2.0, (s, found)


def touching(rng, kinds, angle=None):
    """Chips of these kinds in a row, each touching the next, somewhere on the board."""
    return placed.touching(B, rng, kinds, gap=1, angle=angle)


def test_two_chips_touching(drv):
    rng = random.Random(31)
    sets = [touching(rng, kinds) for kinds in (("small", "small"), ("small", "big"), ("big", "big"))
            for _ in range(30)]
    errs = errors(drv, sets)
    assert max(errs) < 3.0, max(errs)
    assert sum(errs) / len(errs) < 0.5


def test_three_chips_touching(drv):
    """Three in a row, any kinds. After the scanner's averaging of a still board the noise is
    about NOISE_LSB / 2.6."""
    rng = random.Random(32)
    sets = [touching(rng, [rng.choice(("small", "big")) for _ in range(3)]) for _ in range(60)]
    errs, missed, _ = errors_and_misses(drv, sets, noise=15)
    assert len(missed) <= 2, missed       # the fit can end in a false minimum (docs/sensing.md)
    errs.sort()
    assert errs[int(0.95 * len(errs))] < 1.5, errs[-10:]
    assert sum(errs) / len(errs) < 0.5


def test_three_big_chips_across_the_zenn_line(drv):
    rng = random.Random(33)
    sets = []
    for end in ("a", "b"):
        for _ in range(25):
            u = rng.uniform(-20, 20)
            v = B.zline_v + rng.uniform(-8, 8)
            row = []
            for i in (-1, 0, 1):
                x, y = B.to_board(end, u + i * (2 * B.chip_radius("big") + rng.uniform(0.05, 1.0)), v + rng.uniform(-1, 1))
                row.append((tenth(x), tenth(y), "big"))
            sets.append(row)
    errs, missed, matched = errors_and_misses(drv, sets, noise=15)
    for s, found in matched:
        for f in found:
            assert names(f[5]) & {"a.zline", "b.zline"}, (s, found)    # every chip is on the line
    assert len(missed) <= 1, missed
    errs.sort()
    assert errs[int(0.95 * len(errs))] < 1.5, errs[-10:]


# -- zone verdicts from located chips -------------------------------------------------------------
# -- frames that are no chips: the locator's work bounded (issue 13) ------------------------------
# every pad frozen mid-scale (a mux's supply or reference drifted) or noisy at random: before,
# find() seeded 8 chips and fitted every one of 64 candidates, 25 - 47 joint fits and 270 - 730
# Gauss-Newton iterations a frame (25 s a frame on the RP2040, the watchdog's reset loop before
# the fault monitor could name the fault). Now such a frame is not fitted at all: the chips of
# the last reading stand and `unread` counts the frames, whatever the pads say.
FAULTY = [("frozen", -2768), ("frozen", 3000), ("frozen", 1500), ("noise", 4000), ("noise", 20000)]


def test_a_frame_of_no_chips_costs_no_fit(drv):
    chips = [[1000, 800, 1, 1000], [1400, 900, -1, 1000]]
    for mode, v in FAULTY:
        r = drv(op="faulty", chips=chips, mode=mode, v=v, frames=3)
        assert len(r["before"]) == 2, r["before"]
        assert r["unread"] == [1, 2, 3], (mode, v, r["unread"])
        # bounded: no fit, no candidate looked at, whatever the pads read
        assert r["fits"] == [0, 0, 0] and r["iters"] == [0, 0, 0] and r["cands"] == [0, 0, 0], (mode, v, r)
        # the last reading stands (no chips made up, none dropped)
        assert all(f == r["before"] for f in r["r"]), (mode, v, r["r"])
    # a frame of chips again is read as before
    again = drv(op="grid", sets=[chips], noise=40)["r"][0]
    assert len(again) == 2 and all(a[0] == b[0] and abs(a[1] - b[1]) < 10 and abs(a[2] - b[2]) < 10
                                   for a, b in zip(again, r["before"])), (again, r["before"])


def test_a_frame_of_chips_is_never_taken_for_a_fault(drv):
    """Eight chips (MAX_FOUND; the board holds 4), each between pads where it lifts the most
    pads beyond THRESHOLD: read and fitted (unread 0)."""
    chips = [[x + 125, y + 125, 1 if (x > 0) == (y > 0) else -1, 1000]
             for x in (-1250, 1250) for y in (-3125, -1125, 875, 2875)]
    r = drv(op="faulty", chips=chips, mode="frozen", v=0, frames=1)
    assert len(r["before"]) == 8, r["before"]
    assert r["unread"] == [0]


def test_a_chip_well_inside_gets_its_true_zones(drv):
    """A chip whose disc is at least 3 mm from deciding any zone differently gets exactly the
    zones its disc overlaps."""
    rng = random.Random(41)
    sets = []
    while len(sets) < 120:
        k = rng.choice(("small", "big"))
        x, y = resting_spot(rng, k)
        if border_gap(x / 10, y / 10, B.chip_radius(k)) >= 3.0:
            sets.append([(x, y, k)])
    for s, found in zip(sets, locate(drv, sets)):
        (x, y, k), = s
        assert len(found) == 1, (s, found)
        assert names(found[0][5]) == B.zones_of_disc(x / 10, y / 10, B.chip_radius(k)), (s, found)


def test_a_chip_on_a_border_is_seen_in_both_zones(drv):
    sets, expect = [], []
    bl, zl = B.baseline_v, B.zline_v
    for end in ("a", "b"):
        for k in ("small", "big"):
            for (u, v), both in (((-150, bl), {"back4", "cup3"}),           # the baseline
                                 ((30, zl), {"cup3", "n2", "zline"}),       # the Zenn line
                                 ((-B.strip_u, 330), {"z3", "e2"}),         # strip borders
                                 ((0, 300), {"e2", "n2"}),
                                 ((B.strip_u, 360), {"n2", "n3"})):
                x, y = B.to_board(end, u, v)
                sets.append([(tenth(x), tenth(y), k)])
                expect.append({end + "." + z for z in both})
        # the centre circle's rim, on the strips' side of end a or b
    for k in ("small", "big"):
        for a in (30, 100, 200, 300):
            x, y = B.center_radius * math.cos(math.radians(a)), B.center_radius * math.sin(math.radians(a))
            sets.append([(tenth(x), tenth(y), k)])
            expect.append({"center"})
    for s, exp, found in zip(sets, expect, locate(drv, sets)):
        assert len(found) == 1, (s, found)
        assert exp <= names(found[0][5]), (s, names(found[0][5]), exp)
        if exp == {"center"}:
            assert len(names(found[0][5]) - {"center"}) >= 1


# -- the whole chain, through the scanner ----------------------------------------------------------
def test_scanning_a_still_board_through_the_multiplexers(drv):
    before = drv(op="gray")
    sets = [[(0, -2700 + 10, "big"), (391, -2700, "big"), (-391, -2705, "big")],
            [(1234, 2345, "small")],
            [(0, 0, "small"), (300, 50, "big")]]
    chips = [[[x, y, POL[k], 1000] for x, y, k in s] for s in sets]
    r = drv(op="locate", sets=chips, frames=24)      # 24 frames: the tracker's settle time
    for s, found in zip(sets, r["r"]):
        e = match(s, found)
        assert e is not None, (s, found)
        assert max(e) < (3.0 if len(s) == 3 else 1.0), (s, found)
    g = drv(op="gray")
    assert g["reads"] - before["reads"] == 3 * 24 * 702
    assert g["max_flips"] == 1           # one select pin changes between two reads, always


# -- small ints ---------------------------------------------------------------------------------------
def test_no_intermediate_leaves_the_rp2040s_small_ints():
    for d in ("firmware", "boardsim/target"):
        if str(ROOT / d) not in sys.path:
            sys.path.append(str(ROOT / d))
    import world_table as T
    from hall_model import HallModel
    from tables import board_table as BT
    from array import array
    loc_mod = load_checked("sensing/hall_locate", ("sensing/zones", "sensing/hall_fit",
                                                   "sensing/hall_seed", "sensing/hall_follow"))
    # the seams' code is the checked code (bound as the locator's methods)
    assert loc_mod.Locator._fit_group.__globals__["chk"] is chk
    assert loc_mod.Locator._follow.__globals__["chk"] is chk
    zones_mod = load_checked("sensing/zones")
    loc = loc_mod.Locator()
    hm = HallModel(T)
    grid = array('h', bytes(2 * BT.PAD_COLS * BT.PAD_ROWS))
    gof = [((T.PAD_Y[p] - BT.PAD_Y0) // BT.PAD_PITCH) * BT.PAD_COLS + (T.PAD_X[p] - BT.PAD_X0) // BT.PAD_PITCH
           for p in range(T.N_PADS)]
    rng = random.Random(51)
    sets = [touching(rng, [rng.choice(("small", "big")) for _ in range(rng.choice((1, 2, 3)))])
            for _ in range(40)]
    sets += [[(x, y, "big") for x, y in ((-391, -2700), (0, -2700), (391, -2700))],
             [(tenth(B.half_w - 14), 0, "small")]]
    for s in sets:
        hm.update([(x, y, POL[k], 1000) for x, y, k in s])
        for p in range(T.N_PADS):
            grid[gof[p]] = hm.read(p) - hm.base[p]
        n = loc.find(grid)
        for i in range(n):
            zones_mod.disc_mask(loc.x[i], loc.y[i], BT.R_BIG)
    # and the extremes: a saturated frame, a stuck pad, an empty one
    for g in range(len(grid)):
        grid[g] = 0
    grid[300] = 32767
    grid[301] = -32767
    loc.find(grid)
    for g in range(len(grid)):
        grid[g] = 32767 if g % 3 else -32767
    loc.find(grid)
    for x in (-9999, -2600, 0, 2600, 9999):
        for y in (-9999, -4900, 0, 4900, 9999):
            zones_mod.disc_mask(x, y, 195)


ISQRT_SCRIPT = """
from sensing.zones import isqrt
import json
# around every square up to 2**30 (Newton's stopping point), then a spread of others
out = []
k = 0
while k * k <= (1 << 30):
    for n in (k * k - 1, k * k, k * k + 1):
        if 0 <= n < (1 << 30):
            out.append(isqrt(n))
    k += 1
n = 7
while n < (1 << 30):
    out.append(isqrt(n))
    n = n * 3 // 2 + 1
print(json.dumps([isqrt(0), isqrt(-5), isqrt((1 << 30) - 1)] + out))
"""


def test_the_one_isqrt_is_math_isqrt_under_micropython(tmp_path):
    """zones.isqrt, which the tracker, the hall locator and the calibration import (one copy,
    issue 15), is floor(sqrt(n)) over the ints it is used with (0 <= n < 2**30) under the
    unix port, checked against CPython's math.isqrt; below 0 it gives 0."""
    from runtimes import run_target
    got, _ = run_target(ISQRT_SCRIPT, "micropython", tmp_path=tmp_path)
    want = [0, 0, math.isqrt((1 << 30) - 1)]
    k = 0
    while k * k <= 1 << 30:
        want += [math.isqrt(n) for n in (k * k - 1, k * k, k * k + 1) if 0 <= n < 1 << 30]
        k += 1
    n = 7
    while n < 1 << 30:
        want.append(math.isqrt(n))
        n = n * 3 // 2 + 1
    assert len(got) == len(want) > 3 * 32768
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, bad[:5]
    # and it is defined once: the others import it
    defs = [str(p.relative_to(ROOT)) for p in (ROOT / "firmware").rglob("*.py")
            if "def isqrt(" in p.read_text() or "def _isqrt(" in p.read_text()]
    assert defs == ["firmware/sensing/zones.py"], defs


def test_both_runtimes_give_the_same_numbers():
    """The model's noise, the scanner and the locator are integer code: MicroPython and CPython
    must agree to the last LSB (a scenario then plays the same under both)."""
    rng = random.Random(61)
    cases = []
    for _ in range(8):
        sets = [[[rng.randint(-2000, 2000), rng.randint(-4300, 4300), rng.choice((1, -1)),
                  rng.choice((1000, 700, 300))] for _ in range(rng.choice((1, 2, 3)))] for _ in range(4)]
        cases.append(dict(op="locate", sets=sets, frames=rng.choice((1, 2))))
        cases.append(dict(op="grid", sets=sets, noise=40))
    out = on_both_runtimes(DRIVER, lambda d: [d(**c) for c in cases])
    assert out["micropython"] == out["cpython"]


def test_the_locators_modules_agree_on_their_constants():
    # the hall locator is split along its seams (sensing/hall_locate.py, hall_fit.py,
    # hall_seed.py, hall_follow.py, issue 15); each writes out the const() values it uses, so
    # that they are inlined, not looked up in the hot loops: every module's must be the same
    def values(name):
        tree = ast.parse((ROOT / "firmware" / "sensing" / name).read_text())
        out = {}
        for n in tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                out[n.targets[0].id] = ast.unparse(n.value)
        return out

    main = values("hall_locate.py")
    seen = set()
    for part in ("hall_fit.py", "hall_seed.py", "hall_follow.py"):
        for k, v in values(part).items():
            if k in main:
                assert v == main[k], f"{part}: {k} = {v}, hall_locate.py: {main[k]}"
                seen.add(k)
    assert {"MAX_FOUND", "MAX_GROUP", "MAX_ITER", "N_GRID"} <= seen
