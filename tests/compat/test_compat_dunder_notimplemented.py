"""Tensor's binary operators return ``NotImplemented`` for an operand of an unknown type,
as PyTorch 2.13's do, so that Python asks the other operand (compat raised TypeError from
the in-place, shift and bitwise ones: ``t <<= obj`` never reached ``obj.__rlshift__``);
with a known operand they still compute PyTorch's values."""

from __future__ import annotations

import operator

import pytest

import compat.torch as ctorch

OPS = [
    f"__{r}{n}__"
    for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift")
    for r in ("", "r", "i")
] + [f"__{r}{n}__" for n in ("and", "or", "xor") for r in ("", "r", "i")]
OPS += ["__matmul__", "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]


class Unknown:
    pass


class Other:
    """Answers the reflected operators itself."""

    def __radd__(self, other):
        return ("reflected", "add")

    def __rsub__(self, other):
        return ("reflected", "sub")

    def __rlshift__(self, other):
        return ("reflected", "lshift")

    def __rand__(self, other):
        return ("reflected", "and")

    def __ror__(self, other):
        return ("reflected", "or")

    def __rxor__(self, other):
        return ("reflected", "xor")


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_unknown_operand_is_not_implemented_like_torch(real_torch, op, dtype):
    outs = []
    for t in (ctorch, real_torch):
        x = t.empty((), dtype=getattr(t, dtype))
        outs.append(getattr(x, op)(Unknown()) is NotImplemented)
    assert outs == [True, True]


SYMBOLS = {"iadd": "+=", "ilshift": "<<=", "iand": "&=", "ior": "|=", "isub": "-=", "ixor": "^="}


@pytest.mark.parametrize("name", sorted(SYMBOLS))
def test_inplace_operator_reaches_the_other_operand(real_torch, name):
    outs = []
    for t in (ctorch, real_torch):
        x = t.tensor([1, 2])
        outs.append(getattr(operator, name)(x, Other()))
    assert outs[0] == outs[1] == ("reflected", name[1:].replace("ilshift", "lshift"))


def _known(t):
    y = t.tensor([1, 2, 6])
    y += 1
    y <<= 1
    y |= t.tensor([1, 0, 1])
    y ^= 3
    y &= 14
    return [y.tolist(), (t.tensor([3]) << 1).tolist(), (1 << t.tensor([2])).tolist()]


def test_known_operands_like_torch(real_torch):
    assert _known(ctorch) == _known(real_torch)
