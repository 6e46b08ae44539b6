"""CONTRACT.md section 2 and 3 as a user sees them: `python -m boardsim run` prints exactly the
firmware's event lines, the same under both runtimes, and refuses a malformed scenario with a
one-line reason and a non-zero status."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the example played under both runtimes once, on one test worker (tests/conftest.py)
ONE_WORKER = ("contract_runs",)


def run(path, runtime):
    return subprocess.run([sys.executable, "-m", "boardsim", "run", path, "--runtime", runtime],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def contract_runs():
    path = os.path.join(ROOT, "examples", "contract_example.json")
    return {rt: run(path, rt) for rt in ("micropython", "cpython")}


def test_contract_example_runs_to_its_end_under_both_runtimes(contract_runs):
    for rt, p in contract_runs.items():
        assert p.returncode == 0, (rt, p.stderr)
        lines = p.stdout.splitlines()
        assert lines and all("ev" in json.loads(ln) for ln in lines), rt


def test_both_runtimes_print_the_same_lines(contract_runs):
    assert contract_runs["micropython"].stdout == contract_runs["cpython"].stdout


def test_contract_example_scores(contract_runs):
    events = [json.loads(ln) for ln in contract_runs["micropython"].stdout.splitlines()]
    shots = [e for e in events if e["ev"] == "shot"]
    # player 1: a Zenn from the pocket (strike); player 2: 8 in b.e2, then off the side
    # bumper between the pin-side blocks into the cup: a spare, marked as a split
    assert [(s["player"], s["mark"]) for s in shots] == [(1, "X"), (2, "8"), (2, "/")]
    assert shots[2]["split"] is True
    assert events[-1]["ev"] == "undo" and events[-1]["player"] == 2


@pytest.mark.parametrize("body,reason", [
    ('{"game": "bowling", "players": 1, "steps": [{"place": {"small": "b.e9"}}]}', "unknown zone"),
    ('{"game": "bowling", "players": 1, "steps": [{"place": {"big7": "b.e2"}}]}', "unknown chip"),
    ('{"game": "bowling", "players": 1, "steps": [', "JSON"),
])
def test_a_malformed_scenario_is_refused_with_one_line(tmp_path, body, reason):
    f = tmp_path / "bad.json"
    f.write_text(body)
    p = run(str(f), "micropython")
    assert p.returncode != 0
    assert p.stdout == ""
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and reason.lower() in err[0].lower(), p.stderr
