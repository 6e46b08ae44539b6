"""Target side of bench/fast_inputs.py: the beams' IRQ latch (firmware/sensing/fastin.py).

Job: {"config": PATH or null, "idle": timeline, "strike": timeline,
      "widths_us": [...], "phases": N, "cup_widths_us": [...], "stalls_ms": [...]}

1. pulses: on the board at rest ("idle"), every fast input gets pulses of each width at N
   phases spread over a loop step. The edges are delivered at their own virtual time, as a hard
   IRQ runs when the edge comes (between two of the runner's steps, with the clock set to the
   edge). Counted: pulses the latch counted (FastInputs.total went up), and pulses a poll of
   the pin's level would have seen once per step or once per frame (what the loop would catch
   without the IRQ).
2. cup pulse: the strike ("strike": its last op is the shot) with the simulated cup's throat
   pulse shortened to each width: is it still a strike?
3. stalls: the strike again with the loop stalled (no step) for each time around the drop
   through the gate into the cup, the table going on meanwhile in 0.1 ms steps:
   "irq"  the stall is Python's (a long find): hard IRQs run at their edges;
   "off"  interrupts are off (a flash erase): each input's edge waits in the chip's latch and
          its handler runs once when the stall ends (the RP2040 latches one edge per pin).
   Then the loop runs on until the board settles: is it a strike, and did the watchdog bite?
"""
import b_harness as H
import machine
import micropython
from tables import pins
import vclock
import world as W

FAST = (("cup_a", pins.CUP_A), ("cup_b", pins.CUP_B), ("gate_a", pins.GATE_A),
        ("gate_b", pins.GATE_B), ("hit", pins.HIT))


def deliver(events):
    """Edges [(t_us, pin, level)] due by now, each at its own time (the clock set back to it
    while the handler runs, heap locked as in a hard IRQ). Returns those still to come."""
    now = vclock.now_us()
    later = []
    for e in sorted(events):
        if e[0] > now:
            later.append(e)
            continue
        vclock._now_us[0] = e[0]
        micropython.heap_lock()
        try:
            machine.drive(e[1], e[2])
        finally:
            micropython.heap_unlock()
    vclock._now_us[0] = now
    return later


def pulses(j):
    r = H.runner(j.get("config"))
    H.play(r, j["idle"])
    r.run_ms(1000)
    fast = r.sb.fast
    out = {}
    for w in j["widths_us"]:
        caught = 0
        step_poll = 0
        frame_poll = 0
        n = 0
        for name, pin in FAST:
            for k in range(j["phases"]):
                r.run_ms(50)
                # the step under way from now: its length, from one step
                t0 = vclock.now_us()
                r.run_until(t0 + 1)
                t1 = vclock.now_us()
                period = t1 - t0
                fall = t1 + period * k // j["phases"]
                rise = fall + w
                before = fast.total
                ev = [(fall, pin, 0), (rise, pin, 1)]
                boundaries = []
                while ev:
                    r.run_until(vclock.now_us() + 1)
                    boundaries.append(vclock.now_us())
                    ev = deliver(ev)
                n += 1
                if fast.total > before:
                    caught += 1
                # a poll at the start of each step sees the level there
                if any(fall <= b < rise for b in boundaries) or (rise - fall) >= period:
                    step_poll += 1
                fp = 16 * period
                if (rise - fall) >= fp or (fall // fp) != (rise // fp):
                    frame_poll += 1
        out[str(w)] = {"pulses": n, "latched": caught, "step_poll": step_poll,
                       "frame_poll": frame_poll}
        r.settle()
    r.power_cut()
    return out


def strike_result(r, n_before):
    b = r.sb.game                 # the engine of the game played (bowling here)
    if b.nlog <= n_before:
        return "none"
    return ("strike", "spare", "sink9", "pins", "gutter", "no_basket")[b.lres]


def cup_widths(j):
    out = {}
    keep = W.CUP_PULSE_US
    for w in j["cup_widths_us"]:
        W.CUP_PULSE_US = w
        r = H.runner(j.get("config"))
        tl = j["strike"]
        H.play(r, tl[:-1])
        r.run_ms(500)
        n = r.sb.game.nlog
        r.op(tl[-1])
        out[str(w)] = strike_result(r, n)
        r.power_cut()
    W.CUP_PULSE_US = keep
    return out


class Deferred:
    """Interrupts off: the fast inputs' handlers replaced by the chip's edge latch."""

    def __init__(self):
        self.saved = []
        self.pending = bytearray(32)
        for _, pin in FAST:
            p = machine._pins[pin]
            if p is None or p.handler is None:
                continue
            self.saved.append((pin, p, p.handler))
            p.handler = self._latch

    def _latch(self, p):
        self.pending[p.id] = 1

    def release(self):
        for pin, p, h in self.saved:
            p.handler = h
        for pin, p, h in sorted(self.saved):
            if self.pending[pin]:
                micropython.heap_lock()
                try:
                    h(p)
                finally:
                    micropython.heap_unlock()


def stall(j, ms, mode):
    r = H.runner(j.get("config"))
    tl = j["strike"]
    H.play(r, tl[:-1])
    r.run_ms(500)
    sb = r.sb
    n = sb.game.nlog
    move = tl[-1]
    t0 = vclock.now_us()
    t_drop = t0 + int(move["moves"][0]["pts"][-1][2] * 1000)
    for m in move["moves"]:
        r.world.move(m["chip"], m["pts"], m.get("end", "rest"), m.get("hits", []), t0)
    lead = 100000 if ms * 1000 > 100000 else ms * 500
    start = t_drop - lead
    r.run_until(start)
    d = Deferred() if mode == "off" else None
    end = vclock.now_us() + ms * 1000
    while vclock.now_us() < end:
        vclock.advance_us(100)
        r.world.advance_to(vclock.now_us())
    if d is not None:
        d.release()
    r.op({"op": "stall", "ms": 0})     # the runner's watchdog check for a turn that hung
    r.settle()
    bit = r.sb is not sb
    res = "reset" if bit else strike_result(r, n)
    r.power_cut()
    return res


def main():
    j = H.job()
    res = {"pulses": pulses(j), "cup": cup_widths(j), "stalls": {}}
    for mode in ("irq", "off"):
        res["stalls"][mode] = {str(ms): stall(j, ms, mode) for ms in j["stalls_ms"]}
    H.emit(res)


main()
