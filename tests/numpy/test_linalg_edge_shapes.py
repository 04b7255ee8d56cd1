"""funcgrad.numpy.linalg at edge arguments, against jax.numpy 0.10.2: vector_norm over
no axis, several axes (a vector norm, never a matrix norm) or all of them, with the
dtypes JAX gives (a complex input's count of nonzeros is real, integer sums stay
integer); lstsq of empty systems; tensorsolve with axes moved to the end in order."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp

X = np.array([[1.0, -2.0, 0.0], [3.0, 0.0, -1.0]], np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float16])
def test_vector_norm_matches_jax(dtype):
    x = X.astype(dtype)
    for ord, axis, keepdims in itertools.product(
        [0, 1, 2, np.inf, -np.inf, -1, 3, None], [(), 0, None, (0, 1), (-1,), (1, 0)], [0, 1]
    ):
        got = fnp.linalg.vector_norm(x, axis=axis, ord=ord, keepdims=bool(keepdims))
        want = jnp.linalg.vector_norm(x, axis=axis, ord=ord, keepdims=bool(keepdims))
        assert got.dtype == want.dtype and got.shape == want.shape, (ord, axis)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3)


def test_vector_norm_of_integers_keeps_jax_dtype():
    x = X.astype(np.int32)
    for ord in (1, np.inf, 2):
        got, want = fnp.linalg.vector_norm(x, ord=ord), jnp.linalg.vector_norm(x, ord=ord)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("a_shape,b_shape", [((0, 3), (0,)), ((3, 0), (3,)), ((0, 3), (0, 2))])
@pytest.mark.parametrize("numpy_resid", [False, True])
def test_lstsq_of_empty_systems(a_shape, b_shape, numpy_resid):
    a, b = np.ones(a_shape, np.float32), np.ones(b_shape, np.float32)
    got = fnp.linalg.lstsq(a, b, numpy_resid=numpy_resid)
    want = jnp.linalg.lstsq(a, b, numpy_resid=numpy_resid)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("axes", [(0, 2), (2, 0)])
def test_tensorsolve_axes_moved_in_order(axes):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 1, 3, 6))
    b = rng.normal(size=(1, 6))
    np.testing.assert_allclose(
        fnp.linalg.tensorsolve(a, b, axes=axes), np.linalg.tensorsolve(a, b, axes=axes), rtol=1e-8
    )
