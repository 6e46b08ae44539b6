"""tests/support/smallints.py: the RP2040's small-int check that the locators' tests load the
firmware with (test_sensing.py, test_presence.py). Every arithmetic result it wraps, wherever it
is written (a function's code, where the check is written out inline, and module and class
bodies, comprehensions and lambdas, where it is a call), raises OverflowError for an int outside
-2**30 .. 2**30 - 1 and passes everything else unchanged."""
import pytest

import smallints

SOURCE = '''
import array

big = (1 << 29)


def add(a, b):
    return a + b


def neg(a):
    return -a


def aug_name(a, b):
    a *= b
    return a


def aug_item(buf, i, b):
    buf[i] += b
    return buf[i]


class Box:
    k = 3 * 4

    def __init__(self):
        self.v = 0

    def aug_attr(self, b):
        self.v -= b
        return self.v


def in_listcomp(xs, b):
    return [x * b for x in xs]


def in_genexp(xs, b):
    return sum(x << b for x in xs)


def in_iterable(n, b):
    return [i for i in range(n * b, n * b + 1)]


def in_lambda(b):
    return (lambda a: a - b)(0)


def nested(a, b, c):
    return (a + b) * c + 1


def other_types(s, t, f):
    return s + t, [0] * 3 + [1], f * 1e12, True + True
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fw") / "checkme"
    folder.parent.joinpath("checkme.py").write_text(SOURCE)
    saved = smallints.FIRMWARE
    smallints.FIRMWARE = str(folder.parent)
    try:
        yield smallints.load_checked("checkme")
    finally:
        smallints.FIRMWARE = saved


LIMIT = 1 << 30


def test_results_at_the_limits_pass_and_one_beyond_fails(mod):
    assert mod.add(LIMIT - 2, 1) == LIMIT - 1
    assert mod.add(-LIMIT + 1, -1) == -LIMIT
    with pytest.raises(OverflowError):
        mod.add(LIMIT - 1, 1)
    with pytest.raises(OverflowError):
        mod.add(-LIMIT, -1)
    assert mod.neg(LIMIT - 1) == -LIMIT + 1
    with pytest.raises(OverflowError):
        mod.neg(-LIMIT)


def test_every_place_an_intermediate_is_made_is_checked(mod):
    import array
    with pytest.raises(OverflowError):
        mod.aug_name(1 << 20, 1 << 10)
    assert mod.aug_name(1 << 20, 1 << 9) == 1 << 29
    buf = array.array("q", [LIMIT - 1])
    with pytest.raises(OverflowError):
        mod.aug_item(buf, 0, 1)
    assert mod.aug_item(buf, 0, -1) == LIMIT - 2
    box = mod.Box()
    assert mod.Box.k == 12
    with pytest.raises(OverflowError):
        box.aug_attr(LIMIT + 1)
    assert box.aug_attr(LIMIT) == -LIMIT
    with pytest.raises(OverflowError):
        mod.in_listcomp([1, 2, 1 << 29], 4)
    assert mod.in_listcomp([1, 2], 4) == [4, 8]
    with pytest.raises(OverflowError):
        mod.in_genexp([1, 1], 30)
    with pytest.raises(OverflowError):
        mod.in_iterable(1 << 15, 1 << 15)
    assert mod.in_iterable(3, 4) == [12]
    with pytest.raises(OverflowError):
        mod.in_lambda(LIMIT + 1)
    # the inner sum is checked where it is made, not only the whole
    with pytest.raises(OverflowError):
        mod.nested(LIMIT - 1, 1, 0)
    assert mod.nested(3, 4, 5) == 36


def test_other_types_pass_unchanged(mod):
    assert mod.other_types("ab", "cd", 1.0) == ("abcd", [0, 0, 0, 1], 1e12, 2)
    assert mod.add((1,), (2,)) == (1, 2)
    assert mod.add(1e300, 1e300) == 2e300
