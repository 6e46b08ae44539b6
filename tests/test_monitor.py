"""tools/monitor: the live scoreboard and the saved games, fed by the real firmware in the
simulator, through a pipe and through a pseudo-terminal standing in for the Pico's USB serial
port (pyserial opens it as it would /dev/ttyACM0)."""
import io
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from boardsim import runtime
from boardsim.compile import compile_scenario
from boardsim.scenario import load
from tools import scoremon, screens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MONITOR = os.path.join(ROOT, "tools", "monitor")


def events_of(timeline):
    out = io.StringIO()
    runtime.run(timeline, "micropython", stdout=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def demo_lines():
    return events_of(compile_scenario(load(os.path.join(ROOT, "examples", "bowling_demo.json"))))


def test_bowling_cum():
    assert scoremon.bowling_cum([[10]] * 9 + [[10, 10, 10]]) == [30 * (i + 1) for i in range(10)]
    assert scoremon.bowling_cum([[9, 1]] * 9 + [[9, 1, 10]])[-1] == 191
    # a strike waits for two balls, a spare for one
    assert scoremon.bowling_cum([[10], [8]]) == [None] * 10
    assert scoremon.bowling_cum([[10], [8, 1], [9, 1]]) == [19, 28] + [None] * 8
    assert scoremon.bowling_cum([[0, 0]] * 10) == [0] * 10


def test_monitor_from_the_simulator_through_a_pipe(tmp_path, demo_lines):
    # the demo: two players, three frames, an undo; noise lines mixed in are ignored
    stream = "MicroPython v1.28 on the Pico\n>>> \n" + demo_lines
    p = subprocess.run([MONITOR, "-", "--dir", str(tmp_path), "--width", "110"], input=stream,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    saved = sorted(tmp_path.iterdir())
    assert len(saved) == 1 and saved[0].name.endswith("-bowling.jsonl")
    game = [json.loads(ln) for ln in saved[0].read_text().splitlines()]
    events = [json.loads(ln) for ln in demo_lines.splitlines()]
    assert game == events[1:]                       # from "game" on, undo included
    # the live view's last picture: marks and running totals per player, from the shots
    out = p.stdout
    assert "9/" in out and "3/" in out and "8-" in out and "last: P2 frame 3 ball 2" in out
    m = scoremon.Monitor()
    for ln in demo_lines.splitlines():
        m.feed(ln)
    last_total = {}
    for e in events:
        if e["ev"] == "shot":
            last_total[e["player"]] = e["total"]
    for pl in (1, 2):
        marks, pins = m.bowling_frames(pl)
        cum = [c for c in scoremon.bowling_cum(pins) if c is not None]
        assert cum[-1] == last_total[pl]            # the firmware's own running total
    assert m.bowling_frames(2)[0][:3] == ["8/", "3/", "8-"]     # the undone strike is gone
    # the saved game as a score sheet
    p = subprocess.run([MONITOR, "--sheet", str(saved[0]), "--width", "110"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "Zenn Bowling" in p.stdout and "the game did not end" in p.stdout
    assert " 39 " in p.stdout and " 30 " in p.stdout


def reading_port(proc, port, timeout=30.0):
    """Wait until `proc` has opened `port` and sleeps reading it: pyserial empties the port's
    input as it opens it, so what is written before is lost. Seen in /proc (Linux): the port
    among its files and the process asleep in select/poll, which it reaches only after the
    open (a fixed second before: the monitor reads within about 0.2 - 0.5 s). Elsewhere, that
    second."""
    if not os.path.exists(f"/proc/{proc.pid}/wchan"):
        time.sleep(1.0)
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        try:
            fds = os.listdir(f"/proc/{proc.pid}/fd")
            opened = any(os.readlink(f"/proc/{proc.pid}/fd/{fd}") == port for fd in fds)
            with open(f"/proc/{proc.pid}/wchan") as f:
                asleep = any(w in f.read() for w in ("poll", "select"))
        except OSError:                             # (a descriptor closed as it was read)
            opened = asleep = False
        if opened and asleep:
            return
        time.sleep(0.01)
    raise AssertionError(f"the monitor did not open {port}")


def test_monitor_on_a_serial_port(tmp_path):
    # a pseudo-terminal stands in for the Pico's USB serial port
    lines = events_of(screens.trap1().timeline())
    master, slave = os.openpty()
    port = os.ttyname(slave)
    proc = subprocess.Popen([MONITOR, port, "--dir", str(tmp_path), "--count", "1", "--plain",
                             "--width", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        reading_port(proc, port)                     # let it open the port
        # the device side: a banner, then the events in small pieces, as USB delivers them
        data = ("\r\nMicroPython v1.28.0 on 2026-01-01; Raspberry Pi Pico with RP2040\r\n" + lines).encode()
        for i in range(0, len(data), 61):
            os.write(master, data[i:i + 61])
            time.sleep(0.002)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, err
    saved = sorted(tmp_path.iterdir())
    assert len(saved) == 1 and saved[0].name.endswith("-trap1.jsonl")
    game = [json.loads(ln) for ln in saved[0].read_text().splitlines()]
    assert game[0]["ev"] == "game" and game[-1] == {"ev": "game_over", "game": "trap1", "winner": 1,
                                                    "trapper": 1, "shots": 2, "reason": "trapped_stuck"}
    assert "Trap Zenn 1 - game over" in out and "winner: P1" in out
    m = scoremon.sheet(str(saved[0]), scoremon.Console(file=io.StringIO(), width=100))
    assert m.over["reason"] == "trapped_stuck"


def test_monitor_saves_each_game_and_keeps_a_cut_one(tmp_path):
    m = scoremon.Monitor(str(tmp_path), clock=lambda: time.gmtime(0))
    m.feed('{"ev":"game","game":"trap1","trapper":1,"coin":false}')
    m.feed('{"ev":"shot","player":1,"game":"trap1","role":"trapper","chip":"big","shots":1,"left":14}')
    m.feed('{"ev":"game","game":"bowling","players":1,"shooter_end":"a"}')   # a new game: the first is kept as it was
    m.feed("not json")
    m.feed('{"ev":"shot","player":1,"game":"bowling","frame":1,"ball":1,"pins":10,"mark":"X","total":0}')
    m.close()
    names = sorted(os.listdir(tmp_path))
    assert names == ["19700101-000000-bowling.jsonl", "19700101-000000-trap1.jsonl"]
    assert len((tmp_path / names[1]).read_text().splitlines()) == 2
