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


class Pico:
    def __init__(self, image, bootrom, fs_image=None, node="node", stderr=None):
        argv = [node, PICO_JS, "--image", image, "--bootrom", bootrom]
        self._fs_path = None
        if fs_image is not None:
            import tempfile
            fd, self._fs_path = tempfile.mkstemp(prefix="pico-fs-", suffix=".bin")
            with os.fdopen(fd, "wb") as f:
                f.write(fs_image)
            argv += ["--fs", self._fs_path]
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=stderr if stderr is not None else sys.stderr, cwd=HERE)
        except OSError as e:
            raise ChipError(f"cannot start node: {e.strerror or e}") from None
        self.t_us = 0
        self.on = False
        self.last = None

    def call(self, **cmd):
        try:
            self.p.stdin.write((json.dumps(cmd, separators=(",", ":")) + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            raise ChipError("the emulated Pico (node) has stopped") from None
        line = self.p.stdout.readline()
        if not line:
            self.p.wait()
            raise ChipError(f"the emulated Pico (node) stopped (status {self.p.returncode})")
        a = json.loads(line)
        if "error" in a:
            raise ChipError("pico.mjs: " + a["error"].splitlines()[0] + "\n" + a["error"])
        self.t_us = a["t"]
        self.on = a["on"]
        self.last = a
        return a

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
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
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
