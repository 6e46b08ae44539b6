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


def worst_unseen(pitch, r, hexa, step=0.05):
    """The diameter of the largest one-pattern set of centres (mm), pads exactly on the grid."""
    rowh = pitch * np.sqrt(3) / 2 if hexa else pitch
    w, h = 2 * pitch, 2 * rowh * (2 if hexa else 1)
    xs, ys = np.meshgrid(np.arange(0, w, step), np.arange(0, h, step))
    x, y = xs.ravel(), ys.ravel()
    pads, _ = _pads(pitch, hexa, w, h, r + 1)
    cov = ((x[:, None] - pads[None, :, 0]) ** 2 + (y[:, None] - pads[None, :, 1]) ** 2) <= r * r
    _, inv = np.unique(np.packbits(cov, axis=1), axis=0, return_inverse=True)
    inv = inv.ravel()
    best = 0.0
    for g in range(inv.max() + 1):
        m = inv == g
        for a in np.linspace(0, np.pi, 36, endpoint=False):
            p = x[m] * np.cos(a) + y[m] * np.sin(a)
            best = max(best, p.max() - p.min())
    return best


def random_moves(pitch, r, hexa, moves=(3.0, 4.0, 5.0), n=20000, seed=1):
    rng = np.random.default_rng(seed)
    w = 6 * pitch
    pads, rowh = _pads(pitch, hexa, w, 12 * pitch, r + 6)
    h = 12 * rowh
    e = rng.uniform(-STRAY, STRAY, len(pads))
    x0, y0, a = rng.uniform(0, w, n), rng.uniform(0, h, n), rng.uniform(0, 2 * np.pi, n)

    def pattern(x, y):
        d = np.sqrt((x[:, None] - pads[None, :, 0]) ** 2 + (y[:, None] - pads[None, :, 1]) ** 2)
        return d <= (r + e)[None, :]
    p0 = pattern(x0, y0)
    out = {}
    for m in moves:
        p1 = pattern(x0 + m * np.cos(a), y0 + m * np.sin(a))
        out[m] = ((p0 == p1).all(axis=1).mean(), (p0 != p1).sum(axis=1).mean())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pitch", type=float, nargs="*", default=[10, 8, 6, 5])
    ap.add_argument("--layout", choices=("square", "hex", "both"), default="both")
    a = ap.parse_args(argv)
    print("| layout | pitch | chip | worst unseen move | unseen: 3 / 4 / 5 mm | pads flipped by 3 mm |")
    print("|---|---|---|---|---|---|")
    for pitch in a.pitch:
        for hexa in ((False, True) if a.layout == "both" else (a.layout == "hex",)):
            for kind, r in SEEN_R.items():
                wu = worst_unseen(pitch, r, hexa)
                rm = random_moves(pitch, r, hexa)
                print(f"| {'offset rows' if hexa else 'square'} | {pitch:g} mm | {kind} | {wu:.1f} mm | "
                      + " / ".join(f"{100 * u:.2f} %" for u, _ in rm.values())
                      + f" | {rm[3.0][1]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
