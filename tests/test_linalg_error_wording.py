"""Bad arguments to funcgrad's special matrices and norms raise the ValueError JAX 0.10.2
raises, with the phrase JAX's message (and its own test suite) uses, plus funcgrad's
details (the shapes and the user's line)."""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl

CASES = [
    ("leslie", lambda m: m.leslie(np.ones(1), np.ones(1)), "length of f along the last axis"),
    ("companion", lambda m: m.companion(np.ones(1)), "length of `a` along the last axis"),
    ("fiedler_companion", lambda m: m.fiedler_companion(np.ones((3, 0))), "nonzero"),
    (
        "convolution_matrix",
        lambda m: m.convolution_matrix(np.ones(3), 4, mode="bad"),
        "mode must be one of",
    ),
    ("invpascal", lambda m: m.invpascal(3, kind="bad"), "Expected kind to be one of"),
    ("leslie", lambda m: m.leslie(np.ones(3), np.ones(1)), "Incorrect lengths for f and s"),
    ("convolution_matrix", lambda m: m.convolution_matrix(np.ones(0), 2), r"len\(a\) must be"),
]


@pytest.mark.parametrize("name,call,phrase", CASES, ids=[c[0] for c in CASES])
def test_special_matrix_errors(name, call, phrase):
    with pytest.raises(ValueError, match=phrase):
        call(jsl)
    with pytest.raises(ValueError, match=phrase) as info:
        call(fsl)
    assert name in str(info.value) and "test_linalg_error_wording.py" in str(info.value)


def test_norm_order_errors():
    for lib in (jnp, fnp):
        with pytest.raises(ValueError, match=r"Invalid order 'inf' for vector norm\."):
            lib.linalg.norm(np.ones(3), ord="inf")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_decompositions_unsupported_as_jax_on_cpu(dtype):
    """JAX's CPU kernels have no half-precision LAPACK routine: NotImplementedError
    naming the dtype (JAX raises it when compiling)."""
    a = jnp.ones((3, 3), dtype)
    for lib in (jnp, fnp):
        with pytest.raises(NotImplementedError, match=f"Unsupported dtype {dtype}"):
            np.asarray(lib.linalg.qr(a)[0])
