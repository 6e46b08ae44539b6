# The toy game's screens (tests/support/toy_game/games/toy.py): f(ui, engine, setup, held) on
# each display, allocation-free (rows composed in preallocated buffers).
from displays.digits import put_int

_HEAD = b"Toy game"
_UP = bytearray(b"P1 shoot")            # the player up
_PTS = bytearray(b"P1 +  0")            # the last shot's points, while held
_TOTALS = bytearray(b"P1   0  P2   0")
_SEG = bytearray(b"P1 0 0  ")


def oled(ui, g, setup, held):
    ui.line(0, _HEAD, 0, -1, True, True)
    if g.over:
        ui.line(1, b"Game over")
    elif held and g.lp >= 0:
        _PTS[1] = 49 + g.lp
        put_int(_PTS, 4, 3, g.lpts)
        ui.line(1, _PTS, 0, -1, False, True)
    else:
        _UP[1] = 49 + g.player
        ui.line(1, _UP)
    for p in range(2):
        put_int(_TOTALS, 8 * p + 3, 3, g.totals[p] if p < g.players else 0)
    ui.line(2, _TOTALS, 0, 8 * g.players - 2)
    for r in range(3, 7):
        ui.line(r, b"")
    if not ui._status():
        ui.line(7, b"")


def seg(ui, g, setup, held):
    _SEG[1] = 49 + g.player
    put_int(_SEG, 3, 1, g.totals[0])
    put_int(_SEG, 5, 1, g.totals[1])
    ui._blank()
    ui._put(0, _SEG)
    ui._show(0)
    if not ui._status(2):
        ui._blank()
        ui._put(0, b"toY")
        ui._show(2)
    ui._blank()
    ui._show(1)
    ui._rest(3)
