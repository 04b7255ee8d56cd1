"""funcgrad.scipy.optimize.minimize (BFGS) against jax.scipy.optimize.minimize: the same
iterates (x, nit, nfev, status) on Rosenbrock and quadratics, under jit and vmap; errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.optimize as jopt
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import optimize as fopt


def rosenbrock(np_):
    def f(x):
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    return f


def quadratic(np_):
    def f(x, a, c):
        d = x - c
        return d @ a @ d + np_.sum(np_.cos(d)) * 0.1

    return f


_ros_f = fg.jit(lambda x0: fopt.minimize(rosenbrock(fnp), x0, method="BFGS"))
_ros_j = jax.jit(lambda x0: jopt.minimize(rosenbrock(jnp), x0, method="BFGS"))


def _same_result(got, want, rtol):
    assert type(got).__name__ == "OptimizeResults"
    assert got._fields == want._fields
    for name in ("nit", "nfev", "njev", "status", "success"):
        assert int(getattr(got, name)) == int(getattr(want, name)), name
    for name in ("x", "fun", "jac", "hess_inv"):
        g, w = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-2, err_msg=name)


@pytest.mark.parametrize(
    "x0",
    [np.array([2.0, 2.0]), np.array([1.3, 0.7]), np.zeros(4), np.array([-1.2, 1.0])],
    ids=["2d", "2d-34-iterations", "4d", "classic-zoom-fails-as-in-jax"],
)
def test_rosenbrock_matches_jax(x0):
    got, want = _ros_f(x0), _ros_j(x0)
    _same_result(got, want, 1e-8)
    if bool(want.success):
        np.testing.assert_allclose(np.asarray(got.x), np.ones(x0.size), rtol=1e-6)
    else:  # JAX's line search gives up here too: status 3, zoom failed
        assert int(got.status) == 3


def test_quadratic_with_args_and_options():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 3))
    a, c = m @ m.T + np.eye(3), np.array([1.0, -2.0, 0.5])
    opts = {"gtol": 1e-9, "maxiter": 50}
    solve = fg.jit(
        lambda a, c: fopt.minimize(quadratic(fnp), np.zeros(3), (a, c), method="bfgs", options=opts)
    )
    want = jopt.minimize(quadratic(jnp), jnp.zeros(3), (a, c), method="BFGS", options=opts)
    _same_result(solve(a, c), want, 1e-8)


def test_float32_and_maxiter():
    x0 = np.array([-1.2, 1.0], np.float32)
    f = rosenbrock(fnp)
    got = fopt.minimize(f, x0, method="BFGS", options={"maxiter": 3})
    want = jopt.minimize(rosenbrock(jnp), x0, method="BFGS", options={"maxiter": 3})
    assert got.x.dtype == np.float32
    assert int(got.status) == int(want.status) == 1 and int(got.nit) == 3
    np.testing.assert_allclose(np.asarray(got.x), np.asarray(want.x), rtol=1e-4)


def test_vmap_over_starting_points():
    x0s = np.array([[0.5, 0.5], [2.0, 2.0]])
    got = fg.vmap(lambda x0: fopt.minimize(rosenbrock(fnp), x0, method="BFGS"))(x0s)
    for i in range(2):
        want = _ros_j(x0s[i])
        np.testing.assert_allclose(np.asarray(got.x[i]), np.asarray(want.x), rtol=1e-8)
        assert int(got.nit[i]) == int(want.nit)


def test_errors():
    f = rosenbrock(fnp)
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        fopt.minimize(f, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        fopt.minimize(f, np.zeros(2), args=[1], method="BFGS")
    with pytest.raises(ValueError, match="1-dimensional"):
        fopt.minimize(f, np.zeros((2, 2)), method="BFGS")
    with pytest.raises(TypeError, match="unexpected options"):
        fopt.minimize(f, np.zeros(2), method="BFGS", options={"xtol": 1.0})


_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _rosen(xp):
    return lambda x: xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _himmelblau(xp):
    return lambda p: (p[0] ** 2 + p[1] - 11.0) ** 2 + (p[0] + p[1] ** 2 - 7.0) ** 2


def _quadratic(xp):
    return lambda p: 0.26 * (p[0] ** 2 + p[1] ** 2) - 0.48 * p[0] * p[1]


@pytest.mark.parametrize(
    "make,x0",
    [(_rosen, np.zeros(3)), (_himmelblau, np.zeros(2)), (_quadratic, np.ones(2) * 6.0)],
)
def test_lbfgs_matches_jax_and_scipy(make, x0):
    import scipy.optimize

    x0 = x0.astype(np.float32)
    opts = {"gtol": 1e-7}
    res = fg.jit(lambda x: fopt.minimize(make(fnp), x, method=_LBFGS, options=opts))(x0)
    want = jopt.minimize(make(jnp), x0, method=_LBFGS, options=opts)
    np.testing.assert_allclose(np.asarray(res.x), np.asarray(want.x), rtol=1e-4, atol=1e-5)
    assert int(res.nit) == int(want.nit) and res.hess_inv is None
    if make is _himmelblau:
        sp = scipy.optimize.minimize(make(np), x0.astype(np.float64), method="L-BFGS-B").x
        np.testing.assert_allclose(np.asarray(res.x), sp, atol=2e-5)


def test_lbfgs_complex_variables():
    z0 = np.array([1.0, 2.0 - 3.0j, 4.0, -5.0j], np.complex64)

    def f(z):
        return fnp.real(fnp.dot(fnp.conj(z - z0), z - z0))

    res = fopt.minimize(f, np.zeros_like(z0), method=_LBFGS, options={"gtol": 1e-6})
    np.testing.assert_allclose(np.asarray(res.x), z0, atol=1e-5)
    with pytest.raises(TypeError, match="unexpected options"):
        fopt.minimize(f, np.zeros_like(z0), method=_LBFGS, options={"line_search_maxiter": 3})
