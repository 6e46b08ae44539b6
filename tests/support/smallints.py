"""Host side (CPython): firmware modules loaded with every arithmetic intermediate checked
against the RP2040's small ints (|value| < 2**30), for the locators' tests (test_sensing.py,
test_presence.py). A value outside raises OverflowError where it is made."""
import ast
import importlib
import os
import sys

FIRMWARE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "firmware")


def chk(v):
    if isinstance(v, int) and not -(1 << 30) <= v < (1 << 30):
        raise OverflowError("intermediate %d is not a small int on the RP2040" % v)
    return v


def _checked(node):
    return ast.copy_location(ast.Call(ast.Name("chk", ast.Load()), [node], []), node)


class Checked(ast.NodeTransformer):
    """Wrap every arithmetic result (a binary operation, a negation, an augmented assignment to
    a name, an item or an attribute) in chk()."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return _checked(node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return _checked(node) if isinstance(node.op, ast.USub) else node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Subscript):
            load = ast.Subscript(t.value, t.slice, ast.Load())
        elif isinstance(t, ast.Attribute):
            load = ast.Attribute(t.value, t.attr, ast.Load())
        else:
            load = ast.Name(t.id, ast.Load())
        val = ast.Call(ast.Name("chk", ast.Load()), [ast.BinOp(load, node.op, node.value)], [])
        return ast.copy_location(ast.Assign([t], val), node)


def load_checked(name, parts=()):
    """The module firmware/<name>.py with every intermediate checked. parts: modules of its
    package that it imports (the hall locator's seams: sensing/hall_fit ...), loaded checked
    first and seen by its imports, so that their code is checked too. firmware/ must be on
    sys.path."""
    saved = []
    try:
        for part in parts:
            full = part.replace("/", ".")
            pkg, _, leaf = full.rpartition(".")
            package = importlib.import_module(pkg)
            saved.append((full, sys.modules.get(full), package, leaf, getattr(package, leaf, None)))
            m = load_checked(part)
            sys.modules[full] = m
            setattr(package, leaf, m)
        path = os.path.join(FIRMWARE, name + ".py")
        with open(path) as f:
            tree = Checked().visit(ast.parse(f.read()))
        ast.fix_missing_locations(tree)
        mod = type(sys)("checked_" + name.replace("/", "_"))
        mod.__dict__["chk"] = chk
        exec(compile(tree, path, "exec"), mod.__dict__)
        return mod
    finally:
        for full, old, package, leaf, attr in reversed(saved):
            if old is None:
                sys.modules.pop(full, None)
            else:
                sys.modules[full] = old
            if attr is None:
                if hasattr(package, leaf):
                    delattr(package, leaf)
            else:
                setattr(package, leaf, attr)
