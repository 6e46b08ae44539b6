"""How well the pads tell where chips lie: chips of both sizes dropped at random resting spots,
read through the whole chain (boardsim/target/hall_model.py -> the `machine` stand-in ->
firmware/sensing/hall_scan.py -> firmware/sensing/hall_locate.py -> firmware/sensing/zones.py), judged against the board's
true geometry (boardsim/geometry.py).

    .venv/bin/python -m bench.sensing_accuracy [--chips 10000] [--frames 24] [--spread 30]
    .venv/bin/python -m bench.sensing_accuracy --front-end shift [--chips 2000] [--touching 300]

Chips lie 120 mm or more apart (up to 8 a frame), so each is seen alone; --touching adds rows
of two and three touching chips (three big chips across a Zenn line among them). Magnets differ:
each chip's strength is drawn around the nominal with --spread per mille (one sigma). The board
holds still for --frames frames before find(), as it does through the tracker's settle time.
--front-end shift measures the presence pads instead (boardsim/target/presence_model.py, through
the 74HC165s' SPI reads, firmware/sensing/shift_scan.py, firmware/sensing/presence_locate.py).

Besides the error, each verdict is judged as the tracker judges it: sure when no zone border
lies within the locator's uncertainty (unc) of the chip's rim. "Sure but wrong" must stay 0.
"""
import argparse
import math
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for d in ("firmware", "boardsim/target"):
    sys.path.insert(0, os.path.join(ROOT, d))
sys.path.insert(0, ROOT)

from shapely.geometry import Point  # noqa: E402

from boardsim.geometry import Board, ZONE_NAMES  # noqa: E402
import machine  # noqa: E402
import world_table as T  # noqa: E402
from hall_model import HallModel  # noqa: E402
from sensing.hall_scan import HallScanner  # noqa: E402
from sensing.hall_locate import Locator  # noqa: E402
from presence_model import PresenceModel  # noqa: E402
from sensing.shift_scan import PresenceScanner  # noqa: E402
from sensing.presence_locate import PresenceLocator  # noqa: E402
from tables import board_table as BT  # noqa: E402
from sensing import zones  # noqa: E402

B = Board.load()
REST = {n: s for n, s in B.zones.items() if not n.endswith(".cup")}
POL = {"small": 1, "big": -1}
KIND = {"small": 1, "big": 2}
R10 = {"small": BT.R_SMALL, "big": BT.R_BIG}


class HallWorld:
    def __init__(self, seed):
        pm = T.PINMAP
        self.hall = HallModel(T, seed=seed)
        self.sel_ch = tuple(pm["mux_channel_select"])
        self.sel_bank = tuple(pm["mux_bank_select"])

    def adc_read(self, channel):
        lv = machine._level
        s, b = self.sel_ch, self.sel_bank
        ch = lv[s[0]] | (lv[s[1]] << 1) | (lv[s[2]] << 2) | (lv[s[3]] << 3)
        bank = lv[b[0]] | (lv[b[1]] << 1) | (lv[b[2]] << 2) | (lv[b[3]] << 3)
        pad = T.PAD_AT[(channel * T.BANKS + bank) * T.CHANNELS + ch]
        return T.ADC_ZERO if pad < 0 else self.hall.read(pad)


class PresWorld:
    def __init__(self):
        sh = T.PINMAP["shift"]
        self.pres = PresenceModel(T)
        self.pres._levels = machine._level
        self.pres.row_sel = tuple(sh["row_select"])
        machine.watch(sh["load"], self.edge)

    def edge(self, pin, level):
        if level == 0:
            self.pres.latch()

    def spi_readinto(self, bus, buf):
        self.pres.read(buf)


def resting_spot(rng, kind):
    x, y = B.resting_spot(rng, kind)
    return round(x, 1), round(y, 1)


def judge(x, y, kind, mask):
    """-> (margin: how near any zone's verdict is to flipping, mm; true zone set; list of
    (zone, overlap depth mm) for zones the disc overlaps without holding the centre; list of
    (zone, gap mm) for zones it does not overlap)."""
    r = B.chip_radius(kind)
    p = Point(x, y)
    margin = abs(B.outline.exterior.distance(p) - r)
    over, gaps = [], []
    for n, s in REST.items():
        d = s.distance(p)
        if d > 0:
            margin = min(margin, abs(d - r))
            if d < r:
                over.append((n, r - d))
            else:
                gaps.append((n, d - r))
    return margin, B.zones_of_disc(x, y, r), over, gaps


def names(mask):
    return {ZONE_NAMES[i] for i in range(len(ZONE_NAMES)) if mask >> i & 1}


class Stats:
    def __init__(self):
        self.errs = []
        self.kind_ok = self.chips = self.missed = self.extra = 0
        self.far = self.far_ok = 0
        self.deep = self.deep_seen = 0
        self.wide = self.wide_false = 0
        self.wrong = []
        self.sure = self.sure_wrong = self.unsure = self.unsure_wrong = 0

    def add(self, placed, found):
        left = list(found)
        for x, y, kind in placed:
            self.chips += 1
            if not left:
                self.missed += 1
                continue
            f = min(left, key=lambda f: math.hypot(f[1] - x * 10, f[2] - y * 10))
            e = math.hypot(f[1] - x * 10, f[2] - y * 10) / 10
            if e > 15:
                self.missed += 1
                continue
            left.remove(f)
            self.errs.append(e)
            self.kind_ok += f[0] == KIND[kind]
            mask = zones.disc_mask(f[1], f[2], R10[kind])
            got = names(mask)
            margin, truth, over, gaps = judge(x, y, kind, mask)
            u = f[3]
            r = R10[kind]
            if zones.disc_mask(f[1], f[2], r + u) == zones.disc_mask(f[1], f[2], r - u):
                self.sure += 1
                self.sure_wrong += got != truth
            else:
                self.unsure += 1
                self.unsure_wrong += got != truth
            if margin > 3.0:
                self.far += 1
                if got == truth:
                    self.far_ok += 1
                elif len(self.wrong) < 10:
                    self.wrong.append((x, y, kind, sorted(got ^ truth), round(e, 2)))
            for n, depth in over:
                if depth >= 3.0:
                    self.deep += 1
                    self.deep_seen += n in got
            for n, gap in gaps:
                if gap >= 3.0:
                    self.wide += 1
                    self.wide_false += n in got
        self.extra += len(left)

    def table(self, title):
        e = sorted(self.errs)
        pct = lambda a, b: "%.3f %% (%d / %d)" % (100.0 * a / b, a, b) if b else "-"
        rows = [
            ("chips placed", "%d" % self.chips),
            ("found (missed / extra)", "%d (%d / %d)" % (len(e), self.missed, self.extra)),
            ("told apart by size", pct(self.kind_ok, len(e))),
            ("zone verdict right, > 3 mm from any border", pct(self.far_ok, self.far)),
            ("overlaps of >= 3 mm seen", pct(self.deep_seen, self.deep)),
            ("zones >= 3 mm away reported (false)", pct(self.wide_false, self.wide)),
            ("verdicts said sure", pct(self.sure, self.sure + self.unsure)),
            ("  of those wrong (must be 0)", pct(self.sure_wrong, self.sure)),
            ("verdicts said unsure: wrong", pct(self.unsure_wrong, self.unsure)),
            ("position error mean", "%.2f mm" % (sum(e) / len(e)) if e else "-"),
            ("position error 95th percentile", "%.2f mm" % e[int(0.95 * len(e))] if e else "-"),
            ("position error 99th percentile", "%.2f mm" % e[int(0.99 * len(e))] if e else "-"),
            ("position error max", "%.2f mm" % e[-1] if e else "-"),
        ]
        w = max(len(a) for a, _ in rows)
        out = ["", title, "-" * len(title)]
        out += ["%-*s  %s" % (w, a, b) for a, b in rows]
        for bad in self.wrong:
            out.append("  wrong verdict: x=%.1f y=%.1f %s differs in %s (error %.2f mm)" % bad)
        return "\n".join(out)


def touching_rows(rng, count):
    rows = []
    while len(rows) < count:
        n = rng.choice((2, 3))
        kinds = [rng.choice(("small", "big")) for _ in range(n)]
        if len(rows) % 4 == 0:
            # three big chips side by side across a Zenn line
            end = rng.choice(("a", "b"))
            u, v = rng.uniform(-20, 20), B.zline_v + rng.uniform(-8, 8)
            row = []
            for i in (-1, 0, 1):
                x, y = B.to_board(end, u + i * (2 * B.chip_radius("big") + rng.uniform(0.05, 1)), v + rng.uniform(-1, 1))
                row.append((round(x, 1), round(y, 1), "big"))
            rows.append(row)
            continue
        x, y = resting_spot(rng, kinds[0])
        a = rng.uniform(0, math.pi)
        row = [(x, y, kinds[0])]
        for k in kinds[1:]:
            px, py, pk = row[-1]
            d = B.chip_radius(pk) + B.chip_radius(k) + rng.uniform(0.05, 1.0)
            row.append((round(px + d * math.cos(a), 1), round(py + d * math.sin(a), 1), k))
        if all(B.can_rest(cx, cy, k) for cx, cy, k in row):
            rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chips", type=int, default=10000)
    ap.add_argument("--touching", type=int, default=600, help="rows of touching chips")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--spread", type=float, default=30.0, help="magnet strength spread, per mille")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--front-end", choices=("hall", "shift"), default="hall")
    ap.add_argument("--uncalibrated", action="store_true",
                    help="hall pads: no calibrate_empty (a new board, as the simulator boots: the "
                    "sensors' own zeros stay in the readings)")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    shift = a.front_end == "shift"
    if shift:
        world = PresWorld()
        machine.attach(world)
        scan = PresenceScanner()
        loc = PresenceLocator(scan)
        a.frames = min(a.frames, 3)          # a still pattern does not change: two frames do
    else:
        world = HallWorld(seed=0x9E3779B9 ^ a.seed)
        machine.attach(world)
        scan = HallScanner()
        loc = Locator()
        if not a.uncalibrated:
            scan.calibrate_empty(8)
            loc.near_threshold = loc.NEAR_THRESHOLD      # calibrated zeros
            loc.bad_err = loc.OUTLIER_ERR

    def amp():
        return max(500, int(round(rng.gauss(1000, a.spread))))

    def settle_and_find(chips):
        if shift:
            world.pres.update([(int(round(x * 10)), int(round(y * 10)), T.R[k], 1000) for x, y, k in chips])
        else:
            world.hall.update([(int(round(x * 10)), int(round(y * 10)), POL[k], amp()) for x, y, k in chips])
        for _ in range(a.frames):
            scan.scan_frame()
            n = loc.find(scan.grid)
        return [(loc.kind[i], loc.x[i], loc.y[i], loc.unc[i]) for i in range(n)]

    t0 = time.time()
    alone = Stats()
    placed = 0
    while placed < a.chips:
        chips = []
        tries = 0
        while len(chips) < 8 and tries < 200 and placed + len(chips) < a.chips:
            tries += 1
            k = rng.choice(("small", "big"))
            x, y = resting_spot(rng, k)
            if all(math.hypot(x - cx, y - cy) >= 120 for cx, cy, _ in chips):
                chips.append((x, y, k))
        alone.add(chips, settle_and_find(chips))
        placed += len(chips)
    t1 = time.time()
    rows = Stats()
    for row in touching_rows(rng, a.touching):
        rows.add(row, settle_and_find(row))
        if shift:
            world.pres.update([])
        else:
            world.hall.update([])
        for _ in range(2):
            scan.scan_frame()
    t2 = time.time()
    if shift:
        print("Sensing accuracy, presence pads: pitch %g mm, window %g mm, thresholds +-%g, rim %g mm"
              % (float(B.presence["pitch"]), float(B.presence["aperture"]),
                 float(B.presence["threshold_spread"]), float(B.presence["rim"])))
    else:
        print("Sensing accuracy: pitch %g mm, magnet %g mm up, noise %d LSB, magnets +-%.1f %%, %d frames still%s"
              % (float(B.pads["pitch"]), float(B.pads["magnet_height"]), T.NOISE_LSB, a.spread / 10, a.frames,
                 ", uncalibrated" if a.uncalibrated else ""))
    print(alone.table("Chips lying alone (%d, %.0f s)" % (alone.chips, t1 - t0)))
    print(rows.table("Rows of 2 and 3 touching chips (%d rows, a quarter three big across a Zenn line; %.0f s)"
                     % (a.touching, t2 - t1)))
    if not shift:
        print("\nlearnt strength: small %d, big %d (nominal %d)" % (loc.ref_s, loc.ref_b, BT.ADC_PEAK))


if __name__ == "__main__":
    main()
