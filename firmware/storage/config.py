# The scoreboard's configuration: one small JSON file on the Pico's flash (config.json beside
# main.py), read once at boot. Every setting has a default, so the file may be missing or
# hold only the keys that differ. A value that is wrong (unknown choice, out of range, wrong
# type), a key nobody knows or a file that is no JSON object gives a fault message and that
# setting (or, for a broken file, every setting) keeps its default: a typo never bricks the
# table. app.py shows the first fault on the display and writes every fault as an event.
#
#   {"display": "both", "sevenseg_modules": 3}
#
# Settings are declared in SETTINGS, one row each: (key, default, allowed) where allowed is
#   a tuple of strings  - one of these choices
#   a list [lo, hi]     - an int from lo to hi
#   None                - true or false
# Add a row for a new setting (e.g. the pads' front end); load() validates it from then on.
# Boot-time only: this module allocates freely and is never called from the scan loop.
import json

PATH = "config.json"

SETTINGS = (
    # which pads sense the chips (docs/sensing.md): linear hall sensors through analog
    # multiplexers, or IR presence pads through 74HC165 shift registers
    ("front_end", "hall", ("hall", "shift")),
    # which display(s) the scoreboard drives: the OLED beside the buttons (I2C), the big
    # seven-segment digits for the room (MAX7219 chain on SPI), or both
    ("display", "oled", ("oled", "sevenseg", "both")),
    # MAX7219 eight-digit modules in the chain (each one row of 8 characters)
    ("sevenseg_modules", 3, [1, 8]),
    # their brightness, the MAX7219's intensity register (0 dim .. 15 brightest)
    ("sevenseg_intensity", 8, [0, 15]),
    # the piezo buzzer on the pin map's "buzzer" pin: tunes for a strike, a spare, a split, a
    # trap, an escape and the game's end (docs/playing.md, "Sound"). Off unless fitted: GP16
    # is SPI0's MISO as well
    ("buzzer", False, None),
)


class Config:
    def __init__(self):
        self.values = {}
        for key, default, _ in SETTINGS:
            self.values[key] = default
        self.faults = []            # (key or "", message) for each problem found
        self.source = "defaults"    # "defaults" (no file) or the path read

    def get(self, key):
        return self.values[key]

    def __getitem__(self, key):
        return self.values[key]

    def fault(self, key, msg):
        self.faults.append((key, msg))


def _allowed_text(allowed):
    if allowed is None:
        return "true or false"
    if isinstance(allowed, list):
        return "%d..%d" % (allowed[0], allowed[1])
    return " / ".join(allowed)


def check(key, value, allowed):
    """None if `value` is right for a setting with `allowed`, else why not (a short text)."""
    if allowed is None:
        if value is True or value is False:
            return None
    elif isinstance(allowed, list):
        if isinstance(value, int) and not isinstance(value, bool) \
                and allowed[0] <= value <= allowed[1]:
            return None
    elif isinstance(value, str) and value in allowed:
        return None
    return "%s must be %s" % (key, _allowed_text(allowed))


def parse(text, cfg=None):
    """Validate the text of a config file into `cfg` (a new Config by default)."""
    if cfg is None:
        cfg = Config()
    try:
        data = json.loads(text)
    except ValueError:
        cfg.fault("", "config.json is not JSON")
        return cfg
    if not isinstance(data, dict):
        cfg.fault("", "config.json is not an object")
        return cfg
    known = {}
    for key, default, allowed in SETTINGS:
        known[key] = allowed
    for key in sorted(data):
        if key.startswith("_"):             # comments: {"_about": "..."}
            continue
        if key not in known:
            cfg.fault(key, "unknown setting " + key)
            continue
        why = check(key, data[key], known[key])
        if why is None:
            cfg.values[key] = data[key]
        else:
            cfg.fault(key, why)
    return cfg


def load(path=PATH):
    """The configuration from `path` on flash; defaults (and no fault) when there is none."""
    cfg = Config()
    try:
        f = open(path)
    except OSError:
        return cfg
    try:
        text = f.read()
    except OSError:
        cfg.fault("", "config.json unreadable")
        return cfg
    finally:
        f.close()
    cfg.source = path
    return parse(text, cfg)
