"""The simulator's OLED: an SSD1306 (128x64, I2C) decoded from the raw bytes of each I2C write.

i2c_write(buf) is called once per write transaction (after the address byte) from inside the
firmware's loop, with the heap locked under MicroPython: it only indexes `buf` (bytes, bytearray
or memoryview) and preallocated bytearrays, and updates existing int attributes, so it
allocates nothing. Everything else (pixel, frame, text_rows, ascii_art) runs outside the loop
and may allocate. Runs unchanged under MicroPython and CPython.

Decoding follows the datasheet (SSD1306 rev 1.1):
- Each transaction starts with a control byte: bit 7 Co, bit 6 D/C#. Co = 1 means one byte
  follows and then another control byte; Co = 0 means every remaining byte is data (D/C# = 1,
  e.g. 0x40) or commands (D/C# = 0, e.g. 0x00).
- A command's argument bytes may come in the same transaction or in later ones (0x80 per byte,
  as micropython-lib sends them): the decoder keeps its state between transactions.
- Data goes to GDDRAM at the address pointer, which auto-increments per the addressing mode:
  horizontal (along the page, then the next page, both inside the 0x21/0x22 window, wrapping
  to the window's start), vertical (down the pages, then the next column), page (along the
  page; the column wraps, the page stays).
Commands the decoder does not know are counted in `unknown` (and taken as single bytes).
"""

# addressing modes (0x20 argument)
HORIZONTAL = 0
VERTICAL = 1
PAGE = 2

WIDTH = 128
HEIGHT = 64
TEXT_X0 = 1         # pixel column of the firmware's first text cell (ssd1306.X0)


def _nargs(c):
    # argument bytes following command c (-1: unknown command)
    if c < 0x20:                    # 0x00-0x0F, 0x10-0x1F: page-mode column start nibbles
        return 0
    if c == 0x20 or c == 0x81 or c == 0x8D or c == 0xA8 or c == 0xD3 or c == 0xD5 \
            or c == 0xD9 or c == 0xDA or c == 0xDB:
        return 1
    if c == 0x21 or c == 0x22 or c == 0xA3:
        return 2
    if c == 0x26 or c == 0x27:      # continuous horizontal scroll setup
        return 6
    if c == 0x29 or c == 0x2A:      # continuous vertical and horizontal scroll setup
        return 5
    if c == 0x2E or c == 0x2F:      # scroll off / on
        return 0
    if 0x40 <= c <= 0x7F:           # display start line
        return 0
    if c == 0xA0 or c == 0xA1 or c == 0xA4 or c == 0xA5 or c == 0xA6 or c == 0xA7 \
            or c == 0xAE or c == 0xAF or c == 0xC0 or c == 0xC8 or c == 0xE3:
        return 0
    if 0xB0 <= c <= 0xB7:           # page-mode page start
        return 0
    return -1


class SSD1306Model:
    def __init__(self):
        self.gddram = bytearray(WIDTH * HEIGHT // 8)    # page p, column c at p * 128 + c
        self._args = bytearray(8)
        self._frame_key = None      # frame(): the state it was last worked out for, and it
        self._frame = None
        self.reset()

    def reset(self):
        """The chip's state after RESET# (datasheet table 10-1 defaults). RAM is kept (it is
        undefined after power-up; the driver must clear it)."""
        self.display_on = 0
        self.mode = PAGE
        self.col_start = 0
        self.col_end = WIDTH - 1
        self.page_start = 0
        self.page_end = 7
        self.col = 0
        self.page = 0
        self.pm_col = 0             # page mode: column start (0x00-0x1F)
        self.contrast = 0x7F
        self.charge_pump = 0        # 0x8D 0x10 (off) after reset; 0x14 turns it on
        self.mux = 63
        self.offset = 0
        self.start_line = 0
        self.seg_remap = 0
        self.com_reverse = 0        # 0xC8: scan COM[N-1] -> COM0
        self.com_pins = 0x12
        self.clock = 0x80
        self.precharge = 0x22
        self.vcomh = 0x20
        self.inverse = 0
        self.entire_on = 0
        self.scrolling = 0
        self._cmd = -1              # command waiting for arguments, or -1
        self._need = 0
        self._have = 0
        # counters (for tests and the simulator's statistics)
        self.transactions = 0
        self.commands = 0
        self.data_bytes = 0
        self.unknown = 0
        self.last_unknown = -1
        self.errors = 0             # malformed traffic (data while a command waits for arguments)

    # -- the bus side (heap locked: allocates nothing) ---------------------------------------
    def i2c_write(self, buf):
        n = len(buf)
        self.transactions += 1
        i = 0
        while i < n:
            ctrl = buf[i]
            i += 1
            if ctrl & 0x80:                     # Co = 1: one byte, then another control byte
                if i < n:
                    if ctrl & 0x40:
                        self._data(buf, i, i + 1)
                    else:
                        self._command(buf[i])
                    i += 1
            else:                               # Co = 0: the rest is one stream
                if ctrl & 0x40:
                    self._data(buf, i, n)
                else:
                    while i < n:
                        self._command(buf[i])
                        i += 1
                i = n

    def _data(self, buf, i, n):
        if self._cmd >= 0:
            self.errors += 1
            self._cmd = -1
        ram = self.gddram
        col = self.col
        page = self.page
        mode = self.mode
        self.data_bytes += n - i
        while i < n:
            ram[page * WIDTH + col] = buf[i]
            i += 1
            if mode == HORIZONTAL:
                if col == self.col_end:
                    col = self.col_start
                    if page == self.page_end:
                        page = self.page_start
                    else:
                        page = (page + 1) & 7
                else:
                    col = (col + 1) & 127
            elif mode == VERTICAL:
                if page == self.page_end:
                    page = self.page_start
                    if col == self.col_end:
                        col = self.col_start
                    else:
                        col = (col + 1) & 127
                else:
                    page = (page + 1) & 7
            else:
                if col == 127:
                    col = self.pm_col
                else:
                    col += 1
        self.col = col
        self.page = page

    def _command(self, c):
        if self._cmd >= 0:                      # an argument of the waiting command
            self._args[self._have] = c
            self._have += 1
            if self._have >= self._need:
                k = self._cmd
                self._cmd = -1
                self._exec(k)
            return
        self.commands += 1
        k = _nargs(c)
        if k < 0:
            self.unknown += 1
            self.last_unknown = c
            return
        if k == 0:
            self._exec(c)
            return
        self._cmd = c
        self._need = k
        self._have = 0

    def _exec(self, c):
        a = self._args
        if c < 0x10:
            self.pm_col = (self.pm_col & 0xF0) | c
            if self.mode == PAGE:
                self.col = self.pm_col
        elif c < 0x20:
            self.pm_col = ((c & 0x07) << 4) | (self.pm_col & 0x0F)
            if self.mode == PAGE:
                self.col = self.pm_col
        elif c == 0x20:
            self.mode = a[0] & 3
            if self.mode == 3:                  # invalid
                self.errors += 1
                self.mode = PAGE
        elif c == 0x21:
            self.col_start = a[0] & 127
            self.col_end = a[1] & 127
            self.col = self.col_start
        elif c == 0x22:
            self.page_start = a[0] & 7
            self.page_end = a[1] & 7
            self.page = self.page_start
        elif c == 0x26 or c == 0x27 or c == 0x29 or c == 0x2A or c == 0xA3:
            pass                                # scroll set-up: accepted, not drawn
        elif c == 0x2E:
            self.scrolling = 0
        elif c == 0x2F:
            self.scrolling = 1
        elif 0x40 <= c <= 0x7F:
            self.start_line = c & 63
        elif c == 0x81:
            self.contrast = a[0]
        elif c == 0x8D:
            self.charge_pump = 1 if a[0] & 0x04 else 0
        elif c == 0xA0 or c == 0xA1:
            self.seg_remap = c & 1
        elif c == 0xA4 or c == 0xA5:
            self.entire_on = c & 1
        elif c == 0xA6 or c == 0xA7:
            self.inverse = c & 1
        elif c == 0xA8:
            self.mux = a[0] & 63
        elif c == 0xAE or c == 0xAF:
            self.display_on = c & 1
        elif 0xB0 <= c <= 0xB7:
            if self.mode == PAGE:
                self.page = c & 7
        elif c == 0xC0 or c == 0xC8:
            self.com_reverse = 1 if c & 8 else 0
        elif c == 0xD3:
            self.offset = a[0] & 63
        elif c == 0xD5:
            self.clock = a[0]
        elif c == 0xD9:
            self.precharge = a[0]
        elif c == 0xDA:
            self.com_pins = a[0]
        elif c == 0xDB:
            self.vcomh = a[0]
        # 0xE3: NOP

    # -- the viewer's side (allocation is fine here) -----------------------------------------
    def pixel(self, x, y):
        """1 if the pixel at (x, y) is lit, as seen on a module mounted like the common ones
        (segment remap and reversed COM scan, 0xA1 0xC8, give an upright picture), with the
        display on/off, entire-on, inverse, multiplex ratio, start line and offset applied."""
        if x < 0 or x >= WIDTH or y < 0 or y >= HEIGHT:
            return 0
        if not self.display_on:
            return 0
        if self.entire_on:
            v = 1
        else:
            r = y if self.com_reverse else HEIGHT - 1 - y
            if r > self.mux:
                return 0
            r = (r + self.start_line + self.offset) & 63
            c = x if self.seg_remap else WIDTH - 1 - x
            v = (self.gddram[(r >> 3) * WIDTH + c] >> (r & 7)) & 1
        return v ^ self.inverse

    def frame(self):
        """What the panel shows, as 1024 bytes in the SSD1306's page format: pixel() for every
        pixel, worked out per row and column once (a test's final state and checkpoints read
        the frame ten times: the last one is kept while nothing changed)."""
        key = (bytes(self.gddram), self.display_on, self.entire_on, self.inverse, self.com_reverse,
               self.mux, self.start_line, self.offset, self.seg_remap)
        if key == self._frame_key:
            return bytearray(self._frame)
        out = bytearray(WIDTH * HEIGHT // 8)
        if self.display_on:
            inv = self.inverse
            if self.entire_on:
                for i in range(len(out)):
                    out[i] = 0 if inv else 0xFF
            else:
                g = self.gddram
                cols = [x if self.seg_remap else WIDTH - 1 - x for x in range(WIDTH)]
                for y in range(HEIGHT):
                    r = y if self.com_reverse else HEIGHT - 1 - y
                    bit = 1 << (y & 7)
                    o = (y >> 3) * WIDTH
                    if r > self.mux:
                        continue                # (a row beyond the multiplex ratio: dark)
                    r = (r + self.start_line + self.offset) & 63
                    src = (r >> 3) * WIDTH
                    sh = r & 7
                    for x in range(WIDTH):
                        if ((g[src + cols[x]] >> sh) & 1) ^ inv:
                            out[o + x] |= bit
        self._frame_key = key
        self._frame = bytes(out)
        return out

    def text_rows(self, x0=TEXT_X0):
        """The screen read back as 8 strings of up to 21 characters, one per 6x8 text cell
        (cells from pixel column x0, the driver's grid) through firmware/displays/font.py: inverted
        cells read as the same character, '?' for a cell that is no glyph. Trailing blanks are
        stripped."""
        normal, inverted = _glyphs()
        f = self.frame()
        rows = []
        for r in range(8):
            s = []
            for cell in range(WIDTH // 6):
                i = r * WIDTH + x0 + cell * 6
                key = bytes(f[i:i + 6])
                ch = normal.get(key)
                if ch is None:
                    ch = inverted.get(key, "?")
                s.append(ch)
            rows.append("".join(s).rstrip())
        return rows

    def inverted_cells(self, row, x0=TEXT_X0):
        """For text row `row`: a string with '#' for each cell shown in negative, ' ' else."""
        normal, inverted = _glyphs()
        f = self.frame()
        s = []
        for cell in range(WIDTH // 6):
            i = row * WIDTH + x0 + cell * 6
            s.append("#" if bytes(f[i:i + 6]) in inverted else " ")
        return "".join(s).rstrip()

    def ascii_art(self):
        """The screen for a terminal: 32 lines of 128 characters, two pixel rows per character
        with unicode half blocks, in a frame."""
        lines = ["\u250c" + "\u2500" * WIDTH + "\u2510"]
        blocks = (" ", "\u2580", "\u2584", "\u2588")
        for y in range(0, HEIGHT, 2):
            s = []
            for x in range(WIDTH):
                s.append(blocks[self.pixel(x, y) | (self.pixel(x, y + 1) << 1)])
            lines.append("\u2502" + "".join(s) + "\u2502")
        lines.append("\u2514" + "\u2500" * WIDTH + "\u2518")
        return "\n".join(lines)


_glyph_maps = []


def _glyphs():
    # {6 column bytes: char} for every font glyph, drawn normally and in negative
    if not _glyph_maps:
        from displays import font
        normal = {}
        inverted = {}
        for c in range(font.FIRST, font.LAST + 1):
            i = (c - font.FIRST) * font.WIDTH
            g = bytes(font.FONT[i:i + font.WIDTH])
            normal[g] = chr(c)
            inverted[bytes(b ^ 0xFF for b in g)] = chr(c)
        _glyph_maps.append(normal)
        _glyph_maps.append(inverted)
    return _glyph_maps[0], _glyph_maps[1]
