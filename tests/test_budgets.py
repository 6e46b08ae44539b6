"""The firmware's deterministic budgets (docs/performance.md): nothing allocated in the loop
after boot, the heap it holds after boot and the RAM its code takes (MicroPython unix port,
64-bit, firmware imported from .mpy as on the Pico), and its size as .mpy for the RP2040.

The figures come from the benches (bench/memory.py); wall-clock time is never asserted here.
A bound is the figure measured when it was set plus some room. A change that crosses one
either allocates in the loop (fix it: the loop must not allocate) or makes the firmware bigger
(if that is worth it, raise the bound here and the figure in docs/performance.md, saying why).
"""
import os

import pytest

from bench import memory

MICROPYTHON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           ".venv", "bin", "micropython")
pytestmark = pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no MicroPython unix port")

# bytes on the 64-bit unix port (an upper bound of the Pico's: its pointers take 4 bytes)
FIRMWARE_HEAP_MAX = 220_000     # held after boot, code and objects (measured 201 KB, 2026-11)
CODE_RAM_MAX = 172_000          # the modules, once imported (measured 157 KB)
BOOT_OBJECTS_MAX = 48_000       # what boot() keeps besides the code (measured 44 KB)
MPY_TOTAL_MAX = 100_000         # every firmware module as .mpy for armv6m (measured 88 KB)


def quick_timelines():
    """Every kind of loop turn once: menus, a placing, a strike into the cup, a ball at rest,
    a spare, undo, a trap set-up check, a knock and the turn button."""
    from bench._target import timeline
    from boardsim.testing import Table
    b = Table("bowling", players=2)
    b.place("small", "a.pocket").shoot("small", "b.pocket", "b.cup").take("small")
    b.place("small", "a.pocket").shoot("small", "b.e2").shoot("small", "b.pocket", "b.cup")
    b.press("undo").advance_time_and_run(200)
    t = Table("trap1", players=2, trapper=1)
    t.place_all({"big1": "a.zline", "big2": "a.zline", "big3": "a.zline", "small": "center"})
    t.shoot("big2", "a.e2", knocks={"small": ["b.back4"]}).press("turn")
    return {"bowling": timeline(b.scenario()), "trap": timeline(t.scenario())}


@pytest.fixture(scope="module")
def mem():
    # every display at once: the most code and the most objects
    choices = memory.display_choices()
    display = "both" if "both" in choices else choices[-1]
    return memory.measure(display, tls=quick_timelines(), locked=False)


def test_the_loop_allocates_nothing_after_boot(mem):
    assert mem["iterations"] > 100, mem["steps"]
    assert mem["alloc_total"] == 0, (
        f"step() kept {mem['alloc_total']} bytes over {mem['iterations']} loop iterations "
        f"({mem['alloc_steps']} steps): {mem['alloc']}")


def test_the_heap_after_boot_stays_within_its_budget(mem):
    assert mem["firmware"] <= FIRMWARE_HEAP_MAX, (
        f"the firmware holds {mem['firmware']} bytes after boot (code {mem['code']}, "
        f"objects {mem['boot']}), over {FIRMWARE_HEAP_MAX}")
    assert mem["boot"] <= BOOT_OBJECTS_MAX, f"boot() keeps {mem['boot']} bytes of objects"


def test_the_code_ram_stays_within_its_budget(mem):
    big = sorted(mem["modules"].items(), key=lambda kv: -kv[1])[:5]
    assert mem["code"] <= CODE_RAM_MAX, f"the modules take {mem['code']} bytes once imported: {big}"


def test_every_module_compiles_for_the_rp2040_within_the_size_budget():
    sizes = memory.code_size()          # SystemExit names a module mpy-cross refuses
    total = sum(b for _, b in sizes.values())
    big = sorted(((n, b) for n, (_, b) in sizes.items()), key=lambda kv: -kv[1])[:5]
    assert total <= MPY_TOTAL_MAX, f".mpy total {total} bytes: {big}"
