"""``funcgrad.numpy.linalg`` and ``funcgrad.lax.linalg`` against JAX: values, dtypes,
gradients (float64 and complex128), ``vmap``, ``jit`` and errors.

The decomposition primitives' own rules are also checked by ``tests/test_registry.py``
(finite differences, adjoint identity, second order, batching); here the public
functions are compared with ``jax.numpy.linalg``/``jax.lax.linalg`` and derivatives with
``jax.grad``/``jax.jvp`` of the same functions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lax import linalg as flax_linalg

RNG = np.random.default_rng(1234)


def _sym_separated(n, dtype="float64"):
    q, _ = np.linalg.qr(jo.random_array(RNG, n, n, dtype=dtype))
    return ((q * np.arange(1.0, n + 1)) @ np.conj(q).T).astype(dtype)


def _close(got, want, rtol=1e-8, atol=1e-8, dtype=True):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if dtype:
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- values

A3 = jo.random_array(RNG, 3, 3)
B32 = jo.random_array(RNG, 3, 2)
SPD3 = jo.spd_matrix(RNG, 3)
TALL = jo.random_array(RNG, 4, 3)
WIDE = jo.random_array(RNG, 2, 4)
BATCH = jo.random_array(RNG, 2, 3, 3)

VALUE_CASES = [
    ("inv", (A3,)),
    ("inv", (BATCH,)),
    ("det", (A3,)),
    ("det", (BATCH,)),
    ("det", (jo.random_array(RNG, 4, 4, dtype="complex128"),)),
    ("slogdet", (A3,)),
    ("slogdet", (jo.random_array(RNG, 3, 3, dtype="complex128"),)),
    ("solve", (A3, B32)),
    ("solve", (A3, B32[:, 0])),
    ("solve", (BATCH, jo.random_array(RNG, 2, 3, 4))),
    ("solve", (BATCH, jo.random_array(RNG, 3, 2))),  # batch broadcasting
    ("cholesky", (SPD3,)),
    ("cholesky", (jo.spd_matrix(RNG, 3, (2,), "complex128"),)),
    ("eigvalsh", (SPD3,)),
    ("svdvals", (TALL,)),
    ("pinv", (TALL,)),
    ("pinv", (WIDE,)),
    ("matrix_rank", (np.outer(A3[0], A3[1]),)),
    ("matrix_rank", (BATCH,)),
    ("cond", (A3,)),
    ("tensorinv", (jo.random_array(RNG, 2, 3, 6),)),
    ("lstsq", (TALL, jo.random_array(RNG, 4))),
    ("lstsq", (WIDE, jo.random_array(RNG, 2, 3))),
]


@pytest.mark.parametrize("name,args", VALUE_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_values_match_jax(name, args):
    # compiled on both sides (one XLA program each: cheaper than op-by-op dispatch);
    # eager calls are compared with compiled ones in test_jit_matches_eager
    got = fg.jit(getattr(fnp.linalg, name))(*args)
    # NumPy is the oracle (no compile on the oracle's side); lstsq's residuals follow
    # JAX (NumPy returns none for wide systems)
    oracle = jnp.linalg if name == "lstsq" else np.linalg
    want = getattr(oracle, name)(*args)
    _close(
        tuple(got) if isinstance(got, tuple) else got,
        tuple(np.asarray(w) for w in want) if isinstance(want, tuple) else np.asarray(want),
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_dtypes_follow_input(dtype):
    a = (
        jo.spd_matrix(RNG, 3)
        + (1j * np.triu(jo.random_array(RNG, 3, 3), 1) if dtype[0] == "c" else 0)
    ).astype(dtype)
    a = a + np.conj(a.T) if dtype[0] == "c" else a
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-8
    for name in ("inv", "det", "cholesky", "eigvalsh", "svdvals"):
        got, want = fg.jit(getattr(fnp.linalg, name))(a), getattr(jnp.linalg, name)(a)
        _close(got, want, rtol=tol, atol=tol)


def test_integer_inputs_are_promoted_like_jax():
    a = np.array([[2, 1], [1, 3]], np.int32)
    names = ("inv", "det", "cholesky", "eigvalsh", "pinv", "svdvals")
    got = fg.jit(lambda a: [getattr(fnp.linalg, n)(a) for n in names])(a)
    _close(got, [getattr(jnp.linalg, n)(a) for n in names])
    _close(fnp.linalg.solve(a, np.array([1, 2])), jnp.linalg.solve(a, np.array([1, 2])))


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 6])
def test_matrix_power(n):
    got = fg.jit(lambda a: fnp.linalg.matrix_power(a, n))(BATCH)
    _close(got, jnp.linalg.matrix_power(BATCH, n), rtol=1e-7)


def test_tensorsolve_and_multi_dot():
    a, b = jo.random_array(RNG, 2, 3, 6), jo.random_array(RNG, 2, 3)
    a2, b2 = jo.random_array(RNG, 4, 2, 2), jo.random_array(RNG, 2, 2)
    chain = [
        jo.random_array(RNG, 5),
        jo.random_array(RNG, 5, 2),
        jo.random_array(RNG, 2, 7),
        jo.random_array(RNG, 7, 3),
    ]
    chain2 = [*chain[1:], jo.random_array(RNG, 3)]

    def run(linalg):
        return (
            linalg.tensorsolve(a, b),
            linalg.tensorsolve(a2, b2, axes=(0,)),
            linalg.multi_dot(chain),
            linalg.multi_dot(chain2),
        )

    _close(fg.jit(lambda: run(fnp.linalg))(), run(np.linalg))


def _decompositions(m, h):
    la = m.linalg
    return (
        tuple(la.qr(TALL, mode="reduced")),
        tuple(la.qr(TALL, mode="complete")),
        la.qr(WIDE, mode="r"),
        tuple(la.svd(TALL, True)),
        tuple(la.svd(TALL, False)),
        tuple(la.eigh(SPD3)),
        tuple(la.eigh(SPD3, UPLO="U")),
        la.svd(h, hermitian=True)[1],
        la.cholesky(SPD3, upper=True),
        tuple(la.slogdet(A3, method="qr")),
    )


def test_decompositions_match_jax():
    # LAPACK's gauge (signs, phases) is JAX's: compare directly
    h = _sym_separated(3) - 2.5 * np.eye(3)  # indefinite: hermitian SVD sorts |w|
    got = fg.jit(lambda h: _decompositions(fnp, h))(h)
    _close(got, jax.jit(lambda h: _decompositions(jnp, h))(h))
    u, s, vh = fg.jit(lambda h: tuple(fnp.linalg.svd(h, hermitian=True)))(h)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), h, atol=1e-10)


def test_result_types_are_named_tuples():
    r = fnp.linalg.eigh(SPD3)
    assert type(r).__name__ == "EighResult" and r.eigenvalues.shape == (3,)
    assert r.eigenvectors.shape == (3, 3)
    res = fg.jit(lambda a: (fnp.linalg.svd(a), fnp.linalg.qr(a), fnp.linalg.slogdet(a)))(A3)
    assert [type(x).__name__ for x in res] == ["SVDResult", "QRResult", "SlogdetResult"]
    assert res[0].Vh.shape == res[1].R.shape == (3, 3) and res[2].logabsdet.shape == ()


def test_singular_matrices():
    z = np.array([[1.0, 2.0], [2.0, 4.0]])
    la = fnp.linalg
    det, sl, rank, pinv = fg.jit(lambda z: (la.det(z), la.slogdet(z), la.matrix_rank(z), la.pinv(z)))(z)  # fmt: skip
    _close(det, np.linalg.det(z), atol=1e-12)
    _close(tuple(sl), tuple(np.asarray(v) for v in np.linalg.slogdet(z)))
    assert int(rank) == 1
    _close(pinv, np.linalg.pinv(z))


def test_lax_linalg_matches_jax():
    L, J = flax_linalg, jax.lax.linalg
    _close(L.cholesky(SPD3), J.cholesky(SPD3))
    _close(L.cholesky(SPD3 + np.triu(A3, 1), symmetrize_input=False),
           J.cholesky(SPD3 + np.triu(A3, 1), symmetrize_input=False))  # fmt: skip
    _close(L.eigh(SPD3, lower=False), J.eigh(SPD3, lower=False))
    _close(L.lu(TALL), J.lu(TALL))
    _close(L.qr(TALL, full_matrices=False), J.qr(TALL, full_matrices=False))
    _close(L.svd(WIDE), J.svd(WIDE))
    _close(L.svd(WIDE, compute_uv=False), J.svd(WIDE, compute_uv=False))
    piv = np.array([2, 2, 3], np.int32)
    _close(L.lu_pivots_to_permutation(piv, 5), J.lu_pivots_to_permutation(piv, 5))
    t = np.tril(A3) + 3 * np.eye(3)
    for kw in [
        dict(left_side=True, lower=True),
        dict(left_side=True, lower=True, transpose_a=True, unit_diagonal=True),
        dict(lower=False, transpose_a=True, conjugate_a=True),
    ]:
        b = B32 if kw.get("left_side") else B32.T
        _close(L.triangular_solve(t if kw["lower"] else t.T, b, **kw),
               J.triangular_solve(t if kw["lower"] else t.T, b, **kw))  # fmt: skip


# --------------------------------------------------------------------------- gradients


def _w(shape, seed=0, dtype="float64"):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    return (x + 1j * r.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)


def _grad_pair(f_fg, f_jax):
    def lift(f, mod):
        return lambda *xs: _weighted_mod(f(*xs), mod)

    return lift(f_fg, fnp), lift(f_jax, jnp)


def _weighted_mod(outs, mod):
    leaves = jax.tree_util.tree_leaves(outs) if mod is jnp else _leaves(outs)
    total = 0.0
    for i, o in enumerate(leaves):
        cplx = np.dtype(o.dtype).kind == "c"
        w = _w(tuple(o.shape), i, "complex128" if cplx else "float64")
        total = total + mod.real(mod.sum(o * w))
    return total


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for e in x for leaf in _leaves(e)]
    return [x]


def _gauge_free_eigh(mod, linalg):
    def f(a):
        w, v = linalg.eigh(a)
        # eigenvectors enter through projectors |v_i|^2 and v diag(c) v^H (phase-free)
        c = np.arange(1.0, a.shape[-1] + 1)
        return w, mod.abs(v) ** 2, (v * c) @ mod.conj(mod.swapaxes(v, -1, -2))

    return f


def _gauge_free_svd(mod, linalg):
    def f(a):
        u, s, vh = linalg.svd(a, full_matrices=False)
        c = np.arange(1.0, s.shape[-1] + 1)
        return s, (u * c) @ vh, mod.abs(u) ** 2

    return f


GRAD_CASES = [
    ("det", lambda m: m.linalg.det, (jo.random_array(RNG, 4, 4),)),  # LU with its custom JVP
    ("det_3x3", lambda m: m.linalg.det, (A3,)),  # closed form
    ("slogdet", lambda m: lambda a: m.linalg.slogdet(a)[1], (A3,)),
    ("inv", lambda m: m.linalg.inv, (A3,)),
    ("solve", lambda m: m.linalg.solve, (A3, B32)),
    ("solve_vec_batched", lambda m: m.linalg.solve, (BATCH, jo.random_array(RNG, 2, 3, 1))),
    ("cholesky", lambda m: m.linalg.cholesky, (SPD3,)),
    ("eigh", lambda m: _gauge_free_eigh(m, m.linalg), (_sym_separated(3),)),
    ("eigvalsh", lambda m: m.linalg.eigvalsh, (_sym_separated(4),)),
    ("svd_wide", lambda m: _gauge_free_svd(m, m.linalg), (WIDE,)),
    ("qr", lambda m: lambda a: tuple(m.linalg.qr(a)), (TALL,)),
    ("qr_r_only", lambda m: lambda a: m.linalg.qr(a, mode="r"), (A3,)),
    ("pinv", lambda m: m.linalg.pinv, (TALL,)),
    ("lstsq", lambda m: lambda a, b: m.linalg.lstsq(a, b)[0], (TALL, jo.random_array(RNG, 4, 2))),
    ("lu", lambda m: lambda a: (flax_linalg if m is fnp else jax.lax.linalg).lu(a)[0], (WIDE,)),
    ("lu_tall", lambda m: lambda a: (flax_linalg if m is fnp else jax.lax.linalg).lu(a)[0], (TALL,)),
    ("det_c", lambda m: m.linalg.det, (jo.random_array(RNG, 4, 4, dtype="complex128"),)),
    ("slogdet_2x2_c", lambda m: lambda a: m.linalg.slogdet(a), (jo.random_array(RNG, 2, 2, dtype="complex128"),)),
    ("solve_c", lambda m: m.linalg.solve, (jo.random_array(RNG, 3, 3, dtype="complex128"), jo.random_array(RNG, 3, 2, dtype="complex128"))),
    ("cholesky_c", lambda m: m.linalg.cholesky, (jo.spd_matrix(RNG, 3, dtype="complex128"),)),
    ("eigh_c", lambda m: _gauge_free_eigh(m, m.linalg), (_sym_separated(3, "complex128"),)),
    ("svd_c", lambda m: _gauge_free_svd(m, m.linalg), (jo.random_array(RNG, 4, 3, dtype="complex128"),)),
    ("qr_c", lambda m: lambda a: tuple(m.linalg.qr(a)), (jo.random_array(RNG, 3, 3, dtype="complex128"),)),
]  # fmt: skip


@pytest.mark.parametrize("name,make,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_matches_jax(name, make, args):
    f_fg, f_jax = _grad_pair(make(fnp), make(jnp))
    nums = tuple(range(len(args)))
    got = fg.jit(fg.grad(f_fg, argnums=nums))(*args)
    want = jax.jit(jo.grad(f_jax, argnums=nums))(*args)
    _close(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,make,args", GRAD_CASES[2:9], ids=[c[0] for c in GRAD_CASES[2:9]])
def test_jvp_matches_jax(name, make, args):
    tangents = tuple(_w(np.shape(a), 7 + i) for i, a in enumerate(args))
    got = fg.jit(lambda a, t: fg.jvp(make(fnp), a, t))(args, tangents)
    want = jax.jit(lambda a, t: jo.jvp(make(jnp), a, t))(args, tangents)
    _close(got, want, rtol=1e-6, atol=1e-8)


def test_second_order_hvp_logdet_and_eigvalsh():
    """Hessian-vector products (forward over reverse) through cholesky and eigh."""

    def logdet(m):
        return lambda a: 2 * m.sum(m.log(m.diagonal(m.linalg.cholesky(a))))

    def top_eig(m):
        return lambda a: m.linalg.eigvalsh(a)[-1]

    for make, x in ((logdet, SPD3), (top_eig, _sym_separated(3))):
        v = _w(x.shape, 11)
        got = fg.jit(lambda x, v: fg.jvp(fg.grad(make(fnp)), (x,), (v,)))(x, v)
        want = jax.jit(lambda x, v: jo.jvp(jo.grad(make(jnp)), (x,), (v,)))(x, v)
        _close(got, want, rtol=1e-6, atol=1e-9)


def test_unsupported_derivatives_raise_like_jax():
    with pytest.raises(NotImplementedError, match="full matrices"):
        fg.grad(lambda a: fnp.linalg.svd(a)[0].sum())(TALL)
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        fg.grad(lambda a: fnp.linalg.qr(a)[1].sum())(WIDE)


# --------------------------------------------------------------------------- vmap, jit

VMAP_CASES = [
    ("inv", (BATCH,), 0),
    ("det", (np.moveaxis(BATCH, 0, 2),), 2),
    ("cholesky", (jo.spd_matrix(RNG, 3, (4,)),), 0),
    ("eigvalsh", (np.stack([_sym_separated(3), _sym_separated(3)], 1),), 1),
    ("svdvals", (jo.random_array(RNG, 3, 4, 2),), 0),
    ("slogdet", (BATCH,), 0),
    ("pinv", (jo.random_array(RNG, 2, 4, 3),), 0),
]


@pytest.mark.parametrize("name,args,axis", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_jax(name, args, axis):
    got = fg.jit(fg.vmap(getattr(fnp.linalg, name), in_axes=axis))(*args)
    want = jo.vmap(getattr(jnp.linalg, name), in_axes=axis)(*args)
    _close(tuple(got) if isinstance(got, tuple) else got, tuple(want) if isinstance(want, tuple) else want)  # fmt: skip


def test_vmap_solve_one_side_batched_and_grad_of_vmap():
    bs = jo.random_array(RNG, 5, 3)

    def run(t, m):
        return (
            t.vmap(m.linalg.solve, (None, 0))(A3, bs),
            t.vmap(m.linalg.solve, (0, None))(BATCH, bs[0]),
            t.grad(lambda a: m.sum(t.vmap(m.linalg.det)(a)))(BATCH),
            t.vmap(t.grad(lambda a: m.linalg.slogdet(a)[1]))(BATCH),
        )

    _close(fg.jit(lambda: run(fg, fnp))(), jax.jit(lambda: run(jax, jnp))(), rtol=1e-7)


_JITTED = fg.jit(lambda a, b: (fnp.linalg.solve(a, b), fnp.linalg.slogdet(a)[1], fnp.linalg.eigvalsh(a @ a.T), fnp.linalg.svd(a, compute_uv=False)))  # fmt: skip


def test_jit_matches_eager():
    eager = (
        fnp.linalg.solve(A3, B32),
        fnp.linalg.slogdet(A3)[1],
        fnp.linalg.eigvalsh(A3 @ A3.T),
        fnp.linalg.svd(A3, compute_uv=False),
    )
    _close(_JITTED(A3, B32), eager, rtol=1e-10, atol=1e-12)
    fg_grad = fg.jit(fg.grad(lambda a: fnp.linalg.det(a)))(A3)
    _close(fg_grad, jo.grad(jnp.linalg.det)(A3))


@pytest.mark.parametrize(
    "batch,n,k,vec", [((), 1, 1, False), ((2,), 3, 2, True), ((1, 2), 4, 3, False)]
)
def test_solve_shapes(batch, n, k, vec):
    r = np.random.default_rng(n * 10 + k)
    a = r.standard_normal((*batch, n, n)) + 3 * np.eye(n)
    b = r.standard_normal((n,)) if vec else r.standard_normal((*batch, n, k))
    _close(fg.jit(fnp.linalg.solve)(a, b), jnp.linalg.solve(a, b), rtol=1e-8)


# --------------------------------------------------------------------------- errors


def test_errors_name_function_and_shapes():
    with pytest.raises(ValueError, match=r"cholesky.*3"):
        fnp.linalg.cholesky(jo.random_array(RNG, 2, 3))
    with pytest.raises(ValueError, match="cholesky"):
        fg.jit(flax_linalg.cholesky)(jo.random_array(RNG, 2, 3))
    with pytest.raises(ValueError, match="det"):
        fnp.linalg.det(jo.random_array(RNG, 3))
    with pytest.raises(ValueError, match="solve"):
        fnp.linalg.solve(jo.random_array(RNG, 3), jo.random_array(RNG, 3))
    with pytest.raises(ValueError, match="solve"):
        fnp.linalg.solve(A3, jo.random_array(RNG, 4, 2))
    with pytest.raises(ValueError, match="UPLO"):
        fnp.linalg.eigh(SPD3, UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        fnp.linalg.qr(A3, mode="bogus")
    with pytest.raises(ValueError, match="method"):
        fnp.linalg.slogdet(A3, method="svd")
    with pytest.raises(TypeError, match="matrix_power"):
        fnp.linalg.matrix_power(jo.random_array(RNG, 2, 3), 2)
    with pytest.raises(TypeError, match="exponent"):
        fnp.linalg.matrix_power(A3, 1.5)
    with pytest.raises(TypeError, match="lstsq"):
        fnp.linalg.lstsq(BATCH, jo.random_array(RNG, 2, 3))
    with pytest.raises(ValueError, match="multi_dot"):
        fnp.linalg.multi_dot([A3])
    with pytest.raises(TypeError, match=r"cholesky.*i32\[2,2\]"):
        flax_linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(ValueError, match="triangular_solve"):
        flax_linalg.triangular_solve(A3, jo.random_array(RNG, 2, 2), left_side=True)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norms_from_singular_values(ord):
    x = jo.random_array(RNG, 2, 3, 4)
    for axis, keepdims in (((1, 2), False), ((2, 0), True)):
        got = fnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
        _close(got, np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims))
    got = fg.jit(fg.grad(lambda a: fnp.linalg.norm(a, ord)))(x[0])
    _close(got, jo.grad(lambda a: jnp.linalg.norm(a, ord))(x[0]), rtol=1e-7)


@pytest.mark.parametrize("sort_eigenvalues", [True, False])
def test_lax_eigh_implementation_and_unsorted_flag_as_jax_on_cpu(sort_eigenvalues):
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    a = a + a.T
    impl = flax_linalg.EighImplementation.QR
    v, w = flax_linalg.eigh(a, sort_eigenvalues=sort_eigenvalues, implementation=impl)
    _, wj = jax.lax.linalg.eigh(
        a, sort_eigenvalues=sort_eigenvalues, implementation=jax.lax.linalg.EighImplementation.QR
    )
    np.testing.assert_allclose(np.asarray(w), np.asarray(wj), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w), atol=1e-4)
    with pytest.raises(NotImplementedError, match="not available on a CPU"):
        flax_linalg.eigh(a, implementation=flax_linalg.EighImplementation.JACOBI)
