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


_LIMIT = 1 << 30
_HELD = "_chk_v"         # the inline check's variable (a local of the function checked)


def _checked_inline(node):
    """chk(node) written out in the expression, the call made only for an int outside:
    `(v if (v := node).__class__ is not int or -2**30 <= v < 2**30 else chk(v))`. The same
    check (an int outside raises where it is made; bools and other types pass) at about 60 %
    of a call's cost: test_presence's check runs 34 million of them."""
    def held():
        return ast.Name(_HELD, ast.Load())
    kept = ast.NamedExpr(ast.Name(_HELD, ast.Store()), node)
    not_int = ast.Compare(ast.Attribute(kept, "__class__", ast.Load()), [ast.IsNot()],
                          [ast.Name("int", ast.Load())])
    inside = ast.Compare(ast.Constant(-_LIMIT), [ast.LtE(), ast.Lt()],
                         [held(), ast.Constant(_LIMIT)])
    test = ast.BoolOp(ast.Or(), [not_int, inside])
    slow = ast.Call(ast.Name("chk", ast.Load()), [held()], [])
    return ast.copy_location(ast.IfExp(test, held(), slow), node)


class Checked(ast.NodeTransformer):
    """Wrap every arithmetic result (a binary operation, a negation, an augmented assignment to
    a name, an item or an attribute) in chk(): written out inline in a function's own code,
    a call elsewhere (module and class bodies, run once; comprehensions, where an assignment
    expression is not allowed in every part)."""

    def __init__(self):
        self._scopes = ["module"]

    def _scoped(self, kind, node):
        self._scopes.append(kind)
        try:
            self.generic_visit(node)
        finally:
            self._scopes.pop()
        return node

    def visit_FunctionDef(self, node):
        return self._scoped("function", node)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_ClassDef(self, node):
        return self._scoped("class", node)

    def visit_ListComp(self, node):
        return self._scoped("comprehension", node)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def _check(self, node):
        return _checked_inline(node) if self._scopes[-1] == "function" else _checked(node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return self._check(node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return self._check(node) if isinstance(node.op, ast.USub) else node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Subscript):
            load = ast.Subscript(t.value, t.slice, ast.Load())
        elif isinstance(t, ast.Attribute):
            load = ast.Attribute(t.value, t.attr, ast.Load())
        else:
            load = ast.Name(t.id, ast.Load())
        val = self._check(ast.BinOp(load, node.op, node.value))
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
