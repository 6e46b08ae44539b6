"""make firmware (tools/build_firmware.py: .mpy for the RP2040, sizes, RAM after boot) and
make deploy (tools/deploy.py: the mpremote commands, run against a stand-in mpremote that
records what it was asked)."""
import json
import os
import stat
import sys

from tools import build_firmware, deploy


def test_build_compiles_every_module_for_the_rp2040(tmp_path, capsys):
    rows = build_firmware.build(str(tmp_path / "fw"))
    names = {r[0] for r in rows}
    src = [os.path.relpath(os.path.join(d, n), build_firmware.FIRMWARE)
           for d, _, files in os.walk(build_firmware.FIRMWARE) for n in files if n.endswith(".py")]
    assert len(names) == len(src) > 30
    # the folders kept (packages without __init__.py), main.py at the top as source
    assert "main.py" in names and "scoreboard/app.mpy" in names and "displays/max7219.mpy" in names
    assert {n[:-4] + ".py" for n in names if n.endswith(".mpy")} | {"main.py"} == set(src)
    assert os.path.isfile(tmp_path / "fw" / "sensing" / "hall_scan.mpy")
    assert all(b > 0 for _, _, b in rows)
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("total")
    # each .mpy names its source as the frozen image does (sensing/hall_scan.py), never by the
    # folder the project was cloned into: that path's bytes went into the .mpy and the heap, and
    # the budgets' figures moved with the checkout (CI's longer path failed the Pico estimate)
    for name in names - {"main.py"}:
        with open(tmp_path / "fw" / name, "rb") as f:
            data = f.read()
        assert build_firmware.ROOT.encode() not in data, name
        assert (name[:-4] + ".py").encode() in data, name


def test_ram_after_boot_counts_the_firmware_only(monkeypatch):
    # each measurement is a build of every module and a boot: report_ram() below words the
    # same two measurements instead of making them again
    measured = {}
    measure = build_firmware.ram_after_boot

    def once(display="oled", heap=build_firmware.HEAP):
        if (display, heap) not in measured:
            measured[display, heap] = measure(display, heap)
        return measured[display, heap]

    monkeypatch.setattr(build_firmware, "ram_after_boot", once)
    oled = build_firmware.ram_after_boot("oled")
    both = build_firmware.ram_after_boot("both")
    # the firmware holds tens of KB; the simulated table (measured first) is left out
    assert 20000 < oled["firmware"] < 400000
    assert oled["table"] > 0
    # the seven-segment chain adds its driver, layouts and buffers, a few KB
    assert 0 < both["firmware"] - oled["firmware"] < 30000
    lines = build_firmware.report_ram()
    assert lines[0].startswith("RAM after boot, display=oled:") and "bytes held" in lines[0]


def fake_mpremote(tmp_path):
    log = tmp_path / "calls.jsonl"
    exe = tmp_path / "mpremote"
    exe.write_text("#!%s\nimport json, sys\nopen(%r, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                   % (sys.executable, str(log)))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe), log


def test_deploy_commands(tmp_path, monkeypatch):
    out = tmp_path / "fw"
    out.mkdir()
    (out / "scoreboard").mkdir()
    (out / "displays").mkdir()
    for n in ("main.py", "scoreboard/app.mpy", "displays/oled_screens.mpy", "displays/font.mpy"):
        (out / n).write_bytes(b"x")
    exe, log = fake_mpremote(tmp_path)
    monkeypatch.setattr(deploy, "mpremote", lambda: exe)
    cmds = deploy.commands("/dev/ttyACM0", str(out))
    assert [c[:3] for c in cmds] == [[exe, "connect", "/dev/ttyACM0"]] * 5
    # stale .py copies of .mpy modules and the flat layout's modules removed first, the
    # folders made, then one copy per folder, then a reset
    assert cmds[0][3] == "exec"
    assert "'scoreboard/app.py'" in cmds[0][4] and "'displays/oled_screens.py'" in cmds[0][4]
    assert "'app.mpy'" in cmds[0][4] and "'ui.py'" in cmds[0][4]
    assert "['displays', 'scoreboard']" in cmds[0][4] and "os.mkdir(d)" in cmds[0][4]
    assert cmds[1][3:5] == ["fs", "cp"] and cmds[1][-1] == ":"
    assert [os.path.basename(p) for p in cmds[1][5:-1]] == ["main.py"]
    assert cmds[2][-1] == ":displays/" and [os.path.basename(p) for p in cmds[2][5:-1]] == ["font.mpy", "oled_screens.mpy"]
    assert cmds[3][-1] == ":scoreboard/" and [os.path.basename(p) for p in cmds[3][5:-1]] == ["app.mpy"]
    assert cmds[4][3:] == ["reset"]
    # with a config.json, it goes on the flash under that name
    cfg = tmp_path / "myconfig.json"
    cfg.write_text('{"display": "both"}')
    deploy.main(["--port", "/dev/ttyACM0", "--out", str(out), "--config", str(cfg)])
    calls = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [c[2] for c in calls] == ["exec", "fs", "fs", "fs", "fs", "reset"]
    assert calls[4][2:] == ["fs", "cp", str(cfg), ":config.json"]
    # a dry run runs nothing
    log.write_text("")
    deploy.main(["--dry-run", "--out", str(out)])
    assert log.read_text() == ""


def test_deploy_refuses_an_empty_build(tmp_path):
    import pytest
    with pytest.raises(SystemExit):
        deploy.commands(None, str(tmp_path))
