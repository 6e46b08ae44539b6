"""The host's handle on the emulated Pico (pico.mjs under Node): start it, power it, let it run
to a time with the table's latest inputs and pad tables, collect what it wrote on its buses and
its USB serial console, read and write its flash filesystem.

Plain CPython with no project imports, so that both the rp2040 runner (a process beside the
world, boardsim/rp2040/runner.py) and tests and benches (directly) can use it.
"""
import base64
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PICO_JS = os.path.join(HERE, "pico.mjs")
FS_BASE = 0xA0000
FS_BYTES = 1408 * 1024


class ChipError(RuntimeError):
    pass


# V8's flags for the emulator's node. --single-threaded: V8's helper threads (concurrent and
# background compilation, parallel and concurrent GC) cost some 6 % of node's CPU at the firmware's
# boot and rest, and with the suite's four workers on 2 cores they only take a core from another
# process; on the main thread the same work costs less in all (53.7/63.3/48.3 -> 52.3/57.5/45.3
# ns of CPU an emulated instruction, two nodes with it and two without at once, load 14 - 16;
# docs/performance.md "Scheduling and V8's threads"). The chip's instructions and answers are the
# same. ZENN_PICO_NODE_FLAGS replaces them (empty: none).
NODE_FLAGS = "--single-threaded"


def node_argv(node="node"):
    """The node command line that runs pico.mjs, up to the script: node and V8's flags."""
    return [node] + os.environ.get("ZENN_PICO_NODE_FLAGS", NODE_FLAGS).split()


class Pico:
    """One chip process: a node process of its own (pico.mjs), or a session of a warm one
    (`server`, else $ZENN_PICO_SERVER: the Unix socket of `pico.mjs --serve`, WarmNode below),
    which starts from the same state a new process does; where the server cannot take it (gone,
    busy with another session, another decoder asked for), a process of its own."""

    def __init__(self, image, bootrom, fs_image=None, node="node", stderr=None, server=None):
        self._fs_path = None
        if fs_image is not None:
            import tempfile
            fd, self._fs_path = tempfile.mkstemp(prefix="pico-fs-", suffix=".bin")
            with os.fdopen(fd, "wb") as f:
                f.write(fs_image)
        self.p = None
        self.sock = None
        self.session = None         # the warm server's answer to `open` (None: a process of its own)
        self._stderr = stderr
        self.t_us = 0
        self.on = False
        self.last = None
        server = os.environ.get("ZENN_PICO_SERVER") if server is None else server
        if server and self._open_session(server, image, bootrom):
            return
        argv = node_argv(node) + [PICO_JS, "--image", image, "--bootrom", bootrom]
        if self._fs_path:
            argv += ["--fs", self._fs_path]
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=stderr if stderr is not None else sys.stderr, cwd=HERE)
        except OSError as e:
            raise ChipError(f"cannot start node: {e.strerror or e}") from None
        self._w, self._r = self.p.stdin, self.p.stdout

    def _open_session(self, server, image, bootrom):
        import socket
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(server)
        except OSError:
            return False
        self.sock = sock
        self._w, self._r = sock.makefile("wb"), sock.makefile("rb")
        env = {k: v for k, v in os.environ.items() if k.startswith("ZENN_PICO_")}
        try:
            a = self.call(cmd="open", image=os.path.abspath(image), bootrom=os.path.abspath(bootrom),
                          fs=self._fs_path, env=env)
        except ChipError as e:
            self._close_session()
            if str(e).startswith("pico.mjs: busy"):
                return False
            raise
        self.session = a
        return True

    def _close_session(self):
        for f in (getattr(self, "_w", None), getattr(self, "_r", None), self.sock):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self.sock = None

    def call(self, **cmd):
        try:
            self._w.write((json.dumps(cmd, separators=(",", ":")) + "\n").encode())
            self._w.flush()
        except (BrokenPipeError, ConnectionError):
            raise ChipError("the emulated Pico (node) has stopped") from None
        line = self._r.readline()
        if not line:
            if self.p is not None:
                self.p.wait()
                raise ChipError(f"the emulated Pico (node) stopped (status {self.p.returncode})")
            raise ChipError("the warm emulator (node) closed the session")
        a = json.loads(line)
        if "stderr" in a:       # (a session's: what its own process would have written there)
            self._write_stderr(a.pop("stderr"))
        if "error" in a:
            raise ChipError("pico.mjs: " + a["error"].splitlines()[0] + "\n" + a["error"])
        self.t_us = a["t"]
        self.on = a["on"]
        self.last = a
        return a

    def _write_stderr(self, text):
        err = self._stderr
        if err is None:
            err = sys.stderr
        elif isinstance(err, int):
            if err == subprocess.DEVNULL:
                return
            os.write(err if err >= 0 else 2, text.encode())
            return
        try:
            err.write(text)
        except TypeError:
            err.write(text.encode())
        err.flush()

    # -- what the host says -----------------------------------------------------------------
    def table(self, wiring, hall=None, pres=None):
        return self.call(cmd="table", wiring=wiring, hall=hall, pres=pres)

    def power(self, on):
        return self.call(cmd="power", on=bool(on))

    def run(self, until_us, inputs=None, hall=None, pres=None, serial=None):
        cmd = {"cmd": "run", "until": int(until_us)}
        if inputs:
            cmd["in"] = inputs
        if hall:
            cmd["hall"] = hall
        if pres:
            cmd["pres"] = pres
        if serial:
            cmd["serial"] = serial.decode("latin-1") if isinstance(serial, bytes) else serial
        return self.call(**cmd)

    def stall(self, ms):
        return self.call(cmd="stall", ms=int(ms))

    def flash_tear(self, after, keep=None):
        """Tear the flash program or erase after `after` more (none when negative): its first
        `keep` bytes reach the cells (all but -keep when negative, half when None) and the
        power is gone there."""
        return self.call(cmd="flash_tear", after=int(after), keep=keep)

    def stats(self):
        return self.call(cmd="stats")

    def read_flash(self, offset=FS_BASE, length=FS_BYTES):
        return base64.b64decode(self.call(cmd="flash_read", offset=offset, length=length)["data"])

    def write_flash(self, data, offset=FS_BASE):
        return self.call(cmd="flash_write", offset=offset, data=base64.b64encode(data).decode())

    def close(self):
        if self.sock is not None:
            self._close_session()
        if self.p is not None:
            _end(self.p)
        if self._fs_path:
            try:
                os.unlink(self._fs_path)
            except OSError:
                pass
            self._fs_path = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _end(p):
    """A node process ended as pico.mjs expects: its stdin closed (it ends at EOF), then killed
    if it has not ended within 10 s."""
    if p.poll() is None:
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class WarmNode:
    """A warm emulator: `node pico.mjs --serve SOCKET`, which serves chip sessions (Pico with
    server=...) one at a time, each from a new process's state, keeping only V8's compiled code
    between them. Ends with close(), or when the process that started it ends (its stdin
    closes). cpu_s(): its CPU so far (user + system, /proc), for the tests' CPU records."""

    def __init__(self, node="node"):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="pico-warm-")
        self.path = os.path.join(self.dir, "pico.sock")
        try:
            self.p = subprocess.Popen(node_argv(node) + [PICO_JS, "--serve", self.path],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE)
        except OSError as e:
            raise ChipError(f"cannot start node: {e.strerror or e}") from None
        line = self.p.stdout.readline()
        if not line or json.loads(line).get("serving") != self.path:
            self.close()
            raise ChipError("the warm emulator did not start")

    def cpu_s(self):
        try:
            with open(f"/proc/{self.p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def close(self):
        _end(self.p)
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)


_WARM = {}


def shared_warm_node(node="node"):
    """This process's warm emulator (started at the first call, closed when the process ends):
    what boardsim/runtime.py hands the chip processes it starts when ZENN_PICO_WARM=1 (the tests'
    default, tests/conftest.py). None where it cannot be started (the processes then start node
    each, as without it)."""
    w = _WARM.get(node)
    if w is not None and w.p.poll() is None:
        return w
    try:
        w = _WARM[node] = WarmNode(node)
    except (ChipError, OSError, ValueError):
        _WARM.pop(node, None)
        return None
    if len(_WARM) == 1:
        import atexit
        atexit.register(close_warm_nodes)
    return w


def close_warm_nodes():
    for w in list(_WARM.values()):
        w.close()
    _WARM.clear()


def warm_cpu_s():
    """The CPU seconds of this process's warm emulators so far (0 when there is none)."""
    return sum(w.cpu_s() or 0 for w in _WARM.values())
