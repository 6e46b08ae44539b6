"""CPython twins of the firmware's hottest viper functions (never seen by MicroPython, which
compiles the firmware's own @micropython.viper bodies to machine code).

Under CPython a viper function runs its body as plain Python, written for viper: every array
element read through int() with its sign put back, every pad of a window visited for each of
the 8 moves tried. presence_locate.moves() so was 45 - 76 % of a CPython game on the presence
pads and of the tests' CPython drivers (docs/performance.md, "The desktop tier's CPU profiled
again"). The stand-in `micropython.viper` (boardsim/target/micropython.py) hands the firmware
the twin below in its place: the same results from the same arguments, move for move (the
chips' places, the moves tried, win[10 + L] where a slice stopped), by another route. The
firmware's own body stays reachable as the twin's `firmware` attribute;
tests/test_presence_moves.py holds both to the plain loop they replaced, under CPython, and
ZENN_PLAIN_VIPER=1 in the environment turns the twins off (the firmware's bodies everywhere).

How moves() is made cheaper without changing a number: a pad whose level chip i gives it is
the same before and after a move adds nothing to delta(), so delta(i, new) is F(new) - F(old)
with F(p) = the sum over the pads chip i reaches at p (level > 0) of |max(level, other) - seen|
- |other - seen| (other: the most the other chips give the pad, seen: what it reads, 0 off the
group), plus the overlap terms; F of a place is kept while chip i is moved (the other chips do
not move meanwhile), and `other` is made once per chip's turn from the other chips' own pads.
Integers only, as the body: the same sums.
"""
import sys
from operator import mul as _mul, sub as _sub

_COLS = 48
_ROWS = 96
_PITCH = 100
_X0 = -2350
_Y0 = -4750

# the 8 directions of the firmware's moves(): E, NE, N, NW, W, SW, S, SE
_DX = (1, 1, 0, -1, -1, -1, 0, 1)
_DY = (0, 1, 1, 1, 0, -1, -1, -1)


def _span(lo, hi, v0, w0, w1):
    """The indices c of the grid's lines (at v0 + c * pitch) with lo <= v0 + c * pitch <= hi,
    within the window's w0 .. w1 (a range)."""
    a = -((v0 - lo) // _PITCH)                            # ceil((lo - v0) / pitch)
    b = (hi - v0) // _PITCH                               # floor
    if a < w0:
        a = w0
    if b > w1:
        b = w1
    return a, b


def moves_twin(s, last, hold, hx, hy, hr, usable, label, win, grid):
    """presence_locate.moves(), the same results (see the module's docstring)."""
    nlev = win[7]
    if nlev != 4:
        return moves_twin.firmware(s, last, hold, hx, hy, hr, usable, label, win, grid)
    k = win[12]
    most = win[13]
    at = win[14]
    win[14] = 0
    round0 = chip0 = moved0 = 0
    if at:
        s = at >> 8
        round0 = (at >> 4) & 15
        chip0 = (at >> 1) & 7
        moved0 = at & 1
    tol = win[5]
    ovl = win[6]
    cur = win[4]
    o0 = win[8]
    o1 = win[9]
    o2 = win[10]
    o3 = win[11]
    c0w = win[0]
    c1w = win[1]
    q0w = win[2]
    q1w = win[3]
    # the window's pads this fit explains: what each reads + 1 (0: not usable, another
    # group's, or outside the window); the firmware reads grid only where the label is this
    # group's. (val and other are lists over the whole grid: indexed, not hashed, at each pad)
    val = [0] * (_COLS * _ROWS)
    for rr in range(q0w, q1w + 1):
        g = rr * _COLS + c0w
        for _c in range(c0w, c1w + 1):
            if usable[g]:
                lb = label[g]
                if lb == cur:
                    val[g] = grid[g] + 1
                elif not lb:
                    val[g] = 1
            g += 1

    def squares(r):
        lx = r + o0
        l0 = lx * lx if lx >= 0 else -1
        lx = r + o1
        l1 = lx * lx if lx >= 0 else -1
        lx = r + o2
        l2 = lx * lx if lx >= 0 else -1
        lx = r + o3
        l3 = lx * lx if lx >= 0 else -1
        return l0, l1, l2, l3

    def levels(x, y, r, sq, out):
        """(pad, level) of the window's pads a chip at x, y of seen radius r reaches."""
        l0, l1, l2, l3 = sq
        if l0 < 0:
            return
        e = r + o0
        ca, cb = _span(x - e, x + e, _X0, c0w, c1w)
        qa, qb = _span(y - e, y + e, _Y0, q0w, q1w)
        for rr in range(qa, qb + 1):
            ay = _Y0 + rr * _PITCH - y
            ay *= ay
            if ay > l0:
                continue
            g = rr * _COLS + ca
            ax = _X0 + ca * _PITCH - x
            for _c in range(ca, cb + 1):
                d2 = ax * ax + ay
                ax += _PITCH
                if d2 <= l0:
                    lev = 1
                    if d2 <= l1:
                        lev = 2
                        if d2 <= l2:
                            lev = 3
                            if d2 <= l3:
                                lev = 4
                    out.append((g, lev))
                g += 1

    tried = 0
    while s >= last:
        rounds = round0
        round0 = 0
        while rounds < 6:
            moved = moved0
            moved0 = 0
            i = chip0
            chip0 = 0
            while i < k:
                if (hold >> i) & 1:
                    i += 1
                    continue
                r = hr[i]
                sq = squares(r)
                l0, l1, l2, l3 = sq
                e = r + o0
                # the other chips: where each lies, the overlap limit with chip i, and the
                # most any of them gives each pad (read only where val has the pad)
                others = []
                other = [0] * (_COLS * _ROWS)
                for t in range(k):
                    if t == i:
                        continue
                    xt = hx[t]
                    yt = hy[t]
                    lim = r + hr[t] + tol
                    others.append((xt, yt, lim * lim))
                    pads = []
                    levels(xt, yt, hr[t], squares(hr[t]), pads)
                    for g, lev in pads:
                        if other[g] < lev:
                            other[g] = lev
                memo = {}

                def F(x, y):
                    # levels(x, y, r, sq, ...) written out, each pad's term summed where it is
                    # reached: no list of pairs, no call a place (F is most of moves_twin's
                    # CPU: some 580,000 places a test_presence.py driver's run)
                    f = memo.get((x, y))
                    if f is not None:
                        return f
                    f = 0
                    if l0 >= 0:
                        ca = -((_X0 - x + e) // _PITCH)       # _span(), written out
                        if ca < c0w:
                            ca = c0w
                        cb = (x + e - _X0) // _PITCH
                        if cb > c1w:
                            cb = c1w
                        qa = -((_Y0 - y + e) // _PITCH)
                        if qa < q0w:
                            qa = q0w
                        qb = (y + e - _Y0) // _PITCH
                        if qb > q1w:
                            qb = q1w
                        for rr in range(qa, qb + 1):
                            ay = _Y0 + rr * _PITCH - y
                            ay *= ay
                            if ay > l0:
                                continue
                            g0 = rr * _COLS + ca
                            ax = _X0 + ca * _PITCH - x
                            for g in range(g0, g0 + cb - ca + 1):
                                d2 = ax * ax + ay
                                ax += _PITCH
                                if d2 > l0:
                                    continue
                                v = val[g]
                                if not v:
                                    continue
                                lev = 1
                                if d2 <= l1:
                                    lev = 2
                                    if d2 <= l2:
                                        lev = 3
                                        if d2 <= l3:
                                            lev = 4
                                o = other[g]
                                if lev > o:
                                    sn = v - 1
                                    a = lev - sn
                                    b = o - sn
                                    f += (a if a >= 0 else -a) - (b if b >= 0 else -b)
                    memo[(x, y)] = f
                    return f

                while True:
                    if tried >= most:
                        win[14] = (s << 8) | (rounds << 4) | (i << 1) | moved
                        return tried
                    ox = hx[i]
                    oy = hy[i]
                    fo = F(ox, oy)
                    ovo = 0
                    for xt, yt, lim in others:
                        ax = xt - ox
                        ay = yt - oy
                        if ax * ax + ay * ay < lim:
                            ovo += ovl
                    bd = 0
                    bj = -1
                    for dj in range(8):
                        nx = ox + _DX[dj] * s
                        ny = oy + _DY[dj] * s
                        d = F(nx, ny) - fo - ovo
                        for xt, yt, lim in others:
                            ax = xt - nx
                            ay = yt - ny
                            if ax * ax + ay * ay < lim:
                                d += ovl
                        if d < bd:
                            bd = d
                            bj = dj
                    tried += 8
                    if bj < 0:
                        break
                    hx[i] = ox + _DX[bj] * s
                    hy[i] = oy + _DY[bj] * s
                    moved = 1
                i += 1
            if not moved:
                break
            rounds += 1
        s >>= 1
    return tried


def _signed(v):
    # the body's sign put back: a 64-bit port reads a negative array('i') element as 2^32 more
    return v - (1 << 32) if (v >> 29) > 3 else v


def mismatch_twin(hx, hy, hr, usable, label, win, grid):
    """presence_locate.mismatch(), the same sum by another route: the window's usable pads of
    this group or none, each |the most any chip gives it - what it reads (0 off the group)|.
    A pad no chip reaches (level 0 from each) adds what it reads: those are summed over the
    window at once, and each pad a chip reaches (its box of the first level's reach, as
    moves_twin's levels()) put in its place. The body visits every pad of the window for each
    chip and level: some 13 % of test_presence.py's CPython driver."""
    if win[7] != 4:
        return mismatch_twin.firmware(hx, hy, hr, usable, label, win, grid)
    k = win[12]
    c0w = win[0]
    c1w = win[1]
    q0w = win[2]
    q1w = win[3]
    cur = win[4]
    o0 = _signed(win[8])
    o1 = _signed(win[9])
    o2 = _signed(win[10])
    o3 = _signed(win[11])
    m = 0
    for rr in range(q0w, q1w + 1):
        g = rr * _COLS + c0w
        for _c in range(c0w, c1w + 1):
            if usable[g] and label[g] == cur:
                m += grid[g]
            g += 1
    pred = {}
    for t in range(k):
        x = _signed(hx[t])
        y = _signed(hy[t])
        r = hr[t]
        e = r + o0
        if e < 0:
            continue
        l0 = e * e
        lx = r + o1
        l1 = lx * lx if lx >= 0 else -1
        lx = r + o2
        l2 = lx * lx if lx >= 0 else -1
        lx = r + o3
        l3 = lx * lx if lx >= 0 else -1
        ca, cb = _span(x - e, x + e, _X0, c0w, c1w)
        qa, qb = _span(y - e, y + e, _Y0, q0w, q1w)
        for rr in range(qa, qb + 1):
            ay = _Y0 + rr * _PITCH - y
            ay *= ay
            if ay > l0:
                continue
            g = rr * _COLS + ca
            ax = _X0 + ca * _PITCH - x
            for _c in range(ca, cb + 1):
                d2 = ax * ax + ay
                ax += _PITCH
                if d2 <= l0:
                    lev = 1
                    if d2 <= l1:
                        lev = 2
                        if d2 <= l2:
                            lev = 3
                            if d2 <= l3:
                                lev = 4
                    if lev > pred.get(g, 0):
                        pred[g] = lev
                g += 1
    for g, lev in pred.items():
        if not usable[g]:
            continue
        lb = label[g]
        if lb == cur:
            seen = grid[g]
            d = lev - seen
            m += (d if d >= 0 else -d) - seen
        elif not lb:
            m += lev
    return m


_SR = 6            # shift_scan's registers a row, bytes a strobe reads, levels, rows a line
_LINE = 12
_LEV = 4
_RPS = 2
_STROBES_PER_STEP = 12
_ALL_ONES = (1 << (8 * _LINE)) - 1


def unpack_twin(strobe, buf, last, pmask, grid, rows_on, toggles):
    """shift_scan.unpack(), the same results: a strobe whose bytes read are the last reading's
    (the masked bytes stored: a byte the same unmasked is the same masked) changes nothing, and
    is passed over whole (when it has no bit where pmask has none: else the body's masking
    would store it anew); the others go through the body's own loop, byte by byte. Most of a
    step's strobes read what they read the frame before: the body's byte loop was a third of a
    CPython game on the presence pads. A step whose every strobe is so (at rest) is passed
    over in one comparison."""
    r0 = strobe // _LEV * _RPS
    k0 = strobe * _LINE
    n = _STROBES_PER_STEP * _LINE
    if buf == last[k0:k0 + n]:
        # every strobe as the last reading (the step at rest): nothing changes unless a byte
        # has a bit where no pad is (the body would store it masked)
        m = b"".join(pmask[r * _SR:(r + _RPS) * _SR] * _LEV
                     for r in range(r0, r0 + _STROBES_PER_STEP // _LEV * _RPS, _RPS))
        if not int.from_bytes(buf, "big") & ~int.from_bytes(m, "big"):
            return 0
    changed = 0
    q = 0
    lev = 0
    outside = -1        # the bits of the line's rows where no pad is (pmask's 0 bits), as an int
    for s in range(strobe, strobe + _STROBES_PER_STEP):
        k0 = s * _LINE
        line = buf[q:q + _LINE]
        if outside < 0:
            outside = int.from_bytes(pmask[r0 * _SR:(r0 + _RPS) * _SR], "big") ^ _ALL_ONES
        if line != last[k0:k0 + _LINE] or int.from_bytes(line, "big") & outside:
            for h in range(_RPS):
                r = r0 + h
                for kk in range(_SR):
                    k = h * _SR + kk
                    v = buf[q + k] & pmask[r * _SR + kk]
                    old = last[k0 + k]
                    if v == old:
                        continue
                    last[k0 + k] = v
                    diff = v ^ old
                    g0 = r * 48 + 8 * kk
                    for j in range(8):
                        bit = 7 - j
                        if (diff >> bit) & 1:
                            g = g0 + j
                            edge = 0
                            if (v >> bit) & 1:
                                n = grid[g] + 1
                                grid[g] = n
                                if n == 1:
                                    rows_on[r] = rows_on[r] + 1
                                    edge = 1
                            else:
                                n = grid[g] - 1
                                if n < 0:
                                    n = 0
                                grid[g] = n
                                if n == 0:
                                    rows_on[r] = rows_on[r] - 1
                                    edge = 1
                            changed += 1
                            if edge:
                                sh = (g & 1) << 2
                                tg = toggles[g >> 1]
                                if ((tg >> sh) & 15) < 15:
                                    toggles[g >> 1] = tg + (1 << sh)
        q += _LINE
        lev += 1
        if lev == _LEV:
            lev = 0
            r0 += _RPS
            outside = -1
    return changed


# -- the hall pads' scan step (firmware/sensing/hall_scan.py) ---------------------------------
# The body of read_bank() and settle() as plain Python reads each table and array element
# through int() and tests each slot for a pad, 48 slots a step: settle() was some 23 % of a
# CPython game on the hall pads, read_bank()'s own loop 13 % (docs/performance.md). Their twins
# walk tables made once from the same SEQ_* and SCAN_GRID: the same calls in the same order
# (read_bank), the same values stored (settle).
_HALL = []          # [read_bank's ops per Gray position, settle's (slot, pad) per bank row]
# [r0, r1, r2, bank]: the three ADC readers last handed to read_bank's twin and the bank reader
# of the world they are the readers of (_bank_for: None when they are not a world's), or None
BANK_READER = [None]


def _hall_tables():
    from tables import board_table as BT
    seq = []
    for pos in range(16):
        ops = []
        for t in range(pos * 16, pos * 16 + 16):
            f = BT.SEQ_PIN[t]
            ops.append((-1 if f == 255 else f >> 1, f & 1, BT.SEQ_SLOT[t], BT.SEQ_MASK[t]))
        seq.append(tuple(ops))
    sg = BT.SCAN_GRID
    rows = {}
    for code in range(16):
        row = code * 48
        rows[row] = tuple((s, sg[row + s]) for s in range(48) if (sg[row + s] & 0x8000) == 0)
    _HALL.append(seq)
    _HALL.append(rows)


def read_bank_twin(t0, chp, r0, r1, r2, raw):
    """hall_scan.read_bank(): the same pin moves and ADC reads in the same order (the body's
    SEQ_* tables as one tuple of (pin, level, slot, mask) per position)."""
    if t0 & 15 or not 0 <= t0 < 256:
        return read_bank_twin.firmware(t0, chp, r0, r1, r2, raw)
    if not _HALL:
        _hall_tables()
    ops = _HALL[0][t0 >> 4]
    b = BANK_READER[0]
    if b is None or r0 is not b[0] or r1 is not b[1] or r2 is not b[2]:
        b = BANK_READER[0] = _bank_for(r0, r1, r2)
    # the readers a world made (identity: no other world's, nor a test's own): its bank reader,
    # the same reads in one call, unless it declines (a stand-in or a fault)
    if b[3] is not None and b[3](ops, chp, raw):
        return
    for p, v, i, m in ops:
        if p >= 0:
            chp[p].value(v)
        if m & 1:
            raw[i] = int(r0())
        if m & 2:
            raw[i + 1] = int(r1())
        if m & 4:
            raw[i + 2] = int(r2())


def settle_twin(raw, row, base, acc, grid, jump, sh, ref, drift):
    """hall_scan.settle(): the same values into acc and grid and the same count, the bank's
    pads (SCAN_GRID's) listed once per row."""
    if not _HALL:
        _hall_tables()
    slots = _HALL[1].get(row)
    if slots is None:
        return settle_twin.firmware(raw, row, base, acc, grid, jump, sh, ref, drift)
    # the body's sums with acc kept biased (ACC_BIAS, 2**20, a multiple of 16: the same values
    # by exact shifts) and the bounds negated once: fewer operations a pad, the same values
    nj = 0
    bias = 1 << 20              # hall_scan.ACC_BIAS
    half = 0x8000               # (acc + 8) >> 4 less 2**16 is the body's r; less REF_BIAS, its e
    nd = -drift
    njump = -jump
    for s, g in slots:
        v = raw[s] - base[g]
        if v > 32767:
            v = 32767
        elif v < -32767:
            v = -32767
        a = acc[g]
        d = (v << 4) + bias - a
        if njump < d < jump:
            a += d >> sh
            q = (a + 8) >> 4
            e = q - half - ref[g]
            if e > drift or e < nd:
                nj += 1
            acc[g] = a
            grid[g] = q - 0x10000
        else:
            nj += 1
            acc[g] = (v << 4) + bias
            grid[g] = v         # ((v << 4) + 8) >> 4
    return nj


# -- the presence pads' strobes (firmware/sensing/shift_scan.py) ---------------------------------
# [readinto, strobes]: the SPI readinto last handed to read_rows' twin and the strobe reader of
# the world it is the readinto of (_strobes_for: None when it is not a world's), or None
STROBE_READER = [None]


def read_rows_twin(strobe, code, sel, load, spi, views):
    """shift_scan.read_rows(): handed to the world's strobe reader when the firmware's SPI reads
    through that world's readinto (identity), the same pin moves, latches and bytes; else (or
    when it declines) the firmware's own body."""
    r = STROBE_READER[0]
    rd = spi.readinto
    if r is None or rd is not r[0]:
        r = STROBE_READER[0] = _strobes_for(rd)
    if r[1] is not None:
        code2 = r[1](strobe, code, sel, load, views,
                     read_rows_twin.firmware.__globals__["STROBES_PER_STEP"])
        if code2 >= 0:
            return code2
    return read_rows_twin.firmware(strobe, code, sel, load, spi, views)


# -- the simulated table's own reads under CPython (world.py, hall_model.py) -------------------
# Made here, where only CPython looks, not in the world's modules: the unix port loads those
# (their every function's bytecode in its heap, before the firmware's), and the firmware's heap
# figures (tests/test_budgets.py) are measured there.

def _bank_for(r0, r1, r2):
    """[r0, r1, r2, the bank reader of the world whose ADC readers they are, or None]."""
    m = sys.modules.get("machine")
    W = sys.modules.get("world")
    w = m._world[0] if m is not None and hasattr(m, "_world") else None
    rd = getattr(w, "adc_readers", None)
    fn = None
    if (W is not None and rd and len(rd) == 3 and rd[0] is r0 and rd[1] is r1 and rd[2] is r2
            and getattr(w, "hall", None) is not None and len(w.adc_ctx) == 3):
        fn = _bank_reader(w, W, m)
        if getattr(r0, "__module__", None) == "simtrace":
            fn = sys.modules["simtrace"].bank_wrapper(fn)     # (a traced run: fold what it reads)
    return [r0, r1, r2, fn]


def _bank_reader(world, W, machine):
    """A bank's reads in one call: each op's channel pin moved as its Pin.value() moves it
    (its level set: the machine's own value(), no watcher), then each ADC with a pad there read
    as the world's CPython reader reads it (world.py _adc_closure_py), the noise taken in the
    same order: the same numbers in the same slots. 44 reader calls a step, and the select pins
    looked up for each, were some 40 % of a CPython game on the hall pads. While a stand-in
    answers or a pad has a fault (neither changes within a bank: World.stand_in and World.fault
    run between steps), or a channel pin's value() is not the machine's own or is watched, it
    does nothing and returns False: the twin then calls value() and the readers one by one."""
    f0, f1, f2 = world.adc_ctx          # the readers' stand-in flags, channels 0 - 2
    lv = machine._level
    c0, c1, c2, c3 = world.sel_ch
    b0, b1, b2, b3 = world.sel_bank
    per = W._BANKS * W._CHANNELS
    p0 = W._PAD_AT[0:per]
    p1 = W._PAD_AT[per:2 * per]
    p2 = W._PAD_AT[2 * per:3 * per]
    hall = world.hall
    fast = hall.fast                    # ctl, nbuf, clean
    nb = W._NB
    clean0 = 2 + nb
    chans = W._CHANNELS
    zero = W._ADC_ZERO

    values = machine._values
    watch = machine._watch
    chan_bit = {c0: 1, c1: 2, c2: 4, c3: 8}
    plain = len(chan_bit) == 4 and not set(chan_bit) & {b0, b1, b2, b3}
    known = [None]                      # [chp, its pins' ids, their values, bits in the index]

    def read_bank(ops, chp, raw):
        """ops: (pin, level, slot, mask) for each of the bank's 16 channels (_hall_tables)."""
        if f0[0] or f1[0] or f2[0] or fast[1]:
            return False
        # The firmware's four channel pins the world's four channel select pins, each moved by
        # the machine's own value() with no watcher: then a move sets that pin's level and its
        # bit of the pad index alone, and the rest of the index is read once a bank (else, as
        # with a bench's counting value(), it declines: the reads one by one, value() and all)
        k = known[0]
        if k is None or k[0] is not chp:
            if not plain or len(chp) != 4:
                return False
            ids = tuple(getattr(q, "id", None) for q in chp)
            if not all(q in chan_bit for q in ids):
                return False
            k = known[0] = (chp, ids, tuple(values[q] for q in ids), tuple(chan_bit[q] for q in ids))
        _c, (i0, i1, i2, i3), (v0, v1, v2, v3), cbit = k
        q0, q1, q2, q3 = chp
        if (q0.value is not v0 or q1.value is not v1 or q2.value is not v2 or q3.value is not v3
                or watch[i0] is not None or watch[i1] is not None or watch[i2] is not None
                or watch[i3] is not None):
            return False
        pid = k[1]
        bank = (lv[b0] | (lv[b1] << 1) | (lv[b2] << 2) | (lv[b3] << 3)) * chans
        ch = lv[c0] | (lv[c1] << 1) | (lv[c2] << 2) | (lv[c3] << 3)
        i = fast[0]
        for p, level, s, m in ops:
            if p >= 0:
                q = pid[p]
                if lv[q] != level:              # value(level): level is 0 or 1 here
                    lv[q] = level
                    ch ^= cbit[p]
            at = bank + ch
            if m & 1:
                pad = p0[at]
                if pad < 0:
                    raw[s] = zero
                else:
                    if i >= nb:
                        hall._draw()
                        i = 0
                    v = fast[clean0 + pad] + fast[2 + i]
                    i += 1
                    raw[s] = 0 if v < 0 else 65535 if v > 65535 else ((v >> 4) << 4) | (v >> 12)
            if m & 2:
                pad = p1[at]
                if pad < 0:
                    raw[s + 1] = zero
                else:
                    if i >= nb:
                        hall._draw()
                        i = 0
                    v = fast[clean0 + pad] + fast[2 + i]
                    i += 1
                    raw[s + 1] = 0 if v < 0 else 65535 if v > 65535 else ((v >> 4) << 4) | (v >> 12)
            if m & 4:
                pad = p2[at]
                if pad < 0:
                    raw[s + 2] = zero
                else:
                    if i >= nb:
                        hall._draw()
                        i = 0
                    v = fast[clean0 + pad] + fast[2 + i]
                    i += 1
                    raw[s + 2] = 0 if v < 0 else 65535 if v > 65535 else ((v >> 4) << 4) | (v >> 12)
        fast[0] = i
        return True
    return read_bank


def _strobes_for(readinto):
    """[readinto, the strobe reader of the world whose shift bus readinto it is, or None]."""
    m = sys.modules.get("machine")
    w = m._world[0] if m is not None and hasattr(m, "_world") else None
    sr = getattr(w, "spi_readers", None)
    fn = None
    if sr and sr[1] is readinto and getattr(w, "pres", None) is not None and hasattr(m, "_values"):
        fn = _strobe_reader(w, m)
        if getattr(readinto, "__module__", None) == "simtrace":
            fn = sys.modules["simtrace"].strobes_wrapper(fn)
    return [readinto, fn]


def _strobe_reader(world, machine):
    """A presence step's strobes in one call: each strobe's row select pins and the load pin
    moved as their Pin.value() moves them (the level set, the pin's watcher told: the load
    pin's falling edge latches the model), then the line read into the strobe's view as the
    world's readinto reads it: the same pin levels, latches, coins and bytes. The firmware's
    loop of Pin.value() and readinto calls (36 a step) was about a fifth of a CPython game on
    the presence pads. It declines (returns -1: the firmware's loop then) while a stand-in
    answers, or when a pin's value() is not the machine's own (a bench counting calls)."""
    values = machine._values
    watch = machine._watch
    lv = machine._level
    flag = world.spi_flag
    pm = world.pres
    latched = pm.latched
    n = len(latched)
    state = pm.state
    own_edge = _model_edge(world, machine)
    # A step read again with nothing random or faulty on the pads, the model's levels, the pins'
    # levels, the strobe and the code as when it was read before, reads what it read then: the
    # pins end as they ended, the load pin's watcher (the model's own latch) latches the same
    # lines, no coin is drawn. Kept by (strobe, code, count, the pins' levels before), while the
    # model's levels are `seen[0]`: (the pins' levels after, the views' bytes, the last line
    # latched, the latches made, the code after, the views). Most steps of a game are at rest.
    memo = {}
    seen = [None]
    hits = [0]          # (steps taken from memo: tests/test_pad_models.py)

    def read_rows(strobe, code, sel, load, views, count):
        lid = load.id
        if flag[0] or load.value is not values[lid]:
            return -1
        ids = []
        quiet = watch[lid] is own_edge and not pm.nragged and not pm.nfault
        for p in sel:
            if p.value is not values[p.id]:
                return -1
            ids.append(p.id)
            if watch[p.id] is not None:
                quiet = False
        if quiet:
            if seen[0] != state:
                memo.clear()
                seen[0] = bytes(state)
            key = (strobe, code, count, bytes(lv))
            got = memo.get(key)
            if got is None and len(memo) >= 64:
                memo.clear()        # (pins left in many ways: a bench's own steps)
            elif got is not None and got[5] is views:
                lv[:] = got[0]
                for v, b in zip(views, got[1]):
                    v[:] = b
                if got[3]:
                    latched[:] = got[2]
                    pm.latches += got[3]
                hits[0] += 1
                return got[4]
            latches = pm.latches
        r = strobe
        end = strobe + count
        i = 0
        while r < end:
            want = r ^ (r >> 1)
            d = want ^ code
            b = 0
            while d:
                if d & 1:
                    pid = ids[b]
                    v = (want >> b) & 1
                    if lv[pid] != v:
                        lv[pid] = v
                        w = watch[pid]
                        if w is not None:
                            w(pid, v)
                d >>= 1
                b += 1
            code = want
            for v in (0, 1):            # load.value(0), load.value(1): the 165s take the line in
                if lv[lid] != v:
                    lv[lid] = v
                    w = watch[lid]
                    if w is not None:
                        w(lid, v)
            buf = views[i]
            if len(buf) == n:
                buf[:] = latched
            else:
                pm.read(buf)
            r += 1
            i += 1
        if quiet:
            memo[key] = (bytes(lv), [bytes(views[j]) for j in range(count)], bytes(latched),
                         pm.latches - latches, code, views)
        return code
    read_rows.hits = hits
    return read_rows


def _model_edge(world, machine):
    """The load pin's watcher the world's presence model gave it (PresenceModel.load_edge:
    under CPython a closure calling the model's latch()), or None."""
    pm = world.pres
    e = machine._watch[world.shift_load]
    cells = getattr(e, "__closure__", None) or ()
    if (getattr(e, "__qualname__", "") == "_fast_edge.<locals>.edge" and len(cells) == 1
            and cells[0].cell_contents == pm.latch):
        return e
    return None


# The hall pads' noise (hall_model._draw, plain xorshift32 under CPython, a fifth of a CPython
# game on the hall pads), drawn a batch at a time. xorshift32 is linear over GF(2): the NB states
# that follow a state s are, word for word, the XOR of the NB states that follow each of s's set
# bits alone. _AFTER_BIT[k]: the NB states after 1 << k, as one int of NB little-endian 32-bit
# words (made at the first draw: 32 x NB plain steps, 11 ms). A draw XORs those of the state's
# bits; the byte sums and the coins (bit 8) are taken in every word at once (masks of a value per
# word) and the words' two low bytes made into the arrays: the same values in the same places as
# the plain loop (0.74 -> 0.17 ms a draw; tests/test_pad_models.py). Put in hall_model's place
# when this module is imported (the firmware's first viper function, under CPython).
_AFTER_BIT = []
_WORDS = []         # masks: 0x00FF00FF, 0xFFFF and 1 in every word
_MASK32 = 0xFFFFFFFF


def _after_bits(nb):
    from array import array
    for k in range(32):
        s = 1 << k
        w = array('I', bytes(4 * nb))
        for i in range(nb):
            s ^= (s << 13) & _MASK32
            s ^= s >> 17
            s ^= (s << 5) & _MASK32
            w[i] = s
        _AFTER_BIT.append(_int_of(w))
    for m in (0x00FF00FF, 0xFFFF, 1):
        _WORDS.append(_int_of(array('I', [m]) * nb))


def _int_of(words):
    if sys.byteorder != "little":
        words.byteswap()
    return int.from_bytes(words.tobytes(), "little")


def _low_halves(x, nb):
    """The low 16 bits of each of x's nb 32-bit words, as an array('H')."""
    from array import array
    b = x.to_bytes(4 * nb, "little")
    h = bytearray(2 * nb)
    h[0::2] = b[0::4]
    h[1::2] = b[1::4]
    a = array('H', h)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def hall_draw(raw, buf, n, st, tab):
    """hall_model._draw(): n (NB) values of the noise from the state st[0], left there after
    the last (another n: the plain loop)."""
    from array import array
    hm = sys.modules.get("hall_model")
    if hm is None or n != hm.NB:
        return _PLAIN_DRAW[0](raw, buf, n, st, tab)
    if not _AFTER_BIT:
        _after_bits(n)
    s = st[0]
    x = 0
    k = 0
    while s:
        if s & 1:
            x ^= _AFTER_BIT[k]
        s >>= 1
        k += 1
    m8, m16, m1 = _WORDS
    p = (x & m8) + ((x >> 8) & m8)             # bytes 0 + 1, bytes 2 + 3
    u = (p & m16) + ((p >> 16) & m16)          # the byte sum (0..1020)
    raw[0:n] = _low_halves(u | (((x >> 8) & m1) << 15), n)
    buf[0:n] = array('i', map(tab.__getitem__, _low_halves(u, n)))
    st[0] = x >> (32 * (n - 1))


_PLAIN_DRAW = [None]


def _install_draw():
    """hall_draw in hall_model's _draw's place (CPython's hall_model: the plain loop kept in
    _PLAIN_DRAW), unless ZENN_PLAIN_VIPER=1 asks for the plain code everywhere."""
    import os
    if os.environ.get("ZENN_PLAIN_VIPER") == "1":
        return
    try:
        import hall_model
    except ImportError:
        return
    if _PLAIN_DRAW[0] is None and getattr(hall_model, "_draw", None) is not None:
        _PLAIN_DRAW[0] = hall_model._draw
        hall_model._draw = hall_draw


_install_draw()


# -- the hall locator's Gauss-Newton step (firmware/sensing/hall_fit.py) --------------------------
# [FIELD, its values as a list, each bin's slope to the next, the pads' (x, y) by index, the
# module's constants]: made at the twin's first call from the firmware module's own globals
_FIT = []


def _fit_tables(fw):
    G = fw.__globals__
    fld = G["FIELD"]
    vals = [((int(v) + 0x8000) & 0xFFFF) - 0x8000 for v in fld]
    slope = [vals[b + 1] - vals[b] for b in range(len(vals) - 1)]
    cols, rows, pitch, x0, y0 = G["_COLS"], G["_ROWS"], G["_PITCH"], G["_X0"], G["_Y0"]
    at = [(x0 + (g % cols) * pitch, y0 + (g // cols) * pitch) for g in range(cols * rows)]
    _FIT[:] = [fld, vals, slope, at, (G["_FBIN"], G["_FSCALE"], G["_FREACH2"], G["MAX_STEP"],
                                       G["_XMAX"], G["_YMAX"], G["_SMAX"], G["_FAIL"])]


def _words(*arrays):
    """Whether every value the arrays can hold lies within -2**31 .. 2**31 - 1 (signed words
    and narrower, bytes): the body's sign corrections (a 64-bit port's unsigned loads) never
    apply, and the twin leaves them out."""
    for a in arrays:
        tc = getattr(a, "typecode", None)
        if tc is None:
            if not isinstance(a, (bytearray, bytes)):
                return False
        elif tc not in "bBhHi" or a.itemsize > 4:
            return False
    return True


def fit_step_twin(res, win, nw, gm, gk, xs, ys, amps, col, nm, rhs, d, sh, gerr, gcnt, pk,
                  ref_s, ref_b, amax):
    """hall_fit.fit_step(): the same values into every array it writes (nm, rhs, col, d, sh,
    gerr, gcnt, xs, ys, amps) and the same result. The body accumulates the normal equations
    pad by pad, each product through the arrays; here each member's model, columns and share of
    the residual are made over the window in one loop, then every sum of products over the pads
    at once (sum(map(mul))): integers, the same sums. The solution is the body's, on lists."""
    fw = fit_step_twin.firmware
    if not _words(res, win, gm, xs, ys, amps, col, nm, rhs, d, sh, gerr, gcnt):
        return fw(res, win, nw, gm, gk, xs, ys, amps, col, nm, rhs, d, sh, gerr, gcnt, pk,
                  ref_s, ref_b, amax)
    fld = fw.__globals__["FIELD"]
    if not _FIT or _FIT[0] is not fld:
        _fit_tables(fw)
    _fld, vals, slope, at, consts = _FIT
    fbin, fscale, freach2, max_step, xmax, ymax, smax, fail = consts
    p = 3 * gk
    pads = [at[win[w]] for w in range(nw)]
    cols = []               # cols[3q + k]: column 3q + k over the window's pads
    mods = []               # per member: its model at each pad (0 out of its reach)
    mags = []               # per member: |model| at each pad, -1 out of its reach
    for q in range(gk):
        i = gm[q]
        x = xs[i]
        y = ys[i]
        a = amps[i]
        ca = []
        cx = []
        cy = []
        mo = []
        mg = []
        put_a = ca.append
        put_x = cx.append
        put_y = cy.append
        put_m = mo.append
        put_g = mg.append
        for gx, gy in pads:
            dx = gx - x
            dy = gy - y
            d2 = dx * dx + dy * dy
            if d2 >= freach2:
                put_a(0)
                put_x(0)
                put_y(0)
                put_m(0)
                put_g(-1)
            else:
                b = d2 // fbin
                s = slope[b]
                f = vals[b] + s * (d2 - b * fbin) // fbin
                mi = a * f // fscale
                put_m(mi)
                put_g(mi if mi >= 0 else -mi)
                put_a(f >> 5)
                jx = a * ((s * dx) >> 6) // 10240
                jy = a * ((s * dy) >> 6) // 10240
                put_x(2047 if jx >= 2048 else -2047 if jx <= -2048 else jx)
                put_y(2047 if jy >= 2048 else -2047 if jy <= -2048 else jy)
        cols += (ca, cx, cy)
        mods.append(mo)
        mags.append(mg)
    # each pad's error, and the member it counts for (the first whose model is the largest)
    if gk == 1:
        m = mods[0]
    else:
        m = list(map(sum, zip(*mods)))
    es = [4095 if e > 4095 else -4095 if e < -4095 else e
          for e in map(_sub, [res[win[w]] for w in range(nw)], m)]
    ge = [0] * gk
    gc = [0] * gk
    if gk == 1:
        ge[0] = sum(map(abs, es))
        gc[0] = nw
    else:
        for e, mg in zip(es, zip(*mags)):
            top = mg.index(max(mg))
            ge[top] += e if e > 0 else -e
            gc[top] += 1
    for q in range(gk):
        gerr[q] = ge[q]
        gcnt[q] = gc[q]
    if nw:
        for k in range(p):
            col[k] = cols[k][-1]
    # the normal equations (rows of the upper triangle, the lower one zero until scaled)
    N = []
    R = []
    for r in range(p):
        cr = cols[r]
        R.append(sum(map(_mul, cr, es)))
        N.append([0] * r + [sum(map(_mul, cr, cols[c])) for c in range(r, p)])
    if pk != 0:
        pc = 2 * pk
        for q in range(gk):
            a = amps[gm[q]]
            r = ref_s if a > 0 else 0 - ref_b
            c = 3 * q
            N[c][c] += pc * pc
            R[c] += pc * ((pk * (r - a)) >> 8)
    # -- the solution, as the body's
    S = []
    for c in range(p):
        v = N[c][c]
        s = 0
        while v >= 4096:
            v >>= 2
            s += 1
        S.append(s)
    for r in range(p):
        Nr = N[r]
        sr = S[r]
        for c in range(r, p):
            v = Nr[c] >> (sr + S[c])
            if c == r:
                v += (v >> 8) + 1
            Nr[c] = v
            N[c][r] = v
    R = [v >> sc for v, sc in zip(R, S)]
    mx = max(map(abs, R)) if p else 0
    t = 0
    while mx >= 8192:
        mx >>= 1
        t += 1
    if t != 0:
        R = [v >> t for v in R]
    elif mx != 0:
        while mx < 4096:
            mx <<= 1
            t -= 1
        R = [v << (0 - t) for v in R]
    failed = False
    for i in range(p):
        Ni = N[i]
        piv = Ni[i]
        if piv <= 0:
            failed = True
            break
        tail = Ni[i + 1:]
        for j in range(i + 1, p):
            Nj = N[j]
            l = Nj[i]
            if l != 0:
                Nj[i + 1:] = [u - l * v // piv for u, v in zip(Nj[i + 1:], tail)]
                v = R[j] - l * R[i] // piv
                R[j] = v
                if v > 131071 or v < -131071:
                    R = [u >> 1 for u in R]
                    t += 1
    k = 0
    for Nr in N:
        for v in Nr:
            nm[k] = v
            k += 1
    for c in range(p):
        rhs[c] = R[c]
        sh[c] = S[c]
    if failed:
        return fail
    D = [0] * p
    for i in range(p - 1, -1, -1):
        Ni = N[i]
        s = (R[i] << 6) - sum(map(_mul, Ni[i + 1:], D[i + 1:]))
        v = s // Ni[i]
        if v >= 8192:
            v = 8191
        elif v <= -8192:
            v = -8191
        D[i] = v
    for c in range(p):
        d[c] = D[c]
    # -- the step, as the body's
    done = 1
    for q in range(gk):
        i = gm[q]
        c = 3 * q
        da = sx = sy = 0
        for k in range(3):
            v = D[c + k]
            e = t - S[c + k]
            lim = max_step
            if k == 0:
                e += 3
                lim = 20000
            else:
                v = 10 * v
                e -= 6
            if e >= 0:
                if e > 20 or v >= (lim >> e) + 1 or 0 - v >= (lim >> e) + 1:
                    if v > 0:
                        v = lim
                    elif v < 0:
                        v = 0 - lim
                else:
                    v = v << e
            else:
                e = 0 - e
                if e > 24:
                    v = 0
                else:
                    v = (v + (1 << (e - 1))) >> e
                    if v >= lim:
                        v = lim
                    elif v <= 0 - lim:
                        v = 0 - lim
            if k == 0:
                da = v
            elif k == 1:
                sx = 0 - v
            else:
                sy = 0 - v
        a = amps[i] + da
        if a >= amax:
            a = amax
        elif a <= 0 - amax:
            a = 0 - amax
        amps[i] = a
        x = xs[i] + sx
        y = ys[i] + sy
        if x > xmax:
            x = xmax
        elif x < 0 - xmax:
            x = 0 - xmax
        if y > ymax:
            y = ymax
        elif y < 0 - ymax:
            y = 0 - ymax
        ax = x if x >= 0 else 0 - x
        ay = y if y >= 0 else 0 - y
        if ax + ay > smax:
            e = (ax + ay - smax + 1) >> 1
            if x > 0:
                x -= e
            else:
                x += e
            if y > 0:
                y -= e
            else:
                y += e
        xs[i] = x
        ys[i] = y
        if sx > 1 or sx < -1 or sy > 1 or sy < -1:
            done = 0
    return done


# (module name, function name) -> the twin; micropython.viper looks here
TWINS = {("sensing.presence_locate", "moves"): moves_twin,
         ("sensing.presence_locate", "mismatch"): mismatch_twin,
         ("sensing.shift_scan", "unpack"): unpack_twin,
         ("sensing.shift_scan", "read_rows"): read_rows_twin,
         ("sensing.hall_scan", "read_bank"): read_bank_twin,
         ("sensing.hall_scan", "settle"): settle_twin,
         ("sensing.hall_fit", "fit_step"): fit_step_twin}
