# Started on the device by `mpremote run` (tools/hil.py): plays hil/timeline.jsonl through the
# firmware on the simulated table, as boardsim/target/runner.py does on the desktop. Its event
# lines go out on the console (USB serial); the last line is "HIL-END <status>" so the host
# knows the run ended and how.
import sys
import os

os.chdir("hil")
# the run's directory first (absolute: the simulated flash may change the working directory);
# its machine.py shadows the built-in module
sys.path.insert(0, os.getcwd())
for _m in ("machine", "time"):
    if _m in sys.modules:
        del sys.modules[_m]

status = 0
try:
    import runner
    # --lean: one pad model and the firmware's files in hil/flash on this flash (runner.py): a
    # RAM flash and both models do not fit in the Pico's heap beside the firmware. The config
    # by its absolute path: the runner makes hil/flash the working directory
    args = ["runner.py", "timeline.jsonl", "--lean"]
    if "config.json" in os.listdir():
        args += ["--config", os.getcwd() + "/config.json"]
    runner.main(args)
except SystemExit as e:
    status = e.args[0] if e.args else 0
except Exception as e:              # noqa: BLE001
    sys.print_exception(e)
    status = 1
try:
    import machine
    n = machine.REAL_ERRORS[0]
    if n:
        sys.stderr.write("hil: %d real bus errors\n" % n)
except Exception:                   # noqa: BLE001
    pass
print("HIL-END %d" % status)
