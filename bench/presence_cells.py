"""How far a chip can move on presence pads without changing a pad (issue 12, docs/sensing.md
"Moves the presence pads cannot see"). A pad is covered when its centre lies within the chip's
seen radius (plus its own reach); a move that changes no pad cannot be seen by any firmware.

For square and offset-row (hexagonal) layouts at several pitches, both chip sizes:
- the largest move that changes no pad, over every position (pads exactly on the grid): the
  diameter of the largest set of centres that give one pattern;
- the share of random moves (random spot and direction) of 3, 4 and 5 mm that change no pad,
  with each pad's reach straying as in boardsim/target/presence_model.py, and the mean number
  of pads such a move flips.

    nice .venv/bin/python bench/presence_cells.py            # about 3 min
    .venv/bin/python bench/presence_cells.py --pitch 10 --layout square
    .venv/bin/python bench/presence_cells.py --pitch 10 --layout square --levels 3 1 -1 -3

--levels: pads that read how much of their window a chip covers in steps (the design since
issue 12, board/geometry.json presence.levels): level k switches where the chip's seen edge
lies levels[k] mm beyond the pad's centre; a move is seen when any pad's level changes, and
"pads flipped" counts level steps. Each pad's switching points stray together.
"""
import argparse

import numpy as np

SEEN_R = {"small": 13.0, "big": 18.5}      # mm: chip radius less the 1 mm rim (geometry.json)
STRAY = 0.375                              # mm: +-0.15 of the 2.5 mm window


def _pads(pitch, hexa, w, h, margin):
    rowh = pitch * np.sqrt(3) / 2 if hexa else pitch
    out = []
    for j in range(int(-margin / rowh) - 2, int((h + margin) / rowh) + 3):
        for i in range(int(-margin / pitch) - 2, int((w + margin) / pitch) + 3):
            out.append((i * pitch + (pitch / 2 if (hexa and j % 2) else 0), j * rowh))
    return np.array(out), rowh


def worst_unseen(pitch, r, hexa, step=0.05, levels=(0.0,)):
    """The diameter of the largest one-pattern set of centres (mm), pads exactly on the grid."""
    rowh = pitch * np.sqrt(3) / 2 if hexa else pitch
    w, h = 2 * pitch, 2 * rowh * (2 if hexa else 1)
    xs, ys = np.meshgrid(np.arange(0, w, step), np.arange(0, h, step))
    x, y = xs.ravel(), ys.ravel()
    pads, _ = _pads(pitch, hexa, w, h, r + 1)
    d2 = (x[:, None] - pads[None, :, 0]) ** 2 + (y[:, None] - pads[None, :, 1]) ** 2
    cov = np.concatenate([d2 <= (r + o) ** 2 for o in levels], axis=1)
    _, inv = np.unique(np.packbits(cov, axis=1), axis=0, return_inverse=True)
    inv = inv.ravel()
    best = 0.0
    for g in range(inv.max() + 1):
        m = inv == g
        for a in np.linspace(0, np.pi, 36, endpoint=False):
            p = x[m] * np.cos(a) + y[m] * np.sin(a)
            best = max(best, p.max() - p.min())
    return best


def random_moves(pitch, r, hexa, moves=(3.0, 4.0, 5.0), n=20000, seed=1, levels=(0.0,)):
    rng = np.random.default_rng(seed)
    w = 6 * pitch
    pads, rowh = _pads(pitch, hexa, w, 12 * pitch, r + 6)
    h = 12 * rowh
    e = rng.uniform(-STRAY, STRAY, len(pads))
    x0, y0, a = rng.uniform(0, w, n), rng.uniform(0, h, n), rng.uniform(0, 2 * np.pi, n)

    def pattern(x, y):
        d = np.sqrt((x[:, None] - pads[None, :, 0]) ** 2 + (y[:, None] - pads[None, :, 1]) ** 2)
        return sum((d <= (r + o + e)[None, :]).astype(int) for o in levels)
    p0 = pattern(x0, y0)
    out = {}
    for m in moves:
        p1 = pattern(x0 + m * np.cos(a), y0 + m * np.sin(a))
        steps = np.abs(p0 - p1).sum(axis=1)
        out[m] = ((steps == 0).mean(), steps.mean(), steps.min())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pitch", type=float, nargs="*", default=[10, 8, 6, 5])
    ap.add_argument("--layout", choices=("square", "hex", "both"), default="both")
    ap.add_argument("--levels", type=float, nargs="*", default=[0.0],
                    help="mm beyond the chip's seen edge where each level switches")
    a = ap.parse_args(argv)
    print("| layout | pitch | levels | chip | worst unseen move | unseen: 3 / 4 / 5 mm | level steps by 3 mm, mean / least |")
    print("|---|---|---|---|---|---|---|")
    for pitch in a.pitch:
        for hexa in ((False, True) if a.layout == "both" else (a.layout == "hex",)):
            for kind, r in SEEN_R.items():
                wu = worst_unseen(pitch, r, hexa, levels=a.levels)
                rm = random_moves(pitch, r, hexa, levels=a.levels)
                print(f"| {'offset rows' if hexa else 'square'} | {pitch:g} mm | {len(a.levels)} | {kind} | {wu:.1f} mm | "
                      + " / ".join(f"{100 * v[0]:.2f} %" for v in rm.values())
                      + f" | {rm[3.0][1]:.1f} / {rm[3.0][2]} |", flush=True)


if __name__ == "__main__":
    main()
