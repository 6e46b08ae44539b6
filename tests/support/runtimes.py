"""The two runtimes the tests run target-side code under, in one place (host side: pytest
imports it; tests/conftest.py gives its fixtures): the MicroPython unix port, with the firmware,
the simulator's target side and tests/support imported from their .mpy builds
(boardsim/mpycache.py: nothing compiled at each start), and CPython.

    env_for(runtime, dirs)            the environment that puts dirs on the module path
    argv_for(runtime, script, heap)   the command that runs a script
    run_target(source, runtime, ...)  a script run once: a JSON job on stdin, its result line
    Driver(runtime, script)           a tests/support driver in a long-lived process: one JSON
                                      case per line in, one JSON result per line out
    cases_fixture(source, label)      the module fixture `results` of a one-shot case script
                                      (driver.run_cases), run once per runtime; case_result
    on_both_runtimes(script, f)       f(driver) under each runtime, to compare their numbers
    assert_heap_lock_is_real(driver)  the driver's alloc op fails under MicroPython only
    mpy_cross_armv6m(name, out_dir)   a firmware file compiled for the Pico
"""
import json
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from boardsim import mpycache  # noqa: E402
from boardsim.runtime import PYC_CACHE, micropython_argv, micropython_path  # noqa: E402

# (the venv's, or ZENN_MICROPYTHON's: boardsim/runtime.py micropython_path)
MICROPYTHON = micropython_path()
PYTHON = sys.executable
RUNTIMES = ["micropython", "cpython"]
# the firmware, the simulator's target side (the `machine` stand-in, the pad models; under
# CPython also the `micropython` stand-in: MicroPython's built-in module always wins) and
# tests/support (the drivers and driver.py)
TARGET_DIRS = ("firmware", "boardsim/target", "tests/support")
SUPPORT_FIRST = ("tests/support", "firmware", "boardsim/target")
HEAP = "4000000"


def env_for(runtime, dirs=TARGET_DIRS):
    """os.environ with `dirs` (relative to the repository) on the runtime's module path."""
    env = dict(os.environ)
    full = [os.path.join(ROOT, d) for d in dirs]
    if runtime == "micropython":
        env["MICROPYPATH"] = mpycache.micropypath(full)
    else:
        env["PYTHONPATH"] = os.pathsep.join(full)
        # the bytecode of what it imports cached in build/host-pyc as the runner's is
        # (boardsim/runtime.py): with PYTHONDONTWRITEBYTECODE (as on these machines and in CI)
        # every driver and one-shot script compiled the firmware it imports at every start
        env["PYTHONPYCACHEPREFIX"] = PYC_CACHE
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def argv_for(runtime, script, heapsize=HEAP, unbuffered=False):
    """The command that runs `script` under `runtime` (MicroPython with -X heapsize when given).
    Skips the test when the unix port is not installed."""
    if runtime == "micropython":
        if not os.path.exists(MICROPYTHON):
            pytest.skip("no MicroPython unix port in .venv")
        return (micropython_argv(MICROPYTHON) + (["-X", f"heapsize={heapsize}"] if heapsize else [])
                + [str(script)])
    return [PYTHON] + (["-u"] if unbuffered else []) + [str(script)]


def run_target(source, runtime, job=None, name="target.py", tmp_path=None, heapsize=HEAP,
               dirs=TARGET_DIRS, timeout=300, marker=None, cwd=ROOT, returncodes=(0,)):
    """Run a target-side script once (its source, written to tmp_path/name; or the path of a
    tests/support script when source is None and name is that path) under `runtime`, the JSON
    `job` (when given) on stdin. Returns (its result, the finished process): the result is the
    JSON of the last stdout line, or of the line after `marker` ("RESULT ") when given."""
    if source is not None:
        d = tmp_path if tmp_path is not None else tempfile.mkdtemp(prefix="zenn-target-")
        script = os.path.join(str(d), name)
        with open(script, "w") as f:
            f.write(source)
    else:
        script = name
    p = subprocess.run(argv_for(runtime, script, heapsize),
                       input=None if job is None else json.dumps(job) + "\n",
                       capture_output=True, text=True, env=env_for(runtime, dirs), cwd=cwd,
                       timeout=timeout)
    assert p.returncode in returncodes, p.stdout[-2000:] + p.stderr[-2000:]
    lines = p.stdout.splitlines()
    if marker is not None:
        line = next((ln for ln in reversed(lines) if ln.startswith(marker)), None)
        assert line is not None, f"no {marker!r} line: " + p.stdout[-2000:] + p.stderr[-2000:]
        return json.loads(line[len(marker):]), p
    return json.loads(p.stdout.strip().splitlines()[-1]), p


class Driver:
    """A test driver (a tests/support script on driver.serve) in a long-lived process under one
    runtime: one JSON case per line in, one JSON result per line out. Started at the first case,
    and again after it died."""

    def __init__(self, runtime, script, heapsize=HEAP, dirs=SUPPORT_FIRST):
        self.name = self.runtime = runtime
        self.script = script if os.path.isabs(script) else os.path.join(ROOT, "tests", "support", script)
        self.heapsize = heapsize
        self.dirs = dirs
        self.p = None
        self.err = None

    def _start(self):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv_for(self.name, self.script, self.heapsize, unbuffered=True),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                  env=env_for(self.name, self.dirs), text=True, cwd=ROOT)

    def run_many(self, cases, expect_error=False):
        """Cases one after the other (each answer is read before the next case is written:
        both pipes' buffers are finite). Results with "error" fail unless expect_error."""
        outs = []
        for case in cases:
            if self.p is None or self.p.poll() is not None:
                self._start()
            self.p.stdin.write(json.dumps(case) + "\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
            while line and not line.startswith("{"):
                line = self.p.stdout.readline()     # (not ours: a garbage collector's message)
            if not line:
                self.p.wait(timeout=10)
                self.err.seek(0)
                err = self.err.read().decode("utf-8", "replace")
                self.p = None
                raise AssertionError("%s driver died: %s" % (self.name, err[-2000:]))
            out = json.loads(line)
            if not expect_error:
                assert "error" not in out, "%s: %s" % (self.name, out["error"])
            outs.append(out)
        return outs

    def run(self, ops, expect_error=False, log_size=None):
        """One case of ops (the rules and journal drivers)."""
        case = {"ops": ops}
        if log_size:
            case["log_size"] = log_size
        return self.run_many([case], expect_error)[0]

    def __call__(self, **case):
        """One case given as keywords (the sensing drivers)."""
        return self.run_many([case])[0]

    def close(self):
        if self.p is not None:
            self.p.stdin.close()
            self.p.wait(timeout=10)
            self.p = None
        if self.err is not None:
            self.err.close()
            self.err = None


def driver_for(runtime, script, **kw):
    if runtime == "micropython" and not os.path.exists(MICROPYTHON):
        pytest.fail("no MicroPython unix port at %s" % MICROPYTHON)
    return Driver(runtime, script, **kw)


def cases_fixture(source, label, dirs=TARGET_DIRS, heapsize="4M", timeout=120):
    """The module-scoped two-runtime fixture `results` of a one-shot case script (`source`,
    ending in driver.run_cases): the script run once per runtime, every case in that one
    process; the fixture's value is the printed object, case name -> result. Assign it to
    `results` in the test module."""
    @pytest.fixture(scope="module", params=RUNTIMES)
    def results(request, tmp_path_factory):
        return run_target(source, request.param, name="cases.py",
                          tmp_path=tmp_path_factory.mktemp(label), heapsize=heapsize, dirs=dirs,
                          timeout=timeout)[0]
    return results


def case_result(results, name):
    """One case's result from a cases_fixture; a case that raised fails the test with its error."""
    r = results[name]
    assert not (isinstance(r, dict) and "error" in r), r
    return r


def mpy_cross_armv6m(name, out_dir):
    """mpy-cross -march=armv6m (the Pico's) on firmware/<name>: the finished process (returncode,
    stderr)."""
    exe = mpycache.mpy_cross() or os.path.join(ROOT, ".venv", "bin", "mpy-cross")
    return subprocess.run([exe, "-march=armv6m", os.path.join(ROOT, "firmware", name), "-o",
                           os.path.join(str(out_dir), "x.mpy")], capture_output=True, text=True)


def on_both_runtimes(script, f):
    """f(driver) with the tests/support driver `script` in a process of its own under each
    runtime: {runtime: what f returned}, to show both runtimes give the same numbers."""
    out = {}
    for rt in RUNTIMES:
        d = driver_for(rt, script)
        try:
            out[rt] = f(d)
        finally:
            d.close()
    return out


def assert_heap_lock_is_real(driver):
    """A rules or journal driver's op {"op": "alloc"} (a list made with the heap locked) fails
    with MemoryError under MicroPython and passes under CPython (whose lock is a stand-in)."""
    out = driver.run([{"op": "alloc"}], expect_error=True)
    if driver.name == "micropython":
        assert "MemoryError" in out.get("error", ""), out
    else:
        assert "error" not in out, out


# The whole-game physics tests (tests/test_shots_physics.py, tests/test_presence.py's nudges)
# play every case under the MicroPython unix port, the firmware as it ships; under CPython, which
# runs the viper functions' plain fallbacks (checked against them directly by the viper-reference
# tests) about ten times slower, they play fewer: the explicit and recorded-failure cases a test
# names for it, then its first `generated` drawn cases. Each test says in its docstring what
# CPython plays (docs/performance.md, "The CPython twins of the whole-game tests"). (On the
# presence pads presence_locate.moves() and shift_scan.unpack() run as their CPython twins,
# boardsim/target/viper_twins.py: the same results, cheaper; ZENN_PLAIN_VIPER=1 runs the bodies.)
_GENERATED_PLAYED = {}


def cpython_plays(runtime, case, key, explicit=(), generated=0):
    """Whether this case of a test runs under `runtime`: always under MicroPython; under CPython
    when `case` is one of `explicit` (compared by ==), or among the first `generated` other cases
    the test (`key`: its name and parameters) met in this process."""
    if runtime != "cpython" or any(case == e for e in explicit):
        return True
    n = _GENERATED_PLAYED.get(key, 0)
    _GENERATED_PLAYED[key] = n + 1
    return n < generated
