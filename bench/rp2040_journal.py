"""Where the journal's save goes on the emulated RP2040 (issue 13): a one-player bowling game
started from the menu, main.py stopped, then the journal's own write() called for N entries in a
row (one outcome each, as a shot's), each timed on the chip (time.ticks_us), with the boot ROM's
flash program and erase calls that pico.mjs traces (ZENN_PICO_TRACE) put under the save they
fell in: what each save costs, in which turn an erase comes and how many pages it programs.

    ZENN_CACHE=... .venv/bin/python -m bench.rp2040_journal [--entries N] [--game-starts K]

--game-starts K: before the entries, K more games started through the journal (new_game,
service(): the file a new game writes), each timed too. Between two of them the game before is
left (end(), its record saved) and service() is called as the loop does while the journal asks
for it (the next game's file prepared, a step a call): each call timed ("prep"). --no-end: the
starts back to back (no game left between them). --loop: that preparation through the
firmware's own loop instead (step(), service() when asked, the idle), each iteration that called
service() timed whole ("turn").

--boot [N]: before those starts, the journal's boot() run again (N times, 1 by default; each
timed: "boot"), as at a power-on:
the game restored from its file and the next game's file prepared (issue 13), so that the first
start is a game's start after a power-on (the menu's own start, before the bench, is not timed).

Prints one JSON line per save and a table: save, chip ms, us, the file's bytes after it,
programs (pages), erases, the blocks touched (the filesystem's, p programmed, e erased).
"""
import argparse
import io
import json
import os
import sys

FS_BASE = 640 * 1024        # the filesystem's start in the flash (the image's build: 640 KB)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

JOB = r'''
import time
sb = __main__.sb
j = sb.journal
g = sb.game
gc.collect()
def mark(what, k, t_ms, d, size):
    # t0 (the call's start in us, the chip's timer): the flash operations told apart from the
    # next call's when both start within one ms
    print('{"ev":"jsave","what":"%s","k":%d,"t":%d,"t_us":%d,"us":%d,"size":%d,"fault":%d}'
          % (what, k, t_ms, t0, d, size, j.fault))
for k in range(BOOT):
    t = time.ticks_ms()
    t0 = time.ticks_us()
    j.boot(sb.engines)
    mark("boot", k, t, time.ticks_diff(time.ticks_us(), t0), j.size)
g0 = (j.game, j.players, j.o1, j.o2)
for k in range(STARTS):
    if k and PREP:
        # the game before left ("New game?"), its end record saved; then the loop's service()
        # calls while the journal asks (the next game's file prepared, a step a call), each timed
        j.end()
        j.write()
        p = 0
        while LOOP:
            # the firmware's own loop (main.py: step(), service() when asked, the idle) until the
            # file is prepared: each iteration that called service() timed whole, its step() apart
            t = time.ticks_ms()
            t0 = time.ticks_us()
            idle = sb.step()
            t1 = time.ticks_us()
            asked = sb.need_service
            if asked:
                sb.service()
            t2 = time.ticks_us()
            if asked:
                print('{"ev":"jsave","what":"turn","k":%d,"t":%d,"t_us":%d,"us":%d,"size":%d,"fault":%d,"step_us":%d}'
                      % (p, t, t0, time.ticks_diff(t2, t0), j.size, j.fault, time.ticks_diff(t1, t0)))
                p += 1
            if asked and j.need_open != 2 or p >= 500:
                break
            if idle:
                time.sleep_ms(idle)
        while not LOOP and p < 500:
            sb.need_service |= 2        # as step() sets it after a light turn at rest
            t = time.ticks_ms()
            t0 = time.ticks_us()
            sb.service()
            mark("prep", p, t, time.ticks_diff(time.ticks_us(), t0), j.size)
            p += 1
            if j.need_open != 2:
                break
    j.new_game(g0[0], g0[1], g0[2], g0[3])
    t = time.ticks_ms()
    t0 = time.ticks_us()
    sb.service()
    mark("start", k, t, time.ticks_diff(time.ticks_us(), t0), j.size)
for k in range(N):
    j.out(CODE)
    t = time.ticks_ms()
    t0 = time.ticks_us()
    j.write()
    d = time.ticks_diff(time.ticks_us(), t0)
    while j.need_open:              # a full file: the game again (service(), outside the turn)
        sb.service()
    mark("entry", k, t, d, j.size)
print('{"ev":"jsave_done"}')
'''


def run(n, starts, code=1, boot=False, prep=True, loop=False, settle_ms=None):
    """settle_ms: the chip time after the boot event before the menu is pressed (probe.py's
    BOOT_SETTLE_MS when None; probe.READY: until the firmware's boot() has ended, as the
    tests ask, about 1.4 s of chip time less: every save is after the menu's game start)."""
    from boardsim import runtime
    from boardsim.rp2040 import probe
    from bench.rp2040_profile import shot_ops
    menu, _ = shot_ops("8 pins")
    tl = probe.module_timeline("N = %d\nSTARTS = %d\nCODE = %d\nBOOT = %d\nPREP = %d\nLOOP = %d\n" % (n, starts, code, boot, prep, loop) + JOB,
                               before=menu, await_ms=60000 + 200 * n, await_ev="jsave_done",
                               wait_ms=100, settle_ms=probe.BOOT_SETTLE_MS if settle_ms is None else settle_ms)
    out, err = io.StringIO(), io.StringIO()
    os.environ["ZENN_PICO_TRACE"] = "1"
    try:
        runtime.run(tl, "rp2040", display=True, stdout=out, stderr=err)
    finally:
        os.environ.pop("ZENN_PICO_TRACE", None)
    saves = [json.loads(ln) for ln in out.getvalue().splitlines()
             if ln.startswith("{") and '"jsave"' in ln]
    ops = []
    for ln in err.getvalue().splitlines():
        # pico.mjs: program #12 0x10100000 +256 at 1234 ms (1234567 us)
        if ln.startswith("pico.mjs: program") or ln.startswith("pico.mjs: erase"):
            w = ln.split()
            ops.append((w[1], int(w[3], 16), int(w[4][1:]), int(w[6]), int(w[8][1:])))
    return saves, ops


def ops_in(s, ops):
    """The flash operations made during the timed call s (by the chip's us: two calls may start
    within one ms)."""
    return [o for o in ops if s["t_us"] <= o[4] <= s["t_us"] + s["us"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=40)
    ap.add_argument("--game-starts", type=int, default=0)
    ap.add_argument("--code", type=int, default=1, help="the outcome code written")
    ap.add_argument("--boot", type=int, nargs="?", const=1, default=0,
                    help="the journal's boot() again (N times) before the starts (the next file "
                         "prepared by the first; a second finds it prepared)")
    ap.add_argument("--no-end", action="store_true",
                    help="starts back to back, as before issue 13's second start (no game left "
                         "between them, nothing prepared)")
    ap.add_argument("--loop", action="store_true",
                    help="the preparation between starts through the firmware's own loop (step(), "
                         "service() when asked, the idle): each iteration that called service() "
                         "timed whole ('turn', its step() apart: step_us)")
    a = ap.parse_args(argv)
    saves, ops = run(a.entries, a.game_starts, a.code, a.boot, prep=not a.no_end, loop=a.loop)
    print("save        chip ms      us   bytes  pages  erases  blocks (p: programmed, e: erased)")
    for s in saves:
        mine = ops_in(s, ops)
        blocks = " ".join(f"{o[0][0]}{(o[1] - FS_BASE) // 4096}" for o in mine)
        s["pages"] = sum((o[2] + 255) // 256 for o in mine if o[0] == "program")
        s["erases"] = sum(1 for o in mine if o[0] == "erase")
        print(json.dumps(s))
        print(f"{s['what']:5} {s['k']:4d} {s['t']:9d} {s['us']:7d} {s['size']:6d} {s['pages']:6d} "
              f"{s['erases']:6d}  {blocks}" + (f"  (step() {s['step_us']} us)" if "step_us" in s else ""))
    for what in ("start", "prep", "turn"):
        us = [s["us"] for s in saves if s["what"] == what]
        if us:
            print(f"{what}: {len(us)}, worst {max(us)} us, over 10 ms: {sum(1 for u in us if u > 10000)}, "
                  f"over 50 ms: {sum(1 for u in us if u > 50000)}")
    us = [s["us"] for s in saves if s["what"] == "entry"]
    if us:
        print(f"entries: {len(us)}, worst {max(us)} us, mean {sum(us) // len(us)} us, "
              f"over 10 ms: {sum(1 for u in us if u > 10000)}")


if __name__ == "__main__":
    main()
