# A timeline played with things thrown in at any moment (tests/test_fuzz_games.py): button
# presses and holds, glitches on the beams, the hit sensor and the buttons, noise on the hall
# pads. Runs the real firmware through boardsim/target/runner.py's Runner, so its loop turns run
# with the heap locked under MicroPython (an allocation ends the run with exit status 3).
#
#   MICROPYPATH=firmware:boardsim/target:tests/support micropython fuzz_target.py < job.json
#
# Job (one JSON line): {"timeline": [...], "noise_lsb": N or null,
#                       "inject": [[t_ms, "press", button, hold_ms],
#                                  [t_ms, "glitch", "cup_a" | "cup_b" | "gate_a" | "gate_b" |
#                                   "hit" | button, us],
#                                  [k, "move_press", button, ms]: pressed ms after move op k
#                                  (counted from 0) began, for 80 ms, ...]}
# Stdout: the firmware's event lines, then "RESULT {...}" (the display's rows, steps, refusals).
import sys
import json

import runner as RN
import vclock


class Fuzz(RN.Runner):
    def __init__(self, job):
        RN.Runner.__init__(self)
        inj = job.get("inject", [])
        self.todo = sorted([x for x in inj if x[1] != "move_press"], key=lambda x: x[0])
        self.in_move = [x for x in inj if x[1] == "move_press"]
        self.moves = 0
        self.up = []                # [t_ms, button]: holds to release
        if job.get("noise_lsb") is not None:
            self.world.hall.noise_lsb = job["noise_lsb"]

    def pin(self, name):
        w = self.world
        if name in w.button_pin:
            return w.button_pin[name]
        return {"cup_a": w.cup_pin[0], "cup_b": w.cup_pin[1], "gate_a": w.gate_pin[0],
                "gate_b": w.gate_pin[1], "hit": w.hit_pin}[name]

    def op(self, o):
        if o.get("op") == "move":
            for k, _, button, ms in self.in_move:
                if k == self.moves:
                    self.todo.append([vclock.now_ms() + ms, "press", button, 80])
                    self.todo.sort(key=lambda x: x[0])
            self.moves += 1
        RN.Runner.op(self, o)

    def _step(self):
        now = vclock.now_ms()
        w = self.world
        while self.todo and self.todo[0][0] <= now:
            t, kind, what, n = self.todo.pop(0)
            if kind == "press":
                w.press(what, True)
                self.up.append([now + n, what])
            else:
                us = vclock.now_us()
                w.pulses.append([self.pin(what), us, us + n, 0])
        for u in self.up:
            if u[0] <= now:
                w.press(u[1], False)
        self.up = [u for u in self.up if u[0] > now]
        return RN.Runner._step(self)


def main():
    job = json.loads(sys.stdin.readline())
    vclock._now_us[0] = 0
    r = Fuzz(job)
    for o in job["timeline"]:
        r.op(o)
    while r.todo or r.up:
        r.run_ms(100)
    r.run_ms(3000)
    rows = r.world.oled.text_rows() if r.sb is not None else []
    sys.stdout.write("RESULT " + json.dumps({"display": rows, "steps": r.steps,
                                            "ms": vclock.now_ms()}) + "\n")


main()
