"""What a whole `make test` run's per-test record (ZENN_TEST_CPU=FILE, tests/conftest.py) says
about the suite's time, and the dealing tables tests/conftest.py takes from it.

    python -m bench.suite_dealing FILE [--files [--before OLD]] [--tail N] [--table] [--min S]

--files  CPU and wall seconds per test file, the costliest first (--before: beside another run's)
--tail   each xdist worker's span and its last N tests: do the two end together, or does a long
         test dealt out late keep one busy alone?
--table  COSTLIEST (every work unit of --min CPU seconds and more: an xdist group, "@" and its
         name, with the sum of its tests, or a test alone) and LONGEST_FIRST (the files of 5 s
         and more), as Python for tests/conftest.py

A test's CPU is that of its process and of the children it waited for during it (a module
fixture's long-lived processes count where they are ended: such a figure is left out of the table
when it is over twice the test's wall time).
"""
import argparse
import collections
import json
import os


def load(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def short(nodeid):
    return nodeid.split("tests/", 1)[-1]


def unit_of(nodeid):
    """The work unit xdist deals out: "@group" when the node id carries its group, else the
    test (without the group)."""
    nid = short(nodeid)
    tail = nid[nid.rfind("]") + 1:] if "]" in nid else nid
    if "@" in tail:
        return "@" + nid.rsplit("@", 1)[1]
    return nid


def cpu(rec):
    return rec["self"] + rec["children"]


def per_file(recs):
    files = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in recs:
        f = files[os.path.basename(short(r["id"]).split("::")[0])]
        f[0] += cpu(r)
        f[1] += r["wall"]
        f[2] += 1
    return sorted(files.items(), key=lambda kv: -kv[1][0])


def units(recs):
    out = collections.defaultdict(lambda: [0.0, 0.0])
    for r in recs:
        u = out[unit_of(r["id"])]
        u[0] += cpu(r)
        u[1] += r["wall"]
    return out


def tail(recs, n):
    by = collections.defaultdict(list)
    for r in recs:
        by[r["worker"]].append(r)
    t0 = min(r["start"] for r in recs)
    lines = []
    for w in sorted(by):
        rs = sorted(by[w], key=lambda r: r["start"])
        end = max(r["start"] + r["wall"] for r in rs) - t0
        lines.append(f"{w}: {len(rs)} tests, ends {end:.1f} s after the first test began, "
                     f"CPU {sum(cpu(r) for r in rs):.1f} s")
        for r in rs[-n:]:
            lines.append(f"    at {r['start'] - t0:7.1f} s  wall {r['wall']:6.2f}  CPU {cpu(r):6.2f}  "
                         f"{short(r['id'])[:100]}")
    return lines


def table(recs, least):
    us = units(recs)
    rows = [(c, u) for u, (c, w) in us.items() if c >= least and c <= 2 * w + 0.5]
    rows.sort(key=lambda cu: -cu[0])
    lines = ["COSTLIEST = {"]
    lines += [f"    {json.dumps(u)}: {c:.1f}," for c, u in rows]
    lines.append("}")
    files = [f for f, (c, _w, _n) in per_file(recs) if c >= 5.0]
    lines.append("LONGEST_FIRST = (" + ", ".join(json.dumps(f) for f in files) + ")")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record", help="a ZENN_TEST_CPU file")
    ap.add_argument("--files", action="store_true")
    ap.add_argument("--before", help="another ZENN_TEST_CPU file, for --files")
    ap.add_argument("--tail", type=int, default=0)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--min", type=float, default=2.0, help="CPU seconds of a unit in COSTLIEST")
    a = ap.parse_args(argv)
    recs = load(a.record)
    print(f"{len(recs)} tests, CPU {sum(cpu(r) for r in recs):.1f} s, wall {sum(r['wall'] for r in recs):.1f} s "
          "(summed over the workers)")
    if a.files:
        old = dict(per_file(load(a.before))) if a.before else {}
        for f, (c, w, n) in per_file(recs):
            was = old.get(f)
            print(f"{f:45s} {n:4d} tests  CPU {c:7.1f}  wall {w:7.1f}"
                  + (f"   before: CPU {was[0]:7.1f}  wall {was[1]:7.1f}" if was else ""))
    if a.tail:
        print("\n".join(tail(recs, a.tail)))
    if a.table:
        print("\n".join(table(recs, a.min)))


if __name__ == "__main__":
    main()
