"""funcgrad.scipy.sparse.linalg's Krylov solvers against jax.scipy.sparse.linalg
(JAX 0.10.2), SciPy's solvers (the same iterates after a fixed number of steps) and
NumPy's direct solve."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest
import scipy.sparse.linalg as ssl
from jax._src import dtypes as jax_dtypes

import funcgrad as fg
import funcgrad.scipy.sparse.linalg as fsl

RNG = np.random.RandomState(1606)
SOLVERS = ["cg", "bicgstab", "gmres"]


def _spd(n: int, dtype: type) -> np.ndarray:
    a = RNG.randn(n, n) + (1j * RNG.randn(n, n) if np.issubdtype(dtype, np.complexfloating) else 0)
    m = np.eye(n) + 0.3 * a
    return (m @ m.conj().T).astype(dtype)


def _general(n: int, dtype: type) -> np.ndarray:
    a = RNG.randn(n, n) + (1j * RNG.randn(n, n) if np.issubdtype(dtype, np.complexfloating) else 0)
    return (np.eye(n) * 3 + a).astype(dtype)


def _vec(n: int, dtype: type) -> np.ndarray:
    v = RNG.randn(n) + (1j * RNG.randn(n) if np.issubdtype(dtype, np.complexfloating) else 0)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("name", SOLVERS)
def test_solution_matches_direct_solve_and_jax(name: str, dtype: type) -> None:
    a = _spd(6, dtype) if name == "cg" else _general(6, dtype)
    b = _vec(6, dtype)
    tol = 1e-10 if dtype in (np.float64, np.complex128) else 1e-6
    x, _ = getattr(fsl, name)(a, b, tol=tol, atol=0.0)
    xj, _ = getattr(jsl, name)(jnp.asarray(a), jnp.asarray(b), tol=tol)
    assert x.dtype == xj.dtype
    expected = np.linalg.solve(a.astype(np.complex128), b)
    rtol = 1e-8 if tol == 1e-10 else 2e-3
    np.testing.assert_allclose(np.asarray(x), expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(x), np.asarray(xj), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("precond", [None, "identity", "inverse", "random"])
def test_cg_iterates_match_scipy(dtype: type, precond: str | None) -> None:
    a = _spd(5, dtype)
    b = _vec(5, dtype)
    m = {
        None: None,
        "identity": np.eye(5, dtype=dtype),
        "inverse": np.linalg.inv(a),
        "random": np.linalg.inv(_spd(5, dtype)),
    }[precond]
    for steps in (1, 3):
        ours, _ = fsl.cg(a, b, M=m, maxiter=steps, atol=0.0)
        theirs, _ = ssl.cg(a, b, M=m, maxiter=steps, atol=0.0)
        # (the tiers may run the iteration in NumPy or through XLA, whose dot products round
        # differently; a random preconditioner amplifies that to ~2e-11: rtol 1e-12 failed
        # once in a fresh-clone CI)
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["batched", "incremental"])
@pytest.mark.parametrize("precond", [None, "inverse", "random"])
def test_gmres_cycles_match_scipy(method: str, precond: str | None) -> None:
    a = _general(4, np.float64)
    b = _vec(4, np.float64)
    m = {None: None, "inverse": np.linalg.inv(a), "random": np.linalg.inv(_spd(4, np.float64))}[
        precond
    ]
    for restart, cycles in ((1, 1), (1, 2), (2, 1), (3, 2)):
        ours, info = fsl.gmres(
            a, b, M=m, restart=restart, maxiter=cycles, atol=0.0, solve_method=method
        )
        theirs, _ = ssl.gmres(a, b, M=m, restart=restart, maxiter=cycles, atol=0.0)
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-9, atol=1e-10)
        assert int(info) == 0


@pytest.mark.parametrize("precond", [None, "identity", "inverse"])
def test_bicgstab_steps_match_jax(precond: str | None) -> None:
    a = _general(5, np.float64)
    b = _vec(5, np.float64)
    m = {None: None, "identity": np.eye(5), "inverse": np.linalg.inv(a)}[precond]
    for steps in (1, 2, 3):
        ours, _ = fsl.bicgstab(a, b, M=m, maxiter=steps)
        theirs, _ = jsl.bicgstab(
            jnp.asarray(a), jnp.asarray(b), M=None if m is None else jnp.asarray(m), maxiter=steps
        )
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SOLVERS)
def test_pytrees_functions_and_matmul_objects(name: str) -> None:
    solve = getattr(fsl, name)

    def op(x: dict) -> dict:
        return {"a": x["a"] + 0.5 * x["b"], "b": 0.5 * x["a"] + x["b"]}

    x, _ = solve(op, {"a": 1.0, "b": -4.0})
    assert sorted(x) == ["a", "b"]
    np.testing.assert_allclose([float(x["a"]), float(x["b"])], [4.0, -6.0], rtol=1e-5)
    assert jax_dtypes.is_weakly_typed(x["a"])

    class Op:
        def __init__(self, m: np.ndarray) -> None:
            self.m, self.shape = m, m.shape

        def __matmul__(self, v: object) -> object:
            return self.m @ v

    b = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    x, _ = solve(Op(2 * fg.numpy.eye(3, dtype=np.float32)), b)
    np.testing.assert_allclose(np.asarray(x), b / 2, rtol=1e-6)
    x, _ = solve(lambda v: 2 * v, b)
    np.testing.assert_allclose(np.asarray(x), b / 2, rtol=1e-6)
    assert x.dtype == np.float32


def test_weak_scalar_stays_weak_as_jax() -> None:
    for name in ("bicgstab", "gmres"):
        x, _ = getattr(fsl, name)(lambda v: v, 1.0)
        xj, _ = getattr(jsl, name)(lambda v: v, 1.0)
        assert jax_dtypes.is_weakly_typed(x) and jax_dtypes.is_weakly_typed(xj)
        assert float(x) == pytest.approx(1.0)
    # funcgrad's cg keeps the weak type too (JAX's cg loses it on the way)
    assert jax_dtypes.is_weakly_typed(fsl.cg(lambda v: v, 1.0)[0])


@pytest.mark.parametrize("name", SOLVERS)
def test_gradients_are_the_exact_solves_as_jax(name: str) -> None:
    a = _spd(4, np.float64)
    b = _vec(4, np.float64)

    def loss(mod: object, a: object, b: object) -> object:
        np_ = fg.numpy if mod is fsl else jnp
        x = getattr(mod, name)(lambda v: np_.dot(a, v), b, tol=1e-12)[0]
        return np_.sum(x**2)

    g = fg.grad(lambda a, b: loss(fsl, a, b), argnums=(0, 1))(a, b)
    gj = jax.grad(lambda a, b: loss(jsl, a, b), argnums=(0, 1))(a, b)
    for u, v in zip(g, gj):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", SOLVERS)
def test_jit_and_vmap(name: str) -> None:
    a = _spd(4, np.float32)
    bs = np.stack([_vec(4, np.float32) for _ in range(3)])
    solve = getattr(fsl, name)
    out = fg.vmap(fg.jit(lambda b: solve(a, b, tol=1e-6)[0]))(bs)
    np.testing.assert_allclose(np.asarray(out), np.linalg.solve(a, bs.T).T, rtol=2e-4, atol=2e-5)


def test_jacrev_through_a_tuple_of_right_hand_sides() -> None:
    m = RNG.randn(5, 5)
    a = m @ m.T + np.eye(5)

    def f(mod: object, np_: object, b: object) -> object:
        return mod.cg(lambda x: (np_.dot(a, x[0]), np_.dot(a, x[1])), (b, b))[0]

    b = RNG.randn(5)
    ours = fg.jacrev(lambda b: f(fsl, fg.numpy, b))(b)
    theirs = jax.jacrev(lambda b: f(jsl, jnp, b))(b)
    for u, v in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-6, atol=1e-8)


def test_errors_as_jax() -> None:
    b = fg.numpy.zeros((2,))
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        fsl.cg(lambda x: x, {"x": b}, {"y": b})
    with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
        fsl.cg(lambda x: x, b, b[:, None])
    with pytest.raises(ValueError, match="must be a square matrix, but has shape: \\(3, 2\\)"):
        fsl.cg(fg.numpy.zeros((3, 2)), b)
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray"):
        fsl.cg([[1]], fg.numpy.zeros((1,)))
    with pytest.raises(ValueError, match="invalid solve_method bogus"):
        fsl.gmres(lambda x: x, b, solve_method="bogus")
    # and JAX raises the same
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray"):
        jsl.cg([[1]], jnp.zeros((1,)))
