# Best games on the flash: the five best Zenn Bowling scores and the five quickest traps (Trap
# Zenn 1 and the rounds of Trap Zenn 2), kept in best.zb. Imported by app.py outside the loop
# turn only (at a game's end and for the menu's "Best games"), then dropped again: nothing of
# it is held while a game is played. Allocates freely. docs/persistence.md, "Best games".
#
# best.zb is a list of fixed-size records, appended one per player (bowling) or trapped round:
#
#   record = type (1)  serial (4, little-endian)  a b c d e  crc (2, little-endian)   12 bytes
#   crc    = CRC-16/CCITT-FALSE over the first 10 bytes (journal.crc16)
#   'B'  bowling: a player, b c score (little-endian), d players, e 0
#   'T'  a trap:  a the trapper, b the game (its VARIANT: 1, 2), c shots (+ penalty), d round (0,
#        1), e reason
# A game's BEST in games/registry.py says which of the two it writes (BEST_TOTAL, BEST_TRAP) or
# none (BEST_NONE).
#
# serial is the journal's serial of the game: a game ended again after an undo writes its
# records again, and the later record of a (serial, player) or (serial, round) replaces the
# earlier. One append is one littlefs commit (all or nothing). A record whose CRC fails is
# skipped, the others stay (fault "damaged"); a record cut short at the end is dropped. Past
# MAX_FILE the file is written again with the ten records that count, into best.tmp, renamed
# over best.zb (littlefs renames atomically): a power cut leaves the old file or the new one.
import os

from storage.journal import crc16
from games import registry as R

# a registry line's fields (games/registry.py)
_NAME = 1
_VARIANT = 4
_BEST = 7
_BEST_TOTAL = 1
_BEST_TRAP = 2

FILE = "best.zb"
TMP = "best.tmp"
REC = 12
MAX_FILE = 50 * REC
KEEP = 5
T_BOWL = 0x42
T_TRAP = 0x54


class Best:
    def __init__(self):
        self.bowl = {}          # (serial, player) -> score
        self.trap = {}          # (serial, round) -> (shots, player, game, reason)
        self.damaged = 0        # records skipped for a bad CRC or type
        self.size = 0

    # -- reading ---------------------------------------------------------------------------------
    def load(self, name=FILE):
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError:
            return self
        self.size = len(data)
        for i in range(0, len(data) - REC + 1, REC):
            c = crc16(data, i, REC - 2)
            t = data[i]
            if data[i + 10] != c & 0xFF or data[i + 11] != c >> 8 or t not in (T_BOWL, T_TRAP):
                self.damaged += 1
                continue
            s = data[i + 1] | data[i + 2] << 8 | data[i + 3] << 16 | data[i + 4] << 24
            a, b, c2, d, e = data[i + 5], data[i + 6], data[i + 7], data[i + 8], data[i + 9]
            if t == T_BOWL:
                self.bowl[(s, a)] = b | c2 << 8
            else:
                self.trap[(s, d)] = (c2, a, b, e)
        return self

    def top_bowling(self):
        # [(score, player, serial)], best first (an earlier game first on a tie)
        t = sorted(((-v, k[0], k[1]) for k, v in self.bowl.items()))[:KEEP]
        return [(-v, p, s) for v, s, p in t]

    def top_traps(self):
        # [(shots, player, game, serial)], quickest first
        t = sorted(((v[0], k[0], v[1], v[2]) for k, v in self.trap.items()))[:KEEP]
        return [(sh, p, g, s) for sh, s, p, g in t]

    # -- writing ---------------------------------------------------------------------------------
    def _append(self, recs):
        with open(FILE, "ab") as f:
            f.write(recs)
        self.size += len(recs)
        if self.size > MAX_FILE:
            self._compact()

    def _compact(self):
        out = bytearray()
        for v, p, s in self.top_bowling():
            out += record(T_BOWL, s, p, v & 0xFF, v >> 8, 0, 0)
        keep = set((s, p) for _, p, s in self.top_bowling())
        for k in list(self.bowl):
            if k not in keep:
                del self.bowl[k]
        tops = self.top_traps()
        for (s, rd), (sh, p, g, why) in list(self.trap.items()):
            if (sh, p, g, s) in tops:
                out += record(T_TRAP, s, p, g, sh, rd, why)
            else:
                del self.trap[(s, rd)]
        with open(TMP, "wb") as f:
            f.write(out)
        os.rename(TMP, FILE)
        self.size = len(out)

    def add_bowling(self, serial, totals):
        """A bowling game's end: each player's total (list). Returns [(player, rank)] of the
        players now in the five best (rank from 1)."""
        recs = bytearray()
        for p, v in enumerate(totals):
            self.bowl[(serial, p + 1)] = v
            recs += record(T_BOWL, serial, p + 1, v & 0xFF, v >> 8, len(totals), 0)
        self._append(recs)
        top = self.top_bowling()
        new = []
        for r, (v, p, s) in enumerate(top):
            if s == serial:
                new.append((p, r + 1))
        return new

    def add_traps(self, serial, game, rounds):
        """A Trap Zenn game's end: rounds [(round, trapper, shots, reason)] that ended trapped.
        Returns [(trapper, rank)] of those now among the five quickest."""
        recs = bytearray()
        for rd, p, sh, why in rounds:
            self.trap[(serial, rd)] = (sh, p, game, why)
            recs += record(T_TRAP, serial, p, game, min(sh, 255), rd, why)
        if recs:
            self._append(recs)
        new = []
        for r, (sh, p, g, s) in enumerate(self.top_traps()):
            if s == serial:
                new.append((p, r + 1))
        return new


def record(t, serial, a, b, c, d, e):
    r = bytearray(REC)
    r[0] = t
    for k in range(4):
        r[1 + k] = (serial >> (8 * k)) & 0xFF
    r[5] = a
    r[6] = b
    r[7] = c
    r[8] = d
    r[9] = e
    c16 = crc16(r, 0, REC - 2)
    r[10] = c16 & 0xFF
    r[11] = c16 >> 8
    return r


# -- what app.py shows and writes ------------------------------------------------------------
def lines_of(b):
    """The menu's pages: [(title, text)], the five best bowling games, then the five quickest
    traps ("1. 268  P1  #12": rank, score or shots, player, the game's number)."""
    out = []
    for r, (v, p, s) in enumerate(b.top_bowling()):
        out.append((b"Best bowling", ("%d. %3d  P%d  #%d" % (r + 1, v, p, s)).encode()))
    if not out:
        out.append((b"Best bowling", b"none yet"))
    n = len(out)
    for r, (sh, p, g, s) in enumerate(b.top_traps()):
        out.append((b"Quickest traps", ("%d. %2d sh P%d T%d #%d" % (r + 1, sh, p, g, s)).encode()))
    if len(out) == n:
        out.append((b"Quickest traps", b"none yet"))
    return out


def event(ev, b, game, new):
    """{"ev":"best","game":G,"new":[{"player":P,"rank":R}],"bowling":[...],"trap":[...]}."""
    ev.begin(b"best")
    if game is None:
        ev.null_(b"game")
    else:
        ev.str_(b"game", game)
    ev.arr(b"new")
    for p, r in new:
        ev.obj(None)
        ev.int_(b"player", p)
        ev.int_(b"rank", r)
        ev.close_obj()
    ev.close_arr()
    ev.arr(b"bowling")
    for r, (v, p, s) in enumerate(b.top_bowling()):
        ev.obj(None)
        ev.int_(b"rank", r + 1)
        ev.int_(b"score", v)
        ev.int_(b"player", p)
        ev.int_(b"game", s)
        ev.close_obj()
    ev.close_arr()
    ev.arr(b"trap")
    for r, (sh, p, g, s) in enumerate(b.top_traps()):
        ev.obj(None)
        ev.int_(b"rank", r + 1)
        ev.int_(b"shots", sh)
        ev.int_(b"player", p)
        ev.str_(b"variant", _trap_name(g))
        ev.int_(b"game", s)
        ev.close_obj()
    ev.close_arr()
    ev.end()


def _trap_name(variant):
    # the event stream's name of the BEST_TRAP game of this variant ('T' records keep it)
    for e in R.games():
        if e[_BEST] == _BEST_TRAP and e[_VARIANT] == variant:
            return e[_NAME]
    return b""


def service(ev, job, g, serial):
    """app.py's work, outside the loop turn: job 1, the game g (its engine) has ended: add it as
    its registry entry's BEST says; job 2: read the table for the menu. Writes the "best" event
    (and a fault). Returns (the menu's pages or None, a notice or None)."""
    notice = None
    lines = None
    try:
        b = Best().load()
        new = []
        game = None
        kind = 0                            # BEST_NONE
        if job == 1 and g is not None:
            game = g.name
            for e in R.games():
                if e[_NAME] == game:
                    kind = e[_BEST]
        if kind == _BEST_TRAP:
            rounds = []
            for r in range(g.variant):
                why = g.rreason[r]
                if 1 <= why <= 4:                   # trapped: stuck, hit, off, basket
                    rounds.append((r, g.round_trapper(r), g.round_total(r), why))
            new = b.add_traps(serial, g.variant, rounds)
        elif kind == _BEST_TOTAL:
            new = b.add_bowling(serial, [g.total(p) for p in range(g.players)])
        elif job != 1:
            lines = lines_of(b)
        if new:
            notice = ("New best! P%d is #%d" % new[0]).encode()
        if b.damaged:
            ev.begin(b"fault")
            ev.str_(b"what", b"best")
            ev.str_(b"why", b"damaged")
            ev.int_(b"records", b.damaged)
            ev.end()
            notice = b"Best games damaged"
        event(ev, b, game, new)
    except OSError:
        ev.begin(b"fault")
        ev.str_(b"what", b"best")
        ev.str_(b"why", b"io")
        ev.end()
        notice = b"Best games: no save"
        lines = [(b"Best games", b"cannot read")]
    return lines, notice
