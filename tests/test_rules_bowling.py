"""Zenn Bowling rules (firmware/games/bowling.py) and the event writer (firmware/scoreboard/events.py).

Every test runs under both the real MicroPython unix port and CPython, through one long-lived
driver process per runtime (tests/support/bowling_driver.py): a case goes in as one JSON line,
the result comes back as one. The driver calls every firmware function with the heap locked, so
under MicroPython any allocation fails the test.

The expectations come from the rule text (/work/shared/rules/bowling-zenn.txt), the contract
(sections 3 and 4) and docs/rules.md, through an independent reference written here: a pin table,
a rules model over outcome codes and a conventional bowling scorer over ball pins.
"""
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from runtimes import assert_heap_lock_is_real, mpy_cross_armv6m

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
DRIVER = "bowling_driver.py"           # tests/support; the drv fixture (conftest.py) runs it

# ---------------------------------------------------------------------------------------------
# Vocabulary, written out from the contract and docs/architecture.md

ZONES = ["a.back4", "a.cup3", "a.pocket", "a.zline", "a.z3", "a.e2", "a.n2", "a.n3", "a.cup",
         "b.back4", "b.cup3", "b.pocket", "b.zline", "b.z3", "b.e2", "b.n2", "b.n3", "b.cup",
         "center", "off"]
ZID = {name: i for i, name in enumerate(ZONES)}


def _consts(path, prefix):
    text = (FIRMWARE / path).read_text()
    return {m[0]: int(m[1]) for m in re.findall(r"^(%s\w+) = const\((\d+)\)" % prefix, text, re.M)}


FATE = _consts("tracking/shot.py", "FATE_")
REST, CUP_A, CUP_B, OFF, GONE = (FATE["FATE_REST"], FATE["FATE_CUP_A"], FATE["FATE_CUP_B"],
                                 FATE["FATE_OFF"], FATE["FATE_GONE"])

# the documented outcome layout (docs/rules.md): kind << 5 | zone
K_REST, K_ZENN, K_ZENN_HIT, K_SINK, K_OWN, K_OFF, K_GONE = range(7)
PROMPT_PLACE_POCKET, PROMPT_PLACE_PIN_POCKET, PROMPT_PLACE_CENTER, PROMPT_SHOOT, \
    PROMPT_GAME_OVER, PROMPT_NONE = range(6)

# The pin table of the rules, by where the chip rests after a first ball ('s' the shooter's end,
# 'p' the pin end). Zenn lines have no value of their own; the pockets lie inside the 3 pt
# sections by the cups; a chip hanging on a cup's lip lies in that cup's 3 pt section.
PIN_TABLE = {"p.cup3": 9, "p.pocket": 9, "p.cup": 9, "p.e2": 8, "p.n2": 8, "p.z3": 7, "p.n3": 7,
             "s.e2": 6, "s.n2": 6, "p.back4": 5, "s.z3": 4, "s.n3": 3, "s.cup3": 2,
             "s.pocket": 2, "s.cup": 2, "s.back4": 1, "center": 0, "s.zline": 0, "p.zline": 0}


def zone(rel, end):
    """'s.e2' / 'p.e2' / 'center' -> absolute zone name for shooter end 0 (a) or 1 (b)."""
    if rel in ("center", "off"):
        return rel
    side, name = rel.split(".")
    e = end if side == "s" else 1 - end
    return "ab"[e] + "." + name


def rel_of(absname, end):
    if absname in ("center", "off"):
        return absname
    e = "ab".index(absname[0])
    return ("s" if e == end else "p") + absname[1:]


def ref_value(zone_id, end):
    if zone_id >= 18:
        return 0
    return PIN_TABLE[rel_of(ZONES[zone_id], end)]


# ---------------------------------------------------------------------------------------------
# Shots, as the tracker would report them

def pin_cup(end):
    return CUP_B if end == 0 else CUP_A


def own_cup(end):
    return CUP_A if end == 0 else CUP_B


def rest(*rels, end=0, hit=0):
    return {"op": "shot", "fate": REST, "mask": sum(1 << ZID[zone(r, end)] for r in rels), "hit": hit}


def zenn(end=0, hit=0):
    return {"op": "shot", "fate": pin_cup(end), "zenn": pin_cup(end), "hit": hit}


def sink(end=0, hit=0):
    return {"op": "shot", "fate": pin_cup(end), "zenn": 0, "hit": hit}


def own(end=0):
    return {"op": "shot", "fate": own_cup(end)}


def off_board():
    return {"op": "shot", "fate": OFF}


def gone():
    return {"op": "shot", "fate": GONE}


def start(players=1, end=0):
    return {"op": "start", "players": players, "end": end}


UNDO = {"op": "undo"}

# a first ball worth n pins
FIRST = {9: "p.cup3", 8: "p.e2", 7: "p.z3", 6: "s.e2", 5: "p.back4", 4: "s.z3", 3: "s.n3",
         2: "s.cup3", 1: "s.back4", 0: "center"}


def frame_ops(marks, end=0):
    """Shots that produce one frame written in standard notation ('X', '9/', '72', 'X9/', ...)."""
    ops = []
    fresh, base = True, 0
    for i, ch in enumerate(marks):
        tenth_bonus = i == 2 or (i == 1 and marks[0] == "X")
        if tenth_bonus and (marks[i - 1] in "X/"):
            fresh, base = True, 0
        if fresh:
            if ch == "X":
                ops.append(zenn(end))
                continue
            n = 0 if ch == "-" else int(ch)
            ops.append(rest(FIRST[n], end=end))
            fresh, base = False, n
        else:
            if ch == "/":
                ops.append(zenn(end))
            elif ch == "-":
                ops.append(rest("p.e2", end=end) if base != 9 else sink(end))
            else:
                assert base + int(ch) == 9, "a second ball scores only by a spare or a sink to 9"
                ops.append(sink(end))
            fresh = True
    return ops


def game_ops(frames_per_player, end=0):
    players = len(frames_per_player)
    ops = [start(players, end)]
    for f in range(10):
        for p in range(players):
            if f < len(frames_per_player[p]):
                ops += frame_ops(frames_per_player[p][f], end)
    return ops


def rolls_of(frames):
    rolls = []
    for fr in frames:
        for ch in fr:
            if ch == "X":
                rolls.append(10)
            elif ch == "/":
                rolls.append(10 - rolls[-1])
            elif ch == "-":
                rolls.append(0)
            else:
                rolls.append(int(ch))
    return rolls


# ---------------------------------------------------------------------------------------------
# Reference: conventional bowling scoring over ball pins, and the rules over outcome codes

def ref_cum(rolls):
    """Conventional scoring: 10 cumulative scores, -1 where not known yet."""
    cum, total, i = [], 0, 0
    for f in range(10):
        if i >= len(rolls):
            break
        if rolls[i] == 10:                                # strike
            if i + 2 >= len(rolls):
                break
            total += 10 + rolls[i + 1] + rolls[i + 2]
            i += 1
        else:
            if i + 1 >= len(rolls):
                break
            if rolls[i] + rolls[i + 1] == 10:             # spare
                if i + 2 >= len(rolls):
                    break
                total += 10 + rolls[i + 2]
            else:
                total += rolls[i] + rolls[i + 1]
            i += 2
        cum.append(total)
    return cum + [-1] * (10 - len(cum))


def ref_total(cum):
    known = [c for c in cum if c >= 0]
    return known[-1] if known else 0


class _Stop(Exception):
    pass


def ref_game(players, end, codes):
    """The rules over outcome codes, written plainly. Returns marks, rolls, over, the awaited
    ball (player, frame, ball), its prompt, and the outcome codes actually played."""
    marks = [[""] * 10 for _ in range(players)]
    rolls = [[] for _ in range(players)]
    state = {"i": 0, "pos": None, "prompt": PROMPT_PLACE_POCKET}

    def take(p, f, b, prompt):
        if state["i"] >= len(codes):
            state["pos"], state["prompt"] = (p, f, b), prompt
            raise _Stop
        state["i"] += 1
        return codes[state["i"] - 1]

    def fresh(p, f, b):
        c = take(p, f, b, PROMPT_PLACE_POCKET)
        kind, z = c >> 5, c & 31
        if kind in (K_ZENN, K_ZENN_HIT):
            n, ch = 10, "X"
        elif kind == K_SINK:
            n, ch = 9, "9"
        elif kind == K_REST:
            n = ref_value(z, end)
            ch = str(n) if n else "-"
        else:
            n, ch = 0, "-"
        marks[p][f] += ch
        rolls[p].append(n)
        return n, kind

    def spare(p, f, b, base, prev_kind):
        prompt = {K_REST: PROMPT_SHOOT, K_SINK: PROMPT_PLACE_PIN_POCKET}.get(prev_kind, PROMPT_PLACE_CENTER)
        c = take(p, f, b, prompt)
        kind = c >> 5
        if kind in (K_ZENN, K_ZENN_HIT):
            n, ch = 10 - base, "/"
        elif kind == K_SINK:
            n = 9 - base
            ch = str(n) if n else "-"
        else:
            n, ch = 0, "-"
        marks[p][f] += ch
        rolls[p].append(n)
        return n

    over = False
    try:
        for f in range(10):
            for p in range(players):
                n1, k1 = fresh(p, f, 0)
                if f < 9:
                    if n1 < 10:
                        spare(p, f, 1, n1, k1)
                    continue
                if n1 == 10:
                    n2, k2 = fresh(p, f, 1)
                    if n2 == 10:
                        fresh(p, f, 2)
                    else:
                        spare(p, f, 2, n2, k2)
                elif n1 + spare(p, f, 1, n1, k1) == 10:
                    fresh(p, f, 2)
        over = True
    except _Stop:
        pass
    return {"marks": marks, "rolls": rolls, "over": over, "pos": state["pos"],
            "prompt": PROMPT_GAME_OVER if over else state["prompt"], "played": codes[:state["i"]]}


# ---------------------------------------------------------------------------------------------
# The runtimes: the drv fixture (tests/conftest.py), one driver process per runtime

def events(out):
    return [json.loads(line) for s in out["steps"] for line in s.get("ev", [])]


def shot_events(out):
    return [e for e in events(out) if e["ev"] == "shot"]


def lines(out):
    return [line for s in out["steps"] for line in s.get("ev", [])]


def st_of(step):
    player, frame, ball, over, prompt, split, nlog = step["st"]
    return {"player": player, "frame": frame, "ball": ball, "over": bool(over), "prompt": prompt,
            "last_split": bool(split), "nlog": nlog}


def check_against_reference(out, frames_per_player):
    """Marks as written, cum and totals as the conventional scorer has them."""
    fin = out["final"]
    for p, frames in enumerate(frames_per_player):
        want_marks = list(frames) + [""] * (10 - len(frames))
        assert fin["marks"][p] == want_marks
        cum = ref_cum(rolls_of(frames))
        assert fin["cum"][p] == cum
        assert fin["total"][p] == ref_total(cum)


# ---------------------------------------------------------------------------------------------
# The harness itself

def test_heap_lock_is_real_under_micropython(drv):
    assert_heap_lock_is_real(drv)


@pytest.mark.parametrize("path", ["scoreboard/events.py", "games/bowling.py"])
def test_firmware_compiles_for_rp2040(path, tmp_path):
    r = mpy_cross_armv6m(path, tmp_path)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------------------------
# events.py

def test_event_writer_compact_json_all_value_kinds(drv):
    calls = [["begin", "t"], ["int", "zero", 0], ["int", "small", 7], ["int", "neg", -5],
             ["int", "big", 123456789], ["int", "max", 2 ** 30 - 1], ["int", "min", -2 ** 30],
             ["str", "s", "b.e2"], ["str", "part", "hello", 1, 3], ["str", "ba", "9/", 0, -1, True],
             ["str", "esc", 'q"\\\n\x01'], ["bool", "t", True], ["bool", "f", False], ["null", "n"],
             ["arr", "a"], ["int", None, 1], ["int", None, -2], ["str", None, "x"], ["null", None],
             ["obj", None], ["int", "k", 3], ["close_obj"], ["arr", None], ["close_arr"],
             ["close_arr"], ["arr", "empty"], ["close_arr"], ["end"]]
    r = drv.run([{"op": "ew", "calls": calls}])["steps"][0]
    text = r["r"]
    assert text.endswith("\n") and text.count("\n") == 1 and " " not in text
    assert text.startswith('{"ev":"t","zero":0,"small":7,"neg":-5,"big":123456789,')
    assert json.loads(text) == {
        "ev": "t", "zero": 0, "small": 7, "neg": -5, "big": 123456789, "max": 2 ** 30 - 1,
        "min": -2 ** 30, "s": "b.e2", "part": "ell", "ba": "9/", "esc": 'q"\\\n\x01', "t": True,
        "f": False, "n": None, "a": [1, -2, "x", None, {"k": 3}, []], "empty": []}
    assert r["lines"] == 1


def test_event_writer_long_line_flushes_through_a_small_buffer(drv):
    calls = [["begin", "long"], ["arr", "v"]] + [["int", None, i * 1001 - 50000] for i in range(100)] \
        + [["close_arr"], ["end"], ["begin", "second"], ["end"]]
    r = drv.run([{"op": "ew", "size": 16, "calls": calls}])["steps"][0]
    first, second, rest_ = r["r"].split("\n")
    assert json.loads(first) == {"ev": "long", "v": [i * 1001 - 50000 for i in range(100)]}
    assert json.loads(second) == {"ev": "second"} and rest_ == ""
    assert r["writes"] > len(first) // 16            # flushed whenever the 16 bytes filled


def test_event_writer_random_ints(drv):
    rnd = random.Random(7)
    vals = [rnd.randint(-2 ** 30, 2 ** 30 - 1) for _ in range(200)] + [-1, 1, -9, 9, -10, 10, 99, -100]
    calls = [["begin", "n"], ["arr", "v"]] + [["int", None, v] for v in vals] + [["close_arr"], ["end"]]
    r = drv.run([{"op": "ew", "size": 64, "calls": calls}])["steps"][0]
    assert json.loads(r["r"])["v"] == vals


# ---------------------------------------------------------------------------------------------
# Start

@pytest.mark.parametrize("players,end", [(1, 0), (6, 1), (2, 0)])
def test_start_event_and_first_prompt(drv, players, end):
    out = drv.run([start(players, end)])
    assert out["steps"][0]["r"] is True
    assert events(out) == [{"ev": "game", "game": "bowling", "players": players, "shooter_end": "ab"[end]}]
    assert lines(out)[0] == '{"ev":"game","game":"bowling","players":%d,"shooter_end":"%s"}' % (players, "ab"[end])
    s = st_of(out["steps"][0])
    assert (s["player"], s["frame"], s["ball"], s["over"], s["prompt"], s["nlog"]) == \
        (0, 0, 0, False, PROMPT_PLACE_POCKET, 0)


def test_start_rejects_bad_arguments(drv):
    out = drv.run([start(0, 0), start(7, 0), start(2, 2), start(1, -1)])
    assert [s["r"] for s in out["steps"]] == [False] * 4
    assert events(out) == []


def test_start_again_resets_everything(drv):
    out = drv.run(game_ops([["X", "X", "9/"]]) + [start(1, 0)] + frame_ops("54"))
    check_against_reference(out, [["54"]])


# ---------------------------------------------------------------------------------------------
# Whole games

@pytest.mark.parametrize("end", [0, 1])
def test_perfect_game_is_300(drv, end):
    out = drv.run([start(1, end)] + [zenn(end)] * 12)
    assert out["final"]["marks"][0] == ["X"] * 9 + ["XXX"]
    assert out["final"]["cum"][0] == [30 * (f + 1) for f in range(10)]
    assert out["final"]["total"] == [300]
    assert st_of(out["steps"][-1])["over"] and st_of(out["steps"][-1])["prompt"] == PROMPT_GAME_OVER
    go = events(out)[-1]
    assert go == {"ev": "game_over", "game": "bowling",
                  "players": [{"frames": ["X"] * 9 + ["XXX"], "cum": [30 * (f + 1) for f in range(10)],
                               "total": 300}]}


def test_thirteenth_zenn_is_ignored_after_game_over(drv):
    out = drv.run([start(1, 0)] + [zenn()] * 13 + [{"op": "out", "code": K_ZENN << 5 | ZID["b.cup"]}])
    assert out["steps"][-2]["r"] == -1 and out["steps"][-2]["ev"] == []
    assert out["steps"][-1]["r"] is False
    assert out["final"]["total"] == [300]


@pytest.mark.parametrize("how", ["own_cup", "off_board", "center", "gone"])
def test_all_gutters(drv, how):
    shot = {"own_cup": own(), "off_board": off_board(), "center": rest("center"), "gone": gone()}[how]
    out = drv.run([start(1, 0)] + [shot] * 20)
    assert out["final"]["marks"][0] == ["--"] * 10
    assert out["final"]["cum"][0] == [0] * 10 and out["final"]["total"] == [0]
    shots = shot_events(out)
    assert [e["result"] for e in shots[:2]] == ["gutter", "no_basket"]
    assert all(e["pins"] == 0 and e["mark"] == "-" for e in shots)
    # where the chip goes for the spare attempt after a gutter
    want = PROMPT_SHOOT if how == "center" else PROMPT_PLACE_CENTER
    assert st_of(out["steps"][1])["prompt"] == want
    assert st_of(out["steps"][2])["prompt"] == PROMPT_PLACE_POCKET
    assert events(out)[-1]["players"][0]["total"] == 0


def test_gutter_zone_fields(drv):
    out = drv.run([start(1, 0), own(), rest("center"), off_board(), gone()])
    z = [e["zone"] for e in shot_events(out)]
    assert z == ["a.cup", "center", "off", None]


def test_all_spares_from_rest(drv):
    frames = ["8/"] * 9 + ["8/8"]
    out = drv.run(game_ops([frames]))
    check_against_reference(out, [frames])
    assert out["final"]["total"] == [180]
    assert st_of(out["steps"][1])["prompt"] == PROMPT_SHOOT          # spare from where it lies


def test_all_spares_from_pin_pocket(drv):
    # a sink without Zenn counts 9 (contract 4.1); the chip goes to the pin-side pocket and a
    # Zenn from there is a spare (contract 4.2)
    ops = [start(1, 0)]
    for f in range(10):
        ops += [sink(), zenn()]
    ops.append(sink())
    out = drv.run(ops)
    assert out["final"]["marks"][0] == ["9/"] * 9 + ["9/9"]
    assert out["final"]["total"] == [190]
    assert st_of(out["steps"][1])["prompt"] == PROMPT_PLACE_PIN_POCKET
    assert [e["result"] for e in shot_events(out)[:2]] == ["sink9", "spare"]


def test_rest_in_pin_pocket_counts_9_and_spare_from_there(drv):
    out = drv.run([start(1, 0), rest("p.pocket", "p.cup3"), zenn(), rest("p.pocket"), zenn()])
    sh = shot_events(out)
    assert [(e["pins"], e["mark"], e["zone"]) for e in sh] == \
        [(9, "9", "b.cup3"), (1, "/", "b.cup"), (9, "9", "b.pocket"), (1, "/", "b.cup")]
    assert st_of(out["steps"][1])["prompt"] == PROMPT_SHOOT


def test_six_players_mixed_game(drv):
    rnd = random.Random(6)
    choices = ["X", "9/", "72", "81", "-/", "5-", "--", "9-", "63", "7/", "X"]
    tenth = ["XXX", "X72", "X9/", "9/X", "81", "-/-", "X--", "7/5", "XX9", "X-/"]
    frames = [[rnd.choice(choices) for _ in range(9)] + [tenth[p]] for p in range(6)]
    out = drv.run(game_ops(frames, end=1))
    check_against_reference(out, frames)
    go = events(out)[-1]
    assert go["ev"] == "game_over" and len(go["players"]) == 6
    for p in range(6):
        assert go["players"][p]["frames"] == frames[p]
        assert go["players"][p]["cum"] == ref_cum(rolls_of(frames[p]))
    # turns: each player plays one frame, then the next player
    players_in_order = [e["player"] for e in shot_events(out)]
    firsts = [e["player"] for e in shot_events(out) if e["ball"] == 1 and e["frame"] < 10]
    assert firsts == [p + 1 for f in range(9) for p in range(6)]
    assert players_in_order[-1] == 6


def test_game_over_line_exact(drv):
    frames = ["X", "9/", "72", "X", "X", "-/", "81", "9-", "X", "X9/"]
    out = drv.run(game_ops([frames, ["--"] * 10]))
    cum = ref_cum(rolls_of(frames))
    want = {"ev": "game_over", "game": "bowling",
            "players": [{"frames": frames, "cum": cum, "total": cum[-1]},
                        {"frames": ["--"] * 10, "cum": [0] * 10, "total": 0}]}
    assert lines(out)[-1] == json.dumps(want, separators=(",", ":"))
    assert cum[-1] == 171


def test_shot_event_fields(drv):
    out = drv.run([start(2, 0), zenn(), rest("p.e2", "center"), sink()])
    sh = [json.loads(s["ev"][0]) for s in out["steps"][1:]]
    assert list(sh[0]) == ["ev", "player", "game", "frame", "ball", "pins", "mark", "result", "zone",
                           "split", "total"]
    assert sh[0] == {"ev": "shot", "player": 1, "game": "bowling", "frame": 1, "ball": 1, "pins": 10,
                     "mark": "X", "result": "strike", "zone": "b.cup", "split": False, "total": 0}
    assert sh[1] == {"ev": "shot", "player": 2, "game": "bowling", "frame": 1, "ball": 1, "pins": 8,
                     "mark": "8", "result": "pins", "zone": "b.e2", "split": False, "total": 0}
    assert sh[2] == {"ev": "shot", "player": 2, "game": "bowling", "frame": 1, "ball": 2, "pins": 1,
                     "mark": "1", "result": "sink9", "zone": "b.cup", "split": False, "total": 9}


# ---------------------------------------------------------------------------------------------
# The pin table

@pytest.mark.parametrize("end", [0, 1])
def test_pin_table_every_zone_from_both_ends(drv, end):
    rels = sorted(PIN_TABLE)
    ops = []
    for rel in rels:
        ops += [start(1, end), rest(rel, end=end)]
    out = drv.run(ops)
    got = [shot_events({"steps": [s]})[0] for s in out["steps"][1::2]]
    for rel, e in zip(rels, got):
        want = PIN_TABLE[rel]
        assert (rel, e["pins"]) == (rel, want)
        assert e["zone"] == zone(rel, end)
        assert e["mark"] == (str(want) if want else "-")
        assert e["result"] == ("pins" if want else "gutter")


@pytest.mark.parametrize("end", [0, 1])
@pytest.mark.parametrize("rels,pins,gives", [
    (("s.back4", "s.cup3"), 2, "s.cup3"),
    (("s.cup3", "s.zline", "s.z3"), 4, "s.z3"),
    (("s.z3", "s.e2"), 6, "s.e2"),
    (("s.n3", "s.n2"), 6, "s.n2"),
    (("center", "s.n3"), 3, "s.n3"),            # center and a strip: the strip
    (("center", "p.z3"), 7, "p.z3"),
    (("center", "p.e2", "p.n2"), 8, "p.e2"),
    (("p.z3", "p.e2"), 8, "p.e2"),
    (("p.back4", "p.cup3"), 9, "p.cup3"),
    (("p.zline", "p.n3"), 7, "p.n3"),
    (("p.zline", "p.pocket", "p.cup3"), 9, "p.cup3"),
    (("center", "s.zline"), 0, "center"),
    (("s.back4", "p.back4"), 5, "p.back4"),     # not on a real board, but the max still holds
])
def test_overlap_takes_the_highest_value(drv, end, rels, pins, gives):
    out = drv.run([start(1, end), rest(*rels, end=end)])
    e = shot_events(out)[0]
    assert (e["pins"], e["zone"]) == (pins, zone(gives, end))


def test_rest_on_no_zone_counts_as_gone_and_off_bit_as_off(drv):
    out = drv.run([start(1, 0), {"op": "shot", "fate": REST, "mask": 0},
                  {"op": "shot", "fate": REST, "mask": 1 << ZID["off"]}])
    sh = shot_events(out)
    assert [(e["pins"], e["result"], e["zone"]) for e in sh] == [(0, "gutter", None), (0, "no_basket", "off")]
    assert st_of(out["steps"][1])["prompt"] == PROMPT_PLACE_CENTER


def test_classify_outcome_codes(drv):
    ops = [start(1, 1)]
    shots = [zenn(1), zenn(1, hit=1), sink(1), own(1), off_board(), gone(), rest("p.e2", end=1),
             rest("center", end=1)]
    for s in shots:
        ops.append(dict(s, op="classify"))
    out = drv.run(ops)
    assert [s["r"] for s in out["steps"][1:]] == [
        K_ZENN << 5 | ZID["a.cup"], K_ZENN_HIT << 5 | ZID["a.cup"], K_SINK << 5 | ZID["a.cup"],
        K_OWN << 5 | ZID["b.cup"], K_OFF << 5 | ZID["off"], K_GONE << 5 | ZID["off"],
        K_REST << 5 | ZID["a.e2"], K_REST << 5 | ZID["center"]]
    assert st_of(out["steps"][-1])["nlog"] == 0 and events(out)[1:] == []


def test_zenn_into_own_cup_is_a_gutter(drv):
    # the gate of the shooter's own cup does not make a Zenn
    out = drv.run([start(1, 0), {"op": "shot", "fate": CUP_A, "zenn": CUP_A}])
    assert shot_events(out)[0]["result"] == "gutter"


def test_classify_uses_only_the_mover(drv):
    # slot 0: a big chip knocked into the pin cup; slot 1, the mover: the small chip at rest
    chips = [[pin_cup(0), 0], [REST, 1 << ZID["a.e2"]]]
    out = drv.run([start(1, 0), {"op": "shot", "chips": chips, "mover": 1, "zenn": 0},
                  {"op": "shot", "chips": [[REST, 1 << ZID["b.e2"]], [pin_cup(0), 0]], "mover": -1}])
    sh = shot_events(out)
    assert (sh[0]["pins"], sh[0]["zone"]) == (6, "a.e2")
    assert sh[1]["result"] == "no_basket"                 # slot 0 at rest: no basket


# ---------------------------------------------------------------------------------------------
# Sinks without a Zenn

def test_sink_not_zenned_first_ball_counts_9(drv):
    out = drv.run([start(1, 0), sink()])
    e = shot_events(out)[0]
    assert (e["pins"], e["mark"], e["result"], e["zone"]) == (9, "9", "sink9", "b.cup")
    assert st_of(out["steps"][1])["prompt"] == PROMPT_PLACE_PIN_POCKET


@pytest.mark.parametrize("first,marks", [("p.back4", "54"), ("center", "-9"), ("p.cup3", "9-"),
                                         ("s.back4", "18")])
def test_sink_not_zenned_second_ball_makes_the_frame_9(drv, first, marks):
    out = drv.run([start(1, 0), rest(first), sink()])
    assert out["final"]["marks"][0][0] == marks
    assert out["final"]["cum"][0][0] == 9
    assert shot_events(out)[1]["result"] == "sink9"


def test_second_ball_own_cup_off_rest_are_no_basket(drv):
    out = drv.run([start(1, 0), rest("p.n2"), own(), rest("p.n2"), off_board(), rest("p.n2"),
                  rest("p.cup3"), rest("p.n2"), gone()])
    assert out["final"]["marks"][0][:4] == ["8-"] * 4
    assert out["final"]["cum"][0][:4] == [8, 16, 24, 32]
    assert [e["result"] for e in shot_events(out)[1::2]] == ["no_basket"] * 4


# ---------------------------------------------------------------------------------------------
# The tenth frame

TENTH_SHAPES = {
    "XXX": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET],
    "X72": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "X9/": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "XX9": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET],
    "X--": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "X-/": [PROMPT_PLACE_POCKET, PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "9/X": [PROMPT_PLACE_POCKET, PROMPT_SHOOT, PROMPT_PLACE_POCKET],
    "-/-": [PROMPT_PLACE_POCKET, PROMPT_SHOOT, PROMPT_PLACE_POCKET],
    "7/5": [PROMPT_PLACE_POCKET, PROMPT_SHOOT, PROMPT_PLACE_POCKET],
    "81": [PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "9-": [PROMPT_PLACE_POCKET, PROMPT_SHOOT],
    "--": [PROMPT_PLACE_POCKET, PROMPT_SHOOT],
}


@pytest.mark.parametrize("tenth", sorted(TENTH_SHAPES))
def test_tenth_frame_shapes(drv, tenth):
    frames = ["X", "9/", "72"] * 3 + [tenth]
    out = drv.run(game_ops([frames]))
    check_against_reference(out, [frames])
    steps = out["steps"]
    n = len(tenth)
    # the prompt before each tenth-frame ball, and the game ends after exactly those balls
    before = [st_of(s)["prompt"] for s in steps[-n - 1:-1]]
    assert before == TENTH_SHAPES[tenth]
    assert [st_of(s)["ball"] for s in steps[-n - 1:-1]] == list(range(n))
    assert st_of(steps[-1])["over"] and not st_of(steps[-2])["over"]
    assert [e["ball"] for e in shot_events(out)[-n:]] == list(range(1, n + 1))


def test_tenth_frame_sink_after_strike_goes_to_pin_pocket(drv):
    ops = [start(1, 0)] + [zenn()] * 9 + [zenn(), sink()]
    out = drv.run(ops)
    assert st_of(out["steps"][-1])["prompt"] == PROMPT_PLACE_PIN_POCKET
    out = drv.run(ops + [zenn()])
    assert out["final"]["marks"][0][9] == "X9/"
    assert out["final"]["total"] == [289] == [ref_cum([10] * 10 + [9, 1])[-1]]


def test_tenth_frame_off_board_after_spare_is_a_fresh_gutter(drv):
    out = drv.run(game_ops([["--"] * 9 + ["9/"]]) + [off_board()])
    assert out["final"]["marks"][0][9] == "9/-" and out["final"]["total"] == [10]
    assert shot_events(out)[-1]["result"] == "gutter"


# ---------------------------------------------------------------------------------------------
# Splits

def test_split_is_a_spare_after_a_hit(drv):
    out = drv.run([start(1, 0), rest("p.z3"), zenn(hit=1), rest("p.z3"), zenn(), zenn(hit=1),
                  rest("p.z3"), sink(hit=1)])
    sh = shot_events(out)
    assert [e["split"] for e in sh] == [False, True, False, False, False, False, False]
    flags = [st_of(s)["last_split"] for s in out["steps"][1:]]
    assert flags == [False, True, False, False, False, False, False]
    assert out["final"]["split"][0][:4] == [True, False, False, False]
    assert out["final"]["marks"][0][:4] == ["7/", "7/", "X", "72"]
    # the score is not affected
    assert out["final"]["cum"][0][:2] == [17, 37]


def test_split_survives_undo_replay(drv):
    out = drv.run([start(1, 0), rest("p.z3"), zenn(hit=1), rest("p.e2"), UNDO])
    assert st_of(out["steps"][-1])["last_split"] is True
    assert out["final"]["split"][0][0] is True


# ---------------------------------------------------------------------------------------------
# Undo

def test_undo_one_ball(drv):
    out = drv.run([start(1, 0), rest("p.e2"), UNDO, rest("p.z3"), zenn()])
    assert events(out)[2] == {"ev": "undo", "player": 1, "frame": 1, "ball": 1,
                              "put_back": "a.pocket"}
    assert st_of(out["steps"][2])["prompt"] == PROMPT_PLACE_POCKET
    assert out["final"]["marks"][0][0] == "7/"


def test_undo_across_frames_and_players(drv):
    ops = game_ops([["X", "9/"], ["72", "X"]])
    out = drv.run(ops + [UNDO, UNDO, UNDO])
    u = [e for e in events(out) if e["ev"] == "undo"]
    # undone: p2 f2 X, then p1 f2 '/', then p1 f2 '9'
    # put_back: where the chip goes for the ball to play again (the pocket for a first ball,
    # where the first ball left it for a second)
    assert u == [{"ev": "undo", "player": 2, "frame": 2, "ball": 1, "put_back": "a.pocket"},
                 {"ev": "undo", "player": 1, "frame": 2, "ball": 2, "put_back": "b.cup3"},
                 {"ev": "undo", "player": 1, "frame": 2, "ball": 1, "put_back": "a.pocket"}]
    s = st_of(out["steps"][-1])
    assert (s["player"], s["frame"], s["ball"], s["prompt"]) == (0, 1, 0, PROMPT_PLACE_POCKET)
    assert out["final"]["marks"] == [["X"] + [""] * 9, ["72"] + [""] * 9]
    assert out["final"]["cum"][1][0] == 9 and out["final"]["cum"][0][0] == -1
    # and a second ball undone brings its prompt back
    out = drv.run(game_ops([["X", "9/"], ["72", "X"]]) + [UNDO, UNDO])
    s = st_of(out["steps"][-1])
    assert (s["player"], s["frame"], s["ball"], s["prompt"]) == (0, 1, 1, PROMPT_SHOOT)


def test_undo_back_to_start_and_past_it(drv):
    out = drv.run([start(2, 1), zenn(1), sink(1), UNDO, UNDO, UNDO])
    assert [s["r"] for s in out["steps"][3:]] == [True, True, False]
    assert out["steps"][-1]["ev"] == []
    s = st_of(out["steps"][-1])
    assert (s["player"], s["frame"], s["ball"], s["nlog"], s["prompt"]) == (0, 0, 0, 0, PROMPT_PLACE_POCKET)
    assert out["final"]["marks"] == [[""] * 10] * 2 and out["final"]["total"] == [0, 0]


def test_undo_after_game_over_reopens_the_game(drv):
    out = drv.run([start(1, 0)] + [zenn()] * 12 + [UNDO, rest("p.e2")])
    s = st_of(out["steps"][-2])
    assert not s["over"] and (s["frame"], s["ball"], s["prompt"]) == (9, 2, PROMPT_PLACE_POCKET)
    assert events(out)[-3] == {"ev": "undo", "player": 1, "frame": 10, "ball": 3,
                               "put_back": "a.pocket"}
    assert out["final"]["marks"][0][9] == "XX8" and out["final"]["total"] == [298]
    assert events(out)[-1]["ev"] == "game_over"


def test_undo_everything_matches_replay(drv):
    frames = ["X", "9/", "72", "X", "X", "-/", "81", "9-", "X", "X9/"]
    ops = game_ops([frames])
    out = drv.run(ops + [UNDO] * 5 + ops[-5:])
    check_against_reference(out, [frames])


def test_apply_outcome_rejects_invalid_codes(drv):
    out = drv.run([{"op": "out", "code": K_ZENN << 5}, start(1, 0), {"op": "out", "code": 7 << 5 | 11},
                  {"op": "out", "code": 20}, {"op": "out", "code": 31},
                  {"op": "out", "code": K_REST << 5 | ZID["b.e2"]}])
    assert [s["r"] for s in out["steps"]] == [False, True, False, False, False, True]
    assert st_of(out["steps"][-1])["nlog"] == 1


# ---------------------------------------------------------------------------------------------
# Property: random outcome sequences (with undos) against the reference

def canonical(kind, z, end):
    if kind == K_REST:
        return z
    if kind in (K_ZENN, K_ZENN_HIT, K_SINK):
        return kind << 5 | ZID[zone("p.cup", end)]
    if kind == K_OWN:
        return kind << 5 | ZID[zone("s.cup", end)]
    return kind << 5 | ZID["off"]


def shot_for(code, end):
    kind, z = code >> 5, code & 31
    if kind == K_REST:
        return {"op": "shot", "fate": REST, "mask": 1 << z}
    return {K_ZENN: zenn(end), K_ZENN_HIT: zenn(end, hit=1), K_SINK: sink(end), K_OWN: own(end),
            K_OFF: off_board(), K_GONE: gone()}[kind]


KINDS = [K_ZENN] * 6 + [K_ZENN_HIT, K_SINK, K_SINK, K_OWN, K_OFF, K_GONE] + [K_REST] * 6


def play_and_check(r, players, end, seq, via_shots):
    ops = [start(players, end)]
    for item in seq:
        if item == "undo":
            ops.append(UNDO)
            continue
        kind, z = item
        code = canonical(kind, z, end)
        op = shot_for(code, end) if via_shots else {"op": "out", "code": code}
        ops.append(dict(op, want=code))
    out = r.run(ops)
    # the reference, step by step
    played = []
    for op, step in zip(ops[1:], out["steps"][1:]):
        if op is UNDO:
            assert step["r"] is (len(played) > 0)
            if played:
                played.pop()
        elif ref_game(players, end, played)["over"]:
            assert step["r"] in (False, -1) and step["ev"] == []      # ignored after game over
        else:
            code = op["want"]
            assert step["r"] == (code if via_shots else True)         # classify round trip
            played.append(code)
            ref = ref_game(players, end, played)
            if via_shots:
                e = json.loads(step["ev"][0])
                q = e["player"] - 1
                assert e["pins"] == ref["rolls"][q][-1]
                assert e["mark"] == ref["marks"][q][e["frame"] - 1][-1]
                assert e["ball"] == len(ref["marks"][q][e["frame"] - 1])
                totals = [ref_total(ref_cum(x)) for x in ref["rolls"]]
                assert e["total"] == totals[q]
                if ref["over"]:
                    go = json.loads(step["ev"][1])
                    assert go["players"] == [
                        {"frames": ref["marks"][k], "cum": ref_cum(ref["rolls"][k]),
                         "total": totals[k]} for k in range(players)]
                else:
                    assert len(step["ev"]) == 1
        s = st_of(step)
        ref = ref_game(players, end, played)
        assert s["nlog"] == len(played)
        assert s["over"] == ref["over"]
        assert s["prompt"] == ref["prompt"]
        if not ref["over"]:
            assert (s["player"], s["frame"], s["ball"]) == ref["pos"]
    ref = ref_game(players, end, played)
    fin = out["final"]
    for p in range(players):
        cum = ref_cum(ref["rolls"][p])
        assert fin["marks"][p] == ref["marks"][p]
        assert fin["cum"][p] == cum
        assert fin["total"][p] == ref_total(cum) <= 300
        assert all(c <= 300 for c in fin["cum"][p])
    return ref


ITEM = st.one_of(st.tuples(st.sampled_from(KINDS), st.integers(0, 18)), st.just("undo"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(players=st.integers(1, 6), end=st.integers(0, 1), via_shots=st.booleans(),
       seq=st.lists(ITEM, max_size=140))
def test_property_random_sequences_match_reference(drv, players, end, via_shots, seq):
    play_and_check(drv, players, end, seq, via_shots)


def test_many_random_complete_games(drv):
    rnd = random.Random(2024)
    totals = []
    for g in range(40):
        players = rnd.randint(1, 3)
        end = rnd.randint(0, 1)
        seq = [(rnd.choice(KINDS), rnd.randint(0, 18)) for _ in range(21 * players)]
        if g % 3 == 0:
            seq = [x if rnd.random() > 0.15 else "undo" for x in seq] + [(K_ZENN, 0)] * 21 * players
        ref = play_and_check(drv, players, end, seq, via_shots=(g % 2 == 0))
        assert ref["over"]
        totals += [ref_total(ref_cum(x)) for x in ref["rolls"]]
    assert max(totals) <= 300 and len(set(totals)) > 10


# ---------------------------------------------------------------------------------------------
# Manual corrections (issue 7): the last ball set by hand, K_MANUAL = 7

K_MANUAL = 7


def correct(pins):
    return {"op": "correct", "pins": pins}


def test_correct_a_first_ball_every_value(drv):
    for pins in range(11):
        out = drv.run([start(1, 0), rest("p.e2"), correct(pins)])
        step = out["steps"][-1]
        assert step["r"] == K_MANUAL << 5 | pins
        undo, shot = [json.loads(x) for x in step["ev"]]
        assert undo == {"ev": "undo", "player": 1, "frame": 1, "ball": 1, "put_back": None}
        assert shot["manual"] is True and shot["zone"] is None and shot["pins"] == pins
        assert shot["result"] == ("strike" if pins == 10 else "pins" if pins else "gutter")
        st = st_of(step)
        assert st["nlog"] == 1
        if pins == 10:
            assert (st["frame"], st["ball"], st["prompt"]) == (1, 0, PROMPT_PLACE_POCKET)
        else:
            # a spare attempt from where the chip lies
            assert (st["frame"], st["ball"], st["prompt"]) == (0, 1, PROMPT_SHOOT)


def test_correct_a_spare_attempt_only_to_what_the_rules_allow(drv):
    # after a 6: no basket (0), a sink without a Zenn (3: the frame makes 9) or a spare (4)
    for pins, result, mark in ((0, "no_basket", "-"), (3, "sink9", "3"), (4, "spare", "/")):
        out = drv.run([start(1, 0), rest("s.e2"), rest("p.e2"), correct(pins)])
        assert out["steps"][-1]["r"] == K_MANUAL << 5 | pins
        shot = json.loads(out["steps"][-1]["ev"][1])
        assert (shot["result"], shot["mark"], shot["ball"]) == (result, mark, 2)
        assert out["final"]["marks"][0][0] == "6" + mark
    for pins in (1, 2, 5, 6, 10, 11, -1):
        out = drv.run([start(1, 0), rest("s.e2"), rest("p.e2"), correct(pins)])
        assert out["steps"][-1]["r"] == -1
        assert out["final"]["marks"][0][0] == "6-"          # nothing changed
        assert st_of(out["steps"][-1])["nlog"] == 2


def test_correct_with_nothing_played_does_nothing(drv):
    out = drv.run([start(2, 1), correct(5)])
    assert out["steps"][-1]["r"] == -1
    assert st_of(out["steps"][-1])["nlog"] == 0


def test_correct_the_last_ball_of_a_game_reopens_and_ends_it_again(drv):
    frames = ["X"] * 9 + ["XX9"]
    ops = game_ops([frames])
    out = drv.run(ops + [correct(10)])
    last = out["steps"][-1]
    kinds = [json.loads(x)["ev"] for x in last["ev"] if x]
    assert kinds == ["undo", "shot", "game_over"]
    assert json.loads(last["ev"][2])["players"][0]["total"] == 300
    check_against_reference(out, [["X"] * 9 + ["XXX"]])


def test_manual_outcomes_replay_like_the_live_game(drv):
    # the journal replays K_MANUAL codes through apply_outcome: same marks and scores
    out = drv.run([start(1, 0), rest("p.e2"), correct(3), zenn(), correct(0), rest("p.z3")])
    live = out["final"]
    out2 = drv.run([start(1, 0), {"op": "out", "code": K_MANUAL << 5 | 3},
                   {"op": "out", "code": K_MANUAL << 5 | 0}, {"op": "out", "code": K_REST << 5 | ZID["b.z3"]}])
    assert out2["final"] == live
    assert live["marks"][0][:2] == ["3-", "7"]
    # invalid manual codes are refused like any bad outcome
    out3 = drv.run([start(1, 0), {"op": "out", "code": K_MANUAL << 5 | 11},
                   {"op": "out", "code": K_MANUAL << 5 | 6}, {"op": "out", "code": K_MANUAL << 5 | 5},
                   {"op": "out", "code": K_MANUAL << 5 | 4}, {"op": "out", "code": K_MANUAL << 5 | 3}])
    assert [s["r"] for s in out3["steps"]] == [True, False, True, False, True, True]
    assert out3["final"]["marks"][0][:2] == ["6/", "3"]
