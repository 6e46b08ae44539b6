# The scoreboard's displays, as config.json's "display" picks them: the OLED (ssd1306.py +
# oled_screens.py), the seven-segment chain (max7219.py + seg_screens.py), or both. Displays
# fans the screen calls app.py makes (draw_menu, draw_game, fault) out to each display and
# services their buses, one small piece of each per loop turn. A game's screen on each display
# is the function games/registry.py names for it. Allocation-free after open().
import gc

from tables import pins
from micropython import const

# a registry line's fields (games/registry.py): its screens
_OLED = const(8)
_SEG = const(9)


class Displays:
    def __init__(self):
        self.uis = ()           # oled_screens.UI and/or seg_screens.SegUI
        self.screens = ()       # ui i's screen of game k at i * (games) + k (registry order), or None
        self.drivers = ()       # their drivers: service() / flush()
        self.oled = None
        self.seg = None

    def open(self, cfg, games=None):
        # games: the registry's (games/registry.py games()), whose screens are drawn
        # build the drivers the configuration asks for (boot only: allocates)
        from machine import Pin
        which = cfg.get("display")
        if games is None:
            from games.registry import games as registry_games
            games = registry_games()
        uis = []
        screens = []
        drivers = []
        if which == "oled" or which == "both":
            from machine import I2C
            from displays.ssd1306 import SSD1306
            from displays import oled_screens as ui
            gc.collect()        # the imports' garbage first (see app.py, at its imports)
            i2c = I2C(pins.OLED_BUS, scl=Pin(pins.OLED_SCL), sda=Pin(pins.OLED_SDA),
                      freq=pins.OLED_FREQ)
            self.oled = SSD1306(i2c, pins.OLED_ADDR)
            uis.append(ui.UI(self.oled))
            screens += _screens(games, _OLED)
            drivers.append(self.oled)
        if which == "sevenseg" or which == "both":
            from machine import SPI
            from displays.max7219 import MAX7219
            from displays import seg_screens as seg_ui
            gc.collect()
            spi = SPI(pins.SPI_BUS, baudrate=10000000, polarity=0, phase=0,
                      sck=Pin(pins.SPI_SCK), mosi=Pin(pins.SPI_MOSI), miso=Pin(pins.SPI_MISO))
            cs = Pin(pins.SPI_CS, Pin.OUT, value=1)
            self.seg = MAX7219(spi, cs, cfg.get("sevenseg_modules"), cfg.get("sevenseg_intensity"))
            uis.append(seg_ui.SegUI(self.seg, games))
            screens += _screens(games, _SEG)
            drivers.append(self.seg)
        self.uis = tuple(uis)
        self.screens = tuple(screens)
        self.drivers = tuple(drivers)
        return self

    # -- the screens ---------------------------------------------------------------------------
    def draw_menu(self, title, choice, hint, off=0, n=-1):
        # the choice is choice[off:off + n] (n = -1: to the end)
        for u in self.uis:
            u.draw_menu(title, choice, hint, off, n)

    def draw_game(self, k, game, setup, held=0):
        # game k of the registry (game: its engine); setup: its set-up check (-1 none, 0 wrong,
        # 1 right); held: the last shot's result (app.py holds it for RESULT_MS)
        uis = self.uis
        for i in range(len(uis)):
            f = self.screens[i * (len(self.screens) // len(uis)) + k]
            if f is not None:
                f(uis[i], game, setup, held)

    def fault(self, buf):
        for u in self.uis:
            u.fault(buf)

    # -- the buses -----------------------------------------------------------------------------
    def service(self):
        # a little of each display's pending traffic (one OLED page, one digit frame)
        for d in self.drivers:
            d.service()

    def flush(self):
        for d in self.drivers:
            d.flush()



def _screens(games, which):
    # each game's screen function on one display (which: the line's field), None for none
    out = []
    for g in games:
        f = None
        spec = g[which]
        if spec is not None:
            i = spec.rfind(".")
            f = getattr(__import__(spec[:i], None, None, (spec[i + 1:],)), spec[i + 1:])
        out.append(f)
    return out
