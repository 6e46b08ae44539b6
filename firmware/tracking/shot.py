# What the tracker saw of one shot, from the first motion until the board was at rest again.
# One instance is made at boot and reused for every shot (RAM: about 200 bytes).
from micropython import const
from array import array

MAX_CHIPS = const(4)

# chip kinds (the sign of the magnet under the pads tells them apart)
KIND_NONE = const(0)
KIND_SMALL = const(1)
KIND_BIG = const(2)

# what became of a chip by the end of a shot
FATE_REST = const(0)    # at rest on the board: see end_mask, x, y
FATE_CUP_A = const(1)   # dropped into the cup at end a
FATE_CUP_B = const(2)   # dropped into the cup at end b
FATE_OFF = const(3)     # left the board
FATE_GONE = const(4)    # vanished without a cup or an edge (lifted by hand)


class ShotResult:
    def __init__(self):
        self.n = 0                                   # chips tracked (slots 0..n-1)
        self.mover = -1                              # slot of the chip that moved first
        self.tied = 0         # bit per slot: chips that may have moved first as well (unsure)
        self.kind = bytearray(MAX_CHIPS)             # KIND_* per slot
        self.moved = bytearray(MAX_CHIPS)            # 1 if the chip moved during the shot
        self.fate = bytearray(MAX_CHIPS)             # FATE_* per slot
        self.start_mask = array('i', (0, 0, 0, 0))   # zone bits before the shot (0: not on board)
        self.end_mask = array('i', (0, 0, 0, 0))     # zone bits at rest after it (0: not on board)
        # the start mask as sure as the pads know it: the zones the chip surely overlapped (its
        # disc shrunk by its position's uncertainty) and those it may have (grown by it); the
        # two differ when a border lay that close to its rim (what a game reads of a chip the
        # shot did not move, or of where a moved one lay, was never judged sure or unsure)
        self.start_lo = array('i', (0, 0, 0, 0))
        self.start_hi = array('i', (0, 0, 0, 0))
        self.x = array('i', (0, 0, 0, 0))            # rest position, 0.1 mm
        self.y = array('i', (0, 0, 0, 0))
        self.sure = bytearray(MAX_CHIPS)             # 1 if the zone verdict is sure (no faulty pad near)
        self.gates = 0        # bit 0: gate beam a broken during the shot (or blocked at its start); bit 1: b
        self.zenn = 0         # FATE_CUP_A / FATE_CUP_B when the drop into that cup came through its gate
        self.hit = 0          # 1 if a bumper/block hit sensor fired (optional hardware)
        self.t_start = 0      # ticks_ms of the first motion
        self.t_rest = 0       # ticks_ms when the board came to rest

    def clear(self):
        self.n = 0
        self.mover = -1
        self.tied = 0
        for i in range(MAX_CHIPS):
            self.kind[i] = 0
            self.moved[i] = 0
            self.fate[i] = 0
            self.start_mask[i] = 0
            self.start_lo[i] = 0
            self.start_hi[i] = 0
            self.end_mask[i] = 0
            self.x[i] = 0
            self.y[i] = 0
            self.sure[i] = 1
        self.gates = 0
        self.zenn = 0
        self.hit = 0
