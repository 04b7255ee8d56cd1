"""``funcgrad.lax``'s binary and ternary operations take operands of one dtype, a Python
scalar counting as its default dtype, with no promotion (``lax.add(1, 1.0)`` is a
``TypeError``, as JAX's tutorial shows), and loops keep a weakly typed carry weakly typed;
JAX 0.10 is the oracle for every case."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

#: operand kinds: Python scalars, NumPy scalars, arrays of several dtypes, a weak 0-d array
_KINDS: dict[str, Any] = {
    "int": 1,
    "float": 1.5,
    "complex": 1j,
    "bool": True,
    "np.float32": np.float32(1.5),
    "np.int32": np.int32(2),
    "f32": np.array([1.5, 2.0], np.float32),
    "f64": np.array([1.5, 2.0]),
    "i32": np.array([1, 2], np.int32),
    "f16": np.array([1.5, 2.0], np.float16),
    "u8": np.array([1, 2], np.uint8),
    "bool[]": np.array([True, False]),
}
_OPS = ["add", "sub", "mul", "div", "max", "min", "lt", "eq", "rem", "pow", "nextafter", "complex"]


def _outcome(fn: Any, *args: Any) -> str:
    try:
        r = fn(*args)
    except TypeError:
        return "TypeError"
    return f"{np.dtype(r.dtype).name}{' weak' if getattr(r, 'weak_type', False) else ''}"


def _jax_arg(v: Any) -> Any:
    return jnp.asarray(v) if isinstance(v, np.ndarray) else v


@pytest.mark.parametrize("op", _OPS)
def test_operand_dtypes_as_jax(op: str) -> None:
    wrong = []
    for a, x in _KINDS.items():
        for b, y in _KINDS.items():
            want = _outcome(getattr(jlax, op), _jax_arg(x), _jax_arg(y))
            got = _outcome(getattr(flax, op), x, y)
            if got != want:
                wrong.append(f"{op}({a}, {b}): funcgrad {got}, JAX {want}")
    assert not wrong, "\n".join(wrong)


def test_the_error_names_the_dtypes_and_the_line() -> None:
    with pytest.raises(
        TypeError,
        match=r"lax.add requires arguments to have the same dtypes, "
        r"got int64, float64(.|\n)*test_lax_operand_dtypes.py",
    ):
        flax.add(1, 1.0)
    with pytest.raises(TypeError, match="same dtypes, got float32, float16"):
        fg.jit(flax.clamp)(np.float32(0), np.ones(3, np.float16), np.float32(1))


@pytest.mark.parametrize(
    "args",
    [(0.0, np.ones(3, np.float32), 1.0), (np.float32(0), np.ones(3, np.float32), 1), (0, 5, 3)],
)
def test_clamp_operand_dtypes_as_jax(args: tuple) -> None:
    want = _outcome(jlax.clamp, *map(_jax_arg, args))
    assert _outcome(flax.clamp, *args) == want


def _loops(lax: Any, np_: Any) -> dict[str, Any]:
    return {
        "while": lambda: lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0),
        "while_float": lambda: lax.while_loop(lambda x: x < 3.0, lambda x: x * 2.0, 0.5),
        "while_strong_body": lambda: lax.while_loop(
            lambda x: x < 10, lambda x: x + np_.int32(1), 0
        ),
        "fori": lambda: lax.fori_loop(0, 10, lambda i, x: x + i, 0),
        "fori_float": lambda: lax.fori_loop(0, 4, lambda i, x: x * 1.5, 1.0),
        "scan_carry": lambda: lax.scan(lambda c, x: (c + 1, x), 0, np_.arange(3))[0],
        "scan_promoted": lambda: lax.scan(lambda c, x: (c + x, x), 0, np_.arange(3))[0],
    }


@pytest.mark.parametrize("case", list(_loops(jlax, jnp)))
def test_loops_keep_weakly_typed_carries_as_jax(case: str) -> None:
    want = _loops(jlax, jnp)[case]()
    got = _loops(flax, fnp)[case]()
    assert _outcome(lambda: got) == _outcome(lambda: want)
    np.testing.assert_array_equal(got, want)
    # the weak result promotes as JAX's does afterwards
    i8 = np.ones((), np.int8)
    assert (got + i8).dtype == (want + i8).dtype
