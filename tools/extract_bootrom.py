"""The RP2040's boot ROM for the emulated Pico, from a copy of rp2040js's demo/bootrom.ts.

    .venv/bin/python -m tools.extract_bootrom PATH/TO/rp2040js/demo/bootrom.ts [--out FILE]

rp2040js (the emulator behind `--runtime rp2040`, docs/rp2040.md) needs the chip's 16 KB boot
ROM and its npm package does not ship it. Its repository does, as a TypeScript array of 32-bit
words in demo/bootrom.ts (built from raspberrypi/pico-bootrom, revision B1). This step turns
that array into the 16 KB binary the emulated Pico loads, kept beside the image outside the
repository: --out, else $RP2040_BOOTROM, else ~/.cache/zenn/rp2040/bootrom.bin. Nothing is
downloaded: get bootrom.ts from a checkout of rp2040js (or read the 16 KB from address 0 of a
real Pico and save them as the .bin instead).
"""
import argparse
import os
import re
import struct
import sys

from boardsim.rp2040.images import default_bootrom_path

ROM_BYTES = 16 * 1024
MAGIC = b"Mu\x01"        # at 0x10: 'M', 'u', 1, then the ROM's version byte


def words_of(ts_text):
    """The words of the first `new Uint32Array([...])` in the text."""
    m = re.search(r"new\s+Uint32Array\(\s*\[(.*?)\]\s*\)", ts_text, re.S)
    if not m:
        raise ValueError("no `new Uint32Array([...])` in the file")
    return [int(w, 0) for w in re.findall(r"0x[0-9a-fA-F]+|\d+", m.group(1))]


def rom_bytes(words):
    data = struct.pack("<%dI" % len(words), *words)
    if len(data) != ROM_BYTES:
        raise ValueError(f"{len(data)} bytes, the RP2040's boot ROM has {ROM_BYTES}")
    if data[0x10:0x13] != MAGIC:
        raise ValueError("not an RP2040 boot ROM (no 'Mu' magic at 0x10)")
    return data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bootrom_ts", help="rp2040js's demo/bootrom.ts")
    ap.add_argument("--out", help="where the 16 KB go (default: $RP2040_BOOTROM or the cache folder)")
    a = ap.parse_args(argv)
    try:
        with open(a.bootrom_ts) as f:
            data = rom_bytes(words_of(f.read()))
    except (OSError, ValueError) as e:
        print(f"error: {a.bootrom_ts}: {e}", file=sys.stderr)
        return 1
    out = a.out or default_bootrom_path()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "wb") as f:
        f.write(data)
    print(f"{out}: the RP2040 boot ROM, {len(data)} bytes (version {data[0x13]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
