# Modules the firmware uses only now and then are imported for that and dropped again, to free
# their heap (docs/architecture.md).
import sys


def forget(name):
    # a module used at boot only: out of sys.modules, so that its code is collected once
    # nothing refers to it any more (imported again when it is asked for later). A submodule
    # ("storage.config") is an attribute of its package's module too: dropped from both.
    if name in sys.modules:
        del sys.modules[name]
    dot = name.rfind(".")
    if dot > 0:
        pkg = sys.modules.get(name[:dot])
        if pkg is not None and hasattr(pkg, name[dot + 1:]):
            delattr(pkg, name[dot + 1:])
