"""Replay recorded chip runs (bench/pico_streams/node's directories) through a pico.mjs and say
whether every answer is the recorded one; each run's node CPU.

The chip is deterministic: a pico.mjs that changes only how fast the host emulates gives every
answer (bus writes, console bytes, resets, flash operations, times, the `stats` answer's
instructions and chip time) byte for byte as recorded. `cpu_us` is left out of the comparison.

    .venv/bin/python -m bench.pico_replay [--pico PICO_MJS] [--warm] STREAM_DIR...

Each run in a node process of its own (its CPU: the child's user + system), or with --warm as
sessions of one warm emulator (`pico.mjs --serve`, as the tests run them; the server's CPU from
/proc during each session), in the order given. One line a run: CPU s, same / DIFFER, an md5 of
the answers, the instructions, the test; then the total. Exit status 1 when any run differs.
Two replays of the same streams with two pico.mjs side by side (`&`) see the same load."""
import hashlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PICO = os.path.join(ROOT, "boardsim", "rp2040", "pico.mjs")


def norm(line):
    try:
        a = json.loads(line)
    except ValueError:
        return line
    a.pop("cpu_us", None)
    if a.get("stderr") == "":
        a.pop("stderr")
    return json.dumps(a, sort_keys=True)


def commands(d):
    with open(os.path.join(d, "in"), "rb") as f:
        return [line for line in f if line.strip()]


def pico_args(d):
    """The recorded process's arguments after pico.mjs (node's own flags before it, e.g.
    chip.py's --single-threaded, are not pico.mjs's: node on the PATH is the one replayed)."""
    argv = [a for a in open(os.path.join(d, "argv")).read().split("\n") if a]
    at = next(i for i, a in enumerate(argv) if a.endswith("pico.mjs"))
    return argv[at + 1:]


def own_process(node, pico, d):
    args = pico_args(d)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen([node, pico] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    got = []
    for line in commands(d):      # one at a time, as the host sends them
        p.stdin.write(line)
        p.stdin.flush()
        got.append(p.stdout.readline().decode("latin1").rstrip("\n"))
    p.stdin.close()
    p.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return got, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def proc_cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def session(server, path, d):
    args = pico_args(d)
    opt = dict(zip(args[::2], args[1::2]))
    op = {"cmd": "open", "image": opt["--image"], "bootrom": opt["--bootrom"], "env": {}}
    if "--fs" in opt:
        op["fs"] = opt["--fs"]
    c0 = proc_cpu(server.pid)
    for _ in range(100):          # (the last session's close may not have reached the server)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        w, r = s.makefile("wb"), s.makefile("rb")
        w.write((json.dumps(op) + "\n").encode())
        w.flush()
        first = json.loads(r.readline())
        if first.get("error") != "busy":
            break
        s.close()
        time.sleep(0.1)
    if "session" not in first:
        raise SystemExit(f"{d}: {first.get('error')}")
    got = []
    for line in commands(d):
        w.write(line)
        w.flush()
        got.append(r.readline().decode("latin1").rstrip("\n"))
    s.close()
    time.sleep(0.05)
    return got, proc_cpu(server.pid) - c0


def main(argv):
    pico = argv[argv.index("--pico") + 1] if "--pico" in argv else PICO
    warm = "--warm" in argv
    dirs = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] != "--pico")]
    node = shutil.which("node")
    server = path = None
    if warm:
        path = f"/tmp/pico-replay-{os.getpid()}.sock"
        server = subprocess.Popen([node, pico, "--serve", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        json.loads(server.stdout.readline())
    total, all_same = 0.0, True
    try:
        for d in dirs:
            got, cpu = session(server, path, d) if warm else own_process(node, pico, d)
            total += cpu
            with open(os.path.join(d, "out"), "rb") as f:
                rec = f.read().decode("latin1").splitlines()
            same = len(rec) == len(got) and all(norm(a) == norm(b) for a, b in zip(rec, got))
            all_same &= same
            md5 = hashlib.md5("\n".join(norm(x) for x in got).encode()).hexdigest()[:12]
            stats = [json.loads(x) for x in got if '"instructions"' in x]
            ins = stats[-1]["instructions"] if stats else -1
            test = open(os.path.join(d, "test")).read().strip().replace(" (call)", "")
            print(f"{cpu:7.2f} s  {'same' if same else 'DIFFER'}  {md5}  {ins:>11}  {test}", flush=True)
    finally:
        if server:
            server.stdin.close()
            server.wait()
    print(f"{total:7.2f} s  {'all the same' if all_same else 'SOME DIFFER'}  ({len(dirs)} runs, "
          f"{'sessions of one warm emulator' if warm else 'a node process each'})")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
