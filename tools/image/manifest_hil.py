# tools/hil's image (`make image-hil`, docs/hil.md): the board's own modules, the firmware without
# main.py and the simulated table (boardsim/target) frozen into MicroPython. A HIL run shares the
# Pico's heap between the firmware and the simulated table; as .mpy files on the flash their code
# alone takes most of it (the run stopped with a MemoryError importing the firmware), frozen it
# stays in flash. No main.py: a Pico that boots the scoreboard starts its watchdog, which resets
# the chip under mpremote. The run's own files (the HIL `machine`, the simulator's stand-in as
# simmachine, the timeline, config.json) are still copied into hil/ by tools/hil.
import os

include("$(PORT_DIR)/boards/manifest.py")

_FIRMWARE = "../../firmware"
_modules = []
for _dir, _, _files in os.walk(_FIRMWARE):
    for _f in _files:
        _p = os.path.relpath(os.path.join(_dir, _f), _FIRMWARE)
        if _f.endswith(".py") and _p not in ("main.py", "boot.py"):
            _modules.append(_p)
freeze(_FIRMWARE, sorted(_modules), opt=3)
# boardsim/target as tools/hil stages it: not machine.py (staged as simmachine.py, the HIL's own
# machine.py in its place), nor the host-only modules (tools/hil.py HOST_ONLY)
_TARGET = "../../boardsim/target"
freeze(_TARGET, sorted(f for f in os.listdir(_TARGET) if f.endswith(".py")
                       and f not in ("machine.py", "micropython.py", "live.py")), opt=2)
