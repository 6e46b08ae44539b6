"""tools/calibrate: calibrate the pads of a table (docs/sensing.md, "Calibration").

    tools/calibrate --port /dev/ttyACM0          the real table, over its USB serial console
    tools/calibrate --sim [--front-end shift]    the simulated table (the same firmware steps)
    tools/calibrate --show calib.bin             what a calibration file holds
    tools/calibrate --port P --dry-run           the lines it would send, nothing sent

The scoreboard keeps running while it is calibrated (its watchdog stays fed): the tool sends
one command line per step on the serial console, which main.py hands to the firmware
(app.Scoreboard.command), and waits for the step's {"ev":"calib",...} line:

    calib empty    the board empty: every pad's zero (hall) / the pads covered on an empty board
    calib small    a small chip near the centre mark: its strength (hall) / seen radius
                   (presence); each time one more spot, the mean is kept
    calib big      a big chip likewise
    calib save     written to calib.bin on the Pico's flash, loaded at every boot

Between the steps it asks you to clear the board or put a chip down (three spots per kind). The same steps are in the
scoreboard's menu (docs/controls.md, "Calibrate pads") for a table without a computer.

--sim plays the same lines through the firmware on the simulated table (boardsim), putting the
chips on the centre itself, and writes the resulting calib.bin with --out.
"""
import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = (
    ("empty", "Take every chip off the board."),
    ("small", "Put a small chip down near the centre mark (within 2 cm)."),
    ("small", "Move it a little, somewhere else near the centre."),
    ("small", "Once more, somewhere else near the centre."),
    ("big", "Take it off; put a big chip down near the centre mark."),
    ("big", "Move it a little, somewhere else near the centre."),
    ("big", "Once more, somewhere else near the centre."),
    ("save", "Take it off. Saving."),
)
# where --sim puts the chips (mm), as a hand would near the centre
SIM_SPOTS = ((7.0, 3.0), (-12.0, 9.0), (4.0, -15.0))


# -- the file ---------------------------------------------------------------------------------
def _firmware_calib():
    for d in ("firmware", os.path.join("boardsim", "target")):
        p = os.path.join(ROOT, d)
        if p not in sys.path:
            sys.path.append(p)
    from sensing import calib
    return calib


def describe(data):
    """A calibration file as a dict (what --show prints), or raises ValueError."""
    cal = _firmware_calib()
    if len(data) < 8 or bytes(data[:4]) != cal.MAGIC:
        raise ValueError("not a calibration file (no ZCAL header)")
    shift = data[5] == 1
    n = data[6] | (data[7] << 8)
    d = cal.decode(bytes(data), shift, n)
    if d is None:
        raise ValueError("damaged: wrong size, version or checksum")
    base, s_small, s_big, ign = d
    out = {"version": data[4], "front_end": "shift" if shift else "hall", "cells": n,
           "ignored": [g for g in range(n) if ign[g]]}
    if shift:
        out["seen_radius_mm"] = {"small": s_small / 10, "big": s_big / 10}
    else:
        from tables import board_table as BT
        offs = [base[g] - BT.ADC_ZERO for g in range(n) if BT.PAD_PRESENT[g]]
        out["strength"] = {"small": s_small, "big": s_big}
        out["zero_offset_lsb"] = {"min": min(offs), "max": max(offs),
                                  "mean": round(sum(offs) / len(offs), 1)}
    return out


# -- the simulated table ------------------------------------------------------------------------
def timeline(front_end):
    """The tool's session on the simulated table, as runner ops."""
    tl = [{"op": "boot"}, {"op": "wait", "ms": 500}, {"op": "serial", "line": "calib empty"}]
    for kind, chip in (("small", "small"), ("big", "big1")):
        for x, y in SIM_SPOTS:
            tl += [{"op": "put", "chip": chip, "x": x, "y": y},
                   {"op": "serial", "line": "calib " + kind},
                   {"op": "lift", "chip": chip}]
    tl.append({"op": "serial", "line": "calib save"})
    return tl


def run_sim(front_end, runtime_name="micropython", out=None, log=print):
    """Calibrate the simulated table. Returns (calib events, calib.bin bytes or None)."""
    import io
    sys.path.insert(0, ROOT)
    from boardsim import runtime
    fd, final = tempfile.mkstemp(prefix="calibrate-final-", suffix=".json")
    os.close(fd)
    fd, cfg = tempfile.mkstemp(prefix="calibrate-config-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"front_end": front_end}, f)
    buf = io.StringIO()
    try:
        runtime.run(timeline(front_end), runtime_name, stdout=buf,
                    runner_args=["--final", final, "--config", cfg])
        with open(final) as f:
            state = json.load(f)
    finally:
        os.unlink(final)
        os.unlink(cfg)
    events = [json.loads(ln) for ln in buf.getvalue().splitlines() if ln.strip()]
    cal = [e for e in events if e.get("ev") == "calib"]
    for e in cal:
        log(json.dumps(e))
    data = bytes.fromhex(state["calib_bin"]) if state.get("calib_bin") else None
    if out and data:
        with open(out, "wb") as f:
            f.write(data)
    return cal, data


# -- the real table -----------------------------------------------------------------------------
class Console:
    """The Pico's USB serial console (pyserial): lines out, event lines in."""

    def __init__(self, port, baud=115200):
        import serial
        self.s = serial.Serial(port, baud, timeout=0.2)

    def send(self, line):
        self.s.write((line + "\n").encode())
        self.s.flush()

    def wait_for(self, step, timeout=30.0):
        end = time.time() + timeout
        buf = b""
        while time.time() < end:
            buf += self.s.read(256)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    e = json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    continue
                if e.get("ev") == "calib" and e.get("step") == step:
                    return e
                if e.get("ev") == "refused" and "command" in e:
                    raise RuntimeError("the scoreboard refused the command (old firmware?)")
        raise TimeoutError(f"no answer to 'calib {step}' within {timeout:.0f} s")


def run_device(port, ask=input, log=print, console=None):
    con = console or Console(port)
    results = []
    for step, what in STEPS:
        ask(what + " Press Enter when ready. ")
        con.send("calib " + step)
        e = con.wait_for(step)
        log(json.dumps(e))
        results.append(e)
        if not e.get("ok"):
            log(f"step {step} failed: " + ("no such chip seen at the centre" if step in ("small", "big")
                                            else "could not write the flash" if step == "save" else ""))
            return results
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--port", help="the Pico's serial port (e.g. /dev/ttyACM0)")
    g.add_argument("--sim", action="store_true", help="calibrate the simulated table")
    g.add_argument("--show", metavar="FILE", help="print what a calib.bin holds")
    ap.add_argument("--front-end", choices=("hall", "shift"), default="hall", help="--sim: the pads")
    ap.add_argument("--runtime", choices=("micropython", "cpython"), default="micropython")
    ap.add_argument("--out", "-o", help="--sim: write the calibration file here")
    ap.add_argument("--dry-run", action="store_true", help="--port: print the lines, send nothing")
    a = ap.parse_args(argv)
    if a.show:
        with open(a.show, "rb") as f:
            try:
                print(json.dumps(describe(f.read()), indent=1))
            except ValueError as e:
                print(f"{a.show}: {e}", file=sys.stderr)
                return 1
        return 0
    if a.sim:
        cal, data = run_sim(a.front_end, a.runtime, a.out)
        if data is None:
            print("no calibration was saved", file=sys.stderr)
            return 1
        d = describe(data)
        d.pop("ignored")
        print(json.dumps(d))
        return 0
    if a.dry_run:
        for step, what in STEPS:
            print(f"# {what}\ncalib {step}")
        return 0
    try:
        res = run_device(a.port)
    except (OSError, TimeoutError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0 if len(res) == len(STEPS) and all(e.get("ok") for e in res) else 1


if __name__ == "__main__":
    sys.exit(main())
