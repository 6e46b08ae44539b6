# Power cuts at every step of a game, in one MicroPython process (tests/test_power_cuts.py).
#
#   MICROPYPATH=firmware:boardsim/target:tests/support micropython cutsweep.py < job.json
#
# Job (one JSON line): {"timeline": [...], "tears": N}. Output: one line "RESULT {...}".
#
# A game's state is what the scoreboard would restore: the game's header and the rules' log
# (every score, mark and prompt is derived from it), or "none" (no game, or one that is over).
#
# 1. fork: the game once, never cut. After every firmware loop turn (and the service() run after
#    it) the flash image is played back by the firmware's own journal code (Journal.boot on a
#    copy mounted at /chk): it must give the game on the scoreboard, or the one before its last
#    change (a record still waiting for the board to rest); after a turn that changed the game
#    and left the displays nothing to send (the change on show), the game on the scoreboard. Every block write of that turn is
#    also torn in a copy (half of it written, nothing after it): that copy must give the game
#    as it was before the turn or as it is after it.
# 2. cuts: the game again, the power cut and switched on again after every step of the timeline
#    once the game has begun: the scoreboard must come back with the same game and say so, and
#    the game must end as the uncut one did.
# 3. tears: for N block writes of the journal spread over the game, the game from the start
#    until that write is torn and the power is lost in the middle of it; then power on: the
#    game is the one before or after the loop turn of that write, as the fork run saw them.
import sys
import json
import os
import micropython

import runner as RN
import driver
import vclock
import flash
from storage import journal as J
from games import registry as R
from games.bowling import Bowling
from games.trap import Trap


class Sink(driver.Sink):
    # the firmware's console: a preallocated buffer (written with the heap locked)
    def __init__(self, size=262144):
        super().__init__(size)

    def events(self):
        out = []
        for line in bytes(self.buf[:self.n]).decode().split("\n"):
            if line.strip():
                out.append(json.loads(line))
        return out


def live_state(sb):
    if sb is None:
        return "off"
    app = sys.modules["scoreboard.app"]
    m = sb.mode_of_game()
    if m != app.GAME:
        return "none"
    e = sb.game
    if isinstance(e, Bowling):
        key = "b%d%d" % (e.players, e.shooter_end)
    else:
        key = "t%d%d%d" % (e.variant, e.first, 1 if e.coin else 0)
    if e.over:
        return "none"
    return key + ":" + bytes(e.log[:e.nlog]).hex()


def engine_state(g, b, t):
    if g != J.G_NONE and R.games()[R.index(R.games(), g)][3] is Bowling:      # its ENGINE
        return "b%d%d:%s" % (b.players, b.shooter_end, bytes(b.log[:b.nlog]).hex())
    if g != J.G_NONE:
        return "t%d%d%d:%s" % (t.variant, t.first, 1 if t.coin else 0, bytes(t.log[:t.nlog]).hex())
    return "none"


def recover(image):
    """What the firmware's journal restores from this flash image."""
    st = flash.Storage(image=image)
    bd = flash.BlockDevice(st)
    here = os.getcwd()
    try:
        os.mount(os.VfsLfs2(bd), "/chk")
    except OSError as e:
        return "unmountable %r" % (e,)
    live = sys.modules.get(flash.RAW_MODULE)
    try:
        os.chdir("/chk")
        sys.modules[flash.RAW_MODULE] = bd     # the copy's block device, as the chip's own
        jr = J.Journal(None)
        b = Bowling(None)
        t = Trap(None)
        g = jr.boot((b, t, t))             # one engine per registry game
        s = engine_state(g, b, t)
        if jr.f is not None:
            jr.f.close()
        return s
    finally:
        if live is not None:
            sys.modules[flash.RAW_MODULE] = live
        elif sys.modules.get(flash.RAW_MODULE) is not None:
            del sys.modules[flash.RAW_MODULE]
        os.chdir(here)
        os.umount("/chk")
        bd.kill()


def heap_locked():
    try:
        bytearray(1)
        return False
    except MemoryError:
        return True


class Sweep(RN.Runner):
    """The fork run: every loop turn checked against what the journal would restore."""

    def __init__(self):
        RN.Runner.__init__(self)
        self.out = Sink()
        self.writes = []            # this turn's block writes: (erase, block, off, data)
        self.snap = None            # the image before the first of them
        self.flash.storage.hook = self.hook
        self.durable = "none"
        self.prev = "none"          # the scoreboard's game before its last change
        self.live = "none"
        self.checks = 0
        self.shown = 0              # changes of the game that were all on the displays
        self.unshown = 0            # 1: the game changed, not yet all on the displays
        self.torn = 0
        self.lags = 0
        self.bad = []
        self.write_turn = {}        # block write number -> (state before its turn, after)

    def hook(self, erase, block, off, buf, n):
        locked = heap_locked()
        depth = 0
        if locked:
            while True:
                depth += 1
                if micropython.heap_unlock() == 0:
                    break
        if self.snap is None:
            self.snap = self.flash.storage.image()
        self.writes.append((erase, block, off, None if erase else bytes(buf)[:n], n,
                            self.flash.storage.writes - 1))
        for _ in range(depth):
            micropython.heap_lock()

    def _step(self):
        before = live_state(self.sb)
        self.writes = []
        self.snap = None
        idle = RN.Runner._step(self)
        after = live_state(self.sb)
        if after != self.live:
            self.prev = self.live
            self.live = after
        if self.writes:
            self.check_turn(before, after)
        if after != before and before != "off" and after != "none" and self.sb is not None:
            self.unshown = 1        # the turn changed the game (a shot's verdict, an undo, ...)
        if self.unshown and self.sb is not None:
            # once the displays have sent all of it, the flash must hold it too; a power cut right
            # after the score is shown loses no ball. Its redraw and pages go out over the turns
            # after the change, a verdict's lines and save after them (issue 13: no loop turn at
            # rest over 10 ms on the chip): all of it sent is the app with nothing left to draw
            # (sb.dirty), no verdict's work left (sb.verdict's _PUT_LINES, 2) and every display
            # driver clean
            shown = not self.sb.dirty and not (self.sb.verdict & 2)
            for d in self.sb.ui.drivers:
                if d.dirty:
                    shown = 0
            if shown:
                self.unshown = 0
                self.shown += 1
                if recover(self.flash.storage.image()) != after:
                    self.bad.append(["shown before saved", vclock.now_ms(), before, after])
        if self.durable != after and self.durable != self.prev:
            self.bad.append(["lag", vclock.now_ms(), self.durable, after])
        elif self.durable != after:
            self.lags += 1
        return idle

    def check_turn(self, before, after):
        img = bytearray(self.snap)
        bs = self.flash.storage.bs
        for erase, block, off, data, n, k in self.writes:
            self.write_turn[k] = (before, after)
            torn = bytearray(img)
            a = block * bs + off
            half = n >> 1
            for i in range(half):
                torn[a + i] = 0xFF if erase else data[i]
            got = recover(torn)
            self.torn += 1
            if got != before and got != after:
                self.bad.append(["torn", k, vclock.now_ms(), got, before, after])
            for i in range(n):
                img[a + i] = 0xFF if erase else data[i]
        self.durable = recover(self.flash.storage.image())
        self.checks += 1
        if self.durable != after and self.durable != before:
            self.bad.append(["after", vclock.now_ms(), self.durable, before, after])


BOOT_MS = 600       # after power on: the pads see the chips at rest again (tracker: 400 ms)


def reset_clock():
    vclock._now_us[0] = 0


def end_run(r):
    r.power_cut()           # the firmware's modules go, for the next run's fresh imports


def run_fork(timeline):
    reset_clock()
    r = Sweep()
    for o in timeline:
        r.op(o)
    r.run_ms(200)
    ev = r.out.events()
    res = {"checks": r.checks, "shown": r.shown, "torn": r.torn, "lags": r.lags, "bad": r.bad[:20],
           "nbad": len(r.bad), "writes": r.flash.storage.writes, "events": ev,
           "game_over": [e for e in ev if e.get("ev") == "game_over"],
           "shots": len([e for e in ev if e.get("ev") == "shot"])}
    wt = r.write_turn
    end_run(r)
    return res, wt


def run_cuts(timeline):
    reset_clock()
    r = RN.Runner()
    r.out = Sink()
    cuts = 0
    bad = []
    restored_shown = 0
    for o in timeline:
        r.op(o)
        if o.get("op") in ("boot", "snapshot") or r.sb is None:
            continue
        if r.sb.mode == sys.modules["scoreboard.app"].MENU:
            continue            # a question on the screen (a correction, "New game?") is not kept
        before = live_state(r.sb)
        if before == "none":
            continue
        r.power_cut()
        r.boot()
        r.run_ms(BOOT_MS)
        cuts += 1
        after = live_state(r.sb)
        if after != before:
            bad.append(["cut", vclock.now_ms(), before, after])
        rows = r.world.oled.text_rows()
        if "Game restored" in rows[7]:
            restored_shown += 1
        else:
            bad.append(["display", vclock.now_ms(), rows[7]])
    r.run_ms(200)
    ev = r.out.events()
    end_run(r)
    return {"cuts": cuts, "bad": bad[:20], "nbad": len(bad), "shown": restored_shown,
            "game_over": [e for e in ev if e.get("ev") == "game_over"],
            "restored": len([e for e in ev if e.get("ev") == "restored"])}


def run_tear(timeline, k, turns):
    reset_clock()
    r = RN.Runner()
    r.out = Sink()
    st = r.flash.storage
    st.tear_at = k
    for o in timeline:
        if r.sb is None and o.get("op") != "boot":
            break                   # the power went in the middle of write k
        r.op(o)
    if r.sb is not None:
        end_run(r)
        return ["no tear", k]
    r.op({"op": "power", "state": "on"})
    got = live_state(r.sb)
    end_run(r)
    want = turns.get(k)
    if want is None:
        return ["unknown write", k, got]
    if got != want[0] and got != want[1]:
        return ["tear", k, got, want[0], want[1]]
    return None


def main():
    job = json.loads(sys.stdin.readline())
    tl = job["timeline"]
    import utime                # the real clock (the firmware's `time` is the virtual one)
    t0 = utime.ticks_ms()
    fork, turns = run_fork(tl)
    t1 = utime.ticks_ms()
    cuts = run_cuts(tl)
    t2 = utime.ticks_ms()
    writes = sorted(turns.keys())
    n = job.get("tears", 0)
    picks = [writes[(i * len(writes)) // n + len(writes) // (2 * n)] for i in range(n)] if writes else []
    tears = []
    for k in picks:
        bad = run_tear(tl, k, turns)
        if bad is not None:
            tears.append(bad)
    t3 = utime.ticks_ms()
    res = {"fork": fork, "cuts": cuts, "tears": tears, "picked": picks, "journal_writes": writes,
           "ms": [utime.ticks_diff(t1, t0), utime.ticks_diff(t2, t1), utime.ticks_diff(t3, t2)]}
    sys.stdout.write("RESULT " + json.dumps(res) + "\n")


main()
