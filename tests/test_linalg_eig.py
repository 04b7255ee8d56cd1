"""The general eigendecomposition (``funcgrad.numpy.linalg.eig``/``eigvals``,
``funcgrad.lax.linalg.eig``) against JAX: values (both lower to LAPACK's ``geev``, so
they agree exactly, and ``A V = V diag(w)`` holds), derivatives vs ``jax.jvp``/``jax.grad``,
``vmap`` vs a loop, ``jit`` and errors. The primitive's own rules are also checked by
tests/test_registry.py (finite differences, adjoint identity, second order, batching).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lax import linalg as flax_linalg


def _distinct(seed: int, n: int, dtype: str = "float64", batch: tuple = ()) -> np.ndarray:
    """Matrices with eigenvalues 1..n (well separated) and a well-conditioned basis."""
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((*batch, n, n))
    if np.dtype(dtype).kind == "c":
        s = s + 1j * rng.standard_normal((*batch, n, n))
    s = np.eye(n) + 0.3 * s
    return ((s * np.arange(1.0, n + 1)) @ np.linalg.inv(s)).astype(dtype)


def _rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


_close = jo.trees_close


ROTATION = np.array([[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.0, 0.3, 1.0]])  # complex pair


@pytest.mark.parametrize(
    "a",
    [ROTATION, _distinct(0, 3, "complex128"), _distinct(1, 2, batch=(2,))],
    ids=["real-complex-pair", "complex128", "batch"],
)
def test_values_match_jax_and_satisfy_the_eigen_equation(a):
    got = fnp.linalg.eig(a)
    assert type(got).__name__ == "EigResult"
    _close(tuple(got), tuple(jnp.linalg.eig(a)))
    w, v = np.asarray(got.eigenvalues), np.asarray(got.eigenvectors)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0)
    _close(fnp.linalg.eigvals(a), jnp.linalg.eigvals(a))
    # left eigenvectors: vl^H a = diag(w) vl^H
    got = flax_linalg.eig(a)
    _close(got, jax.lax.linalg.eig(a))
    w, vl, _ = (np.asarray(x) for x in got)
    vlh = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vlh @ a, w[..., :, None] * vlh, atol=1e-10)


def test_dtypes_jit_and_vmap():
    a = _distinct(2, 3, batch=(4,))
    assert fnp.linalg.eigvals(a.astype(np.float32)).dtype == np.complex64
    assert (
        fnp.linalg.eigvals(np.eye(2, dtype=np.int32)).dtype
        == jnp.linalg.eigvals(np.eye(2, dtype=np.int32)).dtype
    )
    _close(fg.jit(fnp.linalg.eig)(a[0]), jax.jit(jnp.linalg.eig)(a[0]))
    got = fg.vmap(fnp.linalg.eig, in_axes=0)(a)
    loop = [fnp.linalg.eig(x) for x in a]
    for i, (w, v) in enumerate(loop):
        _close((got[0][i], got[1][i]), (w, v))
    got = fg.vmap(fnp.linalg.eigvals, in_axes=2)(np.moveaxis(a, 0, 2))
    _close(got, jnp.linalg.eigvals(a))


def _eigval_loss(m, c):
    def f(a):
        w = m.linalg.eigvals(a)
        return m.sum(m.real(w) * c) + m.sum(m.imag(w) ** 2 * c)

    return f


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 4))
def test_eigenvalue_gradient_matches_jax(seed, n):
    a = _distinct(seed, n) + 0.2 * _rand(seed + 1, n, n)
    c = np.arange(1.0, n + 1)
    want = jo.grad(_eigval_loss(jnp, c))(a)
    _close(fg.jit(fg.grad(_eigval_loss(fnp, c)))(a), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigenvalue_jvp_and_vjp_match_jax(dtype):
    a = _distinct(3, 3, dtype)
    t = _distinct(4, 3, dtype)
    _close(fg.jvp(fnp.linalg.eigvals, (a,), (t,)), jax.jvp(jnp.linalg.eigvals, (a,), (t,)))
    ct = np.array([1.0 + 2.0j, -0.5j, 3.0])
    got = fg.vjp(fnp.linalg.eigvals, a)[1](ct)
    _close(got, jax.vjp(jnp.linalg.eigvals, a)[1](ct))


def _vec_loss(m, linalg, left):
    def f(a):
        outs = linalg.eig(a, compute_left_eigenvectors=left, enable_eigvec_derivs=True)
        w, vs = outs[0], outs[1:]
        c = m.arange(1.0, a.shape[-1] + 1)
        return m.sum(m.real(w) * c) + sum(m.sum(m.abs(v) ** 3 + m.real(v) * m.imag(v)) for v in vs)

    return f


@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigenvector_derivatives_match_jax(left, dtype):
    """With enable_eigvec_derivs=True (geev's normalisation), gradients and JVPs of a
    loss that depends on the normalised eigenvectors' components agree with JAX."""
    a = _distinct(5, 3, dtype)
    t = _distinct(6, 3, dtype)
    f, g = _vec_loss(fnp, flax_linalg, left), _vec_loss(jnp, jax.lax.linalg, left)
    _close(fg.jit(fg.grad(f))(a), jo.grad(g)(a), rtol=1e-6, atol=1e-8)
    got = fg.jit(lambda a, t: fg.jvp(f, (a,), (t,)))(a, t)
    want = jax.jit(lambda a, t: jax.jvp(g, (a,), (t,)))(a, t)
    _close(got, want, rtol=1e-6, atol=1e-8)


def test_gradient_under_vmap_and_jit():
    a = _distinct(7, 3, batch=(2,))
    c = np.array([1.0, -1.0, 2.0])
    got = fg.jit(fg.vmap(fg.grad(_eigval_loss(fnp, c))))(a)
    _close(got, jax.jit(jax.vmap(jax.grad(_eigval_loss(jnp, c))))(a), rtol=1e-6)


def test_errors_like_jax():
    a = _distinct(8, 3)
    # eigenvector derivatives need the opt-in, in JAX as well
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jax.grad(lambda x: jnp.sum(jnp.abs(jnp.linalg.eig(x)[1])))(a)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        fg.grad(lambda x: fnp.sum(fnp.abs(fnp.linalg.eig(x)[1])))(a)
    for fn in (fnp.linalg.eig, fnp.linalg.eigvals, flax_linalg.eig):
        with pytest.raises(ValueError):
            jnp.linalg.eig(np.ones((2, 3)))
        with pytest.raises(ValueError, match="square"):
            fn(np.ones((2, 3)))
    with pytest.raises(TypeError):
        jax.lax.linalg.eig(np.eye(2, dtype=np.int32))
    with pytest.raises(TypeError, match="eig"):
        flax_linalg.eig(np.eye(2, dtype=np.int32))


# --------------------------------------------------------------------------- Householder


def _cplx(seed, *shape, dtype="float64"):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    return x


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((4, 3), "float64"), ((3, 3), "complex128"), ((2, 5, 3), "float64"), ((3, 4), "float64")],
)
def test_householder_qr_raw_product_and_ormqr_match_jax(shape, dtype):
    """(each composite compiled whole: eagerly its many small ops compile one by one)"""
    a = _cplx(10, *shape, dtype=dtype)
    h, tau = fg.jit(lambda x: tuple(fnp.linalg.qr(x, mode="raw")))(a)
    _close((h, tau), tuple(jnp.linalg.qr(a, mode="raw")), rtol=1e-10, atol=1e-12)
    hm = np.swapaxes(np.asarray(h), -1, -2)
    tau = np.asarray(tau)
    if shape[-2] >= shape[-1]:
        want = jax.lax.linalg.householder_product(hm, tau)
        got = fg.jit(flax_linalg.householder_product)(hm, tau)
        _close(got, want, rtol=1e-10, atol=1e-12)
    c = _cplx(11, *shape[:-2], shape[-2], 2, dtype=dtype)

    ct = np.swapaxes(c, -1, -2)

    def all_ormqr(lib, hm, tau, c, ct):
        return [
            lib.ormqr(hm, tau, c if left else ct, left=left, transpose=t)
            for left in (True, False)
            for t in (False, True)
        ]

    got = fg.jit(lambda *xs: all_ormqr(flax_linalg, *xs))(hm, tau, c, ct)
    _close(got, all_ormqr(jax.lax.linalg, hm, tau, c, ct), rtol=1e-10, atol=1e-12)


def test_householder_product_differentiates_and_batches():
    """JAX's householder_product has no derivative: the composite's is checked against
    central finite differences; vmap against a loop."""
    a = _cplx(12, 4, 3)
    tau = np.array([1.2, 0.7, 1.5])

    def f(x, t):
        return fnp.sum(flax_linalg.householder_product(x, t) * np.arange(12.0).reshape(4, 3))

    ga, gt = fg.grad(f, argnums=(0, 1))(a, tau)
    eps = 1e-6
    for idx in [(1, 0), (3, 2), (2, 1)]:
        d = np.zeros_like(a)
        d[idx] = eps
        fd = (float(f(a + d, tau)) - float(f(a - d, tau))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(ga)[idx], fd, rtol=1e-6, atol=1e-8)
    d = np.array([0.0, eps, 0.0])
    fd = (float(f(a, tau + d)) - float(f(a, tau - d))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(gt)[1], fd, rtol=1e-6, atol=1e-8)
    stack = _cplx(13, 3, 4, 3)
    taus = np.stack([tau, tau / 2, tau * 0])
    got = fg.vmap(flax_linalg.householder_product)(stack, taus)
    _close(got, np.stack([jax.lax.linalg.householder_product(x, t) for x, t in zip(stack, taus)]))


def test_householder_errors_like_jax():
    with pytest.raises(TypeError):
        jax.lax.linalg.ormqr(np.eye(3), np.ones(2), np.ones((3, 2), np.complex128))
    with pytest.raises(TypeError, match="same dtypes"):
        flax_linalg.ormqr(np.eye(3), np.ones(2), np.ones((3, 2), np.complex128))
    with pytest.raises(ValueError, match="householder_product"):
        flax_linalg.householder_product(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="ormqr"):
        flax_linalg.ormqr(np.eye(3), np.ones(2), np.ones((2, 2)))
