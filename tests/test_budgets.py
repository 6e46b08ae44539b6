"""The firmware's deterministic budgets (docs/performance.md): nothing allocated in the loop
after boot, the heap it holds after boot and the RAM its code takes (MicroPython unix port,
64-bit, firmware imported from .mpy as on the Pico) and bench/memory.py's estimate of that heap
on the Pico, for each front end, and its size as .mpy for the RP2040.

The figures come from the benches (bench/memory.py); wall-clock time is never asserted here.
A bound is the figure measured when it was set plus some room. A change that crosses one
either allocates in the loop (fix it: the loop must not allocate) or makes the firmware bigger
(if that is worth it, raise the bound here and the figure in docs/performance.md, saying why).
"""
import functools
import os

import pytest

from bench import memory

MICROPYTHON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           ".venv", "bin", "micropython")
pytestmark = pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no MicroPython unix port")
# each front end's measurement (some 10 s of CPU) and the .mpy build are made once, on one test
# worker (tests/conftest.py): under `-n 2` both workers made each before
ONE_WORKER = ("mem", "host_mpy")

# bytes on the 64-bit unix port (an upper bound of the Pico's: its pointers take 4 bytes), with
# both displays, per front end (config.json "front_end"); measured 2026-11-29 at 7e2fe2e, after
# issue 8's memory work (was 203 KB held, 161 KB of code with the hall pads); about 7 % of room
# (202.6 KB with the hall pads after issue 13's bounded fault monitor, issue 14's held results and
# best/buzzer hooks and issue 12's fitted readings and anchor frame: about +14 KB in all; the Pico
# itself, measured on the emulated chip, leaves 236 KB free at main.py)
FIRMWARE_HEAP_MAX = {"hall": 223_300,       # held after boot, code and objects (measured 189 KB;
                                            # review21's settle and correction scratch arrays
                                            # at hall_follow's module level (not on the Locator,
                                            # whose every method call misses its table first):
                                            # hall 223,200 B, main 3da306f 222,944 B; frozen on
                                            # the chip 185,616 B free after boot, main 185,744)
                                            # hall 223,008 B / shift 223,648 B with issue 13's
                                            # refresh fit and verdict paced on the chip,
                                            # hallverdict: app.py, tracker.py, hall_follow.py
                                            # code on this port (main 037af57 shift 223,456 B);
                                            # frozen on the chip 184,560 B (hall) / 184,368 B
                                            # (presence) free after boot, as main
                                            # 222,336 B (hall) / 222,720 B (shift) with issue
                                            # 13's next file prepared again after a game,
                                            # gamestart2: journal.py's preparation in steps and
                                            # app.py's light-turn gate, code; frozen on the chip
                                            # the code is in flash: 184,528 B free after boot
                                            # there (hall; presence 184,384 B)
                                            # 221,664 B with issue 13's game start prepared at
                                            # boot, gamestart: journal.py's code +768 B on this
                                            # port (main 0c602ca 220,896 B), objects the same;
                                            # frozen on the chip the code is in flash: 184,576 B
                                            # free after boot there as on main
                                            # 220,512 B on main 8f184ca, the first figure the
                                            # same in every checkout (bench/_target.py's fixed
                                            # paths; it had moved by up to 1 KB with the folder);
                                            # 217.0 KB after issue 15's folders and app split and
                                            # issues 12-13's tracker, 2026-12-01; 219,936 B on
                                            # main 708f553, 220,096 B with issue 13's second
                                            # anchor in the tracker: +96 B code, +64 B its
                                            # entries; on the chip, frozen, 80 B less free)
                     "shift": 223_700}      # (222,144 B est. with gamestart's journal, +800 B
                                            # of code, and preshold's held fits resumed, +672 B;
                                            # main 0c602ca 220,544 B; frozen, the code is in
                                            # flash: the chip keeps 184,400 B free after boot)
                                            # (220,224 B with issue 13's still searches resumed,
                                            # presbound: code +1,536 B, objects -64 B; main
                                            # 2a8a68b 218,752 B; frozen on the chip 184,368 B
                                            # free, code in flash; then +288 B of app.py's
                                            # step() code with issue 13's loop turns at rest
                                            # within 10 ms, turnrest)
                                            # (217.1 KB on 2026-12-02 with the chip's register
                                            # scan, the viper hole search and the touching
                                            # chips' hold: +0.1 KB over 217,000; frozen, the
                                            # chip keeps 184.7 KB free, code in flash)
                                            # (measured 193 KB; 213.4 KB with issue 12's
                                            # four levels a pad: +2.3 KB the scanner's last
                                            # reading of every strobe, +2.3 KB the locator's
                                            # rest patterns (0.7 KB since), code, 2026-12-02;
                                            # 214.4 KB rebased on d7b7249, main 208.4 KB)
CODE_RAM_MAX = {"hall": 178_000,            # the modules, once imported (measured 146 KB)
                                            # (review21's scratch arrays in hall_follow:
                                            # hall 177,824 B, main 3da306f 177,568)
                                            # (verdict10's near_d2, flat_pairs and unc_pass in
                                            # viper, armv6m code: hall 177,408 B; frozen on
                                            # the image, the chip keeps 185,808 B free)
                                            # (rowflip's kept fits, hall_follow and
                                            # hall_locate: hall 176,480 B, main c486c2f's
                                            # cap 176,200)
                "shift": 172_600}           # (verdict10's tracker _rest_* loops in viper:
                                            # shift 172,224 B, session 20)
                                            # (main 037af57 measured 171,808 B, over 171,800,
                                            # the figure moving by a 32 B block from run to
                                            # run; heaproom's fault monitor 171,808 - 171,840 B,
                                            # hall 175,776 B: its stock .mpy heap estimate 3.9 KB
                                            # lower, held by PICO_ESTIMATE_MAX below; then
                                            # hallverdict's paced refresh fit, app.py's turns of
                                            # the fit and hall_follow's settle in pieces)
                                            # (hallverdict's paced refresh fit: hall 176,128 B,
                                            # main 037af57 175,744; shift 171,968 B, main
                                            # 171,776: app.py's turns of the fit, the tracker's
                                            # verdict put off, hall_follow's settle in pieces)
                                            # (gamestart2's preparation after a game: hall
                                            # 175,456 B, shift 171,040 B; journal.mpy +506 B,
                                            # app.mpy +73 B of armv6m code)
                                            # (gamestart's journal +800 B and preshold's held
                                            # fits, presence_locate 17,376 -> 18,016 B; main
                                            # 0c602ca 168,864 B; hall 174,784 B, +768 B)
                                            # (168,544 B with the still searches resumed,
                                            # presbound: presence_locate 15,808 -> 17,344 B)
                                            # (165.5 KB on 2026-12-02: the register scan, the
                                            # 167,040 B with the journal written in place, the
                                            # frozen mux rule, the fit corrected, 2026-12-03;
                                            # before it: the register scan, the hole search, the touching chips' hold)
                                            # (measured 138 KB; 158.1 KB with all of the below;
                                            # 162.3 KB with issue 12's four levels a pad rebased
                                            # on d7b7249, main 159.6 KB: +2.8 KB)
# (issue 15's folders: +3.6 KB with either front end, 145.8 -> 149.4 KB shift: a module object and
# dict per folder, a package's __path__, the longer dotted names; with the hall pads also the hall
# locator's three seams' modules, 155.9 -> 162.0 KB in all. On the Pico +2.3 / +4.7 KB estimated,
# with .mpy files only: the frozen image keeps code out of the heap. Issue 13's frame-length
# tracker and stuck-pad rule: +1.7 KB hall, +2.2 KB shift, measured 157.6 / 148.0 KB before the
# folders). Issue 12's who-moved-first (the knock geometry, lost-chip matching): +1.8 KB)
# (hall: issue 12 added 1.7 KB: the scanner's fitted readings, 2 B a pad, and the tracker's
# anchor frame; measured 46.2 KB with them)
BOOT_OBJECTS_MAX = {"hall": 48_000,         # what boot() keeps besides the code (measured 43 KB)
                    "shift": 59_000}        # (measured 55 KB)
# bench/memory.py's estimate of the same on the Pico (32-bit): held after boot (estimated 144 /
# 150 KB at 7e2fe2e; 156.5 / 160.5 KB with issue 13's bounded fault monitor and issue 14's held
# results, best-games menu and buzzer hooks). The chip itself is measured by tests/test_rp2040.py.
PICO_ESTIMATE_MAX = {"hall": 191_800,      # (171.6 KB after the app split and issues 12-13's
                     "shift": 187_400}      # tracker, 2026-12-01: 64 KB of 236 left with .mpy;
# hall 190,964 B / shift 187,058 B with verdict10's tracker _rest_seen, _rest_snapshot and
# _rest_masks in viper (tracker.mpy +3.4 KB of armv6m code), hall 191,453 B with
# hall_locate.finish_pass (+1.0 KB); frozen, the chip keeps 185,744 B free after boot
# hall 189,169 B with verdict10's viper near_d2, flat_pairs and unc_pass for the verdict's frame
# (hall_locate.mpy +3.0 KB, hall_seed.mpy +0.7 KB of armv6m code; session 20): a stock .mpy
# deployment only; frozen, the chip keeps 185,808 B free after boot (main 186,016)
# hall 185,026 B with hallfirst's register scan settling each reading while the next converts
# (hall_scan.mpy +1.3 KB of code), then hall 186,556 B / shift 185,298 B with the tracker's carried
# matching and its follows in viper (tracker._carry, tracker.mpy 10,868 -> 13,895 B of armv6m
# code): a stock .mpy deployment only; frozen, the chip keeps 48 B less than main free after boot
# (tests/test_rp2040.py -k heap_free)
# hall 185,379 -> 183,966 B, shift 187,305 -> 183,412 B with heaproom's fault monitor (the presence
# pads' faulty pads a bit a pad, the hall muxes' pads read from the scan map; `python -m
# bench.memory --display both`, 2026-12-03): the budgets taken down with them so that the room
# stays (frozen, the chip keeps 186,096 / 188,384 B free after boot, tests/test_rp2040.py);
# then hallverdict's paced refresh fit (its code, a stock .mpy deployment only): hall 184,256 B
# merged (session 18, with takebeside's take rule); with firstframe's carried matching (tracker.mpy
# +280 B of code) hall 184,532 B, shift 183,764 B
# (hall 185,806 B with hallverdict's paced refresh fit and verdict, before heaproom)
# shift 187,192 B with presmove's search units begun only while the time left covers the frame's
# longest (presence_locate's code for it): a stock .mpy deployment only; frozen,
# the chip keeps 184,352 B free after boot (tests/test_rp2040.py -k heap_free)
# hall 185,061 B / shift 186,528 B with gamestart2's next game's file prepared again after a game
# (journal.mpy +506 B, app.mpy +73 B of code): a stock .mpy deployment only; frozen, the chip keeps
# 184,528 B (hall) / 184,384 B (presence) free after boot (tests/test_rp2040.py -k heap_free)
# hall 184,529 B merged with halllag2's stillness counted from the frame before (the tracker's
# lag rule, +132 B of code over gamestart's 184,397 B)
# hall 184,397 B with issue 13's game start prepared at boot (gamestart: the journal's code, +769 B
# over main 0c602ca's 183,628 B); shift with it and preshold's held fits resumed (+785 and +651 B
# of code over main's 184,354 B): a stock .mpy deployment only; frozen, the chip's heap after
# boot is measured by tests/test_rp2040.py -k heap_free
# shift 184,065 B with presbound's still searches resumed (2026-12-03, +1.5 KB of code, a stock
# .mpy deployment only: frozen, the chip keeps 184,368 B free after boot)
# shift 177.2 KB on 2026-12-02: the RP2040 register scan (shift_scan), the viper hole search
# (faults) and the touching chips' hold (presence_locate), a stock .mpy deployment only)
# hall 176.8 KB with issue 13's fit in viper, hall_fit.mpy 3.7 -> 12.6 KB: its machine code is
# on the heap of a stock .mpy deployment only, the frozen image holds it in flash, 185,840 B
# free after boot there, 32 B less than before; +3 KB with the seed-41 Trap Zenn fixes: cup
# drops by distance, lost first movers, the rest positions' sure / maybe zones and weigh();
# 182.0 KB with issue 13's partial OLED pages and issue 12's hand and crowd rules in the tracker)
# (issue 15, a stock .mpy deployment only: the folders' package modules and the hall locator's
# three seams' modules, +4.7 KB estimated with the hall pads (159.7 -> 164.4 KB), +2.4 KB with the
# presence pads (162.0 -> 164.4 KB); the frozen image, which ships, holds no code on the heap)
# (shift 177.2 -> 181.5 KB with issue 13's presence frames while chips move: moves(), flood() and
# mismatch() in viper, presence_locate.mpy 16.5 -> 24.0 KB of armv6m code; a stock .mpy
# deployment only: the frozen image holds it in flash, 184,320 B free after boot there with
# verdict2's deferred shot lines: exactly the 180 KB floor)
# (2026-12-02: each .mpy names its source by its path under firmware/, not the checkout's: before,
# every figure here grew with the length of the folder the project was cloned into, and CI's
# checkout put shift at 182,082; now hall 182.0 KB and shift 181.3 KB wherever it is cloned,
# measured in /work/main and in a 60-character path, within 96 B of each other)
# every firmware module as .mpy for armv6m, -O3 (measured 91 KB; 98.3 KB at bf143d0; issue 13's
# bounded fault monitor +6.2 KB (its viper queue and kill helpers, events.py's and digits.py's viper
# copies, locate.near_pads); issue 14's held results, best games (best.mpy 3.0 KB) and buzzer
# (buzzer + tunes 1.1 KB) +7.1 KB: flash is plentiful (1.4 MB of filesystem), best/buzzer take no
# RAM unless used, and the frozen image keeps code out of the heap)
# 2026-12-03: 183,237 / 182,492 B estimated (hall / shift) with the journal written in place
# (jsave), the frozen mux rule (muxbound) and the lagging fit corrected (hallfit): +1 KB each;
# the frozen image on the chip keeps 184,576 B free (hall), above the 180 KB floor.
# 186,797 B (hall) merged 2026-12-03 (session 19): hallfirst's scan and carry with rowflip's kept fits
MPY_TOTAL_MAX = 178_000     # (176,682 B with verdict10's tracker _rest_* loops in viper,
# tracker.mpy +3.4 KB, then 177,723 B with hall_locate.finish_pass: session 20)
# (173,315 B with verdict10's viper near_d2, flat_pairs, unc_pass,
# hall_locate.mpy +3.0 KB, hall_seed.mpy +0.7 KB: session 20)
# (merged 2026-12-03 (session 19) with rowflip's kept fits, +491 B,
# and settlewin's locked turns in main.py (kept as source), +305 B;
# 169,008 B with hallfirst's tracker._carry in viper, tracker.mpy
# +3.0 KB; 165,981 B with its register scan settling each reading while the next converts,
# hall_scan.mpy +1.3 KB; 164,687 B merged 2026-12-03 (session 18): hallverdict's paced refresh
# fit and verdict turn (app, hall_follow, hall_locate, tracker), takebeside's take rule, heaproom's
# fault monitor; 164,020 B merged 2026-12-03 (session 17): journalstep's stepped
# preparation, journal.mpy +125 B; presmove's search units timed, presence_locate.mpy +340 B;
# restframe's kept masks, tracker.mpy +70 B; 163,485 B before: code is
# flash in the frozen image (141 KB free before the filesystem), heap only for a stock .mpy
# deployment, which PICO_ESTIMATE_MAX holds)
# (163,240 B with gamestart2's next file prepared after a game:
# journal.mpy 6,269 -> 6,775 B, app.mpy 6,359 -> 6,432 B)
# (159,239 B on 2026-12-03 with jsave, muxbound, hallfit;
# 160,810 B with presbound's still searches resumed: presence_locate.mpy 23,508 -> 25,060 B;
# 161,069 B merged with turnrest's loop turn spread over turns: app.mpy's step(); 161,814 B with
# preshold's held fits resumed: presence_locate.mpy 25,067 -> 25,812 B; 162,583 B merged with
# gamestart's next game's file prepared at boot: journal.mpy +769 B)
# (149.9 KB on 2026-12-02 with the same three: flash, not heap,
# when frozen) (126.7 KB after issue 15's folders, the app split and issues 12-13;
# 137.0 KB with issue 13's hall fit in viper: hall_fit.mpy 3.7 -> 12.6 KB of armv6m code;
# 139.3 -> 142.2 KB with issue 13's rest -> shown: the OLED's partial pages +1.5 KB and zones'
# segment loop +0.8 KB of armv6m code, the unreadable fault and the locator's crowd rule +0.5 KB;
# +3.8 KB with issue 12's four levels a pad: presence_locate.mpy 10.7 -> 13.7 KB (the levels in
# delta() and the fits, rest patterns, fits off the board left out in a frame with a hand),
# shift_scan.mpy 2.8 -> 3.3 KB, 2026-12-02; 157.5 KB with issue 13's presence frames while
# chips move: the move loop and the flood in viper, presence_locate.mpy +7 KB at -O3;
# 158,142 B with presmove3's time budget, moves() resumable: presence_locate.mpy 23.1 KB)


def quick_timelines():
    """Every kind of loop turn once: menus, a placing, a strike into the cup, a ball at rest,
    a spare, undo, a trap set-up check, a knock and the turn button."""
    from boardsim.testing import Table
    b = Table("bowling", players=2)
    b.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")
    b.place("small", "a.pocket").shoot("small", "b.e2").shoot("small", "b.pocket", "b.cup")
    b.press("undo").advance_time_and_run(200)
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]}).press("turn")
    # (Table.timeline(): compiled as bench._target.timeline() compiles, and kept for the other
    # front end's measurement, boardsim/testing.py)
    return {"bowling": b.timeline(), "trap": t.timeline()}


@functools.lru_cache(maxsize=None)
def code_size():
    """memory.code_size() (every module compiled for the RP2040, a couple of seconds), once per
    test process: both measurements and the size budget below read it."""
    return memory.code_size()


@pytest.fixture(scope="module", params=["hall", "shift"])
def mem(request):
    # every display at once: the most code and the most objects; each front end (each imports
    # only its own scanner and locator)
    choices = memory.display_choices()
    display = "both" if "both" in choices else choices[-1]
    return memory.measure(display, tls=quick_timelines(), locked=False,
                          front_end=request.param, sizes=code_size())


def test_the_loop_allocates_nothing_after_boot(mem):
    assert mem["iterations"] > 100, mem["steps"]
    assert mem["alloc_total"] == 0, (
        f"step() kept {mem['alloc_total']} bytes over {mem['iterations']} loop iterations "
        f"({mem['alloc_steps']} steps): {mem['alloc']}")


def test_the_heap_after_boot_stays_within_its_budget(mem):
    fe = mem["front_end"]
    assert mem["firmware"] <= FIRMWARE_HEAP_MAX[fe], (
        f"the firmware holds {mem['firmware']} bytes after boot with the {fe} pads (code "
        f"{mem['code']}, objects {mem['boot']}), over {FIRMWARE_HEAP_MAX[fe]}")
    assert mem["boot"] <= BOOT_OBJECTS_MAX[fe], f"boot() keeps {mem['boot']} bytes of objects"
    assert mem["pico"]["firmware"] <= PICO_ESTIMATE_MAX[fe], (
        f"the Pico estimate of the heap after boot is {mem['pico']}")


def test_the_code_ram_stays_within_its_budget(mem):
    fe = mem["front_end"]
    big = sorted(mem["modules"].items(), key=lambda kv: -kv[1])[:5]
    assert mem["code"] <= CODE_RAM_MAX[fe], (
        f"the modules take {mem['code']} bytes once imported with the {fe} pads: {big}")


def test_boot_imports_only_what_the_configuration_chooses(mem):
    # the other front end's scanner and locator, the boot-only modules (config, calib: dropped
    # after boot), the tools' (padmap), the best games (best: at a game's end only) and the
    # buzzer's (buzzer, tunes: not configured) are not held after boot
    other = {"hall": ("sensing.shift_scan", "sensing.presence_locate"),
             "shift": ("sensing.hall_scan", "sensing.hall_locate")}
    held = set(mem["modules"])
    assert "scoreboard.app" in held and "sensing.zones" in held      # (dotted names: the folders)
    for m in other[mem["front_end"]] + ("storage.config", "sensing.calib", "displays.padmap",
                                        "storage.best", "panel.buzzer", "tables.tunes"):
        assert m not in held, f"{m} is held after boot with the {mem['front_end']} pads"


_DROPPED_SCRIPT = r"""
import sys
import vclock
sys.modules["time"] = vclock
import machine
from world import World
w = World(3)
machine.attach(w)
w.power_on()


class Out:
    def write(self, buf, off=0, n=-1):
        return n


from scoreboard import app
sb = app.Scoreboard(Out(), "config.json")
sb.boot()
for i in range(48):
    sb.step()
held = []
for pkg, mod in (("storage", "config"), ("sensing", "calib"), ("storage", "best")):
    if pkg + "." + mod in sys.modules:
        held.append(pkg + "." + mod)
    if pkg in sys.modules and hasattr(sys.modules[pkg], mod):
        held.append(pkg + " ." + mod)
print("HELD", held)
"""


def test_the_modules_boot_drops_are_gone_from_their_packages_too(tmp_path):
    # a submodule is an attribute of its package's module as well as in sys.modules: boot()
    # drops config and calib from both (app._forget), else their code would stay on the heap
    # through the package (the heap figures above would then be a few KB higher)
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "dropped.py"
    script.write_text(_DROPPED_SCRIPT)
    env = dict(os.environ, MICROPYPATH=os.pathsep.join(
        [os.path.join(root, "firmware"), os.path.join(root, "boardsim", "target")]))
    r = subprocess.run([MICROPYTHON, str(script)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "HELD []", r.stdout


def test_every_module_compiles_for_the_rp2040_within_the_size_budget():
    sizes = code_size()                 # SystemExit names a module mpy-cross refuses
    total = sum(b for _, b in sizes.values())
    big = sorted(((n, b) for n, (_, b) in sizes.items()), key=lambda kv: -kv[1])[:5]
    assert total <= MPY_TOTAL_MAX, f".mpy total {total} bytes: {big}"


@pytest.fixture(scope="module")
def host_mpy():
    # the firmware's .mpy for the unix port, built once for the boots below (and for the
    # measurements above when they ran in this process: memory.host_mpy())
    return memory.host_mpy()


@pytest.mark.parametrize("display,front_end", memory.configurations())
def test_the_firmware_boots_in_the_picos_heap(display, front_end, host_mpy):
    # 236 KB in one piece: what the stock RPI_PICO image leaves free at main.py, measured on the
    # emulated RP2040 (../shared/FACTS.md). The 64-bit port needs more than the Pico for the same
    # objects (8-byte pointers), so booting here in that heap is a bound on the device's; the chip
    # itself is measured by tests/test_rp2040.py. (Until the chip was measured this assumed 192 KB,
    # which the firmware outgrew with both displays.)
    ok, why = memory.boots_in_heap(display, front_end, fw=host_mpy)
    assert ok, f"display={display} front_end={front_end} does not boot in 236 KB of heap: {why}"
