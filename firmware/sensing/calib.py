# The pads' calibration (issue 4; docs/sensing.md, "Calibration"; docs/controls.md for the
# buttons): measured on the table, kept on the Pico's flash in CALIB_FILE, loaded at boot.
#
#   1. the board empty: hall pads, every pad's zero reading (its baseline); presence pads, the
#      pads covered on an empty board (stuck on, or dirty) are left out;
#   2. a small chip, then a big one, centred on the board's centre mark: hall pads, the
#      strength of each kind (the locator's strength prior); presence pads, the radius the pads
#      see of each kind (its rim reflects too little to count).
#
# The file, little-endian:
#   "ZCAL"  version (1)  front end (1: 0 hall, 1 shift)  cells (2)
#   hall:  baseline (2 per cell)  strength small (2)  strength big (2)
#   shift: seen radius small (2)  seen radius big (2)   (0.1 mm)
#   ignored pads: a bit per cell (bit g & 7 of byte g >> 3)
#   CRC-16/CCITT-FALSE of all the above (2; journal.crc16)
# It is written to a temporary file and renamed over the old one (a littlefs rename is atomic),
# so a power cut leaves the old calibration or the new one, never half of one.
#
# load() at boot: LOADED, MISSING (no file: defaults) or DAMAGED (bad magic, version, size, front
# end or CRC: defaults); app.py says which on the display and in a {"ev":"calib"} event.
# The steps run from the menu (app.py, "Calibrate pads") or from the host over the serial
# console (tools/calibrate sends "calib empty", "calib small", "calib big", "calib save").
# Boot and calibration only: everything here allocates. app.py imports this module at boot
# for load() and drops it again after (its code would take heap on the Pico for nothing), and
# imports it again out of the loop turn when a calibration step is asked for (step(),
# command()).
from micropython import const
from array import array

from storage.journal import crc16
from tracking.shot import KIND_SMALL, KIND_BIG
from sensing.zones import isqrt as _isqrt

CALIB_FILE = "calib.bin"
MAGIC = b"ZCAL"
VERSION = const(1)

LOADED = const(0)
MISSING = const(1)
DAMAGED = const(2)
STATUS_NAMES = (b"loaded", b"missing", b"damaged")
DONE = (b"Calibration saved", b"Flash error: not saved")
JOBS = ("empty", "small", "big", "save")    # app.Scoreboard.calib_job 1..4


def _u16(b, i):
    return b[i] | (b[i + 1] << 8)


def _p16(out, v):
    out.append(v & 0xFF)
    out.append((v >> 8) & 0xFF)


def encode(shift, n, baseline, s_small, s_big, ignored):
    """The file's bytes. baseline: n zero readings (hall) or None; s_small, s_big: strengths
    (hall) or seen radii (shift); ignored: n flags."""
    out = bytearray(MAGIC)
    out.append(VERSION)
    out.append(1 if shift else 0)
    _p16(out, n)
    if not shift:
        for g in range(n):
            _p16(out, baseline[g])
    _p16(out, s_small)
    _p16(out, s_big)
    bits = bytearray((n + 7) // 8)
    for g in range(n):
        if ignored[g]:
            bits[g >> 3] |= 1 << (g & 7)
    out.extend(bits)
    _p16(out, crc16(out, 0, len(out)))
    return out


def decode(data, shift, n):
    """(baseline or None, s_small, s_big, ignored) from the file's bytes, or None when they are
    not a calibration of this front end and grid."""
    size = 8 + (0 if shift else 2 * n) + 4 + (n + 7) // 8 + 2
    if len(data) != size or data[0:4] != MAGIC or data[4] != VERSION:
        return None
    if data[5] != (1 if shift else 0) or _u16(data, 6) != n:
        return None
    if crc16(data, 0, size - 2) != _u16(data, size - 2):
        return None
    i = 8
    base = None
    if not shift:
        base = array('H', bytes(2 * n))
        for g in range(n):
            base[g] = _u16(data, i)
            i += 2
    s_small = _u16(data, i)
    s_big = _u16(data, i + 2)
    i += 4
    ign = bytearray(n)
    for g in range(n):
        ign[g] = (data[i + (g >> 3)] >> (g & 7)) & 1
    return base, s_small, s_big, ign


def load(scan, loc, shift, path=CALIB_FILE):
    """Apply the saved calibration to the scanner and locator. Returns (status, ignored pads)."""
    n = len(scan.grid)
    data = None
    for p in (path, path + ".new"):     # .new: a power cut came between writing and renaming
        try:
            with open(p, "rb") as f:
                data = f.read()
            break
        except OSError:
            pass
    if data is None:
        return MISSING, 0
    d = decode(data, shift, n)
    if d is None:
        return DAMAGED, 0
    base, s_small, s_big, ign = d
    apply(scan, loc, shift, base, s_small, s_big, ign)
    k = 0
    for g in range(n):
        k += ign[g]
    return LOADED, k


def apply(scan, loc, shift, base, s_small, s_big, ign):
    if shift:
        if s_small and s_big:
            loc.set_radii(s_small, s_big)
    else:
        if base is not None:
            scan.set_baseline(base)
            loc.near_threshold = loc.NEAR_THRESHOLD     # zeros known: look lower by dead pads
            loc.bad_err = loc.OUTLIER_ERR               # and tell a bad fit from an offset
        if s_small:
            loc.ref_s = s_small
        if s_big:
            loc.ref_b = s_big
    for g in range(len(ign)):
        if ign[g]:
            loc.set_ignored(g, 1)


def save(scan, loc, shift, path=CALIB_FILE):
    """Write the calibration the scanner and locator hold now. True when it is on the flash."""
    n = len(scan.grid)
    if shift:
        data = encode(True, n, None, loc.r_small, loc.r_big, loc.ignore)
    else:
        data = encode(False, n, scan.baseline, loc.ref_s, loc.ref_b, loc.ignore)
    tmp = path + ".new"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        import os
        try:
            os.rename(tmp, path)        # over the old one, in one step
        except OSError:
            os.remove(path)             # a filesystem that will not rename over a file
            os.rename(tmp, path)
    except OSError:
        return False
    return True


# -- the steps ------------------------------------------------------------------------------------
class Calibration:
    """The measurements, one step at a time (app.py's calibration mode and the REPL helpers
    below). empty() and the end of a chip step scan frames themselves: call them outside the
    loop's locked turn (app.py: service())."""

    FRAMES = 16

    def __init__(self, scan, loc, shift):
        self.scan = scan
        self.loc = loc
        self.shift = shift
        self.worst = 0          # empty board: largest zero offset (hall, LSB) / pads covered
        self.small = 0          # measured per kind (0: not measured): the mean of the samples
        self.big = 0
        self.sums = [0, 0, 0]   # per kind: the samples' sum and count
        self.counts = [0, 0, 0]

    def empty(self):
        """Step 1: the board empty. Returns the pads found bad (covered on an empty board, or a
        hall pad whose zero is far off)."""
        sc = self.scan
        loc = self.loc
        bad = 0
        if self.shift:
            for g in range(len(loc.ignore)):
                if loc.ignore[g]:
                    loc.set_ignored(g, 0)
            cells = sc.calibrate_empty(self.FRAMES)
            for g in cells:
                loc.set_ignored(g, 1)
            self.worst = len(cells)
            bad = len(cells)
        else:
            self.worst = sc.calibrate_empty(self.FRAMES)
            loc.near_threshold = loc.NEAR_THRESHOLD
            loc.bad_err = loc.OUTLIER_ERR
            # a pad whose zero lies far from the middle is not a working sensor (a rail, a
            # broken wire): left out
            from tables.board_table import ADC_ZERO
            for g in range(len(sc.baseline)):
                d = sc.baseline[g] - ADC_ZERO
                if d > 12000 or d < -12000:
                    loc.set_ignored(g, 1)
                    bad += 1
        return bad

    def chip(self, kind):
        """Step 2 or 3: one chip of `kind` (shot.KIND_SMALL / KIND_BIG) lies still near the
        centre. Scans and measures it, one sample; returns the mean of this kind's samples so
        far (0: no such chip seen). Presence pads: each placement gives the seen radius to
        about a millimetre, so a few placements, each somewhere else near the centre, are
        better than one."""
        v = self._sample(kind)
        if v == 0:
            return 0
        self.sums[kind] += v
        self.counts[kind] += 1
        v = self.sums[kind] // self.counts[kind]
        if self.shift:
            # from the mean area in pads (x 100) to the radius: r^2 = area P^2 / pi
            from tables.board_table import PRES_PITCH
            v = _isqrt(v * PRES_PITCH * PRES_PITCH * 113 // (355 * 100))
        loc = self.loc
        if self.shift:
            if kind == 1:
                loc.set_radii(v, loc.r_big)
            else:
                loc.set_radii(loc.r_small, v)
        elif kind == 1:
            loc.ref_s = v
        else:
            loc.ref_b = v
        if kind == 1:
            self.small = v
        else:
            self.big = v
        return v

    def _sample(self, kind):
        sc = self.scan
        loc = self.loc
        if self.shift:
            v = self._radius(kind)
        else:
            total = 0
            k = 0
            for _ in range(self.FRAMES):
                sc.scan_frame()
                n = loc.find(sc.grid)
                if n == 1 and loc.kind[0] == kind and _near_centre(loc.x[0], loc.y[0]):
                    total += loc.strength[0]
                    k += 1
            v = total // k if k >= self.FRAMES // 2 else 0
        return v

    def _radius(self, kind):
        # presence pads: the pads the chip covers. Over spots that fall anywhere on the pads'
        # grid, a disc of radius r covers pi r^2 / P^2 pads on average (exactly), so the mean
        # count over the spots gives the seen radius; a single spot's fit would not (a chip's
        # centre and radius trade off against each other at this pitch). Returns the count x 100.
        sc = self.scan
        loc = self.loc
        for _ in range(3):
            sc.scan_frame()
        n = loc.find(sc.grid)
        if n != 1 or loc.kind[0] != kind or not _near_centre(loc.x[0], loc.y[0]):
            return 0
        return loc.group_area(0)          # presence pads of several levels: their sum


def _near_centre(x, y):
    return x * x + y * y <= 300 * 300


# -- the steps as the scoreboard runs them (app.py: service(), command()) ----------------------
def command(sb, name):
    """The console's "calib NAME" for app.Scoreboard `sb` (NAME: empty, small, big or save, str
    or bytes) runs that step now (step()). False when there is no such step."""
    if not isinstance(name, str):
        name = name.decode()
    if name not in JOBS:
        return False
    if sb.calibration is None:
        sb.calibration = Calibration(sb.scan, sb.loc, sb.shift)
    sb.calib_job = JOBS.index(name) + 1
    sb.calib_service(False)
    return True


def step(sb):
    """The calibration step sb.calib_job asks for (1 empty board, 2 small chip, 3 big chip,
    4 save) on sb.calibration, with its calib event and the notice that says how it went.
    True when the empty board or the save went well (the menu goes on to the next step; a chip
    step stays, so that ok again adds another spot)."""
    job = sb.calib_job
    c = sb.calibration
    ev = sb.ev
    ev.begin(b"calib")
    if job == 1:
        bad = c.empty()
        ev.str_(b"step", b"empty")
        ev.int_(b"bad", bad)
        ev.int_(b"worst", c.worst)
        ok = True
        sb.notice = b"Board empty: " + str(bad).encode() + b" bad"
    elif job == 2 or job == 3:
        kind = KIND_SMALL if job == 2 else KIND_BIG
        v = c.chip(kind)
        ev.str_(b"step", b"small" if job == 2 else b"big")
        ev.int_(b"value", v)
        ok = v > 0
        n = c.counts[kind]
        ev.int_(b"samples", n)
        sb.notice = (b"Measured " + str(v).encode() + b" (" + str(n).encode() + b")") if ok \
            else b"No such chip at centre"
        ev.bool_(b"ok", ok)
        ev.end()
        sb.calib_job = 0
        return False
    else:
        ok = save(sb.scan, sb.loc, sb.shift)
        ev.str_(b"step", b"save")
        sb.notice = DONE[0 if ok else 1]
    ev.bool_(b"ok", ok)
    ev.end()
    sb.calib_job = 0
    return ok
