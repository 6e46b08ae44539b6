"""wiring/: the generated documents agree with the one pin map and the one board geometry
(tools/wiring.py, `make wiring`), and their quantities and pins follow those sources."""
import copy
import csv
import io
import json
import math
import os

import yaml

from boardsim.geometry import Board, DEFAULT_GEOMETRY
from tools import wiring

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_generated_wiring_is_up_to_date():
    # bom.csv, harness.yml, mux_circuit.svg and board.svg exactly as the tool writes them now;
    # harness.svg drawn from this harness.yml
    assert wiring.main(["--check"]) == 0


def bom(pm, board):
    rows = list(csv.DictReader(io.StringIO(wiring.bom_csv(pm, board))))
    return {r["ref"]: r for r in rows}


def test_bom_quantities_follow_the_pad_count():
    pm, board = wiring.load()
    params = json.load(open(DEFAULT_GEOMETRY))
    for pitch, width in ((25, 480), (20, 480), (25, 560)):
        p = copy.deepcopy(params)
        p["pads"]["pitch"] = pitch
        p["board"]["width"] = width
        b = Board(p)
        pads = sum(b.pad_grid[5])
        rows = bom(pm, b)
        assert int(rows["H"]["qty"]) == pads
        assert int(rows["UM"]["qty"]) == math.ceil(pads / 16)
        assert int(rows["UA"]["qty"]) == len(pm["mux_adc"])
        assert int(rows["C"]["qty"]) == pads + math.ceil(pads / 16) + len(pm["mux_adc"])
        assert int(rows["PCB"]["qty"]) == math.ceil(width / 240) * math.ceil(960 / 240)
    rows = bom(pm, board)
    assert int(rows["H"]["qty"]) == 702                       # docs/sensing.md's count
    assert int(rows["SW"]["qty"]) == len(pm["buttons"])
    assert int(rows["IR"]["qty"]) == 4
    assert all(r["part_number"] and int(r["qty"]) > 0 for r in rows.values())


def test_harnesses_carry_every_pin_of_the_pin_map():
    pm, _ = wiring.load()
    h = yaml.safe_load(wiring.harness_yaml(pm))
    wired = set()
    for conn in h["connections"]:
        wired.update(conn[0]["PICO"])
    used = (pm["mux_channel_select"] + pm["mux_bank_select"] + pm["mux_adc"]
            + [pm["oled_i2c"]["sda"], pm["oled_i2c"]["scl"], pm["hit"],
               pm["spi"]["sck"], pm["spi"]["mosi"], pm["spi"]["cs"]]
            + list(pm["cup_beam"].values()) + list(pm["gate_beam"].values())
            + list(pm["buttons"].values()))
    assert {f"GP{g}" for g in used} <= wired
    # a pin moved in the pin map moves in the harness
    pm2 = copy.deepcopy(pm)
    pm2["buttons"]["undo"] = 16
    h2 = yaml.safe_load(wiring.harness_yaml(pm2))
    btn = [c for c in h2["connections"] if "BTN" in c[2]][0]
    assert btn[0]["PICO"][list(pm2["buttons"]).index("undo")] == "GP16"
    # every Pico pin named in the harness has its header pin number
    pico = h["connectors"]["PICO"]
    assert len(pico["pins"]) == len(set(pico["pins"])) == len(pico["pinlabels"])


def test_board_drawing_has_every_pad_and_zone():
    _, board = wiring.load()
    svg = wiring.board_svg(board)
    assert svg.count("<circle") == len(board.pad_positions())
    for end in ("a", "b"):
        for k in ("back4", "cup3", "pocket", "zline", "z3", "e2", "n2", "n3", "cup"):
            assert f"<title>{end}.{k}</title>" in svg
    assert "<title>center</title>" in svg


def test_presence_bom_follows_the_levels_lines_and_select_pins():
    # the presence front end's parts (wiring/bom_presence.csv): four levels a pad and lines of
    # two rows (issue 12) take twelve 74HC165s, 48 line MOSFETs, four level rails, an 8-bit
    # Gray-coded select (GP27 the 8th pin); one threshold and one row a strobe took six
    # 74HC165s, 96 line MOSFETs and a 7-bit select
    pm, board = wiring.load()

    def pres(geom_edit=None, pm_edit=None):
        p = json.load(open(DEFAULT_GEOMETRY))
        if geom_edit:
            geom_edit(p["presence"])
        m = copy.deepcopy(pm)
        if pm_edit:
            pm_edit(m)
        rows = wiring.presence_bom_rows(m, Board(p))
        return {r[0]: r[4] for r in rows}

    now = pres()
    assert (now["PD"], now["US"], now["QL"], now["QR"], now["UR"], now["UD"], now["UX"]) == \
        (4476, 12, 48, 4, 4, 3, 2)
    assert len(pm["shift"]["row_select"]) == 8 and 27 in pm["shift"]["row_select"]

    def one_threshold(pr):
        pr["levels"] = [0.0]
        pr["rows_per_strobe"] = 1

    before = pres(one_threshold, lambda m: m["shift"]["row_select"].remove(27))
    assert (before["PD"], before["US"], before["QL"], before["QR"], before["UD"], before["UX"]) == \
        (4476, 6, 96, 1, 6, 2)
    assert before["UE"] == 1            # six 74HC154s: a 74HC138 enables one
    # four levels on one row a strobe: 384 strobes, more than the 8 select pins can name
    try:
        pres(lambda pr: pr.update(rows_per_strobe=1))
    except SystemExit as e:
        assert "select" in str(e)
    else:
        raise AssertionError("384 strobes on 8 select pins were accepted")
