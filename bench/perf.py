"""Every figure of docs/performance.md against its target, in one table: runs bench/memory.py,
bench/loop_cost.py, bench/latency.py and bench/fast_inputs.py (a few minutes) and prints the
table as Markdown, to paste into the doc with the date.

    .venv/bin/python -m bench.perf [--quick]

--quick: the default configuration only, fewer pulse phases (about a minute).
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import fast_inputs, latency, loop_cost, memory  # noqa: E402

KB = 1024


def ok(flag):
    return "met" if flag else "**missed**"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    rows = []

    def row(figure, value, target, met):
        rows.append((figure, value, target, ok(met)))

    # -- loop cost -------------------------------------------------------------------------
    configs = loop_cost.config_choices()
    if a.quick:
        configs = configs[:1]
    static, motion = loop_cost.scenarios()
    shown = set()
    for label, cfg in configs:
        res = loop_cost.measure(cfg, static=static, motion=motion)
        ref = res["ref"]
        est = {}
        for sc, p in res["static"].items():
            for k in ("scan_step", "buttons", "service_idle", "find", "tracker", "step"):
                est[(sc, k)] = loop_cost.estimate(p[k], ref)[1]
        it = loop_cost.iteration(res)
        fe = res["static"]["menu"]["scan_step"]["front_end"]
        if label == "default" or "front" in label:
            scan = max(est[(sc, "scan_step")] for sc in res["static"])
            row(f"scan step, {fe} (48 pads), Pico est.", f"{scan / 1000:.1f} ms", "<= 1 ms", scan <= 1000)
            row(f"locate per frame at rest, empty / 1 chip / 4 chips, Pico est., {label}",
                " / ".join(f"{est[(sc, 'find')] / 1000:.0f}" for sc in
                           ("menu", "bowling_1chip", "trap_4chips")) + " ms", "<= 3 ms",
                max(est[(sc, "find")] for sc in res["static"]) <= 3000)
            fmax = max(m["find"]["max"] for m in res["motion"].values() if m["find"].get("calls"))
            fmax_pico = fmax / ref["empty"] * loop_cost.PICO_EMPTY_LOOP_US
            row(f"locate, worst frame while chips move, Pico est., {label}", f"{fmax_pico / 1000:.0f} ms",
                "<= 100 ms (one loop turn)", fmax_pico <= 100000)
            tr = max(est[(sc, "tracker")] for sc in res["static"])
            row(f"tracker frame at rest, Pico est., {label}", f"{tr / 1000:.1f} ms", "<= 1 ms", tr <= 1000)
            worst = max(it.values())
            row(f"loop iteration at rest (16 steps + locate + tracker), Pico est., {label}",
                " / ".join(f"{it[sc] / 1000:.0f}" for sc in ("menu", "bowling_1chip", "trap_4chips"))
                + " ms (empty / 1 / 4 chips)", "<= 20 ms", worst <= 20000)
        for name, d in sorted(res.get("displays", {}).items()):
            if name in shown:
                continue
            shown.add(name)
            r = loop_cost.estimate(d["redraw_bowling_changed"], ref)[1]
            row(f"{name} redraw after a shot (6 players, frame 10), Pico est.", f"{r / 1000:.1f} ms",
                "<= 10 ms", r <= 10000)
            s = loop_cost.estimate(d["service_send"], ref)[1]
            row(f"{name} one unit sent per step (x{d['sends_after_shot']} after a shot), Pico est.",
                f"{s / 1000:.2f} ms", "<= 4 ms", s <= 4000)
        if "rules" in res and label == "default":
            r = loop_cost.estimate(res["rules"], ref)[1]
            row("rules: bowling.on_shot (6 players, frame 10), Pico est.", f"{r / 1000:.1f} ms",
                "<= 10 ms", r <= 10000)

    # -- latency ------------------------------------------------------------------------------
    lat = latency.measure(None, paced=True)
    for clock in ("sim", "pico"):
        worst = None
        for name, m in lat[clock].items():
            p = latency.parts(m)
            if p is None:
                worst = None
                break
            worst = p if worst is None or p[3] > worst[3] else worst
        what = "simulated (1 ms steps)" if clock == "sim" else "paced as the Pico, est."
        if worst is None:
            row(f"rest -> score shown, {what}", "no verdict within 5 s (watchdog)", "<= 500 ms", False)
            continue
        row(f"rest -> score shown, {what}: settle + rules + refresh",
            f"{worst[0]:.0f} + {worst[1]:.0f} + {worst[2]:.0f} = {worst[3]:.0f} ms", "<= 500 ms",
            worst[3] <= 500)
        row(f"verdict -> display shown, {what}", f"{worst[1] + worst[2]:.0f} ms", "<= 50 ms",
            worst[1] + worst[2] <= 50)

    # -- memory -------------------------------------------------------------------------------
    choices = memory.display_choices()
    display = "both" if "both" in choices else choices[-1]
    mem = memory.measure(display)
    row("bytes kept allocated per loop iteration after boot", f"{mem['alloc_per_iteration']:.0f} "
        f"({mem['iterations']} iterations)", "0", mem["alloc_total"] == 0)
    row(f"heap held after boot, display={display} (64-bit unix port)",
        f"{mem['firmware'] / KB:.0f} KB ({mem['free'] / KB:.0f} KB free of 236)",
        ">= 100 KB free", mem["free"] >= 100 * KB)
    row("RAM taken by the code once imported (.mpy, 64-bit)", f"{mem['code'] / KB:.0f} KB",
        "<= 60 KB", mem["code"] <= 60 * KB)
    sizes = memory.code_size()
    total = sum(b for _, b in sizes.values())
    row("firmware as .mpy for armv6m", f"{total / KB:.0f} KB", "<= 256 KB", total <= 256 * KB)

    # -- fast inputs ------------------------------------------------------------------------
    fi = fast_inputs.measure(2 if a.quick else 4)
    caught = [int(w) for w, p in fi["pulses"].items() if p["latched"] == p["pulses"]]
    row("shortest beam pulse latched (simulator, any phase)", f"{min(caught)} us (every width tried)",
        "<= 100 us", min(caught) <= 100)
    for mode, what in (("irq", "a Python stall"), ("off", "interrupts off")):
        good = [int(ms) for ms, v in fi["stalls"][mode].items() if v == "strike"]
        row(f"longest loop stall a Zenn survives, {what}", f"{max(good)} ms", ">= 400 ms",
            max(good) >= 400)

    print("| figure | measured | target | |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return rows


if __name__ == "__main__":
    main()
