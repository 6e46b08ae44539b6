"""tools/build_unixport.py's cache: the unix port `make test` builds from MPY_DIR's tree is
built once, built again when what it was built from changed (a source or header of the tree,
the flags or the profile's workload) or its binary is not the one built, refused when it does
not run as the tree's MicroPython, and not used (the pip port is) where there is no tree.
On a fake tree and a fake compiler (make and the profile's games stubbed): no real build here.
The last test checks the port this run was handed, when it is a built one, is fresh."""
import json
import os

import pytest

from tools import build_unixport as B

VERSION_H = ("#define MICROPY_VERSION_MAJOR 1\n#define MICROPY_VERSION_MINOR 28\n"
             "#define MICROPY_VERSION_MICRO 0\n")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A fake MicroPython tree, a fake make (writes the object's gcc dependency list and a
    `micropython` that prints the version it was built for) and no profile's games; returns
    (tree, out, the list of make calls)."""
    mpy = tmp_path / "mpy"
    for rel, text in (("py/mpconfig.h", VERSION_H), ("py/vm.c", "int vm;\n"),
                      ("py/vm.h", "#define VM 1\n"), ("py/py.mk", "PY_O = vm.o\n"),
                      ("ports/unix/Makefile", "all:\n")):
        (mpy / rel).parent.mkdir(parents=True, exist_ok=True)
        (mpy / rel).write_text(text)
    calls = []

    def make(mpy_dir, build, copt, jobs, ldflags=""):
        calls.append(copt)
        os.makedirs(os.path.join(build, "py"), exist_ok=True)
        with open(os.path.join(build, "py", "vm.P"), "w") as f:
            # as gcc writes it, relative to ports/unix; the build's own headers are outputs
            f.write("%s/py/vm.o: ../../py/vm.c ../../py/vm.h \\\n %s/genhdr/qstrdefs.h\n"
                    "../../py/vm.h :\n" % (build, build))
        exe = os.path.join(build, "micropython")
        with open(exe, "w") as f:
            f.write("#!/bin/sh\necho %s\n" % B.tree_version(mpy_dir))
        os.chmod(exe, 0o755)
        return exe

    monkeypatch.setattr(B, "make", make)
    monkeypatch.setattr(B, "train", lambda exe: None)
    return str(mpy), str(tmp_path / "out"), calls


def test_built_once_then_used_as_it_is(tree, capsys):
    mpy, out, calls = tree
    exe = B.ensure(mpy, out)
    assert exe == os.path.join(out, "micropython") and len(calls) == 2    # profile, then use
    assert "-fprofile-generate" in calls[0] and "-fprofile-use" in calls[1]
    assert B.stale(out, mpy) is None
    assert B.ensure(mpy, out) == exe and len(calls) == 2
    stamp = json.load(open(os.path.join(out, "stamp.json")))
    # the tree's files by the dependency list, not the build's own headers
    assert os.path.join(mpy, "py", "vm.h") in stamp["inputs"]
    assert not any("genhdr" in p for p in stamp["inputs"])
    assert "MicroPython 1.28.0 built" in capsys.readouterr().err


@pytest.mark.parametrize("change", ["source", "header", "makefile"])
def test_a_changed_tree_builds_it_again(tree, change):
    mpy, out, calls = tree
    B.ensure(mpy, out)
    rel = {"source": "py/vm.c", "header": "py/vm.h", "makefile": "py/py.mk"}[change]
    with open(os.path.join(mpy, rel), "a") as f:
        f.write("/* changed */\n")
    assert "source files changed" in B.stale(out, mpy)
    B.ensure(mpy, out)
    assert len(calls) == 4 and B.stale(out, mpy) is None


def test_changed_flags_or_profile_workload_build_it_again(tree, monkeypatch):
    mpy, out, calls = tree
    B.ensure(mpy, out)
    monkeypatch.setattr(B, "EXAMPLES", B.EXAMPLES[:1])
    assert "profile's workload" in B.stale(out, mpy)
    B.ensure(mpy, out)
    assert len(calls) == 4
    assert B.stale(out, mpy, B.recipe(copt="-O3 -DNDEBUG")) is not None


def test_a_port_from_another_tree_or_not_the_one_built_is_stale(tree, tmp_path):
    mpy, out, calls = tree
    exe = B.ensure(mpy, out)
    with open(exe, "a") as f:
        f.write("# not built here\n")
    assert B.stale(out, mpy) == "its binary is not the one built"
    B.ensure(mpy, out)
    other = tmp_path / "other"
    os.rename(mpy, other)
    assert B.stale(out, str(other)).startswith("built from another tree")


def test_a_port_that_does_not_run_as_the_tree_says_is_refused(tree, monkeypatch, capsys):
    mpy, out, calls = tree
    real = B.make

    def wrong(*a, **k):
        exe = real(*a, **k)
        with open(exe, "w") as f:
            f.write("#!/bin/sh\necho 1.27.0\n")
        return exe
    monkeypatch.setattr(B, "make", wrong)
    assert B.ensure(mpy, out) is None
    assert "refused (does not run as MicroPython 1.28.0" in capsys.readouterr().err


def test_without_a_tree_or_when_the_build_fails_the_pip_port_is_used(tree, tmp_path, monkeypatch,
                                                                    capsys):
    mpy, out, calls = tree
    assert B.ensure(str(tmp_path / "none"), out) is None and not calls
    assert "the pip package's (no MicroPython tree" in capsys.readouterr().err

    def fails(*a, **k):
        raise B.subprocess.CalledProcessError(2, "make")
    monkeypatch.setattr(B, "make", fails)
    assert B.ensure(mpy, out) is None
    assert "the build failed" in capsys.readouterr().err


def test_the_built_port_this_run_was_handed_is_fresh():
    # make test hands the tests ZENN_MICROPYTHON=ZENN_CACHE/unixport/micropython where it built
    # it: that port is the one its stamp describes, of the tree it was built from
    exe = os.environ.get("ZENN_MICROPYTHON")
    stamp = os.path.join(os.path.dirname(exe or ""), "stamp.json")
    if not exe or not os.path.exists(stamp):
        pytest.skip("the tests run on the pip port or a port not built by tools/build_unixport")
    with open(stamp) as f:
        mpy_dir = json.load(f)["mpy_dir"]
    assert B.stale(os.path.dirname(exe), mpy_dir) is None


def test_the_heap_budgets_are_measured_on_the_pip_port(monkeypatch):
    # bench/_target.py (bench/memory.py's boots: tests/test_budgets.py) runs the venv's pip port
    # even when the games run on a built one: the budgets' bounds were set on it
    import importlib
    from bench import _target
    monkeypatch.setenv("ZENN_MICROPYTHON", "/elsewhere/micropython")
    again = importlib.reload(_target)
    assert again.MICROPYTHON == os.path.join(B.ROOT, ".venv", "bin", "micropython")
