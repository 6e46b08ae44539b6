# Zones of the board (docs/architecture.md, CONTRACT section 1): which zones a point lies in,
# which a chip's disc overlaps. Integers in 0.1 mm, board coordinates; allocation-free.
#
# point_mask(x, y): the zone bits (1 << zone id) of every zone whose closed region holds the
# point; a point on a border belongs to the zones on both sides. Off the board: Z_OFF alone.
# The cups are not reported (a chip at rest is not in a cup).
#
# disc_mask(x, y, r), r < 32768: the zone bits of every zone the disc overlaps (with positive area), and
# Z_OFF if it reaches past the outline. Exact: a zone overlaps the disc if it holds the centre,
# or if one of its border segments passes strictly inside the disc; then the point of that
# segment nearest the centre lies inside the disc and on the zone's border, and point_mask of it
# names the zone (with its neighbour across the border). So every border segment of every zone
# is tested (axis-parallel segments: exact in integers; the centre circle: to 0.2 mm). Sixteen
# rim points, as first planned, miss a zone corner poking up to 0.2 r into a disc and even the
# 6 mm Zenn line crossing a big chip 0.5 to 1.5 mm or 7.5 to 13.8 mm from its centre.
import sys
import micropython
from array import array

from tables.board_table import (HALF_W, HALF_L, CORNER_SUM, CENTER_R, CENTER_R2, BASELINE_V, ZLINE_V,
                         ZLINE_HALF_LEN, ZLINE_HALF_W, POCKET_HALF_W, POCKET_V0, POCKET_V1,
                         STRIP_U, END_ZONES, Z_A_BACK4, Z_A_CUP3, Z_A_POCKET, Z_A_ZLINE, Z_A_Z3,
                         Z_A_E2, Z_A_N2, Z_A_N3, Z_B_BACK4, Z_B_CUP3, Z_B_POCKET, Z_B_ZLINE,
                         Z_CENTER, Z_OFF)

_BACK4 = 1 << Z_A_BACK4
_CUP3 = 1 << Z_A_CUP3
_POCKET = 1 << Z_A_POCKET
_ZLINE = 1 << Z_A_ZLINE
_Z3 = 1 << Z_A_Z3
_E2 = 1 << Z_A_E2
_N2 = 1 << Z_A_N2
_N3 = 1 << Z_A_N3
CENTER = 1 << Z_CENTER
OFF = 1 << Z_OFF

# The backcourt of each end (CONTRACT 1): back4 and cup3, the pocket in it and the Zenn line
# along its front edge. A disc lies entirely in end X's backcourt when its mask has no bit
# outside BACKCOURT[X] (see inside()).
BACKCOURT_A = (1 << Z_A_BACK4) | (1 << Z_A_CUP3) | (1 << Z_A_POCKET) | (1 << Z_A_ZLINE)
BACKCOURT_B = (1 << Z_B_BACK4) | (1 << Z_B_CUP3) | (1 << Z_B_POCKET) | (1 << Z_B_ZLINE)
BACKCOURT = (BACKCOURT_A, BACKCOURT_B)


def inside(mask, allowed):
    """True if a disc with this mask lies on the board entirely within the zones `allowed`."""
    return mask != 0 and (mask & ~allowed) == 0


def _end(u, v, strips):
    """Bits (end a's numbering) of an end's zones at (u, v) in that end's coordinates."""
    m = 0
    if v <= BASELINE_V:
        m = _BACK4
    if BASELINE_V <= v <= ZLINE_V:
        m |= _CUP3
    if -POCKET_HALF_W <= u <= POCKET_HALF_W and POCKET_V0 <= v <= POCKET_V1:
        m |= _POCKET
    if -ZLINE_HALF_LEN <= u <= ZLINE_HALF_LEN and ZLINE_V - ZLINE_HALF_W <= v <= ZLINE_V + ZLINE_HALF_W:
        m |= _ZLINE
    if strips and v >= ZLINE_V:
        if u <= -STRIP_U:
            m |= _Z3
        if -STRIP_U <= u <= 0:
            m |= _E2
        if 0 <= u <= STRIP_U:
            m |= _N2
        if u >= STRIP_U:
            m |= _N3
    return m


def point_mask(x, y):
    ax = x if x >= 0 else -x
    ay = y if y >= 0 else -y
    if ax > HALF_W or ay > HALF_L or ax + ay > CORNER_SUM:
        return OFF
    d2 = x * x + y * y                      # < 2**25 on the board
    m = CENTER if d2 <= CENTER_R2 else 0
    strips = d2 >= CENTER_R2                # the circle takes priority over the strips
    if y <= 0:
        m |= _end(x, y + HALF_L, strips)
    if y >= 0:
        m |= _end(-x, HALF_L - y, strips) << END_ZONES
    return m


def isqrt(n):
    # floor(sqrt(n)) for 0 <= n < 2**30, without floats (Newton from above); the one copy:
    # the tracker, the locator and the calibration import it
    if n <= 0:
        return 0
    x = n
    y = (x + 1) >> 1
    while y < x:
        x = y
        y = (x + n // x) >> 1
    return x


def _width_at(v):
    """Half the board's width at v from a back bumper (the 45-degree corners)."""
    w = CORNER_SUM - HALF_L + v
    return HALF_W if w > HALF_W else w


# Border segments of every zone, axis-parallel, in board coordinates: x0, x1, y0, y1 with
# x0 <= x1, y0 <= y1 (one pair equal). Built once for end a in (u, v) and turned for end b.
def _segments():
    s = []

    def add(u0, u1, v0, v1):
        for e in (0, 1):
            if e == 0:
                x0, x1, y0, y1 = u0, u1, v0 - HALF_L, v1 - HALF_L
            else:
                x0, x1, y0, y1 = -u1, -u0, HALF_L - v1, HALF_L - v0
            s.extend((x0, x1, y0, y1))

    w = _width_at(BASELINE_V)
    add(-w, w, BASELINE_V, BASELINE_V)                          # back4 | cup3
    w = _width_at(ZLINE_V)
    add(-w, w, ZLINE_V, ZLINE_V)                                # cup3 | strips
    for v in (ZLINE_V - ZLINE_HALF_W, ZLINE_V + ZLINE_HALF_W):  # the Zenn line
        add(-ZLINE_HALF_LEN, ZLINE_HALF_LEN, v, v)
    for u in (-ZLINE_HALF_LEN, ZLINE_HALF_LEN):
        add(u, u, ZLINE_V - ZLINE_HALF_W, ZLINE_V + ZLINE_HALF_W)
    for v in (POCKET_V0, POCKET_V1):                            # the pocket
        add(-POCKET_HALF_W, POCKET_HALF_W, v, v)
    for u in (-POCKET_HALF_W, POCKET_HALF_W):
        add(u, u, POCKET_V0, POCKET_V1)
    for u in (-STRIP_U, 0, STRIP_U):                            # between the strips
        au = -u if u < 0 else u
        v1 = HALF_L - isqrt(CENTER_R2 - u * u) if au < CENTER_R else HALF_L
        add(u, u, ZLINE_V, v1)
    if CENTER_R < HALF_W:                                       # the centre line, outside the circle
        s.extend((-HALF_W, -CENTER_R, 0, 0, CENTER_R, HALF_W, 0, 0))
    return array('h', s)


SEGMENTS = _segments()
_NSEG = len(SEGMENTS) // 4
_CIRCLE_OUT = CENTER_R + 2      # a point just outside the circle (0.2 mm)

if sys.implementation.name != "micropython":
    def ptr16(x):               # CPython: _crossed() runs as plain Python over the array
        return x


@micropython.viper
def _crossed(seg: ptr16, k: int, nseg: int, x: int, y: int, r: int, r2: int) -> int:
    """The first border segment from k on (SEGMENTS; -1: none) that passes strictly inside the
    disc at (x, y), r its radius, r2 = r * r: disc_mask's loop over the segments, as machine code
    (issue 13: in Python about 3 ms a disc on the RP2040, three discs a resting chip in the
    verdict's turn). Only offsets under r are squared, so for r < 32768 (r * r a small int on
    the chip) every sum stays below 2**31 (viper ints are 32-bit words there)."""
    while k < nseg:
        b = 4 * k
        # the array is signed (a viper ptr16 loads unsigned)
        px = ((int(seg[b]) + 0x8000) & 0xFFFF) - 0x8000
        if x > px:
            px = ((int(seg[b + 1]) + 0x8000) & 0xFFFF) - 0x8000
            if x < px:
                px = x
        py = ((int(seg[b + 2]) + 0x8000) & 0xFFFF) - 0x8000
        if y > py:
            py = ((int(seg[b + 3]) + 0x8000) & 0xFFFF) - 0x8000
            if y < py:
                py = y
        dx = x - px
        dy = y - py
        if dx < r and dx > 0 - r and dy < r and dy > 0 - r and dx * dx + dy * dy < r2:
            return k
        k += 1
    return -1


def disc_mask(x, y, r):
    m = point_mask(x, y)
    ax = x if x >= 0 else -x
    ay = y if y >= 0 else -y
    # off: not inside every edge of the outline (a convex octagon)
    if ax + r > HALF_W or ay + r > HALF_L:
        m |= OFF
    else:
        s = CORNER_SUM - ax - ay
        if s < 0 or s * s < 2 * r * r:
            m |= OFF
    if ax > HALF_W + r or ay > HALF_L + r:
        return m                    # nowhere near the board (and no big ints below)
    r2 = r * r
    seg = SEGMENTS
    # the segments the disc crosses, found by machine code; each one's nearest point is worked
    # out again here (a disc crosses a few at most)
    k = _crossed(seg, 0, _NSEG, x, y, r, r2)
    while k >= 0:
        b = 4 * k
        px = seg[b]
        if x > px:
            px = x if x < seg[b + 1] else seg[b + 1]
        py = seg[b + 2]
        if y > py:
            py = y if y < seg[b + 3] else seg[b + 3]
        m |= point_mask(px, py)
        k = _crossed(seg, k + 1, _NSEG, x, y, r, r2)
    # the centre circle: the disc crosses it
    d2 = x * x + y * y
    lo = CENTER_R - r
    if lo < 0:
        lo = 0
    if lo * lo < d2 < (CENTER_R + r) * (CENTER_R + r):
        m |= CENTER
        d = isqrt(d2)
        if d > 0:
            # what lies just outside the circle on the way to the centre of the disc
            m |= point_mask(x * _CIRCLE_OUT // d, y * _CIRCLE_OUT // d)
    elif d2 <= lo * lo and r > CENTER_R:
        m |= CENTER
    return m
