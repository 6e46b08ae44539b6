# The game journal on the Pico's flash (littlefs): what it takes to rebuild the game in progress
# after a power cut or a watchdog reset, by playing its entries again through the same rules
# code (apply_outcome / undo). Format, guarantees and limits: docs/persistence.md.
#
# One file per game, FILES[serial % _N_FILES]: a new game reuses the oldest game's file, so at
# most _N_FILES games are kept, each under MAX_FILE bytes. A file is a header record, then one
# record per entry, appended only between shots (app.py calls write() when the board rests):
#
#   record  = type (1)  len (1)  payload (len)  crc (2, little-endian)
#   crc     = CRC-16/CCITT-FALSE over type, len and payload
#   _T_GAME  'G'  "ZNJ1", version, serial (4, little-endian), game, players, o1, o2
#                game: the registry's ID (games/registry.py); players, o1, o2: what its start
#                pages chose (bowling: o1 the shooter end, 0 a, 1 b; trap: o1 the first
#                trapper, o2 coin)
#   _T_OUT   'O'  code: one rules outcome (a shot; Trap Zenn's END_TURN too)
#   _T_UNDO  'U'  -: undo()
#   _T_SET   'S'  code: a manual correction of the last entry: undo(), then apply_outcome(code)
#   _T_END   'E'  -: the players left this game for a new one (it is not restored)
#   _T_PREP  'P'  "ZNJ1", version, serial, nonce: a file prepared for the next game (at boot,
#                after a game), its header (same serial) after it once the game starts (below, at
#                _T_PREP); so one of the _N_FILES names is the next game's where the flash's
#                block device is at hand
#
# Each append is one write and one flush: a littlefs commit, all or nothing. A file written from
# scratch (a new game, or the game written again from the rules' log: rewrite()) is flushed
# once at its end, so a power cut leaves either the old file or the whole new one.
#
# boot() allocates (it reads the files). After it nothing allocates but service():
# file.write(buf, 0, n) and flush() on littlefs allocate nothing (tests/test_journal.py checks
# it under heap_lock), opening a file does, so the app calls service() outside its loop turn
# whenever need_open is set.
from micropython import const
import sys

# (Constants named with a leading underscore are not kept in the module's globals when frozen:
# each public name is a slot of its dict on the heap.)

_N_FILES = const(8)
FILES = ("zj0.zj", "zj1.zj", "zj2.zj", "zj3.zj", "zj4.zj", "zj5.zj", "zj6.zj", "zj7.zj")
FILE_NAMES = (b"zj0.zj", b"zj1.zj", b"zj2.zj", b"zj3.zj", b"zj4.zj", b"zj5.zj", b"zj6.zj", b"zj7.zj")
MAX_FILE = const(8192)      # a game's file; past it the game is written again, compacted
MAGIC = b"ZNJ1"
VERSION = const(1)

_T_GAME = const(0x47)
_T_OUT = const(0x4F)
_T_UNDO = const(0x55)
_T_SET = const(0x53)
_T_END = const(0x45)
_HDR_PAYLOAD = const(13)
_HDR_LEN = const(17)         # the whole header record
# A file prepared for the next game (issue 13: its start programs no erase): at boot and after a
# game, when the flash's block device is at hand, the next serial's file is written through
# littlefs (_prepare) as
#   _T_PREP  'P'  "ZNJ1", version, serial (4, little-endian), nonce
# then erased bytes (0xFF) to _PRE; the game's start then programs its header right after it (one
# page program, in place) and its saves follow as in any file written in place. The header's
# serial is the P record's. The nonce tells copies of an earlier preparation apart (the block is
# found by its first page).
_T_PREP = const(0x50)
_P_PAYLOAD = const(10)
_P_LEN = const(14)           # the whole P record
# After boot the next file is prepared again when a game ends (or is left): service(), a step a
# call, outside the loop turn (_prepare: at most one 4 KB erase a step).
_SEARCH = const(64)          # blocks whose first page one step of the block search compares

# Journal.need_open: what service() is wanted for (0: nothing)
_N_OPEN = const(1)           # the current game into a new file (its start; a full or failed file)
_N_PREP = const(2)           # a step of the next game's file's preparation

# Journal.dev: while the current game is written in place, a tuple (no object of a class of its
# own: its instance and dict would take heap after boot), its fields
_D_BD = const(0)             # the flash's block device
_D_BLK = const(1)            # the game's block in it
_D_NEXT = const(2)           # the next game's file, as below
# else the next game's file alone (small ints: no heap while no game goes on):
_NEXT_NONE = const(-1)       # not prepared
_NEXT_FAILED = const(-2)     # its preparation failed: not tried again before the next game's start
# >= 0: prepared, nonce << 16 | its block (the start checks the block's P record, nonce included);
# a list: its preparation under way, its state (_prepare), its fields
_S_STEP = const(0)          # the step to run next, _PS_* below
_S_SER = const(1)           # the serial prepared for
_S_N = const(2)             # _PS_WRITE: the 256-byte writes done; _PS_SEARCH: the next block
_S_K = const(3)             # the file written (and committed) so many times: 0, 1, 2
_S_FOUND = const(4)         # _PS_SEARCH: the block whose first page is the file's (-1: none yet)
_S_F = const(5)             # the file, open while it is written
_S_PG = const(6)            # 256 B: the file's first page (the P record, erased bytes)
_S_BUF = const(7)           # 256 B: erased bytes written, then a block's first page read
_S_BD = const(8)            # the flash's block device
# its steps, in their order (one a call)
_PS_READ = const(0)         # the file's first record read: this serial's? (_PS_CHECK, else _PS_OPEN)
_PS_CHECK = const(1)        # the whole file read: prepared as it is? (_PS_SEARCH, else _PS_OPEN)
_PS_OPEN = const(2)         # the file opened, its first page written
_PS_WRITE = const(3)        # 256 bytes more (15 steps; one of them erases littlefs's data block)
_PS_FLUSH = const(4)        # the commit
_PS_SEARCH = const(5)       # _SEARCH blocks' first pages compared (found: the result; else
                            # _PS_OPEN again, another nonce, or _NEXT_FAILED)

# the game in the header: a registry ID (games/registry.py), 0 for none
G_NONE = const(0)
_VARIANT = const(4)         # a registry line's field (games/registry.py)

# what boot() found in the newest game's file
S_NONE = const(0)           # no journal (or only empty files)
S_OK = const(1)
S_TORN = const(2)           # its last record was torn (dropped)
S_DAMAGED = const(3)        # a bad record before its end: the entries up to it were played

# faults (Journal.fault; the last one found)
F_NONE = const(0)
F_FOREIGN = const(1)        # a file with a journal's name that is no journal (or a version we do not know)
F_DAMAGED = const(2)        # the newest game's file is damaged: restored up to the damage
F_REFUSED = const(3)        # the rules refused an entry on replay: restored up to it
F_IO = const(4)             # a flash write failed: the game goes on, not saved until a write works
F_FULL = const(5)           # a Trap Zenn game too long to write again: not saved any more
FAULT_NAMES = (b"", b"foreign", b"damaged", b"refused", b"io", b"full")

_PEND = const(64)           # records waiting for the next moment at rest

# A game's file written in place (issue 13). On the chip a littlefs append is one commit into the
# root directory's metadata block, a 256-byte page each, so every 16th save compacts the
# directory: a 4 KB erase (45 ms) and 20 ms of littlefs, 64 - 69 ms in one loop turn. So when the
# flash's block device is at hand (the chip's rp2.Flash, the simulator's RAM one), a game's file
# is written once, _PRE bytes: the header, the rules' log, erased bytes (0xFF) to the end, one
# littlefs data block; its block is found by its first page, and each save then programs the
# page(s) its records fall in (erased bytes programmed stay erased; NOR programming only clears
# bits): no erase, no littlefs, about 1 ms. littlefs reads the file as written (it keeps no
# checksum of a file's data). Full, or anything unexpected: the game again into a new file.
_PRE = const(4096)           # a game's file written in place: one 4 KB flash block
_PAGE = const(256)          # the flash's program page

_MP = sys.implementation.name == "micropython"

# CRC-16/CCITT-FALSE's table, entry i big-endian at bytes 2i, 2i + 1 (tests/test_journal.py
# checks it against the bit-at-a-time CRC): a bytes constant stays in flash when frozen, where
# an array built at import took 528 B of heap (issue 13)
_CRC = (
    b'\x00\x00\x10\x21\x20\x42\x30\x63\x40\x84\x50\xa5\x60\xc6\x70\xe7\x81\x08\x91\x29\xa1\x4a\xb1\x6b\xc1\x8c\xd1\xad\xe1\xce\xf1\xef'
    b'\x12\x31\x02\x10\x32\x73\x22\x52\x52\xb5\x42\x94\x72\xf7\x62\xd6\x93\x39\x83\x18\xb3\x7b\xa3\x5a\xd3\xbd\xc3\x9c\xf3\xff\xe3\xde'
    b'\x24\x62\x34\x43\x04\x20\x14\x01\x64\xe6\x74\xc7\x44\xa4\x54\x85\xa5\x6a\xb5\x4b\x85\x28\x95\x09\xe5\xee\xf5\xcf\xc5\xac\xd5\x8d'
    b'\x36\x53\x26\x72\x16\x11\x06\x30\x76\xd7\x66\xf6\x56\x95\x46\xb4\xb7\x5b\xa7\x7a\x97\x19\x87\x38\xf7\xdf\xe7\xfe\xd7\x9d\xc7\xbc'
    b'\x48\xc4\x58\xe5\x68\x86\x78\xa7\x08\x40\x18\x61\x28\x02\x38\x23\xc9\xcc\xd9\xed\xe9\x8e\xf9\xaf\x89\x48\x99\x69\xa9\x0a\xb9\x2b'
    b'\x5a\xf5\x4a\xd4\x7a\xb7\x6a\x96\x1a\x71\x0a\x50\x3a\x33\x2a\x12\xdb\xfd\xcb\xdc\xfb\xbf\xeb\x9e\x9b\x79\x8b\x58\xbb\x3b\xab\x1a'
    b'\x6c\xa6\x7c\x87\x4c\xe4\x5c\xc5\x2c\x22\x3c\x03\x0c\x60\x1c\x41\xed\xae\xfd\x8f\xcd\xec\xdd\xcd\xad\x2a\xbd\x0b\x8d\x68\x9d\x49'
    b'\x7e\x97\x6e\xb6\x5e\xd5\x4e\xf4\x3e\x13\x2e\x32\x1e\x51\x0e\x70\xff\x9f\xef\xbe\xdf\xdd\xcf\xfc\xbf\x1b\xaf\x3a\x9f\x59\x8f\x78'
    b'\x91\x88\x81\xa9\xb1\xca\xa1\xeb\xd1\x0c\xc1\x2d\xf1\x4e\xe1\x6f\x10\x80\x00\xa1\x30\xc2\x20\xe3\x50\x04\x40\x25\x70\x46\x60\x67'
    b'\x83\xb9\x93\x98\xa3\xfb\xb3\xda\xc3\x3d\xd3\x1c\xe3\x7f\xf3\x5e\x02\xb1\x12\x90\x22\xf3\x32\xd2\x42\x35\x52\x14\x62\x77\x72\x56'
    b'\xb5\xea\xa5\xcb\x95\xa8\x85\x89\xf5\x6e\xe5\x4f\xd5\x2c\xc5\x0d\x34\xe2\x24\xc3\x14\xa0\x04\x81\x74\x66\x64\x47\x54\x24\x44\x05'
    b'\xa7\xdb\xb7\xfa\x87\x99\x97\xb8\xe7\x5f\xf7\x7e\xc7\x1d\xd7\x3c\x26\xd3\x36\xf2\x06\x91\x16\xb0\x66\x57\x76\x76\x46\x15\x56\x34'
    b'\xd9\x4c\xc9\x6d\xf9\x0e\xe9\x2f\x99\xc8\x89\xe9\xb9\x8a\xa9\xab\x58\x44\x48\x65\x78\x06\x68\x27\x18\xc0\x08\xe1\x38\x82\x28\xa3'
    b'\xcb\x7d\xdb\x5c\xeb\x3f\xfb\x1e\x8b\xf9\x9b\xd8\xab\xbb\xbb\x9a\x4a\x75\x5a\x54\x6a\x37\x7a\x16\x0a\xf1\x1a\xd0\x2a\xb3\x3a\x92'
    b'\xfd\x2e\xed\x0f\xdd\x6c\xcd\x4d\xbd\xaa\xad\x8b\x9d\xe8\x8d\xc9\x7c\x26\x6c\x07\x5c\x64\x4c\x45\x3c\xa2\x2c\x83\x1c\xe0\x0c\xc1'
    b'\xef\x1f\xff\x3e\xcf\x5d\xdf\x7c\xaf\x9b\xbf\xba\x8f\xd9\x9f\xf8\x6e\x17\x7e\x36\x4e\x55\x5e\x74\x2e\x93\x3e\xb2\x0e\xd1\x1e\xf0'
)


def crc16(buf, off, n, crc=0xFFFF):
    t = _CRC
    for k in range(off, off + n):
        j = (((crc >> 8) ^ buf[k]) & 0xFF) << 1
        crc = ((crc << 8) & 0xFF00) ^ (t[j] << 8) ^ t[j + 1]
    return crc


def _fwrite(f, buf, n):
    if _MP:
        return f.write(buf, 0, n)
    return f.write(bytes(buf[:n]))      # CPython's files take no offset and length


def record_at(data, i):
    """The record at data[i:]: (type, payload offset, payload length, next offset), or
    (-1, ...) torn (runs past the end) or (-2, ...) bad (wrong CRC)."""
    n = len(data)
    if i + 4 > n:
        return -1, 0, 0, n
    ln = data[i + 1]
    end = i + 2 + ln + 2
    if end > n:
        return -1, 0, 0, n
    c = crc16(data, i, 2 + ln)
    if data[end - 2] != (c & 0xFF) or data[end - 1] != (c >> 8):
        return -2, 0, 0, end
    return data[i], i + 2, ln, end


def header(data):
    """(serial, game, players, o1, o2) of a file's header; None for an empty file, the start of a
    header cut short (a game start cut short), a file prepared for a game not yet started or
    whose header's page program was cut (nothing after it); -1 for anything else (no journal of
    ours)."""
    n = len(data)
    i = 0
    if n and data[0] == _T_PREP:
        t, p, ln, i = record_at(data, 0)
        if t != _T_PREP or ln != _P_PAYLOAD or data[p:p + 4] != MAGIC or data[p + 4] != VERSION:
            return -1
        if erased(data, i):
            return None                 # prepared: no game started in it
        t, q, ln, _ = record_at(data, i)
        if t != _T_GAME or ln != _HDR_PAYLOAD:
            # a header torn in its page program (nothing can follow it) is a start cut short
            return None if erased(data, i + _HDR_LEN) else -1
        if data[q + 5:q + 9] != data[p + 5:p + 9]:
            return -1                   # not the serial it was prepared for
    elif n < _HDR_LEN:
        for i in range(n):
            if data[i] != (_T_GAME if i == 0 else _HDR_PAYLOAD if i == 1 else
                           MAGIC[i - 2] if i < 6 else data[i]):
                return -1
        return None
    t, p, ln, _ = record_at(data, i)
    if t != _T_GAME or ln != _HDR_PAYLOAD or data[p:p + 4] != MAGIC or data[p + 4] != VERSION:
        return -1
    g = data[p + 9]
    from games import registry as R         # (boot only: app.py drops it after boot)
    if R.index(R.games(), g) < 0:
        return -1
    s = data[p + 5] | data[p + 6] << 8 | data[p + 7] << 16 | (data[p + 8] & 0x3F) << 24
    return s, g, data[p + 10], data[p + 11], data[p + 12]


def erased(data, i):
    """Whether data[i:] is all erased flash (0xFF): never written (true past the end). Boot and
    service() only (allocates: compared at C speed, a Python loop over 4 KB took ms)."""
    n = len(data) - i
    return n <= 0 or data[i:] == b"\xff" * n


def entries(data):
    """The entries after the header: (status S_*, bytearray of type, code pairs, bytes kept).
    A record cut short, or one whose CRC fails while it ends the file, is a write torn by a
    power cut (S_TORN, dropped); anything else that is no well-formed record is damage. A file
    written in place (_PRE) ends at its first erased byte where a record would start; there a
    bad record followed only by erased bytes is the last save, torn."""
    out = bytearray()
    i = 0
    if data[0] == _T_PREP:
        _, _, _, i = record_at(data, 0)     # a file prepared ahead: its header after
    _, _, _, i = record_at(data, i)
    n = len(data)
    while i < n:
        t = data[i]
        if t == 0xFF and erased(data, i):
            return S_OK, out, i             # the rest of a file written in place: not yet used
        if t == _T_OUT or t == _T_SET:
            want = 1
        elif t == _T_UNDO or t == _T_END:
            want = 0
        else:
            return S_DAMAGED, out, i
        end = i + 4 + want
        if i + 1 < n and data[i + 1] != want:
            return (S_TORN if end < n and erased(data, end) else S_DAMAGED), out, i
        t, p, ln, nxt = record_at(data, i)
        if t == -1:
            return S_TORN, out, i
        if t == -2:
            return (S_TORN if nxt >= n or erased(data, nxt) else S_DAMAGED), out, i
        out.append(t)
        out.append(data[p] if ln else 0)
        i = nxt
    return S_OK, out, i


def replay(ents, engine):
    """Play the entries through the rules engine (silently). Returns how many were played, the
    game's end record included; fewer than len(ents) // 2 when the rules refused one."""
    ev = engine.ev
    engine.ev = None
    k = 0
    try:
        for k in range(0, len(ents), 2):
            t = ents[k]
            c = ents[k + 1]
            if t == _T_OUT:
                ok = engine.apply_outcome(c)
            elif t == _T_UNDO:
                ok = engine.undo()
            elif t == _T_SET:
                ok = engine.undo() and engine.apply_outcome(c)
            else:
                ok = True               # _T_END
            if not ok:
                return k // 2
        return len(ents) // 2
    finally:
        engine.ev = ev


def start_engine(engine, game, players, o1, o2):
    """Start the game of a header (its registry ID) on its engine, silently. False when the
    rules refuse it."""
    ev = engine.ev
    engine.ev = None
    try:
        from games import registry as R
        games = R.games()
        k = R.index(games, game)
        return k >= 0 and engine.begin(games[k][_VARIANT], players, o1, o2)
    finally:
        engine.ev = ev


class Journal:
    def __init__(self, events=None):
        self.ev = events
        self.rec = bytearray(_PEND)         # records waiting to be written
        self.np = 0
        self.split = -1                     # rec[:split] belongs to the file before a new game
        self.f = None                       # the current game's file, open for appending
        self.size = 0                       # its length (written in place: the records' end)
        # written in place (self.page set): (the flash's block device, the game's block in it,
        # the next game's file) (_D_*); else the next game's file alone (_NEXT_*: a small int, no
        # heap kept after boot while no game goes on). (One attribute: a 20th would grow the
        # object's table by 144 B of heap.)
        self.dev = _NEXT_NONE
        self.page = None                    # written in place: its page the next record goes in
        self.serial = 0                     # the current (or last) game's serial
        self.game = G_NONE                  # the current game's header
        self.players = 0
        self.o1 = 0
        self.o2 = 0
        self.need_open = 0                  # service() wanted: _N_OPEN, _N_PREP
        self.fault = F_NONE
        self.fault_file = -1
        # what boot() found
        self.status = S_NONE
        self.played = 0                     # entries played back
        self.ended = False

    # -- boot (allocates) ----------------------------------------------------------------------
    def boot(self, engines):
        """Find the newest game and play it back on its engine (engines: one per registry
        game, in its order). Returns its registry ID when it is to be continued (neither over
        nor left), else G_NONE. Then the next game's file is prepared (see _T_PREP), unless
        one is already. Never raises."""
        try:
            g = self._boot(engines)
        except Exception:               # a filesystem gone wrong must not stop the scoreboard
            self.f = None
            self._fault(F_IO, -1)
            self.dev = _NEXT_FAILED     # nothing prepared (the newest game is not known), nor
            return G_NONE               # after a game's end before the next game's start
        if g == G_NONE:
            self.game = G_NONE          # no game goes on (the journal still has the newest)
        bd = _raw_device()
        if bd is None:
            return g                    # no block device: nothing is written in place
        # (no game's file is written over: boot found none newer than serial s - 1)
        w = _prepare(bd, (self.serial + 1) & 0x3FFFFFFF)
        r = None
        while r is None:
            r = _prepare(w, 0)          # all its steps: boot is no loop turn
        d = self.dev
        self.dev = (d[_D_BD], d[_D_BLK], r) if self.page is not None else r
        return g

    def _boot(self, engines):
        best = -1
        bh = None
        for i in range(_N_FILES):
            data = _read(FILES[i], _P_LEN + _HDR_LEN + 1)
            if data is None:
                continue
            h = header(data)
            if h is None:
                continue                # empty or torn at its start: a game start cut short
            if h == -1:
                self._fault(F_FOREIGN, i)
                continue
            if best < 0 or h[0] > bh[0]:
                best = i
                bh = h
        if best < 0:
            return G_NONE
        self.serial, self.game, self.players, self.o1, self.o2 = bh
        data = _read(FILES[best], MAX_FILE + 1)
        if data is None or len(data) > MAX_FILE:
            self._fault(F_FOREIGN, best)
            return G_NONE
        st, ents, keep = entries(data)
        self.status = st
        if st == S_DAMAGED:
            self._fault(F_DAMAGED, best)
        from games import registry as R
        engine = engines[R.index(R.games(), self.game)]      # (header() knows the game)
        if not start_engine(engine, self.game, self.players, self.o1, self.o2):
            self._fault(F_FOREIGN, best)
            return G_NONE
        n = replay(ents, engine)
        self.played = n
        if n < len(ents) // 2:
            self._fault(F_REFUSED, best)
        self.ended = False
        for k in range(0, 2 * n, 2):
            if ents[k] == _T_END:
                self.ended = True
        if self.ended or engine.over:
            return G_NONE               # kept in its file, not continued: the menu shows
        bd = _raw_device()
        if st == S_OK and n == len(ents) // 2 and self._in_place(data, keep, bd):
            pass                        # written in place from here on
        elif st == S_OK and n == len(ents) // 2 and bd is None and keep == len(data):
            self.f = open(FILES[best], "ab")
            self.size = keep
        else:
            # the good part into a new file, nothing after garbage (or a file of the other
            # kind: appended to / written in place)
            self.rewrite(engine)
        return self.game

    def _in_place(self, data, keep, bd):
        """The file `data` (records up to `keep`, erased after) written in place from here on
        through the block device bd: its block found. Allocates (boot, service)."""
        if bd is None or len(data) != _PRE or keep >= _PRE or not erased(data, keep):
            return False
        first = data[0:_PAGE]
        buf = bytearray(_PAGE)
        found = -1
        for b in range(bd.ioctl(4, 0)):
            bd.readblocks(b, buf, 0)
            if buf == first:
                if found >= 0:
                    return False        # two blocks alike (a copy left by a cut): not this way
                found = b
        if found < 0:
            return False
        k = keep - keep % _PAGE
        self.page = bytearray(data[k:k + _PAGE])
        self.dev = (bd, found, _NEXT_NONE)
        self.size = keep
        return True

    # -- entries (no allocation) --------------------------------------------------------------
    def new_game(self, game, players, o1, o2):
        """A game started (engine.start() done): its file is opened by service()."""
        self.split = self.np
        self.game = game
        self.players = players
        self.o1 = o1
        self.o2 = o2
        self.need_open = _N_OPEN

    def out(self, code):
        self._put(_T_OUT, code, 1)

    def undo(self):
        self._put(_T_UNDO, 0, 0)

    def set(self, code):
        self._put(_T_SET, code, 1)

    def end(self):
        self._put(_T_END, 0, 0)
        self.game = G_NONE
        if not self.need_open:
            self.need_open = _N_PREP    # the next game's file, prepared in the turns after

    def _put(self, t, code, ln):
        if self.game == G_NONE and t != _T_END:
            return
        i = self.np
        if i + 4 + ln > _PEND:
            self.np = self.split if self.split >= 0 else 0
            self.need_open = _N_OPEN    # no room: write the game again from the rules' log
            return
        r = self.rec
        r[i] = t
        r[i + 1] = ln
        if ln:
            r[i + 2] = code
        c = crc16(r, i, 2 + ln)
        r[i + 2 + ln] = c & 0xFF
        r[i + 3 + ln] = c >> 8
        self.np = i + 4 + ln

    def pending(self):
        return self.np > 0 and self.need_open != _N_OPEN

    def write(self):
        """Append what waits (call it between shots, the board at rest). No allocation."""
        n = self.np
        if n == 0 or self.need_open == _N_OPEN:
            return
        f = self.f
        raw = self.page is not None     # written in place
        if raw:
            f = self.dev
            if self.size + n > _PRE:
                self.np = 0
                self.need_open = _N_OPEN   # full: the game again from the rules' log, a new file
                return
        if f is None:
            self.np = 0                 # no file: a fault says so already
            if self.fault == F_IO:
                self.need_open = _N_OPEN   # try a new file again, the game from the rules' log
            return
        if self.size + n > MAX_FILE:
            self.np = 0
            self.need_open = _N_OPEN       # compact: the game again from the rules' log
            return
        self.np = 0
        try:
            if raw:
                if not self._program(n):
                    f = None
            else:
                _fwrite(f, self.rec, n)
                f.flush()
        except OSError:
            f = None
        if f is None:
            self._close()               # this file is given up; the game goes into a new one
            self.need_open = _N_OPEN
            self._fault(F_IO, -1)
            return
        self.size += n
        if self.fault == F_IO:
            self.fault = F_NONE

    def _program(self, n):
        """The n bytes waiting, programmed into the file's block after its records (self.size:
        the caller moves it on): each page they fall in, once (the page's earlier records
        programmed again as they are). No allocation (an OSError would: False when the flash
        reports an error)."""
        r = self.rec
        pg = self.page
        d = self.dev
        bd = d[_D_BD]
        blk = d[_D_BLK]
        off = self.size
        k = 0
        while k < n:
            p = off % _PAGE
            m = n - k
            if m > _PAGE - p:
                m = _PAGE - p
            for i in range(m):
                pg[p + i] = r[k + i]
            if bd.writeblocks(blk, pg, off - p):
                return False            # the flash's error (the chip's returns None)
            off += m
            k += m
            if p + m == _PAGE:
                for i in range(_PAGE):
                    pg[i] = 0xFF        # the next page: erased
        return True

    # -- service (outside the loop turn: allocates) ----------------------------------------------
    def service(self, engine):
        """Open the current game's new file and write the game into it from `engine` (the rules
        engine playing it): a new game's header, or the whole game again after a failed write,
        a full file or a damaged one. Else, once a game has ended (`engine` over, or left) and
        the next game's file is not prepared: its preparation begun (no flash work), then one step
        of it a call (need_open _N_PREP while more are to come: the app calls again after a light
        loop turn at rest)."""
        if self.need_open != _N_OPEN:
            self.need_open = 0
            if self.game != G_NONE and engine is not None and not engine.over:
                # a game goes on (one over, reopened by an undo): no step while it is played, so
                # that the erase's 46 ms never fall while a chip may be flicked; it goes on once
                # that game is over or left again (the app calls then), or the next start finishes it
                return
            d = self.dev
            w = d[_D_NEXT] if type(d) is tuple else d
            if type(w) is int:
                if w != _NEXT_NONE:
                    return              # prepared, or failed
                bd = _raw_device()
                # (its first step at the next call: the app makes that one follow a light turn)
                r = _NEXT_FAILED if bd is None else _prepare(bd, (self.serial + 1) & 0x3FFFFFFF)
            else:
                r = _prepare(w, 0)      # (w: its state here)
                if r is None:
                    self.need_open = _N_PREP    # under way (its state kept: nothing allocated)
                    return
            if type(r) is not int:
                self.need_open = _N_PREP
            self.dev = (d[_D_BD], d[_D_BLK], r) if type(d) is tuple else r
            return
        self.need_open = 0
        if self.split > 0 and (self.f is not None or self.page is not None):
            # what the game before still had waiting (its end record) goes to its own file
            try:
                if self.page is not None:
                    if self.size + self.split <= _PRE and self._program(self.split):
                        self.size += self.split
                else:
                    _fwrite(self.f, self.rec, self.split)
                    self.f.flush()
            except OSError:
                pass                    # that game is left: nothing of the current one is lost
        self.split = -1
        self.np = 0                     # the rest is in the engine's log
        if self.game == G_NONE:
            self._close()
            return
        self.rewrite(engine)

    def rewrite(self, engine):
        """The current game from the engine's log into the next file. A game's start (an empty
        log) with the next file prepared (at boot, after a game): its header programmed after
        the P record, one page, no erase, no littlefs. Else the file written through littlefs, flushed once at the
        end: written in place (_PRE bytes, erased after the records) when the flash's block
        device is at hand and its block is found, else to be appended to."""
        self._close()
        if getattr(engine, "folded", 0):
            self._fault(F_FULL, -1)     # Trap Zenn: the oldest entries are no longer in the log
            return False
        d = self.dev
        p = d[_D_NEXT] if type(d) is tuple else d
        while type(p) is not int:
            r = _prepare(p, 0)          # under way: finished first (its name is the next file)
            if r is not None:
                p = r
        self.dev = _NEXT_NONE           # for this start only, whatever comes of it (a failed
        # preparation is tried again after this game)
        if p >= 0:
            bd = _raw_device()
            if engine.nlog == 0 and bd is not None and self._rewrite(engine, (bd, p)):
                return True
            # (a log to write, not one page's program all or nothing: through littlefs, which
            # writes the prepared file's name over)
        bd = _raw_device()
        if bd is not None and self._rewrite(engine, True):
            f = self.f
            self.f = None
            try:
                f.close()
                data = _read(FILES[self.serial % _N_FILES], _PRE + 1)
                if data is not None and self._in_place(data, self.size, bd):
                    return True
            except OSError:
                pass
            # not found (or two alike): the game again, into a file appended to
        return self._rewrite(engine, False)

    def _rewrite(self, engine, pad):
        # pad: True written in place (erased to _PRE), False appended to, or (the block device,
        # the prepared file's block): the header programmed after its P record
        s = (self.serial + 1) & 0x3FFFFFFF
        name = FILES[s % _N_FILES]
        f = None
        try:
            h = bytearray(_HDR_LEN)
            h[0] = _T_GAME
            h[1] = _HDR_PAYLOAD
            h[2:6] = MAGIC
            h[6] = VERSION
            h[7] = s & 0xFF
            h[8] = (s >> 8) & 0xFF
            h[9] = (s >> 16) & 0xFF
            h[10] = (s >> 24) & 0xFF
            h[11] = self.game
            h[12] = self.players
            h[13] = self.o1
            h[14] = self.o2
            c = crc16(h, 0, 2 + _HDR_PAYLOAD)
            h[15] = c & 0xFF
            h[16] = c >> 8
            if pad is not True and pad is not False:
                bd, p = pad
                blk = p & 0xFFFF
                pg = bytearray(_PAGE)
                bd.readblocks(blk, pg, 0)
                # still the file prepared for this game: its P record whole (its CRC), this
                # serial, the nonce it was prepared with, erased after it
                t, q, ln, _ = record_at(pg, 0)
                if t != _T_PREP or ln != _P_PAYLOAD or pg[2:6] != MAGIC or pg[6] != VERSION or \
                        pg[7:11] != h[7:11] or pg[11] != p >> 16 or not erased(pg, _P_LEN):
                    self._fault(F_FOREIGN, s % _N_FILES)    # not what was prepared: said,
                    return False        # and the game's file written through littlefs
                pg[_P_LEN:_P_LEN + _HDR_LEN] = h
                if bd.writeblocks(blk, pg, 0):
                    raise OSError(5)    # the flash's error (the chip's returns None)
                self.serial = s
                self.page = pg
                self.dev = (bd, blk, _NEXT_NONE)
                self.size = _P_LEN + _HDR_LEN
                if self.fault == F_IO:
                    self.fault = F_NONE
                return True
            f = open(name, "wb")
            _fwrite(f, h, _HDR_LEN)
            size = _HDR_LEN
            for k in range(engine.nlog):
                self.np = 0
                self._put(_T_OUT, engine.log[k], 1)
                _fwrite(f, self.rec, self.np)
                size += self.np
            self.np = 0
            if pad:
                if size >= _PRE:
                    raise OSError(28)   # (cannot be: a game's log is at most 512 entries)
                ff = bytearray(b"\xff" * _PAGE)
                k = size
                while k < _PRE:
                    m = _PRE - k if _PRE - k < _PAGE else _PAGE
                    _fwrite(f, ff, m)
                    k += m
            f.flush()
        except OSError:
            self.f = f
            self._close()
            self._fault(F_IO, -1)
            return False
        self.serial = s
        self.f = f
        self.size = size
        if self.fault == F_IO:
            self.fault = F_NONE
        return True

    def _close(self):
        # closed here, not by the garbage collector: a finaliser's error would be printed on
        # the console, which carries the event lines. (self.dev stays: the prepared file's block;
        # its current game's block means nothing once self.page is None.)
        self.page = None
        f = self.f
        self.f = None
        if f is not None:
            try:
                f.close()
            except OSError:
                pass

    # -- faults ---------------------------------------------------------------------------------
    def _fault(self, code, i):
        self.fault = code
        self.fault_file = i
        ev = self.ev
        if ev is None:
            return
        ev.begin(b"fault")
        ev.str_(b"what", b"journal")
        ev.str_(b"why", FAULT_NAMES[code])
        if i >= 0:
            ev.str_(b"file", FILE_NAMES[i])
        ev.end()


def _prepare(st, s):
    """The preparation of the file of serial s, FILES[s % _N_FILES], for its game (_T_PREP)
    through littlefs, its block found on the flash's block device: begun with st the block device
    (its state returned, _S_*: no flash work), then a step a call with st that state (s unused):
    None while more are to come, then its result: nonce << 16 | the block, or _NEXT_FAILED (never
    raises but for a power cut). boot() runs them all; service() one a call, outside the loop
    turn. A step (_PS_*) is the file's first record read, or the whole file read and checked
    (when that record is this serial's), or its opening and a write of 256 bytes (littlefs keeps
    the first 512 in its directory entry; the write past them moves the file to a data block:
    its 4 KB erase, 45 ms on the chip; every 1 KB after that a program), or the commit (flush),
    or _SEARCH blocks' first pages compared. The file is the P record, then erased bytes to
    _PRE; found if exactly one block's first page is its own (the nonce tells an earlier
    attempt's copy apart), else written again with the next nonce, twice at most. A power cut
    before the commit leaves littlefs's old file (the oldest game's, kept no longer than this);
    after it, the file prepared and the block search to do again. Allocates (the state, a file
    opened or read). (One function, no class: each costs heap at import.)"""
    if type(st) is not list:
        ff = b"\xff" * _PAGE
        pg = bytearray(ff)              # the file's first page: its P record (nonce 0), erased bytes
        pg[0] = _T_PREP
        pg[1] = _P_PAYLOAD
        pg[2:6] = MAGIC
        pg[6] = VERSION
        for i in range(4):
            pg[7 + i] = (s >> (8 * i)) & 0xFF
        pg[11] = 0
        return [_PS_READ, s, 0, 0, -1, None, pg, bytearray(ff), st]
    pg = st[_S_PG]
    step = st[_S_STEP]
    try:
        name = FILES[st[_S_SER] % _N_FILES]
        if step == _PS_CHECK:
            data = _read(name, _PRE + 1)    # the whole file: the P record, then erased bytes?
            if data is not None and len(data) == _PRE and data[:_PAGE] == pg and erased(data, _PAGE):
                st[_S_STEP] = step = _PS_SEARCH     # its block: the search's first blocks now
            data = None
        if step == _PS_OPEN:
            buf = st[_S_BUF]            # (erased bytes: the rest of the file)
            f = open(name, "wb")
            st[_S_F] = f
            _fwrite(f, pg, _P_LEN)
            _fwrite(f, buf, _PAGE - _P_LEN)
            st[_S_N] = 0
            st[_S_STEP] = _PS_WRITE
            return None
        if step == _PS_WRITE:
            _fwrite(st[_S_F], st[_S_BUF], _PAGE)
            st[_S_N] += 1
            if st[_S_N] == _PRE // _PAGE - 1:
                st[_S_STEP] = _PS_FLUSH
            return None
        if step == _PS_FLUSH:
            f = st[_S_F]
            f.flush()
            st[_S_F] = None
            f.close()
            st[_S_K] += 1
            st[_S_N] = 0
            st[_S_FOUND] = -1
            st[_S_STEP] = _PS_SEARCH
            return None
        if step == _PS_SEARCH:
            bd = st[_S_BD]
            buf = st[_S_BUF]
            b0 = st[_S_N]
            found = st[_S_FOUND]
            blk = b0
            n = bd.ioctl(4, 0)
            while blk < n:
                if blk % _SEARCH == _SEARCH - 1 and blk != b0:
                    st[_S_N] = blk      # the next step's first block
                    st[_S_FOUND] = found
                    return None
                bd.readblocks(blk, buf, 0)
                if buf == pg:
                    if found >= 0:
                        found = -1      # two alike (a copy left by a cut): again
                        break
                    found = blk
                blk += 1
            if found >= 0:
                return pg[11] << 16 | found
            if st[_S_K] == 2:
                return _NEXT_FAILED     # not found: the next game's start writes its file
        if step == _PS_READ:
            data = _read(name, _P_LEN)  # its first record: prepared for this serial already?
            if data is not None and len(data) >= 11 and data[:11] == pg[:11]:
                pg[11] = data[11]       # (its nonce: checked next)
                st[_S_STEP] = _PS_CHECK
            else:
                st[_S_STEP] = _PS_OPEN
        else:
            # not this file (_PS_CHECK), or its block not found (_PS_SEARCH): written again with
            # the next nonce
            pg[11] = (pg[11] + 1) & 0xFF
            buf = st[_S_BUF]
            for i in range(_PAGE):
                buf[i] = 0xFF           # (a block's page read into it)
            st[_S_STEP] = _PS_OPEN
        c = crc16(pg, 0, 2 + _P_PAYLOAD)    # the P record's CRC
        pg[12] = c & 0xFF
        pg[13] = c >> 8
        return None
    except Exception:
        f = st[_S_F]
        if f is not None:
            st[_S_F] = None
            try:
                f.close()               # (not left to the garbage collector: see _close)
            except OSError:
                pass
        return _NEXT_FAILED             # not prepared: the next game's start writes its file


def _raw_device():
    """The flash's block device under the filesystem, to program a file in place: the chip's
    (rp2.Flash over the whole filesystem, as _boot.py mounts it), the simulator's (registered
    by boardsim/target/flash.py), else None (CPython, or another board: appended to)."""
    try:
        # the C module (rp2.Flash is this; `import rp2` costs 1.3 KB of heap; the stubs know rp2 only)
        from _rp2 import Flash  # type: ignore[import-not-found]
        return Flash()
    except ImportError:
        pass
    return sys.modules.get("zenn_rawflash")     # (flash.py's RAW_MODULE)


def _read(name, limit):
    try:
        with open(name, "rb") as f:
            return f.read(limit)
    except OSError:
        return None
