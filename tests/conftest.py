import json
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
RUNTIMES = ["micropython", "cpython"]
# the drivers' path: tests/support (the drivers and driver.py), the firmware, and the
# simulator's target side (the `machine` stand-in, the pad models; under CPython also the
# `micropython` stand-in: MicroPython's built-in module always wins)
DRIVER_PATH = os.pathsep.join(os.path.join(ROOT, d) for d in ("tests/support", "firmware", "boardsim/target"))


class Driver:
    """A test driver (a tests/support script on driver.serve) in a long-lived process under one
    runtime: one JSON case per line in, one JSON result per line out. Started at the first case,
    and again after it died."""

    def __init__(self, runtime, script):
        self.name = self.runtime = runtime
        self.script = os.path.join(ROOT, "tests", "support", script)
        self.p = None
        self.err = None

    def _start(self):
        env = dict(os.environ)
        if self.name == "micropython":
            cmd = [MICROPYTHON, "-X", "heapsize=4000000", self.script]
            env["MICROPYPATH"] = DRIVER_PATH
        else:
            cmd = [sys.executable, "-u", self.script]
            env["PYTHONPATH"] = DRIVER_PATH
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=env, text=True, cwd=ROOT)

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
        """One case of ops (the rules drivers)."""
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


def driver_for(runtime, script):
    if runtime == "micropython" and not os.path.exists(MICROPYTHON):
        pytest.fail("no MicroPython unix port at %s" % MICROPYTHON)
    return Driver(runtime, script)


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
    script = tmp_path / name
    script.write_text(source)
    env = dict(os.environ)
    path = os.pathsep.join(os.path.join(ROOT, d) for d in ("firmware", os.path.join("boardsim", "target"),
                                                           os.path.join("tests", "support")))
    if runtime == "micropython":
        if not os.path.exists(MICROPYTHON):
            pytest.skip("no MicroPython unix port in .venv")
        cmd = [MICROPYTHON, "-X", "heapsize=4000000", str(script)]
        env["MICROPYPATH"] = path
    else:
        cmd = [sys.executable, str(script)]
        env["PYTHONPATH"] = path
    p = subprocess.run(cmd, input=json.dumps(job) + "\n", capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=timeout)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])
