"""The firmware's flash in the simulator: the directory the firmware runs in, which outlives a
power cut within one run and starts empty with every run.

Under MicroPython it is a real littlefs (os.VfsLfs2, as on the Pico) on a RAM block device,
mounted at /flash and made the working directory. The block device can be told to tear (the
next write is half done, then the power is gone: PowerLost is raised from inside littlefs and
the runner cuts the power) or to fail (writes return EIO from then on) after N more block
writes, and it reports every write to an optional hook (tests/support/cutsweep.py).

Under CPython there is no littlefs: the flash is a plain directory made the working directory,
$BOARDSIM_FLASH (boardsim/runtime.py gives each run a fresh one) or else a temporary directory
of the process's own, removed when it ends, so that no launcher's working directory (the
repository) gets the firmware's files. Files survive power cuts; a write is never torn there,
so power-cut tests that tear writes run under MicroPython only.

Flash(directory=D) (runner.py --lean: tools/hil on a Pico, whose heap cannot hold a RAM flash)
is such a plain directory under MicroPython too, on the device's own flash (littlefs there):
emptied when the run starts, kept across power cuts, never torn nor failed (those ops are
ignored, as under CPython).

Block size and count are the simulator's: 4 KB erase blocks as on the RP2040's flash, 64 of
them (256 KB; the Pico's filesystem has about 1.4 MB). Nothing here allocates in a read or a
write (the firmware writes with the heap locked); mounting does.
"""
import os
import sys

MICROPYTHON = sys.implementation.name == "micropython"
MOUNT = "/flash"
BLOCK = 4096
BLOCKS = 64

_EIO = 5
RAW_MODULE = "zenn_rawflash"        # firmware/storage/journal.py's name for it


class PowerLost(BaseException):
    """Raised from inside a torn write: the chip stops there. Not an Exception, so that the
    firmware's `except Exception` cannot swallow it."""


class Storage:
    """The flash's bits: a RAM image that outlives power cuts, and what it is told to do."""

    def __init__(self, blocks=BLOCKS, block_size=BLOCK, image=None):
        import io
        self.blocks = blocks
        self.bs = block_size
        self.bio = io.BytesIO(image if image is not None else bytearray(b"\xff" * (blocks * block_size)))
        self.ff = bytearray(b"\xff" * block_size)
        self.writes = 0         # block writes (programs and erases) so far
        self.tear_at = -1       # the write number that tears (-1: none)
        self.fail_at = -1       # from this write number on, writes fail with EIO
        self.hook = None        # hook(kind, block, off, buf) before each write: "prog" / "erase"
        self.lost = PowerLost()  # raised without allocating (the heap is locked then)

    def image(self):
        return self.bio.getvalue()

    def load(self, data):
        self.bio.seek(0)
        self.bio.write(data)


class BlockDevice:
    """One power-on's view of the storage (littlefs' extended block protocol). A power cut kills
    the view: a file object of the firmware that died, closed later by the garbage collector,
    can no longer change the flash (its writes are dropped)."""

    def __init__(self, storage):
        self.s = storage
        self.alive = True
        self.dropped = 0            # writes of a dead view

    def kill(self):
        self.alive = False

    def readblocks(self, block, buf, off=0):
        s = self.s
        s.bio.seek(block * s.bs + off)
        s.bio.readinto(buf)
        return 0

    def writeblocks(self, block, buf, off=None):
        if off is None:
            off = 0
        return self._write(block, buf, off, len(buf), 0)

    def ioctl(self, op, arg):
        s = self.s
        if op == 4:             # block count
            return s.blocks
        if op == 5:             # block size
            return s.bs
        if op == 6:             # erase
            return self._write(arg, s.ff, 0, s.bs, 1)
        return 0

    def _write(self, block, buf, off, n, erase):
        s = self.s
        if not self.alive:
            self.dropped += 1
            return 0            # the power is gone: nothing reaches the cells
        k = s.writes
        s.writes = k + 1
        if s.hook is not None:
            s.hook(erase, block, off, buf, n)
        if s.fail_at >= 0 and k >= s.fail_at:
            return -_EIO
        s.bio.seek(block * s.bs + off)
        if k == s.tear_at:
            s.bio.write(buf, 0, n >> 1)     # half of it reaches the cells, then the power is gone
            self.alive = False
            raise s.lost
        s.bio.write(buf, 0, n)
        return 0


class Flash:
    """Power on mounts the flash and makes it the working directory; a cut unmounts it."""

    def __init__(self, directory=None, raw=False):
        # raw: the block device is registered as sys.modules[RAW_MODULE] while powered, as the
        # chip's rp2.Flash is at hand to the firmware (journal.py writes a game's file in place)
        self.raw = raw
        self.plain = not MICROPYTHON or directory is not None     # a directory, no littlefs of ours
        self.storage = None if self.plain else Storage()
        self.bd = None
        self.formatted = False
        self.dir = None
        if directory is not None:
            self.dir = _emptied(directory)
        elif not MICROPYTHON:
            self.dir = _cpython_dir()

    def power_on(self):
        if self.plain:
            os.chdir(self.dir)
            return
        s = self.storage
        if not self.formatted:
            os.VfsLfs2.mkfs(BlockDevice(s))
            self.formatted = True
        self.bd = BlockDevice(s)
        try:
            os.mount(os.VfsLfs2(self.bd), MOUNT)
        except OSError:
            # a flash littlefs cannot mount (only a test that writes garbage over it): format it
            os.VfsLfs2.mkfs(BlockDevice(s))
            self.bd = BlockDevice(s)
            os.mount(os.VfsLfs2(self.bd), MOUNT)
        os.chdir(MOUNT)
        if self.raw:
            sys.modules[RAW_MODULE] = self.bd

    def power_cut(self):
        if self.plain or self.bd is None:
            return
        self.bd.kill()
        self.bd = None
        if sys.modules.get(RAW_MODULE) is not None:
            del sys.modules[RAW_MODULE]
        os.chdir("/")
        try:
            os.umount(MOUNT)
        except OSError:
            pass

    def powered(self):
        return self.bd is not None or self.plain

    # -- a hand on the flash (tests): write or damage a file while the firmware is off ------
    def write_file(self, name, data):
        with self._mounted():
            with open(name, "wb") as f:
                f.write(data)

    def read_file(self, name):
        with self._mounted():
            try:
                with open(name, "rb") as f:
                    return f.read()
            except OSError:
                return None

    def damage(self, name, offset, xor=0xFF):
        """Flip the bits of one byte of a file (offset from its end when negative)."""
        data = self.read_file(name)
        if not data:
            return False
        data = bytearray(data)
        i = offset if offset >= 0 else len(data) + offset
        if not 0 <= i < len(data):
            return False
        data[i] ^= xor
        self.write_file(name, data)
        return True

    def _mounted(self):
        if self.plain:
            os.chdir(self.dir)
        return _Mounted(self)


def _emptied(d):
    # the run's flash starts empty (a file left by an earlier run would be restored)
    try:
        os.mkdir(d)
    except OSError:
        pass
    for name in os.listdir(d):
        os.remove(d + "/" + name)       # (the firmware writes no folders)
    return d


def _cpython_dir():
    d = os.environ.get("BOARDSIM_FLASH")
    if d:
        return d
    import atexit
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="boardsim-flash-")
    atexit.register(shutil.rmtree, d, True)
    return d


class _Mounted:
    def __init__(self, flash):
        self.flash = flash
        self.temp = False

    def __enter__(self):
        if not self.flash.plain and self.flash.bd is None:
            self.flash.power_on()
            self.temp = True
        return self

    def __exit__(self, *exc):
        if self.temp:
            self.flash.power_cut()
        return False
