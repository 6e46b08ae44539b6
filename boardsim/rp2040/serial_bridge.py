"""The emulated Pico's USB serial console on a pseudo-terminal, so that tools written for a real
Pico's /dev/ttyACM0 (mpremote, tools/hil, tools/monitor) talk to it through the same serial path.

    .venv/bin/python -m boardsim.rp2040.serial_bridge [--image FILE] [--link PATH]

Prints the terminal's path (and makes --link a symlink to it), then runs the chip until
interrupted. Nothing is on its pins but the idle levels of the table's inputs: a scenario's
table runs on the Pico itself under tools/hil. The chip is paced to run no faster than real time
(it runs at about half of it while busy), so that the tools' own timeouts mean what they mean
with a real board. The image is RP2040_IMAGE, else the cache's stock image (no firmware
running to stop first), else its frozen one (docs/rp2040.md).
"""
import argparse
import os
import select
import sys
import time
import tty

from boardsim.rp2040 import images
from boardsim.rp2040.chip import Pico

SLICE_US = 2000


def open_pty(link=None):
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    if link:
        try:
            os.unlink(link)
        except OSError:
            pass
        os.symlink(path, link)
    return master, slave, path


def serve(image, bootrom, master, stop=None, fs_image=None):
    """Run the chip, its console bridged to the pty's master end, until stop() is true."""
    import json
    with open(os.path.join(images.ROOT, "wiring", "pinmap.json")) as f:
        pm = json.load(f)
    idle_high = [pm["cup_beam"]["a"], pm["cup_beam"]["b"], pm["gate_beam"]["a"], pm["gate_beam"]["b"],
                 pm["hit"]] + list(pm["buttons"].values())
    with Pico(image, bootrom, fs_image, node=images.node()) as pico:
        pico.table({"oledAddr": pm["oled_i2c"]["addr"]})
        pico.run(0, inputs=[[p, 1] for p in idle_high])
        pico.power(True)
        t0 = time.monotonic()
        while stop is None or not stop():
            data = b""
            r, _, _ = select.select([master], [], [], 0)
            if r:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""
            a = pico.run(pico.t_us + SLICE_US, serial=data)
            if a["serial"]:
                out = a["serial"].encode("latin-1")
                while out:
                    n = os.write(master, out)
                    out = out[n:]
            ahead = pico.t_us / 1e6 - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(min(ahead, 0.05))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", help="the MicroPython image (default: RP2040_IMAGE, the stock, the frozen one)")
    ap.add_argument("--link", help="also make this path a symlink to the terminal")
    a = ap.parse_args(argv)
    image = a.image or os.environ.get("RP2040_IMAGE") or images.find_image("stock") or images.find_image("frozen")
    why = images.missing()
    if image is None or (why and "image" not in why):
        print(f"error: {why or 'no image'}", file=sys.stderr)
        return 2
    master, slave, path = open_pty(a.link)
    print(path, flush=True)
    try:
        serve(image, images.find_bootrom(), master)
    except KeyboardInterrupt:
        pass
    finally:
        os.close(slave)
        os.close(master)
    return 0


if __name__ == "__main__":
    sys.exit(main())
