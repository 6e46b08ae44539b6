"""Type-check the firmware against the Pico's own API (issue 15): mypy (mypy.ini) with the
stubs of MicroPython's rp2 port for the Raspberry Pi Pico (pip micropython-rp2-rpi-pico-stubs,
and the micropython-stdlib-stubs it brings) in place of CPython's typeshed, so that `machine`,
`time`, `micropython`, `rp2` ... are the Pico's and a call that only the simulator's stand-in
has (boardsim/target/machine.py) is an error.

    .venv/bin/python -m tools.typecheck [FILES or DIRS]     (default: mypy.ini's `files`, firmware/)

The stubs install as top-level modules into site-packages, where mypy does not look for them; so
this gathers the two packages' own files (their RECORD) into a temporary directory by symbolic
links and gives it to mypy as MYPYPATH and as its typeshed (the stubs' `stdlib/`). Exit status:
mypy's (0: no errors).
"""
import glob
import os
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB_PACKAGES = ("micropython_rp2_rpi_pico_stubs", "micropython_stdlib_stubs")


def stub_tops(site):
    """The top-level files and folders the stub packages installed into site-packages."""
    tops = set()
    for pkg in STUB_PACKAGES:
        records = glob.glob(os.path.join(site, pkg + "-*.dist-info", "RECORD"))
        if not records:
            raise SystemExit(f"typecheck: {pkg} is not installed (pip install -r requirements.txt)")
        with open(records[0]) as f:
            for line in f:
                path = line.split(",")[0]
                top = path.split("/")[0]
                if path and not top.endswith(".dist-info") and top not in ("..", "README.md", "LICENSE.md",
                                                                          "pyproject.toml"):
                    tops.add(top)
    return sorted(tops)


def run(args=(), capture=False):
    site = sysconfig.get_paths()["purelib"]
    with tempfile.TemporaryDirectory(prefix="typings-") as typings:
        for top in stub_tops(site):
            os.symlink(os.path.join(site, top), os.path.join(typings, top))
        # the firmware's folder is a package base (its folders are packages without
        # __init__.py): firmware/ itself, or each folder given
        bases = [os.path.abspath(a) for a in args if os.path.isdir(a)] or [os.path.join(ROOT, "firmware")]
        env = dict(os.environ, MYPYPATH=os.pathsep.join([typings] + bases))
        cmd = [sys.executable, "-m", "mypy", "--config-file", os.path.join(ROOT, "mypy.ini"),
               "--custom-typeshed-dir", typings, "--no-incremental", "--cache-dir", os.devnull,
               "--no-error-summary" if capture else "--pretty"] + list(args)
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=capture, text=True)


def main():
    sys.exit(run(sys.argv[1:]).returncode)


if __name__ == "__main__":
    main()
