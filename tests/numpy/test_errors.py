"""Errors raise early (at trace time under jit), name the function, the operands' shapes and
dtypes, and point at the user's line (this file); unsupported features raise
NotImplementedError naming them."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.errors import ConcretizationError

HERE = os.path.basename(__file__)
F3 = np.ones(3, np.float32)
F4 = np.ones(4, np.float32)
M23 = np.ones((2, 3), np.float32)
I3 = np.ones(3, np.int32)


def _raises(exc, *patterns: str, jit: bool = True):
    """Run ``f`` eagerly and under jit; the message must match every pattern and name this
    file (the user's line)."""

    def run(f, *args):
        modes = [("eager", lambda: f(*args))]
        if jit:
            modes.append(("jit", lambda: fg.jit(f)(*args)))
        for mode, call in modes:
            with pytest.raises(exc) as info:
                call()
            msg = str(info.value)
            for p in patterns:
                assert re.search(p, msg), f"{mode}: {p!r} not in {msg!r}"
            assert HERE in msg, f"{mode}: the user's file is not named in {msg!r}"
            assert "jax/_src" not in msg

    return run


@pytest.mark.parametrize(
    "name",
    [
        "add",
        "subtract",
        "multiply",
        "true_divide",
        "maximum",
        "equal",
        "arctan2",
        "logaddexp",
        "power",
        "floor_divide",
        "where",
    ],
)
def test_broadcast_mismatch(name: str) -> None:
    f = getattr(fnp, name)
    if name == "where":
        _raises(ValueError, "where", r"f32\[3\]", r"f32\[4\]")(lambda a, b: f(a > 0, a, b), F3, F4)
    else:
        # same-rank mismatches are TypeErrors, as jnp's
        _raises(TypeError, name, r"f32\[3\]", r"f32\[4\]", "broadcast")(f, F3, F4)


def test_operator_mismatch_names_user_line() -> None:
    def f(a, b):
        return a * 2 + b  # <- the line the error must point at

    with pytest.raises(TypeError) as info:
        fg.jit(f)(F3, F4)
    msg = str(info.value)
    line = f.__code__.co_firstlineno + 1
    assert f"{HERE}:{line}" in msg and "add" in msg and "f32[3]" in msg and "f32[4]" in msg


@pytest.mark.parametrize(
    "f,args,patterns",
    [
        (fnp.bitwise_and, (F3, F3), ["bitwise_and", "integer or bool", r"f32\[3\]"]),
        (fnp.invert, (F3,), ["invert", r"f32\[3\]"]),
        (fnp.negative, (np.array([True]),), ["negative", "bool"]),
        (fnp.subtract, (np.array([True]), np.array([False])), ["subtract", "bool"]),
        (fnp.round, (np.array([True]),), ["round", "bool"]),
        (lambda a: fnp.power(a, -1), (I3,), ["power", "negative", r"i32\[3\]"]),
    ],
)
def test_dtype_errors(f, args, patterns) -> None:
    _raises((TypeError, ValueError), *patterns)(f, *args)


@pytest.mark.parametrize(
    "f,args,patterns",
    [
        (lambda a: fnp.sum(a, axis=2), (M23,), ["sum", "axis 2", "dimension 2"]),
        (lambda a: fnp.mean(a, axis=-3), (M23,), ["mean", "axis -3"]),
        (lambda a: fnp.argmax(a, axis=5), (M23,), ["argmax", "axis 5"]),
        (lambda a: fnp.cumsum(a, axis=2), (M23,), ["cumsum", "axis 2"]),
        (lambda a: fnp.moveaxis(a, 0, 3), (M23,), ["moveaxis", "axis 3"]),
        (lambda a: fnp.expand_dims(a, 4), (M23,), ["expand_dims", "axis 4"]),
        (lambda a: fnp.squeeze(a, 1), (M23,), ["squeeze", "axis 1", r"f32\[2,3\]"]),
        (lambda a: fnp.concatenate([a, a], axis=2), (M23,), ["concatenate", "axis 2"]),
        (lambda a: fnp.stack([a, a], axis=4), (M23,), ["stack", "axis 4"]),
        (lambda a: fnp.flip(a, 2), (M23,), ["flip", "axis 2"]),
        (lambda a: fnp.sum(a, axis=(0, 0)), (M23,), ["sum", "repeated axis"]),
        (lambda a: fnp.transpose(a, (0,)), (M23,), ["transpose", r"f32\[2,3\]"]),
        (lambda a: fnp.swapaxes(a, 0, 2), (M23,), ["swapaxes", "axis 2"]),
        (lambda a: fnp.linalg.norm(a, axis=3), (M23,), ["norm", "axis 3"]),
    ],
)
def test_axis_errors(f, args, patterns) -> None:
    _raises((ValueError, TypeError), *patterns)(f, *args)


@pytest.mark.parametrize(
    "f,args,patterns",
    [
        (lambda a: fnp.reshape(a, (4, 2)), (M23,), ["reshape", r"f32\[2,3\]", r"\(4, 2\)"]),
        (lambda a: fnp.reshape(a, (-1, -1)), (M23,), ["reshape", "one unknown"]),
        (lambda a: fnp.reshape(a, (5, -1)), (M23,), ["reshape", r"\(5, -1\)"]),
        (
            lambda a, b: fnp.matmul(a, b),
            (M23, M23),
            ["matmul", r"f32\[2,3\]", r"\(3,\) and \(2,\)"],
        ),
        (lambda a, b: fnp.dot(a, b), (M23, F4), ["dot|matmul", r"f32\[4\]"]),
        (lambda a, b: fnp.tensordot(a, b, axes=([1], [0])), (M23, F4), ["tensordot", r"f32\[4\]"]),
        (
            lambda a, b: fnp.concatenate([a, b]),
            (M23, F4),
            ["concatenate", r"f32\[2,3\]", r"f32\[4\]"],
        ),
        (
            lambda a, b: fnp.concatenate([a, b[None]], axis=0),
            (M23, F4),
            ["concatenate", "except for"],
        ),
        (lambda a, b: fnp.stack([a, b]), (F3, F4), ["stack", r"f32\[3\]", r"f32\[4\]"]),
        (lambda a: fnp.broadcast_to(a, (2, 4)), (F3,), ["broadcast_to", r"f32\[3\]", r"\(2, 4\)"]),
        (lambda a: fnp.split(a, 2), (F3,), ["split", "equal division"]),
        (lambda a, b: fnp.einsum("ij,jk->ik", a, b), (M23, M23), ["einsum", "label 'j'"]),
        (lambda a: fnp.einsum("ijk->i", a), (M23,), ["einsum", "ijk"]),
        (lambda a: fnp.tril(a), (F3,), ["tril", r"f32\[3\]"]),
        (lambda a: fnp.diagonal(a, 0, 0, 0), (M23,), ["diagonal", "axis1 and axis2"]),
        (lambda a: fnp.pad(a, ((1, 2), (3, 4))), (F3,), ["pad", "pad_width"]),
        (
            lambda a: fnp.take_along_axis(a, np.zeros(2, np.int32), 0),
            (M23,),
            ["take_along_axis", "dimensions"],
        ),
        (lambda a, m: fnp.sum(a, where=m), (M23, np.ones(4, bool)), ["sum", "where"]),
        (lambda a: fnp.max(np.zeros((0,), np.float32)) + a, (F3,), ["max", "zero-size"]),
        (lambda a: fnp.zeros((2, -1)) + a, (F3,), ["zeros", "negative"]),
        (lambda a: fnp.asarray([[1, 2], [3]]) + a, (F3,), ["asarray", "ragged"]),
        (lambda a: fnp.asarray("abc") + a, (F3,), ["asarray"]),
        (lambda a: fnp.zeros(3, dtype="not-a-dtype") + a, (F3,), ["zeros", "not-a-dtype"]),
    ],
)
def test_shape_errors(f, args, patterns) -> None:
    _raises((ValueError, TypeError), *patterns)(f, *args)


@pytest.mark.parametrize(
    "f,args,patterns",
    [
        # out-of-bounds reads clamp as in jax.numpy (tests/test_edge_derivatives.py)
        (lambda a: a[0, 0, 0], (M23,), ["too many indices"]),
        (lambda a: a[..., ...], (M23,), ["single ellipsis"]),
        (lambda a: a[np.array([0.5])], (F3,), ["integer", r"f64\[1\]"]),
        (lambda a: a[np.array([True, False])], (F3,), ["boolean index", r"\(2,\)"]),
        (lambda a: a[1.5], (F3,), ["only integers"]),
        (lambda a, b: a @ b, (M23, F4), ["matmul", r"f32\[4\]"]),
        (lambda a: a.at[np.array([0, 1])].set(np.ones(3)), (F3,), ["at\\[\\]\\.set", r"\(2,\)"]),
    ],
)
def test_index_errors(f, args, patterns) -> None:
    """Indexing of tracers is funcgrad's: checked under jit (eager jax.Array indexing is JAX's)."""
    with pytest.raises((IndexError, ValueError, TypeError)) as info:
        fg.jit(f)(*args)
    msg = str(info.value)
    for p in patterns:
        assert re.search(p, msg), f"{p!r} not in {msg!r}"
    assert HERE in msg, msg


def test_traced_values_where_static_ones_are_needed() -> None:
    with pytest.raises(ConcretizationError, match="boolean mask") as info:
        fg.jit(lambda a: a[a > 0])(F3)
    assert HERE in str(info.value)
    with pytest.raises(TypeError, match=r"arange.*static") as info:
        fg.jit(lambda n: fnp.arange(n))(3)
    assert HERE in str(info.value)
    with pytest.raises(TypeError, match="static") as info:
        fg.jit(lambda a, n: fnp.reshape(a, (n, -1)))(F4, 2)
    assert HERE in str(info.value)
    with pytest.raises(IndexError, match="slice") as info:  # (JAX's type)
        fg.jit(lambda a, i: a[i:])(F4, 1)
    assert HERE in str(info.value)
    with pytest.raises(ConcretizationError):
        fg.jit(lambda a: float(a.sum()))(F3)


@pytest.mark.parametrize(
    "f,feature",
    [
        (lambda a: fnp.reshape(a, (3,), order="A"), "order='A'"),
        (lambda a: fnp.sum(a, out=a), "out="),
        (lambda a: fnp.einsum(a, [0], [0]), "sublist"),
        (lambda a: fnp.round(a.astype(np.int32), -1), "negative decimals"),
        (lambda a: a[True], "Python bool"),
    ],
)
def test_not_implemented(f, feature: str) -> None:
    with pytest.raises(NotImplementedError) as info:
        fg.jit(f)(F3)
    assert feature in str(info.value)
    assert "funcgrad" in str(info.value)


def test_errors_are_early_not_from_xla() -> None:
    """Bad programs fail while tracing: nothing is compiled or run."""
    calls = []

    def f(a, b):
        calls.append(1)
        return fnp.matmul(a, b)

    jf = fg.jit(f)
    with pytest.raises(TypeError, match="matmul"):
        jf.trace(M23, M23)
    with pytest.raises(TypeError, match="matmul"):
        fg.make_ir(f)(M23, M23)
    assert len(calls) == 2
