"""A stand-in for mpremote in tests/test_hil.py: the MicroPython unix port plays the Pico.

The device's flash is the directory $FAKE_PICO_ROOT; `exec` and `run` start the unix port
there (cwd = the flash, -X heapsize=$FAKE_PICO_HEAP) and stream its console, `fs cp` copies
into it. Every call is logged to $FAKE_PICO_ROOT/../mpremote.log (one JSON list a line)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = os.environ["FAKE_PICO_ROOT"]
mp = os.environ["FAKE_PICO_MICROPYTHON"]
heap = os.environ.get("FAKE_PICO_HEAP", "2M")
args = sys.argv[1:]
with open(os.path.join(os.path.dirname(root), "mpremote.log"), "a") as f:
    f.write(json.dumps(args) + "\n")
if args[:1] == ["connect"]:
    args = args[2:]
env = {k: v for k, v in os.environ.items() if k != "MICROPYPATH"}


def micropython(script):
    r = subprocess.run([mp, "-X", f"heapsize={heap}", script], cwd=root, env=env)
    return r.returncode


if args[0] == "exec":
    fd, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(args[1])
    try:
        sys.exit(micropython(path))
    finally:
        os.unlink(path)
elif args[:2] == ["fs", "cp"]:
    dest = args[-1]
    assert dest.startswith(":") and dest.endswith("/"), dest
    d = os.path.join(root, dest[1:])
    if not os.path.isdir(d):
        sys.stderr.write(f"cp: {dest}: no such directory on the device\n")
        sys.exit(1)
    for src in args[2:-1]:
        shutil.copy(src, d)
elif args[0] == "run":
    sys.exit(micropython(args[1]))
else:
    sys.stderr.write(f"fake mpremote: unsupported {args}\n")
    sys.exit(2)
