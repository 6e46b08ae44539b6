"""The generated tables agree with their sources and with each other: the firmware's pin
constants and scan map, and the simulator's wiring, all come from board/geometry.json and
wiring/pinmap.json."""
import importlib.util
import json
import os

from boardsim.geometry import Board, ZONE_NAMES
from tools import gen_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path, name):
    import sys
    stub = os.path.join(ROOT, "boardsim", "target")
    if stub not in sys.path:
        sys.path.append(stub)       # the CPython `micropython` stub (const)
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_generated_files_are_up_to_date():
    assert gen_tables.main(["--check"]) == 0


def test_firmware_pins_match_the_pin_map_and_the_simulator():
    pins = load("firmware/tables/pins.py", "fw_pins")
    world = load("boardsim/target/world_table.py", "sim_world_table")
    pm = json.load(open(os.path.join(ROOT, "wiring", "pinmap.json")))
    assert world.PINMAP == pm
    assert list(pins.MUX_CHANNEL_SELECT) == pm["mux_channel_select"]
    assert list(pins.MUX_BANK_SELECT) == pm["mux_bank_select"]
    assert list(pins.MUX_ADC) == pm["mux_adc"]
    assert (pins.CUP_A, pins.CUP_B) == (pm["cup_beam"]["a"], pm["cup_beam"]["b"])
    assert (pins.GATE_A, pins.GATE_B) == (pm["gate_beam"]["a"], pm["gate_beam"]["b"])
    assert pins.OLED_ADDR == pm["oled_i2c"]["addr"]
    assert [n.decode() for n in pins.BUTTON_NAMES] == list(pm["buttons"])
    assert list(pins.BUTTONS) == list(pm["buttons"].values())
    used = (pm["mux_channel_select"] + pm["mux_bank_select"] + pm["mux_adc"]
            + [pm["oled_i2c"]["sda"], pm["oled_i2c"]["scl"], pm["hit"], pm["led"]]
            + list(pm["cup_beam"].values()) + list(pm["gate_beam"].values()) + list(pm["buttons"].values())
            + [pm["spi"][k] for k in ("sck", "mosi", "miso", "cs")])
    assert len(used) == len(set(used)), "a GPIO is used twice"
    # the optional buzzer: a free GPIO, or SPI0's MISO, which the write-only MAX7219 never reads
    assert pins.BUZZER == pm["buzzer"]["pin"]
    assert pins.BUZZER not in used or pins.BUZZER == pm["spi"]["miso"]
    assert all(0 <= g <= 28 and g not in (23, 24) for g in used if g != pm["led"])


def test_firmware_scan_map_reads_the_pad_the_simulator_wires_there():
    fw = load("firmware/tables/board_table.py", "fw_board_table")
    world = load("boardsim/target/world_table.py", "sim_world_table")
    seen = 0
    for adc in range(fw.N_ADC):
        for bank in range(fw.BANKS):
            for ch in range(fw.CHANNELS):
                g = fw.SCAN_GRID[(bank * fw.CHANNELS + ch) * fw.N_ADC + adc]
                pad = world.PAD_AT[(adc * world.BANKS + bank) * world.CHANNELS + ch]
                assert (g < 0) == (pad < 0)
                if g < 0:
                    continue
                seen += 1
                assert fw.PAD_PRESENT[g]
                x = fw.PAD_X0 + (g % fw.PAD_COLS) * fw.PAD_PITCH
                y = fw.PAD_Y0 + (g // fw.PAD_COLS) * fw.PAD_PITCH
                assert (x, y) == (world.PAD_X[pad], world.PAD_Y[pad])
    assert seen == fw.N_PADS == world.N_PADS == sum(fw.PAD_PRESENT)


def test_zone_ids_are_the_contracts_names():
    fw = load("firmware/tables/board_table.py", "fw_board_table")
    assert [n.decode() for n in fw.ZONE_NAMES] == list(ZONE_NAMES)
    for end in "ab":
        for z in ("back4", "cup3", "pocket", "zline", "z3", "e2", "n2", "n3", "cup"):
            assert f"{end}.{z}" in ZONE_NAMES
    assert fw.Z_B_BACK4 == fw.Z_A_BACK4 + fw.END_ZONES


def test_default_board_keeps_the_booklets_statements():
    b = Board.load()
    assert b.chip_diameter["small"] < b.gap < b.chip_diameter["big"]
    assert b.zline_length >= 3 * b.chip_diameter["big"]
    # the layout is symmetric under a half turn
    for name, shape in b.zones.items():
        if name.startswith("a."):
            other = b.zones["b." + name[2:]]
            from shapely import affinity
            assert affinity.rotate(shape, 180, origin=(0, 0)).symmetric_difference(other).area < 1e-6


def test_a_bad_geometry_is_refused_with_a_reason(tmp_path):
    import pytest
    from boardsim.geometry import GeometryError
    p = json.load(open(os.path.join(ROOT, "board", "geometry.json")))
    p["blocks"]["gap"] = 50     # a big chip would pass between the blocks
    with pytest.raises(GeometryError, match="gap between the Zenn blocks"):
        Board(p)
    del p["cup"]
    with pytest.raises(GeometryError, match="missing or bad value"):
        Board(p)
