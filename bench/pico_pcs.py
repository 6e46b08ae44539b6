"""Where a recorded chip run's instructions go: each instruction counted by its address as
bench/pico_streams/node's run is replayed, named from the image's symbols, and the short
backward loops with their turns per exit (a wait on a peripheral turns many times per exit).

    .venv/bin/python -m bench.pico_pcs STREAM_DIR [--top N] [--loops N]

The replay runs a copy of pico.mjs with one counting line in runUntil's loop (written beside it
for its imports, removed after); its answers are not compared (bench/pico_replay.py does that).
Needs arm-none-eabi-nm and -objdump (the image's ELF)."""
import bisect
import json
import os
import re
import subprocess
import sys
import tempfile

from bench.pico_replay import pico_args

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "boardsim", "rp2040")
COUNT = """        if (pc >= 0x10000000 && pc < 0x10200000) PCS_F[(pc - 0x10000000) >> 1]++;
        else if (pc >= 0x20000000 && pc < 0x20042000) PCS_R[(pc - 0x20000000) >> 1]++;
        else if (pc < 0x4000) PCS_B[pc >> 1]++;
"""
TABLES = """const PCS_F = new Uint32Array(0x100000), PCS_R = new Uint32Array(0x21000), PCS_B = new Uint32Array(0x2000);
process.on('exit', () => {
  const o = [];
  PCS_F.forEach((n, i) => { if (n) o.push([0x10000000 + 2 * i, n]); });
  PCS_R.forEach((n, i) => { if (n) o.push([0x20000000 + 2 * i, n]); });
  PCS_B.forEach((n, i) => { if (n) o.push([2 * i, n]); });
  fs.writeFileSync(process.env.PICO_PCS_OUT, JSON.stringify(o));
});
"""


def counted_pico():
    src = open(os.path.join(HERE, "pico.mjs")).read()
    at = "        const dt = core.executeInstruction() * NS_PER_CYCLE;\n        const due = clock.nextAlarm;"
    assert src.count(at) == 1, "pico.mjs's runUntil loop changed: update bench/pico_pcs.py"
    # (every instruction through that line: fastcore.mjs's stretches, which take most of them
    # past it, turned off)
    off = "  const stretch = stretchOf(mcu.core);"
    assert src.count(off) == 1, "pico.mjs's runUntil changed: update bench/pico_pcs.py"
    src = src.replace(off, "  const stretch = null;")
    src = src.replace(at, COUNT + at).replace("\nlet chip;", "\n" + TABLES + "let chip;", 1)
    fd, path = tempfile.mkstemp(prefix=".pico_pcs-", suffix=".mjs", dir=HERE)
    with os.fdopen(fd, "w") as f:
        f.write(src)
    return path


def replay(d, pico, out):
    args = pico_args(d)
    p = subprocess.Popen(["node", pico] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, PICO_PCS_OUT=out))
    for line in open(os.path.join(d, "in"), "rb"):
        if line.strip():
            p.stdin.write(line)
            p.stdin.flush()
            p.stdout.readline()
    p.stdin.close()
    p.wait()
    return args[args.index("--image") + 1]


def main(argv):
    d = argv[0]
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 25
    nloops = int(argv[argv.index("--loops") + 1]) if "--loops" in argv else 10
    pico = counted_pico()
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        image = replay(d, pico, out)
        counts = dict((a, n) for a, n in json.load(open(out)))
    finally:
        os.unlink(pico)
        os.unlink(out)
    syms = []
    for line in subprocess.run(["arm-none-eabi-nm", "-n", "-S", "--defined-only", image],
                               capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 4:
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
        elif len(p) == 3:           # (no size: taken to run to the next symbol)
            syms.append((int(p[0], 16), 1 << 32, p[2]))
    syms.sort()
    starts = [s[0] for s in syms]
    total = sum(counts.values())
    by = {}
    for a, n in counts.items():
        i = bisect.bisect_right(starts, a) - 1
        name = (syms[i][2] if i >= 0 and a < syms[i][0] + syms[i][1] else "?") if a >= 0x4000 else "(the boot ROM)"
        by[name] = by.get(name, 0) + n
    print(f"{total:,} instructions run ({open(os.path.join(d, 'test')).read().strip()})")
    for name, n in sorted(by.items(), key=lambda x: -x[1])[:top]:
        print(f"{100 * n / total:6.2f} % {n:>13,}  {name}")
    # backward branches of at most 64 bytes: a loop's turns (its first instruction's count) per
    # exit (the count of the instruction after the branch)
    # (-D: the frozen viper code is disassembled too)
    dis = subprocess.run(["arm-none-eabi-objdump", "-D", "-M", "force-thumb", "--start-address=0x10000000",
                          "--stop-address=0x10200000", image],
                         capture_output=True, text=True).stdout
    loops = []
    for m in re.finditer(r"^\s*([0-9a-f]{8}):\s+[0-9a-f]{4}(?: [0-9a-f]{4})?\s+b[a-z]*(?:\.n|\.w)?\s+([0-9a-f]+)",
                         dis, re.M):
        b, t = int(m.group(1), 16), int(m.group(2), 16)
        if t < b <= t + 64 and counts.get(t):
            inside = sum(counts.get(x, 0) for x in range(t, b + 2, 2))
            loops.append((inside, counts[t], counts.get(b + 2, 0), t, b))
    print("loops: % of the instructions, turns, exits, turns per exit, where")
    for inside, turns, exits, t, b in sorted(loops, reverse=True)[:nloops]:
        i = bisect.bisect_right(starts, t) - 1
        print(f"{100 * inside / total:6.2f} % {turns:>11,} {exits:>9,} {turns / max(exits, 1):9.1f}  "
              f"{syms[i][2]}+{t - syms[i][0]:#x}..{b - syms[i][0] + 2:#x}")


if __name__ == "__main__":
    main(sys.argv[1:])
