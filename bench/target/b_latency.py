"""Target side of bench/latency.py: from a chip coming to rest (or dropping into a cup) to the
displays showing the new score, in simulated milliseconds, and its parts.

Job: {"config": PATH or null, "shots": {name: timeline}, "pace": null or {...}}
Each timeline's last op is the shot (a "move"); everything before it is played first. Then the
shot is played with the firmware watched step by step:
  t_rest     when the chip stopped: the move's start plus its last point's time
  t_verdict  the step in which the tracker told the app (on_board: rules, journal, dirty)
  t_drawn    the step in which the screens were redrawn (redraw after on_board)
  t_shown    the end of the first step after which no display has anything left to send
All in virtual ms. With "pace" the virtual clock follows the Pico's estimated costs instead of
the runner's 1 ms per step: {"step_us": a step's cost at rest, "ratio": Pico us per unix us
of Python, "send_us": one unit of display traffic}; find(), tracker.frame(), on_board() and
redraw() then advance the clock by their measured time x ratio, a display send by send_us.
"""
import b_harness as H
import vclock

R = H.R


class Watch:
    def __init__(self, r, pace):
        self.r = r
        self.sb = r.sb
        self.pace = pace
        self.t_verdict = -1
        self.t_drawn = -1
        self.drivers = [d for _, _, d in H.displays_of(self.sb)]
        sb = self.sb
        self.find = sb.loc.find
        self.frame = sb.tracker.frame
        self.on_board_ = sb.on_board
        self.redraw_ = sb.redraw
        self.service_ = sb.ui.service
        # integers only: the wrappers run inside the locked loop turn (a float allocates)
        self.ratio_m = int(pace["ratio"] * 1000) if pace else 0
        self.send_us = int(pace["send_us"]) if pace else 0
        sb.on_board = self.on_board
        sb.redraw = self.redraw
        if pace:
            sb.loc.find = self.find_paced
            sb.tracker.frame = self.frame_paced
            sb.ui.service = self.service_paced

    def restore(self):
        sb = self.sb
        for obj, name in ((sb, "on_board"), (sb, "redraw"), (sb.loc, "find"),
                          (sb.tracker, "frame"), (sb.ui, "service")):
            try:
                delattr(obj, name)
            except AttributeError:
                pass

    def _pace(self, t0):
        if self.ratio_m:
            vclock.advance_us(H.since(t0) * self.ratio_m // 1000)

    def find_paced(self, grid):
        t0 = H.real_us()
        n = self.find(grid)
        self._pace(t0)
        return n

    def frame_paced(self):
        t0 = H.real_us()
        self.frame()
        self._pace(t0)

    def on_board(self, e):
        if self.t_verdict < 0:
            self.t_verdict = vclock.now_us()
        t0 = H.real_us()
        self.on_board_(e)
        self._pace(t0)

    def redraw(self):
        if self.t_verdict >= 0 and self.t_drawn < 0:
            self.t_drawn = vclock.now_us()
        t0 = H.real_us()
        self.redraw_()
        self._pace(t0)

    def service_paced(self):
        sent = 0
        for d in self.drivers:
            if d.dirty:
                sent = 1
        self.service_()
        if sent:
            vclock.advance_us(self.send_us)

    def pending(self):
        for d in self.drivers:
            if d.dirty:
                return True
        return False


def shot(r, tl, pace):
    H.play(r, tl[:-1])
    r.run_ms(500)
    move = tl[-1]
    t0 = vclock.now_us()
    last = 0
    for m in move["moves"]:
        t = m["pts"][-1][2]
        if t > last:
            last = t
    t_rest = t0 + int(last * 1000)
    w = Watch(r, pace)
    world = r.world
    now = vclock.now_us()
    for m in move["moves"]:
        world.move(m["chip"], m["pts"], m.get("end", "rest"), m.get("hits", []), now)
    t_shown = -1
    end = t_rest + 5000000
    try:
        while vclock.now_us() < end:
            r.run_until(vclock.now_us() + 1)        # one step (the runner's own)
            if w.t_drawn >= 0 and not w.pending():
                t_shown = vclock.now_us()
                break
    finally:
        w.restore()
    out = {"t_rest": t_rest, "t_verdict": w.t_verdict, "t_drawn": w.t_drawn, "t_shown": t_shown}
    ms = {}
    for k, v in out.items():
        ms[k] = (v - t_rest) / 1000 if v >= 0 else None
    ms["frames"] = r.sb.scan.frame
    return ms


def main():
    j = H.job()
    cfg = j.get("config")
    pace = j.get("pace")
    res = {}
    for name in sorted(j["shots"]):
        r = H.runner(cfg)
        if pace:
            R.STEP_US = pace["step_us"]
        res[name] = shot(r, j["shots"][name], pace)
        R.STEP_US = 1000
        r.power_cut()
    H.emit(res)


main()
