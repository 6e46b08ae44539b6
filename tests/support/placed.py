"""Host side: chips placed on the board for the locators' tests (test_sensing.py,
test_presence.py), positions in 0.1 mm as the drivers take them, and found chips matched back
to them. `board` is boardsim.geometry's Board."""
import math


def tenth(v):
    return int(round(v * 10))


def resting_spot(board, rng, kind, margin=0.0):
    """A random spot where a chip of `kind` can lie (on the board, clear of cups and blocks)."""
    x, y = board.resting_spot(rng, kind, margin)
    return tenth(x), tenth(y)


def touching(board, rng, kinds, gap, angle=None):
    """Chips of these kinds in a row, each `gap` (0.1 mm) from the next, somewhere on the
    board; at a random angle unless one is given."""
    while True:
        x, y = resting_spot(board, rng, kinds[0])
        a = rng.uniform(0, math.pi) if angle is None else angle
        chips = [(x, y, kinds[0])]
        for k in kinds[1:]:
            px, py, pk = chips[-1]
            d = tenth(board.chip_radius(pk)) + tenth(board.chip_radius(k)) + gap
            chips.append((int(px + d * math.cos(a)), int(py + d * math.sin(a)), k))
        if all(board.can_rest(cx / 10, cy / 10, k) for cx, cy, k in chips):
            return chips


def match(placed, found, kind_code):
    """Found chips (kind code, x, y, ...) to placed ones (x, y, kind name), nearest of the right
    kind first: per placed chip (the found chip, its distance in 0.1 mm), or None if a chip is
    missing, extra, or of the wrong kind."""
    if len(found) != len(placed):
        return None
    left = list(found)
    out = []
    for x, y, k in placed:
        cands = [f for f in left if f[0] == kind_code[k]]
        if not cands:
            return None
        f = min(cands, key=lambda f: math.hypot(f[1] - x, f[2] - y))
        left.remove(f)
        out.append((f, math.hypot(f[1] - x, f[2] - y)))
    return out
