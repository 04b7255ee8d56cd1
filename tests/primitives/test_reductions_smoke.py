"""Smoke tests of the reduction primitives: forward vs NumPy, derivatives vs JAX and PyTorch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from cases import family_cases, family_example, sample

import funcgrad as fg
from funcgrad.primitives import reductions as rd

jax.config.update("jax_enable_x64", True)

FAMILY = "reductions"
CASES = family_cases((FAMILY,))


@pytest.mark.parametrize(
    "p,i", sample(CASES, salt="test_rules_against_jax", group=lambda c: c.values[0].name)
)
def test_rules_against_jax(p, i):
    """First and second derivatives agree with JAX's derivatives of the lowering."""
    ex = family_example(p, i)
    if not p.differentiable:
        pytest.skip("not differentiable")
    (x,) = ex.args
    rng = np.random.default_rng(1)
    f = lambda a: p.bind(a, **ex.params)
    f_jax = lambda a: p.lower(a, **ex.params)
    t = rng.normal(size=x.shape)
    np.testing.assert_allclose(fg.jvp(f, (x,), (t,))[1], jo.jvp(f_jax, (x,), (t,))[1], 1e-12)
    out, pb = fg.vjp(f, x)
    ct = rng.normal(size=np.shape(out))
    np.testing.assert_allclose(pb(ct)[0], jo.vjp(f_jax, (x,), ct)[0], rtol=1e-12, atol=1e-12)
    if ex.smooth:
        h = fg.jvp(lambda a: fg.vjp(f, a)[1](ct)[0], (x,), (t,))[1]
        h_ref = jo.jvp(lambda a: jax.vjp(f_jax, a)[1](ct)[0], (x,), (t,))[1]
        np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "p,i", sample(CASES, salt="test_batch_rule_every_axis", group=lambda c: c.values[0].name)
)
def test_batch_rule_every_axis(p, i):
    ex = family_example(p, i)
    (x,) = ex.args
    rng = np.random.default_rng(2)
    stack = np.stack([rng.permutation(x.ravel()).reshape(x.shape) for _ in range(3)])
    for d in range(x.ndim + 1):
        out, od = p.batch([np.moveaxis(stack, 0, d)], [d], **ex.params)
        for b in range(3):
            want = np.asarray(p.bind(stack[b], **ex.params))
            np.testing.assert_allclose(np.take(np.asarray(out), b, axis=od), want, rtol=1e-14)


def test_forward_vs_numpy():
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    np.testing.assert_allclose(rd.reduce_sum(x, (0, -1)), x.sum((0, 2)))
    np.testing.assert_allclose(rd.reduce_max(x, 1), x.max(1))
    np.testing.assert_allclose(rd.reduce_min(x), x.min())
    np.testing.assert_allclose(rd.reduce_prod(x, (2,)), x.prod(2))
    np.testing.assert_array_equal(rd.reduce_and(x > -1, (1,)), (x > -1).all(1))
    np.testing.assert_array_equal(rd.reduce_or(x > 1, (1, 2)), (x > 1).any((1, 2)))
    np.testing.assert_array_equal(rd.argmax(x, axis=-1, index_dtype=np.int32), x.argmax(-1))
    np.testing.assert_array_equal(rd.argmin(x, axis=0, index_dtype=np.int64), x.argmin(0))
    np.testing.assert_allclose(rd.cumsum(x, axis=1), x.cumsum(1))
    np.testing.assert_allclose(
        rd.cumsum(x, axis=2, reverse=True), x[..., ::-1].cumsum(2)[..., ::-1]
    )
    np.testing.assert_allclose(rd.cumprod(x, axis=0), x.cumprod(0))
    np.testing.assert_allclose(rd.cummax(x, axis=2), np.maximum.accumulate(x, 2))
    np.testing.assert_allclose(
        rd.cummin(x, axis=1, reverse=True), np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]
    )


def test_reduce_max_ties_split_evenly():
    x = np.array([1.0, 3.0, 3.0, 3.0, 0.0])
    g = fg.grad(lambda a: rd.reduce_max(a, (0,)))(x)
    np.testing.assert_allclose(g, [0, 1 / 3, 1 / 3, 1 / 3, 0])
    np.testing.assert_allclose(g, jo.grad(jnp.max)(x))


@pytest.mark.parametrize(
    "x",
    [
        np.array([2.0, 0.0, 3.0, -1.0]),
        np.array([0.0, 0.0, 3.0, -1.0]),
        np.array([0.0, 0.0, 0.0, 1.5]),
    ],
)
def test_prod_and_cumprod_through_zeros(x):
    for f, f_ref in (
        (lambda a: rd.reduce_prod(a, (0,)), jnp.prod),
        (lambda a: rd.reduce_sum(rd.cumprod(a, axis=0)), lambda a: jnp.cumprod(a).sum()),
        (
            lambda a: rd.reduce_sum(rd.cumprod(a, axis=0, reverse=True)),
            lambda a: jnp.cumprod(a[::-1])[::-1].sum(),
        ),
    ):
        np.testing.assert_allclose(fg.grad(f)(x), jo.grad(f_ref)(x), atol=1e-12)
        for v in np.eye(len(x)):  # Hessian columns: forward over reverse
            hv = fg.jvp(fg.grad(f), (x,), (v,))[1]
            np.testing.assert_allclose(hv, jo.jvp(jo.grad(f_ref), (x,), (v,))[1], atol=1e-12)


def test_cummax_ties_follow_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 3.0, 3.0, 2.0, 4.0, 4.0], [2.0, -1.0, 2.0, 2.0, 0.5, 5.0]])
    ct = np.arange(12.0).reshape(2, 6)
    for name in ("cummax", "cummin"):
        (g,) = fg.vjp(lambda a: getattr(rd, name)(a, axis=1), x)[1](ct)
        tx = torch.tensor(x, requires_grad=True)
        getattr(torch, name)(tx, 1).values.backward(torch.tensor(ct))
        np.testing.assert_allclose(g, tx.grad.numpy())


def test_errors_name_primitive_and_operands():
    with pytest.raises(ValueError, match=r"^reduce_sum: axis 3 out of range"):
        rd.reduce_sum(np.ones((2, 3)), 3)
    with pytest.raises(TypeError, match=r"^reduce_and .*f64\[2,3\]"):
        rd.reduce_and(np.ones((2, 3)), 0)
    with pytest.raises(TypeError, match=r"^reduce_max .*bool\[2\]"):
        rd.reduce_max(np.ones(2, bool), 0)
