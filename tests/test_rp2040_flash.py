"""The journal on the chip's own flash, when a write is torn by a power cut or a saved game is
damaged (issue 13; docs/persistence.md says what must hold, docs/rp2040.md how the chip's flash is
broken).

On the emulated Pico the firmware writes its littlefs through the boot ROM's flash_range_program /
flash_range_erase, which pico.mjs carries out; `{"op": "flash", "tear_after": N, "keep": K}`
lets N more of those calls through and cuts the next one part-way (its first K bytes reach the
cells, all but -K when negative, half when K is not given), the power gone at that moment. A
journal entry is a single 256-byte page program on the chip, written in place into its game's
file (docs/persistence.md; the checkpoints' "flash_ops" show it), so the points across one save
are where in that operation the power goes: before its first byte, after one, after 16, half
way, before its last byte, and after all of it (the cut right after the operation). A record
the cut leaves partly programmed is lost (its CRC fails: a torn last record), one programmed
whole is kept; either is right, as long as the game is the one before the shot or after it. (The second and later operations of a save, tear_after 1, 2
..., are torn in test_every_later_operation_of_a_save_torn_on_the_chip_loses_nothing_committed.)

After each cut the game must come back with at most the shot whose save was under way lost,
never a crash, a wrong frame or a wrong score; a damaged record must be reported (fault event,
status row) and the game restored from the records before it. Skipped, with the reason, like the
rest of the tier, when there is no image.
"""
import os
import sys

import pytest

from boardsim.rp2040 import images

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_bowling import Game, ball_value  # noqa: E402

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())
needs_chip = pytest.mark.skipif(WHY is not None, reason=f"no emulated Pico here: {WHY}")
LONG = bool(os.environ.get("ZENN_RP2040_LONG"))
long_test = pytest.mark.skipif(not LONG, reason="a long chip test (minutes of emulation): "
                               "`make test-rp2040` runs it (ZENN_RP2040_LONG=1)")

ZENN = ("b.pocket", "b.cup")
EIGHT = ("b.e2",)
HEADER, OUT = 17, 5          # journal.py: the header record, an outcome record
PREP = 14                    # the P record of a file prepared at boot, before the header


def status(r, label):
    return r.display_at(label)[7].strip()


def torn_game(keeps, damage=False):
    """One player's bowling on the chip: a strike, then one shot per entry of `keeps` whose
    journal save is torn (keep: the bytes of the page that reach the flash), each followed by
    power on (and each after the first preceded by a shot saved whole). With `damage`, then two shots saved whole, a cut, the second outcome record of the
    file damaged (a record before the file's end: a torn last record is dropped silently), power
    on.
    Returns (timeline, the paths shot in order)."""
    from boardsim.testing import Table
    t = Table("bowling", players=1, runtime="rp2040")
    paths = []

    def shot(path):
        t.place("small", "a.pocket").shoot("small", *path)
        paths.append(path)

    shot(ZENN)
    t.take("small")
    t.checkpoint("start")
    for i, _keep in enumerate(keeps):
        if i:
            # one save whole first: the first commit after a torn one is littlefs compacting
            # the block the tear left garbage in (an erase, then pages), and the save torn
            # next must be the single page program of an entry
            shot(EIGHT if i % 2 == 0 else ZENN)
            t.take("small")
        t.steps.append({"flash": {"tear_after": 0}})     # the save of the next entry is torn
        shot(EIGHT if i % 2 == 0 else ZENN)
        t.steps.append({"flash": {"tear_after": -1}})    # (none, if that shot wrote nothing)
        t.checkpoint(f"torn{i}")                         # (the power gone: the flash as it was)
        t.power_cut().power_on()
        t.checkpoint(f"cut{i}")
        t.take("small")
    if damage:
        shot(EIGHT)
        t.take("small")
        shot(ZENN)
        t.take("small")
        t.power_cut()
        # the first game on an empty flash has serial 1: zj1.zj (prepared at boot: its P record
        # first); its second outcome's code
        t.steps.append({"flash": {"damage": "zj1.zj", "offset": PREP + HEADER + OUT + 2}})
        t.power_on()
        t.checkpoint("damaged")
    shot(ZENN)
    t.checkpoint("end")
    tl = t.timeline()
    tears = [o for o in tl if o.get("op") == "flash" and o.get("tear_after") == 0]
    assert len(tears) == len(keeps)
    for o, keep in zip(tears, keeps):
        if keep is not None:
            o["keep"] = keep
    return tl, paths


def check_game(events, paths, damaged=None):
    """Score the chip's events again from the paths shot (tests/ref_bowling.py): every shot's
    frame, pins, mark and total, a restored game that is the one before the last shot or after
    it (`damaged`: (k, n), the k-th restored game is the first n entries: up to the damage).
    Returns the restored events' entry counts."""
    shots = [e for e in events if e.get("ev") == "shot"]
    assert len(shots) == len(paths), (shots, paths)
    g = Game(1)
    i = 0
    restored = []
    for e in events:
        ev = e.get("ev")
        if ev == "restored":
            n = e["entries"]
            if damaged is not None and len(restored) == damaged[0]:
                assert n == damaged[1], (e, g.balls)
            else:
                assert len(g.balls) - 1 <= n <= len(g.balls), (e, g.balls)    # at most the last shot lost
            del g.balls[n:]
            restored.append(n)
        elif ev == "shot":
            p, f, fresh, base = g.next()
            assert (e["player"], e["frame"]) == (p + 1, f + 1), (e, g.balls)
            pins = ball_value(list(paths[i]), fresh, base)
            assert e["pins"] == pins, (e, paths[i], g.balls)
            g.play(pins)
            assert e["total"] == g.total(p), (e, g.cum(p))
            assert e["mark"] == g.marks(p)[f][-1], (e, g.marks(p))
            i += 1
    return restored


def frame_row(balls):
    """The OLED's top row for a one-player game after these balls."""
    g = Game(1)
    for v in balls:
        g.play(v)
    _, f, fresh, _ = g.next()
    return "P1 Frame %d Ball %d" % (f + 1, 1 if fresh else 2)


def run_chip(tl):
    from boardsim.testing import run_timeline
    return run_timeline(tl, "rp2040")


@needs_chip
@long_test
def test_a_torn_save_on_the_chip_loses_only_that_shot_and_a_damaged_record_is_reported():
    tl, paths = torn_game([1], damage=True)
    r = run_chip(tl)
    restored = check_game(r.events, paths, damaged=(1, 1))
    s = r.snapshots
    # the tear happened, inside the 8-pin shot's save, and cut the power
    assert s["start"]["torn"] == 0 and s["cut0"]["torn"] == 1
    # one page program: the entry (counted before the power-on: the boot after it prepares the
    # next game's file when the game's own was used, issue 13)
    assert s["torn0"]["flash_ops"] == s["start"]["flash_ops"] + 1
    # one byte of a littlefs commit is no commit: the strike is back, the 8 is lost
    assert restored[0] == 1
    assert r.events_of("restored")[0]["reset"] == "power"
    assert status(r, "cut0") == "Game restored"
    assert frame_row([10]) in r.display_at("cut0")[0]
    # the damaged second outcome: a fault, the game up to the record before it
    faults = [e for e in r.events_of("fault") if e.get("what") == "journal"]
    assert faults == [{"ev": "fault", "what": "journal", "why": "damaged", "file": "zj1.zj"}]
    assert restored[-1] == 1
    assert status(r, "damaged") == "Journal damaged"
    assert frame_row([10]) in r.display_at("damaged")[0]
    assert len(r.events_of("boot")) == 3                      # no reset but the two power-ons


# before the page's first byte, after one byte, after 16, half way, before its last byte, all
ALL = 1 << 20
KEEPS = [0, 1, 16, None, -1, ALL]


@needs_chip
@long_test
def test_a_save_torn_at_each_point_of_its_page_on_the_chip_loses_at_most_that_shot():
    tl, paths = torn_game(KEEPS)
    r = run_chip(tl)
    restored = check_game(r.events, paths)
    s = r.snapshots
    assert [s[f"cut{i}"]["torn"] for i in range(len(KEEPS))] == list(range(1, len(KEEPS) + 1))
    # nothing or one byte of the save's first operation is no commit (check_game: at most the
    # torn shot lost at every point); each cycle but the first saves one shot whole first. The
    # other points may lose the shot or keep it: after a torn commit littlefs compacts into
    # its directory pair's other block, so such a save begins with a 4 KB erase (traced: a cut
    # after all of that erase leaves the old block whole and loses the shot)
    before = 1
    for i, (keep, n) in enumerate(zip(KEEPS, restored)):
        if i:
            before += 1
        if keep in (0, 1):
            assert n == before, (i, keep, restored)
        before = n
        assert status(r, f"cut{i}") == "Game restored"
    print("entries restored after each tear (keep, entries):", list(zip(KEEPS, restored)))
    assert len(r.events_of("boot")) == 1 + len(KEEPS)
    assert not r.events_of("fault")



# The later operations of a save (tear_after 1, 2, ...). Appended to, a save made in the first
# commit after a torn one was several flash operations: littlefs compacted the directory block
# the tear left garbage in (an erase of the pair's other block, then its pages). Written in place
# (issue 13, docs/persistence.md) the boot after the tear writes the game again into a new file
# and every save is one page program: the tears after it (k >= 1) fall on no operation of the
# save, and the test shows that nothing is lost either way. Shots cost the emulator
# seconds each, so here the balls are played at the chip's REPL (main.py stopped after each
# boot): the rules engine's apply_outcome() and the journal's out() and write(), one save a
# ball, exactly what app.py does after a verdict. Each cycle: a ball saved whole (the save after
# it is a single page again), a ball whose save is torn after its first byte (lost), power on,
# then the next ball's save, the compaction, torn after TEARS[i] of its operations, power on.
# The first cycle tears none of that save and counts its operations (the snapshots'
# flash_ops), so that every later one up to its last is torn once.
TEARS = [None, 1, 2, 3]
_REPL_SETUP = ("import machine;_w=machine.WDT(timeout=5000);"
               "_t=machine.Timer(period=500,callback=lambda t:_w.feed());"
               "ball=lambda c:(sb.game.apply_outcome(c),sb.journal.out(c),sb.journal.write(),"
               "print('{\"ev\":\"saved\",\"entries\":%d}'%sb.game.nlog))")


def _eight():
    # the outcome code of a ball at rest on b.e2 (an 8 as a first ball, no basket as a second)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for d in ("firmware", os.path.join("boardsim", "target")):
        if os.path.join(root, d) not in sys.path:
            sys.path.append(os.path.join(root, d))
    from tables import board_table as BT
    return BT.ZONE_NAMES.index(b"b.e2")         # K_REST << OUT_SHIFT is 0


def later_ops_timeline(tears):
    """The timeline (pico_runner ops) of the cycles above; returns (ops, balls played)."""
    from boardsim.rp2040.probe import repl
    code = _eight()
    tl = [{"op": "boot"}, {"op": "wait", "ms": 1500},
          {"op": "press", "button": "ok"}, {"op": "press", "button": "ok"},
          {"op": "press", "button": "ok"}, {"op": "wait", "ms": 500}]
    balls = []

    def ball():
        tl.append({"op": "serial", "line": "ball(%d)\r" % code, "raw": True})
        tl.append({"op": "wait", "ms": 100})
        balls.append(code)

    def power_on(label):
        tl.extend([{"op": "flash", "tear_after": -1}, {"op": "power", "state": "cut"},
                   {"op": "power", "state": "on"}, {"op": "snapshot", "label": label}])
        tl.extend(repl(_REPL_SETUP))
        tl.append({"op": "wait", "ms": 100})

    tl.extend(repl(_REPL_SETUP))
    tl.append({"op": "wait", "ms": 100})
    ball()
    for i, k in enumerate(tears):
        ball()                                                  # saved whole
        # its save torn after one byte: no commit (lost), but garbage littlefs must compact
        # away in the next commit (a tear before the first byte leaves none: one page again)
        tl.append({"op": "flash", "tear_after": 0, "keep": 1})
        ball()
        power_on(f"pre{i}")
        if k is not None:
            tl.append({"op": "flash", "tear_after": k})
        ball()                                                  # the compaction, torn after k
        tl.append({"op": "snapshot", "label": f"saved{i}"})
        power_on(f"cut{i}")
    return tl, balls


@needs_chip
@long_test
def test_every_later_operation_of_a_save_torn_on_the_chip_loses_nothing_committed():
    from boardsim.testing import run_timeline
    tl, balls = later_ops_timeline(TEARS)
    r = run_timeline(tl, "rp2040")
    s = r.snapshots
    ops = s["saved0"]["flash_ops"] - s["pre0"]["flash_ops"]
    print("flash operations of the save after a torn one:", ops)
    # written in place (issue 13): the boot after the torn page wrote the game again into a new
    # file, so this save is one page program too (appended to, it was littlefs compacting the
    # directory: an erase and its pages, 2 operations or more)
    assert ops == 1, ops
    assert TEARS[-1] >= ops - 1, f"tear up to operation {ops - 1}: TEARS too short"
    # each cycle's tears: the page before its first byte (always), the compaction after k
    # operations when it has more than k
    torn = [s[f"cut{i}"]["torn"] - s[f"pre{i}"]["torn"] for i in range(len(TEARS))]
    assert torn == [0 if k is None else 1 if k < ops else 0 for k in TEARS], (torn, ops)
    assert [s[f"pre{i}"]["torn"] - (s[f"cut{i - 1}"]["torn"] if i else 0) for i in range(len(TEARS))] \
        == [1] * len(TEARS)
    # nothing committed is lost: after each power-on the game is every ball saved whole before,
    # plus the ball torn in the compaction or not (littlefs: all or nothing), never fewer
    restored = [e["entries"] for e in r.events_of("restored")]
    saved = [e["entries"] for e in r.events if e.get("ev") in ("saved", "restored")]
    assert len(restored) == 2 * len(TEARS), restored
    kept = 1                                            # the first ball
    for i, k in enumerate(TEARS):
        kept += 1                                       # the ball saved whole
        assert restored[2 * i] == kept, (i, restored)   # the torn page's ball lost, nothing else
        n = restored[2 * i + 1]
        assert n in (kept, kept + 1), (i, k, restored)
        if k is None:
            assert n == kept + 1, (i, restored)         # not torn: kept
        kept = n
        # the game goes on at the right ball: the restored sheet's frame and ball
        assert frame_row([8 if j % 2 == 0 else 0 for j in range(n)]) in r.display_at(f"cut{i}")[0], \
            (i, n, r.display_at(f"cut{i}")[0])
        assert status(r, f"cut{i}") == "Game restored"
    print("entries saved / restored, in order:", saved)
    assert len(r.events_of("boot")) == 1 + 2 * len(TEARS)     # no reset but the power-ons
    assert not [e for e in r.events_of("fault") if e.get("what") == "journal"]


@needs_chip
def test_no_save_on_the_chip_erases_or_takes_a_loop_turn_over_10_ms():
    """Issue 13: 24 saves in a row on the chip (the journal's own write(), a verdict's entry
    each, bench/rp2040_journal.py), each timed on the chip with the boot ROM's flash calls under
    it. Appended to, every 15th - 16th save was littlefs compacting the directory: an erase of a
    4 KB sector and 72 - 84 ms. Written in place: no erase, one page program a save (two when
    a record crosses a page), every save under the 10 ms of a loop turn at rest (emulated chip
    time, not the host's)."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.rp2040_journal import run, ops_in
    from boardsim.rp2040 import probe
    # (the menu pressed once boot() has ended, not 1.5 s after the boot event: issue 15)
    saves, ops = run(24, 0, settle_ms=probe.READY)
    assert len(saves) == 24 and not any(s["fault"] for s in saves)
    for s in saves:
        mine = ops_in(s, ops)
        erases = [o for o in mine if o[0] == "erase"]
        pages = sum((o[2] + 255) // 256 for o in mine if o[0] == "program")
        assert not erases and 1 <= pages <= 2, (s, mine)
        assert s["us"] <= 10000, s
    print("saves on the chip (us):", [s["us"] for s in saves])


@needs_chip
def test_every_game_start_on_the_chip_is_one_page_program_under_10_ms_and_its_preparation_in_turns_under_50_ms():
    """Issue 13: a game's start wrote its 4 KB file through littlefs in service(): a sector
    erase (45 ms of flash time) and a commit, 70 - 134 ms in one turn at the menu. The boot
    prepares the next game's file (bench/rp2040_journal.py --boot runs the journal's boot()
    again, timed, as at a power-on), and the start after it programs its header in place: one
    page, no erase, under the 10 ms of a loop turn at rest (chip time). Once that game is left,
    the journal prepares the next file again, service() a step a call (the bench calls it as the
    loop does while the journal asks): one call has the erase, none is over the 50 ms of a loop
    turn, every other one within 10 ms; the second start is one page too (on main: the littlefs
    path, an erase, 70 - 78 ms)."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.rp2040_journal import run, ops_in
    from boardsim.rp2040 import probe
    saves, ops = run(2, 2, boot=True, settle_ms=probe.READY)    # (as the test above)
    kinds = [s["what"] for s in saves]
    assert kinds[:2] == ["boot", "start"] and kinds[-3:] == ["start", "entry", "entry"], kinds
    assert not any(s["fault"] for s in saves)

    def under(s):
        mine = ops_in(s, ops)      # (by the chip's us: two preparation calls may start in one ms)
        return ([o for o in mine if o[0] == "erase"],
                sum((o[2] + 255) // 256 for o in mine if o[0] == "program"))
    boot, first, second = saves[0], saves[1], saves[-3]
    assert under(boot)[0], ("the boot prepared no file", boot)
    for s in (first, second):
        erases, pages = under(s)
        assert not erases and pages == 1 and s["us"] <= 10000, (s, erases, pages)
        assert s["size"] == PREP + HEADER
    prep = saves[2:-3]
    assert len(prep) > 4 and all(s["what"] == "prep" for s in prep), kinds
    erasing = [s for s in prep if under(s)[0]]
    assert len(erasing) == 1 and all(s["us"] <= 50000 for s in prep), prep
    assert all(s["us"] <= 10000 for s in prep if s is not erasing[0]), prep
    for s in saves[-2:]:
        erases, pages = under(s)
        assert not erases and pages == 1 and s["us"] <= 10000, s
    print("boot / start / preparation's calls / start / saves on the chip (us):", [s["us"] for s in saves])
