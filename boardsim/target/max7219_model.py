"""The simulator's seven-segment display: a chain of MAX7219 eight-digit modules on SPI, decoded
from the raw bytes on MOSI into the characters a person in the room would read.

Bus side (called from inside the firmware's loop, heap locked under MicroPython: allocates
nothing): spi_write(buf) shifts each byte into the chain's shift register while the chip
select (LOAD) pin is low; bytes clocked while it is high are counted as errors (the firmware
must frame every write). The chips latch when LOAD rises: the world watches the pin
(machine.watch) and calls load_edge(), and then every chip executes the 16-bit word that
stands in its own shift register: chip 0, wired to the Pico, holds the last two bytes shifted,
chip 1 the two before them, and so on (datasheet: "Serial-Addressing Modes", daisy chaining).

Registers (datasheet table 2): 0x00 no-op, 0x01-0x08 digits 0-7, 0x09 decode mode, 0x0A
intensity, 0x0B scan limit, 0x0C shutdown, 0x0F display test. Digit 0 is the rightmost digit
of a module. Code B decoding (decode mode bits set) is decoded too.

Viewer side (allocation is fine): rows() reads each module's digits through READING, a table
of segment patterns as people read them, written here independently of the firmware's font,
so a test that reads "P1 F 3-1" checks that the firmware's font is legible, not only that it
round-trips.
"""
import machine

DIGITS = 8

# segments DP A B C D E F G = bits 7..0; how a person reads each pattern
READING = {
    0x00: " ", 0x7E: "0", 0x30: "1", 0x6D: "2", 0x79: "3", 0x33: "4", 0x5B: "5", 0x5F: "6",
    0x70: "7", 0x7F: "8", 0x7B: "9", 0x77: "A", 0x1F: "b", 0x4E: "C", 0x0D: "c", 0x3D: "d",
    0x4F: "E", 0x47: "F", 0x5E: "G", 0x37: "H", 0x17: "h", 0x06: "I", 0x04: "i", 0x3C: "J",
    0x0E: "L", 0x76: "N", 0x15: "n", 0x1D: "o", 0x67: "P", 0x73: "q", 0x05: "r", 0x0F: "t",
    0x3E: "U", 0x1C: "u", 0x3B: "y", 0x01: "-", 0x08: "_", 0x09: "=", 0x65: "?", 0x6F: "e",
    0x7D: "a", 0x22: '"', 0x02: "'", 0x20: "'", 0x78: "]", 0x25: "/", 0x13: "\\",
}
# Code B font (decode mode): 0-9, -, E, H, L, P, blank
CODE_B = "0123456789-EHLP "


class Chip:
    def __init__(self):
        self.digits = bytearray(DIGITS)     # register values as written
        self.decode = 0
        self.intensity = 0
        self.scan_limit = 0
        self.shutdown = 1                   # 1 = shut down (power-up state); 0 = normal
        self.test = 0
        self.writes = 0


class MAX7219Model:
    def __init__(self, modules, cs_pin):
        self.n = modules
        self.cs_pin = cs_pin
        self.chips = [Chip() for _ in range(modules)]
        self.sr = bytearray(2 * modules)    # the chain's shift register as a ring of bytes
        self.head = 0                       # where the next byte goes
        self.shifted = 0                    # bytes shifted since the last latch
        self.pending = 0                    # 1: bytes shifted, LOAD has not risen yet
        self.frames = 0                     # latches seen
        self.bytes = 0
        self.errors = 0                     # bytes clocked with LOAD high, odd-length frames

    # -- the bus side (heap locked: allocates nothing) ---------------------------------------
    def load_edge(self, pin, level):
        if level:
            self.latch()

    def spi_write(self, buf):
        if machine._level[self.cs_pin]:
            self.errors += 1                # not framed: shifted, but never latched
            return
        n = len(buf)
        sr = self.sr
        size = len(sr)
        h = self.head
        for i in range(n):
            sr[h] = buf[i]
            h += 1
            if h == size:
                h = 0
        self.head = h
        self.shifted += n
        self.bytes += n
        self.pending = 1

    def latch(self):
        """LOAD has risen: every chip takes the word in its part of the shift register."""
        if not self.pending:
            return
        self.pending = 0
        if self.shifted & 1:
            self.errors += 1
        self.frames += 1
        size = len(self.sr)
        k = self.shifted if self.shifted < size else size
        self.shifted = 0
        for m in range(k // 2):             # a chip that got no word keeps its own register
            i = self.head - 2 * (m + 1)
            if i < 0:
                i += size
            self._exec(self.chips[m], self.sr[i], self.sr[(i + 1) % size])

    def _exec(self, c, reg, data):
        reg &= 0x0F
        if reg == 0x00:
            return
        c.writes += 1
        if 1 <= reg <= 8:
            c.digits[reg - 1] = data
        elif reg == 0x09:
            c.decode = data
        elif reg == 0x0A:
            c.intensity = data & 15
        elif reg == 0x0B:
            c.scan_limit = data & 7
        elif reg == 0x0C:
            c.shutdown = 0 if data & 1 else 1
        elif reg == 0x0F:
            c.test = data & 1

    # -- the viewer's side ------------------------------------------------------------------
    def segments(self, module, col):
        """The segments lit at column `col` (0 = leftmost) of `module`, as DP A..G bits."""
        c = self.chips[module]
        if c.test:
            return 0xFF
        d = DIGITS - 1 - col
        if c.shutdown or d > c.scan_limit:
            return 0
        v = c.digits[d]
        if c.decode & (1 << d):
            k = v & 0x0F
            ch = CODE_B[k] if k < len(CODE_B) else " "
            seg = 0
            for s, r in READING.items():
                if r == ch:
                    seg = s
                    break
            return seg | (v & 0x80)
        return v

    def row(self, module):
        """What module `module` shows, as text: one character per digit, a '.' after a
        digit whose decimal point is lit, '~' for a pattern nobody would read as a character.
        Trailing blanks are kept (8 characters plus dots)."""
        s = []
        for col in range(DIGITS):
            v = self.segments(module, col)
            s.append(READING.get(v & 0x7F, "~"))
            if v & 0x80:
                s.append(".")
        return "".join(s)

    def rows(self):
        return [self.row(m) for m in range(self.n)]

    def text_rows(self):
        """rows() with trailing blanks stripped, as ssd1306_model.text_rows() gives them."""
        return [r.rstrip() for r in self.rows()]

    def ascii_art(self):
        """The rows as big seven-segment digits for a terminal (3 lines per row)."""
        out = []
        for m in range(self.n):
            top, mid, bot = [], [], []
            for col in range(DIGITS):
                v = self.segments(m, col)
                a, b, c_, d, e, f, g = [(v >> (6 - i)) & 1 for i in range(7)]
                top.append(" " + ("_" if a else " ") + "  ")
                mid.append(("|" if f else " ") + ("_" if g else " ") + ("|" if b else " ") + " ")
                bot.append(("|" if e else " ") + ("_" if d else " ") + ("|" if c_ else " ")
                           + ("." if v & 0x80 else " "))
            out += ["".join(top), "".join(mid), "".join(bot)]
        return "\n".join(out)
