"""A tracer's binary operators with operands that are not arrays, against JAX.

JAX's arrays and tracers compute with arrays, NumPy values and Python numbers; a plain
list, tuple, set or dict is refused with a ``TypeError``, and any other object gets
``NotImplemented``, so Python calls the object's reflected method (a ``NamedTuple``
wrapping arrays with ``__rmul__``) or raises its own error. Each case runs inside
``jit`` in both libraries and compares what comes out: the result's kind, or the error
type and message (the tracer's class name aside).
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp


class Wrapped(NamedTuple):
    """A tuple subclass wrapping an array, with its own multiplication (JAX's case)."""

    arr: Any

    def __mul__(self, other: Any) -> Any:
        return Wrapped(self.arr * other)

    def __rmul__(self, other: Any) -> Any:
        return Wrapped(other * self.arr)


class Reflecting:
    """A user class answering the reflected operators."""

    def __radd__(self, other: Any) -> str:
        return "radd"

    def __rmatmul__(self, other: Any) -> str:
        return "rmatmul"

    def __gt__(self, other: Any) -> str:  # the reflection of ``<``
        return "gt"

    def __eq__(self, other: Any) -> Any:
        return "eq"

    __hash__ = object.__hash__


class Plain:
    """An object with no operators at all."""


OPERANDS = {
    "list": lambda: [1.0, 2.0, 3.0],
    "tuple": lambda: (1.0, 2.0, 3.0),
    "set": lambda: {1.0},
    "dict": lambda: {"a": 1.0},
    "None": lambda: None,
    "str": lambda: "a",
    "plain": Plain,
    "reflecting": Reflecting,
    "int": lambda: 2,
    "float32": lambda: np.float32(2.0),
    "ndarray": lambda: np.ones(3, np.float32),
}
OPS = {
    "add": operator.add,
    "radd": lambda x, y: y + x,
    "mul": operator.mul,
    "rmul": lambda x, y: y * x,
    "sub": operator.sub,
    "truediv": operator.truediv,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "rmatmul": lambda x, y: y @ x,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "ge": operator.ge,
}


def _outcome(jit: Any, np_: Any, op: Any, make: Any) -> tuple:
    """What ``op(x, operand)`` gives inside ``jit``: ``("value", kind)`` or the error."""
    seen: list = []

    def f(x: Any) -> Any:
        try:
            r = op(x, make())
        except (TypeError, ValueError) as e:
            kind = "TypeError" if isinstance(e, TypeError) else "ValueError"
            msg = str(e).replace("DynamicJaxprTracer", "Tracer").split("\n")[0]
            seen.append(("error", kind, msg))
        else:
            kind = r if isinstance(r, (str, bool)) else "array"
            seen.append(("value", kind))
        return x

    jit(f)(np_.ones(3, np.float32))
    return seen[0]


@pytest.mark.parametrize("operand", list(OPERANDS))
@pytest.mark.parametrize("op", list(OPS))
def test_binary_operator_operands(op: str, operand: str) -> None:
    """Values, deferral to the operand's reflected method and errors, as JAX's tracers."""
    want = _outcome(jax.jit, jnp, OPS[op], OPERANDS[operand])
    got = _outcome(funcgrad.jit, fnp, OPS[op], OPERANDS[operand])
    if want[0] == "error" and "integer scalar arrays" in want[2]:
        # ``"a" * x``: str's repetition asks for an index; both refuse (JAX's wording is
        # its own conversion error's)
        assert got[:2] == want[:2]
        return
    assert got == want


def test_named_tuple_defers_through_jit() -> None:
    """JAX's ``testDeferToNamedTuple``: the NamedTuple's own ``__mul__``/``__rmul__``
    decide, eagerly and under ``jit``, from either side; values as JAX's."""
    for lib, np_ in ((jax, jnp), (funcgrad, fnp)):
        a, b = Wrapped(np_.arange(4.0)), np_.full(4, 2.0)
        for r in (a * b, b * a, lib.jit(operator.mul)(a, b), lib.jit(operator.mul)(b, a)):
            assert isinstance(r, Wrapped)
            np.testing.assert_array_equal(np.asarray(r.arr), [0.0, 2.0, 4.0, 6.0])


def test_jax_array_protocol_operand() -> None:
    """An object with ``__jax_array__`` is taken as its array (in JAX too)."""

    class Protocol:
        def __jax_array__(self) -> Any:
            return jnp.arange(3.0)

    want = jax.jit(lambda x: x * Protocol())(jnp.ones(3))
    got = funcgrad.jit(lambda x: x * Protocol())(fnp.ones(3))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
