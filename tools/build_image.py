"""`make image`: the scoreboard's production image for the Raspberry Pi Pico, the firmware frozen
into MicroPython (tools/image/manifest.py), built from a MicroPython tree outside the project.

    .venv/bin/python -m tools.build_image [--mpy-dir DIR] [--board RPI_PICO|RPI_PICO2] [--jobs N] [--no-heap]

Needs (docs/rp2040.md): a MicroPython source tree at a release tag with the submodules its rp2
port builds from (lib/pico-sdk, lib/tinyusb, lib/mbedtls, lib/micropython-lib), given as
--mpy-dir or MPY_DIR (default ~/.cache/zenn/src/micropython), and Debian's gcc-arm-none-eabi,
libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib and cmake. Nothing is fetched.

The build directory is kept (~/.cache/zenn/build/rp2-BOARD), so after the first build (about 40
minutes on 2 cores) a change to the firmware only re-freezes it and links again. The results go
to the cache folder (~/.cache/zenn/rp2040/, boardsim/rp2040/images.py): zenn-BOARD.elf and
zenn-BOARD.uf2 (made here from the ELF: the SDK's UF2 step needs picotool, which is left out).

Printed: the image's size in flash against the room before the filesystem, and, when the
emulated Pico can run here (boot ROM, Node, rp2040js), the heap free after boot measured on it
with gc.mem_free() in the default configuration.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "tools", "image", "manifest.py")
# tools/hil's image: the firmware without main.py and the simulated table frozen (docs/hil.md)
MANIFEST_HIL = os.path.join(ROOT, "tools", "image", "manifest_hil.py")
FLASH_BASE = 0x10000000
FS_BASE = 0xA0000                     # where the RPI_PICO's filesystem starts (640 KB)
# Boards the image is built for (--board; MicroPython's ports/rp2/boards/NAME): the UF2 family id,
# where the board's filesystem starts (the image must end before it), and whether rp2040js can
# run it (the heap after boot is measured there). RPI_PICO2 (RP2350, Cortex-M33, 4 MB: the
# filesystem takes the top 3 MB) builds from the same tree with the same toolchain; rp2040js
# emulates the RP2040 only, so that image is built, never run here.
BOARDS = {
    "RPI_PICO": {"family": 0xE48BFF56, "fs_base": FS_BASE, "emulated": True},
    "RPI_PICO2": {"family": 0xE48BFF59, "fs_base": 0x100000, "emulated": False},   # RP2350 ARM-S
}
NEEDS = ("ports/rp2/Makefile", "lib/pico-sdk/src/rp2_common", "lib/tinyusb/src",
         "lib/micropython-lib/micropython", "lib/mbedtls/library")
DEBIAN = "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake"


def zenn_cache():
    return os.environ.get("ZENN_CACHE") or os.path.expanduser("~/.cache/zenn")


def default_mpy_dir():
    return os.environ.get("MPY_DIR") or os.path.join(zenn_cache(), "src", "micropython")


def check(mpy_dir):
    """Why the image cannot be built here (a list of lines), empty when it can."""
    why = []
    for n in NEEDS:
        if not os.path.exists(os.path.join(mpy_dir, n)):
            why.append(f"{mpy_dir}/{n} is missing (a MicroPython release tree with its rp2 "
                       "submodules: lib/pico-sdk, lib/tinyusb, lib/mbedtls, lib/micropython-lib)")
    for tool in ("arm-none-eabi-gcc", "cmake"):
        if shutil.which(tool) is None:
            why.append(f"no {tool}: apt-get install {DEBIAN}")
    return why


def flash_segments(elf):
    """[(offset in flash, bytes)] of an ELF32's loadable segments that live in flash."""
    with open(elf, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise SystemExit(f"{elf}: not an ELF file")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segs = []
    for i in range(phnum):
        typ, off, _vaddr, paddr, filesz = struct.unpack_from("<IIIII", data, phoff + i * phentsize)
        if typ == 1 and filesz and FLASH_BASE <= paddr < FLASH_BASE + 16 * 1024 * 1024:
            segs.append((paddr - FLASH_BASE, data[off:off + filesz]))
    return sorted(segs)


def write_uf2(elf, out, family=0xE48BFF56):
    """A UF2 of the ELF's flash contents (256-byte payloads; the RP2040 family id unless told)."""
    flash = bytearray()
    for off, b in flash_segments(elf):
        if len(flash) < off + len(b):
            flash.extend(b"\xff" * (off + len(b) - len(flash)))
        flash[off:off + len(b)] = b
    blocks = [i for i in range(0, len(flash), 256)]
    with open(out, "wb") as f:
        for n, i in enumerate(blocks):
            payload = bytes(flash[i:i + 256]).ljust(256, b"\xff")
            hdr = struct.pack("<IIIIIIII", 0x0A324655, 0x9E5D5157, 0x00002000, FLASH_BASE + i, 256,
                              n, len(blocks), family)
            f.write(hdr + payload + b"\x00" * (476 - 256) + struct.pack("<I", 0x0AB16F30))
    return len(flash)


# Frozen native code (viper) must start on a 4-byte boundary on the RP2040: MicroPython's armv6m
# emitter (py/asmthumb.c) loads a 32-bit constant that no 16-bit move makes (0x4004C000, the ADC's
# registers) and a jump beyond 2 KB (a viper function over 2 KB: faults._pads) from a word beside
# the code with `ldr rX, [pc, #0]`, padding to the word by the code's offset from its start, so it
# assumes the start is word-aligned; mpy-tool.py (v1.28) freezes armv6m code aligned to 2 only.
# Frozen at an address 2 mod 4 such a load reads half an instruction and half the word: a wrong
# constant, or a jump into the boot ROM's `wfi` loop (the image that hit the watchdog at every
# boot on the emulated chip, issue 13; docs/rp2040.md). A .mpy imported from the flash is copied
# into the heap (16-byte aligned), so only frozen code met it.
NATIVE_ALIGN_2 = "__attribute__ ((aligned (2)))"
NATIVE_ALIGN_4 = "__attribute__ ((aligned (4)))"


def align_native(frozen_c):
    """Every frozen native function in frozen_content.c aligned to 4 bytes. True when it changed
    the file."""
    try:
        with open(frozen_c) as f:
            text = f.read()
    except OSError:
        return False
    if NATIVE_ALIGN_2 not in text:
        return False
    with open(frozen_c, "w") as f:
        f.write(text.replace(NATIVE_ALIGN_2, NATIVE_ALIGN_4))
    return True


def misaligned_native(elf):
    """The frozen native functions (fun_data_* in .text) of an ELF that do not start on a word
    boundary: [(address, name)]; None when arm-none-eabi-nm is not there."""
    nm = shutil.which("arm-none-eabi-nm")
    if nm is None:
        return None
    r = subprocess.run([nm, elf], capture_output=True, text=True, check=True)
    bad = []
    for ln in r.stdout.splitlines():
        p = ln.split()
        if len(p) == 3 and p[1] in "tT" and p[2].startswith("fun_data_") and int(p[0], 16) & 3:
            bad.append((int(p[0], 16), p[2]))
    return bad


def build(mpy_dir, board, jobs, manifest=MANIFEST):
    build_dir = os.path.join(zenn_cache(), "build", f"rp2-{board}")
    env = dict(os.environ)
    r = subprocess.run(["make", "-C", os.path.join(mpy_dir, "mpy-cross"), f"-j{jobs}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        raise SystemExit("mpy-cross did not build:\n" + r.stderr[-3000:])
    cmd = ["make", "-C", os.path.join(mpy_dir, "ports", "rp2"), f"BOARD={board}", f"BUILD={build_dir}",
           f"-j{jobs}"]
    # from the environment: ports/rp2/Makefile appends the frozen manifest to CMAKE_ARGS, which a
    # CMAKE_ARGS on make's command line would override
    env["CMAKE_ARGS"] = "-DPICO_NO_PICOTOOL=1"
    # the mpy-cross built above, named: else CMake adds a rule that runs `make -C mpy-cross`
    # whenever it regenerates (a new manifest path), with this make's BUILD= passed down, which
    # links mpy-cross into the rp2 build directory, fails, and deletes the tree's mpy-cross
    env["MICROPY_MPYCROSS"] = os.path.join(mpy_dir, "mpy-cross", "build", "mpy-cross")
    # always named: CMake caches the last one, so a stock build after a frozen one (same
    # build directory) must ask for the port's own manifest again
    board_manifest = os.path.join(mpy_dir, "ports", "rp2", "boards", board, "manifest.py")
    if not os.path.exists(board_manifest):
        board_manifest = os.path.join(mpy_dir, "ports", "rp2", "boards", "manifest.py")
    cmd.append(f"FROZEN_MANIFEST={manifest or board_manifest}")
    print(" ".join(cmd), flush=True)
    log = os.path.join(build_dir + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        r = subprocess.CompletedProcess(cmd, 0)
        if os.path.exists(os.path.join(build_dir, "Makefile")):
            # ports/rp2/Makefile runs cmake only for a new build directory: name the manifest to
            # the existing one's cache ourselves (only the frozen modules are rebuilt)
            r = subprocess.run(["cmake", "-S", os.path.join(mpy_dir, "ports", "rp2"), "-B", build_dir,
                                f"-DMICROPY_FROZEN_MANIFEST={manifest or board_manifest}"],
                               stdout=f, stderr=subprocess.STDOUT, env=env)
            # and the frozen modules made again from it (the build does not notice a new manifest)
            try:
                os.unlink(os.path.join(build_dir, "frozen_content.c"))
            except OSError:
                pass
            # ... each compiled afresh: makemanifest keeps a compiled module newer than its
            # source, so a build dir shared by two trees froze the other tree's module where
            # its file was older (an image that never booted: half one firmware, half another)
            shutil.rmtree(os.path.join(build_dir, "frozen_mpy"), ignore_errors=True)
        if r.returncode == 0:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        # compiled and linked again with the aligned native code (make takes the edited
        # frozen_content.c as newer than what it was made from: it is not made again) ... unless
        # a firmware file changed during the build (an editor's save): then make freezes it
        # afresh, aligned to 2 again, and the image would be refused. Aligned and made again
        # until make leaves it aligned (twice is the rule, a third time is the edit).
        for _ in range(3):
            if r.returncode or not align_native(os.path.join(build_dir, "frozen_content.c")):
                break
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    if r.returncode:
        with open(log) as f:
            tail = f.read()[-4000:]
        raise SystemExit(f"the rp2 build failed (full log: {log}):\n{tail}")
    return os.path.join(build_dir, "firmware.elf")


def heap_after_boot(elf):
    """gc.mem_free() on the emulated Pico after the firmware booted (default config), or a
    sentence why it could not be measured."""
    from boardsim.rp2040 import images, probe
    os.environ["RP2040_IMAGE"] = elf
    why = images.missing()
    if why:
        return None, why
    try:
        return probe.heap_free(), None
    except Exception as e:          # a measurement, not the build: say why and go on
        return None, str(e).splitlines()[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpy-dir", default=default_mpy_dir(), help="the MicroPython tree (MPY_DIR)")
    ap.add_argument("--board", default="RPI_PICO", choices=sorted(BOARDS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--stock", action="store_true",
                    help="build the stock image (no firmware frozen in) as stock-BOARD.elf")
    ap.add_argument("--hil", action="store_true",
                    help="build tools/hil's image (firmware without main.py, boardsim/target frozen) as hil-BOARD.elf")
    ap.add_argument("--no-heap", action="store_true", help="skip the heap measurement on the emulated Pico")
    a = ap.parse_args(argv)
    why = check(a.mpy_dir)
    if why:
        print("cannot build the image:\n  " + "\n  ".join(why), file=sys.stderr)
        return 1
    elf = build(a.mpy_dir, a.board, a.jobs, None if a.stock else MANIFEST_HIL if a.hil else MANIFEST)
    out_dir = os.path.join(zenn_cache(), "rp2040")
    os.makedirs(out_dir, exist_ok=True)
    name = ("stock-" if a.stock else "hil-" if a.hil else "zenn-") + a.board
    out_elf = os.path.join(out_dir, name + ".elf")
    bad = misaligned_native(elf)
    if bad:
        print("frozen native code off a word boundary (armv6m literal loads would read "
              "garbage):\n  " + "\n  ".join(f"{a:08x} {n}" for a, n in bad), file=sys.stderr)
        return 1
    shutil.copy(elf, out_elf)
    from boardsim.rp2040 import images
    if a.hil:                       # (tools/hil takes it only while its digest is the tree's)
        from tools import hil
        with open(out_elf + ".digest", "w") as f:
            f.write(hil.frozen_digest() + "\n")
    elif not a.stock:               # what was frozen, so that a later firmware/ is not taken for it
        with open(images.digest_path(out_elf), "w") as f:
            f.write(images.firmware_digest() + "\n")
    board = BOARDS.get(a.board, BOARDS["RPI_PICO"])
    fs_base = board["fs_base"]
    size = write_uf2(out_elf, os.path.join(out_dir, name + ".uf2"), board["family"])
    print(f"{out_elf}\n{out_dir}/{name}.uf2")
    print(f"image: {size} bytes ({size / 1024:.0f} KB) of flash, {fs_base - size} bytes free before "
          f"the filesystem at {fs_base // 1024} KB" + ("" if size <= fs_base else "  -- DOES NOT FIT"))
    if size > fs_base:
        return 1
    if not board["emulated"]:
        print(f"heap free after boot: not measured (rp2040js emulates the RP2040 only: {a.board} "
              "is built, not run)")
    elif not a.no_heap and not a.hil:
        free, why = heap_after_boot(out_elf)
        if free is not None:
            print(f"heap free after boot (emulated Pico, default config.json, gc.mem_free()): "
                  f"{free} bytes ({free / 1024:.1f} KB)")
        else:
            print(f"heap free after boot: not measured ({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
