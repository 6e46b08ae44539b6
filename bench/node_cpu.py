"""The emulator's CPU an emulated instruction (docs/performance.md "Scheduling and V8's threads"):
a warm emulator (`node [FLAGS] pico.mjs --serve`), a 300 ms warm-up session, then SESSIONS
sessions that power the frozen image and run it MS of chip time at rest; per session the
instructions (pico.mjs `stats`, the same whatever the flags) and node's CPU (all its threads from
/proc, its main thread apart) with its threads' context switches.

    ZENN_CACHE=... .venv/bin/python -m bench.node_cpu [--flags=--single-threaded] [--sessions 2]
        [--ms 1000] [--sched batch] [--slice-ms 20]

Four at once, two with a flag and two without (the same conditions for both):
    for f in "" --single-threaded "" --single-threaded; do
        .venv/bin/python -m bench.node_cpu --flags="$f" & done; wait
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from boardsim.rp2040 import chip, images  # noqa: E402

TCK = os.sysconf("SC_CLK_TCK")


def set_slice(policy, slice_ms):
    """This process's policy and EEVDF slice (sched_setattr; inherited by node)."""
    import ctypes
    import platform

    class Attr(ctypes.Structure):
        _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32), ("flags", ctypes.c_uint64),
                    ("nice", ctypes.c_int32), ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                    ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64)]
    a = Attr(size=ctypes.sizeof(Attr), policy=policy, nice=os.getpriority(os.PRIO_PROCESS, 0),
             runtime=int(slice_ms * 1e6))
    nr = {"x86_64": 314, "aarch64": 274}[platform.machine()]
    if ctypes.CDLL(None, use_errno=True).syscall(nr, 0, ctypes.byref(a), 0) != 0:
        raise OSError(ctypes.get_errno(), "sched_setattr")


def threads(pid):
    """{tid: (CPU s, voluntary, involuntary switches)} of a process's threads."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{t}/status") as f:
                st = f.read()
        except OSError:
            continue
        vol = int(st.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        nvol = int(st.split("nonvoluntary_ctxt_switches:")[1].split()[0])
        out[t] = ((int(fields[11]) + int(fields[12])) / TCK, vol, nvol)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flags", default="", help="V8's flags for node (one argument: --flags=...)")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--ms", type=int, default=1000, help="chip time a session (ms)")
    ap.add_argument("--sched", choices=("normal", "batch"), default="normal")
    ap.add_argument("--slice-ms", type=float, default=0, help="the EEVDF slice (Linux >= 6.12)")
    a = ap.parse_args()
    policy = os.SCHED_BATCH if a.sched == "batch" else os.SCHED_OTHER
    if a.slice_ms:
        set_slice(policy, a.slice_ms)
    elif a.sched == "batch":
        os.sched_setscheduler(0, policy, os.sched_param(0))
    path = os.path.join(tempfile.mkdtemp(prefix="node-cpu-"), "s")
    p = subprocess.Popen(["node"] + a.flags.split() + [chip.PICO_JS, "--serve", path],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=chip.HERE)
    assert json.loads(p.stdout.readline())["serving"] == path
    image, bootrom = images.find_image(), images.find_bootrom()

    def session(ms):
        with chip.Pico(image, bootrom, server=path) as c:
            c.power(True)
            c.run(ms * 1000)
            return c.stats()["instructions"]

    session(300)
    n_all = cpu_all = main_all = 0
    pid = str(p.pid)
    for _ in range(a.sessions):
        t0, w0 = threads(p.pid), time.monotonic()
        n = session(a.ms)
        wall, t1 = time.monotonic() - w0, threads(p.pid)
        d = [tuple(x - y for x, y in zip(t1[t], t0.get(t, (0, 0, 0)))) for t in t1]
        cpu = sum(x[0] for x in d)
        main_cpu = t1[pid][0] - t0[pid][0]
        n_all, cpu_all, main_all = n_all + n, cpu_all + cpu, main_all + main_cpu
        print(f"instructions {n} cpu {cpu:.2f} s (main thread {main_cpu:.2f}) wall {wall:.2f} s "
              f"ns/instr {cpu / n * 1e9:.1f} switches {sum(x[1] for x in d)} "
              f"involuntary {sum(x[2] for x in d)}", flush=True)
    print(f"flags '{a.flags}' {a.sched} slice {a.slice_ms or 'default'} ms: {n_all} instructions, "
          f"{cpu_all / n_all * 1e9:.1f} ns/instr (main thread {main_all / n_all * 1e9:.1f}), "
          f"load {os.getloadavg()[0]:.1f}")
    p.stdin.close()
    p.wait()


if __name__ == "__main__":
    main()
