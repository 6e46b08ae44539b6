"""The game journal (firmware/storage/journal.py, docs/persistence.md) on its own, under the MicroPython
unix port (on a real littlefs, boardsim/target/flash.py) and CPython (a directory), through one
long-lived driver per runtime (tests/support/journal_driver.py). Entries are recorded and written
with the heap locked, as app.py does between shots.

The record layout is written out here from the documentation, not imported."""
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from records import crc16, journal_record as record
from runtimes import RUNTIMES, Driver, assert_heap_lock_is_real, mpy_cross_armv6m

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "support" / "journal_driver.py"

# docs/persistence.md
FILES = [f"zj{i}.zj" for i in range(8)]
HEADER = 17                 # T_GAME record: 2 + 13 + 2
SIZE = {"out": 5, "set": 5, "undo": 4, "end": 4}
MAX_FILE = 8192
G_BOWLING, G_TRAP1, G_TRAP2 = 1, 2, 3
S_OK, S_TORN, S_DAMAGED = 1, 2, 3
F_NONE, F_FOREIGN, F_DAMAGED, F_REFUSED, F_IO, F_FULL = range(6)

# bowling outcomes (docs/rules.md): kind << 5 | zone
B_E2, B_Z3, B_CUP, OFF = 14, 13, 17, 19
REST_E2 = B_E2
ZENN = 1 << 5 | B_CUP
SINK = 3 << 5 | B_CUP
OFF_BOARD = 5 << 5 | OFF
REST_Z3 = B_Z3
END_TURN = 128


def test_the_journal_crc_table_gives_the_bitwise_crc():
    """journal.crc16 reads a constant table (bytes, big-endian pairs): every byte value, from
    several running CRCs, and buffers at offsets, against the bit-at-a-time CRC above."""
    import importlib.util
    import sys
    sys.path.insert(0, str(ROOT / "boardsim" / "target"))
    sys.path.insert(0, str(ROOT / "firmware"))
    try:
        spec = importlib.util.spec_from_file_location("journal_crc", ROOT / "firmware" / "storage" / "journal.py")
        jn = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(jn)
    finally:
        del sys.path[:2]
    data = bytes(range(256))
    assert jn.crc16(data, 0, 256) == crc16(data)
    rnd = random.Random(13)
    for _ in range(200):
        buf = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
        off = rnd.randrange(len(buf))
        n = rnd.randrange(len(buf) - off + 1)
        assert jn.crc16(buf, off, n) == crc16(buf[off:off + n])
    assert crc16(b"123456789") == 0x29B1      # CCITT-FALSE's check value: the reference is right


class JournalDriver(Driver):
    """tests/support/journal_driver.py (tests/support/runtimes.py's Driver), answering ops."""

    def steps(self, ops):
        return self.run(ops)["steps"]


_runtimes = {}


@pytest.fixture(scope="module", params=RUNTIMES)
def rt(request):
    if request.param not in _runtimes:
        _runtimes[request.param] = JournalDriver(request.param, str(DRIVER), heapsize="4M",
                                                 dirs=("firmware", "tests/support", "boardsim/target"))
    return _runtimes[request.param]


def new(game=G_BOWLING, players=1, o1=0, o2=0):
    return {"op": "new", "game": game, "players": players, "o1": o1, "o2": o2}


def out(code):
    return {"op": "out", "code": code}


UNDO = {"op": "undo"}
END = {"op": "end"}
BOOT = {"op": "boot"}
WIPE = {"op": "wipe"}
FILES_OP = {"op": "files"}


def correct(pins):
    return {"op": "set", "pins": pins}


def played(ops, steps):
    """(end offset in the game's file, state after it) of each record written."""
    off = HEADER
    marks = []
    for op, s in zip(ops, steps):
        k = op["op"]
        if k == "new":
            off = HEADER
            marks = [(off, s["st"])]
        elif k in ("out", "undo", "end") and s["r"] or k == "set" and s["r"] >= 0:
            off += SIZE[k]
            marks.append((off, s["st"]))
    return marks


def current_file(rt):
    files = rt.steps([FILES_OP])[0]["r"]
    return files


# ---------------------------------------------------------------------------------------------
# the harness

def test_heap_lock_is_real_under_micropython(rt):
    assert_heap_lock_is_real(rt)


@pytest.mark.parametrize("path", ["storage/journal.py"])
def test_journal_compiles_for_the_rp2040(path, tmp_path):
    r = mpy_cross_armv6m(path, tmp_path)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------------------------
# the format

def test_record_layout_header_and_entries_as_documented(rt):
    steps = rt.steps([WIPE, new(G_BOWLING, 2, 1), out(REST_E2), UNDO, out(ZENN), correct(9), END,
                      {"op": "read", "name": "zj1.zj"}])
    data = bytes.fromhex(steps[-1]["r"])
    serial = 1                                  # the first game on an empty flash
    hdr = record(0x47, b"ZNJ1" + bytes([1]) + serial.to_bytes(4, "little") + bytes([G_BOWLING, 2, 1, 0]))
    assert data[:HEADER] == hdr
    want = hdr + record(0x4F, bytes([REST_E2])) + record(0x55) + record(0x4F, bytes([ZENN])) \
        + record(0x53, bytes([7 << 5 | 9])) + record(0x45)
    assert data == want


def test_entries_are_written_without_allocating_and_a_boot_restores_them(rt):
    ops = [WIPE, new(G_BOWLING, 3, 0)]
    codes = [REST_E2, ZENN, ZENN, SINK, REST_Z3, OFF_BOARD, OFF_BOARD, ZENN]
    for c in codes:
        ops += [out(c)]
    ops += [UNDO, UNDO, out(ZENN), correct(4), UNDO, correct(10), out(REST_E2)]
    steps = rt.steps(ops)
    want = steps[-1]["st"]
    boot = rt.steps([BOOT])[0]
    assert boot["r"]["g"] == G_BOWLING and boot["r"]["status"] == S_OK and boot["r"]["open"]
    assert boot["st"] == want
    assert boot["r"]["played"] == len(played(ops, steps)) - 1      # every record
    # play goes on into the same file, and a second boot sees it all
    steps = rt.steps([out(ZENN), BOOT])
    assert steps[-1]["st"] == steps[0]["st"] and steps[-1]["r"]["status"] == S_OK


def test_trap_games_end_turn_and_undo_are_restored(rt):
    ops = [WIPE, new(G_TRAP2, 2, 2, 1), out(1 << 4 | 2), out(END_TURN), out(64 | 0),
           out(2 << 4), out(3 << 4), UNDO, out(1 << 4 | 1), out(END_TURN)]
    steps = rt.steps(ops)
    boot = rt.steps([BOOT])[0]
    assert boot["r"]["g"] == G_TRAP2 and boot["st"] == steps[-1]["st"]
    assert boot["st"].startswith("t221:")


def test_a_game_over_or_left_is_not_restored(rt):
    ops = [WIPE, new()] + [out(ZENN)] * 12
    steps = rt.steps(ops)
    assert ":over:" in steps[-1]["st"]
    boot = rt.steps([BOOT])[0]
    assert boot["r"]["g"] == 0 and boot["r"]["status"] == S_OK
    steps = rt.steps([WIPE, new(), out(ZENN), END, BOOT])
    assert steps[-1]["r"]["g"] == 0 and steps[-1]["r"]["ended"]


# ---------------------------------------------------------------------------------------------
# power cuts, damage, foreign files

def game_ops(rng, n):
    """A bowling game of n entries with undos and corrections mixed in."""
    ops = [WIPE, new(G_BOWLING, rng.randint(1, 3), rng.randint(0, 1))]
    for _ in range(n):
        k = rng.random()
        if k < 0.15:
            ops.append(UNDO)
        elif k < 0.25:
            ops.append(correct(rng.randint(0, 10)))
        else:
            ops.append(out(rng.choice([REST_E2, REST_Z3, ZENN, SINK, OFF_BOARD, 2 << 5 | B_CUP])))
    return ops


def check_every_cut(rt, ops):
    steps = rt.steps(ops)
    marks = played(ops, steps)
    name = [n for n, size in current_file(rt).items()][0]
    data = bytes.fromhex(rt.steps([{"op": "read", "name": name}])[0]["r"])
    assert len(data) == marks[-1][0]
    hx = data.hex()
    for n in range(len(data) + 1):
        res = rt.steps([{"op": "put", "name": name, "hex": hx[:2 * n], "only": True}, BOOT])[-1]
        whole = [st for off, st in marks if off <= n]
        want = whole[-1] if whole else "none"
        got = res["st"] if res["r"]["g"] else "none"
        if ":over:" in want:
            want = "none"
        assert got == want, (n, got, want)
        assert res["fault"] == F_NONE
        torn = n not in [off for off, _ in marks]
        assert res["r"]["status"] == (0 if n < HEADER else S_TORN if torn else S_OK), n
        if torn and res["r"]["g"]:
            # the good part was written again into a new file: a second boot finds it clean
            again = rt.steps([BOOT])[0]
            assert again["st"] == want and again["r"]["status"] == S_OK


def test_a_cut_at_every_byte_restores_the_records_written_whole(rt):
    check_every_cut(rt, game_ops(random.Random(7), 14))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_property_random_games_cut_anywhere(rt, seed, n):
    check_every_cut(rt, game_ops(random.Random(seed), n))


def test_a_damaged_byte_anywhere_is_caught_and_never_crashes_boot(rt):
    ops = game_ops(random.Random(11), 10)
    steps = rt.steps(ops)
    marks = played(ops, steps)
    name = list(current_file(rt))[0]
    data = bytes.fromhex(rt.steps([{"op": "read", "name": name}])[0]["r"])
    states = {st for _, st in marks} | {"none"}
    for i in range(len(data)):
        for x in (0x01, 0x80):
            d = bytearray(data)
            d[i] ^= x
            res = rt.steps([{"op": "put", "name": name, "hex": d.hex(), "only": True}, BOOT])[-1]
            got = res["st"] if res["r"]["g"] else "none"
            assert got in states, (i, got)
            if i < HEADER:
                assert res["fault"] == F_FOREIGN and not res["r"]["g"], i
                assert any('"why":"foreign"' in e and name in e for e in res["ev"])
            else:
                before = [st for off, st in marks if off <= i]
                assert got == before[-1], (i, got)
                # the last record's payload or CRC: a torn write (dropped); its type or
                # length, or any byte of an earlier record: damage
                last = i >= marks[-2][0] + 2 if len(marks) > 1 else True
                if last:
                    assert res["r"]["status"] == S_TORN and res["fault"] == F_NONE
                else:
                    assert res["r"]["status"] == S_DAMAGED and res["fault"] == F_DAMAGED
                    assert any('"why":"damaged"' in e for e in res["ev"])


def test_foreign_files_with_a_journals_name_are_reported_and_left_alone(rt):
    junk = [b"hello, this is not a journal\n", bytes(range(256)), b"\x47\x0d" + b"ZNJ9" + bytes(11),
            record(0x47, b"ZNJ1" + bytes([2]) + bytes(8)),               # a version we do not know
            record(0x47, b"ZNJ1" + bytes([1, 5, 0, 0, 0, 9, 1, 0, 0])),  # an unknown game
            record(0x47, b"ZNJ1" + bytes([1, 5, 0, 0, 0, 1, 7, 0, 0]))]  # 7 players: refused
    ops = [WIPE]
    for i, j in enumerate(junk):
        ops.append({"op": "put", "name": FILES[i], "hex": j.hex()})
    ops.append(BOOT)
    res = rt.steps(ops)[-1]
    assert res["r"]["g"] == 0
    foreign = [json.loads(e) for e in res["ev"] if '"why":"foreign"' in e]
    assert sorted(e["file"] for e in foreign) == FILES[:len(junk)]
    assert res["fault"] == F_FOREIGN
    # a new game goes on in the next file; the journal keeps working
    steps = rt.steps([new(), out(ZENN), BOOT])
    assert steps[-1]["r"]["g"] == G_BOWLING and steps[-1]["st"] == steps[1]["st"]


def test_an_entry_the_rules_refuse_stops_the_replay_there(rt):
    good = record(0x47, b"ZNJ1" + bytes([1, 1, 0, 0, 0, G_BOWLING, 1, 0, 0]))
    data = good + record(0x4F, bytes([ZENN])) + record(0x4F, bytes([255])) + record(0x4F, bytes([ZENN]))
    res = rt.steps([WIPE, {"op": "put", "name": "zj1.zj", "hex": data.hex()}, BOOT])[-1]
    assert res["r"]["g"] == G_BOWLING and res["r"]["played"] == 1
    assert res["fault"] == F_REFUSED and res["st"] == "b10:" + bytes([ZENN]).hex()
    again = rt.steps([BOOT])[0]
    assert again["st"] == res["st"] and again["fault"] == F_NONE    # written again, clean


# ---------------------------------------------------------------------------------------------
# rotation, compaction, flash errors

def test_eight_games_are_kept_and_the_oldest_file_is_reused(rt):
    ops = [WIPE]
    for g in range(11):
        ops += [new(G_BOWLING, 1 + g % 6), out(REST_E2), out(ZENN), END]
    ops += [new(G_TRAP1, 2, 1, 0), out(1 << 4)]
    steps = rt.steps(ops + [FILES_OP, BOOT])
    files = steps[-2]["r"]
    assert sorted(files) == FILES and all(s <= MAX_FILE for s in files.values())
    assert steps[-1]["r"]["g"] == G_TRAP1 and steps[-1]["r"]["serial"] == 12
    assert steps[-1]["st"] == steps[-3]["st"]


def test_a_full_file_is_written_again_compacted(rt):
    ops = [WIPE, new(), out(REST_E2)]
    for _ in range(1000):                    # 1000 undos and shots: 9000 bytes of records
        ops += [UNDO, out(REST_Z3)]
    steps = rt.steps(ops)
    assert any(s["need"] for s in steps)
    steps = rt.steps([{"op": "service"}, FILES_OP, BOOT])
    assert max(steps[1]["r"].values()) <= MAX_FILE
    assert steps[-1]["st"] == "b10:" + bytes([REST_Z3]).hex()


def test_a_failed_write_loses_nothing(rt):
    steps = rt.steps([WIPE, new(), out(ZENN), {"op": "break"}, out(REST_E2)])
    assert steps[-1]["fault"] == F_IO and steps[-1]["need"]
    assert any('"why":"io"' in e for e in steps[-1]["ev"])
    want = steps[-1]["st"]
    steps = rt.steps([{"op": "service"}, out(SINK), BOOT])
    assert steps[0]["fault"] == F_NONE
    assert steps[-1]["st"] == steps[1]["st"] and want in steps[1]["st"][:len(want)]


def test_a_flash_that_fails_for_a_while(rt):
    if rt.name != "micropython":
        pytest.skip("the flash's failures are littlefs's (MicroPython)")
    steps = rt.steps([WIPE, new(), out(ZENN), {"op": "fail", "after": 0}, out(REST_E2),
                      {"op": "service"}, out(SINK), {"op": "service"}])
    assert [s["fault"] for s in steps[-4:]] == [F_IO] * 4
    steps = rt.steps([{"op": "fail", "after": -1}, out(ZENN), {"op": "service"}, BOOT])
    assert steps[2]["fault"] == F_NONE
    assert steps[-1]["st"] == steps[1]["st"] and steps[-1]["r"]["status"] == S_OK


# ---------------------------------------------------------------------------------------------
# a game's file written in place (issue 13): the flash's block device at hand, as on the chip

RAW_ON, RAW_OFF = {"op": "raw", "on": True}, {"op": "raw", "on": False}
PRE, PAGE = 4096, 256


def in_place_game():
    """A bowling game's ops whose records run over two page boundaries: shots and undos."""
    ops = [new(), out(REST_E2), correct(7)]
    for _ in range(60):                      # 60 undos and shots: 540 bytes of records
        ops += [UNDO, out(REST_Z3)]
    return ops + [out(ZENN)]


def _raw_only(rt):
    if rt.name != "micropython":
        pytest.skip("the block device is the simulator's littlefs's (MicroPython)")


def test_a_game_written_in_place_is_one_page_program_a_save(rt):
    """Each save programs the page(s) its record falls in: no erase, no littlefs commit (on
    the chip a littlefs append is a commit into the directory's 4 KB block, compacted with an
    erase every 16 saves: 64 - 69 ms). The file is the documented records, then erased bytes
    to 4 KB; a boot finds it and goes on writing in place."""
    _raw_only(rt)
    try:
        ops = in_place_game()
        steps = rt.steps([RAW_ON, WIPE] + ops[:1] + [{"op": "counts"}])
        assert steps[-2]["blk"] >= 0                       # the new game's file: in place
        per_save = []
        for op in ops[1:]:
            s = rt.steps([op, {"op": "counts"}])
            assert s[0]["r"] and s[0]["fault"] == F_NONE
            per_save.append(s[1]["r"])
        for progs, erases, nbytes, _ in per_save:
            assert erases == 0 and 1 <= progs <= 2 and nbytes == progs * PAGE
        assert sum(p for p, _, _, _ in per_save) > len(per_save)     # records across pages
        want = steps[-2]["st"]
        data = bytes.fromhex(rt.steps([{"op": "read", "name": "zj1.zj"}])[0]["r"])
        n = HEADER + 5 + 5 + 60 * (4 + 5) + 5
        assert len(data) == PRE and data[n:] == b"\xff" * (PRE - n)
        assert data[HEADER:HEADER + 5] == record(0x4F, bytes([REST_E2]))
        assert data[n - 5:n] == record(0x4F, bytes([ZENN]))
        # (the boot prepares the next game's file: its writes counted apart from the save's)
        last = rt.steps([{"op": "counts"}, BOOT, {"op": "counts"}, out(SINK), {"op": "counts"}, BOOT])
        assert last[1]["r"]["status"] == S_OK and last[1]["blk"] >= 0 and want != last[3]["st"]
        assert last[4]["r"][1] == 0 and last[-1]["st"] == last[3]["st"]
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_power_cut_at_every_write_of_a_game_written_in_place(rt):
    """The power cut at each block write of the game (its start: the file of erased bytes
    written through littlefs and found; every save after it, a page or two), half of that
    write reaching the flash: the game after power on is the one before that entry or after
    it, never a fault, and it goes on being saved (in place again)."""
    _raw_only(rt)
    try:
        ops = in_place_game()
        ref = rt.steps([RAW_ON, WIPE] + ops)
        base = ref[1]["w"]
        marks = [s["w"] for s in ref[2:]]                 # block writes after each op
        states = ["none"] + [s["st"] for s in ref[2:]]
        lo = base
        cuts = 0
        for i, hi in enumerate(marks):
            for w in range(lo, hi):
                steps = rt.steps([WIPE] + ops[:i] + [{"op": "tear", "after": w - (marks[i - 1] if i else base)},
                                                      ops[i], {"op": "tear", "after": -1}, BOOT])
                assert steps[-3]["r"] == "lost", (i, w)
                boot = steps[-1]
                assert boot["st"] in (states[i], states[i + 1]), (i, w, boot)
                assert boot["fault"] == F_NONE, (i, w, boot)
                if boot["st"] != "none":
                    more = rt.steps([out(REST_E2), {"op": "service"}, BOOT])
                    assert more[-1]["st"] == more[0]["st"] != boot["st"], (i, w)
                cuts += 1
            lo = hi
        assert cuts > len(ops)
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_an_old_file_appended_to_is_written_in_place_from_its_next_boot(rt):
    """A game saved by the firmware before (appended to, no erased bytes) still loads, and is
    written again in place at the boot that continues it; a file written in place loads where
    the block device is not at hand (and is written again to be appended to)."""
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_OFF, WIPE, new(), out(ZENN), out(REST_E2), FILES_OP])
        assert steps[-1]["r"] == {"zj1.zj": HEADER + 10}
        want = steps[-2]["st"]
        steps = rt.steps([RAW_ON, BOOT, FILES_OP, out(REST_Z3), BOOT])
        assert steps[1]["st"] == want and steps[1]["r"]["status"] == S_OK and steps[1]["blk"] >= 0
        assert steps[2]["r"]["zj2.zj"] == PRE
        assert steps[-1]["st"] == steps[-2]["st"] and steps[-1]["blk"] >= 0
        steps = rt.steps([RAW_OFF, BOOT, out(REST_E2), BOOT, FILES_OP])
        assert steps[1]["st"] == steps[-3]["st"][:len(steps[1]["st"])] and steps[1]["blk"] < 0
        assert steps[-2]["st"] == steps[2]["st"] and steps[-1]["r"]["zj3.zj"] < PRE
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_damaged_byte_of_a_file_written_in_place_is_caught_and_loses_nothing_else(rt):
    """As test_a_damaged_byte_anywhere_is_caught_and_never_crashes_boot, for a file written in
    place: a byte of a record flipped gives the game up to it (damage before the last record;
    the last record's bytes, its length too, a torn save: a bad record followed only by erased
    bytes); a byte of the erased rest flipped is damage that loses nothing (the whole game and
    the `damaged` fault)."""
    _raw_only(rt)
    try:
        ops = game_ops(random.Random(11), 10)
        steps = rt.steps([RAW_ON] + ops)[1:]
        marks = played(ops, steps)
        end = marks[-1][0]
        name = list(current_file(rt))[0]
        data = bytes.fromhex(rt.steps([{"op": "read", "name": name}])[0]["r"])
        assert len(data) == PRE and data[end:] == b"\xff" * (PRE - end)
        for i in list(range(end + 6)) + [PRE // 2, PRE - 1]:
            for x in (0x01, 0x80):
                d = bytearray(data)
                d[i] ^= x
                res = rt.steps([{"op": "put", "name": name, "hex": d.hex(), "only": True}, BOOT])[-1]
                got = res["st"] if res["r"]["g"] else "none"
                if i < HEADER:
                    assert res["fault"] == F_FOREIGN and not res["r"]["g"], i
                    continue
                before = [st for off, st in marks if off <= i]
                assert got == before[-1], (i, x, got)
                last = i > marks[-2][0] if len(marks) > 1 else True
                if HEADER <= i < end and last:
                    assert res["r"]["status"] == S_TORN and res["fault"] == F_NONE, (i, x)
                else:
                    assert res["r"]["status"] == S_DAMAGED and res["fault"] == F_DAMAGED, (i, x)
                    assert any('"why":"damaged"' in e for e in res["ev"])
    finally:
        rt.steps([RAW_OFF, WIPE])


# ---------------------------------------------------------------------------------------------
# the next game's file prepared at boot (issue 13): a game's start programs one page in place

P_REC = 14                  # the P record: 2 + 10 + 2


def prep_record(serial, nonce=0):
    return record(0x50, b"ZNJ1" + bytes([1]) + serial.to_bytes(4, "little") + bytes([nonce]))


def header_record(serial, game=G_BOWLING, players=1, o1=0, o2=0):
    return record(0x47, b"ZNJ1" + bytes([1]) + serial.to_bytes(4, "little") + bytes([game, players, o1, o2]))


def read_file(rt, name):
    r = rt.steps([{"op": "read", "name": name}])[0]["r"]
    return None if r is None else bytes.fromhex(r)


def test_a_game_start_after_a_boot_programs_one_page_and_erases_nothing(rt):
    """At boot the next serial's file is written: a P record, then erased bytes to 4 KB, its
    block found. The game's start then programs its header after the P record: one page, no
    erase, no littlefs (on main a game's start writes its 4 KB file through littlefs: a block
    erase and a commit, 70 ms on the chip). Saves follow in place; a boot restores the game (the
    next game's file prepared then is no game and hides nothing); a second game in the same
    power-on, nothing prepared any more, takes the littlefs path, correct."""
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_ON, WIPE, BOOT, {"op": "counts"}])
        prep = steps[-2].get("prep", -1)
        assert steps[-2]["r"]["g"] == 0 and prep >= 0
        assert read_file(rt, "zj1.zj") == prep_record(1) + b"\xff" * (PRE - P_REC)
        steps = rt.steps([new(G_BOWLING, 2, 1), {"op": "counts"}])
        progs, erases, nbytes, _ = steps[1]["r"]
        assert (progs, erases, nbytes) == (1, 0, PAGE), steps[1]["r"]
        assert steps[0]["blk"] == prep and steps[0]["fault"] == F_NONE and "prep" not in steps[0]
        data = read_file(rt, "zj1.zj")
        start = P_REC + HEADER
        assert data == prep_record(1) + header_record(1, G_BOWLING, 2, 1) + b"\xff" * (PRE - start)
        ops = [out(REST_E2), UNDO, out(ZENN), correct(7), out(SINK)]
        steps = rt.steps(ops + [{"op": "counts"}, BOOT])
        progs, erases, _, _ = steps[-2]["r"]
        assert erases == 0 and progs == len(ops)
        boot = steps[-1]
        assert boot["r"]["g"] == G_BOWLING and boot["r"]["serial"] == 1 and boot["fault"] == F_NONE
        assert boot["st"] == steps[-3]["st"] and boot["r"]["status"] == S_OK and boot["blk"] == prep
        assert boot.get("prep", -1) >= 0
        assert read_file(rt, "zj2.zj") == prep_record(2) + b"\xff" * (PRE - P_REC)
        data = read_file(rt, "zj1.zj")
        n = start + 5 + 4 + 5 + 5 + 5
        assert data[start:start + 5] == record(0x4F, bytes([REST_E2])) and data[n:] == b"\xff" * (PRE - n)
        # a boot again finds the same prepared file: nothing written
        steps = rt.steps([{"op": "counts"}, BOOT, {"op": "counts"}])
        assert steps[-1]["r"][:2] == [0, 0] and steps[1].get("prep") == boot["prep"]
        # two more games in this power-on: the first in the prepared file, the second through
        # littlefs (its file written, erased and committed: the old path), both restored
        steps = rt.steps([END, {"op": "counts"}, new(G_TRAP1, 2, 1, 0), {"op": "counts"}, out(1 << 4),
                          END, {"op": "counts"}, new(G_TRAP2, 2, 2, 1), {"op": "counts"},
                          out(1 << 4 | 2), BOOT])
        assert steps[3]["r"][:2] == [1, 0] and steps[2]["blk"] == boot["prep"]
        assert steps[8]["r"][1] >= 1 and steps[7]["blk"] >= 0 and "prep" not in steps[7]
        assert steps[-1]["r"]["g"] == G_TRAP2 and steps[-1]["r"]["serial"] == 3
        assert steps[-1]["st"] == steps[-2]["st"] and steps[-1]["fault"] == F_NONE
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_power_cut_at_every_write_of_the_preparation_at_boot_loses_nothing(rt):
    """A game in progress (and one over) when the power goes at each block write of the boot's
    preparation of the next file (half of that write reaching the flash): the next boot restores
    the same game, no fault, never the half-prepared file taken for a game; it prepares the file
    again and the next game's start is one page program."""
    _raw_only(rt)
    try:
        rt.steps([RAW_ON])
        for over in (False, True):
            game = [WIPE, new(G_BOWLING, 2, 0), out(REST_E2), out(ZENN)] + ([END] if over else [])
            ref = rt.steps(game + [{"op": "counts"}, BOOT, {"op": "counts"}])
            want = ref[len(game) - 1]["st"]
            writes = sum(ref[-1]["r"][:2])
            assert writes > 0 and ref[-2].get("prep", -1) >= 0
            for w in range(writes):
                steps = rt.steps(game + [{"op": "tear", "after": w}, BOOT, {"op": "tear", "after": -1},
                                         BOOT])
                assert steps[len(game) + 1]["r"] == "lost", w
                boot = steps[-1]
                assert boot["fault"] == F_NONE, (over, w, boot)
                assert boot["r"]["serial"] == 1 and boot.get("prep", -1) >= 0, (over, w, boot)
                if over:
                    assert boot["r"]["g"] == 0 and boot["r"]["ended"], (over, w)
                else:
                    assert boot["r"]["g"] == G_BOWLING and boot["st"] == want, (over, w)
                more = rt.steps(([] if over else [END]) + [{"op": "counts"}, new(G_TRAP1, 2, 2, 0),
                                                            {"op": "counts"}])
                assert more[-1]["r"][:2] == [1, 0], (over, w)
                assert more[-2]["blk"] == boot["prep"] and more[-2]["fault"] == F_NONE
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_power_cut_between_a_game_start_and_its_first_save(rt):
    """The header's page program cut (half of the page reaching the flash), or the power gone
    after it, before the first save: the boot finds either no game (the newest before it, over,
    in the menu) or the new game with no entries, never a fault; play goes on and is saved. A
    header torn anyhow (bytes of it missing) with nothing after it is a start cut short (no
    game, no fault, the file prepared again); a header that is no header with records after it
    is a foreign file, reported."""
    _raw_only(rt)
    try:
        rt.steps([RAW_ON])
        for tear in (0, -1):
            ops = [WIPE, new(G_BOWLING, 1, 0), out(ZENN), END, BOOT]
            ref = rt.steps(ops)
            assert ref[-1].get("prep", -1) >= 0
            if tear == 0:
                steps = rt.steps([{"op": "tear", "after": 0}, new(G_BOWLING, 3, 1),
                                  {"op": "tear", "after": -1}, BOOT])
                assert steps[1]["r"] == "lost"
            else:
                steps = rt.steps([new(G_BOWLING, 3, 1), BOOT])
            boot = steps[-1]
            assert boot["fault"] == F_NONE, boot
            assert boot["st"] in ("b31:", "b10:over:" + bytes([ZENN]).hex()) or boot["r"]["g"] == 0, boot
            if boot["r"]["g"]:
                assert boot["st"] == "b31:" and boot["r"]["serial"] == 2 and boot["blk"] >= 0
                more = rt.steps([out(SINK), BOOT])
                assert more[-1]["st"] == more[0]["st"] == "b31:" + bytes([SINK]).hex()
        # hand-made: the P record, a header cut after k bytes (the rest erased)
        for k in (1, 2, 8, HEADER - 2, HEADER - 1):
            torn = prep_record(2) + header_record(2)[:k]
            ops = [WIPE, new(G_BOWLING, 1, 0), out(ZENN), out(REST_E2),
                   {"op": "put", "name": "zj2.zj", "hex": (torn + b"\xff" * (PRE - len(torn))).hex()},
                   BOOT]
            boot = rt.steps(ops)[-1]
            assert boot["fault"] == F_NONE and boot["r"]["g"] == G_BOWLING and boot["r"]["serial"] == 1, k
            assert read_file(rt, "zj2.zj") == prep_record(2, 1) + b"\xff" * (PRE - P_REC), k
        bad = bytearray(prep_record(2) + header_record(2) + record(0x4F, bytes([ZENN])))
        bad[P_REC + 9] ^= 0x10
        boot = rt.steps([WIPE, {"op": "put", "name": "zj2.zj", "hex": (bytes(bad) + b"\xff" * (PRE - len(bad))).hex()},
                         BOOT])[-1]
        assert boot["fault"] == F_FOREIGN and boot["r"]["g"] == 0
        assert any('"why":"foreign"' in e and "zj2.zj" in e for e in boot["ev"])
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_prepared_file_written_in_place_restores_and_a_foreign_serial_is_refused(rt):
    """A game's file begun as a prepared one (P record, header, records, erased) restores where
    the block device is not at hand too (CPython-style boot: written again to be appended to);
    its header's serial must be the P record's (else a foreign file)."""
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_ON, WIPE, BOOT, new(), out(ZENN), out(REST_E2)])
        want = steps[-1]["st"]
        steps = rt.steps([RAW_OFF, BOOT, FILES_OP])
        assert steps[1]["st"] == want and steps[1]["r"]["status"] == S_OK and steps[1]["blk"] < 0
        assert steps[1]["r"]["serial"] == 2 and steps[2]["r"]["zj2.zj"] == HEADER + 10
        mixed = prep_record(5) + header_record(4) + record(0x4F, bytes([ZENN]))
        boot = rt.steps([WIPE, {"op": "put", "name": "zj4.zj", "hex": (mixed + b"\xff" * (PRE - len(mixed))).hex()},
                         BOOT])[-1]
        assert boot["fault"] == F_FOREIGN and boot["r"]["g"] == 0
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_prepared_file_whose_block_is_not_unique_is_written_again_and_a_missing_one_falls_back(rt):
    """The prepared file's block is found by its first page: a copy of it elsewhere on the flash
    (here another file with the same bytes) makes two alike, so the boot writes it again with the
    next nonce and finds that one. A prepared file gone (emptied while the scoreboard was off) is
    written again at the next boot. And with no block device at the start, the game's file goes
    through littlefs (today's path: correct, slower)."""
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_ON, WIPE, BOOT])
        first = read_file(rt, "zj1.zj")
        assert first == prep_record(1, 0) + b"\xff" * (PRE - P_REC)
        steps = rt.steps([{"op": "put", "name": "copy.bin", "hex": first.hex()}, BOOT])
        assert steps[-1].get("prep", -1) >= 0
        assert read_file(rt, "zj1.zj") == prep_record(1, 1) + b"\xff" * (PRE - P_REC)
        steps = rt.steps([{"op": "counts"}, new(), {"op": "counts"}, out(ZENN), BOOT])
        assert steps[2]["r"][:2] == [1, 0] and steps[-1]["st"] == steps[-2]["st"]
        # emptied while off: the boot prepares it again (with another nonce when the copy left
        # in its old block, not yet erased, matches)
        steps = rt.steps([{"op": "put", "name": "zj2.zj", "hex": ""}, BOOT])
        data = read_file(rt, "zj2.zj")
        assert steps[-1].get("prep", -1) >= 0 and data[:11] == prep_record(2)[:11]
        assert data == prep_record(2, data[11]) + b"\xff" * (PRE - P_REC)
        # the block device gone between boot and start: the old path
        steps = rt.steps([END, RAW_OFF, new(G_TRAP1, 2, 1, 0), out(1 << 4), FILES_OP, BOOT])
        assert steps[2]["blk"] < 0 and steps[-2]["r"]["zj2.zj"] == HEADER + 5    # appended to
        assert steps[-1]["r"]["g"] == G_TRAP1
        assert steps[-1]["st"] == steps[-2]["st"] and steps[-1]["r"]["serial"] == 2
    finally:
        rt.steps([RAW_OFF, WIPE])


# ---------------------------------------------------------------------------------------------
# the next game's file prepared again after a game (issue 13: every start one page program)

PREP_OP = {"op": "prep"}
COUNTS = {"op": "counts"}
STRIKES = [out(ZENN)] * 12          # a one-player bowling game, over


def test_every_game_start_in_a_power_on_programs_one_page_its_file_prepared_after_the_game_before(rt):
    """A second and a third game in the same power-on wrote their 4 KB files through littlefs at
    their start (a block erase and a commit: 70 - 78 ms on the chip in one turn at the menu).
    Now, once a game is over or left, service() prepares the next game's file again, a step a
    call (the app calls it while the journal asks: need_open), no call with more than one erase;
    every start after it is one page program, no erase; each game is restored; with nine games
    in one power-on the newest, the six before it and the next game's prepared file are kept."""
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_ON, WIPE, BOOT, new(G_BOWLING, 1, 0)] + STRIKES + [PREP_OP])
        assert ":over:" in steps[-2]["st"] and steps[-2]["blk"] >= 0
        calls = steps[-1]["r"]
        assert len(calls) > 4 and all(e <= 1 for _, e in calls), calls   # in steps
        assert sum(e for _, e in calls) == 1, calls                        # one 4 KB file
        assert steps[-1]["need"] == 0 and "prep_busy" not in steps[-1]
        prep = steps[-1]["prep"]
        assert read_file(rt, "zj2.zj") == prep_record(2) + b"\xff" * (PRE - P_REC)
        # the next start: one page; that game left, the next prepared, its start one page too
        steps = rt.steps([COUNTS, new(G_TRAP1, 2, 1, 0), COUNTS, out(1 << 4), END, PREP_OP, COUNTS,
                          new(G_TRAP2, 2, 2, 1), COUNTS, out(1 << 4 | 2)])
        assert steps[2]["r"][:2] == [1, 0] and steps[1]["blk"] == prep and steps[1]["fault"] == F_NONE
        assert steps[5]["prep"] >= 0 and sum(e for _, e in steps[5]["r"]) == 1
        assert steps[8]["r"][:2] == [1, 0] and steps[7]["blk"] == steps[5]["prep"]
        want = steps[-1]["st"]
        boot = rt.steps([BOOT])[0]
        assert boot["r"]["g"] == G_TRAP2 and boot["r"]["serial"] == 3 and boot["st"] == want
        assert boot["fault"] == F_NONE and boot["blk"] == steps[5]["prep"]
        assert boot.get("prep", -1) >= 0                                 # serial 4's
        # nine games in a row in this power-on (serials 4 .. 12): every start one page, no erase
        steps = rt.steps([END, PREP_OP])
        for k in range(9):
            steps = rt.steps([COUNTS, new(G_BOWLING, 1, 0), COUNTS, out(REST_E2), END, PREP_OP])
            assert steps[2]["r"][:2] == [1, 0], (k, steps[2]["r"])
            assert steps[-1]["prep"] >= 0 and steps[-1]["fault"] == F_NONE, k
        serials = {}
        for n in FILES:
            data = read_file(rt, n)
            assert data is not None and data[0] == 0x50, n
            serials[n] = int.from_bytes(data[7:11], "little")
            if len(data) > P_REC and data[P_REC] != 0xFF:
                assert data[P_REC:P_REC + HEADER][7:11] == data[7:11]      # its game's header
        assert sorted(serials.values()) == list(range(6, 14))          # 12 newest, 6 before, 13 next
        assert read_file(rt, "zj5.zj") == prep_record(13, read_file(rt, "zj5.zj")[11]) + b"\xff" * (PRE - P_REC)
        boot = rt.steps([BOOT])[0]
        assert boot["r"]["serial"] == 12 and boot["r"]["ended"] and boot["fault"] == F_NONE
        # a start that comes while the preparation is under way finishes it and starts in it
        steps = rt.steps([new(G_BOWLING, 1, 0), END, {"op": "prep", "max": 1}, COUNTS,
                          new(G_TRAP1, 2, 1, 0), COUNTS, out(1 << 4), BOOT])
        assert "prep_busy" in steps[2] and steps[5]["r"][1] == 1, steps[5]["r"]
        assert steps[4]["blk"] >= 0 and steps[4]["fault"] == F_NONE
        assert steps[-1]["r"]["g"] == G_TRAP1 and steps[-1]["r"]["serial"] == 14
        assert steps[-1]["st"] == steps[-2]["st"] and steps[-1]["blk"] == steps[4]["blk"]
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_power_cut_in_or_between_the_steps_of_a_preparation_after_a_game_loses_nothing(rt):
    """The power cut at each block write of the preparation after a game (left, or over), half of
    that write reaching the flash, or off between two of its steps: the next boot gives the
    menu with that game kept (ended), no fault, never the half-prepared file taken for a game;
    it prepares the file again and the next start is one page program."""
    _raw_only(rt)
    try:
        rt.steps([RAW_ON])
        for over in (False, True):
            game = [WIPE, BOOT, new(G_BOWLING, 1, 0)] + (STRIKES if over else [out(REST_E2), out(ZENN), END])
            ref = rt.steps(game + [PREP_OP])
            calls = ref[-1]["r"]
            writes = ref[-1]["w"] - ref[-2]["w"]
            assert writes == sum(p + e for p, e in calls) > 0 and ref[-1]["prep"] >= 0
            cases = [[{"op": "tear", "after": w}, PREP_OP, {"op": "tear", "after": -1}] for w in range(writes)]
            cases += [[{"op": "prep", "max": n}] for n in range(1, len(calls))]
            for i, case in enumerate(cases):
                steps = rt.steps(game + case + [BOOT])
                if i < writes:
                    assert steps[len(game) + 1]["r"][-1] == "lost", (over, i)
                else:
                    assert "prep_busy" in steps[-2], (over, i)
                boot = steps[-1]
                assert boot["fault"] == F_NONE, (over, i, boot)
                assert boot["r"]["serial"] == 1 and boot["r"]["g"] == 0, (over, i, boot)
                assert boot["r"]["played"] == 12 if over else boot["r"]["ended"], (over, i, boot)
                assert boot.get("prep", -1) >= 0, (over, i, boot)
                more = rt.steps([COUNTS, new(G_TRAP1, 2, 2, 0), COUNTS, out(1 << 4), BOOT])
                assert more[2]["r"][:2] == [1, 0], (over, i)
                assert more[1]["blk"] == boot["prep"] and more[1]["fault"] == F_NONE
                assert more[-1]["r"]["g"] == G_TRAP1 and more[-1]["st"] == more[-2]["st"]
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_prepared_file_changed_before_its_start_is_reported_and_loses_nothing(rt):
    """The start checks the prepared block's first page before programming the header after it:
    its P record whole (its CRC), the serial, the nonce it was prepared with, erased after it
    (main checked the type, the serial and the erased rest: a changed nonce or CRC got the header
    programmed after a P record that no boot reads, and the game was lost as a foreign file).
    Changed, the start says so (`foreign`, the file's name) and writes the game's file through
    littlefs: the game is saved and restored, the game before kept."""
    _raw_only(rt)
    try:
        for at in (11, 12, 13, P_REC, 8):           # nonce, CRC (2), the first erased byte, serial
            # (prepared at a boot, as main does, so that this shows the check alone)
            steps = rt.steps([RAW_ON, WIPE, BOOT, new(G_BOWLING, 1, 0), out(ZENN), END, BOOT])
            prep = steps[-1]["prep"]
            steps = rt.steps([{"op": "rawflip", "block": prep, "at": at, "xor": 0x01},
                              new(G_BOWLING, 2, 1), out(REST_E2), out(SINK), BOOT])
            start = steps[1]
            assert start["fault"] == F_FOREIGN, (at, start)
            assert any('"why":"foreign"' in e and "zj2.zj" in e for e in start["ev"]), at
            assert start["blk"] >= 0 and start["blk"] != prep, at       # a new file, in place
            boot = steps[-1]
            assert boot["fault"] == F_NONE and boot["r"]["g"] == G_BOWLING, (at, boot)
            assert boot["r"]["serial"] == 2 and boot["st"] == steps[-2]["st"], at
            old = read_file(rt, "zj1.zj")
            assert old[P_REC:P_REC + HEADER] == header_record(1), at        # the game before kept
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_preparation_after_a_game_allocates_only_where_it_opens_or_reads_a_file(rt):
    """service()'s calls of a preparation after a game (outside the loop turn, where allocating
    is allowed) allocate only to begin it (its state: a list, its two 256-byte pages), to read
    the file's first record and to open the file; its 15 writes, its commit and its block search
    allocate nothing (heap bytes counted with the collector off, MicroPython). Its last call
    keeps the result (Journal.dev's tuple while the game over is written in place). Main's
    generator rebuilt that tuple at every call, and its search made its pages anew."""
    if rt.name != "micropython":
        pytest.skip("heap bytes: MicroPython's gc.mem_alloc()")
    _raw_only(rt)
    try:
        steps = rt.steps([RAW_ON, WIPE, BOOT, new(G_BOWLING, 1, 0)] + STRIKES + [PREP_OP])
        prep = steps[-1]
        alloc, calls = prep["alloc"], prep["r"]
        assert prep["prep"] >= 0 and len(alloc) == len(calls) > 20, prep
        assert [p for p, _ in calls[:2]] == [0, 0] and calls[2][0] > 0, calls    # begun, read, opened
        assert all(a > 0 for a in alloc[:3]), alloc
        assert alloc[3:-1] == [0] * (len(alloc) - 4), alloc
        assert alloc[-1] <= 64, alloc
    finally:
        rt.steps([RAW_OFF, WIPE])


def test_a_preparation_waits_while_a_game_reopened_by_an_undo_is_played(rt):
    """A game over, its next file's preparation begun (service(), a step a call after light
    turns at rest), then an undo reopens the game: no step runs while it is played (main ran
    them: the erase's 46 ms call could fall between two shots, a chip flicked meanwhile unseen),
    its saves are one page program each; the preparation goes on once the game is over again,
    one erase in all, and the next start is one page program. A power cut while it waits: the
    reopened game is restored, no fault, the file prepared again."""
    _raw_only(rt)
    try:
        over = [RAW_ON, WIPE, BOOT, new(G_BOWLING, 1, 0)] + STRIKES + [COUNTS, {"op": "prep", "max": 2}]
        steps = rt.steps(over + [COUNTS])
        assert "prep_busy" in steps[-2] and steps[-2]["need"] == 2
        assert steps[-1]["r"][1] == 0                       # begun, its erase still to come
        # two strikes undone: the tenth frame's second ball to play, then its third
        steps = rt.steps([UNDO, UNDO, {"op": "prep"}, out(REST_E2), {"op": "prep"}, COUNTS])
        assert ":over" not in steps[-2]["st"]
        for s in (steps[2], steps[4]):
            assert s["r"] == [[0, 0]] and s["need"] == 0 and "prep_busy" in s, s
        assert steps[-1]["r"][:2] == [3, 0], steps[-1]["r"]      # the three saves, no erase
        steps = rt.steps([out(REST_E2), {"op": "prep"}, COUNTS, new(G_TRAP1, 2, 1, 0), COUNTS])
        assert ":over" in steps[0]["st"]
        calls = steps[1]["r"]
        assert sum(e for _, e in calls) == 1 and steps[1]["prep"] >= 0 and steps[1]["need"] == 0
        assert steps[-1]["r"][:2] == [1, 0] and steps[-2]["blk"] == steps[1]["prep"]
        assert steps[-2]["fault"] == F_NONE
        # the power cut while the preparation waits: the reopened game comes back
        steps = rt.steps(over + [UNDO, UNDO, out(REST_E2), {"op": "prep"}, BOOT])
        assert "prep_busy" in steps[-2]
        want = steps[-2]["st"]
        boot = steps[-1]
        assert boot["r"]["g"] == G_BOWLING and boot["st"] == want and boot["fault"] == F_NONE
        assert boot.get("prep", -1) >= 0
    finally:
        rt.steps([RAW_OFF, WIPE])
