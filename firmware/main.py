# Device entry point: the Pico runs this at power-on (after boot.py).
import time
from app import Scoreboard

sb = Scoreboard()
sb.boot()
while True:
    idle = sb.step()
    if idle:
        time.sleep_ms(idle)
