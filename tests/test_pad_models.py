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
