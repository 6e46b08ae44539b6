"""What one loop turn executes, counted, not timed: Scoreboard.step() on the simulated empty table
at rest under CPython, its firmware bytecode lines, opcodes and calls over 10 frames (160 steps)
counted by sys.settrace (the @micropython.viper functions are machine code on the chip: not
counted). Deterministic, so two commits compare exactly whatever the machine's load:

    .venv/bin/python bench/step_count.py        (from the repository's root)

Issue 15: da514ab (before the re-layout), 86cc789 (after it) and the app split give the same
counts, so a change in the emulated chip's frame at rest is not more bytecode in the loop."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "firmware"), os.path.join(ROOT, "boardsim", "target")]
import micropython  # noqa: E402  (boardsim/target's stand-in)
VIPER = set()
_v = micropython.viper


def _tag(f):
    VIPER.add(f.__code__)
    return _v(f)


micropython.viper = _tag
import runner as R  # noqa: E402
r = R.Runner(config=None)


class Out:
    def write(self, buf, off=0, n=-1):
        return n


r.out = Out()
r.op({"op": "boot"})
r.run_ms(3000)
sb = r.sb
C = {"line": 0, "opcode": 0, "call": 0}


def tracer(frame, event, arg):
    c = frame.f_code
    if c in VIPER or "/firmware/" not in c.co_filename:
        return None
    if event == "call":
        C["call"] += 1
        frame.f_trace_opcodes = True
    elif event in C:
        C[event] += 1
    return tracer


for _ in range(32):
    sb.step()
sys.settrace(tracer)
for _ in range(160):
    sb.step()
sys.settrace(None)
print(json.dumps(C))
