"""Stand-ins the tracker's tests feed it instead of a locator and the fast inputs (target side:
imported by test scripts run under both runtimes, after they put `vclock` in as `time`).

The tracker reads a locator's frame from its arrays (n, kind, x, y, strength, err, unc,
wander, hand) and asks it to refresh() once before a verdict; a test writes the frame it wants
into these arrays before each `Tracker.frame()` call. Room for 8 chips."""
from array import array

import vclock
from tables import board_table as B


class StandInLocator:
    """A locator whose frame the test writes. graded: as the hall locator (GRADED, its own
    move tolerance); move_tol: MOVE_TOL the tracker takes from it (None: the tracker's own);
    unc, wander: every chip's, in 0.1 mm. refresh() calls are kept (vclock ms) in refreshed."""

    def __init__(self, graded=False, move_tol=10, unc=10, wander=0):
        self.GRADED = graded
        if move_tol is not None:
            self.MOVE_TOL = move_tol
        self.n = 0
        self.kind = bytearray(8)
        self.x = array('i', (0,) * 8)
        self.y = array('i', (0,) * 8)
        self.strength = array('i', (B.ADC_PEAK,) * 8)
        self.err = array('i', (0,) * 8)
        self.unc = array('i', (unc,) * 8)
        self.wander = array('i', (wander,) * 8)
        self.hand = 0
        self.pace = 0       # (the hall locator's: its refresh fit not paced, tracker.frame())
        self.cut = 0
        self.hand_x = 0
        self.hand_y = 0
        self.refreshed = []

    def load(self, fr):
        """Write a recorded frame into the arrays: fr["chips"] as [kind, x, y, strength,
        wander, unc] each, fr.get("hand") as [x, y] or nothing."""
        chips = fr["chips"]
        self.n = len(chips)
        for j in range(len(chips)):
            c = chips[j]
            self.kind[j] = c[0]
            self.x[j] = c[1]
            self.y[j] = c[2]
            self.strength[j] = c[3]
            self.wander[j] = c[4]
            self.unc[j] = c[5]
        h = fr.get("hand")
        self.hand = 1 if h else 0
        if h:
            self.hand_x = h[0]
            self.hand_y = h[1]

    def blind(self, x, y, r):
        return 0

    def refresh(self):
        self.refreshed.append(vclock.ticks_ms())


class QuietFastInputs:
    """Cup switches and Zenn beams that never fire: no beam blocked, no edge counted."""
    total = 0
    off = 0
    count = array('i', (0,) * 5)
    first = array('i', (0,) * 5)

    def blocked(self, b):
        return False

    def clear(self):
        pass


# What the tracker keeps, for the tests that run two trackers side by side on the same frames
# and compare them after every frame (test_track_same, test_track_carry, test_finish_masks)
TRACKER_ARRAYS = ("present", "kind", "x", "y", "mask", "lo", "hi", "tx", "ty", "tunc", "seen",
                  "moved", "ts", "faded", "weak", "weak_t", "rs", "hand_n", "hand_t", "handed",
                  "gone_t", "ghost_n", "ghost_t", "move_order", "mf", "lf", "mdx", "mdy", "tw",
                  "grazed", "ak", "ax", "ay")
TRACKER_INTS = ("n_moved", "afr", "state", "still", "still_since", "confirm", "an", "ao", "bn",
                "bt", "rest_ok", "edges", "event", "frames")
RESULT_ARRAYS = ("fate", "moved", "sure", "x", "y", "kind", "end_mask", "start_mask", "start_lo",
                 "start_hi")


def tracker_state(tr, claimed=None, cupped=None, results=RESULT_ARRAYS):
    """Every value the tracker keeps, as lists: `claimed` and `cupped` cut to their first so many
    bytes (None: all), the shot result's arrays among `results` that it has."""
    s = [list(getattr(tr, k)) for k in TRACKER_ARRAYS] + [getattr(tr, k) for k in TRACKER_INTS]
    s.append(list(tr.claimed)[:claimed])
    s.append(list(tr.cupped)[:cupped])
    r = tr.res
    s.append([getattr(r, k) for k in ("t_start", "t_rest", "n")])
    for k in results:
        if hasattr(r, k):
            s.append(list(getattr(r, k)))
    return s
