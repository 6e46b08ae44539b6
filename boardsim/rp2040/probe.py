"""Questions put to the firmware on the emulated Pico through its USB console, as on a real one:
boot it on the simulated table, stop main.py with Ctrl-C (its objects stay in the REPL's
globals: `sb` is the Scoreboard), then type a line. What the line prints as a JSON object comes
back as an event line. Used by tests/test_rp2040.py, bench/rp2040.py and tools/build_image.py.

    heap_free(config)              gc.mem_free() after boot, the firmware still held
    run_module(name, source, ...)  a module written onto the flash, imported from the REPL
                                   (a JSON job on its stdin; its JSON lines come back)
    run_modules(jobs, ...)         several such modules one after the other in one boot (a
                                   boot costs the emulator more than most jobs)

A module that runs long must keep the watchdog the firmware started fed: `chip_prelude()` is
source to put first (it feeds it from a timer, and swaps in the simulator's `machine` stand-in
for scripts that bring their own fake table, as the tests' reference scripts do).
"""
import json
import os
import subprocess
import tempfile

from boardsim.geometry import ROOT
from boardsim.testing import run_timeline

BOOT_SETTLE_MS = 1500
# settle_ms=READY: no fixed wait after the boot event, only until the firmware's boot() has
# ended (its watchdog started, the last thing boot() does; pico_runner's await "ready"): what a
# module run in main.py's objects (sb.wdt among them) needs, tens of ms of chip time where a fixed
# wait was 500 (a chip ms costs about 8 ms of the host's CPU; issue 15)
READY = "ready"


def settle_ops(settle_ms):
    """The ops after the boot op: a wait of settle_ms, or (READY) until boot() has ended."""
    if settle_ms == READY:
        return [{"op": "await", "ready": True, "ms": 5000}]
    return [{"op": "wait", "ms": settle_ms}]


def _mpy(source, name, arch="armv6m"):
    """A module compiled for the chip (mpy-cross -march=armv6m), so that nothing is compiled on
    the Pico's heap."""
    from boardsim.mpycache import mpy_cross
    exe = mpy_cross() or "mpy-cross"
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, name + ".py")
        out = os.path.join(d, name + ".mpy")
        with open(src, "w") as f:
            f.write(source)
        r = subprocess.run([exe, f"-march={arch}", "-O1",
                            "-s", name + ".py", "-o", out, src], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"mpy-cross {name}: {r.stderr}")
        with open(out, "rb") as f:
            return f.read()


def write_op(name, data):
    return {"op": "flash", "write": name, "hex": data.hex()}


def repl(line):
    """Ops that stop main.py and type `line` at the REPL."""
    return [{"op": "serial", "line": "\x03", "raw": True}, {"op": "wait", "ms": 20},
            {"op": "serial", "line": line + "\r", "raw": True}]


HEAP_LINE = ("import gc;gc.collect();print('{\"ev\":\"heap\",\"free\":%d,\"alloc\":%d}'"
             "%(gc.mem_free(),gc.mem_alloc()))")


def heap_free(config=None, settle_ms=BOOT_SETTLE_MS):
    """gc.mem_free() and gc.mem_alloc() after the firmware booted and ran settle_ms (bytes)."""
    tl = [{"op": "boot"}, {"op": "wait", "ms": settle_ms}]
    tl += repl(HEAP_LINE)
    tl.append({"op": "await", "ev": "heap", "ms": 3000})
    r = run_timeline(tl, "rp2040", config=config)
    return r.last("heap")["free"]


PRELUDE = r'''
import sys
import gc
import machine as _real
import __main__
# the firmware's watchdog keeps running after Ctrl-C: feed it from a timer (a soft IRQ; the
# feed allocates nothing, so it runs under the tests' heap_lock too)
_wdt = _real.WDT(timeout=5000)
_tim = _real.Timer(period=500, callback=lambda t: _wdt.feed())
STANDIN = %r
if STANDIN:
    # the reference scripts bring their own table behind the simulator's `machine` stand-in:
    # drop the firmware main.py imported (frozen or .mpy: imported again, fresh, on demand)
    try:
        del __main__.sb
    except (AttributeError, NameError, KeyError):
        pass
    for _n in list(sys.modules):
        if _n not in ("__main__",):
            del sys.modules[_n]
    import simmachine
    sys.modules["machine"] = simmachine
    gc.collect()
'''


def run_module(source, job=None, config=None, standin=False, files=None, before=(), after=(), wait_ms=1000,
               settle_ms=BOOT_SETTLE_MS, await_ms=None, await_ev=None):
    """Boot the firmware, stop it, import `source` (compiled for armv6m, written onto the flash
    as zjob.mpy, after PRELUDE) with `job` as a JSON line on its stdin. `files`: more {name:
    bytes} for the flash; `before`: timeline ops played before main.py is stopped (the menu's
    presses that start a game); `after`: timeline ops played after the import (the table moving while
    the module runs); `wait_ms` of chip time then. Returns the run's Result (events: the JSON
    lines the module printed, besides the firmware's)."""
    tl = module_timeline(source, job, standin, files, before, after, wait_ms, settle_ms, await_ms, await_ev)
    return run_timeline(tl, "rp2040", config=config)


def module_timeline(source, job=None, standin=False, files=None, before=(), after=(), wait_ms=1000,
                    settle_ms=BOOT_SETTLE_MS, await_ms=None, await_ev=None):
    """run_module()'s timeline (to play it with boardsim/rp2040/pico_runner.py by hand)."""
    tl = []
    if standin:
        with open(os.path.join(ROOT, "boardsim", "target", "machine.py")) as f:
            tl.append(write_op("simmachine.mpy", _mpy(f.read(), "simmachine")))
        with open(os.path.join(ROOT, "boardsim", "target", "vclock.py")) as f:
            tl.append(write_op("vclock.mpy", _mpy(f.read(), "vclock")))
    for name, data in (files or {}).items():
        tl.append(write_op(name, data))
    tl.append(write_op("zjob.mpy", _mpy(PRELUDE % (standin,) + source, "zjob")))
    tl += [{"op": "boot"}] + settle_ops(settle_ms) + list(before)
    tl += repl("import zjob")
    if job is not None:
        tl.append({"op": "serial", "line": json.dumps(job, separators=(",", ":"))})
    tl += list(after)
    if await_ms:
        # (await_ev: the module's own line, printed once: it may come before the `after` ops end)
        tl.append({"op": "await", "ms": await_ms, **({"ev": await_ev, "total": 1} if await_ev else {})})
    tl.append({"op": "wait", "ms": wait_ms})
    return tl


ALL = r'''
import sys
import gc
_N = %d
for _k in range(_N):
    # each job as run_module() would import it: the chip's own machine module back in the
    # stand-in's place (for the prelude's watchdog timer), the job before it garbage
    sys.modules.pop("machine", None)
    _m = __import__("zjob%%d" %% _k)
    sys.modules.pop("zjob%%d" %% _k, None)
    if _k < _N - 1:
        # (its watchdog timer's callback holds the module's globals: stopped, the next job's
        # prelude starts its own)
        _m._tim.deinit()
    _m = None
    gc.collect()
'''


def run_modules(jobs, config=None, files=None, settle_ms=BOOT_SETTLE_MS, await_ms=120000, heap=False):
    """Boot the firmware once, stop it (heap: first measure what heap_free() measures, as the
    "heap" line among the firmware's), then import each job's module in turn (zall, one module
    typed at the REPL, imports them one after the other): jobs are (source, job, standin) as for
    run_module(); each module must print exactly one JSON line (its result). Returns ([each
    job's result, or None where the run ended first], the RuntimeFailure that ended the run or
    None, the firmware's own lines (those with "ev"))."""
    import io
    from boardsim import runtime
    tl = []
    if any(j[2] for j in jobs):
        for mod in ("machine", "vclock"):
            name = "simmachine" if mod == "machine" else mod
            with open(os.path.join(ROOT, "boardsim", "target", mod + ".py")) as f:
                tl.append(write_op(name + ".mpy", _mpy(f.read(), name)))
    for name, data in (files or {}).items():
        tl.append(write_op(name, data))
    for k, (source, _job, standin) in enumerate(jobs):
        tl.append(write_op(f"zjob{k}.mpy", _mpy(PRELUDE % (standin,) + source, f"zjob{k}")))
    tl.append(write_op("zall.mpy", _mpy(ALL % len(jobs), "zall")))
    tl += [{"op": "boot"}, {"op": "wait", "ms": settle_ms}]
    if heap:
        tl += repl(HEAP_LINE) + [{"op": "await", "ev": "heap", "ms": 3000}]
    tl += repl("import zall")
    for _source, job, _standin in jobs:
        if job is not None:         # (read by the jobs in turn: they wait on stdin)
            tl.append({"op": "serial", "line": json.dumps(job, separators=(",", ":"))})
    tl.append({"op": "await", "lines": len(jobs), "ms": await_ms * len(jobs)})
    tl.append({"op": "wait", "ms": 100})
    out = io.StringIO()
    failure = None
    try:
        runtime.run(tl, "rp2040", stdout=out)
    except runtime.RuntimeFailure as e:
        failure = e
    lines = []
    for ln in out.getvalue().splitlines():
        try:
            lines.append(json.loads(ln))
        except ValueError:
            pass            # (not a job's result: something the console echoed)
    got = [e for e in lines if "ev" not in e]
    return got + [None] * (len(jobs) - len(got)), failure, [e for e in lines if "ev" in e]


def support_mpy(name):
    """A tests/support module compiled for the chip."""
    with open(os.path.join(ROOT, "tests", "support", name + ".py")) as f:
        return _mpy(f.read(), name)
