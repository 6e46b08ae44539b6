"""Where tests/test_play.py's CPU goes (issue 15): the file's tests run (pytest, one process, no
xdist) while /proc is read every SAMPLE_S for the run's processes and their threads; the CPU of
each process (its last reading: at most SAMPLE_S of a process's end is lost) summed by kind.

    .venv/bin/python -m bench.play_page_cpu [--tree DIR] [--rounds N] [-- PYTEST ARGS]

--tree   the checkout whose tests/test_play.py runs (default: this one); its own venv is not
         needed: this interpreter runs it (the before/after of a change: an export of main with
         `git archive COMMIT | tar -x -C DIR`, interleaved with this tree)
Kinds: pytest's main thread (the tests and Playwright's client), its other threads (the play
server: the HTTP handlers, the clock thread, the firmware's pipes), the firmware (the unix port or
CPython behind boardsim/live.py), Playwright's node driver, chromium's browser process and its
renderer, GPU (software: --disable-gpu), utility (network, storage) and zygote processes. Also
the run's wall, its CPU from rusage (every process it waited for), and ZENN_TEST_CPU's sum.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TCK = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.1


def _stat(path):
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TCK    # ppid, CPU s


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def kind(cmd):
    if "chromium" in cmd or "chrome" in cmd:
        for t in ("renderer", "gpu-process", "utility", "zygote", "broker"):
            if f"--type={t}" in cmd:
                return "chromium " + t.replace("-process", "")
        return "chromium browser"
    if "node" in cmd.split(" ", 1)[0] or "playwright" in cmd:
        return "playwright driver (node)"
    if "live.py" in cmd or "micropython" in cmd:
        return "firmware (live.py)"
    return "other: " + cmd[:60]


def sample(root, seen, threads):
    """One reading of every process under root (and root's own threads)."""
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                procs[int(d)] = _stat(f"/proc/{d}/stat")
            except OSError:
                pass
    under = {root}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _cpu) in procs.items():
            if ppid in under and pid not in under:
                under.add(pid)
                grew = True
    for pid in under:
        if pid == root:
            continue
        # read each time: a process is seen between fork and exec (the browser's command line),
        # and a zygote's child renames itself a renderer
        k = kind(_cmdline(pid))
        if pid in seen and k == "other: ":      # a zombie's command line is empty
            k = seen[pid][0]
        seen[pid] = [k, procs[pid][1]]
    try:
        for t in os.listdir(f"/proc/{root}/task"):
            try:
                threads[int(t)] = _stat(f"/proc/{root}/task/{t}/stat")[1]
            except OSError:
                pass
    except OSError:
        pass


def run(tree, pytest_args):
    rec = tempfile.NamedTemporaryFile(prefix="play-cpu-", suffix=".jsonl", delete=False).name
    env = dict(os.environ, ZENN_TEST_CPU=rec)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
                          "tests/test_play.py"] + pytest_args, cwd=tree, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen, threads = {}, {}
    while p.poll() is None:
        sample(p.pid, seen, threads)
        time.sleep(SAMPLE_S)
    out = p.stdout.read().decode("utf-8", "replace")
    wall = time.monotonic() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    by = {}
    for k, cpu in seen.values():
        by[k] = by.get(k, 0.0) + cpu
    main = threads.get(p.pid, 0.0)
    by["pytest main thread"] = main
    by["pytest other threads (the server)"] = sum(threads.values()) - main
    with open(rec) as f:
        tests = [json.loads(ln) for ln in f if ln.strip()]
    os.unlink(rec)
    return {"rc": p.returncode, "tail": out.strip().splitlines()[-1:], "wall": wall, "cpu": total,
            "tests_cpu": sum(t["self"] + t["children"] for t in tests),
            "last_children": tests[-1]["children"] if tests else None, "by": by}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=ROOT)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args(argv)
    for i in range(a.rounds):
        r = run(os.path.abspath(a.tree), a.pytest_args)
        print(f"{a.tree} round {i + 1}: rc {r['rc']} {' '.join(r['tail'])}")
        print(f"  wall {r['wall']:.1f} s, CPU {r['cpu']:.2f} s (rusage), tests' CPU {r['tests_cpu']:.2f} s "
              f"(ZENN_TEST_CPU; the last test's children {r['last_children']})")
        for k, v in sorted(r["by"].items(), key=lambda kv: -kv[1]):
            print(f"  {v:7.2f} s  {k}")
        print(json.dumps({"tree": a.tree, **r}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
