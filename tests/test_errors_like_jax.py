"""funcgrad's errors are JAX's: for the same bad call, funcgrad raises the exception type
that ``jax.numpy`` / ``jax.lax`` raise (JAX is run as the oracle, eagerly and under
``jit``, ``grad`` and ``vmap``), itself and early, with a message naming the operation,
the operands' shapes and dtypes and the user's line; a leaked tracer raises a
``TypeError`` and leaves the library usable."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import interp
from funcgrad.primitives import linalg as la
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh

HERE = os.path.basename(__file__)
F32 = np.float32
M23 = np.arange(6, dtype=F32).reshape(2, 3) + 1
M32 = np.ones((3, 2), F32)
F3 = np.ones(3, F32)
F4 = np.ones(4, F32)
S = r"f32\[2,3\]"  # how messages spell an operand M23, shape and dtype together
T = r"f32\[3,2\]"
V3, V4 = r"f32\[3\]", r"f32\[4\]"

ALL = ("eager", "jit", "grad", "vmap")
TRACED = ("jit", "grad", "vmap")  # operators / indexing of a jax.Array eagerly are JAX's own


class Case:
    """``fn(m, x, y)`` called with ``m`` = ``jnp`` and ``fnp`` (each case's lambda sits on
    one line: the line the error must name)."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        args: tuple = (M23, M32),
        patterns: tuple[str, ...] = (),
        absent: tuple[str, ...] = (),
        modes: tuple[str, ...] = ALL,
    ) -> None:
        self.name, self.fn, self.args = name, fn, args
        self.patterns, self.absent, self.modes = patterns, absent, modes
        self.line = fn.__code__.co_firstlineno


# fmt: off
CASES = [
    # binary operations: same-rank mismatches are TypeErrors, different ranks ValueErrors
    Case("add", lambda m, x, y: m.add(x, y), patterns=("add", S, T)),
    Case("add_rank", lambda m, x, y: m.add(x, y), (M23, F4), ("add", S, V4)),
    Case("multiply", lambda m, x, y: m.multiply(x, y), (F3, F4), ("multiply", V3, V4)),
    Case("maximum", lambda m, x, y: m.maximum(x, y), (F3, F4), ("maximum", V3, V4)),
    Case("arctan2", lambda m, x, y: m.arctan2(x, y), (F3, F4), ("arctan2", V3, V4)),
    Case("power", lambda m, x, y: m.power(x, y), (F3, F4), ("power", V3, V4)),
    Case("op_mul", lambda m, x, y: x * y, (F3, F4), ("multiply", V3, V4), modes=TRACED),
    Case("op_sub", lambda m, x, y: x - y, (M23, F4), ("subtract", S, V4), modes=TRACED),
    Case("clip", lambda m, x, y: m.clip(x, y, None), patterns=("clip|maximum", S, T)),
    # products: the function the user called is named
    Case("matmul", lambda m, x, y: m.matmul(x, y), (M23, M23), ("matmul", S, r"got \(3,\) and \(2,\)")),
    Case("matmul_vec", lambda m, x, y: m.matmul(x, y), (M23, F4), ("matmul", S, V4)),
    Case("op_matmul", lambda m, x, y: x @ y, (M23, F4), ("matmul", S, V4), modes=TRACED),
    Case("matmul_batch", lambda m, x, y: m.matmul(m.stack([x, x]), m.stack([y, y, y])), (M23, M32), ("matmul", r"f32\[2,2,3\]", r"f32\[3,3,2\]")),
    Case("dot", lambda m, x, y: m.dot(x, y), (M23, M23), ("dot", S), ("matmul",)),
    Case("dot_vec", lambda m, x, y: m.dot(x, y), (F3, F4), ("dot", V3, V4), ("matmul",)),
    Case("dot_nd", lambda m, x, y: m.dot(x, m.reshape(y, (1, 2, 3))), (M23, M23), ("dot", S, r"f32\[1,2,3\]"), ("tensordot",)),
    Case("vdot", lambda m, x, y: m.vdot(x, y), (F3, F4), ("vdot", V3, V4), ("matmul",)),
    Case("inner", lambda m, x, y: m.inner(x, y), patterns=("inner", S, T), absent=("tensordot",)),
    Case("tensordot", lambda m, x, y: m.tensordot(x, y, axes=([1], [1])), patterns=("tensordot", S, T)),
    Case("tensordot_k", lambda m, x, y: m.tensordot(x, y, axes=3), patterns=("tensordot", S, T)),
    Case("einsum_size", lambda m, x, y: m.einsum("ij,jk->ik", x, y), (M23, M23), ("einsum", S)),
    Case("einsum_rank", lambda m, x, y: m.einsum("ijk->i", x), patterns=("einsum", "ijk", S)),
    Case("einsum_out", lambda m, x, y: m.einsum("ij,jk->iz", x, y), patterns=("einsum", "z")),
    # shapes
    Case("reshape", lambda m, x, y: m.reshape(x, (4, 2)), patterns=("reshape", S, r"\(4, 2\)")),
    Case("reshape_m1", lambda m, x, y: m.reshape(x, (4, -1)), patterns=("reshape", S, r"\(4, -1\)")),
    Case("reshape_2m1", lambda m, x, y: m.reshape(x, (-1, -1)), patterns=("reshape", S, "one unknown")),
    Case("concatenate", lambda m, x, y: m.concatenate([x, y]), patterns=("concatenate", S, T)),
    Case("concat_rank", lambda m, x, y: m.concatenate([x, y]), (M23, F3), ("concatenate", S, V3)),
    Case("concat_axis", lambda m, x, y: m.concatenate([x, x], axis=2), patterns=("concatenate", "axis 2")),
    Case("hstack", lambda m, x, y: m.hstack([x, y]), patterns=("concatenate", S, T)),
    Case("stack", lambda m, x, y: m.stack([x, y]), patterns=("stack", S, T)),
    Case("stack_axis", lambda m, x, y: m.stack([x, x], axis=4), patterns=("stack", "axis 4")),
    Case("transpose_repeat", lambda m, x, y: m.transpose(x, (1, 1)), patterns=("transpose", S, r"\(2, 3\)", r"\(1, 1\)")),
    Case("transpose_short", lambda m, x, y: m.transpose(x, (0,)), patterns=("transpose", S, r"\(2, 3\)")),
    Case("transpose_axis", lambda m, x, y: m.transpose(x, (0, 2)), patterns=("transpose", "axis 2")),
    Case("moveaxis_repeat", lambda m, x, y: m.moveaxis(x, (0, 0), (0, 1)), patterns=("moveaxis", S)),
    Case("moveaxis_axis", lambda m, x, y: m.moveaxis(x, 0, 2), patterns=("moveaxis", "axis 2")),
    Case("swapaxes", lambda m, x, y: m.swapaxes(x, 0, 2), patterns=("swapaxes", "axis 2")),
    Case("broadcast_to", lambda m, x, y: m.broadcast_to(x, (4, 3, 2)), patterns=("broadcast_to", S, r"\(4, 3, 2\)")),
    Case("broadcast_to_rank", lambda m, x, y: m.broadcast_to(x, (3,)), patterns=("broadcast_to", S, r"\(3,\)")),
    Case("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y)[0], patterns=("broadcast_arrays", S, T)),
    Case("squeeze", lambda m, x, y: m.squeeze(x, axis=0), patterns=("squeeze", S, "axis 0")),
    Case("squeeze_axis", lambda m, x, y: m.squeeze(x, axis=2), patterns=("squeeze", "axis 2")),
    Case("expand_dims", lambda m, x, y: m.expand_dims(x, 3), patterns=("expand_dims", "axis 3")),
    Case("split", lambda m, x, y: m.split(x, 2, axis=1), patterns=("split", S, "equal division")),
    Case("split_axis", lambda m, x, y: m.split(x, 2, axis=2), patterns=("split", "axis 2")),
    Case("diagonal", lambda m, x, y: m.diagonal(x, 0, 1, 1), patterns=("diagonal", S)),
    Case("trace_same", lambda m, x, y: m.trace(x, 0, 1, -1), patterns=("trace", S)),
    Case("expand_dims_repeat", lambda m, x, y: m.expand_dims(x, (3, -1)), patterns=("expand_dims", "repeated axis")),
    Case("tensordot_lists", lambda m, x, y: m.tensordot(x, y, axes=([0], [0, 1])), patterns=("tensordot", "axes")),
    Case("argmax_empty", lambda m, x, y: m.argmax(x[:, :0], axis=1).astype(x.dtype), patterns=("argmax", r"f32\[2,0\]")),
    Case("max_empty", lambda m, x, y: m.max(x[:0]), patterns=("max", "zero-size")),
    Case("cross", lambda m, x, y: m.cross(x, m.ones((4, 3), x.dtype)), (M23, M23), ("multiply",)),
    # where
    Case("where", lambda m, x, y: m.where(x > 0, x, y), patterns=("where", S, T)),
    Case("where_cond", lambda m, x, y: m.where(y > 0, x, x), patterns=("where", S, r"bool\[3,2\]")),
    Case("where_none_x", lambda m, x, y: m.where(x > 0, None, 1.0), patterns=("where", "None", "position 1")),
    Case("where_none_y", lambda m, x, y: m.where(x > 0, x, None), patterns=("where", "None", "position 2")),
    # indexing and axes
    Case("index_rank", lambda m, x, y: x[0, 0, 0], patterns=("too many indices", "2-dimensional"), modes=TRACED),
    Case("take_axis", lambda m, x, y: m.take(x, np.array([0]), axis=3), patterns=("take", "axis 3")),
    Case("take_along", lambda m, x, y: m.take_along_axis(x, np.zeros(2, np.int32), 0), patterns=("take_along_axis", S)),
    Case("sum_axis", lambda m, x, y: m.sum(x, axis=2), patterns=("sum", "axis 2", "dimension 2")),
    Case("sum_repeat", lambda m, x, y: m.sum(x, axis=(0, 0)), patterns=("sum", "repeated axis")),
    Case("max_axis", lambda m, x, y: m.max(x, axis=-3), patterns=("max", "axis -3")),
    Case("mean_axis", lambda m, x, y: m.mean(x, axis=2), patterns=("mean", "axis 2")),
    Case("var_axis", lambda m, x, y: m.var(x, axis=5), patterns=("var", "axis 5")),
    Case("argmax_axis", lambda m, x, y: m.argmax(x, axis=2).astype(x.dtype), patterns=("argmax", "axis 2")),
    Case("cumsum_axis", lambda m, x, y: m.cumsum(x, axis=2), patterns=("cumsum", "axis 2")),
    Case("flip_axis", lambda m, x, y: m.flip(x, 2), patterns=("flip", "axis 2")),
    Case("norm_axis", lambda m, x, y: m.linalg.norm(x, axis=3), patterns=("norm", "axis 3")),
    # dtypes
    Case("bitwise_float", lambda m, x, y: m.bitwise_and(x, x), patterns=("bitwise_and", S)),
    Case("invert_float", lambda m, x, y: m.invert(x), patterns=("invert", S)),
    Case("negative_bool", lambda m, x, y: m.negative(x > 0), patterns=("negative", "bool")),
    Case("subtract_bool", lambda m, x, y: m.subtract(x > 0, x > 1), patterns=("subtract", "bool")),
]
# fmt: on


def _sum(m: Any, v: Any) -> Any:
    leaves = v if isinstance(v, (list, tuple)) else [v]
    return sum(m.sum(m.asarray(v).astype(m.float32)) for v in leaves)


def _run(lib: str, mode: str, case: Case) -> BaseException | None:
    """Run ``case`` with JAX or funcgrad under ``mode``; the exception it raised, if any."""
    m, tr = (jnp, jax) if lib == "jax" else (fnp, fg)

    def g(*a: Any) -> Any:
        return case.fn(m, *a)

    # jax arrays in: a NumPy array would make jnp.reshape etc. defer to NumPy
    args = [jnp.asarray(a) for a in case.args]
    try:
        if mode == "eager":
            g(*args)
        elif mode == "jit":
            tr.jit(g)(*args)
        elif mode == "grad":
            tr.grad(lambda *a: _sum(m, g(*a)))(*args)
        else:
            tr.vmap(g)(*[jnp.stack([a, a]) for a in args])
    except Exception as e:
        return e
    return None


@pytest.mark.parametrize(
    "case,mode",
    [(c, mode) for c in CASES for mode in c.modes],
    ids=[f"{c.name}-{mode}" for c in CASES for mode in c.modes],
)
def test_same_exception_type_as_jax(case: Case, mode: str) -> None:
    want = _run("jax", mode, case)
    assert want is not None, f"JAX accepts {case.name} under {mode}: not an error case"
    got = _run("fg", mode, case)
    assert got is not None, f"funcgrad accepts {case.name} under {mode}; JAX raises {want!r}"
    assert isinstance(got, type(want)), (
        f"{case.name} under {mode}: funcgrad raised {type(got).__name__}: {got}\n"
        f"JAX raises {type(want).__name__}: {want}"
    )
    msg = str(got)
    for p in case.patterns:
        assert re.search(p, msg), f"{case.name} under {mode}: {p!r} not in {msg!r}"
    for p in case.absent:
        assert p not in msg, f"{case.name} under {mode}: {p!r} named in {msg!r}"
    # funcgrad's own error (not JAX's, not XLA's), pointing at the user's line
    assert f"{HERE}:{case.line}" in msg, f"{case.name} under {mode}: line not named in {msg!r}"
    assert "jax/_src" not in msg


def test_where_none_is_type_error_naming_none() -> None:
    with pytest.raises(TypeError, match="None") as info:
        fnp.where(F3 > 0, None, 1.0)
    with pytest.raises(type(info.value)):
        jnp.where(F3 > 0, None, 1.0)
    with pytest.raises(TypeError, match="None"):
        fg.jit(lambda c: fnp.where(c > 0, c, None))(F3)


def test_axis_error_is_both_value_and_index_error() -> None:
    """jnp raises ValueError (sum) or IndexError (mean) for an axis out of range; funcgrad's
    AxisError is both, as NumPy's."""
    with pytest.raises(ValueError):
        jnp.sum(jnp.asarray(M23), axis=2)
    with pytest.raises(IndexError):
        jnp.mean(jnp.asarray(M23), axis=2)
    for f in (fnp.sum, fnp.mean):
        with pytest.raises(np.exceptions.AxisError) as info:
            f(M23, axis=2)
        assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)


def test_transpose_repeated_axis_names_shape() -> None:
    with pytest.raises(TypeError) as info:
        fg.jit(lambda a: fnp.transpose(a, (0, 0)))(M23)
    msg = str(info.value)
    assert "transpose" in msg and "(2, 3)" in msg and "(0, 0)" in msg and HERE in msg
    with pytest.raises(TypeError, match=re.escape("(2, 3)")):
        jnp.transpose(jnp.asarray(M23), (0, 0))


def test_errors_are_raised_while_tracing() -> None:
    """Under jit the error comes from tracing: nothing is compiled."""
    calls = []

    def f(a, b):
        calls.append(1)
        return fnp.dot(a, b)

    with pytest.raises(TypeError, match="dot"):
        fg.jit(f).trace(M23, M23)
    with pytest.raises(TypeError, match="dot"):
        fg.jit(f).lower(M23, M23)
    assert len(calls) == 2


# --------------------------------------------------------------------------- loops


# fmt: off
# (id, the function named, the carry path named, the loop)
LOOPS = [
    ("while_dtype", "while_loop", "c", lambda L, m: L.while_loop(lambda c: c < 3, lambda c: (c + 1).astype(m.float32), m.int32(0))),
    ("while_shape", "while_loop", "c", lambda L, m: L.while_loop(lambda c: c[0] < 3, lambda c: m.concatenate([c, c]), m.zeros(2, m.float32))),
    ("fori_dtype", "fori_loop", "c", lambda L, m: L.fori_loop(0, 3, lambda i, c: c * m.float32(2), m.int32(1))),
    ("fori_tuple", "fori_loop", "c[1]", lambda L, m: L.fori_loop(0, 3, lambda i, c: (c[0], c[1] * m.float32(2)), (m.float32(0), m.int32(1)))),
    ("scan_dtype", "scan", "c", lambda L, m: L.scan(lambda c, x: (c * x, c), m.int32(1), m.ones(3, m.float32))),
]
# fmt: on


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name,fname,path,fn", LOOPS, ids=[c[0] for c in LOOPS])
def test_loop_carry_type_errors(name: str, fname: str, path: str, fn: Callable, jit: bool) -> None:
    def run(L: Any, m: Any, tr: Any) -> BaseException:
        call = (lambda: tr.jit(lambda: fn(L, m))()) if jit else (lambda: fn(L, m))
        with pytest.raises(Exception) as info:
            call()
        return info.value

    want = run(jax.lax, jnp, jax)
    got = run(fg, fnp, fg)
    assert isinstance(got, type(want)), f"{got!r} vs JAX's {want!r}"
    msg = str(got)
    assert msg.startswith(fname) and f"{HERE}:{fn.__code__.co_firstlineno}" in msg, msg
    # the user's carry (named as the body's parameter), not funcgrad's counter
    assert f"input carry {path} has" in msg or f"carry component {path} has" in msg, msg
    if name == "while_shape":
        assert "float32[2]" in msg and "float32[4]" in msg, msg
    else:  # NumPy spelling of both dtypes, not only shapes
        assert "int32" in msg and "float32" in msg, msg


def test_fori_loop_traced_bounds_names_fori_loop() -> None:
    def f(n):
        return fg.fori_loop(0, n, lambda i, c: c * fnp.float32(2), fnp.int32(1))

    with pytest.raises(TypeError) as info:
        fg.jit(f)(3)
    msg = str(info.value)
    assert "fori_loop" in msg and "int32" in msg and "float32" in msg and HERE in msg
    assert "The input carry c has type int32[]" in msg  # the user's carry, not (i, upper, c)
    with pytest.raises(TypeError):
        jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c * jnp.float32(2), jnp.int32(1)))(3)


@pytest.mark.parametrize(
    "fname,fn",
    [
        ("while_loop", lambda L: L.while_loop(lambda c: c[0] < 1, lambda c: c[0], (0.0, 1.0))),
        ("fori_loop", lambda L: L.fori_loop(0, 3, lambda i, c: (c, c), 1.0)),
        ("fori_loop", lambda L: L.fori_loop(0, 3, lambda i, c: c[0], (1.0, 2.0))),
        ("scan", lambda L: L.scan(lambda c, x: ((c, c), x), 1.0, np.ones(2))),
    ],
)
def test_loop_carry_structure_errors(fname: str, fn: Callable) -> None:
    with pytest.raises(Exception) as want:
        fn(jax.lax)
    with pytest.raises(Exception) as got:
        fn(fg)
    assert isinstance(got.value, type(want.value)), f"{got.value!r} vs JAX's {want.value!r}"
    msg = str(got.value)
    assert msg.startswith(fname) and "structure" in msg and HERE in msg, msg
    # the user's carry structure only (not funcgrad's counter): one of them is a bare leaf
    assert "must have the same pytree structure" in msg and "pytree leaf" in msg, msg


@pytest.mark.parametrize(
    "fn",
    [
        lambda L, m: L.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0),
        lambda L, m: L.fori_loop(0, 3, lambda i, c: c + 1.5, 0),
        lambda L, m: L.fori_loop(0, 3, lambda i, c: (c[0] + 0.5, c[1] * 2), (0, 1.0)),
        lambda L, m: L.scan(lambda c, x: (c + x, c), 0, m.ones(3))[0],
        lambda L, m: L.while_loop(lambda c: c < 3, lambda c: c + m.float32(1), 0),
    ],
)
def test_weak_initial_carry_takes_the_body_dtype(fn: Callable) -> None:
    """A Python-scalar initial carry joins with the dtype the body gives it, as JAX."""
    want = fn(jax.lax, jnp)
    got = fn(fg, fnp)
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w))


# --------------------------------------------------------------------------- leaked tracers


def _leak(transform: str) -> Any:
    box: list = []

    def f(x):
        box.append(x)
        return fnp.sum(x * 2.0)

    x = np.ones(3, F32)
    if transform == "grad":
        fg.grad(f)(x)
    elif transform == "jit":
        fg.jit(f)(x)
    elif transform == "vmap":
        fg.vmap(f)(np.ones((2, 3), F32))
    elif transform == "jvp":
        fg.jvp(f, (x,), (x,))
    else:
        fg.vjp(f, x)
    return box[0]


USES = {
    "op": lambda t: fnp.sin(t),
    "operator": lambda t: t + np.ones(3, F32),
    "jit_closure": lambda t: fg.jit(lambda a: a * t)(np.ones(3, F32)),
    "grad_closure": lambda t: fg.grad(lambda a: fnp.sum(a * t))(np.ones(3, F32)),
    "vmap_closure": lambda t: fg.vmap(lambda a: a * fnp.sum(t))(np.ones(3, F32)),
    "bool": lambda t: bool(t[0] > 0),
    "float": lambda t: float(fnp.sum(t)),
    "cond": lambda t: fg.cond(True, lambda: t, lambda: t),
}


def test_leaked_tracer_error_is_a_type_error_as_jax() -> None:
    assert issubclass(jax.errors.UnexpectedTracerError, TypeError)
    assert issubclass(fg.LeakedTracerError, TypeError)
    assert fg.errors.UnexpectedTracerError is fg.LeakedTracerError


def _still_usable() -> None:
    """No builder left behind; grad, jit and vmap give JAX's values."""
    assert not interp.is_tracing() and interp.current_builder() is None
    x = np.linspace(0.1, 1.0, 3, dtype=F32)
    np.testing.assert_allclose(
        fg.grad(lambda a: fnp.sum(fnp.sin(a) * a))(x),
        jax.grad(lambda a: jnp.sum(jnp.sin(a) * a))(x),
        rtol=1e-6,
    )
    np.testing.assert_allclose(fg.jit(lambda a: a * 2 + 1)(x), x * 2 + 1)
    np.testing.assert_allclose(
        fg.vmap(lambda a: fnp.dot(a, a))(np.stack([x, x])), np.full(2, x @ x), rtol=1e-6
    )


@pytest.mark.parametrize("use", list(USES))
@pytest.mark.parametrize("transform", ["grad", "jit", "vmap", "jvp", "vjp"])
def test_leaked_tracer_raises_and_library_stays_usable(transform: str, use: str) -> None:
    t = _leak(transform)
    with pytest.raises(fg.LeakedTracerError) as info:
        USES[use](t)
    assert isinstance(info.value, TypeError)
    assert transform in str(info.value) and HERE in str(info.value)
    _still_usable()


@pytest.mark.parametrize(
    "outer",
    [
        lambda f: fg.grad(f)(np.ones(3, F32)),
        lambda f: fg.jit(f)(np.ones(3, F32)),
        lambda f: fg.vmap(f)(np.ones((2, 3), F32)),
        lambda f: fg.grad(lambda x: fg.jit(f)(x))(np.ones(3, F32)),
        lambda f: fg.jit(lambda x: fg.vmap(f)(x[None]))(np.ones(3, F32)),
    ],
)
def test_errors_inside_transforms_leave_no_builder_behind(outer: Callable) -> None:
    def bad(x):
        return fnp.sum(fnp.reshape(x, (4, 5)))

    with pytest.raises(TypeError, match="reshape"):
        outer(bad)
    _still_usable()

    def boom(x):
        raise RuntimeError("user error")

    with pytest.raises(RuntimeError, match="user error"):
        outer(boom)
    _still_usable()


# --------------------------------------------------------------------------- primitives vs lax


def _lax_or_fg(L: Any) -> tuple[Any, Any, Any]:
    """(shape ops, reductions, dot_general) for ``jax.lax`` or funcgrad's primitives."""
    if L is lax:
        return lax, lax, lax
    return sh, rd, la


# fmt: off
PRIMS = [
    ("transpose_repeat", lambda L, x: _lax_or_fg(L)[0].transpose(x, (0, 0)), ("transpose", S)),
    ("transpose_short", lambda L, x: _lax_or_fg(L)[0].transpose(x, (0,)), ("transpose", S)),
    ("concatenate", lambda L, x: _lax_or_fg(L)[0].concatenate([x, x.T], 0) if L is lax else sh.concatenate(x, x.T, dimension=0), ("concatenate", S, T)),
    ("concatenate_rank", lambda L, x: _lax_or_fg(L)[0].concatenate([x, x[0]], 0) if L is lax else sh.concatenate(x, x[0], dimension=0), ("concatenate", S, V3)),
    ("concatenate_dim", lambda L, x: _lax_or_fg(L)[0].concatenate([x, x], 2) if L is lax else sh.concatenate(x, x, dimension=2), ("concatenate", S)),
    ("broadcast_in_dim", lambda L, x: _lax_or_fg(L)[0].broadcast_in_dim(x, (3, 3), (0, 1)), ("broadcast_in_dim", S)),
    ("broadcast_in_dim_rank", lambda L, x: _lax_or_fg(L)[0].broadcast_in_dim(x, (3,), (0,)), ("broadcast_in_dim", S)),
    ("broadcast_in_dim_order", lambda L, x: _lax_or_fg(L)[0].broadcast_in_dim(x, (2, 3, 4), (1, 0)), ("broadcast_in_dim", S)),
    ("squeeze", lambda L, x: _lax_or_fg(L)[0].squeeze(x, (0,)), ("squeeze", S)),
    ("slice_limit", lambda L, x: _lax_or_fg(L)[0].slice(x, (0, 0), (3, 3)), ("slice", S)),
    ("slice_order", lambda L, x: _lax_or_fg(L)[0].slice(x, (1, 0), (0, 3)), ("slice", S)),
    ("rev", lambda L, x: _lax_or_fg(L)[0].rev(x, (2,)), ("rev", S)),
    ("pad", lambda L, x: _lax_or_fg(L)[0].pad(x, np.float32(0), ((1, 1, 0),)), ("pad", S)),
    ("dot_general", lambda L, x: _lax_or_fg(L)[2].dot_general(x, x, (((1,), (0,)), ((), ()))), ("dot_general", S)),
    ("dot_general_count", lambda L, x: _lax_or_fg(L)[2].dot_general(x, x.T, (((1,), ()), ((), ()))), ("dot_general", S, T)),
]
# fmt: on


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name,fn,patterns", PRIMS, ids=[p[0] for p in PRIMS])
def test_primitive_errors_as_lax(name: str, fn: Callable, patterns: tuple, jit: bool) -> None:
    """funcgrad's primitives reject what ``jax.lax`` rejects, with lax's exception type."""
    with pytest.raises(Exception) as want:
        jax.jit(lambda x: fn(lax, x))(M23)
    with pytest.raises(Exception) as got:
        if jit:
            fg.jit(lambda x: fn(None, x))(M23)
        else:
            fn(None, M23)
    assert isinstance(got.value, type(want.value)), f"{got.value!r} vs lax's {want.value!r}"
    msg = str(got.value)
    for p in patterns:
        assert re.search(p, msg), f"{p!r} not in {msg!r}"
    assert f"{HERE}:{fn.__code__.co_firstlineno}" in msg, msg


def test_escaped_tracer_message_as_jax() -> None:
    """The leak is reported in JAX's words: the escaped value's type and the line that
    created it (the phrases JAX's own tests match)."""

    def leak(L: Any, m: Any) -> Any:
        box = []

        def body(c, _):
            box.append(m.add(m.ones((4, 3), m.int32), 1))
            return c, None

        L.scan(body, 0, None, length=2)
        return box[0]

    msgs = []
    for L, m, tr in ((jax.lax, jnp, jax), (fg, fnp, fg)):
        t = leak(L, m)
        with pytest.raises(Exception) as info:
            tr.jit(lambda a: a + t)(np.ones((4, 3), np.int32))
        msgs.append((type(info.value), str(info.value)))
    (jt, jmsg), (ft, fmsg) = msgs
    assert jt is jax.errors.UnexpectedTracerError and ft is fg.errors.UnexpectedTracerError
    assert issubclass(ft, TypeError) and issubclass(jt, TypeError)
    for phrase in ("Encountered an unexpected tracer", "int32[4,3]", "global state"):
        assert phrase in jmsg and phrase in fmsg, (phrase, fmsg)
    assert "was created on line" in jmsg
    assert "was created on line " in fmsg and f"{HERE}:" in fmsg.split("created on line")[1]
