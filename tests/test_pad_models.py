"""The simulator's pad models brought up to date a change at a time give what they give made
from scratch (boardsim/target/hall_model.py, presence_model.py; docs/performance.md, "The
physics and shot tests' games").

The world updates the models between firmware steps with the chips (and hands) as they are:
one chip moving a little, a chip fading in or out under a hand, chips coming and going. The
hall model takes off and adds only the field of the chips that changed (under MicroPython in
viper, under CPython its Python twin of the same), the presence model makes again only the pads
near what changed. Here random sequences of such changes, under both runtimes: after each, the
hall model's field and readings must be the sum of every chip's field at every pad (HallModel.
chip_field, from scratch), and the presence model's levels and ragged rims those of a model
given the same chips and hands at once.
"""
from conftest import run_script

TARGET = r'''
import sys
import json
import world_table as T
import hall_model as HM
import presence_model as PM
from array import array
from lcg import Rng

job = json.loads(sys.stdin.readline())
rng = Rng(job["seed"])
POL = (T.POLARITY["small"], T.POLARITY["big"])
RAD = (T.R["small"], T.R["big"])
hm = HM.HallModel(T)
pm = PM.PresenceModel(T)
packed = array('i', bytes(4 * 4 * 6))
bad = []
counts = {"changes": 0, "moved": 0, "faded": 0, "came": 0, "went": 0, "pads": 0, "hands": 0,
          "same": 0}
chips = []          # [x, y, kind, amp]
hands = []          # (x, y)


def spot():
    return (rng.below(4400) - 2200, rng.below(9400) - 4700)


for step in range(job["steps"]):
    u = rng.below(100)
    if u < 55 and chips:                # one chip moves a little (the world's step)
        c = chips[rng.below(len(chips))]
        c[0] += rng.below(61) - 30
        c[1] += rng.below(61) - 30
        counts["moved"] += 1
    elif u < 70 and chips:              # a hand fades one in or out
        c = chips[rng.below(len(chips))]
        c[3] = rng.below(1001)
        counts["faded"] += 1
    elif u < 80 and len(chips) < 6:     # one comes (now and then on another's very spot)
        if chips and rng.below(4) == 0:
            c = list(chips[rng.below(len(chips))])
        else:
            x, y = spot()
            c = [x, y, rng.below(2), 1000]
        chips.append(c)
        counts["came"] += 1
    elif u < 88 and chips:              # one goes
        chips.pop(rng.below(len(chips)))
        counts["went"] += 1
    elif u < 94:                        # a hand comes or goes (presence pads)
        if hands and rng.below(2):
            hands.pop()
        elif len(hands) < 2:
            hands.append(spot())
        counts["hands"] += 1
    else:
        counts["same"] += 1             # nothing changed
    counts["changes"] += 1
    # the hall model: as the world packs the chips on the board (amplitude above 0)
    n = 0
    for c in chips:
        if c[3] > 0:
            packed[4 * n] = c[0]
            packed[4 * n + 1] = c[1]
            packed[4 * n + 2] = POL[c[2]]
            packed[4 * n + 3] = c[3]
            n += 1
    hm.update_packed(packed, n)
    on = [(packed[4 * i], packed[4 * i + 1], packed[4 * i + 2], packed[4 * i + 3]) for i in range(n)]
    for p in range(T.N_PADS):
        f = 0
        for ch in on:
            f += hm.chip_field(p, ch)
        if (hm.field[p] != f or hm.clean[p] != hm.base[p] + f) and len(bad) < 5:
            bad.append(["hall", step, p, hm.field[p], f])
    # the presence model, and one given the same at once
    things = [(c[0], c[1], RAD[c[2]], c[3]) for c in chips]
    pm.update(things, hands)
    fresh = PM.PresenceModel(T)
    fresh.update(things, hands)
    if (pm.state != fresh.state or pm.ragged != fresh.ragged or pm.nragged != fresh.nragged) \
            and len(bad) < 5:
        g = next(g for g in range(pm.n) if pm.state[g] != fresh.state[g] or pm.ragged[g] != fresh.ragged[g])
        bad.append(["presence", step, g, pm.state[g], fresh.state[g], pm.ragged[g], fresh.ragged[g]])
    counts["pads"] = max(counts["pads"], sum(1 for g in range(pm.n) if pm.state[g]))
print(json.dumps({"bad": bad, "counts": counts}))
'''


def test_the_pad_models_updated_change_by_change_are_the_models_made_at_once(runtime, tmp_path):
    r = run_script(TARGET, "pad_models_target.py", runtime, {"seed": 21, "steps": 160}, tmp_path)
    assert r["bad"] == [], r["bad"]
    c = r["counts"]
    # every kind of change happened, and the boards were not empty
    assert min(c["moved"], c["faded"], c["came"], c["went"], c["hands"], c["same"]) > 3, c
    assert c["pads"] > 20, c


# -- the hall pads' noise and a bank's reads, a batch at a time under CPython ------------------
# hall_model.py draws the noise NB values at a time: under MicroPython in viper, under CPython
# from the XOR of the sequences that follow each set bit of the state (xorshift32 is linear;
# viper_twins.hall_draw, put in hall_model's place with the firmware's viper twins); here both
# runtimes against one plain xorshift32 loop, from states that include 0, 1 and all ones, draw
# after draw
NOISE_TARGET = r'''
import sys
import json
from array import array
import world_table as T
import hall_model as HM
from lcg import Rng

if sys.implementation.name == "micropython":
    draw = HM._draw
else:
    import viper_twins
    draw = HM._draw
    assert draw is viper_twins.hall_draw, draw

NB = HM.NB
tab = HM._scale_table(T.NOISE_LSB)
rng = Rng(5)
bad = []
draws = 0
for trial in range(12):
    s0 = (0, 1, 0xFFFFFFFF, 0x80000000)[trial] if trial < 4 else (rng.below(65536) << 16) | rng.below(65536)
    st = array('I', (s0,))
    s = s0
    for d in range(3 if trial > 1 else 1):
        raw = array('H', bytes(2 * NB))
        fast = array('i', bytes(4 * (NB + 4)))
        buf = memoryview(fast)[2:2 + NB]
        draw(raw, buf, NB, st, tab)
        draws += 1
        for i in range(NB):
            s ^= (s << 13) & 0xFFFFFFFF
            s ^= s >> 17
            s ^= (s << 5) & 0xFFFFFFFF
            u = (s & 255) + ((s >> 8) & 255) + ((s >> 16) & 255) + (s >> 24)
            if (raw[i] != u | (((s >> 8) & 1) << 15) or fast[2 + i] != tab[u]) and len(bad) < 5:
                bad.append([trial, d, i, raw[i], fast[2 + i], u])
        if (st[0] != s or fast[0] or fast[1] or fast[NB + 2] or fast[NB + 3]) and len(bad) < 5:
            bad.append([trial, d, "state or beyond the buffer", st[0], s])
print(json.dumps({"bad": bad, "draws": draws}))
'''


def test_the_hall_noise_drawn_a_batch_at_a_time_is_the_plain_xorshift(runtime, tmp_path):
    r = run_script(NOISE_TARGET, "noise_target.py", runtime, None, tmp_path)
    assert r["bad"] == [] and r["draws"] == 32, r


# hall_scan.read_bank()'s CPython twin hands a bank to the world's bank reader (viper_twins.py
# _bank_reader) when the firmware's readers are the world's: the same pin moves and readings,
# the noise drawn in the same order, against the firmware's own body calling the readers one by
# one, from the same state: every Gray position, chips on the pads, the noise running out mid-
# bank; with a fault or a stand-in the bank reader declines (the readers one by one then), and
# with a channel pin's value() not the machine's own (a bench counting its calls: they must be
# the body's)
BANK_TARGET = r'''
import json
from array import array
import machine
import world as W
import viper_twins as VT
from tables import pins
from sensing import hall_scan as HS
from lcg import Rng

w = W.World()
machine.attach(w)
h = w.hall
chp = [machine.Pin(p, machine.Pin.OUT, value=0) for p in pins.MUX_CHANNEL_SELECT]
bkp = [machine.Pin(p, machine.Pin.OUT, value=0) for p in pins.MUX_BANK_SELECT]
rd = [machine.ADC(machine.Pin(p)).read_u16 for p in pins.MUX_ADC]
HS.read_bank(0, chp, rd[0], rd[1], rd[2], array('H', bytes(2 * 48)))     # (makes the bank reader)
ours = VT.BANK_READER[0][:3] == rd and VT.BANK_READER[0][3] is not None
calls = [0, 0]                  # the bank reader's calls, and those it took
bank = VT.BANK_READER[0][3]


def counted(ops, chp_, raw_):
    calls[0] += 1
    took = bank(ops, chp_, raw_)
    calls[1] += 1 if took else 0
    return took


VT.BANK_READER[0][3] = counted
rng = Rng(9)
packed = array('i', bytes(4 * 4 * 4))
for i in range(4):
    packed[4 * i] = rng.below(4000) - 2000
    packed[4 * i + 1] = rng.below(9000) - 4500
    packed[4 * i + 2] = (1, -1)[i & 1]
    packed[4 * i + 3] = 1000
h.update_packed(packed, 4)


def state():
    return (bytes(machine._level), bytes(h.fast), bytes(h.nraw), h.rng[0])


def put(s):
    machine._level[:] = s[0]
    h.fast[:] = array('i', s[1])
    h.nraw[:] = array('H', s[2])
    h.rng[0] = s[3]


moves = [0]
counted_moves = [0]             # the counting value()'s calls from the twin
own = chp[2].value


def counting(v=None):
    moves[0] += 1
    return own(v)


bad = []
n = 0
for trial in range(40):
    pos = trial % 16
    wrapped = trial in (21, 22)
    if wrapped:
        chp[2].value = counting
    code = HS.GRAY[pos]
    for b in range(4):
        bkp[b].value((code >> b) & 1)
    for c in range(4):
        chp[c].value(rng.below(2))
    if trial % 4 == 1:
        h.fast[0] = 1024 - rng.below(40)        # the noise runs out within the bank
    fault = trial == 30
    if fault:
        w.fault({"op": "fault", "pad": [3, 5], "mode": "numb"}, 0)
    if trial == 34:
        w.stand_in(w)                           # (the world itself standing in: flags set)
    before = state()
    raw1 = array('H', bytes(2 * 48))
    raw2 = array('H', bytes(2 * 48))
    moves[0] = 0
    HS.read_bank(pos << 4, chp, rd[0], rd[1], rd[2], raw1)
    after = state()
    moved = moves[0]
    counted_moves[0] += moved
    put(before)
    HS.read_bank.firmware(pos << 4, chp, rd[0], rd[1], rd[2], raw2)
    if (raw1 != raw2 or after != state() or moves[0] != 2 * moved) and len(bad) < 5:
        bad.append([trial, list(raw1), list(raw2), after[1:] == state()[1:], moved, moves[0]])
    if wrapped:
        chp[2].value = own
    if trial == 34:
        w.stand_in(None)
    n += 1
print(json.dumps({"bad": bad, "ours": ours, "calls": calls, "n": n, "moves": counted_moves[0]}))
'''


def test_a_banks_reads_in_one_call_are_the_readers_reads_one_by_one(tmp_path):
    r = run_script(BANK_TARGET, "bank_target.py", "cpython", None, tmp_path)
    assert r["bad"] == [] and r["ours"], r
    # every bank went to the bank reader; it took all but the faulty one and the stand-in's
    # (a fault stays: every bank from the fault on), and the two with a counting value()
    assert r["calls"][0] == 40 and r["calls"][1] == 28 and r["moves"] > 0, r


# shift_scan.read_rows()'s CPython twin hands a step's strobes to the world's strobe reader
# (viper_twins.py _strobe_reader) when the firmware's SPI reads through the world's readinto: the
# same pin levels, latches, coins, random state and bytes read as the firmware's own body
# (Pin.value() and readinto one by one), from the same state: every step of a frame, chips and
# hands on the pads (ragged rims: coins), pad and register faults, select pins left anywhere;
# it declines while a stand-in answers and for a pin whose value() is not the machine's own
STROBE_TARGET = r'''
import json
import machine
import world as W
import viper_twins as VT
import world_table as T
from sensing import shift_scan as SS
from lcg import Rng

w = W.World(front_end="shift")
machine.attach(w)
sc = SS.PresenceScanner()
pm = w.pres
sc.step()                       # (makes the strobe reader)
ours = VT.STROBE_READER[0][0] is sc.spi.readinto and VT.STROBE_READER[0][1] is not None
calls = [0, 0]                  # the strobe reader's calls, and those it took
strobes = VT.STROBE_READER[0][1]


def counted(*a):
    calls[0] += 1
    c = strobes(*a)
    calls[1] += 1 if c >= 0 else 0
    return c


VT.STROBE_READER[0][1] = counted
rng = Rng(13)


told = [0]          # a select pin's watcher's calls (a bench's)


def tell(pin, level):
    told[0] += 1


def state():
    return (bytes(machine._level), bytes(pm.latched), bytes(pm.coin), pm._rs[0], pm.latches,
            bytes(sc.rowbuf), told[0])


def put(s):
    machine._level[:] = s[0]
    pm.latched[:] = s[1]
    pm.coin[:] = s[2]
    pm._rs[0] = s[3]
    pm.latches = s[4]
    sc.rowbuf[:] = s[5]
    told[0] = s[6]


def spot():
    return (rng.below(4400) - 2200, rng.below(9400) - 4700)


bad = []
n = 0
# steps read again with nothing random on the pads (the strobe reader's kept steps): four
# steps' strobes over and over, chips coming onto their rows and going between, a hand for a
# while (its ragged rim's coins: nothing kept), a flickering register and a watcher on a select
# pin, the select pins now and then left where another step left them (a stale code)
G = 4
for trial in range(64):
    if trial % 16 == 8:
        g = trial // 16 % G
        y = T.PRES_Y0 + (g * SS.ROWS_PER_STEP + 3) * T.PRES_PITCH
        chips = [(rng.below(4000) - 2000, y, 250, 1000)] if trial != 40 else []
        pm.update(chips, [(rng.below(4000) - 2000, y)] if trial == 24 else [])  # (a hand: coins)
    if trial == 44:
        pm.set_sr_fault(rng.below(pm.nsr), 3)       # a register flickering for a while: coins
    if trial == 52:
        pm.clear_faults()
    if trial == 58:
        machine.watch(sc.sel[0].id, tell)       # a watcher told of a select pin's moves
    strobe = trial % G * SS.STROBES_PER_STEP
    code = sc.code if trial % 7 != 6 else 0
    before = state()
    c1 = SS.read_rows(strobe, code, sc.sel, sc.load, sc.spi, sc.views)
    after = state()
    put(before)
    c2 = SS.read_rows.firmware(strobe, code, sc.sel, sc.load, sc.spi, sc.views)
    if (c1 != c2 or after != state()) and len(bad) < 5:
        bad.append(["kept", trial, c1, c2, [a == b for a, b in zip(after, state())]])
    sc.code = c1
    n += 1
kept = strobes.hits[0]
machine.watch(sc.sel[0].id, None)
pm.update([])
plain_value = sc.sel[2].value
for trial in range(48):
    if trial % 16 == 0:
        chips = [spot() + ((180, 250)[rng.below(2)], 1000) for _ in range(4)]
        hands = [spot()] if trial else []
        pm.update(chips, hands)
    if trial == 20:
        pm.set_fault(rng.below(pm.n), 1 + rng.below(3))
        pm.set_sr_fault(rng.below(pm.nsr), 1 + rng.below(3))
    if trial == 40:
        w.stand_in(w)
    if trial == 44:
        w.stand_in(None)
        sc.sel[2].value = lambda v=None: plain_value(v)     # a bench's counting pin
    strobe = (trial % 16) * SS.STROBES_PER_STEP
    code = rng.below(256) if trial % 3 == 1 else sc.code
    before = state()
    c1 = SS.read_rows(strobe, code, sc.sel, sc.load, sc.spi, sc.views)
    after = state()
    put(before)
    c2 = SS.read_rows.firmware(strobe, code, sc.sel, sc.load, sc.spi, sc.views)
    if (c1 != c2 or after != state()) and len(bad) < 5:
        bad.append([trial, c1, c2, [a == b for a, b in zip(after, state())]])
    sc.code = c1
    n += 1
print(json.dumps({"bad": bad, "ours": ours, "calls": calls, "n": n, "ragged": pm.nragged,
                  "latches": pm.latches, "kept": kept}))
'''


def test_a_steps_strobes_in_one_call_are_the_pins_and_reads_one_by_one(tmp_path):
    r = run_script(STROBE_TARGET, "strobe_target.py", "cpython", None, tmp_path)
    assert r["bad"] == [] and r["ours"] and r["ragged"] > 0, r
    # every step went to the strobe reader; it took all but the stand-in's and the counted pin's
    assert r["calls"] == [112, 104] and r["latches"] == (1 + 112) * 12, r   # (the first step: 12)
    # steps read again at rest were taken as kept (the latches counted all the same)
    assert r["kept"] >= 8, r
