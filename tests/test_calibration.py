"""The pads' calibration (firmware/sensing/calib.py, tools/calibrate; docs/sensing.md "Calibration",
docs/controls.md) and the sensor test screen (firmware/displays/padmap.py), through the real firmware on
the simulated table under MicroPython: from the host over the serial console, from the menu
with the buttons, saved on the flash (a torn save never leaves a broken file), loaded at boot,
and a missing or damaged file falling back to the defaults with a clear message."""
import json
import os
import sys

from boardsim.testing import run_timeline
from tools import calibrate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _d in ("firmware", os.path.join("boardsim", "target")):
    if os.path.join(ROOT, _d) not in sys.path:
        sys.path.append(os.path.join(ROOT, _d))
from tables import board_table as BT  # noqa: E402
import world_table as WT  # noqa: E402


def play(tl, config=None):
    """A raw timeline through the runner: (events, final state)."""
    r = run_timeline(tl, config=config)
    return r.events, r.state


def press(*buttons):
    return [{"op": "press", "button": b} for b in buttons]


def grid_of(p):
    return ((WT.PAD_Y[p] - BT.PAD_Y0) // BT.PAD_PITCH) * BT.PAD_COLS + (WT.PAD_X[p] - BT.PAD_X0) // BT.PAD_PITCH


# -- from the host ---------------------------------------------------------------------------------
def test_tools_calibrate_measures_the_simulated_hall_table():
    cal, data = calibrate.run_sim("hall", log=lambda s: None)
    steps = {e["step"]: e for e in cal if "step" in e}
    assert steps["empty"]["ok"] and steps["empty"]["bad"] == 0
    assert steps["small"]["samples"] == 3 and steps["big"]["samples"] == 3
    assert abs(steps["small"]["value"] - BT.ADC_PEAK) < BT.ADC_PEAK * 3 // 100
    assert steps["save"]["ok"]
    d = calibrate.describe(data)
    assert d["front_end"] == "hall" and d["ignored"] == []
    # every pad's zero, as the simulated sensors have it, to within the noise averaged away
    from sensing import calib as CAL
    base = CAL.decode(data, False, BT.PAD_COLS * BT.PAD_ROWS)[0]
    for p in range(WT.N_PADS):
        assert abs(base[grid_of(p)] - (BT.ADC_ZERO + WT.PAD_OFFSET[p])) <= 40, p


def test_tools_calibrate_measures_the_presence_pads_seen_radii():
    cal, data = calibrate.run_sim("shift", log=lambda s: None)
    d = calibrate.describe(data)
    assert d["front_end"] == "shift"
    true = {k: (WT.R[k] - WT.PRES_RIM) / 10 for k in ("small", "big")}
    for k in ("small", "big"):
        assert abs(d["seen_radius_mm"][k] - true[k]) <= 1.2, (d, true)


def test_tools_calibrate_on_a_device_over_its_serial_console(capsys):
    # the protocol, with a console that answers as the firmware does
    class Pico:
        def __init__(self):
            self.sent = []

        def send(self, line):
            self.sent.append(line)

        def wait_for(self, step):
            return {"ev": "calib", "step": step, "ok": True}
    pico = Pico()
    asked = []
    res = calibrate.run_device("/dev/null", ask=asked.append, log=lambda s: None, console=pico)
    assert pico.sent == ["calib " + s for s, _ in calibrate.STEPS] and len(asked) == len(res) == 8
    assert calibrate.main(["--port", "/dev/ttyACM0", "--dry-run"]) == 0
    assert "calib save" in capsys.readouterr().out


def test_show_a_file_and_refuse_a_damaged_one(tmp_path, capsys):
    from sensing import calib as CAL
    n = BT.PRES_COLS * BT.PRES_ROWS
    ign = bytearray(n)
    ign[123] = 1
    data = bytes(CAL.encode(True, n, None, 131, 184, ign))
    f = tmp_path / "calib.bin"
    f.write_bytes(data)
    assert calibrate.main(["--show", str(f)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["seen_radius_mm"] == {"small": 13.1, "big": 18.4} and shown["ignored"] == [123]
    f.write_bytes(data[:-3] + bytes([data[-3] ^ 1]) + data[-2:])
    assert calibrate.main(["--show", str(f)]) == 1


# -- on the table, from the menu -------------------------------------------------------------------
def test_calibration_from_the_menu_is_saved_and_loaded_at_the_next_boot():
    tl = [{"op": "boot"}] + press("next", "next", "next", "ok")    # Game: "Calibrate pads"
    tl += [{"op": "snapshot", "label": "step1"}] + press("ok")     # the board is empty
    tl += [{"op": "snapshot", "label": "step2"}]
    for x, y in calibrate.SIM_SPOTS:                                 # a small chip, three spots
        tl += [{"op": "put", "chip": "small", "x": x, "y": y}] + press("ok") + [{"op": "lift", "chip": "small"}]
    tl += press("next")
    tl += [{"op": "put", "chip": "big1", "x": 5.0, "y": 4.0}] + press("ok") + [{"op": "lift", "chip": "big1"}]
    tl += press("next") + [{"op": "snapshot", "label": "save"}] + press("ok")
    tl += [{"op": "snapshot", "label": "saved"}, {"op": "power", "state": "cut"}, {"op": "power", "state": "on"}]
    events, st = play(tl)
    snaps = {s["label"]: s["display"] for s in st["snapshots"]}
    assert "Clear the board" in "\n".join(snaps["step1"])
    assert "Small chip, centre" in "\n".join(snaps["step2"])
    assert "Save calibration" in "\n".join(snaps["save"])
    assert snaps["saved"][7] == "Calibration saved" and "Game" in snaps["saved"][0]
    steps = [(e["step"], e["ok"]) for e in events if e["ev"] == "calib"]
    assert steps == [("empty", True), ("small", True), ("small", True), ("small", True),
                     ("big", True), ("save", True)]
    assert [e["calib"] for e in events if e["ev"] == "boot"] == ["missing", "loaded"]
    assert calibrate.describe(bytes.fromhex(st["calib_bin"]))["front_end"] == "hall"


def test_a_damaged_or_missing_file_falls_back_to_defaults_with_a_message():
    from sensing import calib as CAL
    n = BT.PAD_COLS * BT.PAD_ROWS
    good = bytes(CAL.encode(False, n, [BT.ADC_ZERO] * n, BT.ADC_PEAK, BT.ADC_PEAK, bytearray(n)))
    tl = [{"op": "flash", "write": "calib.bin", "hex": good.hex()}, {"op": "boot"},
          {"op": "flash", "damage": "calib.bin", "offset": 100},
          {"op": "power", "state": "cut"}, {"op": "power", "state": "on"},
          {"op": "snapshot", "label": "damaged"},
          {"op": "flash", "write": "calib.bin", "hex": good[:50].hex()},       # cut short
          {"op": "power", "state": "cut"}, {"op": "power", "state": "on"}]
    events, st = play(tl)
    assert [e["calib"] for e in events if e["ev"] == "boot"] == ["loaded", "damaged", "damaged"]
    assert {s["label"]: s["display"] for s in st["snapshots"]}["damaged"][7] == "Calibration damaged"


def test_a_save_torn_anywhere_leaves_a_calibration_that_loads():
    # a power cut at each block write of a save: the next boot loads the old or the new one
    tl = [{"op": "boot"}, {"op": "serial", "line": "calib empty"}, {"op": "serial", "line": "calib save"}]
    for k in range(10):
        tl += [{"op": "serial", "line": "calib empty"}, {"op": "flash", "tear_after": k},
               {"op": "serial", "line": "calib save"}, {"op": "flash", "tear_after": -1000000},
               {"op": "power", "state": "cut"}, {"op": "power", "state": "on"}]
    events, st = play(tl)
    boots = [e["calib"] for e in events if e["ev"] == "boot"]
    assert boots == ["missing"] + ["loaded"] * 10, boots
    saves = [e["ok"] for e in events if e["ev"] == "calib" and e.get("step") == "save"]
    assert saves[0] and len(saves) < 11          # some saves were torn before they could say so


# -- the sensor test screen ------------------------------------------------------------------------
def lit(frame_hex, x, y):
    fb = bytes.fromhex(frame_hex)
    return (fb[(y >> 3) * 128 + x] >> (y & 7)) & 1


def test_the_sensor_test_screen_maps_the_pads_that_see_a_chip_and_the_faulty_ones():
    # a small chip right on hall pad (9, 19) (the board's centre column), pad (3, 5) flickering
    pad_x = (BT.PAD_X0 + 9 * BT.PAD_PITCH) / 10
    pad_y = (BT.PAD_Y0 + 19 * BT.PAD_PITCH) / 10
    tl = [{"op": "boot"}, {"op": "fault", "pad": [3, 5], "mode": "flicker"}]
    tl += press("next", "next", "next", "next", "ok")             # Game: "Sensor test"
    tl += [{"op": "put", "chip": "small", "x": pad_x, "y": pad_y}, {"op": "wait", "ms": 2500}]
    events, st = play(tl)
    assert st["display"][0].startswith("Hall on ") and st["display"][0].endswith("bad 1")
    x0 = (128 - 3 * BT.PAD_ROWS) // 2

    def px(row, col):
        return x0 + 3 * row, 8 + 3 * col
    x, y = px(19, 9)                                   # the pad under the chip: a full block
    assert all(lit(st["frame"], x + dx, y + dy) for dx in (0, 1) for dy in (0, 1))
    x, y = px(25, 15)                                  # a quiet pad: one dot
    assert [lit(st["frame"], x + dx, y + dy) for dy in (0, 1) for dx in (0, 1)] == [1, 0, 0, 0]
    x, y = px(5, 3)                                    # the flickering pad, left out: a slash
    assert [lit(st["frame"], x + dx, y + dy) for dy in (0, 1) for dx in (0, 1)] == [0, 1, 1, 0]
    # (a pad that flickers to ground may be caught at the rail first: dead)
    assert [e["pad"] for e in events if e["ev"] == "fault" and e.get("what") == "pads"] == [[3, 5]]


def test_the_sensor_test_screen_of_the_presence_pads():
    tl = [{"op": "boot"}] + press("next", "next", "next", "next", "ok")
    tl += [{"op": "put", "chip": "big1", "x": 0.0, "y": 0.0}, {"op": "wait", "ms": 500}]
    events, st = play(tl, config={"front_end": "shift"})
    on = int(st["display"][0].split()[2])
    # pads that see the big chip at their first level: within its seen radius + 3 mm (18.5 +
    # 3 mm: about pi 21.5^2 / 100 = 14.5 of them; 8 - 14 with one threshold at the edge)
    assert st["display"][0].startswith("Shift on ") and 12 <= on <= 20
    x0 = (128 - BT.PRES_ROWS) // 2
    # the cells around the centre (rows 47, 48, columns 23, 24) are covered
    for r in (47, 48):
        for c in (23, 24):
            assert lit(st["frame"], x0 + r, 8 + c)
    assert not lit(st["frame"], x0 + 10, 8 + 10)
