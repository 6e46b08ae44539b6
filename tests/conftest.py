import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# The chip tier's runs in one warm emulator per test process (each xdist worker's): one node
# process, started at the first chip run, serves every chip run as a session that starts from a
# new process's state (boardsim/rp2040/chip.py WarmNode; docs/rp2040.md "The warm emulator").
# ZENN_PICO_WARM=0 gives each run a node process of its own, as before.
os.environ.setdefault("ZENN_PICO_WARM", "1")
# the two runtimes, their paths and the long-lived drivers: tests/support/runtimes.py
from runtimes import MICROPYTHON, RUNTIMES, Driver, driver_for, run_target  # noqa: E402,F401


# The order tests are dealt out to `make test`'s two workers (`-n 2 --dist loadgroup`): a long
# test dealt out last keeps one worker busy alone at the end. First the costliest tests and
# xdist groups (COSTLIEST: the start of a node id, or "@" and a group's name, with its CPU
# seconds in a whole run recorded by ZENN_TEST_CPU below), costliest first; then whole files,
# the longest first, each in its own order (their module fixtures stay shared); the rest in
# collection order. xdist deals out a group where its first test comes; its own reordering (by
# how many tests a group has) is turned off in pytest_configure, so that this order holds.
COSTLIEST = {
    # (CPU s at load 16 - 23: a run at 819a0ea, 2026-12-02, its first 124 tests, the costliest;
    # the chip tests as this branch left them; docs/performance.md "The chip tier's tests")
    # (the CPython twins of the whole-game physics tests as branch suite7 cut them, measured
    # at load 6 - 10: docs/performance.md "The CPython twins of the whole-game tests")
    "@rp2040_one_boot": 52,
    "test_shots_physics.py::test_the_trap_zenn_nudges_the_seed_41_bench_missed_are_seen[cpython": 15,
    "test_shots_physics.py::test_random_trap_games_are_never_sure_but_wrong[cpython-shift": 14,
    "test_presence.py::test_touching_pairs_and_rows_of_three[cpython]": 10,
    "test_shots_physics.py::test_the_presence_moves_the_seed_41_bench_missed_are_seen_and_judged_right[micropython": 28,
    "test_shots_physics.py::test_the_presence_moves_the_seed_41_bench_missed_are_seen_and_judged_right[cpython": 20,
    "test_games_bowling.py::test_six_players_take_frames_in_turn": 12,
    "test_shots_physics.py::test_random_flicks_are_seen_once_and_never_sure_but_wrong[cpython-shift": 12,
    "test_faults.py::test_presence_game_with_faults_and_a_hovering_hand": 12,
    "test_rp2040_shift.py::test_the_presence_loop_allocates_nothing": 35,
    "test_shots_physics.py::test_random_trap_games_are_never_sure_but_wrong[cpython-hall": 11,
    "test_rp2040.py::test_the_loop_allocates_nothing_on_the_chip_while_a_shot_is_played": 25,
    "test_rp2040_fit.py::test_the_viper_fit_gives_the_plain_fits_numbers_on_the_chip": 17,
    "test_off_or_lifted.py::test_presence_lifts_at_every_phase_of_the_scan_are_no_shot[side": 24,
    "test_shots_physics.py::test_random_flicks_are_seen_once_and_never_sure_but_wrong[cpython-hall": 6,
    "@test_play.py::server": 18,
    "test_shots_physics.py::test_random_trap_games_are_never_sure_but_wrong[micropython-shift": 17,
    "test_off_or_lifted.py::test_presence_lifts_at_every_phase_of_the_scan_are_no_shot[ends": 16,
    "@test_budgets.py::mem=shift": 15,
    "test_rp2040_shift.py::test_the_register_scan_reads_what_the_pin_and_spi_calls_read": 10,
    "test_rp2040.py::test_the_register_scan_reads_what_the_pin_calls_read_on_the_chip": 10,
    "@test_budgets.py::mem=hall": 13,
    "test_rp2040.py::test_heap_free_after_boot_on_the_chip[presence": 13,
    "test_shots_physics.py::test_random_flicks_are_seen_once_and_never_sure_but_wrong[micropython-shift": 12,
    "test_shots_physics.py::test_random_trap_games_are_never_sure_but_wrong[micropython-hall": 10,
    "test_power_cuts.py::test_power_cuts_through_a_bowling_game": 8,
    "test_rp2040.py::test_the_table_decoder_steps_as_rp2040js_own_does": 8,
    "test_rp2040.py::test_an_allocation_in_the_locked_loop_stops_the_run_on_the_chip": 7,
    "test_compile.py::test_random_shots_touch_nothing_unintended": 6,
    "test_shots_physics.py::test_random_flicks_are_seen_once_and_never_sure_but_wrong[micropython-hall": 6,
    "test_firmware_tools.py::test_ram_after_boot_counts_the_firmware_only": 5,
    # (chip tests missing above, dealt out late by their files' place before: seconds in the
    # quiet clean-clone run at 6926dfd, its --durations; each alone on one worker at the end)
    "test_rp2040_presence.py::test_a_strike_on_the_presence_pads": 35,
    "test_unreadable.py::test_presence_pads_under_a_cloth_are_reported_unreadable_until_uncovered[rp2040]": 35,
    "test_unreadable.py::test_hall_pads_out_of_calibration_are_reported_unreadable_until_calibrated[rp2040]": 34,
    "test_rp2040_presence.py::test_moves_and_flood_match_their_references_on_the_chip": 31,
}
# The chip tests cut by branch suitefast (issue 15): their new costs, in the same terms (the quiet
# clean-clone run at 065e201 scaled by each test's chip time before / after, docs/performance.md
# "The chip tier's scenarios cut")
COSTLIEST.update({
    "@rp2040_one_boot": 67,
    "test_rp2040.py::test_the_loop_allocates_nothing_on_the_chip_while_a_shot_is_played": 23,
    "test_rp2040_shift.py::test_the_presence_loop_allocates_nothing": 23,
    "test_rp2040_presence.py::test_a_strike_on_the_presence_pads": 23,
    "test_unreadable.py::test_presence_pads_under_a_cloth_are_reported_unreadable_until_uncovered[rp2040]": 29,
    "test_unreadable.py::test_hall_pads_out_of_calibration_are_reported_unreadable_until_calibrated[rp2040]": 27,
    "test_rp2040_presence.py::test_moves_and_flood_match_their_references_on_the_chip": 20,
    "test_rp2040.py::test_an_allocation_in_the_locked_loop_stops_the_run_on_the_chip": 4,
})
# The tests of test_shots_physics.py that share their Trap Zenn games' runs, each group on one
# worker (its random trap games, 17 + 14 + 11 + 10 above, and the tests of their explicit
# examples; the touching nudges and the nudge tests' shift runs), dealt out as early as the
# costliest of them (issue 15, branch suitefast2)
COSTLIEST.update({
    "@shots_physics_trap_runs": 52,
    "@shots_physics_nudge_runs": 9,
})
LONGEST_FIRST = ("test_rp2040.py", "test_shots_physics.py", "test_budgets.py", "test_off_or_lifted.py",
                 "test_faults.py", "test_presence.py", "test_power_cuts.py", "test_firmware_tools.py",
                 "test_compile.py", "test_games_bowling.py", "test_games_trap.py", "test_registry.py",
                 "test_presence_fit.py", "test_sensing.py", "test_fault_pass.py", "test_render.py")


def dealing_order(item):
    nodeid = item.nodeid.split("tests/", 1)[-1]
    groups = ["@" + str(m.args[0] if m.args else m.kwargs.get("name", "default"))
              for m in item.iter_markers("xdist_group")]
    cost = max([COSTLIEST.get(g, 0) for g in groups]
               + [c for start, c in COSTLIEST.items() if nodeid.startswith(start)] + [0])
    if cost:
        return (0, -cost)
    name = os.path.basename(str(item.path))
    return (1, LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST))


# (trylast: after xdist's own hook, which names each test's group, below)
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    items.sort(key=dealing_order)
    name_xdist_groups(config, items)


def pytest_configure(config):
    # (xdist registers the mark; run without it, -p no:xdist, the mark is known all the same)
    config.addinivalue_line("markers", "xdist_group(name): run with the group's other tests on one worker")
    # xdist's loadgroup deals out its work units (a group, or a test alone) in the order the
    # tests were collected, but first reorders them by how many tests each holds (groups first,
    # whatever they cost): dealing_order above decides instead (as --no-loadscope-reorder)
    if getattr(config.option, "loadscopereorder", None):
        config.option.loadscopereorder = False


# A module fixture is set up once per worker that runs one of its tests: under `-n 2` both
# workers would each build what a test module declares costly in ONE_WORKER (a tuple of its
# fixture names: the memory measurements of test_budgets.py, a browser ...), so the tests that
# take one run as one xdist group on one worker (`--dist loadgroup`), each value of a
# parametrised fixture a group of its own (both can still go to different workers). (Marked as
# each test is collected: xdist reads the groups in its own pytest_collection_modifyitems.)
def pytest_itemcollected(item):
    group = one_worker_group(item)
    if group:
        item.add_marker(pytest.mark.xdist_group(group))


def name_xdist_groups(config, items):
    """`--dist loadgroup` deals a test out with its group when its node id ends in "@group".
    pytest-xdist 3.8 writes that suffix into the node's old `_nodeid`, which pytest 9.2 no longer
    reads (pytest-dev/pytest-xdist#1386): every test was dealt out alone, and a group's shared
    set-up (one chip boot, one memory measurement) was made on both workers. Where xdist's
    suffix did not take, the node id is given it here, as xdist's fix (#1388) does."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                 for m in item.iter_markers("xdist_group")}
        nodeid = item.nodeid
        if names and nodeid.rfind("@") <= nodeid.rfind("]"):
            from _pytest.nodeid import NodeId      # (pytest >= 9.2, where xdist's suffix is lost)
            item._id = NodeId.parse(f"{nodeid}@{'_'.join(sorted(names))}")


def one_worker_group(item):
    """The xdist group of a test that takes one of its module's ONE_WORKER fixtures, or None."""
    shared = getattr(getattr(item, "module", None), "ONE_WORKER", ())
    names = [n for n in getattr(item, "fixturenames", ()) if n in shared]
    if not names:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    # (no "]" in a group name: xdist finds the group after the last "@" behind the last "]")
    parts = [n + (f"={params[n]}" if n in params else "") for n in sorted(names)]
    return os.path.basename(str(item.path)) + "::" + "+".join(parts)


@pytest.fixture(scope="module", params=RUNTIMES)
def drv(request):
    """The test module's driver (its DRIVER: a script in tests/support) in one process per
    runtime, shared by the module's tests: every test that takes it runs under the MicroPython
    unix port and under CPython."""
    d = driver_for(request.param, request.module.DRIVER)
    yield d
    d.close()


def run_script(source, name, runtime, job, tmp_path, timeout=300):
    """Run a target-side script (its source) once under `runtime` ("micropython", with a big
    heap, or "cpython") with the firmware and the simulator's target modules on its path, the
    JSON job on stdin; its last stdout line, parsed. Skips without a MicroPython in .venv."""
    return run_target(source, runtime, job, name=name, tmp_path=tmp_path, timeout=timeout)[0]


@pytest.fixture(params=RUNTIMES)
def runtime(request):
    """Each test that takes it runs under the MicroPython unix port and under CPython."""
    return request.param


# Each test's CPU, for docs/performance.md's figures: ZENN_TEST_CPU=FILE appends one JSON line
# per test (its node id, the worker, CPU seconds of this process and of the children it waited
# for during the test, wall seconds). A module fixture's processes count where they are ended.
CPU_RECORD = os.environ.get("ZENN_TEST_CPU")


if CPU_RECORD:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        import json
        import resource
        import time

        from boardsim.rp2040 import chip

        def cpu():
            s = resource.getrusage(resource.RUSAGE_SELF)
            c = resource.getrusage(resource.RUSAGE_CHILDREN)
            return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime + chip.warm_cpu_s(), chip.warm_cpu_s()
        s0, c0, n0 = cpu()
        w0 = time.monotonic()
        yield
        s1, c1, n1 = cpu()
        # (children: the warm emulator's CPU during the test too, read from /proc as it runs, at
        # the clock tick's 10 ms; "warm": that part alone)
        line = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "self": round(s1 - s0, 3), "children": round(c1 - c0, 3), "warm": round(n1 - n0, 3),
                "wall": round(time.monotonic() - w0, 3)}
        with open(CPU_RECORD, "a") as f:
            f.write(json.dumps(line) + "\n")
