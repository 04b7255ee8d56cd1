"""``cov``/``corrcoef``'s ``dtype=`` (JAX 0.10.2's signatures): the result in the given
inexact dtype, the same values as JAX's, and JAX's ``ValueError`` for a non-inexact one."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgrad.numpy as fnp

X = np.arange(5)
Y = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
M = np.random.RandomState(0).randn(3, 6)


@pytest.mark.parametrize("name", ["cov", "corrcoef"])
@pytest.mark.parametrize("dtype", [None, "bfloat16", np.float16, np.float32, np.complex64])
def test_dtype_like_jax(name: str, dtype: object) -> None:
    for args in ((X, Y), (M,)):
        theirs = getattr(jnp, name)(*args, dtype=dtype)
        ours = getattr(fnp, name)(*args, dtype=dtype)
        assert ours.dtype == theirs.dtype
        tol = 2e-2 if np.dtype(theirs.dtype) in (ml_dtypes.bfloat16, np.float16) else 1e-5
        np.testing.assert_allclose(
            np.asarray(ours).astype(np.complex64),
            np.asarray(theirs).astype(np.complex64),
            rtol=tol,
            atol=tol,
        )


@pytest.mark.parametrize("name", ["cov", "corrcoef"])
def test_non_inexact_dtype_refused(name: str) -> None:
    with pytest.raises(ValueError) as want:
        getattr(jnp, name)(X, X, dtype=int)
    with pytest.raises(ValueError) as got:
        getattr(fnp, name)(X, X, dtype=int)
    assert str(got.value) == str(want.value)
