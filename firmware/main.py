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
# Each turn with the heap locked, as the tests run it: the turn allocates nothing, and a call of
# a function whose locals and stack take over 11 words then keeps them on the C stack. Unlocked,
# MicroPython puts them in a heap block for the call (m_new_obj_var_maybe), found by a search of
# the heap's free blocks that lasts as long as the heap's layout makes it: 0.07 - 0.33 ms more a
# call on the chip, a 16-step frame 1.4 - 4.1 ms longer, and by how much changing with whatever was
# allocated outside the turns (issue 13: docs/performance.md, "Frames on the C stack"). A turn
# that did allocate (what tests/test_rp2040.py's locked loop looks for) raises MemoryError: the
# loop stops, the watchdog restarts the chip and the journal brings the game back
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
