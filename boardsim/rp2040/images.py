"""Where the emulated Pico's image and boot ROM are, and its flash filesystem (docs/rp2040.md).

Nothing here is in the repository: the image is built by `make image` (tools/build_image.py)
from a MicroPython tree outside it, the boot ROM extracted by tools/extract_bootrom.py. Both
are looked up as
  RP2040_IMAGE    a MicroPython RPI_PICO image (.uf2 or .elf): one made by `make image` (the
                  firmware frozen in) or a stock one (the firmware is then copied onto its
                  flash as .mpy files, as `make deploy` does on a real Pico)
  RP2040_BOOTROM  the RP2040's 16 KB boot ROM
else in the cache folder, ~/.cache/zenn/rp2040/ (ZENN_CACHE moves ~/.cache/zenn):
  zenn-RPI_PICO.elf  (make image), stock-RPI_PICO.elf (optional), bootrom.bin.

The flash filesystem is MicroPython's own littlefs (v2, 4 KB blocks, 256-byte programming, as
ports/rp2/modules/_boot.py mounts it) in the last 1408 KB of the Pico's 2 MB flash; it is made
and read here with littlefs-python (requirements.txt).
"""
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FS_BASE = 0xA0000                 # 2 MB - MICROPY_HW_FLASH_STORAGE_BYTES (ports/rp2, RPI_PICO)
FS_BYTES = 1408 * 1024
BLOCK = 4096
FROZEN_IMAGE = "zenn-RPI_PICO.elf"
STOCK_IMAGE = "stock-RPI_PICO.elf"
BOOTROM = "bootrom.bin"


def cache_dir():
    return os.path.join(os.environ.get("ZENN_CACHE") or os.path.expanduser("~/.cache/zenn"), "rp2040")


def default_bootrom_path():
    return os.environ.get("RP2040_BOOTROM") or os.path.join(cache_dir(), BOOTROM)


def firmware_digest():
    """A digest of what `make image` freezes (firmware/'s files, names and contents): the frozen
    image records it beside itself, so that an image frozen from another tree is not taken for
    this one's firmware."""
    from tools.build_firmware import FIRMWARE, firmware_files
    h = hashlib.sha256()
    for n in firmware_files():
        h.update(n.encode() + b"\0")
        with open(os.path.join(FIRMWARE, n), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


def digest_path(image):
    return os.path.splitext(image)[0] + ".firmware"


def frozen_is_current(image):
    """True when the frozen image at `image` holds firmware/ as it is now (its digest file)."""
    try:
        with open(digest_path(image)) as f:
            return f.read().strip() == firmware_digest()
    except OSError:
        return False


def find_image(kind=None):
    """The image to run: RP2040_IMAGE, else the cache's frozen one (kind "frozen") or stock one
    (kind "stock"); kind None takes the frozen one first. None when there is none. A frozen image
    counts only while it holds firmware/ as it is now (`make image` freezes it again): a stale one
    would run other firmware than the tree's under the tree's name; the stock image, which gets
    the tree's firmware copied onto its flash as .mpy files, is taken instead."""
    env = os.environ.get("RP2040_IMAGE")
    if env and kind is None:
        return env if os.path.exists(env) else None
    names = {"frozen": [FROZEN_IMAGE], "stock": [STOCK_IMAGE], None: [FROZEN_IMAGE, STOCK_IMAGE]}[kind]
    for n in names:
        p = os.path.join(cache_dir(), n)
        if os.path.exists(p) and (n != FROZEN_IMAGE or frozen_is_current(p)):
            return p
    return None


def stale_frozen():
    """The cache's frozen image when it holds other firmware than firmware/ now, else None."""
    p = os.path.join(cache_dir(), FROZEN_IMAGE)
    return p if os.path.exists(p) and not frozen_is_current(p) else None


def find_bootrom():
    p = default_bootrom_path()
    return p if os.path.exists(p) else None


def missing():
    """Why the emulated Pico cannot run here (one line), or None when it can."""
    if find_image() is None:
        env = os.environ.get("RP2040_IMAGE")
        if env:
            return f"no RP2040 image at {env} (RP2040_IMAGE names it; unset it to take the cache's)"
        if stale_frozen():
            return (f"the RP2040 image {stale_frozen()} was frozen from other firmware than "
                    "firmware/ holds now: run `make image` (a re-freeze takes under a minute)")
        return ("no RP2040 image: set RP2040_IMAGE or run `make image` (builds "
                f"{os.path.join(cache_dir(), FROZEN_IMAGE)}; docs/rp2040.md)")
    if find_bootrom() is None:
        return (f"no RP2040 boot ROM at {default_bootrom_path()}: set RP2040_BOOTROM or run "
                "`make bootrom BOOTROM_TS=.../rp2040js/demo/bootrom.ts` (docs/rp2040.md)")
    return node_missing()


def node_missing():
    """Why rp2040js cannot run here (one line), or None."""
    if shutil.which("node") is None:
        return "no Node.js (node) on the PATH: the emulated Pico runs in rp2040js under Node 20"
    if not os.path.isdir(os.path.join(ROOT, "boardsim", "rp2040", "node_modules", "rp2040js")):
        return "rp2040js is not installed: run `make rp2040js` (npm ci in boardsim/rp2040)"
    return None


def image_is_frozen(path):
    """Whether the image has the firmware frozen in (its frozen modules' names are in it)."""
    with open(path, "rb") as f:
        data = f.read()
    return b"games/registry.py" in data and b"sensing/hall_scan.py" in data


# -- the flash filesystem ---------------------------------------------------------------------
def _lfs(buffer=None):
    import littlefs
    from littlefs.context import UserContext
    kw = dict(block_size=BLOCK, block_count=FS_BYTES // BLOCK, prog_size=256, read_size=32,
              lookahead_size=32)
    if buffer is None:
        fs = littlefs.LittleFS(**kw)
    else:
        fs = littlefs.LittleFS(context=UserContext(buffer=bytearray(buffer)), **kw)
    return fs


def edit_fs(region, fn):
    """fn(fs) on the littlefs in `region` (the flash's filesystem bytes, FS_BYTES), or on a new
    one when it holds none (a blank flash); the region's bytes after it. What a PC with the
    chip's flash would do (pico_runner.py's flash ops, and prepared_flash below)."""
    import littlefs
    from littlefs.context import UserContext
    kw = dict(block_size=BLOCK, block_count=FS_BYTES // BLOCK, prog_size=256, read_size=32,
              lookahead_size=32)
    try:
        fs = littlefs.LittleFS(context=UserContext(buffer=bytearray(region)), **kw)
    except Exception:
        fs = littlefs.LittleFS(**kw)
    fn(fs)
    return bytes(fs.context.buffer)


def write_fs(region, name, data):
    """edit_fs() writing file `name` (pico_runner.py's flash "write" op)."""
    def w(fs):
        with fs.open(name, "wb") as f:
            f.write(data)
    return edit_fs(region, w)


def initial_flash(config, image):
    """The chip's littlefs before the first boot (bytes, or None: none, the flash blank there):
    config.json when a config file is given; the firmware as .mpy files (and main.py) when the
    image has none frozen in."""
    files = {}
    if not image_is_frozen(image):
        files.update(firmware_mpy_files())
    if config:
        with open(config, "rb") as f:
            files["config.json"] = f.read()
    return make_fs(files) if files else None


def _blank_below_fs(image):
    """Whether the image's flash ends below the filesystem (the region then blank where no
    filesystem is given: erased, 0xFF, as pico.mjs loads an image): the ELF's segments read; any
    other image: not known (False)."""
    if not image.endswith(".elf"):
        return False
    key = (image, os.path.getmtime(image))
    if _BLANK.get(0) != key:
        from tools.build_image import flash_segments
        _BLANK[0] = key
        _BLANK[1] = all(off + len(data) <= FS_BASE for off, data in flash_segments(image))
    return _BLANK[1]


_BLANK = {}


def prepared_flash(timeline, config, image):
    """The flash filesystem a chip run boots from, made here, once, where the runner made it op
    by op: initial_flash() and then the timeline's leading flash "write" ops (before its first
    boot, with the power off) applied in order exactly as pico_runner.py applies them (each
    edit_fs() over the region the one before left). Returns (the region's bytes, the timeline
    without those ops), or (None, timeline) when there is nothing to make (no config, no such
    ops: the flash blank) or the blank flash's bytes are not known. The same bytes as the runner's: its start then imports no littlefs and
    sends no copies of the region to the chip and back (about 0.2 - 0.3 s of CPU a chip run,
    issue 15)."""
    k = 0
    while k < len(timeline) and timeline[k].get("op") == "flash" and set(timeline[k]) == {"op", "write", "hex"}:
        k += 1
    region = initial_flash(config, image)
    if region is None:
        if k == 0 or not _blank_below_fs(image):
            return None, timeline
        region = b"\xff" * FS_BYTES
        # (littlefs-python formats the region in place where it finds no filesystem: the bytes it
        # leaves unwritten are the blank flash's, so they must be the chip's)
    for o in timeline[:k]:
        region = write_fs(region, o["write"], bytes.fromhex(o["hex"]))
    return region, timeline[k:]


def make_fs(files):
    """A littlefs image (FS_BYTES) holding files {name: bytes}, a name with folders
    ("sensing/zones.mpy") in its folder, made as needed."""
    fs = _lfs()
    for name, data in sorted(files.items()):
        if "/" in name:
            fs.makedirs(name.rsplit("/", 1)[0], exist_ok=True)
        with fs.open(name, "wb") as f:
            f.write(data)
    return bytes(fs.context.buffer)


def read_fs(image, name):
    """The bytes of file `name` in a littlefs image, or None."""
    try:
        fs = _lfs(image)
        with fs.open(name, "rb") as f:
            return f.read()
    except Exception:
        return None


def list_fs(image):
    try:
        return sorted(_lfs(image).listdir("/"))
    except Exception:
        return None


def firmware_mpy_files(opt="-O3"):
    """The firmware as `make firmware` builds it for a stock image: every module compiled with
    mpy-cross -march=armv6m, main.py as source. {path under firmware/ ("sensing/zones.mpy"): bytes}."""
    import tempfile
    from tools import build_firmware
    tmp = tempfile.mkdtemp(prefix="zenn-mpy-")
    try:
        out = os.path.join(tmp, "firmware")
        build_firmware.build(out, quiet=True, opt=opt)
        files = {}
        for d, _, names in os.walk(out):
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(d, n), out).replace(os.sep, "/")
                with open(os.path.join(out, rel), "rb") as f:
                    files[rel] = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files


def node():
    return shutil.which("node") or "node"


def npm_ci():
    """Install rp2040js (pinned in boardsim/rp2040/package-lock.json) into boardsim/rp2040."""
    d = os.path.join(ROOT, "boardsim", "rp2040")
    return subprocess.call(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=d)


if __name__ == "__main__":
    why = missing()
    print(why or f"image {find_image()} (frozen: {image_is_frozen(find_image())}), boot ROM {find_bootrom()}")
    sys.exit(1 if why else 0)
