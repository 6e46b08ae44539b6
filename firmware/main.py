# Device entry point: the Pico runs this at power-on (after boot.py).
import sys
import time
import select
from scoreboard.app import Scoreboard

sb = Scoreboard()
sb.boot()
# commands from the host on the USB serial console, one per line (tools/calibrate)
console = select.poll()
console.register(sys.stdin, select.POLLIN)
while True:
    idle = sb.step()
    if sb.need_service:
        sb.service()        # outside the loop turn: opening a journal file allocates
    if console.poll(0):
        sb.command(sys.stdin.readline())
    if idle:
        time.sleep_ms(idle)
