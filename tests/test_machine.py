"""The `machine` stand-in (boardsim/target/machine.py) and the world behind it, against what the
parts' datasheets and MicroPython's rp2 port documentation say the firmware may rely on:

- Pin IRQs (RP2040 datasheet 2.19.3, GPIO interrupts; MicroPython Pin.irq): edge triggers fire
  once per transition of the chosen direction, never while the level stays, the handler gets
  the Pin; trigger defaults to both edges; a new irq() replaces the handler; the world's inputs
  idle at their pulled-up levels; a handler runs as a hard IRQ, with the heap locked.
- ADC through the multiplexers (CD74HC4067: S0..S3 select channel S3S2S1S0 in binary; two
  levels: channel selects, then bank selects, into ADC0..2 = GP26..28; read_u16 is 0..65535):
  each select address reads exactly its own pad, one select bit changed reads another pad;
  every pad has one address; unused addresses read the mid-scale zero; ADC(n) / ADC(Pin(26+n)).
- WDT (RP2040 datasheet 4.7; MicroPython machine.WDT): timeout at most 8388 ms; feeding
  restarts the count; a starved watchdog resets the chip, and reset_cause() then says
  WDT_RESET (the firmware reports a watchdog reset at boot).

Every case runs under the MicroPython unix port and under CPython (one process each).
"""
import json

import pytest

from runtimes import RUNTIMES, run_target


CASES = r'''
import sys
import json
import runner                 # installs the virtual clock as `time`; main() runs only as a script
import machine
import micropython
import vclock
import world_table as T
from machine import Pin, ADC, WDT

MP = sys.implementation.name == "micropython"
res = {}


def case(f):
    try:
        res[f.__name__] = f()
    except Exception as e:
        res[f.__name__] = {"error": repr(e)}
    return f


R = runner.Runner()           # a world attached to machine, firmware not booted
W = R.world
W.power_on()
PM = T.PINMAP


@case
def irq_edges():
    calls = []
    def h(p):
        calls.append((p.id, p.value()))
    gp = PM["cup_beam"]["a"]
    p = Pin(gp, Pin.IN, Pin.PULL_UP)
    out = {"idle": p.value()}
    p.irq(h, Pin.IRQ_FALLING)
    machine.drive(gp, 0)
    machine.drive(gp, 0)          # no transition: no interrupt
    machine.drive(gp, 1)          # rising: not asked for
    machine.drive(gp, 0)
    out["falling"] = list(calls)
    calls.clear()
    machine.drive(gp, 1)
    p.irq(h, Pin.IRQ_RISING)
    machine.drive(gp, 0)
    machine.drive(gp, 1)
    machine.drive(gp, 1)
    out["rising"] = list(calls)
    calls.clear()
    p.irq(h)                      # default: both edges
    machine.drive(gp, 0)
    machine.drive(gp, 1)
    out["both"] = list(calls)
    calls.clear()
    p.irq(None)
    machine.drive(gp, 0)
    machine.drive(gp, 1)
    out["none"] = list(calls)
    seen = []
    p.irq(lambda q: seen.append(q is p), Pin.IRQ_FALLING | Pin.IRQ_RISING)
    machine.drive(gp, 0)
    out["same_pin"] = list(seen)
    machine.drive(gp, 1)
    out["buttons_idle"] = [Pin(PM["buttons"][b], Pin.IN, Pin.PULL_UP).value() for b in ("next", "ok", "undo", "turn")]
    return out


@case
def irq_is_hard():
    # the world raises edges the way a hard IRQ runs: with the heap locked
    gp = PM["hit"]
    p = Pin(gp, Pin.IN, Pin.PULL_UP)
    got = []
    def alloc(q):
        try:
            got.append([1, 2, 3])
            got.append("allocated")
        except MemoryError:
            micropython.heap_unlock()
            got.append("MemoryError")
            micropython.heap_lock()
    p.irq(alloc, Pin.IRQ_FALLING)
    W._drive(gp, 0)
    W._drive(gp, 1)
    return got[-1]


def select(ch, bank):
    for i in range(4):
        Pin(PM["mux_channel_select"][i], Pin.OUT).value((ch >> i) & 1)
        Pin(PM["mux_bank_select"][i], Pin.OUT).value((bank >> i) & 1)


def address_of(pad):
    for i in range(len(T.PAD_AT)):
        if T.PAD_AT[i] == pad:
            adc = i // (T.BANKS * T.CHANNELS)
            bank = (i // T.CHANNELS) % T.BANKS
            return adc, bank, i % T.CHANNELS
    return None


def adc12(v):
    """What read_u16() gives for a 12-bit conversion of v (the RP2040's ADC; hall_model.read)."""
    return ((v >> 4) << 4) | (v >> 12)


@case
def adc_mux():
    W.hall.noise_lsb = 0
    out = {}
    # every pad has exactly one address; the others read the mid-scale zero
    seen = {}
    for i in range(len(T.PAD_AT)):
        p = T.PAD_AT[i]
        if p >= 0:
            seen[p] = seen.get(p, 0) + 1
    out["pads_addressed_once"] = len(seen) == T.N_PADS and max(seen.values()) == 1
    # a small chip (north up) right above pad 300
    pad = 300
    W.put("small", T.PAD_X[pad], T.PAD_Y[pad], vclock.now_us())
    vclock.advance_us(500000)
    W.advance_to(vclock.now_us())
    adc, bank, ch = address_of(pad)
    out["address"] = [adc, bank, ch]
    adcs = [ADC(Pin(26)), ADC(Pin(27)), ADC(28)]
    out["channels"] = [a.channel for a in adcs]
    select(ch, bank)
    out["on_pad"] = adcs[adc].read_u16()
    out["expected"] = adc12(T.ADC_ZERO + T.PAD_OFFSET[pad] + W.hall.field[pad])
    # one select bit changed at a time: another pad (or none), far from the chip
    others = []
    for bit in range(4):
        for which in ("ch", "bank"):
            c2, b2 = (ch ^ (1 << bit), bank) if which == "ch" else (ch, bank ^ (1 << bit))
            select(c2, b2)
            other = T.PAD_AT[(adc * T.BANKS + b2) * T.CHANNELS + c2]
            v = adcs[adc].read_u16()
            exp = T.ADC_ZERO if other < 0 else adc12(T.ADC_ZERO + T.PAD_OFFSET[other] + W.hall.field[other])
            others.append([which, bit, other, v, exp])
    out["others"] = others
    # the same address on another ADC input is another pad
    select(ch, bank)
    out["other_adc"] = [adcs[(adc + 1) % 3].read_u16(), T.PAD_AT[(((adc + 1) % 3) * T.BANKS + bank) * T.CHANNELS + ch]]
    # an unused address reads the zero exactly; the temperature sensor channel reads 0
    unused = [i for i in range(len(T.PAD_AT)) if T.PAD_AT[i] < 0]
    if unused:
        i = unused[0]
        select(i % T.CHANNELS, (i // T.CHANNELS) % T.BANKS)
        out["unused"] = adcs[i // (T.BANKS * T.CHANNELS)].read_u16()
    out["temp"] = ADC(ADC.CORE_TEMP).read_u16()
    # a stuck sensor reads its stuck value; the reading saturates at 16 bits
    W.hall.set_fault(pad, 70000)
    select(ch, bank)
    out["stuck"] = adcs[adc].read_u16()
    W.hall.clear_faults()
    W.lift("small", vclock.now_us())
    vclock.advance_us(500000)
    W.advance_to(vclock.now_us())
    out["lifted"] = adcs[adc].read_u16()
    out["lifted_expected"] = adc12(T.ADC_ZERO + T.PAD_OFFSET[pad])
    return out


@case
def wdt():
    out = {}
    try:
        WDT(timeout=8389)
        out["too_long"] = "accepted"
    except ValueError:
        out["too_long"] = "ValueError"
    d = WDT(timeout=8388)
    out["max_ok"] = d.timeout_us
    d = WDT(timeout=100)
    t0 = vclock.now_us()
    vclock.advance_us(60000)
    d.feed()
    out["fed_at"] = d.fed_us - t0
    out["registered"] = W.watchdog is d
    W.watchdog = None
    return out


@case
def wdt_resets_the_firmware():
    # the firmware boots; a watchdog it starts (here started for it) resets it when starved
    out = {}
    R.boot()
    R.run_ms(300)
    out["cause_before"] = machine.reset_cause()
    d = WDT(timeout=200)
    fed = []
    tm = machine.Timer(period=50, mode=machine.Timer.PERIODIC, callback=lambda t: (d.feed(), fed.append(1)))
    R.run_ms(1000)
    out["fed_ok"] = {"resets": R.lines_before, "feeds": len(fed) >= 15}
    tm.deinit()
    R.run_ms(400)
    out["after_starving"] = {"cause": machine.reset_cause(), "lines_before": R.lines_before > 0,
                             "booted": R.sb is not None, "not_mine": W.watchdog is not d}
    return out


sys.stdout.write("\nRESULT " + json.dumps(res) + "\n")
'''


@pytest.fixture(scope="module", params=RUNTIMES)
def results(request, tmp_path_factory):
    res, p = run_target(CASES, request.param, name="cases.py", tmp_path=tmp_path_factory.mktemp("machine"),
                        heapsize=None, dirs=("firmware", "boardsim/target"), timeout=120, marker="RESULT ")
    res["_events"] = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    res["_runtime"] = request.param
    return res


def get(results, name):
    r = results[name]
    assert not (isinstance(r, dict) and "error" in r), r
    return r


def test_pin_irq_fires_once_per_edge_of_the_chosen_direction(results):
    r = get(results, "irq_edges")
    gp = r["falling"][0][0]
    assert r["idle"] == 1                              # a beam input idles high (pull-up, beam intact)
    assert r["falling"] == [[gp, 0], [gp, 0]]          # two falling edges, the repeat and the rise ignored
    assert r["rising"] == [[gp, 1]]
    assert r["both"] == [[gp, 0], [gp, 1]]             # trigger defaults to both edges
    assert r["none"] == []                             # irq(None) removes the handler
    assert r["same_pin"] == [True]                     # the handler gets the Pin itself
    assert r["buttons_idle"] == [1, 1, 1, 1]           # buttons up


def test_pin_irq_runs_with_the_heap_locked(results):
    r = get(results, "irq_is_hard")
    if results["_runtime"] == "micropython":
        assert r == "MemoryError"
    else:
        assert r == "allocated"                        # CPython has no heap lock to enforce


def test_adc_reads_the_pad_its_select_pins_address(results):
    r = get(results, "adc_mux")
    assert r["pads_addressed_once"]
    assert r["channels"] == [0, 1, 2]                  # ADC(Pin(26)), ADC(Pin(27)), ADC(2)
    assert r["on_pad"] == r["expected"]
    assert r["on_pad"] - 32768 > 10000                 # a magnet right above: a strong reading
    for which, bit, other, v, exp in r["others"]:
        assert v == exp, (which, bit, other)
        assert abs(v - r["on_pad"]) > 5000, (which, bit)
    assert r["other_adc"][1] != -1
    assert r["other_adc"][0] != r["on_pad"]
    assert r.get("unused", 32768) == 32768
    assert r["temp"] == 0
    # a stuck raw value, 16 bits, converted as any other (12 bits, scaled by read_u16)
    assert r["stuck"] == (((70000 & 0xFFFF) >> 4) << 4) | ((70000 & 0xFFFF) >> 12)
    assert r["lifted"] == r["lifted_expected"]         # back to the pad's own offset


def test_wdt_limits_and_feed(results):
    r = get(results, "wdt")
    assert r["too_long"] == "ValueError"
    assert r["max_ok"] == 8388 * 1000
    assert r["fed_at"] == 60000
    assert r["registered"]


def test_starved_wdt_resets_and_the_firmware_says_so(results):
    r = get(results, "wdt_resets_the_firmware")
    assert r["cause_before"] == 1                      # PWRON_RESET
    assert r["fed_ok"] == {"resets": 0, "feeds": True}
    a = r["after_starving"]
    assert a == {"cause": 3, "lines_before": True, "booted": True, "not_mine": True}
    boots = [e for e in results["_events"] if e["ev"] == "boot"]
    assert [b["reset"] for b in boots] == ["power", "watchdog"]
