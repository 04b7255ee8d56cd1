"""funcgrad.nn against jax.nn: values, dtypes, weak types and gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from fnp_testutil import (
    BF16,
    F16,
    F32,
    I32,
    assert_same,
    check,
    check_abstract,
    check_batch,
    operand,
    raises_same,
    rand,
    seeds,
    summed,
    tail,
)
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.nn as fnn

ELEMENTWISE = [
    "relu",
    "relu6",
    "sigmoid",
    "log_sigmoid",
    "softplus",
    "silu",
    "swish",
    "gelu",
    "leaky_relu",
    "elu",
    "celu",
    "selu",
    "hard_tanh",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "soft_sign",
    "mish",
]
ELEMENTWISE = [n for n in ELEMENTWISE if hasattr(jax.nn, n)]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_dtypes(name: str) -> None:
    f, g = getattr(fnn, name), getattr(jax.nn, name)
    for kind in [F32, F16, BF16, "py_float", "weak_f32", I32, "py_int"]:
        x = operand(kind, (2, 3))
        if kind in (I32, "py_int") and name in ("sigmoid", "silu", "swish"):
            continue  # jax.nn rejects integers here (lax.logistic); funcgrad promotes them
        check_abstract(f, g, x, what=f"{name}({kind})")


@given(seed=seeds, kind=st.sampled_from([F32, F32, F16]))
def test_activation_values(seed: int, kind) -> None:
    rng = np.random.default_rng(seed)
    cases = []
    for name in ELEMENTWISE:
        x = rand(rng, (2, 3), kind, -8, 8)
        x.flat[0] = 0.0  # the kinks
        x.flat[1] = rng.choice([6.0, -1.0, 1.0, 3.0, -3.0])
        cases.append((name, getattr(fnn, name), getattr(jax.nn, name), (x,)))
    check_batch(cases, key=kind, scale=2.0)


def test_activation_grads() -> None:
    """Gradients of every activation, including at the kinks (relu'(0) = 0, as jax.nn)."""
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0], np.float32)

    def grads(mod, grad):
        return lambda v: [grad(summed(getattr(mod, n)))(v) for n in ELEMENTWISE]

    got = fg.jit(grads(fnn, fg.grad))(x)
    want = jax.jit(grads(jax.nn, jax.grad))(x)
    for name, gg, ww in zip(ELEMENTWISE, got, want):
        assert_same(gg, ww, what=f"grad {name}")
    assert_same(fg.grad(lambda u: fnn.relu(u).sum())(x), want[ELEMENTWISE.index("relu")])


def test_gelu_exact_and_leaky_slope() -> None:
    x = rand(np.random.default_rng(0), (2, 3), F32, -3, 3)
    check(lambda v: fnn.gelu(v, approximate=False), lambda v: jax.nn.gelu(v, approximate=False), x)
    check(lambda v: fnn.leaky_relu(v, 0.2), lambda v: jax.nn.leaky_relu(v, 0.2), x)
    check(lambda v: fnn.elu(v, 0.5), lambda v: jax.nn.elu(v, 0.5), x)
    check(lambda v: fnn.celu(v, 2.0), lambda v: jax.nn.celu(v, 2.0), x)
    check(
        lambda v: fnn.glu(v, axis=0),
        lambda v: jax.nn.glu(v, axis=0),
        rand(np.random.default_rng(1), (4, 3), F32),
    )


@given(
    seed=seeds,
    axis=st.sampled_from([-1, 0, 1, (0, 2), None]),
    kind=st.sampled_from([F32, F32, F16]),
)
def test_softmax(seed: int, axis, kind) -> None:
    rng = np.random.default_rng(seed)
    x = rand(rng, (2, 3, 4), kind, -5, 5)
    if rng.random() < 0.3:
        x.flat[0] = 80.0 if kind == F32 else 10.0  # large values must not overflow
    cases = [
        (
            name,
            tail(getattr(fnn, name), axis=axis),
            tail(getattr(jax.nn, name), axis=axis),
            (x,),
        )
        for name in ["softmax", "log_softmax"]
    ]
    check_batch(cases, key=(axis, kind), scale=2.0)


def test_softmax_where_and_grads() -> None:
    rng = np.random.default_rng(2)
    x = rand(rng, (3, 4), F32)
    m = rng.random((3, 4)) < 0.7
    m[:, 0] = True
    for name in ["softmax", "log_softmax"]:
        f, g = getattr(fnn, name), getattr(jax.nn, name)
        check(lambda v: f(v, where=m), lambda v: g(v, where=m), x, jit=False)
        w = rand(rng, (3, 4), F32)
        got = fg.grad(lambda v: (f(v, axis=1) * w).sum())(x)
        want = jo.grad(lambda v: (g(v, axis=1) * w).sum())(x)
        assert_same(got, want, what=f"grad {name}")


@given(
    seed=seeds,
    params=st.sampled_from(
        [(None, False, False), (0, True, True), (-1, False, True), ((0, 1), True, False)]
    ),
)
def test_logsumexp(seed: int, params) -> None:
    axis, keepdims, with_b = params
    rng = np.random.default_rng(seed)
    x = rand(rng, (3, 4), F32, -5, 5)
    if rng.random() < 0.3:
        x[0] = -np.inf
    b = rand(rng, (3, 4), F32, -1, 2) if with_b else None
    cases = [
        (
            f"logsumexp(return_sign={rs})",
            lambda v, b, rs=rs: fnn.logsumexp(v, axis=axis, b=b, keepdims=keepdims, return_sign=rs),
            lambda v, b, rs=rs: jax.nn.logsumexp(
                v, axis=axis, b=b, keepdims=keepdims, return_sign=rs
            ),
            (x, b),
        )
        for rs in (False, True)
    ]
    check_batch(cases, key=(axis, keepdims, with_b))


def test_logsumexp_grad_and_dtypes() -> None:
    x = rand(np.random.default_rng(3), (3, 4), F32)
    assert_same(
        fg.grad(lambda v: fnn.logsumexp(v, axis=1).sum())(x),
        jo.grad(lambda v: jax.nn.logsumexp(v, axis=1).sum())(x),
    )
    for kind in [F32, F16, I32, "py_float", "weak_f32"]:
        check_abstract(fnn.logsumexp, jax.nn.logsumexp, operand(kind, (2, 3)), what=str(kind))
        if kind != I32:  # jax.nn.softmax rejects integers (exp of int); funcgrad promotes
            check_abstract(fnn.softmax, jax.nn.softmax, operand(kind, (2, 3)), what=str(kind))
            check_abstract(
                fnn.log_softmax, jax.nn.log_softmax, operand(kind, (2, 3)), what=str(kind)
            )


@pytest.mark.parametrize("dtype", [None, F32, I32, np.bool_, F16])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(dtype, axis: int) -> None:
    labels = np.array([[0, 2, 5], [-1, 1, 3]], np.int32)  # out-of-range labels give zero rows
    kw = {} if dtype is None else {"dtype": dtype}
    check(
        lambda v: fnn.one_hot(v, 4, axis=axis, **kw),
        lambda v: jax.nn.one_hot(v, 4, axis=axis, **kw),
        labels,
    )
    check(
        lambda v: fnn.one_hot(v, 3, **kw),
        lambda v: jax.nn.one_hot(v, 3, **kw),
        np.array([0, 2, 1], np.uint8),
    )


def test_standardize() -> None:
    x = rand(np.random.default_rng(4), (3, 4), F32)
    for kw in [{}, {"axis": 0}, {"axis": (0, 1)}, {"epsilon": 0.1}, {"algorithm": "stable"}]:
        check(lambda v: fnn.standardize(v, **kw), lambda v: jax.nn.standardize(v, **kw), x)
    m = x.mean(axis=-1, keepdims=True)
    check(
        lambda v: fnn.standardize(v, mean=m, variance=2.0),
        lambda v: jax.nn.standardize(v, mean=m, variance=2.0),
        x,
    )
    assert not raises_same(lambda: fnn.standardize(x), lambda: jax.nn.standardize(x))
    _ = jnp


def test_one_hot_under_strict_rank_promotion_and_traced_classes() -> None:
    # JAX's own tests run with jax_numpy_rank_promotion='raise': one_hot's comparison of
    # the labels with the classes must not promote ranks (funcgrad's eager values are
    # jax.Arrays, so JAX's setting applies to them)
    x = np.array([[0, 2], [1, 5]], np.int32)
    old = fg.config.read("jax_numpy_rank_promotion")
    fg.config.update("jax_numpy_rank_promotion", "raise")
    try:
        for axis in (-1, 0):
            got = fnn.one_hot(x, 3, axis=axis)
            np.testing.assert_array_equal(got, jax.nn.one_hot(x, 3, axis=axis))
    finally:
        fg.config.update("jax_numpy_rank_promotion", old)
    # a traced number of classes is a concretization error, as JAX's
    with pytest.raises(fg.errors.ConcretizationError, match="num_classes"):
        fg.jit(fnn.one_hot)(np.int32(1), 3)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jax.nn.one_hot)(np.int32(1), 3)
