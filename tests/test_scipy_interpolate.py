"""``funcgrad.scipy.interpolate.RegularGridInterpolator`` against ``jax.scipy.interpolate``:
methods and fill values (values, ``jit``, gradients, ``vmap``, errors)."""

from __future__ import annotations

import functools

import jax.scipy as jsp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.scipy.interpolate as finterp

RNG = np.random.default_rng(0)
#: values, dtype and shape as JAX's (NaNs equal)
close = functools.partial(jo.same_values, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill", [np.nan, None, -1.0])
def test_regular_grid_interpolator_matches_jax(method, fill):
    pts = (np.sort(RNG.uniform(0, 3, 4)), np.sort(RNG.uniform(-1, 1, 5)))
    vals = RNG.normal(size=(4, 5, 2))
    xi = RNG.uniform(-1.5, 3.5, size=(3, 6, 2))
    f = finterp.RegularGridInterpolator(pts, vals, method=method, fill_value=fill)
    j = jsp.interpolate.RegularGridInterpolator(pts, vals, method=method, fill_value=fill)
    close(f(xi), j(xi), rtol=1e-12, atol=1e-12)
    close(f((xi[..., 0], xi[..., 1])), j((xi[..., 0], xi[..., 1])), rtol=1e-12, atol=1e-12)
    close(
        fg.jit(
            lambda v, x: finterp.RegularGridInterpolator(pts, v, method=method, fill_value=fill)(x)
        )(vals, xi),
        j(xi),
        rtol=1e-12,
        atol=1e-12,
    )
    if method == "linear" and fill is None:
        gf = fg.grad(lambda x: f(x).sum())(xi)
        gj = jo.grad(lambda x: j(x).sum())(xi)
        close(gf, gj, rtol=1e-9, atol=1e-9)


def test_regular_grid_interpolator_1d_vmap_and_errors():
    g = np.linspace(0.0, 1.0, 6)
    vals = np.sin(g)
    f = finterp.RegularGridInterpolator((g,), vals)
    j = jsp.interpolate.RegularGridInterpolator((g,), vals)
    xs = np.linspace(-0.1, 1.1, 7)
    close(f(xs), j(xs))
    close(fg.vmap(lambda x: f(x[None]))(xs), jo.vmap(lambda x: j(x[None]))(xs))
    with pytest.raises(ValueError, match="not defined"):
        finterp.RegularGridInterpolator((g,), vals, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        finterp.RegularGridInterpolator((g,), vals, bounds_error=True)
    with pytest.raises(ValueError, match="dimension"):
        f(np.zeros((3, 2)))
