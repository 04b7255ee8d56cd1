"""``funcgrad.lax.composite`` against ``jax.lax.composite`` (JAX 0.10.2): values eager and
under ``jit``, the ``stablehlo.composite`` op in the lowered text (name, attributes,
version, operand and result types), and JAX's errors (no derivative, no batching rule,
traced attributes and closed-over tracers)."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.errors as fge
import funcgrad.lax as fl
import funcgrad.numpy as fnp

X = np.array([0.25, 1.5, -2.0, 3.0], np.float32)


def _same(ours: Any, theirs: Any) -> None:
    a, b = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(a) == len(b)
    for o, t in zip(a, b, strict=True):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-6)


def _composite_ops(text: str) -> list[str]:
    """The ``stablehlo.composite`` lines and the private functions' signatures."""
    keep = re.compile(r"stablehlo\.composite|func\.func private @my\.")
    return [line.strip() for line in text.splitlines() if keep.search(line)]


def _both(make: Any) -> tuple:
    """``make(lax, np_)`` for JAX and for funcgrad."""
    return make(jax.lax, jnp), make(fl, fnp)


CASES = {
    "square": (lambda lax_, np_: partial(lax_.composite, name="my.square")(lambda x: x**2), (X,)),
    "versioned": (
        lambda lax_, np_: partial(lax_.composite, name="my.sq", version=2)(lambda x: x * x),
        (X,),
    ),
    "two_outputs": (
        lambda lax_, np_: lax_.composite(lambda x, y: (x + y, {"p": x * y}), "my.pair"),
        (X, X[::-1].copy()),
    ),
    "top_k_attribute": (
        lambda lax_, np_: (
            lambda x: lax_.composite(lambda x, *, k: lax_.top_k(x, k), "my.top_k")(x, k=3)
        ),
        (X,),
    ),
    "attributes": (
        lambda lax_, np_: (
            lambda x: lax_.composite(lambda x, **_: lax_.sin(x) / lax_.cos(x), "my.tangent")(
                x,
                dtype=np.dtype(np.float32),
                int=1,
                omit=None,
                str="bar",
                tensor=np.zeros((1, 2), np.float32),
            )
        ),
        (X,),
    ),
    "no_operands": (
        lambda lax_, np_: lax_.composite(lambda: np_.array(1.0, dtype=np.float32), "my.one"),
        (),
    ),
    "closed_over_constants": (
        lambda lax_, np_: lax_.composite(
            lambda x: np_.round(x / np.array([0.5, 0.4, 0.3, 0.2], np.float32)) + 2.0,
            "my.consts",
        ),
        (X,),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_lowered_op(case: str) -> None:
    make, args = CASES[case]
    theirs, ours = _both(make)
    _same(ours(*args), theirs(*args))
    _same(fg.jit(ours)(*args), jax.jit(theirs)(*args))
    text = fg.jit(ours).lower(*args).as_text()
    assert _composite_ops(text) == _composite_ops(jax.jit(theirs).lower(*args).as_text())
    assert _composite_ops(text)


def test_no_derivative_as_jax() -> None:
    theirs, ours = _both(CASES["square"][0])
    with pytest.raises(ValueError) as want:
        jax.grad(lambda x: theirs(x).sum())(X)
    for f in (fg.grad(lambda x: ours(x).sum()), lambda x: fg.jvp(ours, (x,), (x,))):
        with pytest.raises(ValueError) as got:
            f(X)
        # JAX's words, then a pointer at funcgrad's custom_jvp
        assert str(want.value).startswith("JVP rule for composite not implemented.")
        assert str(got.value).startswith(str(want.value))
        assert "funcgrad.custom_jvp" in str(got.value)


def test_no_batching_rule_as_jax() -> None:
    theirs, ours = _both(CASES["square"][0])
    with pytest.raises(NotImplementedError) as want:
        jax.vmap(theirs)(np.stack([X, X]))
    with pytest.raises(NotImplementedError) as got:
        fg.vmap(ours)(np.stack([X, X]))
    assert str(got.value) == str(want.value)


def test_traced_attribute_and_constant_refused() -> None:
    def attr(lax_: Any) -> Any:
        return lambda x: lax_.composite(lambda x, **_: x, "my.attr")(x, t=x + 1)

    with pytest.raises(jax.errors.UnexpectedTracerError, match="use numpy arrays instead"):
        jax.jit(attr(jax.lax))(X)
    with pytest.raises(fge.UnexpectedTracerError, match="use numpy arrays instead"):
        fg.jit(attr(fl))(X)

    def const(lax_: Any) -> Any:
        return lambda x, s: lax_.composite(lambda y: y / s, "my.c")(x)

    with pytest.raises(jax.errors.UnexpectedTracerError, match="as a constant"):
        jax.jit(const(jax.lax))(X, X)
    with pytest.raises(fge.UnexpectedTracerError, match="as a constant"):
        fg.jit(const(fl))(X, X)
    # a concrete value closed over is a constant of the decomposition
    _same(const(fl)(X, X + 1), const(jax.lax)(X, X + 1))


def test_inside_a_larger_jitted_function() -> None:
    def f(lax_: Any, np_: Any) -> Any:
        sq = lax_.composite(lambda x: x * x, "my.square")
        return lambda x: np_.sum(sq(np_.sin(x)) + sq(x)) * 2.0

    _same(fg.jit(f(fl, fnp))(X), jax.jit(f(jax.lax, jnp))(X))
