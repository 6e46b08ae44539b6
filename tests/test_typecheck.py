"""The firmware type-checked against the Pico's own API (issue 15): tools/typecheck.py runs mypy
(mypy.ini) with the rp2 port's stubs (micropython-rp2-rpi-pico-stubs) as its standard library,
so a function, method or argument that only the simulator's stand-ins have (boardsim/target:
machine.py, vclock.py as `time`) fails here, not first on a Pico."""
import shutil

from tools import typecheck


def test_the_firmware_checks_against_the_picos_stubs():
    p = typecheck.run(capture=True)
    assert p.returncode == 0, p.stdout + p.stderr


# Calls the simulator takes and the Pico does not: each must be an error where it is written.
WRONG = [
    ("machine.watch(3, None)", 'Module has no attribute "watch"'),              # machine.py's hook
    ("machine.drive(3, 1)", 'Module has no attribute "drive"'),                # the world's pin driver
    ("time.now_us()", 'Module has no attribute "now_us"'),                    # vclock's own clock
    ("machine.Pin(3).value(1, 0)", 'No overload variant of "value"'),        # Pin.value takes one
    ("machine.ADC(26).read_u16(1)", 'Too many arguments'),                     # ADC.read_u16 none
]


def test_calls_the_pico_does_not_have_fail_where_they_are(tmp_path):
    # one mypy run over a copy of the firmware with every wrong call above in tracker.py (a
    # module with no exclusions in mypy.ini), each in a function of its own
    fw = tmp_path / "firmware"
    shutil.copytree(typecheck.ROOT + "/firmware", fw)
    src = (fw / "tracking" / "tracker.py").read_text() + "\nimport machine\nimport time\n"
    where = {}
    for i, (call, message) in enumerate(WRONG):
        src += f"\n\ndef _probe{i}():\n    {call}\n"
        where[src.count("\n")] = message
    (fw / "tracking" / "tracker.py").write_text(src)
    p = typecheck.run([str(fw)], capture=True)
    assert p.returncode == 1, p.stdout + p.stderr
    errors = [ln for ln in p.stdout.splitlines() if ": error:" in ln]
    assert len(errors) == len(WRONG), errors           # those lines and nothing else
    for line, message in where.items():
        assert any(f"tracker.py:{line}:" in e and message in e for e in errors), (line, message, errors)
