"""From a chip coming to rest to the displays showing the new score: simulated milliseconds
and their parts (settle window, verdict, rules, redraw, display refresh), twice: as the
simulator runs the firmware (1 ms of virtual time per step, whatever the step does), and paced
as the Pico would run it (bench/loop_cost.py's estimates: every step, find, tracker frame,
verdict, redraw and display send advances the clock by what it would take there).

    .venv/bin/python -m bench.latency [--only LABEL]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import _target as T  # noqa: E402
from bench import loop_cost as L  # noqa: E402


def shots():
    """{name: timeline} whose last op is the shot measured."""
    from boardsim.testing import Table
    return {
        "strike (drop in cup b)": T.timeline(Table("bowling", players=1).place("small", "a.pocket")
                                              .shoot("small", "b.pocket", "b.cup").scenario()),
        "8 pins (rest in b.e2)": T.timeline(Table("bowling", players=1).place("small", "a.pocket")
                                             .shoot("small", "b.e2").scenario()),
        "trap: knock into b.back4": T.timeline(Table("trap1", players=2, trapper=1).place_all(
            {"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
            .shoot("big2", "a.e2", knocks={"small": ["b.back4"]}).scenario()),
    }


def pace_for(cfg):
    """The Pico pacing from a short loop_cost run: a step at rest with a chip on the board
    less its share of find and tracker (those are paced as they run), the Python ratio and a
    display send."""
    static, _ = L.scenarios()
    res = L.measure(cfg, reps=10, static={"bowling_1chip": static["bowling_1chip"],
                                          "menu": static["menu"]}, motion={})
    ref = res["ref"]
    p = res["static"]["bowling_1chip"]
    step = sum(L.estimate(p[k], ref)[1] for k in ("scan_step", "buttons", "service_idle"))
    sends = [L.estimate(d["service_send"], ref)[1] for d in res["displays"].values()]
    return {"step_us": int(step), "ratio": L.PICO_EMPTY_LOOP_US / ref["empty"],
            "send_us": int(max(sends) if sends else 0)}


def measure(cfg=None, paced=True):
    with T.config_file(cfg) as path:
        sh = shots()
        sim, _ = T.run("b_latency.py", {"config": path, "shots": sh, "pace": None}, heapsize="16M")
        out = {"sim": sim}
        if paced:
            pace = pace_for(cfg)
            out["pace"] = pace
            out["pico"], _ = T.run("b_latency.py", {"config": path, "shots": sh, "pace": pace},
                                   heapsize="16M")
    return out


def parts(m):
    """(settle, verdict -> redraw, redraw -> shown, total) ms of one shot."""
    v, d, s = m["t_verdict"], m["t_drawn"], m["t_shown"]
    if v is None or d is None or s is None:
        return None
    return v, d - v, s - d, s


def report(label, out):
    print(f"== {label}")
    if "pace" in out:
        p = out["pace"]
        print(f"   Pico pacing: a step at rest {p['step_us'] / 1000:.2f} ms, Python x{p['ratio']:.0f}, "
              f"a display send {p['send_us'] / 1000:.2f} ms")
    print(f"{'shot':28} {'clock':6} {'settle':>8} {'rules':>7} {'refresh':>8} {'total':>8}  (ms after rest)")
    for name in sorted(out["sim"]):
        for key, clock in (("sim", "sim"), ("pico", "Pico")):
            if key not in out:
                continue
            p = parts(out[key][name])
            if p is None:
                print(f"{name:28} {clock:6} no verdict / display within 5 s: {out[key][name]}")
                continue
            print(f"{name:28} {clock:6} {p[0]:8.0f} {p[1]:7.0f} {p[2]:8.0f} {p[3]:8.0f}")
    print("  settle: rest -> the tracker's verdict (SETTLE_MS of stillness, seen frame by frame);")
    print("  rules: verdict -> redraw (on_board: the rules, the journal; the redraw is the same")
    print("  step); refresh: redraw -> the last display unit sent")
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="one configuration label (default, display=sevenseg, ...)")
    ap.add_argument("--sim-only", action="store_true", help="without the Pico pacing")
    a = ap.parse_args(argv)
    results = []
    for label, cfg in L.config_choices():
        if a.only and label != a.only:
            continue
        out = measure(cfg, not a.sim_only)
        report(label, out)
        results.append((label, out))
    return results


if __name__ == "__main__":
    main()
