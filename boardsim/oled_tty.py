"""The OLED in a terminal, for `boardsim run --display`: fitted to the terminal's width.

The runner draws the 128x64 panel as 128 columns of half blocks in a frame (130 columns,
boardsim/target/ssd1306_model.py ascii_art), which wraps into a mess in an 80-column terminal.
TerminalDisplay sits between the runner's stderr and the terminal: it reads those frames back
into pixels and draws them as wide as the terminal allows, still every pixel exact:

    130 columns or more   one column per pixel, two pixel rows per line (half blocks), 34 lines
    66 to 129 columns     two pixels by two per character (quadrant blocks): 66 columns, 34 lines
    fewer than 66         the quadrant picture all the same, after a one-line note saying how wide
                          the terminal must be (it wraps)

The width is $COLUMNS when set, otherwise that of the terminal stderr goes to (80 when it is not
a terminal). Everything else the runner writes on stderr passes through unchanged.
"""
import os
import shutil
import sys

W, H = 128, 64
FULL_COLS = W + 2
QUAD_COLS = W // 2 + 2
HALF = {" ": 0, "\u2580": 1, "\u2584": 2, "\u2588": 3}       # bit 0: upper pixel, bit 1: lower
# quadrant blocks by their lit quarters: bit 0 upper left, 1 upper right, 2 lower left, 3 lower right
QUAD = " \u2598\u259d\u2580\u2596\u258c\u259e\u259b\u2597\u259a\u2590\u259c\u2584\u2599\u259f\u2588"
HEADER = "-- OLED at "


def terminal_columns(stream=None):
    """The terminal's width: $COLUMNS, else the terminal the stream (stderr) writes to, else 80."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size((stream or sys.stderr).fileno()).columns
    except (OSError, ValueError, AttributeError):
        return shutil.get_terminal_size((80, 24)).columns


def pixels_from_art(lines):
    """The 64 rows of 128 pixels (0/1) of a frame drawn in half blocks (the 32 lines inside the
    box, with or without its side bars)."""
    rows = []
    for ln in lines:
        ln = ln.rstrip("\n")
        if ln.startswith("\u2502"):
            ln = ln[1:-1]
        top = [HALF.get(c, 0) & 1 for c in ln[:W]]
        bot = [HALF.get(c, 0) >> 1 for c in ln[:W]]
        rows += [top + [0] * (W - len(top)), bot + [0] * (W - len(bot))]
    return rows


def half_art(px):
    """One column per pixel, two rows per line (as the runner draws it), boxed: 130 columns."""
    out = ["\u250c" + "\u2500" * W + "\u2510"]
    for y in range(0, H, 2):
        out.append("\u2502" + "".join(" \u2580\u2584\u2588"[px[y][x] | px[y + 1][x] << 1] for x in range(W)) + "\u2502")
    out.append("\u2514" + "\u2500" * W + "\u2518")
    return out


def quad_art(px):
    """Two by two pixels per character, boxed: 66 columns, 34 lines."""
    out = ["\u250c" + "\u2500" * (W // 2) + "\u2510"]
    for y in range(0, H, 2):
        a, b = px[y], px[y + 1]
        out.append("\u2502" + "".join(QUAD[a[x] | a[x + 1] << 1 | b[x] << 2 | b[x + 1] << 3]
                                      for x in range(0, W, 2)) + "\u2502")
    out.append("\u2514" + "\u2500" * (W // 2) + "\u2518")
    return out


def pixels_from_quad(lines):
    """quad_art() read back into pixels (for tests)."""
    rows = []
    for ln in lines:
        ln = ln.rstrip("\n")
        if ln.startswith("\u2502"):
            ln = ln[1:-1]
        a, b = [], []
        for c in ln:
            v = QUAD.index(c) if c in QUAD else 0
            a += [v & 1, v >> 1 & 1]
            b += [v >> 2 & 1, v >> 3 & 1]
        rows += [a, b]
    return rows


class TerminalDisplay:
    """A write-only text stream for the runner's stderr lines: OLED frames redrawn to fit
    `columns`, the rest passed on to `out`."""

    def __init__(self, out=None, columns=None):
        self.out = out or sys.stderr
        self.columns = columns or terminal_columns(self.out)
        self.frame = None           # lines of the frame being read, after its header
        self.noted = False

    def write(self, text):
        for line in text.splitlines(True):
            self._line(line)
        return len(text)

    def _line(self, line):
        if self.frame is not None:
            self.frame.append(line)
            if line.startswith("\u2514"):       # the box's bottom: the frame is complete
                self._draw(self.frame)
                self.frame = None
            return
        if line.startswith(HEADER) and self.columns < FULL_COLS:
            self.out.write(line if line.endswith("\n") else line + "\n")
            self.frame = []
            return
        self.out.write(line)

    def _draw(self, lines):
        body = [ln for ln in lines if ln.startswith("\u2502")]
        px = pixels_from_art(body)
        if self.columns < QUAD_COLS and not self.noted:
            self.noted = True
            self.out.write(f"(the OLED needs a terminal at least {QUAD_COLS} columns wide, {FULL_COLS} "
                           f"for a column per pixel; this one has {self.columns})\n")
        self.out.write("\n".join(quad_art(px)) + "\n")

    def flush(self):
        self.out.flush()

    def close(self):
        if self.frame:                  # a frame cut short (the run failed): pass on what came
            for ln in self.frame:
                self.out.write(ln)
            self.frame = None
        self.out.flush()
