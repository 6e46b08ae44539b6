"""The scoreboard's app is split into modules (scoreboard/app.py: the loop; menus.py, correction.py,
tools.py, status_row.py: the parts Scoreboard inherits). Each keeps its own const()s, so that
MicroPython inlines them (a const imported from another module is a lookup at run time): here,
that the copies agree, and that the why codes index the status row's names."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "firmware", "scoreboard")


def consts(path):
    out = {}
    for node in ast.parse(open(path).read()).body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "const"):
            out[node.targets[0].id] = node.value.args[0].value
    return out


def test_the_modules_consts_agree():
    seen = {}
    for path in sorted(glob.glob(os.path.join(APP, "*.py"))):
        for name, v in consts(path).items():
            # app.py's MENU is the other modules' _MENU (private there: kept out of their dicts)
            seen.setdefault(name.lstrip("_") if name.isupper() else name, []).append(
                (os.path.basename(path), v))
    shared = {n: vs for n, vs in seen.items() if len(vs) > 1}
    assert {"MENU", "GAME", "PAGE_CORRECT", "BTN_OK", "WHY_NOT_HERE"} <= set(shared)
    for name, vs in shared.items():
        assert len({v for _, v in vs}) == 1, (name, vs)


def test_why_codes_index_the_status_rows_names():
    tree = ast.parse(open(os.path.join(APP, "status_row.py")).read())
    names = next(ast.literal_eval(n.value) for n in tree.body
                 if isinstance(n, ast.Assign) and n.targets[0].id == "WHY_NAMES")
    for path in glob.glob(os.path.join(APP, "*.py")):
        for name, v in consts(path).items():
            if name.startswith("_WHY_"):
                assert names[v] == name[5:].lower().encode(), (path, name)
