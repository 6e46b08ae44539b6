"""Where the chip tier's CPU goes, test by test, from one run of its tests with both records on:

    ZENN_TEST_CPU=CPU.jsonl ZENN_PICO_STATS=STATS.jsonl .venv/bin/python -m pytest -p no:xdist ...
    python -m bench.chip_tier_profile STATS.jsonl CPU.jsonl

For each chip run (ZENN_PICO_STATS: boardsim/rp2040/pico_runner.py): the emulated instructions
to the firmware's boot event (and to "ready", boot() ended, where the test waits for it), the
rest (what the test's timeline and script make the firmware do), the chip ms, the warm
emulator's CPU (node) per instruction, the runner's CPU (the world in CPython); and from
ZENN_TEST_CPU the test's own host CPU beside those (its references under CPython, mpy-cross,
pytest): the test's CPU less the emulator's and the runner's. Instructions and chip ms do not
move with the machine's load; CPU seconds do.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    stats = load(argv[1])
    cpu = {r["id"]: r for r in load(argv[2])} if len(argv) > 2 else {}
    rows = []
    for s in stats:
        test = s["test"].rsplit(" (", 1)[0]
        marks = s.get("marks") or []
        boot = next((m[2] for m in marks if m[0] == "boot"), 0)
        ready = next((m[2] for m in marks if m[0] == "ready"), 0)
        c = cpu.get(test) or next((v for k, v in cpu.items() if k.startswith(test)), None)
        own = None
        if c:
            own = c["self"] + c["children"] - c["warm"] - s["runner_cpu_s"]
        rows.append((test, boot, ready, s["instructions"], s["ms"], s["node_cpu_s"],
                     s["runner_cpu_s"], own))
    rows.sort(key=lambda r: -r[3])
    print("| chip run (test) | M instr. to boot | to ready | M instr. in all | chip ms | node s "
          "| ns / instr. | runner s | test's own s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = [0, 0, 0, 0.0, 0.0, 0.0]
    for test, boot, ready, ins, ms, node, runner, own in rows:
        name = test.split("tests/", 1)[-1]
        print("| `%s` | %.1f | %s | %.1f | %d | %.2f | %.1f | %.2f | %s |"
              % (name[:110], boot / 1e6, "%.1f" % (ready / 1e6) if ready else "-", ins / 1e6, ms,
                 node, 1e9 * node / ins, runner, "%.2f" % own if own is not None else "-"))
        tot[0] += boot
        tot[1] += ins
        tot[2] += ms
        tot[3] += node
        tot[4] += runner
        tot[5] += own or 0
    print("| all %d | %.1f | | %.1f | %d | %.2f | %.1f | %.2f | %.2f |"
          % (len(rows), tot[0] / 1e6, tot[1] / 1e6, tot[2], tot[3], 1e9 * tot[3] / max(tot[1], 1),
             tot[4], tot[5]))
    others = [(k, v) for k, v in cpu.items()
              if not any(k.startswith(r[0]) for r in rows) and v["self"] + v["children"] > 0.5]
    if others:
        print("\ntests with no chip run of their own (CPU s, of it the warm emulator's):")
        for k, v in sorted(others, key=lambda kv: -(kv[1]["self"] + kv[1]["children"])):
            print("  %6.2f %6.2f  %s" % (v["self"] + v["children"], v["warm"], k.split("tests/", 1)[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
