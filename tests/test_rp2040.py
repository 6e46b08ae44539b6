"""The firmware on the RP2040 itself: the real MicroPython image (frozen by `make image`, or a
stock one with the firmware copied onto its flash as .mpy files) on an emulated Pico (rp2040js
under Node; docs/rp2040.md), the simulated table on its pins.

Skipped, with the reason, when there is no image, boot ROM, Node or rp2040js (RP2040_IMAGE,
RP2040_BOOTROM, else ~/.cache/zenn/rp2040/; `make image`, `make bootrom`, `make rp2040js`).
Emulation runs at about half real time on a quiet 2-core machine (1/10 - 1/25 when it is shared
by several builds): the games here are the shortest that say something. ZENN_SKIP_RP2040=1
skips the tier.

- games: the same scenario under the unix port and on the chip gives the same event lines;
- a power cut mid-game on the chip: the journal on its flash (littlefs through the boot ROM's
  flash functions) brings the game back;
- heap after boot with gc.mem_free(), the firmware held;
- the loop with micropython.heap_lock() on the chip while a shot is played on the table;
- every viper function run on the chip (32-bit machine words, 30-bit small ints), with readings
  at the rails and values near those limits, against its plain reference (the scripts' own
  references run under CPython on the same draws where they were most of the chip's work:
  chip_half_matches).
"""
import json
import os

import pytest

from boardsim.rp2040 import images

WHY = ("ZENN_SKIP_RP2040 is set" if os.environ.get("ZENN_SKIP_RP2040") else images.missing())
needs_chip = pytest.mark.skipif(WHY is not None, reason=f"no emulated Pico here: {WHY}")
# Whole games and the long reference runs take minutes each at the emulator's speed: `make test`
# keeps to the tier's short tests (about a minute and a half on 2 cores), `make test-rp2040`
# (ZENN_RP2040_LONG=1) runs the whole tier.
LONG = bool(os.environ.get("ZENN_RP2040_LONG"))
long_test = pytest.mark.skipif(not LONG, reason="a long chip test (minutes of emulation): "
                               "`make test-rp2040` runs it (ZENN_RP2040_LONG=1)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The heap after boot with the hall pads, the reference scripts and EDGES below are measured in
# one boot of the chip (probe.run_modules, the chip_references fixture): a boot costs the
# emulator more than most of these jobs. The tests that read them run in one xdist worker
# (`--dist loadgroup` in the Makefile), so the chip boots once for them.
ONE_BOOT = pytest.mark.xdist_group("rp2040_one_boot")


def both(table_factory):
    """The same scenario under the unix port and on the emulated Pico: (unix, chip) Results."""
    from boardsim.testing import Table  # noqa: F401
    unix = table_factory("micropython").run()
    chip = table_factory("rp2040").run()
    return unix, chip


def lines(r):
    return [json.dumps(e, sort_keys=True) for e in r.events]


# -- the pad models: the Node side answers the ADC and the 74HC165s with hall_model.read() and
# presence_model.latch() ported to JavaScript; the same state must give the same numbers ------
NODE_WHY = images.node_missing()


@pytest.mark.skipif(NODE_WHY is not None, reason=f"no emulator here: {NODE_WHY}")
def test_the_chip_side_pad_models_give_the_same_readings_as_the_worlds(tmp_path):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "boardsim", "target"))
    try:
        import world_table as T
        import hall_model as HM
        import presence_model as PM
        from hall_model import HallModel
        from presence_model import PresenceModel
    finally:
        sys.path.pop(0)
    from boardsim.rp2040.chip import Pico
    h = HallModel(T)
    p = PresenceModel(T)
    h.update([(0, -2905, 1, 1000), (300, 1000, -1, 700), (-900, 3000, -1, 350)])
    for pad, mode in ((5, HM.FAULT_FLICKER), (6, HM.FAULT_DEAD), (7, 65000), (8, HM.FAULT_ALIAS - 9),
                      (10, HM.FAULT_NUMB), (11, 0)):
        h.set_fault(pad, mode)
    p.update([(0, -2905, 195, 1000), (-500, 0, 160, 800)], [(300, 1000)])
    p.set_fault(3, PM.FLICKER)
    p.set_fault(40, PM.STUCK_OFF)
    p.set_sr_fault(1, PM.STUCK_ON)
    NSEL = p.strobes.bit_length()                 # row-select pins: a Gray code of the strobe
    dummy = tmp_path / "nothing.bin"              # no chip is powered: any image will do
    dummy.write_bytes(b"\0" * 16384)
    with Pico(str(dummy), str(dummy), node=images.node()) as pico:
        pico.table({}, {"pad_at": list(T.PAD_AT), "n_adc": T.N_ADC, "banks": T.BANKS,
                        "channels": T.CHANNELS, "adc_zero": T.ADC_ZERO, "sel": [0, 1, 2, 3],
                        "bank": [4, 5, 6, 7], "noise_lsb": h.noise_lsb, "seed": h.state,
                        "clean": list(h.clean), "base": list(h.base), "fault": list(h.fault)},
                   {"rows": p.rows, "cols": p.cols, "nsr": p.nsr, "row_sel": list(range(NSEL)),
                    "seed": p.rng, "state": bytes(p.state).hex(), "ragged": bytes(p.ragged).hex(),
                    "fault": bytes(p.fault).hex(), "sr_fault": bytes(p.sr_fault).hex(),
                    "nfault": p.nfault, "nlev": p.nlev, "rps": p.rps, "strobes": p.strobes,
                    "coin": bytes(p.coin).hex()})
        pads = [i % h.n for i in range(0, 7000, 7)] + list(range(20))
        rows = [r % p.strobes for r in range(0, 400, 3)]      # strobes: rows x levels
        got = pico.call(cmd="sample", pads=pads, rows=rows)
    want_hall = [h.read(pad) for pad in pads]
    want_pres = []
    levels = bytearray(32)
    p._levels = levels
    p.row_sel = tuple(range(NSEL))
    for r in rows:
        code = r ^ (r >> 1)
        for i in range(NSEL):
            levels[i] = (code >> i) & 1
        p.latch()
        want_pres.append(list(p.latched))
    assert got["hall"] == want_hall
    assert got["pres"] == want_pres
    # noise, fields, faults: not a constant (12-bit readings: some 70 distinct values here)
    assert len(set(want_hall)) > 40
    assert all(v & 15 == v >> 12 for v in want_hall)    # read_u16 of a 12-bit conversion


# -- the warm emulator: the tests' chip runs are sessions of one node process per test process
# (boardsim/rp2040/chip.py WarmNode, ZENN_PICO_WARM=1 in tests/conftest.py); each must start
# from the state a node process of its own starts from, whatever the session before it did -------
def _fresh_chip_answers(pico):
    """What a chip shows of its state in its first 60 ms from power-on: MicroPython formats the
    blank filesystem from 3 ms (an erase, at 48 ms a program and an erase), then the flash, the
    instruction count, the pad tables (none: `sample` fails) and the table time."""
    from boardsim.rp2040.chip import ChipError
    got = [pico.power(True), pico.run(60000), pico.read_flash(0xA0000, 8192).hex(), pico.stats()]
    try:
        got.append(pico.call(cmd="sample", pads=[0], rows=[]))
    except ChipError as e:
        got.append(str(e).splitlines()[0])
    got.append(pico.power(False))
    for a in got:
        if isinstance(a, dict):
            a.pop("cpu_us", None)
    return got


@needs_chip
def test_a_warm_emulators_session_starts_as_a_new_node_process_does():
    """A session of the warm emulator after one that left everything it could changed (a
    filesystem with a file on the flash, a torn erase armed, pad tables, a button held, the chip
    on and running, time gone by) gives, answer for answer, what a node process of its own gives;
    the session's answers show that the dirty session's state would have changed them (the tear
    cuts the power at 3 ms, the file's filesystem is mounted instead of formatted, the tables
    answer `sample`)."""
    from boardsim.rp2040.chip import Pico, WarmNode
    image, bootrom = images.find_image(), images.find_bootrom()
    with Pico(image, bootrom, node=images.node(), server="") as pico:
        cold = _fresh_chip_answers(pico)
    warm = WarmNode(images.node())
    try:
        leak = images.make_fs({"leak.txt": b"left by the session before"})
        assert b"leak.txt" in leak[:8192]
        with Pico(image, bootrom, server=warm.path) as dirty:
            assert dirty.session is not None, "the warm emulator did not take the session"
            dirty.write_flash(leak)
            dirty.flash_tear(0)
            dirty.table({"csPin": 17}, {"pad_at": [0] * 16, "n_adc": 1, "banks": 1, "channels": 16,
                                        "adc_zero": 0, "sel": [0, 1, 2, 3], "bank": [],
                                        "noise_lsb": 0, "seed": 1, "clean": [5] * 16,
                                        "base": [0] * 16, "fault": [-1] * 16}, None)
            dirty.run(1000, inputs=[[2, 1]])
            dirty.power(True)
            dirty.run(2500)
            assert dirty.on and dirty.call(cmd="sample", pads=[0], rows=[])["hall"]
            # (the session ends with its socket closed, the chip still on: no quit)
        with Pico(image, bootrom, server=warm.path) as pico:
            assert pico.session is not None and pico.session["session"] == 2
            again = _fresh_chip_answers(pico)
    finally:
        warm.close()
    assert again == cold
    # what the answers would show of a leak: the erase at 3 ms, the formatted flash, the table
    assert cold[1]["flash_ops"] >= 3 and cold[1]["on"] and not cold[1]["lost"], cold[1]
    assert b"leak.txt" not in bytes.fromhex(cold[2])
    assert cold[4].startswith("pico.mjs:"), cold[4]


# -- the emulator's decoder: pico.mjs runs rp2040js's instructions through fastcore.mjs's table,
# rp2040js's own bodies dispatched without its chain of tests; both must step alike -----------
CORE_CHECK = os.path.join(ROOT, "boardsim", "rp2040", "corecheck.mjs")
# (the boot ROM, boot2, MicroPython's start and the frozen firmware's imports; the whole boot
# and loop, 60 M, in make test-rp2040)
CORE_CHECK_INSTRUCTIONS = 60_000_000 if LONG else 12_000_000


def _core_check(*args):
    import subprocess
    image = images.find_image()
    with open(image, "rb") as f:
        if f.read(4) != b"\x7fELF":
            pytest.skip(f"corecheck.mjs reads ELF images only: {image}")
    r = subprocess.run([images.node(), CORE_CHECK, "--image", image, "--bootrom", images.find_bootrom()]
                       + [str(a) for a in args], capture_output=True, text=True, cwd=os.path.dirname(CORE_CHECK))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


@needs_chip
def test_the_table_decoder_steps_as_rp2040js_own_does():
    """Two chips on the firmware's image, one on rp2040js's decoder and one on fastcore.mjs's,
    stepped side by side: registers, flags, cycles and clock equal after every instruction, the
    RAM every 65,536 and at the end."""
    got = _core_check("--instructions", CORE_CHECK_INSTRUCTIONS)
    assert got["ok"], got["differ"]
    assert got["instructions"] == CORE_CHECK_INSTRUCTIONS
    # the check can fail: the carry of one subtraction flipped on the table's chip is found at
    # that instruction
    bad = _core_check("--instructions", 300_000, "--mutate", 50)
    assert not bad["ok"] and bad["instructions"] < 300_000 and bad["differ"]["pc"], bad


@needs_chip
def test_the_stretches_step_as_one_instruction_at_a_time_does():
    """pico.mjs runs the table's instructions in fastcore.mjs's stretches (no clock, alarm or
    limit check between two of them but where one touched a peripheral): the table's chip run so,
    in slices of 1 ms, against rp2040js's own decoder stepped one instruction at a time as many
    instructions after each stretch: registers, flags, cycles and clock equal after every
    stretch, the RAM every 65,536 instructions and at the end."""
    got = _core_check("--instructions", CORE_CHECK_INSTRUCTIONS // 2, "--stretch", 1000)
    assert got["ok"], got["differ"]
    assert got["instructions"] >= CORE_CHECK_INSTRUCTIONS // 2
    # the check can fail: the 20th stretch's clock set 8 ns (a cycle) back at its end is found there
    bad = _core_check("--instructions", 300_000, "--stretch", 1000, "--mutate-clock", 20)
    assert not bad["ok"] and bad["differ"]["stretch"] == 20, bad


# -- games ---------------------------------------------------------------------------------------
def bowling_game(runtime):
    """A whole game in the fewest balls (twelve Zenns: a perfect game), so that the tier stays
    within minutes at the emulator's speed; every ball is the fast shot through the pin-side
    blocks into the cup."""
    from boardsim.testing import Table
    t = Table("bowling", players=1, runtime=runtime)
    for _ in range(9):
        t.frame(["b.pocket", "b.cup"])
    t.frame(["b.pocket", "b.cup"], ["b.pocket", "b.cup"], ["b.pocket", "b.cup"])
    t.checkpoint("end")
    return t


@needs_chip
@long_test
def test_a_whole_bowling_game_gives_the_unix_ports_events():
    unix, chip = both(bowling_game)
    assert lines(chip) == lines(unix)
    over = chip.last("game_over")["players"][0]
    assert over["frames"] == ["X"] * 9 + ["XXX"]
    assert over["total"] == 300
    # the same OLED at the end, decoded from the chip's own I2C writes
    assert chip.display_at("end") == unix.display_at("end")
    assert any(row.strip() == "P1 300" for row in chip.display_at("end"))    # the total row


def trap_game(runtime):
    from boardsim.testing import Table
    t = Table("trap1", players=2, runtime=runtime, trapper=1).trap_start()
    t.shoot("big1", "b.cup3")                   # a big chip lies in b's backcourt
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]})
    t.press("turn")
    t.shoot("small", "b.e2", knocks={"big1": ["b.n2"]})
    return t


@needs_chip
@long_test
def test_a_trap_zenn_game_gives_the_unix_ports_events():
    unix, chip = both(trap_game)
    assert lines(chip) == lines(unix)
    o = chip.last("game_over")
    assert (o["game"], o["winner"], o["shots"], o["reason"]) == ("trap1", 1, 2, "trapped_hit")


def power_cut_game(runtime):
    from boardsim.testing import Table
    t = Table("bowling", players=2, runtime=runtime)
    t.frame(["b.pocket", "b.cup"])             # P1: X
    t.place("small", "a.pocket").shoot("small", "b.e2")    # P2: 8 ...
    t.power_cut().advance_time_and_run(2000).power_on()    # ... and the power goes
    t.shoot("small", "b.pocket", "b.cup")       # ... / after it came back
    t.take("small")
    t.checkpoint("after")
    return t


@needs_chip
@long_test
def test_a_power_cut_mid_game_on_the_chip_loses_nothing():
    unix, chip = both(power_cut_game)
    assert lines(chip) == lines(unix)
    restored = chip.last("restored")
    assert restored["game"] == "bowling" and restored["entries"] >= 2
    assert [(s["player"], s["result"]) for s in chip.events_of("shot")][-1] == (2, "spare")
    assert chip.events_of("boot")[-1]["reset"] == "power"


# -- memory on the chip ---------------------------------------------------------------------------
# The target for the frozen image is >= 180 KB free after boot in every configuration,
# held here as the floor, so a change that costs heap on the chip fails here. (The app split's base
# classes and issue 12's tracker had taken both to 179.1 KB, hall 183,360 B, presence 183,392 B;
# then the rp2 module _boot.py leaves imported dropped by main.py, and board_table's hall-only
# arrays made on first use: hall 184,736 B (180.4 KB: 416 B of room), presence 187,792 B
# (183.4 KB); after the games registry and the register scan 184,320 B (hall, no room) and
# 187,472 B; with hall_scan's step tables and the journal's CRC table constants in flash
# hall 185,872 B (181.5 KB: 1,552 B of room), presence 187,968 B (183.6 KB), 2026-12-01,
# docs/performance.md; session 17's merged main hall 184,560 B, presence 184,384 B (64 B of room);
# with the presence fault monitor's faulty pads a bit a pad and the hall muxes' pads read from
# the scan map hall 186,096 B, presence 188,384 B, 2026-12-03, bench/heap_walk.py.) With a stock image
# (.mpy files) the floor is what any configuration needs to run at all.
HEAP_FLOOR = {
    "hall, OLED": ({}, 180 * 1024),
    "presence, OLED": ({"front_end": "shift"}, 180 * 1024),
}


@needs_chip
@pytest.mark.parametrize("name", [pytest.param(n, marks=ONE_BOOT) if not HEAP_FLOOR[n][0] else n
                                  for n in sorted(HEAP_FLOOR)])
def test_heap_free_after_boot_on_the_chip(name, request):
    from boardsim.rp2040 import probe
    config, floor = HEAP_FLOOR[name]
    frozen = images.image_is_frozen(images.find_image())
    if config:
        free = probe.heap_free(config)
    else:       # (the default configuration's boot is the one the reference scripts share)
        free = _chip_result(request.getfixturevalue("chip_references"), "heap")
    print(f"{name}: {free} bytes free after boot ({'frozen' if frozen else '.mpy on flash'})")
    if frozen:
        assert free >= floor, f"{name}: {free} bytes free, below {floor}"
    else:
        assert free >= 60 * 1024


# The firmware's loop as main.py runs it, each turn under heap_lock, for MS of chip time at most:
# TAIL ms after the loop's first event line (the shot's verdict) it ends (a chip ms costs about
# 8 ms of the host's CPU, at rest too: the seconds after the verdict were most of the run);
# "first_ms": when that line came, "steps_after": the turns after it.
LOOP = r'''
import time
import micropython
sb = __main__.sb
gc.collect()
gc.disable()
a0 = gc.mem_alloc()
n = 0
served = 0
frames = 0
lines0 = sb.ev.lines
first_ms = -1
n_first = 0
idle = 0        # (every global the loop sets made before the lock: a new one may grow the dict)
size = sb.journal.size
saved_ms = -1   # when the journal's file first grew in the loop (the shot's save)
saves = 0       # the turns in which it grew
t0 = time.ticks_ms()
end = time.ticks_add(t0, MS)
micropython.heap_lock()
try:
    while time.ticks_diff(end, time.ticks_ms()) > 0:
        idle = sb.step()
        n += 1
        if sb.need_service:          # what main.py does outside the turn (it may allocate)
            micropython.heap_unlock()
            sb.service()
            served += 1
            micropython.heap_lock()
        if first_ms < 0 and sb.ev.lines != lines0:
            first_ms = time.ticks_diff(time.ticks_ms(), t0)
            n_first = n
            if time.ticks_diff(end, time.ticks_add(t0, first_ms + TAIL)) > 0:
                end = time.ticks_add(t0, first_ms + TAIL)
        if sb.journal.size != size:
            size = sb.journal.size
            saves += 1
            if saved_ms < 0:
                saved_ms = time.ticks_diff(time.ticks_ms(), t0)
        if idle:
            time.sleep_ms(idle)
finally:
    micropython.heap_unlock()
a1 = gc.mem_alloc()
gc.enable()
print('{"ev":"loop","steps":%d,"served":%d,"alloc":%d,"first_ms":%d,"steps_after":%d,'
      '"saved_ms":%d,"saves":%d}' % (n, served, a1 - a0, first_ms, n - n_first, saved_ms, saves))
'''


@needs_chip
def test_the_loop_allocates_nothing_on_the_chip_while_a_shot_is_played():
    from boardsim.rp2040 import probe
    from boardsim.testing import Table
    # a one-player bowling game started from the menu (the compiled scenario's presses), then
    # main.py stopped and its loop run again with the heap locked while the chip is put down and
    # shot through the blocks into the cup (a strike), and for LOCKED_TAIL_MS of chip time after
    # the verdict's line
    t = Table("bowling", players=1)
    t.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup")
    menu, play = strike_menu_and_play(t)
    # (the menu pressed once boot() has ended, not 500 ms after the boot event: as the
    # allocation check below)
    r = probe.run_module(locked_loop(6000), before=menu, after=play, await_ms=15000,
                         await_ev="loop", wait_ms=20, settle_ms=probe.READY)
    loop = r.last("loop")
    print("loop on the chip:", loop)
    # every turn ran under heap_lock (an allocation would have raised MemoryError on the chip
    # and ended the run); "alloc" counts what was allocated outside the locked turns (service(),
    # the watchdog's feeding timer), for the record. (2026-12-02: the strike's line 2,082 ms
    # into the loop, 605 turns before it and 401 in the 1.5 s after; the loop had run 6 s,
    # some 1,650 turns, most of them at rest after the strike. Issue 15: the journal's save of
    # the strike came in the verdict's turn, 2,057 ms in; the loop now ends LOCKED_TAIL_MS
    # after the verdict.)
    assert_locked_loop_saw_the_strike(r, loop, before=300, after=LOCKED_TURNS_AFTER)


# The menu's presses held this long (ms), and released this long before the next, in the chip
# tests that start a game from it: its buttons are debounced over 20 ms (panel/buttons.py) and
# polled every loop turn; the scenarios' 120 ms presses, 150 ms between them and 300 ms after
# the last were about 700 ms of chip time at rest, some 5 s of the host's CPU, in each such test
# (issue 15)
MENU_PRESS_MS = 60
MENU_BETWEEN_MS = 60
MENU_DONE_MS = 100
# The chip at rest after it was put down, before it is shot: the tracker takes a chip still for
# 400 ms as at rest (tracking/tracker.py SETTLE_MS) and scores no shot of a chip not at rest; the
# runner's put rests SETTLE_MS (1 s) after the hand is gone
PUT_REST_MS = 600


def strike_menu_and_play(t):
    """A Table's timeline split for the chip tests: (the menu's presses that start its game,
    shortened, to play before main.py is stopped; the rest, from the first put on, its rest
    PUT_REST_MS)."""
    tl = t.timeline()
    menu = [o for o in tl[1:] if o["op"] in ("press", "wait")][:4]
    play = tl[1 + len(menu):]
    assert menu and play and play[0]["op"] == "put" and menu[-1]["op"] == "wait"
    menu = [dict(o, ms=MENU_PRESS_MS, between=MENU_BETWEEN_MS) if o["op"] == "press"
            else dict(o, ms=MENU_DONE_MS) for o in menu]
    play = [dict(play[0], settle=False), {"op": "wait", "ms": PUT_REST_MS}] + play[1:]
    return menu, play


def locked_loop(ms, tail_ms=None):
    """LOOP for at most `ms` of chip time, ending LOCKED_TAIL_MS after its first event line."""
    return f"MS = {ms}\nTAIL = {LOCKED_TAIL_MS if tail_ms is None else tail_ms}\n" + LOOP


# How long the locked loop goes on after the verdict's line: the verdict's screen, the journal's
# save of the shot (in a locked turn, once the tracker is at rest: "saved_ms", asserted) and the
# table at rest again (over the tracker's 400 ms of stillness), all in it. (1,500 ms before
# issue 15: the save came in the verdict's own turn on both front ends, 2026-12-02, and the
# second after it was the table at rest, as before the chip was put down; about 8 s of CPU a
# loop.)
LOCKED_TAIL_MS = 500
# the locked turns asked for after the verdict, in LOCKED_TAIL_MS (about 130 - 140 ran, hall and
# presence, 2026-12-02; 401 and 427 in the 1,500 ms before)
LOCKED_TURNS_AFTER = 90


def assert_locked_loop_saw_the_strike(r, loop, before, after):
    """The strike was the loop's first event line (written inside it, under the lock), with at
    least `before` locked turns before it (the chip put down and sliding) and `after` after it;
    the journal saved the shot inside the loop, at or after the verdict, under the lock."""
    r.assert_event("shot", result="strike", pins=10)
    assert loop["first_ms"] >= 0, loop                 # the verdict came inside the locked loop
    assert loop["saved_ms"] >= loop["first_ms"], loop  # ... and the shot's save after it
    assert loop["saves"] >= 1, loop
    assert loop["steps"] - loop["steps_after"] > before, loop
    assert loop["steps_after"] > after, loop


@needs_chip
def test_an_allocation_in_the_locked_loop_stops_the_run_on_the_chip():
    """The check above can fail: the same loop with a float made in it (an allocation on the
    RP2040) ends the run with the chip's MemoryError."""
    from boardsim.rp2040 import probe
    from boardsim.runtime import RuntimeFailure
    bad = locked_loop(500).replace("n += 1", "n += 1\n        x = n * 0.5")
    with pytest.raises(RuntimeFailure, match="MemoryError"):
        # (main.py stopped once boot() has ended, not 1.5 s or 500 ms after the boot event:
        # boot() makes sb.wdt, which the loop feeds, after the event; with no wait the loop
        # stopped with an AttributeError, not the MemoryError looked for here)
        probe.run_module(bad, await_ms=3000, settle_ms=probe.READY)


# -- the chip's own paths against their twins ------------------------------------------------------
# On the RP2040 the hall scan reads the select pins and the ADC through the registers
# (hall_scan.scan_rp2) where the unix port makes the same Pin.value() / read_u16() calls
# (read_bank); both are run here, on the chip, over a whole frame of the same table: a chip lying
# on it and a pad stuck at the top rail.
HW_SCAN = r'''
import json
import time
from tables import board_table as BT
from sensing import hall_scan as HS
out = {"hw": HS.HW and __main__.sb.scan.hw}
del __main__.sb
gc.collect()
res = []
for hw in (1, 0):
    sc = HS.HallScanner()           # (its pins start at 0, as its counters)
    sc.hw = hw
    sc.SMOOTH = 0                   # the grid is then each pad's one reading less the baseline
    t0 = time.ticks_us()
    sc.scan_frame()                 # one frame: 16 banks (4 loop turns on the register path)
    us = time.ticks_diff(time.ticks_us(), t0)
    lows = 0
    for _ in range(16):
        sc.step()
        for s in range(48):
            v = sc.raw[s]
            if (v & 15) != (v >> 12):   # read_u16()'s scaling of 12 bits
                lows += 1
    res.append(([sc.grid[g] for g in range(len(sc.grid))], lows, us))
    sc = None
    gc.collect()
out["grid_hw"], out["lows_hw"], out["us_hw"] = res[0]
out["grid_pin"], out["lows_pin"], out["us_pin"] = res[1]
out["present"] = [g for g in range(len(BT.PAD_PRESENT)) if BT.PAD_PRESENT[g]]
out["cols"], out["zero"] = BT.PAD_COLS, BT.ADC_ZERO
# scan_rp2 settles each reading itself (while the next one converts): against settle() on the
# same readings, exactly. One bank a call, every bank position once, from states drawn near the
# limits (as EDGES' settle() below): baselines at either end of 16 bits (the clamp), averages
# near +-2**19 (x16), fitted readings at either end, jump 0 (every pad jumps) to 2**30 - 1 (none),
# smoothing shifts 0 - 15, drift 0 - 2**30 - 1. The bank's pads are drawn; the rest of the arrays
# must stay as they were.
import random
from array import array
sc = HS.HallScanner()
sc.hw = 1
N = len(sc.grid)
B19 = 1 << 19
bad = []
kinds = [0, 0, 0, 0]                # pads smoothed, smoothed and drifted, jumped, clamped
for trial in range(16):
    random.seed(trial)
    row = HS.GRAY[sc.pos] * 48
    for s in range(48):
        g = BT.SCAN_GRID[row + s]
        if g < 0:
            continue
        r = random.getrandbits(2)
        sc.baseline[g] = (0, 65535, random.getrandbits(16), BT.ADC_ZERO)[r]
        r = random.getrandbits(2)
        sc.acc[g] = HS.ACC_BIAS + ((B19 - 1 - random.getrandbits(6)), (random.getrandbits(6) - B19 + 1),
                                   random.getrandbits(20) - B19, (BT.ADC_ZERO - sc.baseline[g]) * 16)[r]
        sc.ref[g] = (0, 65535, random.getrandbits(16), HS.REF_BIAS)[random.getrandbits(2)]
        sc.grid[g] = random.getrandbits(16) - 32768
    jump = (0, 16, random.getrandbits(21), (1 << 30) - 1)[trial & 3]
    sh = (0, 2, 4, 15)[(trial >> 2) & 3]
    drift = (0, 1, random.getrandbits(16), (1 << 30) - 1)[(trial >> 1) & 3]
    b0 = array('H', sc.baseline)
    a0 = array('i', sc.acc)
    g0 = array('h', sc.grid)
    r0 = array('H', sc.ref)
    r = HS.scan_rp2(sc.pos, sc.bank, 1, sc.hwpins, sc.raw, sc.baseline, sc.acc, sc.grid, jump, sh,
                    sc.ref, drift)
    nj = HS.settle(sc.raw, row, b0, a0, g0, jump, sh, r0, drift)
    if ((r >> 8) != nj or bytes(a0) != bytes(sc.acc) or bytes(g0) != bytes(sc.grid)
            or bytes(b0) != bytes(sc.baseline) or bytes(r0) != bytes(sc.ref)):
        bad.append(trial)
    for s in range(48):             # which of settle()'s branches the pads took
        g = BT.SCAN_GRID[row + s]
        if g >= 0:
            v = sc.raw[s] - b0[g]
            if v > 32767 or v < -32767:
                kinds[3] += 1
            if g0[g] * 16 + HS.ACC_BIAS == a0[g] and (jump == 0 or jump == 16):
                kinds[2] += 1
            elif jump == (1 << 30) - 1:
                kinds[0 if -drift <= g0[g] + HS.REF_BIAS - r0[g] <= drift else 1] += 1
    sc.pos = r & 15
    sc.bank = (r >> 4) & 15
# a whole frame in 4 calls (a reading owed from one bank settled in the next): every pad settled
# once, none else touched (jump 0: each pad's average is its reading, as the grid holds it)
for g in range(N):
    sc.acc[g] = 0
    sc.grid[g] = 0
nj = 0
for _ in range(4):
    r = HS.scan_rp2(sc.pos, sc.bank, 4, sc.hwpins, sc.raw, sc.baseline, sc.acc, sc.grid, 0, 2,
                    sc.ref, 0)
    nj += r >> 8
    sc.pos = r & 15
    sc.bank = (r >> 4) & 15
out["exact_bad"], out["exact_kinds"], out["frame_nj"], out["frame_pos"] = bad, kinds, nj, sc.pos
out["frame_off"] = [g for g in range(N) if (sc.acc[g] == sc.grid[g] * 16 + HS.ACC_BIAS) != bool(BT.PAD_PRESENT[g])]
print(json.dumps(out))
'''


@needs_chip
def test_the_register_scan_reads_what_the_pin_calls_read_on_the_chip():
    from boardsim.rp2040 import probe
    from boardsim.testing import Table
    t = Table("bowling", players=1).place("small", "a.pocket").fault(pad=[10, 20], mode="stuck_high")
    # (the put without the runner's SETTLE_MS rest after it: the script reads the still table
    # with scanners of its own; 1 s of chip time, issue 15)
    before = [dict(o, settle=False) if o["op"] == "put" else o for o in t.timeline()[1:]
              if o["op"] in ("put", "fault")] + [{"op": "wait", "ms": 200}]
    r = probe.run_module(HW_SCAN, before=before, await_ms=30000, wait_ms=100, settle_ms=0)
    out = r.events[-1]
    assert out["hw"] is True              # the firmware on the chip runs the register path
    hw, pin = out["grid_hw"], out["grid_pin"]
    print(f"one frame's reads on the chip: registers {out['us_hw']} us, Pin/ADC calls {out['us_pin']} us")
    assert out["lows_hw"] == 0 and out["lows_pin"] == 0
    # the same pads, within the noise of two reads (+-138 each of 16 bits, 12-bit steps)
    worst = max(abs(hw[g] - pin[g]) for g in out["present"])
    assert worst <= 320, worst
    stuck = 20 * out["cols"] + 10
    assert hw[stuck] == pin[stuck] == 65535 - out["zero"]
    # the chip's field: its peak under it and the pads around (10 x the noise and more), the
    # same pads and signs both ways
    under = [g for g in out["present"] if abs(pin[g]) > 400 and g != stuck]
    assert len(under) >= 3 and max(abs(pin[g]) for g in under) > 2000, [pin[g] for g in under]
    assert all((hw[g] > 0) == (pin[g] > 0) and abs(hw[g]) > 80 for g in under)
    # the register path's own settling of each reading: settle()'s numbers exactly, every branch
    # of it taken (smoothed, drifted, jumped, clamped), every pad of a frame settled once
    assert out["exact_bad"] == []
    assert min(out["exact_kinds"]) >= 20, out["exact_kinds"]
    assert out["frame_nj"] == len(out["present"]) and out["frame_pos"] == 0
    assert out["frame_off"] == []


# -- viper on armv6m against the plain references ------------------------------------------------
def _target(test_module):
    import importlib
    return importlib.import_module(f"tests.{test_module}").TARGET


REFERENCE_JOBS = [
    ("test_scan_step", {"seed": 9, "smooth": 2, "steps": 48}),
    ("test_scan_step", {"front_end": "shift", "seed": 5, "steps": 48}),
    # (120 trials: 8 minutes of emulation; 4 in make test, as test_rp2040_presence.py's moves
    # and flood (10 before issue 15's cut): delta()'s armv6m code on 32-bit words against its
    # reference over fewer random cases; 400 under the unix port and CPython in
    # tests/test_presence_fit.py)
    ("test_presence_fit", {"seed": 11, "trials": 120 if LONG else 4, "ref": 0, "outs": 1}),
    # test_fault_pass's script (faults._pads/_muxes/_decay) is left out: on the chip it had not
    # printed its result after 120 s of emulated time ({"seed": 11, "seeds": 1, "frames": 80}),
    # cause not found (no traceback); faults.py is being reworked for issue 13's bounded frame
]


@pytest.fixture(scope="module")
def chip_references():
    """{"heap": the hall configuration's heap after boot (what probe.heap_free() measures),
    "edges": EDGES's result, (module, job index): each REFERENCE_JOBS script's result} from one
    boot: the heap first, then EDGES (the firmware's own modules), the stand-in scripts last.
    (The first SHARED_REFERENCES of REFERENCE_JOBS; see there.)"""
    from boardsim.rp2040 import probe
    shared = REFERENCE_JOBS[:SHARED_REFERENCES]
    jobs = [(EDGES, None, False)] + [(_target(m), job, True) for m, job in shared]
    got, failure, fw = probe.run_modules(jobs, files={"lcg.mpy": probe.support_mpy("lcg")}, heap=True)
    heap = [e for e in fw if e.get("ev") == "heap"]
    out = {"heap": heap[-1]["free"] if heap else None, "edges": got[0], "failure": failure}
    for i, (m, _job) in enumerate(shared):
        out[(m, i)] = got[1 + i]
    return out


def _chip_result(refs, key):
    got = refs[key]
    assert got is not None, f"the chip gave no result for {key}: {refs['failure']}"
    return got


# How many of REFERENCE_JOBS (the first) run in the shared boot: all of them. A second
# stand-in script there had stopped with an IndexError (2026-12-01, not understood); on
# 2026-12-02 both scan_step scripts gave CPython's results in it, and test_presence_fit's after
# them could not import the stand-in machine module (MemoryError: its PWM log, three 8 KB int
# arrays made at import in a heap the jobs before had fragmented), so it had a boot of its own
# until the log was made at the first PWM instead (boardsim/target/machine.py; no reference
# script makes one). Lower it to give a later script its own boot again.
SHARED_REFERENCES = 3


@needs_chip
@pytest.mark.parametrize("module,job", [pytest.param(*mj, marks=ONE_BOOT) if i < SHARED_REFERENCES else mj
                                        for i, mj in enumerate(REFERENCE_JOBS)],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_viper_functions_match_their_references_on_the_chip(module, job, tmp_path, request):
    """The tests' own reference scripts (each viper function beside the plain code it replaced,
    on seeded random readings with rails and jumps), run on the emulated RP2040: the viper code
    compiled for armv6m, 32-bit words, 30-bit small ints. Their results must equal CPython's."""
    from boardsim.rp2040 import probe
    from conftest import run_script
    src = _target(module)
    i = REFERENCE_JOBS.index((module, job))
    if i < SHARED_REFERENCES:
        got = _chip_result(request.getfixturevalue("chip_references"), (module, i))
    else:
        r = probe.run_module(src, job=job, standin=True, files={"lcg.mpy": probe.support_mpy("lcg")},
                             await_ms=120000, wait_ms=100, settle_ms=0)
        got = r.events[-1]
    if job.get("ref", 1) == 0:
        chip_half_matches(got, module, job, tmp_path)
        return
    want = run_script(src, module + "_target.py", "cpython", job, tmp_path)
    assert got == want


def chip_half_matches(got, module, job, tmp_path):
    """A reference script's chip half (job "ref": 0: the viper functions run on the chip on the
    script's draws, their answers listed in "outs", the plain reference not run there: it was
    most of the chip's work, issue 15) against the whole script under CPython on the same draws
    (the same job, the reference run): its viper functions (plain Python there, unbounded ints)
    gave the reference's answers ("bad" empty), and the chip's armv6m code gave the same answers
    in the same order, and every other number the chip printed is CPython's."""
    from conftest import run_script
    assert job.get("ref", 1) == 0 and job.get("outs")
    assert "outs" in got and "bad" not in got, f"the chip gave no answers: {got}"
    host = {k: v for k, v in job.items() if k != "ref"}
    want = run_script(_target(module), module + "_target.py", "cpython", host, tmp_path)
    assert want["bad"] == [], want["bad"][:2]
    chip_outs_match(got, want)
    assert got == {k: want[k] for k in got}
    return want


def chip_half_with_lcg(target, name, job, tmp_path):
    """A script with the tests' LCG draws (tests/support/lcg.py) run twice on the same draws:
    its chip half on the chip (job "ref": 0, its viper functions alone, each answer in "outs"),
    the whole script under CPython (ref 1: the plain references beside its own run of the viper
    functions); the chip's answers must be CPython's, and CPython's run must have passed every
    case. Returns (the chip's last event, CPython's result) for the test's own checks."""
    from boardsim.rp2040 import probe
    from conftest import run_script
    assert job.get("ref") == 0 and job.get("outs")
    r = probe.run_module(target, job=job, files={"lcg.mpy": probe.support_mpy("lcg")},
                         await_ms=300000, wait_ms=100, settle_ms=0)
    got = r.events[-1]
    want = run_script(target, name, "cpython", dict(job, ref=1), tmp_path)
    assert want["ok"] == want["cases"] == job["cases"], want
    chip_outs_match(got, want)
    return got, want


def chip_outs_match(got, want):
    """The chip's answers ("outs": its viper functions' on a script's draws) are the CPython
    run's on the same draws, one for one and as many: the first few that differ are shown."""
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got["outs"], want["outs"])) if g != w]
    assert bad == [] and len(got["outs"]) == len(want["outs"]), bad[:3]


EDGES = r'''
import json
from array import array
from sensing import hall_scan as HS
from sensing import presence_locate as LP
from displays import digits as D
from tables import board_table as BT
out = {}
# settle(): readings at both rails against baselines at both rails, the running averages at
# both ends of their range (x16 of +-32767, stored + ACC_BIAS: about 2**20 either way, so that a
# difference reaches 2**21), jump thresholds up to 2**30 - 1 and every smoothing shift
B = HS.ACC_BIAS
A = 32767 * 16
res = []
N = BT.PAD_COLS * BT.PAD_ROWS
# (ref, the reading last fitted + REF_BIAS, at both rails too, and drift over the same range)
for raw_v, base_v, acc_v, jump, sh, ref_v, drift in (
        (65535, 0, B - A, (1 << 30) - 1, 0, 0, (1 << 30) - 1), (0, 65535, B + A, 16, 3, 65535, 16),
        (65535, 0, B + A, 1 << 29, 4, 65535, 1 << 29), (0, 65535, B - A, 1, 15, 0, 1),
        (40000, 20000, B, (1 << 30) - 1, 2, 32768, 2000), (1, 65534, B + 1, 2000, 1, 1, 1)):
    raw = array('H', [raw_v] * 48)
    base = array('H', [base_v] * N)
    acc = array('i', [acc_v] * N)
    grid = array('h', [0] * N)
    ref = array('H', [ref_v] * N)
    nj = HS.settle(raw, 0, base, acc, grid, jump, sh, ref, drift)
    res.append([nj, list(acc[:8]), list(grid[:8])])
out["settle"] = res
# delta(): a chip of the largest seen radius at the board's corners and beyond, moved by the
# largest steps the fit tries (coordinates whose squares approach 2**30)
res = []
for ox, oy, nx, ny, r in ((-2350, -4750, -2340, -4740, 220), (2350, 4750, 2360, 4760, 300),
                          (0, 0, 23000, 0, 220), (-23000, -23000, 23000, 23000, 400),
                          (16000, -16000, 16100, -15900, 1000)):
    hx = array('i', [ox, 0])
    hy = array('i', [oy, 0])
    hr = array('i', [r, 200])
    usable = bytearray(b"\x01" * (BT.PRES_COLS * BT.PRES_ROWS))
    label = bytearray(BT.PRES_COLS * BT.PRES_ROWS)
    grid = bytearray(BT.PRES_COLS * BT.PRES_ROWS)
    # the window: columns, rows, the group's label, tolerance, overlap, the levels, then k
    win = array('i', [0, BT.PRES_COLS - 1, 0, BT.PRES_ROWS - 1, 0, 60, 1, BT.PRES_LEVELS]
                + list(BT.PRES_LEV) + [1])
    res.append(LP.delta(0, nx, ny, hx, hy, hr, usable, label, win, grid))
out["delta"] = res
# take() (Locator._take's pass): readings across the 'h' grid's whole range (a viper ptr16 loads
# them unsigned), the 12-bit ADC's steps (multiples of 16 less a baseline), both rails and the
# thresholds either side; thresholds and rails up to 2**30 - 1 and negative; the candidate list
# cut at 0, 1 and 64. The plain reference is the Python loop take() replaced: run under CPython
# (the script's host run), where take() is checked against it too ("take_twin"), not on the chip
# (issue 15: a reference on the chip's time); each call's answers in full, the readings array by
# its SHA-256.
import sys
import hashlib
CHIP = sys.implementation.name == "micropython"
def take_ref(grid, usable, res, cand, cused, n, t, rail, most):
    nc = 0
    for g in range(n):
        v = grid[g] if usable[g] else 0
        if v >= rail or v <= -rail:
            v = 0
        res[g] = v
        if (v > t or v < -t) and nc < most:
            cand[nc] = g
            cused[nc] = 0
            nc += 1
    return nc
s = 12345
def rnd():
    global s
    s = (s * 1103515245 + 12345) & 0x3FFFFFFF
    return s >> 8
edge = [0, 1, -1, 1199, 1200, 1201, -1200, -1201, 23999, 24000, 24001, -23999, -24000, -24001,
        32767, -32768, -32767, 32766, 4095 * 16 - 32768, -(4095 * 16 - 32768), 16, -16]
grid = array('h', [edge[g] if g < len(edge) else
                   ((rnd() & 0xFFFF) - 32768 if g & 1 else ((rnd() & 4095) << 4) - 32768 + (rnd() & 255))
                   for g in range(N)])
usable = bytearray([0 if g % 7 == 3 else 1 for g in range(N)])
res = []
twin = True
for t, rail, most in ((1200, 24000, 64), (0, 24000, 64), (1200, 24000, 1), (1200, 24000, 0),
                      (32767, 32768, 64), (-1, 24000, 64), ((1 << 30) - 1, (1 << 30) - 1, 64),
                      (300, -5, 64), (4095, 1 << 29, 64)):
    got = []
    for fn in ((HS.take,) if CHIP else (take_ref, HS.take)):
        r = array('i', [7] * N)
        c = array('h', [9] * 64)
        u = bytearray(b"\x05" * 64)
        got.append([fn(grid, usable, r, c, u, N, t, rail, most), hashlib.sha256(r).digest().hex(),
                    list(c), list(u), sum(r)])
    twin = twin and got[0] == got[-1]
    res.append(got[0])
out["take"] = res
if not CHIP:
    out["take_twin"] = twin
# setbytes(): every byte value, whole buffers
fb = bytearray(1024)
res = []
for v in (0, 1, 127, 128, 255):
    res.append([D.setbytes(fb, 0, 1024, v), D.setbytes(fb, 1000, 24, v), fb[0], fb[1023]])
out["setbytes"] = res
print(json.dumps(out))
'''


@needs_chip
@ONE_BOOT
def test_viper_functions_at_the_word_limits_match_the_plain_code(tmp_path, chip_references):
    """settle(), take(), delta() and setbytes() on values near 2**30 and 2**31 (take: the 'h'
    grid's 16-bit range and the 12-bit ADC's steps): the RP2040's 32-bit viper words against the
    same code as plain Python under CPython (unbounded ints); take()'s answers on the chip also
    against its plain reference's under CPython (where take() gives them too)."""
    from conftest import run_script
    got = _chip_result(chip_references, "edges")
    want = run_script(EDGES, "edges_target.py", "cpython", {}, tmp_path)
    assert want.pop("take_twin") is True
    assert "take_twin" not in got
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got["take"], want["take"])) if g != w]
    assert bad == [], bad[:2]
    assert got == want


def test_the_frozen_images_native_code_is_word_aligned():
    """Every viper function frozen into the image starts on a 4-byte boundary. The armv6m
    emitter loads large constants and far jumps' offsets pc-relative assuming it (MicroPython
    v1.28's mpy-tool.py aligns them to 2 only; tools/build_image.align_native): off by 2, the
    frozen faults._pads jumped into the boot ROM and the image hit the watchdog at every boot."""
    import shutil
    from tools import build_image
    elf = os.path.join(images.cache_dir(), images.FROZEN_IMAGE)
    if not os.path.exists(elf):
        pytest.skip(f"no frozen image at {elf} (make image)")
    if shutil.which("arm-none-eabi-nm") is None:
        pytest.skip("no arm-none-eabi-nm (apt-get install gcc-arm-none-eabi)")
    native = _frozen_native(elf)
    assert native, "no frozen native code found in the image"
    assert build_image.misaligned_native(elf) == []


def _frozen_native(elf):
    """The frozen native functions' names in an ELF (fun_data_* in .text)."""
    import subprocess
    r = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True, check=True)
    return [ln.split()[2] for ln in r.stdout.splitlines()
            if len(ln.split()) == 3 and ln.split()[1] in "tT" and ln.split()[2].startswith("fun_data_")]


def test_frozen_native_code_is_realigned_in_frozen_content(tmp_path):
    """align_native() turns mpy-tool's 2-byte alignment of native code into 4 and leaves the
    rest of frozen_content.c as it was."""
    from tools import build_image
    c = tmp_path / "frozen_content.c"
    body = ("static const byte fun_data_a[8] __attribute__((section(\".text\"))) "
            "__attribute__ ((aligned (2))) = {0};\nstatic const byte fun_data_b[4] = {1};\n")
    c.write_text(body)
    assert build_image.align_native(str(c)) is True
    assert c.read_text() == body.replace("aligned (2)", "aligned (4)")
    assert build_image.align_native(str(c)) is False



def test_a_firmware_file_saved_during_the_build_is_aligned_again(tmp_path, monkeypatch):
    """build() aligns frozen_content.c and makes again; when that make freezes a module afresh
    (a file saved during the build: aligned to 2 again), it aligns and makes once more, so the
    image is not refused for it. A fake make stands in for the rp2 port's."""
    from tools import build_image
    monkeypatch.setenv("ZENN_CACHE", str(tmp_path))
    build_dir = tmp_path / "build" / "rp2-RPI_PICO"
    frozen = build_dir / "frozen_content.c"
    fresh = "static const byte fun_data_a[8] __attribute__ ((aligned (2))) = {0};\n"
    makes = []

    def fake_run(cmd, **kw):
        if "ports" in " ".join(cmd):            # the port's make: the first two freeze afresh
            makes.append(frozen.read_text() if frozen.exists() else None)
            if len(makes) <= 2:
                build_dir.mkdir(parents=True, exist_ok=True)
                frozen.write_text(fresh)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    import subprocess
    monkeypatch.setattr(build_image.subprocess, "run", fake_run)
    mpy = tmp_path / "mpy"
    (mpy / "ports" / "rp2" / "boards" / "RPI_PICO").mkdir(parents=True)
    build_image.build(str(mpy), "RPI_PICO", 1)
    assert len(makes) == 3
    assert "aligned (4)" in makes[1] and "aligned (4)" in makes[2]
    assert "aligned (2)" not in frozen.read_text()

# -- the tools around the image (no emulator needed) ---------------------------------------------
def test_the_boot_rom_is_taken_from_rp2040js_bootrom_ts(tmp_path):
    from tools import extract_bootrom as X
    words = [0x20041F00, 0xEF, 0x35, 0x31, 0x0201754D] + [i * 2654435761 & 0xFFFFFFFF for i in range(4091)]
    ts = "// header\nexport const bootromB1 = new Uint32Array([\n  " + ", ".join("0x%08x" % w for w in words) + ",\n]);\n"
    src = tmp_path / "bootrom.ts"
    src.write_text(ts)
    out = tmp_path / "bootrom.bin"
    assert X.main([str(src), "--out", str(out)]) == 0
    data = out.read_bytes()
    assert len(data) == 16384 and data[0x10:0x13] == b"Mu\x01"
    assert int.from_bytes(data[:4], "little") == 0x20041F00
    # a short or foreign array is refused, and nothing is written
    src.write_text(ts.replace("0x0201754d", "0x12345678"))
    assert X.main([str(src), "--out", str(tmp_path / "no.bin")]) == 1
    assert not (tmp_path / "no.bin").exists()


def test_the_uf2_holds_the_elfs_flash_segments(tmp_path):
    import struct
    from tools.build_image import write_uf2, flash_segments
    # a minimal ELF32: one PT_LOAD of 300 bytes at the start of flash, one in RAM (left out)
    text = bytes(range(256)) + b"\xaa" * 44
    ram = b"\x55" * 16
    ph = 52
    hdr = b"\x7fELF" + b"\x01\x01\x01" + b"\0" * 9 + struct.pack("<HHIIIIIHHHHHH", 2, 40, 1, 0x10000000, ph,
                                                                    0, 0, 52, 32, 2, 0, 0, 0)
    data_off = ph + 2 * 32
    phs = struct.pack("<IIIIIIII", 1, data_off, 0x10000000, 0x10000000, len(text), len(text), 5, 4)
    phs += struct.pack("<IIIIIIII", 1, data_off + len(text), 0x20000000, 0x20000000, len(ram), len(ram), 6, 4)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(hdr + phs + text + ram)
    assert flash_segments(str(elf)) == [(0, text)]
    n = write_uf2(str(elf), str(tmp_path / "fw.uf2"))
    uf2 = (tmp_path / "fw.uf2").read_bytes()
    assert n == 300 and len(uf2) == 2 * 512
    magic0, magic1, flags, addr, size, blk, nblk, fam = struct.unpack_from("<IIIIIIII", uf2, 512)
    assert (magic0, magic1, addr, size, blk, nblk, fam) == (0x0A324655, 0x9E5D5157, 0x10000100, 256, 1, 2, 0xE48BFF56)
    assert uf2[512 + 32:512 + 32 + 44] == b"\xaa" * 44 and uf2[512 + 32 + 44] == 0xFF


@needs_chip
@pytest.mark.parametrize("config", [None, {"front_end": "shift"}], ids=["blank", "config"])
def test_the_flash_prepared_before_a_run_is_the_one_the_runner_made_op_by_op(config, tmp_path):
    """images.prepared_flash() (the chip run's filesystem made in the test's process from its
    config and the timeline's leading flash writes, issue 15) gives the bytes pico_runner.py's
    flash ops leave on the chip: each write read back from the chip (node), edited and written
    again, from the flash the chip starts with (blank there, or the config's filesystem)."""
    from boardsim.rp2040.chip import Pico
    cfg = None
    if config is not None:
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps(config))
        cfg = str(cfg)
    tl = [{"op": "flash", "write": "zjob.mpy", "hex": (b"job" * 700).hex()},
          {"op": "flash", "write": "lcg.mpy", "hex": bytes(range(256)).hex()},
          {"op": "flash", "write": "zjob.mpy", "hex": b"again".hex()},
          {"op": "boot"}, {"op": "flash", "write": "late.bin", "hex": "00"}]
    image = images.find_image()
    region, rest = images.prepared_flash(tl, cfg, image)
    assert rest == tl[3:] and region is not None
    with Pico(image, images.find_bootrom(), images.initial_flash(cfg, image), node=images.node(),
              server="") as pico:
        for o in tl[:3]:            # (pico_runner.ChipFlash.write_file, op by op)
            pico.write_flash(images.write_fs(pico.read_flash(), o["write"], bytes.fromhex(o["hex"])))
        assert pico.read_flash() == region
    assert images.read_fs(region, "zjob.mpy") == b"again"
    assert (images.read_fs(region, "config.json") is not None) == (config is not None)


def test_the_rp2040_runtime_says_why_it_cannot_run(tmp_path, monkeypatch):
    from boardsim import runtime
    monkeypatch.setenv("RP2040_IMAGE", str(tmp_path / "no-such-image.elf"))
    with pytest.raises(runtime.RuntimeFailure, match="no RP2040 image") as e:
        runtime.command("rp2040", "timeline.jsonl")
    assert e.value.status == 2


def test_misaligned_native_names_code_off_a_word_boundary(tmp_path):
    """The image check itself: a function at 2 mod 4 is named, one on a word is not."""
    import shutil
    import subprocess
    from tools import build_image
    gas = shutil.which("arm-none-eabi-as")
    if gas is None or shutil.which("arm-none-eabi-nm") is None:
        pytest.skip("no arm-none-eabi binutils (apt-get install gcc-arm-none-eabi)")
    src = tmp_path / "f.s"
    src.write_text(".thumb\n.text\n.balign 4\nfun_data_on_word:\n.hword 0\nfun_data_off_word:\n"
                   ".hword 0\n.balign 4\nfun_data_next:\n.hword 0\n")
    obj = tmp_path / "f.o"
    subprocess.run([gas, "-o", str(obj), str(src)], check=True)
    assert build_image.misaligned_native(str(obj)) == [(2, "fun_data_off_word")]
