"""Scenario loading and validation (CONTRACT section 2), and the CLI's answer to a bad one."""
import json
import os
import subprocess
import sys

import pytest

from boardsim.scenario import ScenarioError, load, loads, parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scn(steps=(), **top):
    obj = {"game": "bowling", "players": 2, "options": {}, "steps": list(steps)}
    obj.update(top)
    return obj


def err(obj):
    with pytest.raises(ScenarioError) as e:
        parse(obj) if not isinstance(obj, str) else loads(obj)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_contract_example_parses():
    s = load(os.path.join(ROOT, "examples", "contract_example.json"))
    assert (s.game, s.players, s.shooter_end, s.trapper) == ("bowling", 2, "a", None)
    assert s.steps[0] == ("place", {"small": "a.pocket"})
    assert s.steps[1] == ("shoot", "small", ["b.pocket", "b.cup"], [])
    assert s.steps[5] == ("shoot", "small", [("hit", "side"), "b.pocket", "b.cup"], [])
    assert s.steps[6:] == [("press", "undo"), ("wait", 1500)]


def test_all_forms():
    s = parse(scn([
        {"place": {"small": "a.e2|a.n2", "big1": {"x": 10, "y": -20.5}, "big2": "center"}},
        {"shoot": "big1", "path": ["a.zline", {"hit": "b.block"}, {"x": 0, "y": 100}, "off"],
         "knocks": [{"chip": "small", "path": ["a.cup"]}]},
        {"take": "small"},
        {"power": "cut"}, {"power": "on"},
        {"press": "turn"},
        {"wait_ms": 0},
        {"_comment": "a step may carry comments", "press": "ok"},
    ], _about="comments are keys starting with _"))
    assert s.steps[0] == ("place", {"small": ("border", "a.e2", "a.n2"), "big1": ("point", 10.0, -20.5),
                                    "big2": "center"})
    assert s.steps[1] == ("shoot", "big1", ["a.zline", ("hit", "b.block"), ("point", 0.0, 100.0), "off"],
                          [("small", ["a.cup"])])
    assert [st[0] for st in s.steps[2:]] == ["take", "power", "power", "press", "wait", "press"]


@pytest.mark.parametrize("game,players,ok", [
    ("bowling", 1, True), ("bowling", 6, True), ("bowling", 0, False), ("bowling", 7, False),
    ("bowling", 2.0, False), ("bowling", True, False), ("bowling", "2", False),
    ("trap1", 2, True), ("trap2", 2, True), ("trap1", 3, False), ("trap2", 1, False),
])
def test_players(game, players, ok):
    obj = scn(game=game, players=players)
    if ok:
        assert parse(obj).players == players
    else:
        assert "players" in err(obj)


def test_games_and_defaults():
    assert "unknown game 'pool'" in err(scn(game="pool"))
    assert "game" in err({"players": 2, "steps": []})
    assert "players" in err({"game": "bowling", "steps": []})
    assert parse({"game": "trap1"}).players == 2          # trap games: always two
    assert parse({"game": "bowling", "players": 3}).steps == []


@pytest.mark.parametrize("options,fragment", [
    ({"trapper": 1}, "trap games only"),
    ({"shooter_end": "c"}, "shooter_end"),
    ({"speed": 3}, "unknown option 'speed'"),
])
def test_bowling_options(options, fragment):
    assert fragment in err(scn(options=options))


def test_trap_options():
    assert parse({"game": "trap2", "players": 2, "options": {"trapper": 2}}).trapper == 2
    assert "trapper" in err({"game": "trap1", "options": {"trapper": 3}})
    assert "trapper" in err({"game": "trap1", "options": {"trapper": "1"}})
    assert "bowling only" in err({"game": "trap1", "options": {"shooter_end": "b"}})
    assert parse(scn(options={"shooter_end": "b"})).shooter_end == "b"


def test_unknown_top_key():
    assert "unknown key 'step'" in err(scn(step=[]))
    assert "object" in err([1, 2])


@pytest.mark.parametrize("text,fragment", [
    ('{"game": "bowling",', "bad JSON"),
    ("", "bad JSON"),
    ('{"game": "bowling", "players": NaN}', "bad JSON"),
    ("{'game': 'bowling'}", "bad JSON"),
])
def test_bad_json(text, fragment):
    assert err(text).startswith(fragment)


@pytest.mark.parametrize("step,msg", [
    ({"place": {"small": "b.e9"}}, "step 2: unknown zone 'b.e9'"),
    ({"place": {"big7": "b.e2"}}, "step 2: unknown chip 'big7'"),
    ({"take": "big4"}, "step 2: unknown chip 'big4'"),
    ({"shoot": "small", "path": ["b.e9"]}, "step 2: unknown zone 'b.e9'"),
    ({"shoot": "small", "path": ["b.e2|b.e9"]}, "step 2: unknown zone 'b.e9'"),
    ({"shoot": "small", "path": ["b.e2|b.e2"]}, "step 2: bad border"),
    ({"shoot": "small", "path": ["a.e2|a.n2|a.n3"]}, "step 2: bad border"),
    ({"shoot": "small", "path": [{"hit": "top"}]}, "step 2: bad hit 'top'"),
    ({"shoot": "small", "path": ["b.cup", "b.e2"]}, "step 2: path: 'b.cup' must be the last waypoint"),
    ({"shoot": "small", "path": ["off", "b.e2"]}, "step 2: path: 'off' must be the last waypoint"),
    ({"shoot": "small", "path": []}, "step 2: path must be a non-empty list"),
    ({"shoot": "small"}, "step 2: shoot needs a 'path'"),
    ({"shoot": "small", "path": [{"x": 1}]}, "step 2: bad waypoint"),
    ({"shoot": "small", "path": [{"x": 1, "y": "2"}]}, "step 2: bad point"),
    ({"shoot": "small", "path": ["b.e2"], "knocks": [{"chip": "small", "path": ["b.e2"]}]},
     "step 2: small cannot knock itself"),
    ({"shoot": "small", "path": ["b.e2"], "knocks": [{"chip": "big1", "path": ["a.e2"]},
                                                      {"chip": "big1", "path": ["a.n2"]}]},
     "step 2: big1 moves twice"),
    ({"shoot": "small", "path": ["b.e2"], "knocks": [{"chip": "big1"}]}, "step 2: bad knock"),
    ({"shoot": "small", "path": ["b.e2"], "knocks": {"chip": "big1"}}, "step 2: knocks must be a list"),
    ({"shoot": "small", "path": ["b.e2"], "speed": 3}, "step 2: unknown key 'speed' in a shoot step"),
    ({"place": {"small": "b.cup"}}, "step 2: place target cannot be 'b.cup'"),
    ({"place": {"small": "off"}}, "step 2: place target cannot be 'off'"),
    ({"place": {}}, "step 2: place takes an object"),
    ({"place": "small"}, "step 2: place takes an object"),
    ({"press": "reset"}, "step 2: unknown button 'reset'"),
    ({"wait_ms": -1}, "step 2: bad wait_ms"),
    ({"wait_ms": 1.5}, "step 2: bad wait_ms"),
    ({"power": "off"}, "step 2: bad power 'off'"),
    ({"snapshot": 3}, "step 2: bad snapshot label 3"),
    ({"press": "ok", "take": "small"}, "step 2: one action per step"),
    ({"jump": 1}, "step 2: unknown key 'jump'"),
    ({}, "step 2: empty step"),
    ("press ok", "step 2: a step is an object"),
    ({"press": "ok", "ms": 3}, "step 2: unknown key 'ms' in a press step"),
])
def test_step_errors_name_the_step(step, msg):
    m = err(scn([{"wait_ms": 10}, step]))
    assert m.startswith(msg), m


def test_comment_steps_are_dropped_but_keep_the_numbering():
    s = parse(scn([{"_": "frame 1"}, {"press": "ok"}, {"_": "frame 2", "_who": "player 2"}, {"press": "next"}]))
    assert s.steps == [("press", "ok"), ("press", "next")]
    assert [s.number(i) for i in range(2)] == [2, 4]
    assert err(scn([{"_": "frame 1"}, {"press": "ok"}, {"press": "nope"}])).startswith("step 3: unknown button")


def test_examples_parse():
    for name in ("contract_example.json", "bowling_demo.json"):
        s = load(os.path.join(ROOT, "examples", name))
        assert s.game == "bowling" and s.players == 2 and s.steps


def test_steps_must_be_a_list():
    assert "steps" in err({"game": "bowling", "players": 2, "steps": {"press": "ok"}})


def test_load_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read"):
        load(str(tmp_path / "nope.json"))


def run_cli(tmp_path, obj):
    f = tmp_path / "s.json"
    f.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return subprocess.run([sys.executable, "-m", "boardsim", "run", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("obj,fragment", [
    (scn([{"place": {"small": "b.e9"}}]), "error: step 1: unknown zone 'b.e9'"),
    (scn([{"place": {"big7": "b.e2"}}]), "error: step 1: unknown chip 'big7'"),
    ('{"game": ', "error: bad JSON"),
    (scn([{"shoot": "small", "path": ["b.e2"]}]), "error: step 1: shoot small: it is in hand"),
])
def test_cli_malformed_scenario_exits_2_with_one_line(tmp_path, obj, fragment):
    p = run_cli(tmp_path, obj)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(fragment), p.stderr


def test_runtime_command_sets_the_target_path(monkeypatch):
    # (the venv's unix port: ZENN_MICROPYTHON, another one, has its own test below)
    monkeypatch.delenv("ZENN_MICROPYTHON", raising=False)
    from boardsim.runtime import RUNNER, command
    fw, tgt = os.path.join(ROOT, "firmware"), os.path.join(ROOT, "boardsim", "target")
    argv, env = command("cpython", "/tmp/t.jsonl", display=True)
    assert argv == [sys.executable, RUNNER, "/tmp/t.jsonl", "--display"]
    assert env["PYTHONPATH"].split(os.pathsep) == [fw, tgt]
    from boardsim.runtime import micropython_argv
    argv, env = command("micropython", "/tmp/t.jsonl", heapsize="256k", runner_args=["--stats"])
    start = micropython_argv(os.path.join(os.path.dirname(sys.executable), "micropython"))
    assert start[-1] == os.path.join(os.path.dirname(sys.executable), "micropython")
    assert argv[:len(start)] == start
    assert argv[len(start):] == ["-X", "heapsize=256k", RUNNER, "/tmp/t.jsonl", "--stats"]
    # (the same folders compiled to .mpy, boardsim/mpycache.py, come first where mpy-cross is)
    from boardsim import mpycache
    path = env["MICROPYPATH"].split(os.pathsep)
    i = path.index(fw)
    assert path[i:i + 2] == [fw, tgt]
    assert path[:i] == ([] if mpycache.mpy_cross() is None else [mpycache.built(fw), mpycache.built(tgt)])


def test_the_unix_port_started_without_its_script_runs_as_with_it(monkeypatch):
    # boardsim/runtime.py micropython_argv: the venv's unix port started as CPython without
    # site, straight into the port's main with the script's own argv. A short game on the
    # presence pads with a power cut: the same events and final state (the heap after boot
    # among it) as through the pip script
    from boardsim.runtime import micropython_argv, micropython_path
    monkeypatch.delenv("ZENN_MICROPYTHON", raising=False)    # (the venv's port, whatever make test uses)
    from boardsim.testing import run_timeline
    exe = micropython_path()
    if not os.path.exists(exe):
        pytest.skip("no MicroPython unix port in .venv")
    if micropython_argv(exe) == [exe]:
        pytest.skip("the unix port's script is not this interpreter's: started as it is")
    assert micropython_argv(exe)[0] == sys.executable
    tl = [{"op": "boot"}, {"op": "wait", "ms": 300}, {"op": "press", "button": "ok"},
          {"op": "snapshot", "label": "pressed"}, {"op": "power", "state": "cut"},
          {"op": "power", "state": "on"}, {"op": "wait", "ms": 200}]
    runs = []
    for script in ("0", "1"):
        monkeypatch.setenv("ZENN_MICROPYTHON_SCRIPT", script)
        r = run_timeline(tl, "micropython", config={"front_end": "shift"})
        runs.append((r.events, r.state))
    assert runs[0][1]["heap_after_boot"] and runs[0][0]
    assert runs[0] == runs[1]


def test_the_unix_port_named_by_zenn_micropython_plays_the_games(monkeypatch, tmp_path):
    # boardsim/runtime.py micropython_path: ZENN_MICROPYTHON names the unix port the runner's
    # games start (`make unixport`'s, built for speed). Here a wrapper of the venv's port that
    # leaves a mark: the game is played through it, with the events and final state it has
    # through the venv's port
    from boardsim.runtime import micropython_argv, micropython_path
    from boardsim.testing import run_timeline
    monkeypatch.delenv("ZENN_MICROPYTHON", raising=False)
    venv = micropython_path()
    if not os.path.exists(venv):
        pytest.skip("no MicroPython unix port in .venv")
    tl = [{"op": "boot"}, {"op": "wait", "ms": 300}, {"op": "press", "button": "ok"},
          {"op": "wait", "ms": 200}]
    before = run_timeline(tl, "micropython", config={"front_end": "shift"})
    mark = tmp_path / "started"
    wrapper = tmp_path / "micropython"
    wrapper.write_text("#!/bin/sh\necho $$ >> %s\nexec %s \"$@\"\n"
                       % (mark, " ".join("'%s'" % a for a in micropython_argv(venv))))
    wrapper.chmod(0o755)
    monkeypatch.setenv("ZENN_MICROPYTHON", str(wrapper))
    assert micropython_path() == str(wrapper)
    after = run_timeline(tl, "micropython", config={"front_end": "shift"})
    assert mark.read_text().count("\n") == 1
    assert before.events and (after.events, after.state) == (before.events, before.state)


@pytest.mark.parametrize("rt", ["micropython", "cpython"])
def test_runtime_passes_event_lines_through(rt):
    import io
    from boardsim import runtime
    out = io.StringIO()
    assert runtime.run([{"op": "boot"}, {"op": "wait", "ms": 50}], rt, stdout=out) == 0
    lines = out.getvalue().splitlines()
    assert lines and all(json.loads(ln)["ev"] for ln in lines)


@pytest.mark.parametrize("rt", ["micropython", "cpython"])
def test_runtime_failure_is_one_line_and_non_zero(rt):
    from boardsim import runtime
    with pytest.raises(runtime.RuntimeFailure) as e:
        runtime.run([{"op": "boot"}, {"op": "bogus"}], rt)
    assert e.value.status != 0
    assert "\n" not in str(e.value) and "bogus" in str(e.value)
