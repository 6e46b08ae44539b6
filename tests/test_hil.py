"""tools/hil: everything up to the serial boundary. The device side runs on the MicroPython
unix port standing in for the Pico (a stand-in mpremote, tests/support/fake_mpremote.py,
keeps its flash in a directory); the HIL machine module's forwarding to real buses is checked
with stand-in buses. What only a real Pico can show is listed in docs/hil.md."""
import json
import os
import stat
import subprocess
import sys

import pytest

from boardsim.runtime import micropython_path
from tools import build_firmware, hil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the unix port the desktop games run on (make test's built one, else the venv's): the stand-in
# Pico's events are compared with a desktop run on it
MICROPYTHON = micropython_path()


def fake_mpremote(tmp_path):
    flash = tmp_path / "flash"
    flash.mkdir()
    exe = tmp_path / "mpremote"
    exe.write_text("#!/bin/sh\nexec %s %s \"$@\"\n" % (sys.executable,
                   os.path.join(ROOT, "tests", "support", "fake_mpremote.py")))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe), flash


def test_staged_files_and_commands(tmp_path):
    # what goes to the Pico: the firmware and the simulated table compiled for the RP2040, the
    # stand-in machine as simmachine, the HIL machine module, the timeline, the config
    tl = hil.timeline_of(os.path.join(ROOT, "examples", "bowling_demo.json"))
    cfg = tmp_path / "config.json"
    cfg.write_text('{"display": "both"}')
    files = hil.stage(tl, str(tmp_path / "stage"), "armv6m", str(cfg))
    names = sorted(os.path.relpath(f, tmp_path / "stage") for f in files)
    fw = [n[:-3] + ".mpy" for n in build_firmware.firmware_files(hil.FIRMWARE)
          if n not in hil.FIRMWARE_SKIP]
    tgt = [n[:-3] + ".mpy" for n in os.listdir(hil.TARGET)
           if n.endswith(".py") and n not in hil.HOST_ONLY + ("machine.py",)]
    assert set(fw) | set(tgt) | {"simmachine.mpy", "machine.mpy", "timeline.jsonl", "config.json"} == set(names)
    assert "main.mpy" not in names and "micropython.mpy" not in names
    lines = open(tmp_path / "stage" / "timeline.jsonl").read().splitlines()
    assert [json.loads(x) for x in lines] == tl
    cmds = hil.commands(files, "/dev/ttyACM0", "mpremote")
    # the firmware's folders (sensing/, tracking/ ...) made under hil/, one copy per folder
    dirs = sorted({n.rsplit("/", 1)[0] for n in names if "/" in n})
    assert "sensing" in dirs and "scoreboard" in dirs
    assert [c[:4] for c in cmds] == ([["mpremote", "connect", "/dev/ttyACM0", "exec"]]
                                     + [["mpremote", "connect", "/dev/ttyACM0", "fs"]] * (1 + len(dirs))
                                     + [["mpremote", "connect", "/dev/ttyACM0", "run"]])
    assert "os.mkdir('hil')" in cmds[0][4] and repr(dirs) in cmds[0][4]
    assert cmds[1][4] == "cp" and cmds[1][-1] == ":hil/"
    assert [c[-1] for c in cmds[2:-1]] == [f":hil/{d}/" for d in dirs]
    assert sorted(f for c in cmds[1:-1] for f in c[5:-1]) == sorted(files)
    assert cmds[-1][4].endswith("tools/hil_device/hil_main.py")


def test_dry_run_prints_and_runs_nothing(tmp_path, capsys):
    exe, flash = fake_mpremote(tmp_path)
    assert hil.main([os.path.join(ROOT, "examples", "bowling_demo.json"), "--dry-run",
                     "--mpremote", exe]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 3 and out[-1].endswith("hil_main.py")     # exec, one cp per folder, run
    assert not (tmp_path / "mpremote.log").exists()


def test_scenario_on_the_unix_port_standing_in_for_the_pico(tmp_path, monkeypatch):
    exe, flash = fake_mpremote(tmp_path)
    monkeypatch.setenv("FAKE_PICO_ROOT", str(flash))
    monkeypatch.setenv("FAKE_PICO_MICROPYTHON", MICROPYTHON)
    cfg = tmp_path / "config.json"
    cfg.write_text('{"display": "both"}')
    out = tmp_path / "out"
    rc = hil.main([os.path.join(ROOT, "examples", "contract_example.json"), "--arch", "x64",
                   "--mpremote", exe, "--port", "/dev/ttyACM0", "--config", str(cfg),
                   "--out", str(out)])
    assert rc == 0, (out / "pico.log").read_text() + (out / "diff.txt").read_text()
    desktop = (out / "desktop.jsonl").read_text().splitlines()
    pico = (out / "pico.jsonl").read_text().splitlines()
    assert desktop == pico and len(pico) > 5
    assert (out / "diff.txt").read_text() == ""
    calls = [json.loads(x) for x in (tmp_path / "mpremote.log").read_text().splitlines()]
    assert calls[0][2] == "exec" and calls[-1][2] == "run" and {c[2] for c in calls[1:-1]} == {"fs"}
    assert sorted(os.listdir(flash)) == ["hil"]       # nothing outside hil/ touched


def test_presence_pads_on_the_unix_port_standing_in_for_the_pico(tmp_path, monkeypatch):
    # the device's runner makes only the pad model config.json chooses and keeps the firmware's
    # files in hil/flash (runner.py --lean: the Pico's heap holds neither a RAM flash nor both
    # models beside the firmware); the presence pads' events are still the desktop's, and the
    # hall model is not made
    exe, flash = fake_mpremote(tmp_path)
    monkeypatch.setenv("FAKE_PICO_ROOT", str(flash))
    monkeypatch.setenv("FAKE_PICO_MICROPYTHON", MICROPYTHON)
    cfg = tmp_path / "config.json"
    cfg.write_text('{"front_end": "shift"}')
    out = tmp_path / "out"
    rc = hil.main([os.path.join(ROOT, "examples", "contract_example.json"), "--arch", "x64",
                   "--mpremote", exe, "--port", "/dev/ttyACM0", "--config", str(cfg),
                   "--out", str(out)])
    assert rc == 0, (out / "pico.log").read_text() + (out / "diff.txt").read_text()
    pico = (out / "pico.jsonl").read_text().splitlines()
    assert pico == (out / "desktop.jsonl").read_text().splitlines() and len(pico) > 5
    assert sorted(os.listdir(flash / "hil" / "flash")) != []     # the firmware's journal there


def test_lean_world_makes_one_pad_model(tmp_path):
    script = tmp_path / "lean.py"
    script.write_text("import sys\nimport vclock\nsys.modules['time'] = vclock\n"
                      "from world import World\n"
                      "for fe in (None, 'hall', 'shift'):\n"
                      "    w = World(3, fe)\n"
                      "    print(fe, w.hall is not None, w.pres is not None)\n")
    env = dict(os.environ, MICROPYPATH=os.path.join(ROOT, "boardsim", "target"))
    r = subprocess.run([MICROPYTHON, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["None True True", "hall True False", "shift False True"]


def test_staged_files_for_the_hil_image(tmp_path):
    # make image-hil froze the firmware and boardsim/target: only the run's own files go over
    tl = hil.timeline_of(os.path.join(ROOT, "examples", "contract_example.json"))
    cfg = tmp_path / "config.json"
    cfg.write_text('{"front_end": "shift"}')
    files = hil.stage(tl, str(tmp_path / "stage"), "armv6m", str(cfg), frozen=True)
    names = sorted(os.path.relpath(f, tmp_path / "stage") for f in files)
    assert names == ["config.json", "machine.mpy", "simmachine.mpy", "timeline.jsonl"]
    cmds = hil.commands(files, "/dev/ttyACM0", "mpremote")
    assert len(cmds) == 3 and cmds[1][-1] == ":hil/"


def test_a_difference_is_reported(tmp_path, monkeypatch, capsys):
    # the device writes one event differently: exit 1 and a diff naming it
    exe, flash = fake_mpremote(tmp_path)
    monkeypatch.setenv("FAKE_PICO_ROOT", str(flash))
    monkeypatch.setenv("FAKE_PICO_MICROPYTHON", MICROPYTHON)
    real = hil.desktop_events

    def other(timeline, config=None):
        ev = real(timeline, config)
        return ev[:2] + [ev[2].replace('"pins":10', '"pins":9')] + ev[3:]
    monkeypatch.setattr(hil, "desktop_events", other)
    out = tmp_path / "out"
    rc = hil.main([os.path.join(ROOT, "examples", "contract_example.json"), "--arch", "x64",
                   "--mpremote", exe, "--out", str(out)])
    assert rc == 1
    diff = (out / "diff.txt").read_text()
    assert '-{"ev":"shot"' in diff and '+{"ev":"shot"' in diff and "DIFFERENT" in capsys.readouterr().out


def test_compare():
    a = ['{"ev":"boot","reset":"power"}', '{"ev":"shot","player":1}']
    assert hil.compare(a, ['{"ev": "boot", "reset": "power"}', '{"player":1,"ev":"shot"}']) == []
    assert hil.compare(a, a[:1]) != []


SHIM = r'''
import sys
sys.path.insert(0, sys.argv[1])
import micropython
import machine as M


class Log:
    def __init__(self):
        self.n = 0
        self.fail = 0
        self.cs = []


LOG = Log()


class FakeI2C:
    def __init__(self, id, scl=None, sda=None, freq=0):
        pass

    def scan(self):
        return [60]

    def writeto(self, addr, buf, stop=True):
        if LOG.fail:
            raise OSError(5)
        LOG.n += 1


class FakeSPI:
    def __init__(self, id, **kw):
        pass

    def write(self, buf):
        LOG.n += 100


class FakePin:
    OUT = 1

    def __init__(self, id, mode=0, value=None):
        self.id = id

    def value(self, v):
        LOG.cs.append(v)


class HW:
    I2C = FakeI2C
    SPI = FakeSPI
    Pin = FakePin


M._hw = HW


class World:
    def i2c_write(self, addr, buf):
        return len(buf)

    def spi_write(self, bus, buf):
        pass


M.attach(World())
i2c = M.I2C(0, scl=M.Pin(9), sda=M.Pin(8), freq=400000)
spi = M.SPI(0)
cs = M.Pin(17, M.Pin.OUT, value=1)
buf = bytearray(4)
micropython.heap_lock()
try:
    i2c.writeto(60, buf)
    cs.value(0)
    spi.write(buf)
    cs.value(1)
    LOG.fail = 1
    i2c.writeto(60, buf)          # the real display fails: counted, not raised
finally:
    micropython.heap_unlock()
print(LOG.n, M.REAL_ERRORS[0], LOG.cs)
'''


def test_hil_machine_forwards_to_the_real_buses(tmp_path):
    # stage the device directory as the Pico would have it (x64: the unix port runs it)
    d = tmp_path / "hil"
    files = hil.stage([{"op": "boot"}], str(d), "x64")
    assert files
    script = tmp_path / "shim.py"
    script.write_text(SHIM)
    env = {k: v for k, v in os.environ.items() if k != "MICROPYPATH"}
    p = subprocess.run([MICROPYTHON, "-X", "heapsize=2M", str(script), str(d)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr + p.stdout
    # one I2C write and one SPI write reached the real buses, the failing one was counted, and
    # the real chip select followed the simulated one (idle high, down, up)
    assert p.stdout.split() == ["101", "1", "[1,", "0,", "1]"]
