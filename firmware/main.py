# Device entry point: the Pico runs this at power-on (after boot.py).
import time
from app import Scoreboard

sb = Scoreboard()
sb.boot()
while True:
    idle = sb.step()
    if sb.need_service:
        sb.service()        # outside the loop turn: opening a journal file allocates
    if idle:
        time.sleep_ms(idle)
