import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# the two runtimes, their paths and the long-lived drivers: tests/support/runtimes.py
from runtimes import MICROPYTHON, RUNTIMES, Driver, driver_for, run_target  # noqa: E402,F401


# The test files that take longest (pytest --durations on 2 cores: the emulated chip's boots,
# the random flicks under both runtimes, the key screens ...), run first: `make test` runs on
# two workers, and a long test dealt out last keeps one of them busy alone at the end. The
# order of the tests within a file is kept (their module fixtures stay shared).
LONGEST_FIRST = ("test_rp2040.py", "test_shots_physics.py", "test_games_bowling.py",
                 "test_screens.py", "test_off_or_lifted.py", "test_typecheck.py", "test_wiring.py",
                 "test_presence.py", "test_faults.py", "test_power_cuts.py", "test_budgets.py",
                 "test_sensing.py", "test_rules_bowling.py", "test_rules_trap.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))


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
