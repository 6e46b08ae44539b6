"""The host's side of the runner's live modes (boardsim/target/live.py): a firmware kept running
for the play page (Target), and a scenario recorded as state lines for a replay (record).

    t = Target("micropython")
    st = t.send({"op": "boot"})           # one state line back per op (dict)
    st = t.send({"op": "press", "button": "ok"})
    t.events                              # the firmware's event lines so far (dicts)
    t.close()

    frames, events = record(timeline, "micropython", every_ms=50)
"""
import collections
import json
import os
import shutil
import subprocess
import tempfile
import threading

from boardsim import runtime
from boardsim.geometry import ROOT

LIVE = os.path.join(ROOT, "boardsim", "target", "live.py")
# A live target runs for as long as people play: MicroPython gets a heap with room to spare
# however fragmented a long session (state lines, many games and power cuts) leaves it.
HEAPSIZE = "8M"


class TargetFailure(RuntimeError):
    pass


def _command(rt, args, flash_dir):
    """(argv, env) for live.py, run as runtime.run runs runner.py: in a fresh flash directory."""
    argv, env = runtime.command(rt, "-", heapsize=HEAPSIZE if rt == "micropython" else None)
    i = argv.index(runtime.RUNNER)
    env["BOARDSIM_FLASH"] = flash_dir
    return argv[:i] + [LIVE] + list(args), env


class Target:
    """The firmware running on the simulated table, one op at a time (interactive mode)."""

    def __init__(self, rt="micropython"):
        self.runtime = rt
        self.flash_dir = tempfile.mkdtemp(prefix="boardsim-flash-")
        r, w = os.pipe()
        argv, env = _command(rt, ["--side-fd", str(w)], self.flash_dir)
        try:
            self.proc = subprocess.Popen(argv, env=env, cwd=self.flash_dir, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         pass_fds=(w,))
        except OSError as e:
            os.close(r)
            os.close(w)
            shutil.rmtree(self.flash_dir, ignore_errors=True)
            raise TargetFailure(f"cannot start {argv[0]}: {e.strerror or e}") from None
        os.close(w)
        self.side = os.fdopen(r, "r", encoding="utf-8")
        self.events = []
        self.tail = collections.deque(maxlen=20)
        self.lock = threading.Lock()
        self._threads = [threading.Thread(target=self._pump_out, daemon=True),
                         threading.Thread(target=self._pump_err, daemon=True)]
        for t in self._threads:
            t.start()

    def _pump_out(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith("{"):
                try:
                    self.events.append(json.loads(line))
                    continue
                except ValueError:
                    pass
            if line:
                self.tail.append(line)

    def _pump_err(self):
        for raw in self.proc.stderr:
            self.tail.append(raw.decode("utf-8", "replace").rstrip())

    def send(self, op):
        """Play one op; returns the state line after it."""
        with self.lock:
            try:
                self.proc.stdin.write((json.dumps(op, separators=(",", ":")) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                raise TargetFailure(self._why()) from None
            line = self.side.readline()
            if not line:
                raise TargetFailure(self._why())
            return json.loads(line)

    def _why(self):
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        why = next((ln for ln in reversed(self.tail) if ln.strip()), "")
        return f"the {self.runtime} target stopped" + (f": {why.strip()}" if why else "")

    def wait_events(self, n, timeout=2.0):
        """Event lines arrive on their own pipe: wait until at least n are in."""
        import time
        end = time.monotonic() + timeout
        while len(self.events) < n and time.monotonic() < end:
            time.sleep(0.005)
        return self.events[:n]

    def close(self):
        with self.lock:
            try:
                self.proc.stdin.write(b'{"op":"quit"}\n')
                self.proc.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.side.close()
            shutil.rmtree(self.flash_dir, ignore_errors=True)


def record(timeline, rt="micropython", every_ms=50):
    """Play a timeline (as `boardsim run` does) and sample it: (state lines, event lines)."""
    fd, path = tempfile.mkstemp(prefix="boardsim-", suffix=".jsonl")
    flash_dir = tempfile.mkdtemp(prefix="boardsim-flash-")
    r, w = os.pipe()
    try:
        with os.fdopen(fd, "w") as f:
            runtime.write_timeline(timeline, f)
        argv, env = _command(rt, [path, "--side-fd", str(w), "--every", str(int(every_ms))], flash_dir)
        proc = subprocess.Popen(argv, env=env, cwd=flash_dir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,))
        os.close(w)
        w = None
        out = []
        err = []
        threads = [threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True),
                   threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]
        for t in threads:
            t.start()
        frames = []
        with os.fdopen(r, "r", encoding="utf-8") as side:
            r = None
            for line in side:
                frames.append(json.loads(line))
        status = proc.wait()
        for t in threads:
            t.join()
        events = []
        lines = out[0].decode("utf-8", "replace").splitlines() if out else []
        for ln in lines:
            if ln.lstrip().startswith("{"):
                try:
                    events.append(json.loads(ln))
                except ValueError:
                    pass
        if status != 0:
            tail = (err[0].decode("utf-8", "replace") if err else "").strip().splitlines()
            tail += [ln for ln in lines if not ln.lstrip().startswith("{")]
            raise runtime.RuntimeFailure(f"{rt} recording failed (exit status {status})"
                                         + (f": {tail[-1].strip()}" if tail else ""),
                                         status if status > 0 else 1)
        return frames, events
    finally:
        for x in (r, w):
            if x is not None:
                os.close(x)
        os.unlink(path)
        shutil.rmtree(flash_dir, ignore_errors=True)
