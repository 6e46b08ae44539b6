"""A clean clone's `make test` start-up: from make's start to the first test, commit by commit.

    python -m bench.clean_start COMMIT [COMMIT ...] [--rounds N] [--repo DIR] [--workdir DIR]

Each round clones the repository (default: this one) afresh for every commit in turn
(`git clone -q`, the commit checked out), runs `nice -n 10 make test` in it until every xdist
worker has begun its first test, stops it (its process group), then does the same again in each
clone (the second, warm run). Printed, one line a run, seconds after make began: when the venv
step ended (.venv/.installed's mtime), when pytest's controller was configured, when the first
and the last worker ended their collection, when the first test began; and the load. ZENN_CACHE
is passed on as it is (the built unix port and the chip image are kept there, as CI keeps them).

The marks are written by this module itself, loaded into make test's pytest processes as a
plugin (a copy in WORKDIR/clean-start-plugin on PYTHONPATH, so that commits without this file can
be measured: PYTEST_ADDOPTS="-p clean_start_marks", ZENN_START_MARKS=FILE); it does nothing else.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

MARKS = os.environ.get("ZENN_START_MARKS")


def _mark(what):
    with open(MARKS, "a") as f:
        f.write(f"{time.time():.3f} {os.environ.get('PYTEST_XDIST_WORKER', 'main')} {what}\n")


if MARKS:
    _first = []

    def pytest_configure(config):
        _mark("configure")

    def pytest_collection_finish(session):
        _mark("collected")

    def pytest_runtest_setup(item):
        if not _first:
            _first.append(item)
            _mark("first")


def run(clone, label, workers, plugin_dir):
    marks = os.path.join(clone, "start-marks.txt")
    if os.path.exists(marks):
        os.remove(marks)
    env = dict(os.environ, ZENN_START_MARKS=marks, PYTEST_ADDOPTS="-p clean_start_marks",
               PYTHONPATH=plugin_dir)
    load = open("/proc/loadavg").read().split()[0]
    t0 = time.time()
    with open(os.path.join(clone, "make.log"), "w") as log:
        p = subprocess.Popen(["nice", "-n", "10", "make", "test"], cwd=clone, env=env,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    while p.poll() is None:
        if os.path.exists(marks) and open(marks).read().count(" first") >= workers:
            break
        time.sleep(0.1)
    try:
        os.killpg(p.pid, signal.SIGTERM)
        time.sleep(1)
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    rows = [ln.split() for ln in open(marks)] if os.path.exists(marks) else []

    def at(what, pick=min):
        v = [float(r[0]) - t0 for r in rows if r[2] == what]
        return f"{pick(v):5.1f}" if v else "    -"
    stamp = os.path.join(clone, ".venv", ".installed")
    venv = f"{os.stat(stamp).st_mtime - t0:5.1f}" if os.stat(stamp).st_mtime > t0 else "    -"
    print(f"{label:28} load {load:>5}  venv step {venv}  configured {at('configure')}  "
          f"collected {at('collected')} - {at('collected', max)}  first test {at('first')}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    ap.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1),
                    help="make test's TEST_WORKERS (default: two a core, as the Makefile)")
    a = ap.parse_args()
    plugin_dir = os.path.join(a.workdir, "clean-start-plugin")
    os.makedirs(plugin_dir, exist_ok=True)
    with open(os.path.abspath(__file__)) as src, \
            open(os.path.join(plugin_dir, "clean_start_marks.py"), "w") as dst:
        dst.write(src.read())
    for r in range(1, a.rounds + 1):
        clones = []
        for c in a.commits:
            d = os.path.join(a.workdir, f"clean-start-{c}-{r}")
            subprocess.run(["rm", "-rf", d], check=True)
            subprocess.run(["git", "clone", "-q", a.repo, d], check=True)
            subprocess.run(["git", "-C", d, "checkout", "-q", c], check=True)
            clones.append((c, d))
        for c, d in clones:
            run(d, f"{c} clean, round {r}", a.workers, plugin_dir)
        for c, d in clones:
            run(d, f"{c} warm,  round {r}", a.workers, plugin_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
