"""Best games (firmware/storage/best.py, docs/persistence.md "Best games"): the five best bowling scores
and the five quickest traps on the flash.

- a power cut at every block write of adding a game (the append, and the compaction that writes
  best.tmp and renames it), on a real littlefs (MicroPython, boardsim/target/flash.py): the
  table read back is the one before or the one after, never anything else and never a fault;
- a damaged record costs that record only, with a fault; records cut short are dropped;
- through the firmware: a game's end writes the "best" event and says a new best; the menu's
  "Best games" pages show them (MicroPython, heap locked in the loop)."""
import json
import os

from boardsim.testing import Table
from runtimes import run_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SWEEP = r'''
import json
import flash as FL
from storage import best

fl = FL.Flash()
s = fl.storage
fl.power_on()


def table():
    b = best.Best().load()
    return [b.top_bowling(), b.top_traps(), b.damaged]


def as_json(t):
    return json.loads(json.dumps(t))


# the flash before: some games, then one more to add, at each size of the file: the plain append
# and (the file then past MAX_FILE) the compaction into best.tmp and the rename
out = {"cases": []}
serial = 1
for games in (3, best.MAX_FILE // best.REC - 1):
    fl.power_cut()
    s.load(b"\xff" * (FL.BLOCKS * FL.BLOCK))
    fl.formatted = False
    fl.power_on()
    b = best.Best()
    for k in range(games):
        b.add_bowling(serial, [100 + (k * 37) % 150])
        serial += 1
    b.add_traps(serial, 2, [(0, 1, 9, 1), (1, 2, 4 + games % 3, 2)])
    serial += 1
    before = as_json(table())
    fl.power_cut()
    image = s.image()

    def add(b):
        b.add_bowling(serial, [290, 120])
        b.add_traps(serial + 1, 1, [(0, 2, 3, 1)])

    # once, uncut: the table after, and how many block writes adding took
    fl.power_on()
    w0 = s.writes
    add(best.Best().load())
    writes = s.writes - w0
    after = as_json(table())
    fl.power_cut()
    case = {"games": games, "writes": writes, "before": before, "after": after, "cuts": []}
    for k in range(writes):
        s.load(image)
        fl.power_on()
        s.tear_at = s.writes + k
        try:
            add(best.Best().load())
            torn = False
        except FL.PowerLost:
            torn = True
        s.tear_at = -1
        fl.power_cut()
        fl.power_on()
        case["cuts"].append([k, torn, as_json(table())])
        fl.power_cut()
    out["cases"].append(case)
    serial += 2
print("RESULT " + json.dumps(out))
'''


def run_mp(script, tmp_path):
    return run_target(script, "micropython", name="sweep.py", tmp_path=tmp_path, heapsize="8M",
                      dirs=("firmware", "boardsim/target"), timeout=600, marker="RESULT ", cwd=None)[0]


def test_a_power_cut_at_every_write_of_the_best_file_leaves_the_old_table_or_the_new(tmp_path):
    res = run_mp(SWEEP, tmp_path)
    assert len(res["cases"]) == 2
    for case in res["cases"]:
        before, after = case["before"], case["after"]
        assert before != after and after[2] == 0
        assert [290, 1] == after[0][0][:2]                     # the new game heads the list
        assert [3, 2, 1] == after[1][0][:3]                    # the quickest trap
        assert case["writes"] >= 2 and len(case["cuts"]) == case["writes"]
        torn = 0
        for k, was_torn, got in case["cuts"]:
            torn += was_torn
            assert got[2] == 0, (case["games"], k, got)       # never a damaged record
            # the two appends are two commits: before, after the first (bowling), or after
            mid = [after[0], before[1], 0]
            assert got in (before, mid, after), (case["games"], k, got)
        assert torn == case["writes"]


def test_a_damaged_record_costs_only_itself(tmp_path):
    import importlib.util
    import sys
    sys.path.insert(0, os.path.join(ROOT, "boardsim", "target"))
    sys.path.insert(0, os.path.join(ROOT, "firmware"))
    try:
        spec = importlib.util.spec_from_file_location("best_h", os.path.join(ROOT, "firmware", "storage", "best.py"))
        best = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(best)
    finally:
        del sys.path[:2]
    good = [best.record(best.T_BOWL, s, 1, v & 0xFF, v >> 8, 1, 0)
            for s, v in ((1, 210), (2, 180), (3, 250))]
    data = bytearray(b"".join(good))
    data[best.REC + 6] ^= 0x40                                 # game 2's score: a bit flipped
    data += best.record(best.T_TRAP, 4, 2, 1, 6, 0, 1)[:7]     # a record cut short at the end
    p = tmp_path / "best.zb"
    p.write_bytes(bytes(data))
    b = best.Best().load(str(p))
    assert b.damaged == 1
    assert b.top_bowling() == [(250, 1, 3), (210, 1, 1)]
    assert b.top_traps() == []


def strikes(t, n):
    for _ in range(n):
        t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")


def test_a_game_s_end_says_a_new_best_and_the_menu_shows_the_best_games():
    t = Table("bowling", players=1)
    strikes(t, 12)
    t.advance_time_and_run(3000)
    t.checkpoint("over")
    t.steps.append({"hold": "next", "ms": 1600})              # New game? ...
    t.press("ok")                                              # ... yes: the menu
    for _ in range(5):
        t.press("next")
    t.checkpoint("menu")
    t.press("ok")
    t.checkpoint("best 1")
    t.press("next")
    t.checkpoint("traps")
    t.press("undo")
    t.checkpoint("back")
    r = t.run(config={"display": "both"})
    bests = r.events_of("best")
    assert len(bests) == 2
    over = bests[0]
    assert over["game"] == "bowling" and over["new"] == [{"player": 1, "rank": 1}]
    assert [(e["rank"], e["score"], e["player"]) for e in over["bowling"]] == [(1, 300, 1)]
    game = over["bowling"][0]["game"]
    assert bests[1] == dict(over, game=None, new=[])           # the menu's look: the same table
    assert r.display_at("over")[7] == f"New best! P1 is #1"
    assert r.display_at("menu")[3].strip() == "Best games"
    d = r.display_at("best 1")
    assert d[0].strip() == "Best bowling" and d[3].strip() == f"1. 300  P1  #{game}"
    assert r.seg_at("best 1")[0].startswith("bE5t")
    d = r.display_at("traps")
    assert d[0].strip() == "Quickest traps" and d[3].strip() == "none yet"
    assert r.display_at("back")[3].strip() == "Best games"


def test_a_trap_is_timed_and_a_damaged_best_file_is_reported():
    bad = bytes(12)                                            # a record of zeros: no CRC
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big1", "a.n3")
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.cup3")                                 # trapped in 2 shots
    t.advance_time_and_run(3000)
    r = t.run(flash={"best.zb": bad})
    b = r.last("best")
    assert b["game"] == "trap1" and b["new"] == [{"player": 1, "rank": 1}]
    assert [(e["shots"], e["player"], e["variant"]) for e in b["trap"]] == [(2, 1, "trap1")]
    assert {"ev": "fault", "what": "best", "why": "damaged", "records": 1} in r.events
    assert r.display[7] == "Best games damaged"
