"""The firmware measured on the RP2040 itself: the real MicroPython image on an emulated Pico
(rp2040js 1.4.1 under Node; docs/rp2040.md), emulated cycles at 125 MHz, not estimates.

    .venv/bin/python -m bench.rp2040 [--quick] [--write-doc]

Rows, per configuration (front end x displays, config.json):
- heap free after boot, gc.mem_free() with the firmware held (main.py stopped at the REPL), for
  the frozen image (make image) and for a stock image with the firmware as .mpy files on the
  flash (make image-stock), whichever are in the cache folder;
- with the frozen image, on the empty table at rest: a 16-step frame (16 Scoreboard.step()
  calls, no idling), the scanner's step, the fault monitor's frame and the tracker's frame,
  each timed with time.ticks_us() over many calls.

Without an image, boot ROM, Node or rp2040js it says so and exits 0 (make bench runs it).
--write-doc replaces the section "Measured on the emulated RP2040" of docs/performance.md.
"""
import argparse
import datetime
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from boardsim.rp2040 import images  # noqa: E402

CONFIGS = [
    ("hall", "oled", {}),
    ("hall", "sevenseg", {"display": "sevenseg"}),
    ("hall", "both", {"display": "both"}),
    ("presence", "oled", {"front_end": "shift"}),
    ("presence", "sevenseg", {"front_end": "shift", "display": "sevenseg"}),
    ("presence", "both", {"front_end": "shift", "display": "both"}),
]

TIMING = r'''
import time
sb = __main__.sb
gc.collect()

def per_call(fn, n):
    t0 = time.ticks_us()
    for _ in range(n):
        fn()
    return time.ticks_diff(time.ticks_us(), t0) * 1000 // n     # ns

# a frame: the loop turns that scan every bank once (16 on the unix port; on the chip a turn
# scans hall_scan's per_step banks)
SPF = 16 // getattr(sb.scan, "per_step", 1)

def frame():
    for _ in range(SPF):
        sb.step()

def part(name, v):
    print('{"ev":"timing_part","what":"%s","v":%d}' % (name, v))
    return v

r = {"ev": "timing"}
# the first frames after main.py is stopped cost about three times a steady one (78 against 26 ms
# measured 2026-12-01: the tracker's settle window after the stop); a frame at rest is measured
# once they are past
for _ in range(8):
    frame()
r["frame16_ns"] = part("frame16_ns", per_call(frame, 4))
r["scan_step_ns"] = part("scan_step_ns", per_call(sb.scan.step, 32))
r["fault_frame_ns"] = part("fault_frame_ns", per_call(sb.faults.frame, 16))
r["tracker_frame_ns"] = part("tracker_frame_ns", per_call(sb.tracker.frame, 16))
worst = 0
for _ in range(16):
    t0 = time.ticks_us()
    sb.faults.frame()
    d = time.ticks_diff(time.ticks_us(), t0)
    if d > worst:
        worst = d
r["fault_frame_worst_us"] = worst
import json
print(json.dumps(r))
'''

SECTION = "## Measured on the emulated RP2040"
DOC = os.path.join(ROOT, "docs", "performance.md")


def heap(config, image):
    from boardsim.rp2040 import probe
    os.environ["RP2040_IMAGE"] = image
    return probe.heap_free(config or None)


def timing(config, image):
    from boardsim.rp2040 import probe
    os.environ["RP2040_IMAGE"] = image
    r = probe.run_module(TIMING, config=config or None, await_ms=60000, await_ev="timing", wait_ms=50)
    return r.last("timing")


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the default configuration only")
    ap.add_argument("--write-doc", action="store_true", help="write the table into docs/performance.md")
    a = ap.parse_args(argv)
    saved = os.environ.get("RP2040_IMAGE")
    why = images.missing()
    if why:
        print(f"bench.rp2040: not run: {why}")
        return 0
    frozen = images.find_image("frozen") if saved is None else (saved if images.image_is_frozen(saved) else None)
    stock = images.find_image("stock") if saved is None else (None if frozen else saved)
    configs = CONFIGS[:1] if a.quick else CONFIGS
    rows = []
    for fe, disp, cfg in configs:
        row = {"config": f"{fe}, {disp}"}
        if frozen:
            row["frozen"] = heap(cfg, frozen)
            row["t"] = timing(cfg, frozen)
        if stock:
            row["mpy"] = heap(cfg, stock)
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
    if saved is None:
        os.environ.pop("RP2040_IMAGE", None)
    else:
        os.environ["RP2040_IMAGE"] = saved
    KB = 1024
    out = ["| configuration | heap free after boot, frozen | heap free after boot, .mpy on flash "
           "| a frame at rest (16 banks) | scan step (1 bank; 4 on the chip) | fault monitor frame (mean / worst) | tracker frame |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r.get("t") or {}
        out.append("| {} | {} | {} | {} | {} | {} | {} |".format(
            r["config"],
            f"{r['frozen'] / KB:.1f} KB" if "frozen" in r else "-",
            f"{r['mpy'] / KB:.1f} KB" if "mpy" in r else "-",
            ms(t["frame16_ns"]) if t else "-", ms(t["scan_step_ns"]) if t else "-",
            f"{ms(t['fault_frame_ns'])} / {t['fault_frame_worst_us'] / 1000:.2f} ms" if t else "-",
            ms(t["tracker_frame_ns"]) if t else "-"))
    table = "\n".join(out)
    print(table)
    if a.write_doc:
        write_doc(table, frozen, stock)
    return 0


def write_doc(table, frozen, stock):
    today = datetime.date.today().isoformat()
    text = f"""{SECTION}

Measured by `make bench` (bench/rp2040.py) on {today}: the firmware in MicroPython v1.28.0's rp2
port (RPI_PICO) on an emulated RP2040 (rp2040js 1.4.1 under Node 20; docs/rp2040.md), the
simulated table on its pins, the board empty and at rest. Heap figures are exact for that
build (gc.mem_free() with the firmware's objects held, main.py stopped at the REPL); times are
emulated cycles at 125 MHz, timed on the chip with time.ticks_us(): rp2040js counts every
Cortex-M0+ instruction's cycles but models no flash (XIP cache) wait states and no bus
contention, so a real Pico is within about +-30 % of these (slower where code runs from flash
and misses the XIP cache). Bus transfers are timed in the emulator from their clock rates
(I2C 400 kHz, 9 bit times a byte; SPI at its set rate), not from a real bus: the OLED's rows
stay the estimates above. Images: frozen `{os.path.basename(frozen) if frozen else '-'}`,
stock `{os.path.basename(stock) if stock else '-'}` with `make firmware`'s .mpy files.

{table}
"""
    with open(DOC) as f:
        doc = f.read()
    if SECTION in doc:
        doc = re.sub(re.escape(SECTION) + r".*?(?=\n## |\Z)", text.rstrip("\n") + "\n", doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    with open(DOC, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    sys.exit(main())
