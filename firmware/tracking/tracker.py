# Chip tracking: from the chips the pads see, frame after frame, to what happened on the table.
#
# The board is either at rest (a snapshot of where every chip lies) or active. Anything that
# differs from the snapshot (a chip displaced, gone or new, or a beam edge) starts an activity;
# it ends once nothing has changed for SETTLE_MS (a pinsetter's take-data delay). Then it is
# told apart as:
#   a shot     a chip was seen sliding (or vanished with a cup drop): ShotResult is filled
#   a placing  new chips appeared, none moved           (a hand put a chip down)
#   a taking   chips vanished where they lay            (a hand lifted them: hall pads see the
#              magnet fade in place, presence pads the hand the chip goes into)
#   a change   both of the last two                     (a hand rearranged chips)
# Chips keep their slot from one rest to the next, so the rules can tell the big chips apart.
# RAM: about 400 bytes. Allocation-free after construction.
import sys
import micropython
from micropython import const
from array import array
import time

from tables import board_table as B
from tracking import shot as S
from sensing import fastin as F
from sensing import zones
from sensing.zones import isqrt as _isqrt

MAX = const(4)            # slots: one small and three big chips at most

IDLE = const(0)
ACTIVE = const(1)

EV_NONE = const(0)
EV_SHOT = const(1)
EV_PLACED = const(2)
EV_TAKEN = const(3)
EV_CHANGED = const(4)
# A chip last seen this near (0.1 mm) a hand's centre lies under the hand's patch (presence
# pads: a palm covers 65 pads and more, 45 mm about its centre): it is hidden, not seen
# elsewhere, so it is not followed that frame to a chip farther than the move tolerance from
# it, nor found again elsewhere while the hand is seen. A piece of the hand's ragged rim cut
# off from its patch, which the locator may take for a chip, lies 40 - 65 mm out; a chip
# followed to one and lost there, beyond HAND_NEAR, was judged flicked off while the hand
# lifted it (issue 12). A constant, not a class attribute: no entry on the chip's heap
_HAND_HIDES = const(300)
# 10 mm: how far a chip beside one put down or taken may seem to move (_nudged_by_placing; a
# constant: no entry on the chip's heap)
_PLACE_NUDGE = const(100)
# Hall pads: the frame right after the one a stillness began at may leave that frame's chips by
# this much (0.1 mm) more than STILL_TOL (+ wander) and the stillness still holds (frame(): the
# last moving frame's fit lags the chip at rest, issue 13). The same 1.5 mm as the locator's
# correction of a lagging fit (sensing/hall_follow.py, _CORRECT_MAX): 3.5 mm in all, alone
_LAG_TOL = const(15)
# claimed[_TIDY] (a ninth byte, in the 16 B the bytearray of 8 takes on the heap anyway): 1 when
# _track's last frame matched every chip it tracks in its first pass, each to a locator chip of
# its own, no other chip, no hand, none weak; a frame exactly that one's then matches them again
# as it did, and changes nothing but the uncertainty it copies (issue 13: _track was 0.9 of a
# settle window frame's 1.1 ms more than a frame at rest on the chip)
_TIDY = const(8)
# Tracker.OFF_SLID and its square (_follow: a constant, no lookup on the chip)
_OFF_SLID = const(100)
_OFF_SLID2 = const(_OFF_SLID * _OFF_SLID)

if sys.implementation.name != "micropython":
    def ptr8(x):            # CPython: _carry runs as plain Python over the arrays
        return x

    def ptr32(x):
        return x


@micropython.viper
def _carry(tr, loc, n: int) -> int:
    """Tracker._track's matching carried over (see there), in machine code (issue 13: the check
    and the four _follow()s were 1.3 ms of the settle window's first frame with four chips on
    the chip, some 25 attribute lookups a chip): how many tracked chips are seen, each exactly at
    the fit it followed last (claimed_by - 1 < n, its kind), no two of one kind at one place; -1
    if one is not, or one present is not seen. Where that is all n of the locator's chips, also
    what _track then writes: claimed cleared, each seen chip's _follow(i, claimed_by - 1) (the
    same operations in the same order; a moved chip's _graze called as there), claimed_by of the
    unseen ones cleared, claimed[_TIDY]. Positions within +-2**14 (the board's within +-5000): a
    sum of squares stays below 2**31. A 64-bit port loads an array('i') word without its sign:
    the values compared by size are taken back to it (equalities compare words). Three
    arguments: a viper call with many allocates its argument array on the chip."""
    seen = ptr8(tr.seen)
    present = ptr8(tr.present)
    cb = ptr8(tr.claimed_by)
    kind = ptr8(tr.kind)
    tx = ptr32(tr.tx)
    ty = ptr32(tr.ty)
    lk = ptr8(loc.kind)
    lx = ptr32(loc.x)
    ly = ptr32(loc.y)
    c = 0
    i = 0
    while i < MAX:
        if int(seen[i]) == 0:
            if int(present[i]) != 0:
                return -1
        else:
            j = int(cb[i]) - 1
            xi = int(tx[i])
            yi = int(ty[i])
            ki = int(kind[i])
            if j < 0 or j >= n or int(lx[j]) != xi or int(ly[j]) != yi or int(lk[j]) != ki:
                return -1
            q = 0
            while q < i:
                if int(seen[q]) != 0 and int(tx[q]) == xi and int(ty[q]) == yi and \
                        int(kind[q]) == ki:
                    return -1
                q += 1
            c += 1
        i += 1
    if c != n:
        return c
    claimed = ptr8(tr.claimed)
    ls = ptr32(loc.strength)
    lw = ptr32(loc.wander)
    lu = ptr32(loc.unc)
    sx = ptr32(tr.x)
    sy = ptr32(tr.y)
    ts = ptr32(tr.ts)
    rs = ptr32(tr.rs)
    faded = ptr8(tr.faded)
    weak = ptr8(tr.weak)
    weak_t = ptr32(tr.weak_t)
    tunc = ptr32(tr.tunc)
    tw = ptr32(tr.tw)
    moved = ptr8(tr.moved)
    order = ptr8(tr.move_order)
    mf = ptr8(tr.mf)
    mdx = ptr32(tr.mdx)
    mdy = ptr32(tr.mdy)
    graded = int(tr.graded)
    ms = int(tr.MOVE_STRENGTH)
    tol = int(tr.MOVE_TOL)
    mtol = int(tr.move_tol)
    fq = int(tr.FADED_Q)
    now = int(tr.now)
    afr = int(tr.afr)
    nm = int(tr.n_moved)
    w16 = 65536             # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    j = 0
    while j < 8:
        claimed[j] = 0
        j += 1
    tidy = 1
    i = 0
    while i < MAX:
        if int(seen[i]) == 0:
            cb[i] = 0
            i += 1
            continue
        # _follow(i, j)
        j = int(cb[i]) - 1
        claimed[j] = 1
        x = int(lx[j])
        if (x >> 29) > 3:
            x -= w16 * w16
        y = int(ly[j])
        if (y >> 29) > 3:
            y -= w16 * w16
        st = int(ls[j])
        if (st >> 29) > 3:
            st -= w16 * w16
        w = int(lw[j])
        if (w >> 29) > 3:
            w -= w16 * w16
        tx[i] = x
        ty[i] = y
        ts[i] = st
        v = int(sx[i])
        if (v >> 29) > 3:
            v -= w16 * w16
        dx = x - v
        v = int(sy[i])
        if (v >> 29) > 3:
            v -= w16 * w16
        dy = y - v
        d = dx * dx + dy * dy
        if st < ms and d <= _OFF_SLID2:
            faded[i] = 1
        if graded:
            t = tol + w
            v = int(rs[i])
            if (v >> 29) > 3:
                v -= w16 * w16
            if st * 8 < v * fq and d <= t * t:
                weak[i] = 1             # weaker where it lay (_finish: a lift, or a flick)
                weak_t[i] = now
            else:
                weak[i] = 0
        else:
            weak[i] = 0
        tunc[i] = lu[j]
        tw[i] = w
        if int(moved[i]) != 0:
            if not graded:
                tr._graze(i, x, y)
        elif st >= ms:
            t = mtol + w
            if d > t * t:
                moved[i] = 1
                nm += 1
                order[i] = nm
                mf[i] = afr
                mdx[i] = dx
                mdy[i] = dy
        if int(weak[i]) != 0:
            tidy = 0
        i += 1
    tr.n_moved = nm
    claimed[_TIDY] = tidy
    return c


@micropython.viper
def _rest_seen(tr, r) -> int:
    """Tracker._finish's first slot loop for the chips present and seen, in machine code (issue
    13: the verdict's frame with four chips): the result's kind and start masks copied, a moved
    chip back where it lay (_near(x, y, tx, ty, move_tol + tw)) not moved, r.moved, r.fate
    FATE_REST. Returns a bit per present chip not seen (1 << slot: _finish's Python does those)
    and 256 if a chip seen had moved (slid). Positions within +-2**14: a sum of squares stays
    below 2**31; a 64-bit port's words taken back to their sign where compared by size."""
    present = ptr8(tr.present)
    seen = ptr8(tr.seen)
    moved = ptr8(tr.moved)
    order = ptr8(tr.move_order)
    kind = ptr8(tr.kind)
    mask = ptr32(tr.mask)
    lo = ptr32(tr.lo)
    hi = ptr32(tr.hi)
    sx = ptr32(tr.x)
    sy = ptr32(tr.y)
    tx = ptr32(tr.tx)
    ty = ptr32(tr.ty)
    tw = ptr32(tr.tw)
    rkind = ptr8(r.kind)
    rmask = ptr32(r.start_mask)
    rlo = ptr32(r.start_lo)
    rhi = ptr32(r.start_hi)
    rmoved = ptr8(r.moved)
    fate = ptr8(r.fate)
    rest = int(S.FATE_REST)
    mtol = int(tr.move_tol)
    w16 = 65536             # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    left = 0
    i = 0
    while i < MAX:
        if int(present[i]) == 0:
            i += 1
            continue
        if int(seen[i]) == 0:
            left |= 1 << i
            i += 1
            continue
        rkind[i] = kind[i]
        rmask[i] = mask[i]
        rlo[i] = lo[i]
        rhi[i] = hi[i]
        if int(moved[i]) != 0:
            v = int(tx[i])
            if (v >> 29) > 3:
                v -= w16 * w16
            u = int(sx[i])
            if (u >> 29) > 3:
                u -= w16 * w16
            dx = v - u
            v = int(ty[i])
            if (v >> 29) > 3:
                v -= w16 * w16
            u = int(sy[i])
            if (u >> 29) > 3:
                u -= w16 * w16
            dy = v - u
            t = int(tw[i])
            if (t >> 29) > 3:
                t -= w16 * w16
            t += mtol
            if dx * dx + dy * dy <= t * t:
                moved[i] = 0
                order[i] = 0
        rmoved[i] = moved[i]
        fate[i] = rest
        if int(moved[i]) != 0:
            left |= 256
        i += 1
    return left


@micropython.viper
def _rest_snapshot(tr):
    """Tracker._finish's new rest snapshot for the tracked chips, in machine code (issue 13): a
    chip present and seen lies at its last fit (tx, ty; its strength ts), its masks' mark
    (cupped[MAX + slot]) cleared if that is not where it lay; any other leaves its slot."""
    present = ptr8(tr.present)
    seen = ptr8(tr.seen)
    cupped = ptr8(tr.cupped)
    sx = ptr32(tr.x)
    sy = ptr32(tr.y)
    tx = ptr32(tr.tx)
    ty = ptr32(tr.ty)
    rs = ptr32(tr.rs)
    ts = ptr32(tr.ts)
    i = 0
    while i < MAX:
        if int(present[i]) != 0 and int(seen[i]) != 0:
            x = int(tx[i])
            y = int(ty[i])
            if int(sx[i]) != x or int(sy[i]) != y:
                cupped[MAX + i] = 0
            sx[i] = x
            sy[i] = y
            rs[i] = ts[i]
        else:
            present[i] = 0
            cupped[MAX + i] = 0
        i += 1


@micropython.viper
def _rest_masks(tr, r) -> int:
    """Tracker._finish's masks for the snapshot, in machine code (issue 13), for the chips whose
    masks are kept (cupped[MAX + slot] == 1 + tunc: where they lay, as well known): the result's
    end masks and positions (seen, or at rest), sure cleared for a moved chip near a border (hi
    != lo); a free slot's masks cleared. Returns a bit per present chip whose masks are made
    again (1 << slot: _finish's Python calls disc_mask for those)."""
    present = ptr8(tr.present)
    seen = ptr8(tr.seen)
    cupped = ptr8(tr.cupped)
    tunc = ptr32(tr.tunc)
    mask = ptr32(tr.mask)
    lo = ptr32(tr.lo)
    hi = ptr32(tr.hi)
    sx = ptr32(tr.x)
    sy = ptr32(tr.y)
    fate = ptr8(r.fate)
    rmoved = ptr8(r.moved)
    end = ptr32(r.end_mask)
    rx = ptr32(r.x)
    ry = ptr32(r.y)
    sure = ptr8(r.sure)
    rest = int(S.FATE_REST)
    w16 = 65536             # (w16 * w16: 2**32 on a 64-bit port, where it is used)
    left = 0
    i = 0
    while i < MAX:
        if int(present[i]) == 0:
            mask[i] = 0
            lo[i] = 0
            hi[i] = 0
            i += 1
            continue
        u = int(tunc[i])
        if (u >> 29) > 3:
            u -= w16 * w16
        if int(cupped[MAX + i]) != u + 1:
            left |= 1 << i
            i += 1
            continue
        if int(seen[i]) != 0 or int(fate[i]) == rest:
            end[i] = mask[i]
            rx[i] = sx[i]
            ry[i] = sy[i]
            if int(rmoved[i]) != 0 and int(hi[i]) != int(lo[i]):
                sure[i] = 0
        i += 1
    return left


class Tracker:
    SETTLE_MS = 400       # still this long = at rest ...
    # ... judged at a frame's end: the last frame that ends no more than SETTLE_MS after the
    # stillness began, unless the one after it would end more than SETTLE_FRAME ms later (the
    # frame's own length stands for the next one's, at most SETTLE_FRAME): the verdict is not
    # put off by up to a whole frame past SETTLE_MS (issue 13: on the RP2040 a frame lasts 14 -
    # 16 ms while the board settles, and rest -> score shown must stay <= 450 ms). Frames of
    # exactly SETTLE_FRAME ms (the unix runner's 16 steps of 1 ms: SETTLE_MS is 25 of them)
    # are judged exactly as at SETTLE_MS; a longer frame no earlier than SETTLE_FRAME before it
    SETTLE_FRAME = 16
    # the fresh fit of the settled readings is asked a frame before the verdict's (refresh)
    # (both widened by how far the locator says a still chip's fit may wander, wander: a chip
    # seen by few pads, beside dead ones or on presence pads, or fitted badly; issue 4)
    # MOVE_TOL (+ wander) from its rest position: the chip moved. A move of 3 mm must be seen
    # (issue 12). Both positions compared are fits, each off by up to the chip's wander (hall
    # pads, a chip alone: 0.5 mm), so a 3 mm move can show as 2 mm: with 2 mm + wander, moves of
    # 3.0 - 3.5 mm went unseen now and then (the shot bench, seed 5: 3.26 mm). 1.2 mm + wander
    # leaves 0.3 mm; a still chip's fit moves by its wander at most. Presence pads keep 2 mm:
    # one pad switching at its threshold moves a fit by 1 - 3 mm, and they cannot see every
    # 3 mm move anyway (docs/sensing.md, "Moves the presence pads cannot see")
    MOVE_TOL = 20
    MOVE_TOL_GRADED = 12
    STILL_TOL = 15        # 1.5 mm from where it was SETTLE_MS ago at most: still
    MAX_JUMP = 900        # 90 mm per frame at most (a fast flick, 16 ms frames) ...
    # ... per JUMP_MS of the time between two frames: a frame lasts 16 ms on the unix runner,
    # 130 - 170 ms on the RP2040 while chips move (the fit; docs/rp2040.md), and a chip goes as
    # far between two frames as that time lets it. Chips still where they were (MOVE_TOL and
    # their wander) are matched first, so the wider reach only ever takes what moved (issue 13)
    JUMP_MS = 16
    # a chip only counts as moved while it is seen at least this strong: a chip being lifted
    # fades, and its weakening fit wanders
    MOVE_STRENGTH = B.ADC_PEAK // 2
    # a chip that vanishes this close to the edge left the board; elsewhere a hand lifted it
    EDGE_NEAR = 700
    # a chip that vanishes near the edge while still seen this strong slid off (a flick from
    # near the edge can leave within a frame); a chip lifted by a hand fades out first
    OFF_STRENGTH = B.ADC_PEAK * 3 // 4
    # ... or seen this far (10 mm) from where it lay, however weak: a chip sliding over the
    # edge leaves the pad grid and weakens; a lifted chip's fit does not wander that far
    OFF_SLID = _OFF_SLID
    # a chip seen at rest weaker than this share (in 1/4) of its rest strength is fading: a
    # hand lifting it. The board is then no longer at rest, so the lift is followed frame by
    # frame and the chip is seen weak before it vanishes (a chip flicked off keeps its strength)
    FADE_Q = 3
    # ... and one seen where it lay weaker than FADED_Q (in 1/8) of it is fading there: a hand
    # lifting it, not a flick. A lift's fade (some 150 ms) falls between two frames on the chip
    # (frames of 60 - 170 ms while the pads change), which may see it once, part faded, before
    # it is gone; a still chip's fits stay within a few % of its rest strength (issue 13)
    FADED_Q = 7
    # Seen so once and gone in the next frame: a flick leaves within a frame of 16 ms, a hand
    # takes some 150 ms to lift a chip out of the pads' reach, so a chip gone more than GONE_MS
    # after it was seen weaker where it lay was lifted (a frame on the chip: 60 - 170 ms)
    GONE_MS = 40
    # a chip that slid and was lost comes back within this, even weak
    REFIND_NEAR = 400
    # a chip lost this close to pads that give no reading (issue 4) may only be out of sight
    BLIND_NEAR = 450
    # presence pads (issue 4): they see no strength, but they see a hand. A hand lifting a
    # chip covers it, so the chip goes into the hand's patch: a chip that vanishes and has a
    # hand seen where it was last seen (the centre of the hand's patch within HAND_NEAR, 60 mm:
    # about a palm's half width) in HAND_FRAMES frames, the first within HAND_RECENT_MS of the
    # frame it went and each within HAND_RECENT_MS of the one before, was lifted. One that
    # vanishes with no hand there left the board, wherever it lay. Two frames, and only frames
    # in which the chip is not seen itself: a chip flicked at 4.8 m/s is smeared over one
    # frame's scan into a ragged patch beside it that the locator takes for a hand, for a frame
    # or two as it leaves (a hand stays a few hundred ms). Gaps are bridged: by the edge a hand
    # partly off the pads is taken for chips in some frames. A frame that follows the one
    # before at once counts however long that took: on the RP2040 the locator tries every set
    # of up to four chips on a hand's patch before it calls it a hand, 140 - 310 ms a frame, so
    # a lift's two hand frames came 300 - 330 ms apart and every lift after an undo was judged a
    # chip gone off the board, a gutter (bench.rp2040_profile --series, presence pads)
    HAND_NEAR = 600
    HAND_RECENT_MS = 250
    HAND_FRAMES = 2
    # ... and by the edge a hand mostly off the pads is no hand to the locator but a crowd of
    # chips that come and go where a chip lay (a lift 2 mm from the side was taken for a flick
    # off the board, issue 12): chips that are no tracked chip, within HAND_NEAR of where a
    # chip lay, in GHOST_FRAMES frames each within HAND_RECENT_MS of the one before, the last
    # within HAND_RECENT_MS of the frame it went, are a hand too. More frames than a hand seen
    # as one: a chip flicked fast is smeared into two for a frame or two as it leaves
    GHOST_FRAMES = 4

    def __init__(self, locator, fast):
        self.loc = locator
        self.fast = fast
        self.res = S.ShotResult()
        # the rest snapshot, by slot
        self.present = bytearray(MAX)
        self.kind = bytearray(MAX)
        self.x = array('i', (0,) * MAX)
        self.y = array('i', (0,) * MAX)
        self.mask = array('i', (0,) * MAX)
        self.lo = array('i', (0,) * MAX)     # the zones it surely overlaps, by its uncertainty
        self.hi = array('i', (0,) * MAX)     # ... and those it may overlap
        # tracks while active
        self.tx = array('i', (0,) * MAX)
        self.ty = array('i', (0,) * MAX)
        self.tunc = array('i', (0,) * MAX)   # how well the locator knows that position (0.1 mm)
        self.seen = bytearray(MAX)
        self.moved = bytearray(MAX)
        self.ts = array('i', (0,) * MAX)     # the strength each chip was last seen with
        self.faded = bytearray(MAX)          # seen weak where it lay: a hand lifting it
        self.weak = bytearray(MAX)           # last seen a little weaker, where it lay ...
        self.weak_t = array('i', (0,) * MAX) # ... at this ticks_ms
        self.now = 0                         # ticks_ms of the frame under way
        self.rs = array('i', (0,) * MAX)     # the strength each chip came to rest with
        # the hall pads measure a chip's strength (a magnet lifted fades); presence pads see
        # every chip alike (strength ADC_PEAK), so a chip vanishing from them tells nothing
        # by its strength, but they see the hand that lifts it (locator.hand, hand_x, hand_y)
        self.graded = 1 if locator.GRADED else 0
        self.move_tol = self.MOVE_TOL_GRADED if self.graded else self.MOVE_TOL
        # a locator whose still fits move only with the chip says how far (presence pads of
        # several levels, issue 12: sensing/presence_locate.py, FLICKER)
        self.move_tol = getattr(locator, "MOVE_TOL", self.move_tol)
        self.hand_n = bytearray(MAX)         # frames a hand was seen where the chip went ...
        self.hand_t = array('i', (0,) * MAX) # ... the last at this ticks_ms (presence pads)
        self.handed = bytearray(MAX)         # HAND_FRAMES of them: a hand lifted it
        self.gone_t = array('i', (0,) * MAX) # when it vanished (ticks_ms)
        self.ghost_n = bytearray(MAX)        # frames with other chips where it lay (presence)
        self.ghost_t = array('i', (0,) * MAX)  # ... the last at this ticks_ms
        self.move_order = bytearray(MAX)
        self.n_moved = 0
        # who moved first (issue 12): the frame of the activity in which each chip was first
        # seen moved (capped), and how far it had moved then (0.1 mm), for the knock geometry
        self.afr = 0
        self.mf = bytearray(MAX)
        self.lf = bytearray(MAX)             # ... or the frame it was first lost from sight in
        self.mdx = array('i', (0,) * MAX)
        self.mdy = array('i', (0,) * MAX)
        self.tw = array('i', (0,) * MAX)     # how far its still fit may wander (locator.wander)
        self.grazed = bytearray(MAX)         # a moving chip came within GRAZE of it (presence)
        self.last_t = 0                      # ticks_ms of the frame before
        self.claimed = bytearray(9)          # (and [_TIDY])
        self.claimed_by = bytearray(MAX)     # (_track) kept its place in the first pass: j + 1
        # (_finish) FATE_CUP_* of the vanished chips a cup took; from MAX on, 1 + the
        # uncertainty each slot's masks were made with (0: none kept). In the 16-byte heap
        # block the 4 bytes filled anyway (the chip's heap floor has 32 - 64 B of room)
        self.cupped = bytearray(MAX + MAX)
        # the previous frame, to tell stillness
        self.pn = 0
        self.pk = bytearray(8)
        self.px = array('i', (0,) * 8)
        self.py = array('i', (0,) * 8)
        self.ps = array('i', (0,) * 8)       # (strength and wander too: the frame is then
        self.pw = array('i', (0,) * 8)       # exactly the one before, nothing to judge again)
        # the frame stillness is measured from (_set_anchor), and the one step left before a
        # verdict: a fresh fit asked of the locator (refresh) once SETTLE_MS passed. The anchor
        # (an chips) from entry ao on (0 or 8), the second anchor (bn chips, -1: none) from
        # 8 - ao: the fit of the frame at bt, which every frame since stays near (see frame())
        self.an = 0
        self.ao = 0
        self.bn = -1
        self.bt = 0
        self.ak = bytearray(16)
        self.ax = array('i', (0,) * 16)
        self.ay = array('i', (0,) * 16)
        self.confirm = 0
        self.rest_ok = 0          # the last frame at rest matched the snapshot, and none differed since
        self.state = IDLE
        self.still = 0
        self.still_since = 0
        self.edges = 0
        self.rest_gates = 0       # gate beams blocked while the board rested (a chip in a pocket)
        self.event = EV_NONE
        self.too_many = 0
        self.frames = 0

    # -- queries ---------------------------------------------------------------------------
    def count(self, kind):
        n = 0
        for i in range(MAX):
            if self.present[i] and self.kind[i] == kind:
                n += 1
        return n

    def slot_of(self, kind):
        for i in range(MAX):
            if self.present[i] and self.kind[i] == kind:
                return i
        return -1

    def at_rest(self):
        return self.state == IDLE

    def take_event(self):
        e = self.event
        self.event = EV_NONE
        return e

    # -- one frame -------------------------------------------------------------------------
    def frame(self):
        loc = self.loc
        n = loc.n
        if self.confirm == 2:
            # the verdict put off from the frame's turn (below): now, as it would have been
            # (self.edges as that frame() left it after its _finish)
            self.confirm = 1
            e = self.edges
            self._finish(n, self.now)
            self.edges = e
            return
        now = time.ticks_ms()
        self.frames += 1
        dt = time.ticks_diff(now, self.last_t)
        self.last_t = now
        self.now = now
        # the locator keeps its result while nothing moves (hall: no pad jumped; presence: no
        # pad changed): a frame exactly the one before is still and needs no copy
        same = self._unchanged(n)
        if not same:
            self._keep_prev(n)
            self.rest_ok = 0
        edges = self.fast.total
        if self.state == IDLE:
            if edges == 0 and (self.rest_ok or self._matches_snapshot(n)):
                self.rest_ok = 1
                # a chip resting in a pocket blocks its gate; the shot that starts there is
                # seen a frame late, when the chip may already have left the beam, so the
                # blocked gates are gathered over the whole rest
                fast = self.fast
                if fast.blocked(F.GATE_A):
                    self.rest_gates |= 1
                if fast.blocked(F.GATE_B):
                    self.rest_gates |= 2
                return
            self.rest_ok = 0
            self._begin(now)
        if self.afr < 255:
            self.afr += 1
        self._track(n, now, dt, same)
        # Still: every chip within STILL_TOL (+ wander) of where it was when the stillness
        # began (the anchor), not of the frame before: a chip creeping to rest moves less than
        # that from frame to frame, and was taken for still while it moved (issue 12). A frame
        # exactly the one before is as near the anchor as that one was. A hand hovering over
        # presence pads hides what lies under it: never at rest then. While a still group's
        # search is not finished (the presence locator on the chip, cut at its budget and
        # resumed frames later: its chips are the frame before's, coarse; cut & 2) the
        # stillness goes on but does not end: no refresh asked, no verdict, until the
        # finished fit (itself within the tolerance of the anchor, or the stillness begins
        # again there) is in a frame
        ok = self.still and edges == self.edges and not loc.hand
        wait = loc.cut & 2
        # Presence pads: a frame's stillness is stamped at the frame before's end (t), not at
        # this one's: every pad this frame's fit is made of was read after it (the scan's
        # strobes run in the turns after the frame before's fit: shift_scan.step), so a chip
        # whose fit here stays within the tolerance from now on lay there from that read on. At
        # `now` the stamp left out the frame's own read and fit (17 ms a moving frame on the
        # chip): the stillness judged from the end of the first frame read at rest, a frame
        # after the stop (issue 13: presence rest -> shown up to 450 ms, docs/performance.md
        # "Presence rest -> shown: a frame's stillness from its read"). Not where a beam fired
        # this frame (the beam may have fired after t) nor at the first frame (no frame before).
        # The hall pads keep `now` (their lagging fit: _LAG_TOL below)
        t = now
        if not self.graded and edges == self.edges and self.frames > 1:
            t = time.ticks_add(now, -dt)
        if ok and not same:
            mark = 1
            if not self._near_anchor(n, self.ao, self.an, 0):
                # The stillness begins again, but not always now: the anchor may be a fit that
                # lagged the chip (the hall pads' smoothed readings still catching up when the
                # stillness began), and the fits since (the refresh's among them) a little
                # past it with the chip at rest (issue 13: 40 - 420 ms more on the chip). The
                # second anchor is the fit of an earlier frame (bt) that every frame since,
                # this one too, stays within STILL_TOL (+ wander) of: the stillness is then
                # counted from bt, against it, which is what the rule asks of any stillness (a
                # creeping chip leaves every anchor as it leaves this one). The refresh is
                # asked again, a frame before the verdict's of the stillness from bt (above),
                # unless bt is where the stillness began (below): it goes on, anchored anew
                if self._near_anchor(n, 8 - self.ao, self.bn, 0):
                    if self.bt != self.still_since:
                        self.still_since = self.bt
                        self.confirm = 0
                    self.ao = 8 - self.ao       # the second anchor is the anchor now
                    self.an = self.bn
                    # ... and this frame the second anchor, from now (the frames since bt
                    # are near the anchor, not known to be near this one)
                    self.bn = self._set_anchor(n, 8 - self.ao)
                    self.bt = t
                    mark = 2
                # Hall pads: this frame's chips within _LAG_TOL more of the frame before's fits
                # (still 3: the anchor holds them, 2: the second anchor, below): the stillness
                # begins again here but is counted from the frame before. The last moving
                # frame's fit is of a frame read while the chip slid (its banks read 10 - 20 ms
                # before the stop) and lags where it came to rest by 2.0 - 2.8 mm on the chip
                # (2.3 - 3.1 mm on the desktop); the next frame, read at rest, fits it there.
                # When that frame's pads fit the lagging fit within FOLLOW_ERR the locator
                # corrects it (hall_follow: its wander widened); when they miss it by more (the
                # chip fitted as a moving one) the stillness began again here, a frame (17 - 23
                # ms) after the stop: rest -> score shown up to 450 ms on the chip where the
                # other runs took 422 - 443 (docs/performance.md, "The last moving fit missed
                # by the next frame"). Anchored at this frame's fits, no second anchor yet, as a
                # stillness begun again: the locator's correction of it at the next frame, if
                # any, becomes the second anchor from the frame before. Never more than a frame:
                # a chip still sliding up to 3.5 mm a frame has its stillness counted from the
                # frame before at each frame, as a stillness already began up to a frame before
                # the stop whenever the last moving fit lagged less than the tolerance; one
                # sliding more begins it again as before.
                elif self.graded and self.still > 1 and (
                        self._near_anchor(n, self.ao, self.an, _LAG_TOL) if self.still == 3
                        else self._near_anchor(n, 8 - self.ao, self.bn, _LAG_TOL)):
                    self.still_since = time.ticks_add(now, -dt)
                    self.confirm = 0
                    self.an = self._set_anchor(n, self.ao)
                    self.bn = -1
                    mark = 3
                else:
                    ok = False
            if ok and mark != 3 and not self._near_anchor(n, 8 - self.ao, self.bn, 0):
                # the second anchor: the first frame since which every one stays near it.
                # The first frame since the anchor's that differs from it (bn -1): the frames
                # before it were the anchor's own fit, which this one is near (above), so
                # every frame of the stillness is near it, and bt is where the stillness
                # began (issue 13: the chip's first still fit, made on readings still
                # catching up, lagged it 2 mm; the refresh fit came 2.1 mm from it and 0.2
                # from the second anchor, a frame or two on: the stillness counted from there,
                # the score shown 456 ms after the chip stopped where it was 430)
                self.bt = self.still_since if self.bn < 0 else t
                self.bn = self._set_anchor(n, 8 - self.ao)
                mark = 2
            if ok:
                self.still = mark       # 3: the anchor holds this frame's fits, 2: the second
        if ok:
            # el + f: when the next frame will end (SETTLE_MS and SETTLE_FRAME: above)
            el = time.ticks_diff(now, self.still_since)
            f = dt if dt < self.SETTLE_FRAME else self.SETTLE_FRAME
            if wait:
                pass
            elif not self.confirm:
                if el + f + f > self.SETTLE_MS:
                    # the position is taken from a fit of the settled readings, made on the
                    # next frame (locator.refresh): a fit kept from the last frames of a slow
                    # slide, or made on readings still settling, lags the chip (issue 12).
                    # Asked a frame early, so that the verdict comes no later than before
                    loc.refresh()
                    self.confirm = 1
            elif el + f > self.SETTLE_MS:
                if self.graded and loc.pace & 32:
                    # hall pads on the chip (their refresh fit paced, sensing/hall_follow.py):
                    # the verdict in the next loop turn, which calls frame() again (app.step;
                    # issue 13: this frame's turn, the tracker and the verdict's zone masks of
                    # four chips, 10 - 14 ms), the locator's chips and `now` as they are here
                    self.confirm = 2
                else:
                    self._finish(n, now)
        else:
            self.still = 3          # (the anchor: this frame's fits)
            self.still_since = t
            self.confirm = 0
            self.an = self._set_anchor(n, self.ao)
            self.bn = -1
        self.edges = edges

    def _unchanged(self, n):
        """The locator's chips are exactly those of the frame before (kind, x, y, strength,
        wander, in the same order)."""
        if n != self.pn:
            return False
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        ls = loc.strength
        lw = loc.wander
        pk = self.pk
        px = self.px
        py = self.py
        ps = self.ps
        pw = self.pw
        for j in range(n):
            if lx[j] != px[j] or ly[j] != py[j] or lk[j] != pk[j] or ls[j] != ps[j] or lw[j] != pw[j]:
                return False
        return True

    def _set_anchor(self, n, o):
        """This frame's chips into the anchor entries from o on. Returns how many."""
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        ak = self.ak
        ax = self.ax
        ay = self.ay
        m = n if n < 8 else 8
        for j in range(m):
            ak[o + j] = lk[j]
            ax[o + j] = lx[j]
            ay[o + j] = ly[j]
        return m

    def _near_anchor(self, n, o, m, more):
        """Every chip the locator sees is within STILL_TOL (+ its wander, + more) of a chip of
        its kind in the anchor entries from o on, and as many as there (m; -1: none)."""
        if n != m:
            return False
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        lw = loc.wander
        pk = self.ak
        px = self.ax
        py = self.ay
        tol = self.STILL_TOL + more
        for j in range(n):
            kj = lk[j]
            xj = lx[j]
            yj = ly[j]
            t = tol + lw[j]
            t *= t
            ok = False
            for k in range(o, o + n):
                if pk[k] == kj:
                    dx = px[k] - xj
                    dy = py[k] - yj
                    if dx * dx + dy * dy <= t:
                        ok = True
                        break
            if not ok:
                return False
        return True

    def _keep_prev(self, n):
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        ls = loc.strength
        lw = loc.wander
        pk = self.pk
        px = self.px
        py = self.py
        ps = self.ps
        pw = self.pw
        m = n if n < 8 else 8
        for j in range(m):
            pk[j] = lk[j]
            px[j] = lx[j]
            py[j] = ly[j]
            ps[j] = ls[j]
            pw[j] = lw[j]
        self.pn = m

    def _matches_snapshot(self, n):
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        ls = loc.strength
        lw = loc.wander
        present = self.present
        kind = self.kind
        sx = self.x
        sy = self.y
        rs = self.rs
        tol = self.move_tol
        q = self.FADED_Q
        count = 0
        for i in range(MAX):
            if not present[i]:
                continue
            count += 1
            ki = kind[i]
            xi = sx[i]
            yi = sy[i]
            ok = False
            for j in range(n):
                if lk[j] == ki:
                    t = tol + lw[j]
                    dx = lx[j] - xi
                    dy = ly[j] - yi
                    if dx * dx + dy * dy <= t * t:
                        if ls[j] * 8 < rs[i] * q:
                            return False        # fading where it lies: being lifted
                        ok = True
                        break
            if not ok:
                return False
        return count == n

    def _begin(self, now):
        self.state = ACTIVE
        self.claimed[_TIDY] = 0
        self.still = 0
        self.confirm = 0
        self.edges = self.fast.total
        self.n_moved = 0
        self.afr = 0
        r = self.res
        r.clear()
        r.t_start = now
        fast = self.fast
        r.gates = self.rest_gates
        if fast.blocked(F.GATE_A):
            r.gates |= 1
        if fast.blocked(F.GATE_B):
            r.gates |= 2
        for i in range(MAX):
            self.tx[i] = self.x[i]
            self.ty[i] = self.y[i]
            self.seen[i] = self.present[i]
            self.moved[i] = 0
            # the strength it was last seen with: at rest, no weaker than FADE_Q / 4 of its
            # rest strength (weaker, the activity would have begun), so a chip that vanishes
            # before any frame of the activity sees it was seen strong just before: it did not
            # fade in place as a lifted chip does (hall pads). Presence pads tell nothing by
            # strength: only what is seen during the activity counts there
            self.ts[i] = self.rs[i] if self.graded else 0
            self.faded[i] = 0
            self.weak[i] = 0
            self.handed[i] = 0
            self.hand_n[i] = 0
            self.ghost_n[i] = 0
            self.move_order[i] = 0
            self.mf[i] = 0
            self.lf[i] = 0
            self.grazed[i] = 0

    def _hand_at(self, now, dt):
        """A hand is seen (presence pads): count it at every chip gone from sight within
        HAND_NEAR of it (HAND_FRAMES of them: lifted). dt: ms since the frame before (one seen
        then counts, however long ago: HAND_RECENT_MS above)."""
        loc = self.loc
        hx = loc.hand_x
        hy = loc.hand_y
        hand_n = self.hand_n
        recent = self.HAND_RECENT_MS
        for i in range(MAX):
            if not self.present[i] or self.seen[i] or \
                    not _near(self.tx[i], self.ty[i], hx, hy, self.HAND_NEAR):
                continue
            el = time.ticks_diff(now, self.hand_t[i])
            if hand_n[i] and (el <= recent or el == dt):
                if hand_n[i] < 255:
                    hand_n[i] += 1
            else:
                el = time.ticks_diff(now, self.gone_t[i])
                if el <= recent or el == dt:
                    hand_n[i] = 1
                else:
                    continue
            self.hand_t[i] = now
            if hand_n[i] >= self.HAND_FRAMES:
                self.handed[i] = 1

    def _track(self, n, now, dt, same):
        loc = self.loc
        claimed = self.claimed
        seen = self.seen
        if same and claimed[_TIDY] and not loc.hand:
            # the frame before's chips exactly, and that frame matched every tracked chip to
            # its own in the first pass (_TIDY): each is at its chip's fit now (distance 0), so
            # the passes below would match each to the same chip and write what they wrote
            # then; only the uncertainty is not part of "exactly" (_unchanged)
            unc = loc.unc
            cb = self.claimed_by
            for i in range(MAX):
                if seen[i]:
                    self.tunc[i] = unc[cb[i] - 1]
            return
        # The matching carried over: every tracked chip is seen and lies exactly at the fit it
        # followed last (cb), no two of one kind at one place, and those are all the locator's
        # chips: the first pass below would match each to that fit (at distance 0, the only one
        # there), the others would find nothing left, and _ghosts no chip unclaimed, so only
        # the follows are made. (Issue 13: the settle window's first frame, the activity begun
        # with every chip where the frame before saw it, matched four chips afresh: 1.8 ms of
        # an 11.2 ms frame on the chip.) _carry checks it and makes the follows, in machine code
        # (1.3 ms of that frame in Python); else (not all of them) the passes
        if not loc.hand and _carry(self, loc, n) == n:
            return
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        lw = loc.wander
        kind = self.kind
        tx = self.tx
        ty = self.ty
        cb = self.claimed_by
        present = self.present
        weak = self.weak
        for j in range(8):
            claimed[j] = 0
        tidy = 1 if n <= 8 and not loc.hand else 0
        k = 0                             # chips matched in the first pass
        # first the chips that are still where they were seen last: each keeps the chip of its
        # kind nearest to it within MOVE_TOL (+ wander), so that a chip that moved far since the
        # frame before (a long frame) cannot take the place of one that did not
        tol = self.MOVE_TOL
        for i in range(MAX):
            if not seen[i]:
                cb[i] = 0
                if present[i]:
                    tidy = 0
                continue
            best = -1
            bd = 0
            ki = kind[i]
            xi = tx[i]
            yi = ty[i]
            for j in range(n):
                if claimed[j] or lk[j] != ki:
                    continue
                t = tol + lw[j]
                dx = lx[j] - xi
                dy = ly[j] - yi
                d = dx * dx + dy * dy
                if d <= t * t and (best < 0 or d < bd):
                    bd = d
                    best = j
            if best >= 0:
                self._follow(i, best)
                cb[i] = best + 1
                k += 1
                if weak[i]:
                    tidy = 0
            else:
                cb[i] = 0
                tidy = 0
        # then the others: the nearest left within the reach of the time since the frame before
        jump = self.MAX_JUMP
        if dt > self.JUMP_MS:
            jump = self.MAX_JUMP * (dt if dt < 400 else 400) // self.JUMP_MS
        jump2 = jump * jump + 1
        for i in range(MAX):
            if not seen[i] or cb[i]:
                continue
            best = -1
            bd = jump2
            ki = kind[i]
            xi = tx[i]
            yi = ty[i]
            for j in range(n):
                if claimed[j] or lk[j] != ki:
                    continue
                dx = lx[j] - xi
                dy = ly[j] - yi
                d = dx * dx + dy * dy
                if d < bd:
                    bd = d
                    best = j
            if best >= 0 and self._taken_by_nearer(i, best, bd):
                best = -1                 # its fit is another chip's: it went under a hand
            if best >= 0 and self._under_hand(xi, yi):
                best = -1                 # under the hand's patch: hidden, not gone elsewhere
            if best < 0:
                seen[i] = 0               # vanished: into a cup, off the board or lifted
                self.gone_t[i] = now
                if not self.moved[i] and not self.lf[i]:
                    self.lf[i] = self.afr     # gone from where it lay: moving by now (_first_mover)
                if self.ghost_n[i] >= self.GHOST_FRAMES and \
                        time.ticks_diff(now, self.ghost_t[i]) <= self.HAND_RECENT_MS:
                    self.handed[i] = 1    # into a crowd of ghosts: a hand by the edge
                continue
            self._follow(i, best)
        # a chip lost for a frame or two (a fast slide smears its field over the frame) is
        # found again where a strong chip of its kind shows up unclaimed; a chip lifted by a
        # hand comes back only faded in, so it is not taken for one that slid
        for i in range(MAX):
            if not present[i] or seen[i]:
                continue
            tidy = 0
            best = -1
            bd = 0x3fffffff
            ki = kind[i]
            xi = tx[i]
            yi = ty[i]
            if self._under_hand(xi, yi):
                continue                  # hidden under the hand while it is there
            for j in range(n):
                if claimed[j] or lk[j] != ki:
                    continue
                # (a chip that slid may come back weak where it was lost: a pad under it that
                # does not see it, before the fault monitor leaves that pad out; issue 4)
                if loc.strength[j] < self.MOVE_STRENGTH and not (
                        self.moved[i] and _near(xi, yi, lx[j], ly[j], self.REFIND_NEAR)):
                    continue
                dx = (lx[j] - xi) >> 2
                dy = (ly[j] - yi) >> 2
                d = dx * dx + dy * dy
                if d < bd:
                    bd = d
                    best = j
            if best >= 0 and self._nearer_lost(i, best, bd):
                best = -1
            if best >= 0:
                seen[i] = 1
                self._follow(i, best)
        claimed[_TIDY] = 1 if tidy and k == n else 0
        if loc.hand:
            self._hand_at(now, dt)
        if not self.graded:
            self._ghosts(n, now)

    def _under_hand(self, x, y):
        """A hand is seen (presence pads) and (x, y) lies under its patch (_HAND_HIDES)."""
        loc = self.loc
        return loc.hand and _near(x, y, loc.hand_x, loc.hand_y, _HAND_HIDES)

    def _taken_by_nearer(self, i, j, d):
        """A slot still to be matched this frame, of i's kind, lies nearer (d: i's squared
        distance) to the locator's chip j, and j is the nearest chip to it too: j is that one's.
        A hand putting a chip down hides the chips around it; one it hides, 68 mm from another
        it does not, took that one's fit, and the two swapped slots: a shot (presence pads)."""
        loc = self.loc
        lk = loc.kind
        lx = loc.x
        ly = loc.y
        n = loc.n
        for k in range(i + 1, MAX):
            if not self.seen[k] or self.kind[k] != self.kind[i]:
                continue
            dx = lx[j] - self.tx[k]
            dy = ly[j] - self.ty[k]
            dk = dx * dx + dy * dy
            if dk >= d:
                continue
            mine = True
            for q in range(n):
                if q != j and not self.claimed[q] and lk[q] == lk[j]:
                    dx = lx[q] - self.tx[k]
                    dy = ly[q] - self.ty[k]
                    if dx * dx + dy * dy < dk:
                        mine = False
                        break
            if mine:
                return True
        return False

    def _nearer_lost(self, i, j, d):
        """Another lost chip of i's kind lay nearer (d: i's distance to j as _track reckons it)
        to the locator's chip j: j is that one's. Chips hidden together (under the hand that
        puts a chip down between them, presence pads) come back one frame after another, and
        the first to show up went to the first slot: two still chips swapped slots, a shot."""
        loc = self.loc
        xj = loc.x[j]
        yj = loc.y[j]
        for k in range(MAX):
            if k == i or not self.present[k] or self.seen[k] or self.kind[k] != self.kind[i]:
                continue
            dx = (xj - self.tx[k]) >> 2
            dy = (yj - self.ty[k]) >> 2
            if dx * dx + dy * dy < d:
                return True
        return False

    def _ghosts(self, n, now):
        """Presence pads: count a frame for every chip with a chip the locator sees, that is no
        tracked chip, within HAND_NEAR of where it lay (GHOST_FRAMES). A chip already gone
        whose crowd goes on to GHOST_FRAMES was lifted too: a hand by the side, over the chip
        and partly off the pads, was fitted as four big chips from the frame the small chip
        went, and only the frame it went was looked at (a lift taken for a flick off, the
        seed-41 bench on four-level pads). A crowd that begins more than HAND_RECENT_MS after
        the chip went did not take it."""
        loc = self.loc
        lx = loc.x
        ly = loc.y
        claimed = self.claimed
        for i in range(MAX):
            if not self.present[i]:
                continue
            xi = self.x[i]
            yi = self.y[i]
            for j in range(n):
                if j < 8 and not claimed[j] and _near(xi, yi, lx[j], ly[j], self.HAND_NEAR):
                    g = self.ghost_n[i]
                    if g and time.ticks_diff(now, self.ghost_t[i]) > self.HAND_RECENT_MS:
                        g = 0
                    if g == 0 and not self.seen[i] and \
                            time.ticks_diff(now, self.gone_t[i]) > self.HAND_RECENT_MS:
                        break
                    if g < 255:
                        g += 1
                    self.ghost_n[i] = g
                    self.ghost_t[i] = now
                    if g >= self.GHOST_FRAMES and not self.seen[i]:
                        self.handed[i] = 1
                    break

    def _follow(self, i, j):
        # (each attribute looked up once, and only where it is read: a lookup is some us on
        # the chip, four chips a frame; issue 13: the settle window's first frame matches
        # every chip afresh)
        loc = self.loc
        self.claimed[j] = 1
        x = loc.x[j]
        y = loc.y[j]
        st = loc.strength[j]
        w = loc.wander[j]
        self.tx[i] = x
        self.ty[i] = y
        self.ts[i] = st
        dx = x - self.x[i]
        dy = y - self.y[i]
        d = dx * dx + dy * dy
        ms = self.MOVE_STRENGTH
        graded = self.graded
        if st < ms and d <= _OFF_SLID2:
            self.faded[i] = 1
        if graded:
            t = self.MOVE_TOL + w
            if st * 8 < self.rs[i] * self.FADED_Q and d <= t * t:
                self.weak[i] = 1            # weaker where it lay (_finish: a lift, or a flick)
                self.weak_t[i] = self.now
            else:
                self.weak[i] = 0
        else:
            self.weak[i] = 0
        self.tunc[i] = loc.unc[j]
        self.tw[i] = w
        moved = self.moved
        if moved[i]:
            if not graded:
                self._graze(i, x, y)
        elif st >= ms:
            t = self.move_tol + w
            if d > t * t:
                moved[i] = 1
                self.n_moved += 1
                self.move_order[i] = self.n_moved
                self.mf[i] = self.afr
                self.mdx[i] = dx
                self.mdy[i] = dy

    def _finish(self, n, now):
        loc = self.loc
        fast = self.fast
        r = self.res
        r.t_rest = now
        cupped = self.cupped
        for i in range(MAX):
            cupped[i] = 0
        # (a cup's drops only when its beam counted one: the call, which then does nothing,
        # not made in the verdict's turn, issue 13)
        if fast.count[F.CUP_A]:
            self._cup_drops(F.CUP_A, S.FATE_CUP_A, B.CUP_V - B.HALF_L)
        if fast.count[F.CUP_B]:
            self._cup_drops(F.CUP_B, S.FATE_CUP_B, B.HALF_L - B.CUP_V)
        shot = False
        slid = False          # a chip at rest now moved (shot: one vanished as in a shot)
        placed = False
        taken = False
        self._reclaim(n)
        # (the arrays in locals, the same objects: a lookup each fewer a chip in the verdict's
        # turn, issue 13)
        present = self.present
        seen = self.seen
        moved = self.moved
        fates = r.fate
        rmoved = r.moved
        rest = S.FATE_REST
        kinds = self.kind
        masks = self.mask
        his = self.hi
        los = self.lo
        rkind = r.kind
        rmask = r.start_mask
        rlo = r.start_lo
        rhi = r.start_hi
        # (the chips seen, in machine code: _rest_seen; the ones not seen below)
        left = _rest_seen(self, r)
        if left > 255:
            slid = True
        for i in range(MAX if left & 15 else 0):
            if not (left >> i) & 1:
                continue
            rkind[i] = kinds[i]
            rmask[i] = masks[i]
            rlo[i] = los[i]
            rhi[i] = his[i]
            if moved[i] and seen[i] and \
                    _near(self.x[i], self.y[i], self.tx[i], self.ty[i], self.move_tol + self.tw[i]):
                # back where it lay: its fit was pulled by a neighbour's field sliding off
                # (hall pads: a big chip 10 mm from the small one the fugitive flicked was
                # "moved" first, a sure out-of-turn shot); a knocked chip does not come back
                moved[i] = 0
                self.move_order[i] = 0
            rmoved[i] = moved[i]
            if seen[i]:
                fates[i] = rest
                if moved[i]:
                    slid = True
            else:
                # vanished: a cup drop takes it if a cup beam fired (_cup_drops: the chips
                # last seen nearest that cup)
                if cupped[i]:
                    r.fate[i] = cupped[i]
                    r.moved[i] = 1
                    shot = True
                elif self.moved[i] and _cup_unwatched(fast, self.tx[i], self.ty[i]) >= 0:
                    # its cup's beam is switched off (it chattered, issue 4): it slid out of
                    # sight by that cup, so it dropped in, most likely
                    r.fate[i] = _cup_unwatched(fast, self.tx[i], self.ty[i])
                    r.sure[i] = 0
                    shot = True
                elif not self.graded:
                    # presence pads: a hand at it as it went lifted it. Without one it left
                    # the board (what else takes a chip away?): sure when seen sliding, or
                    # gone from where it lay within EDGE_NEAR of the edge, where a flick can
                    # take it off between two frames; gone unseen from further in, where the
                    # pads would have seen it on its way, something they missed may have taken
                    # it, so the players are asked to check (unsure)
                    if self.handed[i]:
                        r.fate[i] = S.FATE_GONE
                        taken = True
                    elif self.moved[i] and loc.blind(self.tx[i], self.ty[i], self.BLIND_NEAR):
                        r.fate[i] = S.FATE_GONE     # out of the pads' sight (unsure, below)
                        shot = True
                    else:
                        r.fate[i] = S.FATE_OFF
                        r.moved[i] = 1
                        shot = True
                        if not self.moved[i] and \
                                _edge_distance(self.tx[i], self.ty[i]) >= self.EDGE_NEAR:
                            r.sure[i] = 0
                elif (fast.count[F.HIT] and
                      _edge_distance(self.tx[i], self.ty[i]) < self.EDGE_NEAR + self.MAX_JUMP) or \
                        not self.faded[i] and not (
                        self.weak[i]
                        and time.ticks_diff(self.gone_t[i], self.weak_t[i]) > self.GONE_MS) and (
                        # (the bumpers' hit sensor rang: a chip jumped one, no hand does that,
                        # from as far as it goes in a frame: one flicked off at 5.4 m/s was
                        # last seen once, smeared and weak, 88 mm in; issue 12)
                        self.ts[i] >= self.OFF_STRENGTH
                        or ((self.moved[i]
                             or not _near(self.x[i], self.y[i], self.tx[i], self.ty[i], self.OFF_SLID))
                            and _edge_distance(self.tx[i], self.ty[i]) < self.EDGE_NEAR)):
                    # gone while seen strong, wherever it lay: a hand lifting a chip fades it
                    # first (FADE_Q starts the activity, the fade is followed frame by frame),
                    # a flick at 4 - 6 m/s leaves from a frame at rest (48 ms) before another
                    # frame sees it, 140 mm and more from the edge (issue 12)
                    r.fate[i] = S.FATE_OFF
                    r.moved[i] = 1
                    shot = True
                elif self.moved[i] and loc.blind(self.tx[i], self.ty[i], self.BLIND_NEAR):
                    # it slid out of the pads' sight where pads give no reading: off the board
                    # or lying unseen. A shot all the same (gone), said to be unsure
                    r.fate[i] = S.FATE_GONE
                    shot = True
                else:
                    r.fate[i] = S.FATE_GONE
                    taken = True
                if r.fate[i] != S.FATE_CUP_A and r.fate[i] != S.FATE_CUP_B \
                        and loc.blind(self.tx[i], self.ty[i], self.BLIND_NEAR):
                    r.sure[i] = 0           # it may only have gone out of the pads' sight
        if slid and not (not shot and self._nudged_by_placing(n)):
            shot = True
        elif slid:
            # chips put down beside others: the others' fits shift as the new field fades in
            # (hall), or they come back from under the hand a little off (presence). A hand
            # putting chips down is no shot (Trap Zenn set-ups were, issue 12), nor one taking
            # a chip from beside others (presence: the group comes back from under the hand)
            for i in range(MAX):
                if r.moved[i] and r.fate[i] == S.FATE_REST:
                    r.moved[i] = 0
                    self.moved[i] = 0
        self._first_mover(r)
        grazed = self.grazed
        for i in range(MAX):
            if grazed[i] and present[i] and not rmoved[i]:
                r.sure[i] = 0       # it may have been knocked by less than the pads can see
        # zenn: the drop into cup X came through gate X
        if fast.count[F.GATE_A]:
            r.gates |= 1
        if fast.count[F.GATE_B]:
            r.gates |= 2
        # (_through_gate is False without r.gates' bit: the loop only with one, issue 13)
        for i in range(MAX if r.gates else 0):
            if not present[i]:
                continue
            f = fates[i]
            if f == S.FATE_CUP_A and self._through_gate(F.GATE_A, F.CUP_A, 1):
                r.zenn = S.FATE_CUP_A
            elif f == S.FATE_CUP_B and self._through_gate(F.GATE_B, F.CUP_B, 2):
                r.zenn = S.FATE_CUP_B
        r.hit = 1 if fast.count[F.HIT] else 0
        # the new rest snapshot: tracked chips keep their slot; new chips take free slots. A
        # slot's masks (below) are kept while its chip lies exactly where it lay (the one place
        # that writes x, y and the masks is here): cupped[MAX + i], 1 + the uncertainty they
        # were made with, cleared (0: made again) for a chip that moved, left or is new
        # (in machine code: _rest_snapshot)
        _rest_snapshot(self)
        claimed = self.claimed
        for j in range(n):
            if j < 8 and claimed[j]:
                continue
            slot = -1
            for i in range(MAX):
                if not self.present[i]:
                    slot = i
                    break
            if slot < 0:
                self.too_many = 1
                break
            self.present[slot] = 1
            self.kind[slot] = loc.kind[j]
            self.x[slot] = loc.x[j]
            self.y[slot] = loc.y[j]
            self.rs[slot] = loc.strength[j]
            self.tunc[slot] = loc.unc[j]
            self.claimed_by[slot] = j + 1     # (its fit: _track's carried matching may take it)
            placed = True
        # (the snapshot's arrays and disc_mask in locals: a lookup each fewer in the verdict's
        # turn, issue 13)
        disc_mask = zones.disc_mask
        tunc = self.tunc
        xs = self.x
        ys = self.y
        # (the chips whose masks are kept, and the free slots, in machine code: _rest_masks;
        # those made again below)
        left = _rest_masks(self, r)
        for i in range(MAX if left else 0):
            if (left >> i) & 1:
                x = xs[i]
                y = ys[i]
                u = tunc[i]
                # (where it lay, as well known, cupped[MAX + i] == u + 1, _rest_masks kept the
                # masks it has: the ones disc_mask gives, about 0.3 ms a call on the chip, three a
                # chip; issue 13: the verdict's frame with 4 chips at rest 13 - 17 ms)
                rad = B.R_SMALL if kinds[i] == S.KIND_SMALL else B.R_BIG
                m = disc_mask(x, y, rad)
                masks[i] = m
                # the zones it may overlap (hi) and surely overlaps (lo), by the position's
                # uncertainty: kept with the snapshot, for the next shot's verdict to weigh
                # (ShotResult.start_lo / start_hi): a chip put down, or left by a shot, near a
                # border was never judged again when a later verdict relied on it (issue 12)
                if u:
                    his[i] = disc_mask(x, y, rad + u)
                    los[i] = disc_mask(x, y, rad - u if rad > u else 1)
                else:
                    his[i] = m
                    los[i] = m
                cupped[MAX + i] = u + 1 if u < 255 else 0     # (a distance: never negative)
                if seen[i] or fates[i] == rest:
                    r.end_mask[i] = m
                    r.x[i] = x
                    r.y[i] = y
                    # sure: no zone border lies within the position's uncertainty of the rim
                    # (judged here for the chips this shot moved; what the verdict reads of the
                    # others is the game's to weigh, by start_lo / start_hi)
                    if rmoved[i] and his[i] != los[i]:
                        r.sure[i] = 0
        r.n = MAX
        if shot:
            self.event = EV_SHOT
        elif placed and taken:
            self.event = EV_CHANGED
        elif placed:
            self.event = EV_PLACED
        elif taken:
            self.event = EV_TAKEN
        else:
            self.event = EV_NONE
        fast.clear()
        self.edges = 0
        self.rest_gates = 0
        self.rest_ok = 0          # a new snapshot: judged again on the next frame
        self.state = IDLE
        self.still = 0
        self.confirm = 0

    # -- who moved first (contract 4.6) ------------------------------------------------------
    # Chips are seen moved when their fit leaves MOVE_TOL, frame by frame, and a frame's banks
    # are read one after another over 16 steps: a chip flicked into another a few millimetres
    # away and the chip it knocks are often first seen moved in the same frame (or the hitter,
    # slow and rebounding, a frame later). The order of frames alone then says nothing; the
    # knock's geometry does: the hitter moved towards the chip it hit, and that chip moves away
    # from it along the line of their centres (frictionless discs; the impulse is along it)
    KNOCK_LAG = 4          # chips first seen moved within this many frames of the first: compared
    KNOCK_REACH = 900      # a hitter may have come from this far (rim to rim, 0.1 mm)
    KNOCK_MARGIN = 10      # a displacement towards / away from the other chip: at least 1 mm
    APART_REACH = 300      # two chips this close that move apart may have knocked either way

    def _first_mover(self, r):
        """r.mover: the chip that moved first; r.tied: the chips that may have moved first just
        as well (their verdict is then unsure, r.sure of the mover cleared)."""
        mo = self.move_order
        moved = r.moved
        r.mover = -1
        r.tied = 0
        f0 = 256
        for i in range(MAX):
            if moved[i]:
                f = self._frame(i)
                if f < f0:
                    f0 = f
        if f0 == 256:
            # none was seen moving: a chip gone from a frame at rest (a flick off at 4 - 6 m/s,
            # a cup drop); the lowest slot, unsure if more than one went
            for i in range(MAX):
                if moved[i]:
                    if r.mover < 0:
                        r.mover = i
                    else:
                        r.tied |= (1 << i) | (1 << r.mover)
            if r.tied:
                r.sure[r.mover] = 0
            return
        cand = 0
        lag = f0 + self.KNOCK_LAG
        for i in range(MAX):
            if moved[i] and self._frame(i) <= lag:
                cand |= 1 << i
        knocked = 0
        for h in range(MAX):
            if cand & (1 << h):
                for c in range(MAX):
                    if c != h and (cand & (1 << c)) and self._knocked(h, c):
                        knocked |= 1 << c
        roots = cand & ~knocked
        if roots == 0:
            roots = cand        # each knocked the other: nothing to go by
        m = -1
        fm = 256                # (the frame of m: each chip's looked up once)
        for i in range(MAX):
            if roots & (1 << i):
                fi = self._frame(i)
                if m < 0 or fi < fm or (fi == fm and mo[i] and (not mo[m] or mo[i] < mo[m])):
                    m = i
                    fm = fi
        r.mover = m
        tied = 0
        for i in range(MAX):
            if i == m or not (roots & (1 << i)):
                continue
            # another chip nobody knocked, first seen moving in the same frame, or the two
            # close and moving apart (a slow hitter that rebounds): either may have been first
            if self._frame(i) == fm or self._apart(m, i):
                tied |= 1 << i
        # a chip never seen moved that lay within its move tolerance of the mover, the mover
        # going away from it: it may have nudged the mover unseen
        present = self.present
        seen = self.seen
        for i in range(MAX):
            if i == m or not present[i] or moved[i] or not seen[i]:
                continue
            if self._gap(i, m) <= self.move_tol + self.tw[i] and self._away(m, i, 0):
                tied |= 1 << i
        if tied:
            r.tied = tied | (1 << m)
            r.sure[m] = 0

    def _frame(self, i):
        """The frame of the activity chip i was first seen moved in, or first lost from sight
        in if that came before (256: neither). A chip flicked at 4 - 6 m/s is gone from where
        it lay in the first frame that sees the board move and shows up 200 - 370 mm on a frame
        or two later, while the chip it hits was already seen moved (or its fit pulled by the
        hitter's field as it arrived): the small chip went first, a sure out-of-turn shot of
        the fugitive for the trapper's (presence pads, the shot bench, seed 41; issue 12)."""
        f = self.mf[i] if self.move_order[i] else 256
        if self.lf[i] and self.lf[i] < f:
            f = self.lf[i]
        return f

    def _gap(self, a, b):
        """Rim to rim at rest (0.1 mm)."""
        dx = self.x[b] - self.x[a]
        dy = self.y[b] - self.y[a]
        ra = B.R_SMALL if self.kind[a] == S.KIND_SMALL else B.R_BIG
        rb = B.R_SMALL if self.kind[b] == S.KIND_SMALL else B.R_BIG
        return _isqrt(dx * dx + dy * dy) - ra - rb

    def _along(self, a, b):
        """How far chip a had moved (when first seen moved) away from where b lay, along the
        line from b's rest position to a's (0.1 mm; negative: towards b)."""
        ex = self.x[a] - self.x[b]
        ey = self.y[a] - self.y[b]
        L = _isqrt(ex * ex + ey * ey)
        if L == 0:
            return 0
        return (self.mdx[a] * ex + self.mdy[a] * ey) // L

    def _away(self, a, b, half):
        """a moved away from b by KNOCK_MARGIN or more (and, with half, within 60 degrees of
        the line from b to a, as a knocked chip does)."""
        t = self._along(a, b)
        if t < self.KNOCK_MARGIN:
            return False
        if half:
            d = _isqrt(self.mdx[a] * self.mdx[a] + self.mdy[a] * self.mdy[a])
            return 2 * t >= d
        return True

    def _knocked(self, h, c):
        """h knocked c: close enough, h went towards c, and c away from h along their line.
        A hitter lying less than KNOCK_MARGIN from the chip it hits cannot show that much of an
        approach: it is first seen after the knock, rebounding or glancing off sideways (a
        small chip flicked into a big chip 0.45 mm away was seen 0.4 mm "away" from it, the
        big chip a frame earlier: the trapper's shot, out of turn; the shot bench, seed 41)."""
        g = self._gap(h, c)
        return g <= self.KNOCK_REACH and \
            (g < self.KNOCK_MARGIN or self._along(h, c) <= -self.KNOCK_MARGIN) and self._away(c, h, 1)

    def _apart(self, a, b):
        return self._gap(a, b) <= self.APART_REACH and self._away(a, b, 0) and self._away(b, a, 0)

    # presence pads see a big chip's move for sure from 5.6 mm on, a small one's from 6.4 mm
    # (docs/sensing.md): a chip that a moving one came within GRAZE of, rim to rim, and that
    # was not seen moved may have been knocked unseen, so its verdict is unsure (a fugitive's
    # chip knocked a big chip in the backcourt 4.5 mm: "escaped", sure, for trapped_hit)
    GRAZE = 60

    def _graze(self, i, x, y):
        ri = B.R_SMALL if self.kind[i] == S.KIND_SMALL else B.R_BIG
        for k in range(MAX):
            if k == i or not self.present[k] or self.moved[k]:
                continue
            rk = B.R_SMALL if self.kind[k] == S.KIND_SMALL else B.R_BIG
            if _near(x, y, self.x[k], self.y[k], ri + rk + self.GRAZE):
                self.grazed[k] = 1

    def _reclaim(self, n):
        """A chip put down beside a still one (no beam fired) whose fit pulled the still one's
        slot over to it: the slot "moved" onto the new chip, and a new chip shows up where the
        slot's chip lay. The slot takes that one back; the one it followed is the new chip.
        (Hall pads, the shot bench, seed 33: big3 put down 2.4 mm from big1, their fields
        merged as it faded in, and big1's slot went 41 mm: a shot during a Trap Zenn set-up.)
        However far the slot went: it was held to chips put down at most 10 mm (rim to rim) from
        it, and seed 41 put big2 down 13 mm from big1, whose slot went 52 mm. No beam fired and
        a new chip of the slot's kind lies where the slot's chip lay: a chip that slid away
        leaves no chip behind, so the slot's chip is that one, wherever the slot went."""
        if self.fast.total:
            return
        loc = self.loc
        m = n if n < 8 else 8
        for i in range(MAX):
            if not self.present[i] or not self.seen[i] or not self.moved[i]:
                continue
            back = -1
            held = -1
            for j in range(m):
                if loc.kind[j] != self.kind[i]:
                    continue
                if self.claimed[j]:
                    if loc.x[j] == self.tx[i] and loc.y[j] == self.ty[i]:
                        held = j
                elif _near(self.x[i], self.y[i], loc.x[j], loc.y[j], self.move_tol + loc.wander[j]):
                    back = j
            if back < 0 or held < 0:
                continue
            self.claimed[held] = 0
            self.claimed[back] = 1
            self.tx[i] = loc.x[back]
            self.ty[i] = loc.y[back]
            self.ts[i] = loc.strength[back]
            self.tunc[i] = loc.unc[back]
            self.tw[i] = loc.wander[back]
            self.moved[i] = 0
            self.move_order[i] = 0

    def _nudged_by_placing(self, n):
        """No beam fired, and every chip that moved (one at least: _finish's slid) lies within
        PLACE_NUDGE of where it lay and, if still seen, near a chip that appeared (one the
        locator sees that no slot claimed) or was taken where it lay. No shot was judged, so a
        chip gone was taken by a hand: faded (hall pads) or gone into the hand's patch
        (presence). A chip taken from a touching group: the hand hides the group, which is
        fitted afresh without it, its chips a little off their rest fits (presence: big1
        1.5 mm in tests/test_presence_still_budget.py's touching take, judged a shot); its
        field fades under theirs and pulls their fits, and theirs pulls its own as it fades
        (hall: big1 3.9 - 4.6 mm, and big2, taken with the small chip, 5 mm before it went;
        tests/test_taken_from_beside_others.py)."""
        if self.fast.total:
            return False
        loc = self.loc
        seen = self.seen
        xs = self.x
        ys = self.y
        txs = self.tx
        tys = self.ty
        reach = _PLACE_NUDGE + 2 * B.R_BIG + _PLACE_NUDGE
        for i in range(MAX):
            if not self.present[i] or not self.moved[i]:
                continue
            if not _near(xs[i], ys[i], txs[i], tys[i], _PLACE_NUDGE):
                return False
            if not seen[i]:
                continue            # taken where it lay, its fit pulled as it faded
            near = False
            for j in range(n if n < 8 else 8):
                if not self.claimed[j] and _near(txs[i], tys[i], loc.x[j], loc.y[j], reach):
                    near = True
            for k in range(MAX):
                if self.present[k] and not seen[k] and _near(txs[i], tys[i], xs[k], ys[k], reach) \
                        and _near(xs[k], ys[k], txs[k], tys[k], _PLACE_NUDGE):
                    near = True
            if not near:
                return False
        return True

    # a vanished chip last seen this close to a cup's centre may have dropped into it (the cup,
    # a big chip's radius and how far a chip goes in a frame)
    CUP_NEAR = B.CUP_R + B.R_BIG + MAX_JUMP

    def _cup_drops(self, beam, fate, cy):
        """Each drop the cup's beam counted goes to the vanished chip last seen nearest that cup
        (centre at (0, cy)): a hard shot sent the small chip into cup a and a big chip off the
        far side in one shot, and the drop went to the lower slot, the big chip, 480 mm from the
        cup; the small chip was then taken for off the board (issue 12). When another vanished
        chip was last seen within CUP_NEAR of the cup as well, the pads cannot tell which one
        dropped: both are unsure."""
        k = self.fast.count[beam]
        r = self.res
        while k > 0:
            best = -1
            bd = 0
            for i in range(MAX):
                if not self.present[i] or self.seen[i] or self.cupped[i]:
                    continue
                dx = self.tx[i] >> 2
                dy = (self.ty[i] - cy) >> 2
                d = dx * dx + dy * dy
                if best < 0 or d < bd:
                    best = i
                    bd = d
            if best < 0:
                return
            self.cupped[best] = fate
            k -= 1
            if k == 0:
                for i in range(MAX):
                    if self.present[i] and not self.seen[i] and not self.cupped[i] and \
                            _near(self.tx[i], self.ty[i], 0, cy, self.CUP_NEAR):
                        r.sure[i] = 0
                        r.sure[best] = 0

    def _through_gate(self, gate, cup, bit):
        r = self.res
        if not (r.gates & bit):
            return False
        if self.fast.count[gate] == 0:
            return True        # it lay in the pocket, blocking the beam, when the shot began
        if self.fast.off & (1 << cup):
            return True        # the cup's beam is off: the gate alone tells (unsure already)
        return time.ticks_diff(self.fast.first[cup], self.fast.first[gate]) >= 0


def _cup_unwatched(fast, x, y):
    """FATE_CUP_A / _B if (x, y) lies by a cup whose throat beam is switched off, else -1."""
    lim = B.CUP_R + B.R_BIG + 300
    lim *= lim
    for end in (0, 1):
        if not (fast.off & (1 << end)):
            continue
        cy = B.CUP_V - B.HALF_L if end == 0 else B.HALF_L - B.CUP_V
        if x * x + (y - cy) * (y - cy) <= lim:
            return S.FATE_CUP_A if end == 0 else S.FATE_CUP_B
    return -1


def _edge_distance(x, y):
    """How far a point lies inside the outline (0.1 mm), the 45-degree corners included."""
    ax = x if x >= 0 else -x
    ay = y if y >= 0 else -y
    d = B.HALF_W - ax
    e = B.HALF_L - ay
    if e < d:
        d = e
    e = (B.CORNER_SUM - ax - ay) * 181 // 256      # / sqrt(2)
    if e < d:
        d = e
    return d


def _near(x0, y0, x1, y1, tol):
    dx = x1 - x0
    dy = y1 - y0
    return dx * dx + dy * dy <= tol * tol
