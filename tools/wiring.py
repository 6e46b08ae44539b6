"""`make wiring`: the wiring documents, generated from the one pin map (wiring/pinmap.json) and
the one board geometry (board/geometry.json through boardsim/geometry.py).

    python -m tools.wiring             write them (and run WireViz when Graphviz's dot is here)
    python -m tools.wiring --check     exit 1 when a committed file is stale

Writes:
  wiring/bom.csv              bill of materials, quantities derived from the pad count
  wiring/bom_presence.csv     the presence front end's own parts instead of the hall pads'
                              (front_end "shift": pads, 74HC165s, line and level drive)
  wiring/harness.yml          WireViz description of every harness, from the pin map
  wiring/harness.svg          its drawing (WireViz + Graphviz's dot; committed, so that a
                              checkout without Graphviz has it; --check does not redraw it)
  wiring/mux_circuit.svg      the multiplexer tree and one hall pad (schemdraw)
  wiring/board.svg            the board: zones, cups, blocks, gates, every pad (from shapely)

The checks compare the text files exactly; harness.svg is checked to have been drawn from
the harness.yml beside it (make wiring stamps the YAML's hash into the drawing), so the check
needs neither Graphviz nor WireViz's exact output.
"""
import argparse
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys

from boardsim.geometry import ROOT, Board, ENDS

WIRING = os.path.join(ROOT, "wiring")
PINMAP = os.path.join(WIRING, "pinmap.json")
CHANNELS = 16                   # CD74HC4067: 16 channels
TILE_MM = 240                   # sensor PCB tiles (docs/sensing.md)
CHIPS = 16                      # 4 big + 4 small chips in each of two colours
SEG_MODULES = 3                 # the default chain (firmware/storage/config.py sevenseg_modules)


def load():
    with open(PINMAP) as f:
        pm = json.load(f)
    return pm, Board.load()


# -- bill of materials ----------------------------------------------------------------------
def counts(pm, board):
    pads = sum(board.pad_grid[5])
    n_adc = len(pm["mux_adc"])
    first = math.ceil(pads / CHANNELS)
    return {"pads": pads, "mux1": first, "mux2": n_adc, "tiles":
            math.ceil(board.width / TILE_MM) * math.ceil(board.length / TILE_MM),
            "buttons": len(pm["buttons"]), "beams": len(pm["cup_beam"]) + len(pm["gate_beam"])}


def bom_rows(pm, board):
    c = counts(pm, board)
    h = harnesses(pm)
    xh = {}
    for conn in h["connectors"].values():
        if conn["type"].startswith("JST XH"):
            xh[conn["pincount"]] = xh.get(conn["pincount"], 0) + 1
    crimps = sum(conn["pincount"] for conn in h["connectors"].values()
                 if conn["type"].startswith("JST XH"))
    # (ref, part, manufacturer, part number, qty, where from, note)
    rows = [
        ("U1", "Raspberry Pi Pico (RP2040)", "Raspberry Pi", "SC0915", 1, "one", "MicroPython firmware"),
        ("H", "linear hall sensor, ratiometric, SOT-23", "Texas Instruments", "DRV5053RAQDBZR",
         c["pads"], "pads in board/geometry.json", "one per pad; sensitivity per docs/sensing.md"),
        ("C", "100 nF X7R 0402 decoupling", "Murata", "GRM155R71C104KA88D",
         c["pads"] + c["mux1"] + c["mux2"], "pads + multiplexers", "one per sensor and per mux"),
        ("UM", "16:1 analog multiplexer, first level", "Texas Instruments", "CD74HC4067M96",
         c["mux1"], "ceil(pads / 16)", "16 pads in a row each"),
        ("UA", "16:1 analog multiplexer, second level", "Texas Instruments", "CD74HC4067M96",
         c["mux2"], "ADC pins in wiring/pinmap.json", "one per ADC pin, picks the bank"),
        ("PCB", "sensor tile PCB 240 x 240 mm, 2 layers", "any PCB house", "ZENN-PADS-240",
         c["tiles"], "board outline / 240 mm tiles", "pads, muxes, ribbon headers"),
        ("M", "NdFeB disc magnet 10 x 3 mm N35", "any", "N35-D10x3", CHIPS, "chips",
         "small chips north up, big chips south up"),
        ("DS1", "OLED 0.96 in 128x64, SSD1306, I2C", "Adafruit", "326", 1, "one",
         "beside the buttons; address 0x3C"),
        ("DS2", "8-digit 7-segment module, MAX7219", "Analog Devices (chip)", "MAX7219CWG+", SEG_MODULES,
         "firmware/storage/config.py sevenseg_modules default", "the room display, daisy-chained (docs/displays.md)"),
        ("U2", "quad buffer, 3.3 V to 5 V logic", "Texas Instruments", "SN74AHCT125N", 1,
         "one", "MAX7219 needs 3.5 V high at 5 V: DIN, CLK, LOAD through it"),
        ("IR", "IR break-beam pair, 3 mm, 3.3 V open collector", "Adafruit", "2167", c["beams"],
         "cup_beam + gate_beam in the pin map", "cup throats and gates between the Zenn blocks"),
        ("PZ", "piezo disc 20 mm (hit sensor)", "Murata", "7BB-20-6L0", 1, "hit in the pin map",
         "with 1 MOhm load and BAT54S clamp"),
        ("D1", "dual Schottky clamp", "Nexperia", "BAT54S,215", 1, "hit", "piezo input clamp"),
        ("R1", "1 MOhm 0603", "Yageo", "RC0603FR-071ML", 1, "hit", "piezo load"),
        ("BZ1", "piezo sounder 12 mm, external drive (optional)", "Murata", "PKLCS1212E4001-R1",
         1, "buzzer in the pin map", "the tunes (config.json buzzer), PWM; loudest near 4 kHz"),
        ("R2", "100 Ohm 0603", "Yageo", "RC0603FR-07100RL", 1, "buzzer", "buzzer series resistor"),
        ("SW", "tactile switch 12 mm with cap", "Omron", "B3F-4055", c["buttons"],
         "buttons in the pin map", "active low, internal pull-ups"),
        ("PS1", "5 V 3 A wall supply", "Mean Well", "GST25E05-P1J", 1, "one",
         "700 hall sensors draw about 2 A (docs/sensing.md)"),
        ("PS2", "3.3 V 2.6 A step-down regulator", "Pololu", "D36V28F3", 1, "one", "sensors and muxes"),
    ]
    for n in sorted(xh):
        rows.append((f"J{n}", f"JST XH {n}-pin header, through hole", "JST", f"B{n}B-XH-A",
                     2 * xh[n], "harnesses (both ends)", "wiring/harness.yml"))
        rows.append((f"P{n}", f"JST XH {n}-pin housing", "JST", f"XHP-{n}", 2 * xh[n],
                     "harnesses (both ends)", "wiring/harness.yml"))
    rows.append(("T", "JST XH crimp contact", "JST", "SXH-001T-P0.6", 2 * crimps,
                 "harness wires x 2 ends", "wiring/harness.yml"))
    ribbon = [conn for conn in h["connectors"].values() if conn["type"].startswith("IDC")]
    if ribbon:
        k = ribbon[0]["pincount"]
        rows.append(("JR", f"IDC box header 2x{k // 2}", "Wurth Elektronik", "61201421621",
                     1 + c["tiles"], "Pico board + one per tile", "pad bus ribbon"))
        rows.append(("PR", f"IDC ribbon socket 2x{k // 2}", "3M", "89114-0101", 2 * c["tiles"],
                     "two per ribbon segment", "daisy-chained ribbon to every tile"))
    return rows


def bom_csv(pm, board, rows=None):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["ref", "part", "manufacturer", "part_number", "qty", "qty_from", "note"])
    for r in (bom_rows(pm, board) if rows is None else rows):
        w.writerow(r)
    return out.getvalue()


def presence_counts(pm, board):
    """The presence front end's quantities (config.json front_end "shift", docs/sensing.md,
    "The second front end"): a strobe lights one line of rows_per_strobe rows at one level's
    LED current; strobe s is line s // levels, level s % levels, its number a Gray code on the
    pin map's row_select pins."""
    cols, rows, _pitch, _x0, _y0, present = board.presence_grid
    rps = int(board.presence["rows_per_strobe"])
    levels = len(board.presence["levels"])
    lines = rows // rps
    strobes = lines * levels
    sel = len(pm["shift"]["row_select"])
    if strobes > 1 << sel:
        raise SystemExit(f"presence: {strobes} strobes need {(strobes - 1).bit_length()} select "
                         f"pins, the pin map has {sel}")
    line_dec = math.ceil(lines / 16)               # 74HC154s, one line MOSFET per output
    # one 2-to-4 decoder (half a 74HC139) picks the level's rail, another the 74HC154 enabled;
    # more than four of either take a 74HC138 instead
    halves = (1 if levels <= 4 else 0) + (1 if line_dec <= 4 else 0)
    return {"pads": sum(1 for p in present if p), "sr": math.ceil(cols / 8) * rps,
            "lines": lines, "levels": levels, "sel": sel, "xor": math.ceil((sel - 1) / 4),
            "line_dec": line_dec, "dec139": math.ceil(halves / 2),
            "dec138": (levels > 4) + (line_dec > 4),
            "tiles": math.ceil(board.width / TILE_MM) * math.ceil(board.length / TILE_MM)}


def presence_bom_rows(pm, board):
    """The presence pads' own parts, instead of bom.csv's hall sensors, magnets, multiplexers
    and their PCBs (the Pico, displays, beams, buttons and supplies as there)."""
    c = presence_counts(pm, board)
    logic = c["sr"] + c["xor"] + c["line_dec"] + c["dec139"] + c["dec138"]
    rows = [
        ("PD", "IR reflective sensor (IR LED + phototransistor), SMD", "Everlight",
         "ITR8307/S17/TR8", c["pads"], "presence pads in board/geometry.json",
         "one per pad under the IR-transparent surface"),
        ("RL", "LED resistor 0603", "Yageo", "RC0603FR-07100RL", c["pads"], "presence pads",
         "one per pad's IR LED"),
        ("RP", "phototransistor pull-up 0603", "Yageo", "RC0603FR-0747KL", c["pads"],
         "presence pads", "gives each 74HC165 input its level"),
        ("US", "8-bit parallel-in shift register", "Texas Instruments", "SN74HC165PWR", c["sr"],
         "ceil(columns / 8) x rows_per_strobe", "one chain, read over SPI1 (load on the pin map's load pin)"),
        ("UX", "quad XOR gate", "Texas Instruments", "SN74HC86PWR", c["xor"],
         "row_select pins in wiring/pinmap.json - 1, 4 a chip",
         "the select pins' Gray code back to the strobe number"),
        ("UD", "4-to-16 line decoder", "Texas Instruments", "SN74HC154PWR", c["line_dec"],
         "lines (rows / rows_per_strobe) / 16", "one output per line MOSFET"),
        ("UL", "dual 2-to-4 line decoder", "Texas Instruments", "SN74HC139PWR", c["dec139"],
         "levels and line decoders, 4 each", "one half picks the level's LED rail, the other the line decoder"),
        ("QL", "P-channel MOSFET 30 V 4 A, SOT-23", "Alpha & Omega", "AO3401A", c["lines"],
         "lines (rows / rows_per_strobe)", "switches one line's LEDs and phototransistors"),
        ("QR", "P-channel MOSFET 30 V 4 A, SOT-23", "Alpha & Omega", "AO3401A", c["levels"],
         "levels in board/geometry.json", "switches one level's LED rail"),
        ("UR", "LED rail regulator, adjustable, 800 mA", "Texas Instruments", "LM1117MP-ADJ/NOPB",
         c["levels"], "levels", "one per level: that level's LED current (docs/sensing.md)"),
        ("CR", "470 uF 10 V electrolytic", "Panasonic", "EEE-FK1A471P", c["levels"], "levels",
         "carries a line's pulses (about 1 A for 25 us) on each rail"),
        ("CD", "100 nF X7R 0402 decoupling", "Murata", "GRM155R71C104KA88D", logic,
         "logic chips", "one per chip"),
        ("PCB", "presence pad tile PCB 240 x 240 mm, 2 layers", "any PCB house", "ZENN-PRES-240",
         c["tiles"], "board outline / 240 mm tiles", "pads, line MOSFETs, 74HC165s, ribbon headers"),
        ("S", "IR-transparent acrylic sheet 3 mm (black to the eye), 480 x 960 mm", "any",
         "PMMA-IR-3", 1, "one", "the playing surface over the pads"),
    ]
    if c["dec138"]:
        rows.append(("UE", "3-to-8 line decoder", "Texas Instruments", "SN74HC138PWR",
                     c["dec138"], "more than 4 levels or line decoders", "instead of a 74HC139 half"))
    return rows


# -- harnesses (WireViz) -------------------------------------------------------------------
# the Pico's header pin of each GPIO (Raspberry Pi Pico datasheet, pinout); 5V is VBUS
PICO_PIN = {"GP0": 1, "GP1": 2, "GP2": 4, "GP3": 5, "GP4": 6, "GP5": 7, "GP6": 9, "GP7": 10,
            "GP8": 11, "GP9": 12, "GP10": 14, "GP11": 15, "GP12": 16, "GP13": 17, "GP14": 19,
            "GP15": 20, "GP16": 21, "GP17": 22, "GP18": 24, "GP19": 25, "GP20": 26, "GP21": 27,
            "GP22": 29, "GP26": 31, "GP27": 32, "GP28": 34, "GND": 38, "3V3": 36, "5V": 40}


def harnesses(pm):
    """The harnesses as WireViz's YAML structure, every pin number from the pin map."""
    i2c, spi, btn = pm["oled_i2c"], pm["spi"], pm["buttons"]
    pico_pins = []

    def gp(n, label):
        pin = f"GP{n}"
        if pin not in pico_pins:
            pico_pins.append(pin)
        return pin

    connectors = {}
    cables = {}
    connections = []

    def harness(name, conn_type, far, far_type, wires, note, color_code="DIN"):
        # wires: [(pico pin or 3V3/5V/GND, far-end label)]
        # the Pico board's end of the harness is its header (same type, counted in the BOM)
        n = len(wires)
        connectors[name] = {"type": far_type, "subtype": "female", "pincount": n,
                            "pinlabels": [lab for _, lab in wires], "notes": far}
        cables[f"W_{name}"] = {"wirecount": n, "length": 0.5, "gauge": "0.14 mm2",
                               "color_code": color_code, "notes": note}
        connections.append([{"PICO": [p for p, _ in wires]},
                            {f"W_{name}": list(range(1, n + 1))},
                            {name: list(range(1, n + 1))}])

    xh = "JST XH"
    harness("OLED", f"{xh} 4", "SSD1306 module", f"{xh} 4",
            [("3V3", "VCC"), ("GND", "GND"), (gp(i2c["sda"], "OLED SDA"), "SDA"),
             (gp(i2c["scl"], "OLED SCL"), "SCL")], f"I2C{i2c['bus']} at {i2c['freq'] // 1000} kHz")
    harness("SEG", f"{xh} 5", "MAX7219 chain, module 0 input", f"{xh} 5",
            [("5V", "VCC"), ("GND", "GND"), (gp(spi["mosi"], "7SEG DIN"), "DIN"),
             (gp(spi["cs"], "7SEG LOAD"), "CS"), (gp(spi["sck"], "7SEG CLK"), "CLK")],
            f"SPI{spi['bus']}; DIN, CS, CLK through the SN74AHCT125 to 5 V levels")
    harness("BTN", f"{xh} {len(btn) + 1}", "button panel", f"{xh} {len(btn) + 1}",
            [(gp(g, f"button {name}"), name) for name, g in btn.items()] + [("GND", "GND")],
            "active low, Pico pull-ups")
    for end in ENDS:
        harness(f"BEAM_{end.upper()}", f"{xh} 4", f"end {end}: cup throat and gate receivers",
                f"{xh} 4",
                [("3V3", "VCC"), ("GND", "GND"), (gp(pm["cup_beam"][end], f"cup beam {end}"), "CUP"),
                 (gp(pm["gate_beam"][end], f"gate beam {end}"), "GATE")],
                "open-collector receivers, Pico pull-ups; emitters on the same VCC")
    harness("HIT", f"{xh} 2", "piezo hit sensor", f"{xh} 2",
            [(gp(pm["hit"], "hit"), "PIEZO+"), ("GND", "PIEZO-")], "1 MOhm load, BAT54S clamp")
    harness("BUZ", f"{xh} 2", "piezo buzzer (optional)", f"{xh} 2",
            [(gp(pm["buzzer"]["pin"], "buzzer"), "BUZ+"), ("GND", "BUZ-")],
            "PWM square wave through 100 Ohm; GP16 shared with SPI0's unused MISO")
    pads = ([(gp(g, f"mux channel S{i}"), f"CH S{i}") for i, g in enumerate(pm["mux_channel_select"])]
            + [(gp(g, f"mux bank S{i}"), f"BANK S{i}") for i, g in enumerate(pm["mux_bank_select"])]
            + [(gp(g, f"ADC{g - 26}"), f"SIG{i}") for i, g in enumerate(pm["mux_adc"])]
            + [("3V3", "3V3"), ("GND", "GND")])
    n = len(pads) + len(pads) % 2
    if len(pads) < n:
        pads.append(("GND", "GND"))
    harness("PADS", f"IDC 2x{n // 2}", "sensor tiles (daisy-chained ribbon)", f"IDC 2x{n // 2}",
            pads, "flat ribbon 1.27 mm to every tile", color_code=None)
    for name in connectors:
        if connectors[name]["type"].startswith("IDC"):
            connectors[name]["type"] = f"IDC 2x{n // 2}"
    labels = ["3V3", "5V", "GND"] + pico_pins
    pico = {"type": "Raspberry Pi Pico", "subtype": "header pins",
            "pins": [PICO_PIN[lab] for lab in labels], "pinlabels": labels,
            "notes": "GP numbers from wiring/pinmap.json; pin numbers of the Pico's header"}
    for c in cables.values():
        if c["color_code"] is None:
            del c["color_code"]
    return {"connectors": dict({"PICO": pico}, **connectors), "cables": cables,
            "connections": connections}


def harness_yaml(pm):
    import yaml
    head = ("# GENERATED by tools/wiring.py from wiring/pinmap.json; do not edit: change the pin map,\n"
            "# run `make wiring`. Drawn by WireViz into harness.svg.\n")
    return head + yaml.safe_dump(harnesses(pm), sort_keys=False, default_flow_style=None, width=100)


# -- the multiplexer and sensor circuit (schemdraw) ----------------------------------------
def mux_circuit_svg(pm, board):
    import schemdraw
    import schemdraw.elements as elm
    schemdraw.config(fontsize=11, font="sans-serif")
    c = counts(pm, board)
    ch, bank, adc = pm["mux_channel_select"], pm["mux_bank_select"], pm["mux_adc"]

    def mux(label):
        # SIG on the left, S0..S3 on top, C0 and C15 on the right (C1..C14 alike)
        pins = [elm.IcPin(name="SIG", side="left", anchorname="SIG", slot="1/1")]
        pins += [elm.IcPin(name=f"S{i}", side="top", anchorname=f"S{i}", slot=f"{i + 1}/4")
                 for i in range(4)]
        pins += [elm.IcPin(name="C0", side="right", anchorname="C0", slot="2/2"),
                 elm.IcPin(name="C15", side="right", anchorname="C15", slot="1/2")]
        return elm.Ic(pins=pins, size=(3.6, 2.4), label=label, lblsize=9).theta(0)

    with schemdraw.Drawing(show=False) as d:
        d.config(unit=2)
        # highest select bit on top, so that no select wire crosses another
        names = ([(f"GP{ch[i]}  ch S{i}", f"CH{i}") for i in (3, 2, 1, 0)]
                 + [(f"GP{bank[i]}  bank S{i}", f"B{i}") for i in (3, 2, 1, 0)]
                 + [(f"GP{g}  ADC{g - 26}", f"ADC{i}") for i, g in enumerate(adc)])
        n = len(names)
        ppins = [elm.IcPin(name=nm, side="right", anchorname=an, slot=f"{n - k}/{n}")
                 for k, (nm, an) in enumerate(names)]
        pico = d.add(elm.Ic(pins=ppins, size=(3.4, 0.6 * n + 0.6), pinspacing=0.6)
                     .theta(0).at((0, 0)).anchor("ADC0"))
        d.add(elm.Label().at((pico.CH3[0] - 1.7, pico.CH3[1] + 0.9)).label("Raspberry Pi Pico"))
        # second level, below the Pico's last pin: SIG on ADC0, its selects on the bank pins
        y = pico.ADC2[1] - 2.4
        m2 = d.add(mux(f"CD74HC4067\n2nd level (x{c['mux2']})\none per ADC pin")
                   .at((pico.ADC0[0] + 4, y)).anchor("SIG"))
        d.add(elm.Line().at(pico.ADC0).right(1.2))
        d.add(elm.Wire("|-").to(m2.SIG))
        for i in range(4):
            d.add(elm.Wire("-|").at(getattr(pico, f"B{i}")).to(getattr(m2, f"S{i}")))
        # first level: SIG on the second level's C0, its selects on the channel pins
        m1 = d.add(mux(f"CD74HC4067\n1st level (x{c['mux1']})\n16 per 2nd level")
                   .at((m2.C0[0] + 3.5, m2.C0[1])).anchor("SIG"))
        d.add(elm.Wire().at(m2.C0).to(m1.SIG))
        for i in range(4):
            d.add(elm.Wire("-|").at(getattr(pico, f"CH{i}")).to(getattr(m1, f"S{i}")))
        # one hall pad on C0
        h = d.add(elm.Ic(pins=[elm.IcPin(name="OUT", side="left", anchorname="OUT"),
                               elm.IcPin(name="VCC", side="top", anchorname="VCC"),
                               elm.IcPin(name="GND", side="bottom", anchorname="GND")],
                         size=(3.2, 1.6), label="DRV5053\nhall pad", lblsize=9).theta(0)
                  .at((m1.C0[0] + 3.5, m1.C0[1])).anchor("OUT"))
        d.add(elm.Wire().at(m1.C0).to(h.OUT))
        d.add(elm.Line().at(h.VCC).up(0.8))
        top = d.add(elm.Dot())
        d.add(elm.Vdd().label("3V3"))
        d.add(elm.Capacitor().at(top.center).right(1.6).label("100 nF"))
        d.add(elm.Ground())
        d.add(elm.Ground().at(h.GND))
        # notes
        d.add(elm.Label().at((m2.C15[0] + 0.3, m2.C15[1] - 0.9))
              .label("C1..C15: 15 more\nfirst-level muxes", halign="left"))
        d.add(elm.Label().at((m1.C15[0] + 0.3, m1.C15[1] - 0.9))
              .label(f"C1..C15: 15 more pads\n({c['pads']} in all)", halign="left"))
        d.add(elm.Label().at((pico.ADC2[0] - 3.4, m2.SIG[1] - 2.6)).label(
            f"ADC1, ADC2: the same, each with its own 2nd-level mux. Every EN to GND.\n"
            f"Channel selects shared by all {c['mux1']} first-level muxes, bank selects by the "
            f"{c['mux2']} second-level ones.", halign="left"))
        svg = d.get_imagedata("svg")
    return svg.decode() if isinstance(svg, bytes) else svg


# -- the board -------------------------------------------------------------------------------
ZONE_FILL = {"back4": "#c9d7f2", "cup3": "#e6eefc", "pocket": "#ffd76e", "zline": "#333333",
             "z3": "#f4c7c3", "e2": "#fce8b2", "n2": "#b7e1cd", "n3": "#d9c3e9", "center": "#ffffff"}


def board_svg(board):
    from shapely.geometry import Polygon, MultiPolygon
    s = 0.8                                    # px per mm
    W, L = board.width, board.length
    pad = 20
    w, h = W * s + 2 * pad + 180, L * s + 2 * pad

    def xy(x, y):                              # end a at the bottom
        return (round(pad + (x + W / 2) * s, 1), round(pad + (L / 2 - y) * s, 1))

    def path(geom):
        polys = geom.geoms if isinstance(geom, MultiPolygon) else [geom]
        d = []
        for p in polys:
            if not isinstance(p, Polygon) or p.is_empty:
                continue
            for ring in [p.exterior] + list(p.interiors):
                pts = [xy(x, y) for x, y in ring.coords]
                d.append("M" + " L".join(f"{a},{b}" for a, b in pts) + " Z")
        return " ".join(d)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="sans-serif" font-size="10">',
           "<!-- GENERATED by tools/wiring.py from board/geometry.json (boardsim/geometry.py); make wiring -->",
           f'<path d="{path(board.outline)}" fill="#8a6d4b" stroke="#000" stroke-width="1"/>']
    order = ["back4", "cup3", "z3", "e2", "n2", "n3", "zline", "pocket"]
    for end in ENDS:
        for k in order:
            z = board.zones.get(f"{end}.{k}")
            if z is None:
                continue
            out.append(f'<path d="{path(z)}" fill="{ZONE_FILL[k]}" fill-rule="evenodd" '
                       f'stroke="#555" stroke-width="0.5"><title>{end}.{k}</title></path>')
    out.append(f'<path d="{path(board.zones["center"])}" fill="{ZONE_FILL["center"]}" '
               f'stroke="#555" stroke-width="0.5"><title>center</title></path>')
    for end in ENDS:
        out.append(f'<path d="{path(board.cup_hole(end))}" fill="#222"><title>{end}.cup</title></path>')
        out.append(f'<path d="{path(board.blocks(end))}" fill="#6b4f2e" stroke="#000" stroke-width="0.5"/>')
        (x0, y0), (x1, y1) = board.gate_segment(end)
        a, b = xy(x0, y0), xy(x1, y1)
        out.append(f'<line x1="{a[0]}" y1="{a[1]}" x2="{b[0]}" y2="{b[1]}" stroke="#d00" '
                   f'stroke-width="1.5" stroke-dasharray="3,2"><title>gate beam {end}</title></line>')
    for end in ENDS:
        for k in ("back4", "z3", "e2", "n2", "n3"):
            z = board.zones.get(f"{end}.{k}")
            if z is None:
                continue
            c = z.representative_point()
            px, py = xy(c.x, c.y)
            out.append(f'<text x="{px}" y="{py}" text-anchor="middle" fill="#333">{end}.{k}</text>')
    for x, y in board.pad_positions():
        px, py = xy(x, y)
        out.append(f'<circle cx="{px}" cy="{py}" r="1.6" fill="#1a5fb4"/>')
    cols, rows, pitch = board.pad_grid[:3]
    n = len(board.pad_positions())
    lx = W * s + 2 * pad + 10
    legend = [f"{W:.0f} x {L:.0f} mm", f"{n} hall pads,", f"{pitch:.0f} mm pitch", "",
              "end b at the top", "end a at the bottom", "", "red dashes: gate beams",
              "dark: cups and blocks"]
    for i, t in enumerate(legend):
        out.append(f'<text x="{lx}" y="{pad + 14 + 14 * i}">{t}</text>')
    ly = pad + 14 + 14 * len(legend) + 10
    for i, k in enumerate(("back4", "cup3", "pocket", "zline", "z3", "e2", "n2", "n3", "center")):
        out.append(f'<rect x="{lx}" y="{ly + 16 * i - 9}" width="12" height="12" fill="{ZONE_FILL[k]}" stroke="#555"/>')
        out.append(f'<text x="{lx + 18}" y="{ly + 16 * i + 1}">{k}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# -- driver ----------------------------------------------------------------------------------
def outputs(pm, board):
    """{path: text} of every generated text file."""
    return {
        os.path.join(WIRING, "bom.csv"): bom_csv(pm, board),
        os.path.join(WIRING, "bom_presence.csv"): bom_csv(pm, board, presence_bom_rows(pm, board)),
        os.path.join(WIRING, "harness.yml"): harness_yaml(pm),
        os.path.join(WIRING, "mux_circuit.svg"): mux_circuit_svg(pm, board),
        os.path.join(WIRING, "board.svg"): board_svg(board),
    }


def _yml_stamp(yml_text):
    import hashlib
    return "<!-- drawn by WireViz from harness.yml sha256 %s -->" % hashlib.sha256(
        yml_text.encode()).hexdigest()


def harness_svg_matches(yml_text, svg_path):
    """harness.svg was drawn from this harness.yml: draw_harness() stamps the YAML's hash
    into the drawing."""
    if not os.path.exists(svg_path):
        return False
    with open(svg_path) as f:
        return _yml_stamp(yml_text) in f.read()


def draw_harness(yml_path):
    """Run WireViz on harness.yml (SVG only) and stamp the YAML's hash into the drawing;
    returns False when Graphviz's dot is missing."""
    if shutil.which("dot") is None:
        return False
    exe = os.path.join(os.path.dirname(sys.executable), "wireviz")
    subprocess.run([exe if os.path.exists(exe) else "wireviz", "-f", "s", yml_path], check=True,
                   stdout=subprocess.DEVNULL)
    svg_path = yml_path[:-4] + ".svg"
    with open(svg_path) as f:
        svg = f.read()
    with open(yml_path) as f:
        stamp = _yml_stamp(f.read())
    k = svg.index("<svg")
    with open(svg_path, "w") as f:
        f.write(svg[:k] + stamp + "\n" + svg[k:])
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated file is stale")
    a = ap.parse_args(argv)
    pm, board = load()
    files = outputs(pm, board)
    yml = os.path.join(WIRING, "harness.yml")
    svg = os.path.join(WIRING, "harness.svg")
    if a.check:
        stale = [p for p, text in files.items()
                 if not os.path.exists(p) or open(p).read() != text]
        if not harness_svg_matches(files[yml], svg):
            stale.append(svg)
        for p in stale:
            print("stale:", os.path.relpath(p, ROOT), "(run `make wiring`)")
        return 1 if stale else 0
    for p, text in files.items():
        with open(p, "w") as f:
            f.write(text)
        print("wrote", os.path.relpath(p, ROOT))
    if draw_harness(yml):
        print("wrote", os.path.relpath(svg, ROOT))
    else:
        print("harness.svg NOT redrawn: WireViz needs Graphviz's dot (apt-get install graphviz)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
