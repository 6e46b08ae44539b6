# Device entry point: the Pico runs this at power-on (after boot.py).
import sys
import time
import select
import micropython

# The rp2 port's _boot.py mounts the flash with the `rp2` module and leaves it imported, in
# sys.modules and in these globals: its PIO assembler's classes and dicts hold about 1.3 KB of
# heap (measured on the emulated chip, issue 13), and the firmware never uses it. Dropped; an
# `import rp2` brings it back. (The mounted flash keeps its own block device object.)
if "rp2" in sys.modules:
    del sys.modules["rp2"]
globals().pop("rp2", None)

from scoreboard.app import Scoreboard

sb = Scoreboard()
sb.boot()
# commands from the host on the USB serial console, one per line (tools/calibrate)
console = select.poll()
console.register(sys.stdin, select.POLLIN)
# each turn with the heap locked, as the tests run it: a call's locals then go on the C stack,
# not into a heap block searched for (issue 13: docs/performance.md, "Frames on the C stack")
idle = 0
while True:
    micropython.heap_lock()
    try:
        idle = sb.step()
    finally:
        micropython.heap_unlock()
    if sb.need_service:
        sb.service()        # outside the loop turn: opening a journal file allocates
    if console.poll(0):
        sb.command(sys.stdin.readline())
    if idle:
        time.sleep_ms(idle)
