"""``funcgrad.scipy.integrate`` against ``jax.scipy.integrate``: ``trapezoid`` values,
dtypes and gradients for every form of sample points."""

from __future__ import annotations

import functools

import jax.scipy as jsp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.scipy.integrate as fint

RNG = np.random.default_rng(0)
#: values, dtype and shape as JAX's (NaNs equal)
close = functools.partial(jo.same_values, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("xkind", ["none", "dx", "x1d", "xnd"])
def test_trapezoid_matches_jax(axis, xkind):
    y = RNG.normal(size=(4, 5, 6))
    n = y.shape[axis]
    kw = {
        "none": {},
        "dx": {"dx": 0.3},
        "x1d": {"x": np.sort(RNG.normal(size=n))},
        "xnd": {"x": np.sort(RNG.normal(size=y.shape), axis=axis)},
    }[xkind]
    close(fint.trapezoid(y, axis=axis, **kw), jsp.integrate.trapezoid(y, axis=axis, **kw))
    g = fg.grad(lambda y: fint.trapezoid(y, axis=axis, **kw).sum())(y)
    close(g, jo.grad(lambda y: jsp.integrate.trapezoid(y, axis=axis, **kw).sum())(y))
