"""A shot's event lines go out after its score is shown (issue 13: rest -> score shown on the
RP2040), and nothing else about them changes.

app.py plays a shot silent (the game's ev None) and has its lines written by the game's
shot_lines() once the verdict's screen is flushed, or earlier, before any other line begins or
a button can change the game (events.EventWriter.put_off / due). tests/support/shot_lines.py runs
whole games under the MicroPython unix port and, at every shot line's write, compares the
simulated OLED's RAM (what is on show) with what it shows once the app has nothing left to draw
or send (issue 13: the verdict's redraw and pages go out over the loop turns after its own):

- with the lines put off, every shot line finds the verdict's screen on the panel already;
- the control, the same games with the games writing their lines in on_shot() as before (app's
  lines_later cleared), finds it not yet there: the check can fail;
- the event stream is byte for byte the same both ways (lines neither lost, nor reordered, nor
  changed), and has every shot the games played.
"""
import json
import os

import pytest

from runtimes import run_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "support", "shot_lines.py")
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")

pytestmark = pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no MicroPython unix port")


def bowling():
    from boardsim.compile import compile_scenario
    from boardsim.scenario import parse
    with open(os.path.join(ROOT, "examples", "bowling_demo.json")) as f:
        return compile_scenario(parse(json.load(f)))


def trap():
    from tests.test_rp2040 import trap_game
    return trap_game("micropython").timeline()


def watch(tl, later):
    return run_target(None, "micropython", {"timeline": tl, "later": later}, name=SCRIPT,
                      heapsize="8M", timeout=600, cwd=None, marker="RESULT ")[0]


@pytest.mark.parametrize("game", ["bowling", "trap"])
def test_shot_lines_go_out_after_the_score_is_shown_and_are_the_same(game):
    tl = bowling() if game == "bowling" else trap()
    now = watch(tl, 1)
    before = watch(tl, 0)
    shots = [ln for ln in now["lines"] if json.loads(ln).get("ev") == "shot"]
    assert len(shots) >= 3 and len(now["shown_first"]) == len(shots)
    # every shot line written once its screen was on the panel
    assert all(now["shown_first"]), now["shown_first"]
    # the control: written in on_shot(), before the redraw, the panel still shows the old screen
    assert not any(before["shown_first"]), before["shown_first"]
    # and the stream itself is the same, byte for byte
    assert now["lines"] == before["lines"]
