"""CPython stand-in for MicroPython's `micropython` module (never seen by MicroPython: its
built-in module wins). Only what the firmware and the simulator use."""


def const(x):
    return x


_lock = [0]


def heap_lock():
    _lock[0] += 1


def heap_unlock():
    _lock[0] -= 1
    return _lock[0]


def heap_locked():
    return _lock[0]


def native(f):
    return f


def viper(f):
    """The function itself (its body runs as plain Python), or its CPython twin where
    boardsim/target/viper_twins.py has one (the same results, cheaper: the firmware's body is
    the twin's `firmware`); ZENN_PLAIN_VIPER=1 in the environment: the body always."""
    import os
    if os.environ.get("ZENN_PLAIN_VIPER") == "1":
        return f
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import viper_twins              # (once: then from sys.modules)
    finally:
        del sys.path[0]
    twin = viper_twins.TWINS.get((getattr(f, "__module__", None), getattr(f, "__name__", None)))
    if twin is None:
        return f
    twin.firmware = f
    return twin


def alloc_emergency_exception_buf(n):
    pass


def schedule(f, arg):
    f(arg)
    return True


def mem_info(*a):
    pass
