"""``funcgrad.scipy.linalg`` against ``jax.scipy.linalg`` (and SciPy for ``expm``):
values, dtypes, gradients in float64, ``vmap``, ``jit`` and errors; the matrix
constructors (toeplitz ... dft), ``polar`` and ``expm_frechet`` in float32, with weak types."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax_oracle as jo
import numpy as np
import pytest
import scipy.linalg

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as fsl

RNG = np.random.default_rng(99)


_close = jo.trees_close


A = jo.random_array(RNG, 3, 3)
B = jo.random_array(RNG, 3, 2)
SPD = jo.spd_matrix(RNG, 3)
TRI = np.triu(A) + 3 * np.eye(3)


def _pair(name, *args, **kw):
    """``funcgrad.scipy.linalg.name`` compiled vs ``jax.scipy.linalg.name``."""
    got = fg.jit(lambda *a: getattr(fsl, name)(*a, **kw))(*args)
    want = jax.jit(lambda *a: getattr(jsl, name)(*a, **kw))(*args)
    return got, want


VALUE_CASES = [
    ("cholesky", (SPD,), {}),
    ("cholesky", (SPD,), {"lower": True}),
    ("cholesky", (jo.spd_matrix(RNG, 3, dtype="complex128"),), {}),
    ("cho_factor", (SPD,), {"lower": True}),
    ("solve_triangular", (TRI, B), {}),
    ("solve_triangular", (TRI.T, B[:, 0]), {"lower": True, "trans": "T"}),
    ("solve_triangular", (TRI, B), {"trans": 2, "unit_diagonal": True}),
    ("solve_triangular", (TRI.astype("complex128") + 1j * np.triu(A), B), {"trans": "C"}),
    ("lu", (jo.random_array(RNG, 3, 4),), {}),
    ("lu", (jo.random_array(RNG, 4, 3),), {"permute_l": True}),
    ("lu_factor", (A,), {}),
    ("solve", (A, B), {}),
    ("solve", (SPD, B[:, 0]), {"assume_a": "pos"}),
    ("solve", (SPD, B), {"assume_a": "pos", "lower": True}),
    ("inv", (A,), {}),
    ("det", (A,), {}),
    ("qr", (jo.random_array(RNG, 4, 3),), {}),
    ("qr", (jo.random_array(RNG, 4, 3),), {"mode": "economic"}),
    ("qr", (jo.random_array(RNG, 3, 4),), {"mode": "r"}),
    ("svd", (jo.random_array(RNG, 4, 3),), {}),
    ("svd", (jo.random_array(RNG, 3, 4),), {"compute_uv": False}),
    ("eigh", (SPD,), {}),
    ("eigh", (SPD,), {"lower": False, "eigvals_only": True}),
]


@pytest.mark.parametrize("name,args,kw", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_jax(name, args, kw):
    if name in ("cho_factor", "svd", "eigh") and not kw.get("eigvals_only"):
        _close(*_pair(name, *args, **kw))  # JAX zeroes cho_factor's other triangle
        return
    # unique results: SciPy is the oracle (no compile on the oracle's side)
    got = fg.jit(lambda *a: getattr(fsl, name)(*a, **kw))(*args)
    want = getattr(scipy.linalg, name)(*args, **kw)
    _close(got, want, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve(lower):
    c = fsl.cho_factor(SPD, lower=lower)
    assert c[1] is lower
    got = fg.jit(lambda c, b: fsl.cho_solve((c, lower), b))(c[0], B)
    _close(got, jsl.cho_solve(jsl.cho_factor(SPD, lower=lower), B))
    np.testing.assert_allclose(SPD @ np.asarray(got), B, atol=1e-10)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve(trans):
    a = jo.random_array(RNG, 3, 3, dtype="complex128")
    b = jo.random_array(RNG, 3, dtype="complex128")
    got = fg.jit(lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=trans))(a, b)
    _close(got, jsl.lu_solve(jsl.lu_factor(a), b, trans=trans))


def test_lu_reconstructs_batched():
    a = jo.random_array(RNG, 2, 4, 3)
    p, lo, up = fg.jit(fsl.lu)(a)
    np.testing.assert_allclose(np.asarray(p) @ np.asarray(lo) @ np.asarray(up), a, atol=1e-12)
    _close((p, lo, up), jo.vmap(jsl.lu)(a))


# --------------------------------------------------------------------------- expm

_EXPM = fg.jit(fsl.expm)


@pytest.mark.parametrize("scale", [0.0, 0.05, 1.0, 8.0, 60.0])
def test_expm_matches_scipy(scale):
    a = scale * jo.random_array(RNG, 4, 4)
    got = _EXPM(a)
    # at scale 60 the entries reach 1e39 after squarings that amplify rounding by the
    # matrix's condition: a few 1e-11 relative between two correct implementations
    rtol = 1e-10 if scale > 10 else 1e-11
    np.testing.assert_allclose(np.asarray(got), scipy.linalg.expm(a), rtol=rtol, atol=1e-12)


def test_expm_variants():
    a, t, c = (
        jo.random_array(RNG, 2, 3, 3),
        np.triu(jo.random_array(RNG, 3, 3)),
        jo.random_array(RNG, 3, 3, dtype="complex128"),
    )
    batched, upper, cplx, f32, big = fg.jit(
        lambda a, t, c: (
            fg.vmap(fsl.expm)(a),
            fsl.expm(t, upper_triangular=True),
            fsl.expm(c),
            fsl.expm(np.eye(2, dtype=np.float32)),
            fsl.expm(1e6 * np.eye(2), max_squarings=4),
        )
    )(a, t, c)
    _close(batched, np.stack([scipy.linalg.expm(x) for x in a]), rtol=1e-10)
    _close(upper, jsl.expm(t, upper_triangular=True))
    np.testing.assert_allclose(np.asarray(cplx), scipy.linalg.expm(c), rtol=1e-11)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, np.e * np.eye(2), rtol=1e-6)
    # more squarings than allowed: NaNs, as in JAX
    assert np.isnan(np.asarray(big)).all()
    assert np.isnan(np.asarray(jsl.expm(1e6 * np.eye(2), max_squarings=4))).all()


_EXPM_GRAD = fg.jit(fg.grad(lambda x, w: fnp.sum(fsl.expm(x) * w)))
_JAX_EXPM_GRAD = jax.jit(jo.grad(lambda x, w: jnp.sum(jsl.expm(x) * w)))


@pytest.mark.parametrize("scale", [0.3, 7.0])
def test_expm_grad_matches_jax(scale):
    a, w = scale * jo.random_array(RNG, 3, 3), jo.random_array(RNG, 3, 3)
    _close(_EXPM_GRAD(a, w), _JAX_EXPM_GRAD(a, w), rtol=1e-7, atol=1e-9)


def test_block_diag():
    args = (jo.random_array(RNG, 2, 2), np.ones(3, np.float32), 5.0, np.ones((2, 1), np.int32))
    _close(fsl.block_diag(*args), jsl.block_diag(*args))
    _close(fsl.block_diag(np.ones((1, 1), np.float32)), jsl.block_diag(np.ones((1, 1), np.float32)))


# --------------------------------------------------------------------------- gradients

GRAD_CASES = [
    ("cholesky_upper", lambda m: lambda a: m.cholesky(a), (SPD,)),
    ("cho_solve", lambda m: lambda a, b: m.cho_solve(m.cho_factor(a, lower=True), b), (SPD, B)),
    ("solve_pos", lambda m: lambda a, b: m.solve(a, b, assume_a="pos"), (SPD, B)),
    ("solve_triangular", lambda m: lambda a, b: m.solve_triangular(a, b, trans=1), (TRI, B)),
    ("lu", lambda m: lambda a: m.lu(a), (jo.random_array(RNG, 3, 4),)),
    ("lu_solve", lambda m: lambda a, b: m.lu_solve(m.lu_factor(a), b), (A, B)),
    ("det", lambda m: m.det, (A,)),
    ("qr", lambda m: lambda a: m.qr(a, mode="economic"), (jo.random_array(RNG, 4, 3),)),
    ("eigvals", lambda m: lambda a: m.eigh(a, eigvals_only=True), (SPD,)),
]


def _scalar(mod, outs):
    leaves = outs if isinstance(outs, (tuple, list)) else (outs,)
    total = 0.0
    for i, o in enumerate(leaves):
        w = np.random.default_rng(i).standard_normal(o.shape)
        total = total + mod.sum(o * w)
    return total


@pytest.mark.parametrize("name,make,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_matches_jax(name, make, args):
    nums = tuple(range(len(args)))
    f_fg, f_jax = make(fsl), make(jsl)
    got = fg.jit(fg.grad(lambda *a: _scalar(fnp, f_fg(*a)), argnums=nums))(*args)
    want = jax.jit(jo.grad(lambda *a: _scalar(jnp, f_jax(*a)), argnums=nums))(*args)
    if name in _ONE_TRIANGLE:
        # the factorisation reads one triangle of ``a``: funcgrad's gradient is the true
        # one (on that triangle, as finite differences give it), JAX's spreads it over
        # both; they agree on every symmetric direction, i.e. after symmetrising
        got = (_sym(got[0]), *got[1:])
        want = (_sym(want[0]), *want[1:])
    _close(got, want, rtol=1e-6, atol=1e-9)


_ONE_TRIANGLE = {"cholesky_upper", "cho_solve"}


def _sym(g):
    g = np.asarray(g)
    return (g + g.T) / 2


def test_cholesky_grad_is_the_true_derivative():
    """Finite differences along a non-symmetric direction: only the read triangle counts."""
    d = jo.random_array(RNG, 3, 3)
    eps = 1e-6
    for lower in (False, True):
        f = lambda a: fsl.cholesky(a, lower=lower)
        _, t = fg.jvp(f, (SPD,), (d,))
        fd = (np.asarray(f(SPD + eps * d)) - np.asarray(f(SPD - eps * d))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t), fd, atol=1e-6)


def test_gp_style_hyperparameter_grad_matches_jax():
    """A kernel matrix built from a parameter: both gradients agree (symmetric dK)."""
    x = np.linspace(0.0, 1.0, 5)
    y = np.sin(3 * x)

    def nll(m, sl):
        def f(log_ell):
            k = m.exp(-((x[:, None] - x[None, :]) ** 2) / m.exp(2 * log_ell)) + 0.1 * np.eye(5)
            c = sl.cho_factor(k, lower=True)
            alpha = sl.cho_solve(c, y)
            return 0.5 * y @ alpha + m.sum(m.log(m.diagonal(c[0])))

        return f

    got = fg.jit(fg.value_and_grad(nll(fnp, fsl)))(0.3)
    want = jo.value_and_grad(nll(jnp, jsl))(0.3)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9)


def test_vmap_and_eager():
    a = jo.spd_matrix(RNG, 3, (4,))
    b = jo.random_array(RNG, 4, 3)
    got = fg.vmap(lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b))(a, b)
    _close(got, jo.vmap(lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b))(a, b))
    got = fg.vmap(fsl.solve_triangular, (None, 0))(TRI, b)
    _close(got, jo.vmap(jsl.solve_triangular, (None, 0))(TRI, b))
    # eager calls give the compiled results
    _close(fsl.solve(SPD, B, assume_a="pos"), jsl.solve(SPD, B, assume_a="pos"))


# --------------------------------------------------------------------------- errors


def test_errors():
    with pytest.raises(ValueError, match=r"cholesky.*2,3"):
        fsl.cholesky(jo.random_array(RNG, 2, 3))
    with pytest.raises(ValueError, match="trans"):
        fsl.solve_triangular(TRI, B, trans=3)
    with pytest.raises(ValueError, match="solve_triangular"):
        fsl.solve_triangular(TRI, jo.random_array(RNG, 4, 2))
    with pytest.raises(ValueError, match="mode"):
        fsl.qr(A, mode="complete")
    with pytest.raises(NotImplementedError, match="b=None"):
        fsl.eigh(SPD, SPD)
    with pytest.raises(ValueError, match="expm"):
        fsl.expm(jo.random_array(RNG, 2, 3))
    with pytest.raises(ValueError, match="block_diag"):
        fsl.block_diag(jo.random_array(RNG, 2, 2, 2))
    with pytest.raises(ValueError, match="lu_solve"):
        fsl.lu_solve(fsl.lu_factor(A), B, trans=5)


# --------------------------------------------------------------------------- matrix constructors, polar, expm_frechet

RNG0 = np.random.default_rng(0)
C3 = np.array([1.0, -2.0, 3.0], np.float32)
R4 = np.array([4.0, 5.0, 6.0, 7.0], np.float32)
A33 = RNG0.standard_normal((3, 3)).astype(np.float32)
E33 = RNG0.standard_normal((3, 3)).astype(np.float32)

LINALG_CASES = [
    ("toeplitz", (C3,), {}),
    ("toeplitz", (C3, R4), {}),
    ("toeplitz", (np.ones((2, 3), np.float32), R4), {}),
    ("toeplitz", (np.array([1, 2, 3]),), {}),
    ("toeplitz", (C3 + 1j * C3,), {}),
    ("hankel", (C3,), {}),
    ("hankel", (C3, R4), {}),
    ("circulant", (C3,), {}),
    ("circulant", (np.arange(6.0, dtype=np.float32).reshape(2, 3),), {}),
    ("leslie", (np.array([0.1, 0.2, 0.3], np.float32), np.array([0.5, 0.6], np.float32)), {}),
    ("leslie", (np.array([1, 2]), np.array([3])), {}),
    ("companion", (C3,), {}),
    ("companion", (np.array([1, 2, 3]),), {}),
    ("fiedler", (C3,), {}),
    ("fiedler", (np.array([1, 5, 2]),), {}),
    ("fiedler_companion", (np.array([2.0, 3.0], np.float32),), {}),
    ("fiedler_companion", (np.array([1.0, 2, 3, 4, 5, 6], np.float32),), {}),
    ("fiedler_companion", (np.array([1.0, 2, 3, 4, 5], np.float32),), {}),
    ("convolution_matrix", (C3, 5), {}),
    ("convolution_matrix", (C3, 5, "valid"), {}),
    ("convolution_matrix", (C3, 5, "same"), {}),
    ("convolution_matrix", (np.ones((2, 4), np.float32), 3, "same"), {}),
    ("hilbert", (4,), {}),
    ("invhilbert", (4,), {}),
    ("pascal", (5,), {}),
    ("pascal", (5, "lower"), {}),
    ("pascal", (5, "upper"), {}),
    ("invpascal", (5,), {}),
    ("invpascal", (5, "lower"), {}),
    ("invpascal", (5, "upper"), {}),
    ("helmert", (4,), {}),
    ("helmert", (4, True), {}),
    ("hadamard", (8,), {}),
    ("hadamard", (4, np.float32), {}),
    ("dft", (5,), {}),
    ("dft", (4, "sqrtn"), {}),
    ("dft", (4, "n"), {}),
    ("polar", (A33,), {}),
    ("polar", (RNG0.standard_normal((2, 4, 3)).astype(np.float32), "left"), {"method": "svd"}),
]


@pytest.mark.parametrize("name,args,kwargs", LINALG_CASES)
def test_linalg_matches_jax(name, args, kwargs):
    jo.compare_jitted(fsl, jsl, name, args, kwargs, rtol=2e-4, atol=2e-4)


def test_constructors_under_jit_and_grad():
    def f(c, r):
        return fnp.sum(fsl.toeplitz(c, r) ** 2) + fnp.sum(
            fsl.circulant(c) * fsl.hankel(c, r)[:, :3]
        )

    def g(c, r):
        return jax.numpy.sum(jsl.toeplitz(c, r) ** 2) + jax.numpy.sum(
            jsl.circulant(c) * jsl.hankel(c, r)[:, :3]
        )

    jo.same_array(fg.jit(f)(C3, R4), g(C3, R4))
    got_grads = fg.jit(fg.grad(f, argnums=(0, 1)))(C3, R4)
    for got, want in zip(got_grads, jax.jit(jo.grad(g, (0, 1)))(C3, R4)):
        jo.same_array(got, want)


def test_expm_frechet_value_and_gradient_under_jit():
    def f(a, e):
        expa, frechet = fsl.expm_frechet(a, e)
        return fnp.sum(frechet**2) + fnp.sum(expa)

    def g(a, e):
        expa, frechet = jsl.expm_frechet(a, e)
        return jax.numpy.sum(frechet**2) + jax.numpy.sum(expa)

    a, e = 0.5 * A33, E33
    jo.compare_jitted(fsl, jsl, "expm_frechet", (a, e), {}, rtol=1e-4, atol=1e-4)
    got = fg.jit(fg.grad(f, argnums=(0, 1)))(a, e)
    want = jax.jit(jo.grad(g, (0, 1)))(a, e)
    for gv, wv in zip(got, want):
        jo.same_array(gv, wv, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "call,err",
    [
        (lambda: fsl.leslie(np.array([1.0]), np.zeros(0)), ValueError),
        (lambda: fsl.leslie(np.array([1.0, 2.0, 3.0]), np.array([1.0])), ValueError),
        (lambda: fsl.companion(np.array([1.0])), ValueError),
        (lambda: fsl.companion([1.0, 2.0]), TypeError),  # a list: refused, as JAX
        (lambda: fsl.fiedler_companion(np.zeros((0,), np.float32)), ValueError),
        (lambda: fsl.convolution_matrix(C3, 0), ValueError),
        (lambda: fsl.convolution_matrix(C3, 2, "wide"), ValueError),
        (lambda: fsl.convolution_matrix(1.0, 2), ValueError),
        (lambda: fsl.hankel(1.0), ValueError),
        (lambda: fsl.pascal(3, "diag"), ValueError),
        (lambda: fsl.invpascal(3, "diag"), ValueError),
        (lambda: fsl.helmert(0), ValueError),
        (lambda: fsl.hadamard(6), ValueError),
        (lambda: fsl.dft(4, "half"), ValueError),
        (lambda: fsl.dft(4, dtype=np.float32), ValueError),
        (lambda: fsl.hilbert(2.5), TypeError),
        (lambda: fsl.polar(A33, "up"), ValueError),
        (lambda: fsl.polar(C3), ValueError),
        (lambda: fsl.expm_frechet(A33, C3), ValueError),
    ],
)
def test_linalg_errors(call, err):
    with pytest.raises(err):
        call()


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_eigh_tridiagonal_against_scipy_and_jax(n, dtype):
    rng = np.random.default_rng(n)
    d = rng.uniform(-1, 1, n)
    e = rng.uniform(-1, 1, n - 1)
    if dtype == "complex64":
        d, e = d + 1j * rng.uniform(-1, 1, n), e + 1j * rng.uniform(-1, 1, n - 1)
    d, e = d.astype(dtype), e.astype(dtype)
    dense = np.diag(np.real(d)) + np.diag(e, 1) + np.diag(np.conj(e), -1)
    want = np.linalg.eigvalsh(dense.astype(np.complex128))
    w = np.asarray(fsl.eigh_tridiagonal(d, e, eigvals_only=True))
    assert w.dtype == np.asarray(jsl.eigh_tridiagonal(d, e, eigvals_only=True)).dtype
    np.testing.assert_allclose(w, want, atol=1e-5 * np.sqrt(n))
    if dtype == "float32":
        np.testing.assert_allclose(
            w, scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-5
        )
    w2, v = (np.asarray(x) for x in fg.jit(lambda d, e: fsl.eigh_tridiagonal(d, e))(d, e))
    np.testing.assert_allclose(dense @ v, v * w2, atol=1e-5 * np.sqrt(n))
    if n > 3:
        part = fsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
        np.testing.assert_allclose(np.asarray(part), w[1:4], atol=1e-6)
    with pytest.raises(NotImplementedError, match="select='v'"):
        fsl.eigh_tridiagonal(d, e, select="v")


@pytest.mark.parametrize("mode", ["left", "right"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr_multiply_against_jax_and_scipy(shape, mode):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    m, n = shape[-2:]
    k = min(m, n)
    c = rng.standard_normal(shape[:-2] + ((k, 2) if mode == "left" else (2, m))).astype(np.float32)
    x, r = fsl.qr_multiply(a, c, mode=mode)
    xj, rj = jsl.qr_multiply(a, c, mode=mode)
    np.testing.assert_allclose(np.asarray(x), np.asarray(xj), atol=1e-5)
    np.testing.assert_allclose(np.asarray(r), np.asarray(rj), atol=1e-5)
    if len(shape) == 2:
        xs, rs = scipy.linalg.qr_multiply(a, c, mode=mode)
        np.testing.assert_allclose(np.asarray(x), xs, atol=1e-5)
        np.testing.assert_allclose(np.asarray(r), rs, atol=1e-5)
    vec = rng.standard_normal(k if mode == "left" else m).astype(np.float32)
    got = np.asarray(fsl.qr_multiply(a, vec, mode=mode)[0])
    np.testing.assert_allclose(got, np.asarray(jsl.qr_multiply(a, vec, mode=mode)[0]), atol=1e-5)
    with pytest.raises(ValueError, match="not compatible"):
        fsl.qr_multiply(a, np.ones((m + 1, 2), np.float32), mode="left")
