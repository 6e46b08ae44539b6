import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# pytest rewrites the asserts of every test module it imports (and of its plugins' packages,
# hypothesis's); with PYTHONDONTWRITEBYTECODE (as on these machines and in CI) it kept none of it
# and each test process did it all again at every run, some 2 - 3 s of CPU. Kept, with this
# process's own bytecode, in build/host-pyc, where the runtimes' is (boardsim/runtime.py PYC_CACHE;
# a source newer than its entry is compiled again). A clean clone's first run still does it all.
# (Under make, every process already has it: the Makefile exports PYTHONPYCACHEPREFIX.)
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    sys.pycache_prefix = sys.pycache_prefix or os.path.join(ROOT, "build", "host-pyc")
# The chip tier's runs in one warm emulator per test process (each xdist worker's): one node
# process, started at the first chip run, serves every chip run as a session that starts from a
# new process's state (boardsim/rp2040/chip.py WarmNode; docs/rp2040.md "The warm emulator").
# ZENN_PICO_WARM=0 gives each run a node process of its own, as before.
os.environ.setdefault("ZENN_PICO_WARM", "1")


# ZENN_TEST_SCHED (off by default): the tests' processes and all they start (the workers, the
# unix port's and CPython's games, the emulator's node) under SCHED_BATCH, with a longer scheduler
# slice than EEVDF's 1.4 ms on 2 cores: with four workers and their children on 2 cores, fewer
# switches between them and fewer refills of each core's 1 MB L2. Four emulators at once on 2
# cores: 54.0/60.6/67.1 -> 44.1/56.9/53.4 ns of CPU an instruction with `batch:20`, SCHED_BATCH
# alone no better (docs/performance.md "Scheduling and V8's threads"). On the suite, with node's
# --single-threaded, -3 and -9 % of its CPU (two of two), but alone not shown past the shared
# machine's load: hence not the default until a quiet machine's clean-clone runs show it.
def _test_sched():
    """ZENN_TEST_SCHED: "batch[:SLICE_MS]" puts this process (and what it starts) under
    SCHED_BATCH, with a scheduler slice of SLICE_MS (sched_setattr, Linux >= 6.12's EEVDF)."""
    spec = os.environ.get("ZENN_TEST_SCHED", "")
    if not spec or spec == "0" or not hasattr(os, "SCHED_BATCH"):
        return
    policy, _, slice_ms = spec.partition(":")
    pol = {"batch": os.SCHED_BATCH, "normal": os.SCHED_OTHER}[policy]
    if slice_ms:
        import ctypes

        class Attr(ctypes.Structure):
            _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32),
                        ("flags", ctypes.c_uint64), ("nice", ctypes.c_int32),
                        ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                        ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64)]
        a = Attr(size=ctypes.sizeof(Attr), policy=pol, nice=os.getpriority(os.PRIO_PROCESS, 0),
                 runtime=int(float(slice_ms) * 1e6))
        import platform
        nr = {"x86_64": 314, "aarch64": 274}.get(platform.machine())      # SYS_sched_setattr
        if nr and ctypes.CDLL(None, use_errno=True).syscall(nr, 0, ctypes.byref(a), 0) == 0:
            return
    try:
        os.sched_setscheduler(0, pol, os.sched_param(0))
    except OSError:
        pass


_test_sched()
# the two runtimes, their paths and the long-lived drivers: tests/support/runtimes.py
from runtimes import MICROPYTHON, RUNTIMES, Driver, driver_for, run_target  # noqa: E402,F401


# The order tests are dealt out to `make test`'s workers (`-n TEST_WORKERS --dist loadgroup`): a
# long test dealt out last keeps one worker busy alone at the end. First the costliest tests and
# xdist groups (COSTLIEST: the start of a node id, or "@" and a group's name, with its CPU seconds
# recorded by ZENN_TEST_CPU below), costliest first; then whole files, the longest first, each in
# its own order (their module fixtures stay shared); the rest in collection order. xdist deals out a
# group where its first test comes (a worker holds two units at most and takes the next as one ends:
# xdist/scheduler/loadscope.py), so with the costliest first the two workers end on short tests
# together; its own reordering (by how many tests a group has) is turned off in pytest_configure, so
# that this order holds.
#
# Every unit of 2 s and more (issue 15): CPU seconds (each test's process and the children it waited
# for, ZENN_TEST_CPU below) of session 23's merged main (desk23, chip23, play23) whole `make test`
# on a clean clone (-n 4 --dist loadgroup on 2 cores, 2026-12-04, machine otherwise quiet: four
# workers make each test's CPU dearer than two, the chip tier's most; the order is what counts),
# printed by
# `python -m bench.suite_dealing FILE --table`; a group's figure the sum of its tests'. Left out:
# tests whose figure was their module fixture's processes ended there (CPU over twice the wall).
# Tests added since (no figure) are dealt with their files. LONGEST_FIRST: the files of 5 s and
# more in that run.
COSTLIEST = {
    "test_rp2040_shift.py::test_a_touching_groups_held_fits_cut_and_resumed_allocate_nothing_on_the_chip": 14.6,
    "@rp2040_one_boot": 10.5,
    "@shots_physics_trap_runs": 10.0,
    "@test_play.py::server": 7.4,
    "test_rp2040_presence.py::test_a_strike_on_the_presence_pads_is_scored_with_its_searches_cut_on_the_chips_clock": 6.4,
    "test_rp2040_shift.py::test_the_presence_loop_allocates_nothing_on_the_chip_while_a_shot_is_played": 6.0,
    "test_rp2040_shift.py::test_a_still_search_cut_and_resumed_allocates_nothing_on_the_chip": 5.8,
    "test_rp2040.py::test_the_loop_allocates_nothing_on_the_chip_while_a_shot_is_played": 5.3,
    "test_unreadable.py::test_presence_pads_under_a_cloth_are_reported_unreadable_until_uncovered[rp2040]": 5.3,
    "@test_budgets.py::mem=shift": 5.1,
    "test_tracker_carry_viper.py::test_the_carry_in_viper_on_the_chip": 4.5,
    "test_unreadable.py::test_hall_pads_out_of_calibration_are_reported_unreadable_until_calibrated[rp2040]": 4.3,
    "@test_budgets.py::mem=hall": 4.2,
    "test_shots_physics.py::test_the_trap_zenn_nudges_the_seed_41_bench_missed_are_seen[micropython]": 3.7,
    "@shots_physics_nudge_runs": 3.7,
    "test_shots_physics.py::test_the_presence_moves_the_seed_41_bench_missed_are_seen_and_judged_right[micropython]": 3.4,
    "test_presence.py::test_no_intermediate_leaves_the_rp2040s_small_ints": 3.4,
    "test_rp2040.py::test_the_table_decoder_steps_as_rp2040js_own_does": 3.4,
    "@test_registry.py::toy_firmware": 3.3,
    "@presence_moves_runs": 3.3,
    "test_power_cuts.py::test_power_cuts_through_a_bowling_game": 3.2,
    "test_rp2040_shift.py::test_the_register_scan_reads_what_the_pin_and_spi_calls_read_on_the_chip": 3.1,
    "test_rp2040.py::test_the_register_scan_reads_what_the_pin_calls_read_on_the_chip": 3.1,
    "test_shots_physics.py::test_the_presence_moves_the_seed_41_bench_missed_are_seen_and_judged_right[cpython]": 3.0,
    "test_games_bowling.py::test_six_players_take_frames_in_turn": 2.9,
    "@settle_anchor_fit0": 2.8,
    "test_taken_from_beside_others.py::test_a_chip_taken_from_a_touching_group_at_every_phase_of_the_scan_is_no_shot[cpython-hall]": 2.6,
    "@fault_pass_runs": 2.5,
    "test_shots_physics.py::test_a_hand_by_the_end_seen_as_crowds_flags_no_pad_flickering[cpython]": 2.5,
    "test_flat_near_viper.py::test_near_d2_and_flat_pairs_on_the_chip": 2.5,
    "test_settle_anchor.py::test_the_last_moving_fit_lagging_past_the_tolerance_does_not_begin_the_stillness_again": 2.4,
    "test_rp2040_presence.py::test_moves_and_flood_match_their_references_on_the_chip[test_presence_moves-job0]": 2.4,
    "test_settle_anchor.py::test_the_last_moving_fit_missed_by_the_next_frame_does_not_begin_the_stillness_again[12]": 2.4,
    "@presence_still_budget_whole": 2.3,
    "test_rp2040_flash.py::test_no_save_on_the_chip_erases_or_takes_a_loop_turn_over_10_ms": 2.3,
    "test_rp2040.py::test_heap_free_after_boot_on_the_chip[presence, OLED]": 2.3,
    "@refresh_paced_cpython": 2.2,
    "test_off_or_lifted.py::test_presence_lifts_at_every_phase_of_the_scan_are_no_shot[side_corner_and_middle]": 2.2,
    "test_compile.py::test_random_shots_touch_nothing_unintended": 2.1,
    "test_shots_physics.py::test_the_trap_zenn_nudges_the_seed_41_bench_missed_are_seen[cpython]": 2.1,
    "test_shots_physics.py::test_random_flicks_are_seen_once_and_never_sure_but_wrong[micropython-shift]": 2.1,
    "test_rp2040_flash.py::test_every_game_start_on_the_chip_is_one_page_program_under_10_ms_and_its_preparation_in_turns_under_50_ms": 2.0,
}
LONGEST_FIRST = ("test_shots_physics.py", "test_rp2040_shift.py", "test_rp2040.py",
                 "test_presence.py", "test_budgets.py", "test_rp2040_presence.py",
                 "test_unreadable.py", "test_taken_from_beside_others.py", "test_fault_budget.py",
                 "test_presence_still_budget.py", "test_games_bowling.py", "test_settle_anchor.py",
                 "test_off_or_lifted.py", "test_play.py", "test_games_trap.py", "test_sensing.py",
                 "test_faults.py", "test_tracker_carry_viper.py", "test_compile.py",
                 "test_power_cuts.py")


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


# A clean clone's first run: each of make test's workers collects every test file, and with
# build/host-pyc empty each compiled the same bytecode at once (pytest's rewritten test modules,
# and, under the prefix set above, the project's and the venv's modules they import): a cold
# collection costs about 10 s of CPU, a warm one under 3 (docs/performance.md "A clean clone's
# first run"). The first worker to come collects alone, filling the cache; the others wait for
# it and then collect from the cache, together. Once a collection has filled the cache (the file
# holds a run's id: this run's or an earlier one's), every worker collects at once: a later run
# finds the cache warm (at most the files edited since compiled again, by each worker), and
# waiting on one worker's collection cost it one warm collection of wall time.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collection(session):
    run = getattr(session.config, "workerinput", {}).get("testrunuid")
    if not run or not sys.pycache_prefix:
        yield
        return
    import fcntl
    os.makedirs(sys.pycache_prefix, exist_ok=True)
    with open(os.path.join(sys.pycache_prefix, ".collected"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        if lock.read():                     # the cache was filled by a collection
            fcntl.flock(lock, fcntl.LOCK_UN)
            yield
            return
        try:
            yield
        finally:
            lock.truncate(0)
            lock.write(run)
            lock.flush()
            fcntl.flock(lock, fcntl.LOCK_UN)


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


_SCRIPT_RUNS = {}


def run_script_once(source, name, runtime, job, tmp_path, timeout=300):
    """run_script(), made once a test process for the same source, runtime and job, a copy of
    its result for each caller: a [micropython] test that compares its run with CPython's
    takes the [cpython] test's run (the two tests one xdist group, on one worker under
    `make test`), where each made it before (issue 15)."""
    import hashlib
    import json
    key = (hashlib.sha1(source.encode()).hexdigest(), runtime, json.dumps(job, sort_keys=True))
    if key not in _SCRIPT_RUNS:
        _SCRIPT_RUNS[key] = json.dumps(run_script(source, name, runtime, job, tmp_path, timeout))
    return json.loads(_SCRIPT_RUNS[key])


@pytest.fixture(params=RUNTIMES)
def runtime(request):
    """Each test that takes it runs under the MicroPython unix port and under CPython."""
    return request.param


# Each test's CPU, for docs/performance.md's figures: ZENN_TEST_CPU=FILE appends one JSON line
# per test (its node id, the worker, CPU seconds of this process and of the children it waited
# for during the test, the warm emulator's among them and apart, wall seconds, and when it
# began, Unix time: how the two workers' tests line up, and whether they end together). A module
# fixture's processes count where they are ended.
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
        t0 = time.time()
        yield
        s1, c1, n1 = cpu()
        # (children: the warm emulator's CPU during the test too, read from /proc as it runs, at
        # the clock tick's 10 ms; "warm": that part alone)
        line = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "self": round(s1 - s0, 3), "children": round(c1 - c0, 3), "warm": round(n1 - n0, 3),
                "wall": round(time.monotonic() - w0, 3), "start": round(t0, 3)}
        with open(CPU_RECORD, "a") as f:
            f.write(json.dumps(line) + "\n")
