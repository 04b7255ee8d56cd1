"""``funcgrad.numpy.roots`` against ``jax.numpy.roots``: the roots (as a multiset), their
count, dtype and NaN padding, both ``strip_zeros`` modes, under ``jit``, the gradient of
the roots' real parts, and the errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationTypeError

coefficient = st.integers(-8, 8).map(lambda k: k / 2)


@st.composite
def polynomials(draw: st.DrawFn) -> np.ndarray:
    """Up to six coefficients, a nonzero leading one after 0-2 leading zeros."""
    lead = draw(st.sampled_from([-2.0, -1.0, 0.5, 1.0, 3.0]))
    rest = draw(st.lists(coefficient, max_size=4))
    zeros = draw(st.integers(0, 2))
    return np.array([0.0] * zeros + [lead] + rest, np.float32)


def _same_roots(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.isnan(got).sum() == np.isnan(want).sum()
    g, w = got[~np.isnan(got)], list(want[~np.isnan(want)])
    for r in g:  # match each root to a distinct one of JAX's (repeated roots: sqrt(eps))
        d = [abs(r - x) for x in w]
        i = int(np.argmin(d))
        assert d[i] < 2e-2 * max(1.0, abs(r)), (got, want)
        w.pop(i)


@settings(max_examples=40, deadline=None)
@given(polynomials(), st.booleans())
def test_roots_match_jax(p: np.ndarray, strip: bool) -> None:
    got = np.asarray(fnp.roots(p, strip_zeros=strip))
    _same_roots(got, np.asarray(jnp.roots(p, strip_zeros=strip)))
    # an independent check: each finite root is a zero of the polynomial
    for r in got[~np.isnan(got)]:
        scale = np.polyval(np.abs(p).astype(np.float64), max(1.0, abs(r)))
        assert abs(np.polyval(p.astype(np.complex128), r)) < 2e-2 * scale


@pytest.mark.parametrize(
    "p", [[0.0, 0.0, 0.0], [5.0], [], [0.0, 1.0, 2.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0, -8.0]]
)
@pytest.mark.parametrize("strip", [True, False])
def test_roots_edge_cases(p: list[float], strip: bool) -> None:
    a = np.array(p, np.float32)
    _same_roots(
        np.asarray(fnp.roots(a, strip_zeros=strip)), np.asarray(jnp.roots(a, strip_zeros=strip))
    )


def test_roots_dtypes() -> None:
    for a in (np.array([1, -3, 2]), np.array([1 + 1j, 2.0])):
        assert fnp.roots(a).dtype == jnp.roots(a).dtype
    # JAX's error type (NotImplementedError, from deep in LAPACK's dispatch); funcgrad's
    # message names the operation and the dtype
    f16 = np.array([1.0, 2.0, 3.0], np.float16)
    with pytest.raises(NotImplementedError):
        jnp.roots(f16)
    with pytest.raises(
        NotImplementedError, match=r"Unsupported dtype float16: eig requires .* got f16"
    ):
        fnp.roots(f16)


def test_roots_jit_needs_strip_zeros_false() -> None:
    p = np.array([0.0, 1.0, -3.0, 2.0], np.float32)
    got = fg.jit(lambda q: fnp.roots(q, strip_zeros=False))(p)
    _same_roots(np.asarray(got), np.asarray(jnp.roots(p, strip_zeros=False)))
    with pytest.raises(ConcretizationTypeError, match="strip_zeros=False"):
        fg.jit(fnp.roots)(p)


def test_roots_gradient_matches_jax() -> None:
    p = np.array([1.0, -3.0, 2.5, 0.5], np.float32)

    def f(m):
        return lambda q: m.real(m.roots(q, strip_zeros=False)).sum()

    np.testing.assert_allclose(fg.grad(f(fnp))(p), jax.grad(f(jnp))(p), atol=1e-5)


def test_roots_errors() -> None:
    with pytest.raises(ValueError, match=r"roots: input must be a rank-1 array.*\(2, 2\)"):
        fnp.roots(np.ones((2, 2)))
    with pytest.raises(TypeError, match="roots requires ndarray or scalar arguments"):
        fnp.roots([1.0, 2.0])
