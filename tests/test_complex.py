"""Complex numbers against JAX: arrays and dtypes through funcgrad.numpy, JVP/VJP of every
complex operation (JAX's convention: cotangents are conjugate-linear, so ``grad`` of a real
function of ``z = x + iy`` is ``df/dx - i df/dy``), ``holomorphic=`` and JAX's errors."""

from __future__ import annotations

import re

import chex
import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import elementwise as ew

C64, C128 = np.complex64, np.complex128


def crand(shape, dtype=C128, lo=-1.5, hi=1.5, seed=0):
    rng = np.random.default_rng(seed)
    re_, im = rng.uniform(lo, hi, size=(2, *shape))
    return (re_ + 1j * im).astype(dtype)


def rrand(shape, dtype=np.float64, lo=-1.5, hi=1.5, seed=1):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def tol(dtype):
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def assert_same(got, want, rtol=1e-10, atol=1e-10):
    """Same tree, dtypes and values (to tolerance)."""
    got_l, got_t = jax.tree_util.tree_flatten(got)
    want_l, want_t = jax.tree_util.tree_flatten(want)
    assert got_t == want_t
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def like(x, seed=3):
    """A random (co)tangent of ``x``'s shape and dtype (complex parts both random)."""
    x = np.asarray(x)
    return crand(x.shape, x.dtype, seed=seed) if x.dtype.kind == "c" else rrand(x.shape, x.dtype)


# --------------------------------------------------------------------------- arrays, dtypes


def test_creation_and_dtypes():
    assert_same(fnp.array([1 + 2j, 3j]), jnp.array([1 + 2j, 3j]))
    assert_same(fnp.array([1, 2], dtype=fnp.complex64), jnp.array([1, 2], dtype=jnp.complex64))
    x, y = rrand((3,)), rrand((3,), seed=2)
    assert_same(fnp.asarray(x) + 1j * fnp.asarray(y), jnp.asarray(x) + 1j * jnp.asarray(y))
    assert_same(fnp.zeros(2, fnp.complex64), jnp.zeros(2, jnp.complex64))
    assert_same(fnp.asarray(x).astype(fnp.complex64), jnp.asarray(x).astype(jnp.complex64))
    assert fnp.iscomplexobj(fnp.array([1j])) and not fnp.iscomplexobj(fnp.ones(2))
    assert fnp.iscomplexobj(np.ones(2, C64)) and not fnp.iscomplexobj([1.0, 2.0])
    assert fnp.iscomplexobj([1j]) == jnp.iscomplexobj([1j]) and not fnp.iscomplexobj(None)
    assert fnp.isrealobj(fnp.ones(2)) and not fnp.isrealobj(fnp.ones(2, fnp.complex64))


_DTYPES = ["float16", "float32", "float64", "int32", "int8", "bool", "complex64", "complex128"]
_SCALARS = [1, 1.0, 1j, True]


@pytest.mark.parametrize("a", ["complex64", "complex128"])
@pytest.mark.parametrize("b", _DTYPES)
def test_promotion_with_complex(a, b):
    xa, xb = np.ones(2, a), np.ones(2, b)
    assert fnp.add(xa, xb).dtype == jnp.add(xa, xb).dtype
    assert fnp.multiply(xb, xa).dtype == jnp.multiply(xb, xa).dtype


@pytest.mark.parametrize("b", _DTYPES)
@pytest.mark.parametrize("s", _SCALARS, ids=repr)
def test_promotion_python_scalars(b, s):
    xb = np.ones(2, b)
    got, want = fnp.multiply(xb, s), jnp.multiply(xb, s)
    assert got.dtype == want.dtype
    if b != "bool" or s is not True:
        got, want = fnp.multiply(xb, 1j), jnp.multiply(xb, 1j)
        assert got.dtype == want.dtype


# --------------------------------------------------------------------------- unary functions

UNARY = {
    "real": (fnp.real, jnp.real),
    "imag": (fnp.imag, jnp.imag),
    "conj": (fnp.conj, jnp.conj),
    "conjugate": (fnp.conjugate, jnp.conjugate),
    "abs": (fnp.abs, jnp.abs),
    "angle": (fnp.angle, jnp.angle),
    "angle_deg": (lambda z: fnp.angle(z, deg=True), lambda z: jnp.angle(z, deg=True)),
    "exp": (fnp.exp, jnp.exp),
    "log": (fnp.log, jnp.log),
    "sqrt": (fnp.sqrt, jnp.sqrt),
    "sin": (fnp.sin, jnp.sin),
    "cos": (fnp.cos, jnp.cos),
    "tanh": (fnp.tanh, jnp.tanh),
    "sinh": (fnp.sinh, jnp.sinh),
    "cosh": (fnp.cosh, jnp.cosh),
    "expm1": (fnp.expm1, jnp.expm1),
    "log1p": (fnp.log1p, jnp.log1p),
    "negative": (fnp.negative, jnp.negative),
    "square": (fnp.square, jnp.square),
    "reciprocal": (fnp.reciprocal, jnp.reciprocal),
    "cube": (lambda z: z**3, lambda z: z**3),
    "abs2": (lambda z: fnp.abs(z) ** 2, lambda z: jnp.abs(z) ** 2),
    "real_sq": (lambda z: fnp.real(z * z), lambda z: jnp.real(z * z)),
    "imag_exp": (lambda z: fnp.imag(fnp.exp(z)), lambda z: jnp.imag(jnp.exp(z))),
    "method_real": (lambda z: z.real * z.imag, lambda z: z.real * z.imag),
    "method_conj": (lambda z: z.conj() * z.conjugate(), lambda z: z.conj() * z.conjugate()),
    "mixed": (
        lambda z: fnp.sin(z) * fnp.conj(z) + fnp.abs(z),
        lambda z: jnp.sin(z) * jnp.conj(z) + jnp.abs(z),
    ),
}

# values near the negative real axis (the branch cut of log/sqrt/angle) are avoided
_POINTS = {
    C128: crand((5,), C128, lo=0.2, hi=1.5),
    C64: crand((2, 3), C64, lo=0.2, hi=1.5),
}


@pytest.mark.parametrize("dtype", [C128, C64], ids=["c128", "c64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_eager_and_jit(name, dtype):
    f, jf = UNARY[name]
    z = _POINTS[dtype]
    want = jf(z)
    t = tol(dtype)
    assert_same(f(z), want, rtol=t, atol=t)
    assert_same(fg.jit(f)(z), want, rtol=t, atol=t)


@pytest.mark.parametrize("dtype", [C128, C64], ids=["c128", "c64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_jvp_vjp_against_jax(name, dtype):
    f, jf = UNARY[name]
    z = _POINTS[dtype]
    t_in = like(z)
    t = tol(dtype)
    assert_same(fg.jvp(f, (z,), (t_in,)), jo.jvp(jf, (z,), (t_in,)), rtol=t, atol=t)
    out, pb = fg.vjp(f, z)
    jout, jpb = jax.vjp(jf, z)
    ct = like(jout, seed=5)
    assert_same(out, jout, rtol=t, atol=t)
    assert_same(pb(ct), jpb(ct), rtol=t, atol=t)


@pytest.mark.parametrize("name", ["abs", "angle", "real", "imag", "abs2", "real_sq", "imag_exp"])
def test_grad_of_real_valued_functions(name):
    f, jf = UNARY[name]
    z = _POINTS[C128]
    assert_same(fg.grad(lambda v: fnp.sum(f(v)))(z), jo.grad(lambda v: jnp.sum(jf(v)))(z))
    assert_same(fg.jit(fg.grad(lambda v: fnp.sum(f(v))))(z), jo.grad(lambda v: jnp.sum(jf(v)))(z))


def test_abs_derivatives_at_zero():
    z = np.array([0j, 1 + 1j, -2j])
    assert_same(
        fg.grad(lambda v: fnp.sum(fnp.abs(v)))(z), jo.grad(lambda v: jnp.sum(jnp.abs(v)))(z)
    )
    t = like(z)
    assert_same(fg.jvp(fnp.abs, (z,), (t,)), jo.jvp(jnp.abs, (z,), (t,)))
    assert fnp.abs(z).dtype == np.float64


def test_isfinite_isinf_isnan_sign():
    z = np.array([1 + 1j, np.inf + 0j, complex(0, -np.inf), complex(np.nan, 1), 0j])
    for name in ("isfinite", "isinf", "isnan", "sign", "iscomplex", "isreal"):
        assert_same(getattr(fnp, name)(z), getattr(jnp, name)(z))
    x = np.array([1.0, 0.0])
    assert_same(fnp.iscomplex(x), jnp.iscomplex(x))
    assert_same(fnp.isreal(x), jnp.isreal(x))


@pytest.mark.parametrize("x", [np.array([1.0, -2.0, 0.0]), np.array([1, -3]), 2.0, -1])
def test_angle_of_real_inputs(x):
    assert_same(fnp.angle(x), jnp.angle(x))
    assert_same(fnp.real(x), jnp.real(x))
    assert_same(fnp.imag(x), jnp.imag(x))
    assert_same(fnp.conj(x), jnp.conj(x))


# --------------------------------------------------------------------------- binary, products

BINARY = {
    "add": (fnp.add, jnp.add),
    "subtract": (fnp.subtract, jnp.subtract),
    "multiply": (fnp.multiply, jnp.multiply),
    "divide": (fnp.divide, jnp.divide),
    "power": (fnp.power, jnp.power),
    "matmul": (fnp.matmul, jnp.matmul),
    "dot": (fnp.dot, jnp.dot),
    "vdot": (fnp.vdot, jnp.vdot),
    "inner": (fnp.inner, jnp.inner),
    "outer": (fnp.outer, jnp.outer),
    "einsum": (
        lambda a, b: fnp.einsum("ij,kj->ik", a, b),
        lambda a, b: jnp.einsum("ij,kj->ik", a, b),
    ),
    "sum_div": (
        lambda a, b: fnp.sum(a / b, axis=0),
        lambda a, b: jnp.sum(a / b, axis=0),
    ),
}


def _binary_args(name, dtype, real_second=False):
    a = crand((3, 4), dtype, lo=0.3, hi=1.5, seed=10)
    b = crand((3, 4), dtype, lo=0.3, hi=1.5, seed=11)
    if name in ("matmul", "dot"):
        b = crand((4, 2), dtype, lo=0.3, hi=1.5, seed=11)
    if real_second:
        b = np.real(b)
    return a, b


@pytest.mark.parametrize("real_second", [False, True], ids=["cc", "cr"])
@pytest.mark.parametrize("dtype", [C128, C64], ids=["c128", "c64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_against_jax(name, dtype, real_second):
    f, jf = BINARY[name]
    a, b = _binary_args(name, dtype, real_second)
    t = tol(dtype)
    assert_same(f(a, b), jf(a, b), rtol=t, atol=t)
    assert_same(fg.jit(f)(a, b), jf(a, b), rtol=t, atol=t)
    tans = (like(a), like(b, seed=4))
    assert_same(fg.jvp(f, (a, b), tans), jo.jvp(jf, (a, b), tans), rtol=t, atol=t)
    _, pb = fg.vjp(f, a, b)
    jout, jpb = jax.vjp(jf, a, b)
    ct = like(jout, seed=6)
    assert_same(pb(ct), jpb(ct), rtol=t, atol=t)


REDUCTIONS = {
    "sum": (fnp.sum, jnp.sum),
    "mean": (fnp.mean, jnp.mean),
    "mean_axis": (lambda z: fnp.mean(z, axis=1), lambda z: jnp.mean(z, axis=1)),
    "prod": (lambda z: fnp.prod(z, axis=0), lambda z: jnp.prod(z, axis=0)),
    "var": (fnp.var, jnp.var),
    "std_axis": (lambda z: fnp.std(z, axis=0), lambda z: jnp.std(z, axis=0)),
    "norm": (fnp.linalg.norm, jnp.linalg.norm),
    "norm_axis": (lambda z: fnp.linalg.norm(z, axis=1), lambda z: jnp.linalg.norm(z, axis=1)),
    "cumsum": (lambda z: fnp.cumsum(z, axis=1), lambda z: jnp.cumsum(z, axis=1)),
    "transpose_reshape": (lambda z: z.T.reshape(-1)[::2], lambda z: z.T.reshape(-1)[::2]),
    "where": (
        lambda z: fnp.where(fnp.real(z) > 0.8, z, 2.0 * z),
        lambda z: jnp.where(jnp.real(z) > 0.8, z, 2.0 * z),
    ),
    "concat_stack": (
        lambda z: fnp.concatenate([z, fnp.stack([z[0], z[1]])]),
        lambda z: jnp.concatenate([z, jnp.stack([z[0], z[1]])]),
    ),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_and_shape_ops(name):
    f, jf = REDUCTIONS[name]
    z = crand((3, 4), C128, lo=0.3, hi=1.5, seed=12)
    assert_same(f(z), jf(z))
    t = like(z)
    assert_same(fg.jvp(f, (z,), (t,)), jo.jvp(jf, (z,), (t,)))
    _, pb = fg.vjp(f, z)
    jout, jpb = jax.vjp(jf, z)
    ct = like(jout, seed=7)
    assert_same(pb(ct), jpb(ct))


def test_real_to_complex_and_back():
    """Functions of real inputs through complex intermediates (``x + 1j*y``, ``exp(1j*x)``)."""

    def f(x, y):
        z = x + 1j * y
        return fnp.sum(fnp.abs(fnp.exp(1j * x) * z) ** 2 + fnp.real(z * z))

    def jf(x, y):
        z = x + 1j * y
        return jnp.sum(jnp.abs(jnp.exp(1j * x) * z) ** 2 + jnp.real(z * z))

    x, y = rrand((4,)), rrand((4,), seed=2)
    assert_same(fg.value_and_grad(f, (0, 1))(x, y), jo.value_and_grad(jf, (0, 1))(x, y))
    assert_same(fg.hessian(f)(x, y), jo.hessian(jf)(x, y))

    def g(x):  # real input, complex output: jacfwd is allowed (as in JAX)
        return fnp.exp(1j * x) * x

    def jg(x):
        return jnp.exp(1j * x) * x

    assert_same(fg.jacfwd(g)(x), jo.jacfwd(jg)(x))
    # astype to complex and back: the cotangent of the cast is the real part
    h = lambda x: fnp.sum(fnp.real(x.astype(fnp.complex128) * (1 + 2j)) ** 2)
    jh = lambda x: jnp.sum(jnp.real(x.astype(jnp.complex128) * (1 + 2j)) ** 2)
    assert_same(fg.grad(h)(x), jo.grad(jh)(x))


def test_complex_primitive():
    """``complex(x, y)`` (lax.complex) and its rules, with a 0-d operand broadcast."""
    x, y = rrand((3,)), rrand((), seed=2)
    assert_same(ew.make_complex(x, y), jax.lax.complex(x, y))
    tans = (like(x), like(y, seed=4))
    assert_same(fg.jvp(ew.make_complex, (x, y), tans), jo.jvp(jax.lax.complex, (x, y), tans))
    ct = like(np.asarray(jax.lax.complex(x, y)), seed=5)
    assert_same(fg.vjp(ew.make_complex, x, y)[1](ct), jax.vjp(jax.lax.complex, x, y)[1](ct))
    assert_same(
        fg.vmap(ew.make_complex, (0, None))(rrand((2, 3)), y),
        jo.vmap(jax.lax.complex, (0, None))(rrand((2, 3)), y),
    )
    with pytest.raises(TypeError, match="complex requires"):
        ew.make_complex(np.ones(2, C64), np.ones(2, C64))
    with pytest.raises(TypeError, match="real requires a complex operand"):
        ew.real(np.ones(2))


def test_vmap_and_jit_of_complex():
    z = crand((4, 3), C128, seed=20)

    def f(v):
        return fnp.sum(fnp.abs(fnp.sin(v) * fnp.conj(v)))

    def jf(v):
        return jnp.sum(jnp.abs(jnp.sin(v) * jnp.conj(v)))

    assert_same(fg.vmap(f)(z), jo.vmap(jf)(z))
    assert_same(fg.vmap(fg.grad(f))(z), jo.vmap(jo.grad(jf))(z))
    assert_same(fg.jit(fg.vmap(fg.grad(f)))(z), jo.vmap(jo.grad(jf))(z))
    assert_same(
        fg.grad(lambda v: fnp.sum(fg.vmap(f)(v)))(z),
        jo.grad(lambda v: jnp.sum(jo.vmap(jf)(v)))(z),
    )


# --------------------------------------------------------------------------- grad, holomorphic


def test_jax_api_cases():
    """The complex cases of JAX's api tests, written against funcgrad."""
    # holomorphic grad of sin at 1 + 2j
    assert_same(
        fg.grad(fnp.sin, holomorphic=True)(1 + 2j), jo.grad(jnp.sin, holomorphic=True)(1 + 2j)
    )
    np.testing.assert_allclose(
        fg.grad(fnp.sin, holomorphic=True)(1 + 2j), 2.0327230070196656 - 3.0518977991518j
    )
    # non-holomorphic grad of a real function of complex inputs
    zs = 0.5j * np.arange(5) + np.arange(5)
    f = lambda z: fnp.sum(fnp.cos(fnp.abs(z)))
    jf = lambda z: jnp.sum(jnp.cos(jnp.abs(z)))
    assert_same(fg.grad(f)(zs), jo.grad(jf)(zs))
    # jacrev of a real function of complex inputs equals its grad
    g = lambda z: fnp.cos(fnp.linalg.norm(2 * z))
    jg = lambda z: jnp.cos(jnp.linalg.norm(2 * z))
    assert_same(fg.jacrev(g)(zs), jo.jacrev(jg)(zs))
    assert_same(fg.jacrev(g)(zs), fg.grad(g)(zs))
    # heterogeneous pytree of complex and real inputs
    a = (np.array(1.0 + 1j), np.array(2.0))
    h = lambda t: fnp.square(fnp.abs(t[0])) + t[1]
    jh = lambda t: jnp.square(jnp.abs(t[0])) + t[1]
    assert_same(fg.grad(h)(a), jo.grad(jh)(a))
    assert_same(fg.grad(h)(a), (np.array(2 - 2j), np.array(1.0)))
    # linear map with a complex constant, through vjp
    lin = lambda x: (1 + 2j) * x
    assert_same(fg.vjp(lin, 1j)[1](3 + 4j), jax.vjp(lin, 1j)[1](3 + 4j))


HOLO = {
    "sin": (fnp.sin, jnp.sin),
    "cube": (lambda z: z**3 + 2 * z, lambda z: z**3 + 2 * z),
    "exp_log": (lambda z: fnp.exp(z) * fnp.log(z), lambda z: jnp.exp(z) * jnp.log(z)),
    "sqrt_tanh": (lambda z: fnp.sqrt(z) / fnp.tanh(z), lambda z: jnp.sqrt(z) / jnp.tanh(z)),
}


@pytest.mark.parametrize("dtype", [C128, C64], ids=["c128", "c64"])
@pytest.mark.parametrize("name", sorted(HOLO))
def test_holomorphic_transforms(name, dtype):
    f, jf = HOLO[name]
    z = dtype(0.7 + 0.4j)
    t = tol(dtype)
    for fg_t, jax_t in (
        (fg.grad, jax.grad),
        (fg.value_and_grad, jax.value_and_grad),
        (fg.jacfwd, jax.jacfwd),
        (fg.jacrev, jax.jacrev),
    ):
        got = fg_t(f, holomorphic=True)(z)
        want = jax_t(jf, holomorphic=True)(z)
        chex.assert_trees_all_close(got, want, rtol=t, atol=t)
        assert jax.tree_util.tree_map(lambda a: np.asarray(a).dtype, got) == jax.tree_util.tree_map(
            lambda a: np.asarray(a).dtype, want
        )
    # second derivative: holomorphic grad of holomorphic grad, and hessian
    g2 = fg.grad(fg.grad(f, holomorphic=True), holomorphic=True)(z)
    chex.assert_trees_all_close(
        g2, jo.grad(jo.grad(jf, holomorphic=True), holomorphic=True)(z), rtol=10 * t, atol=10 * t
    )
    chex.assert_trees_all_close(
        fg.hessian(f, holomorphic=True)(z),
        jo.hessian(jf, holomorphic=True)(z),
        rtol=10 * t,
        atol=10 * t,
    )


def test_holomorphic_vector_functions():
    z = crand((3,), C128, lo=0.3, hi=1.2, seed=30)
    w = crand((2,), C128, lo=0.3, hi=1.2, seed=31)

    def f(z, w):
        return fnp.concatenate([fnp.sin(z) * w[0], fnp.exp(w) * z[:2]])

    def jf(z, w):
        return jnp.concatenate([jnp.sin(z) * w[0], jnp.exp(w) * z[:2]])

    for fg_t, jax_t in ((fg.jacfwd, jax.jacfwd), (fg.jacrev, jax.jacrev)):
        assert_same(
            fg_t(f, argnums=(0, 1), holomorphic=True)(z, w),
            jax_t(jf, argnums=(0, 1), holomorphic=True)(z, w),
        )
    # has_aux with holomorphic
    got = fg.grad(lambda v: (fnp.sum(v * v), v), has_aux=True, holomorphic=True)(z)
    want = jo.grad(lambda v: (jnp.sum(v * v), v), has_aux=True, holomorphic=True)(z)
    assert_same(got, want)
    # under jit and vmap
    hg = fg.grad(lambda v: fnp.sin(v) * v, holomorphic=True)
    jhg = jo.grad(lambda v: jnp.sin(v) * v, holomorphic=True)
    assert_same(fg.jit(fg.vmap(hg))(z), jo.vmap(jhg)(z))


# --------------------------------------------------------------------------- errors as JAX's


def _jax_message(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


def _head(msg):
    """JAX's message up to the advice naming ``jax.vjp``/``jax.jvp`` (funcgrad names its own)."""
    return msg.split(" use jax.")[0]


ERROR_CASES = {
    "grad_complex_output": lambda m: m.grad(lambda x: x**2 + 1j),
    "grad_complex_in_out": lambda m: m.grad(lambda x: x * x),
    "grad_holo_float_in": lambda m: m.grad(lambda x: x**2, holomorphic=True),
    "grad_holo_real_out": lambda m: m.grad(lambda x: (x * x).real, holomorphic=True),
    "vag_complex_output": lambda m: m.value_and_grad(lambda x: x * 1j),
    "vag_holo_float_in": lambda m: m.value_and_grad(lambda x: x**2, holomorphic=True),
    "jacfwd_complex_in": lambda m: m.jacfwd(lambda x: x**2),
    "jacfwd_holo_float_in": lambda m: m.jacfwd(lambda x: x**2, holomorphic=True),
    "jacfwd_holo_real_out": lambda m: m.jacfwd(lambda x: (x * x).real, holomorphic=True),
    "jacrev_complex_out": lambda m: m.jacrev(lambda x: x * x),
    "jacrev_real_in_complex_out": lambda m: m.jacrev(lambda x: x * 1j),
    "jacrev_holo_float_in": lambda m: m.jacrev(lambda x: x**2, holomorphic=True),
    "jacrev_holo_real_out": lambda m: m.jacrev(lambda x: (x * x).real, holomorphic=True),
    "jacrev_int_out": lambda m: m.jacrev(lambda x: (x * 2).astype("int32")),
    "hessian_complex_in": lambda m: m.hessian(lambda x: (x * x).real),
}
_ERROR_INPUTS = {
    "grad_holo_float_in": 3.0,
    "vag_holo_float_in": 3.0,
    "jacfwd_holo_float_in": 3.0,
    "jacrev_holo_float_in": 3.0,
    "grad_complex_output": 3.0,
    "vag_complex_output": 3.0,
    "jacrev_real_in_complex_out": 3.0,
    "jacrev_int_out": 3.0,
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_as_jax(case):
    x = _ERROR_INPUTS.get(case, np.complex64(1 + 2j))
    jtype, jmsg = _jax_message(lambda: ERROR_CASES[case](jax)(x))
    with pytest.raises(jtype) as e:
        ERROR_CASES[case](fg)(x)
    assert str(e.value).startswith(_head(jmsg)), (str(e.value), jmsg)


def test_grad_holomorphic_int_and_mixed_inputs():
    for fn, x in (
        (lambda: fg.grad(lambda x: x, holomorphic=True)(3), "int"),
        (lambda: fg.grad(lambda x: x, holomorphic=True, allow_int=True)(3), "int"),
        (lambda: fg.grad(lambda x, y: x * y, (0, 1), holomorphic=True)(1 + 2j, 3.0), "float"),
    ):
        with pytest.raises(
            TypeError, match=f"holomorphic=True requires inputs with complex dtype, but got {x}"
        ):
            fn()
    # jacfwd of integer inputs: JAX's message
    with pytest.raises(TypeError, match=re.escape("jacfwd requires real-valued inputs")):
        fg.jacfwd(lambda x: x * 1.0)(3)


def test_cotangent_and_tangent_must_be_complex_for_complex_values():
    z = np.complex64(1 + 2j)
    _, pb = fg.vjp(fnp.sin, z)
    with pytest.raises(ValueError):
        jax.vjp(jnp.sin, z)[1](1.0)
    with pytest.raises(ValueError, match="cotangent"):
        pb(1.0)
    with pytest.raises(TypeError):
        jo.jvp(jnp.sin, (z,), (1.0,))
    with pytest.raises(TypeError, match="dtypes must be equal"):
        fg.jvp(fnp.sin, (z,), (1.0,))
    assert_same(pb(np.complex64(1j)), jax.vjp(jnp.sin, z)[1](np.complex64(1j)), rtol=1e-6)


def test_tracer_methods_inside_jit():
    z = crand((3,), C64, seed=40)

    def f(v):
        return v.real, v.imag, v.conj(), v.conjugate(), abs(v), fnp.iscomplexobj(v)

    got = fg.jit(lambda v: f(v)[:5])(z)
    want = jax.jit(lambda v: f(v)[:5])(z)
    assert_same(got, want, rtol=1e-6, atol=1e-6)
    assert fg.jit(lambda v: fnp.asarray(fnp.iscomplexobj(v)))(z)


# --------------------------------------------------------------------------- second order

SECOND_ORDER = {
    "real": (fnp.real, jnp.real),
    "imag": (fnp.imag, jnp.imag),
    "conj": (fnp.conj, jnp.conj),
    "abs": (fnp.abs, jnp.abs),
    "exp": (fnp.exp, jnp.exp),
    "log": (fnp.log, jnp.log),
    "sqrt": (fnp.sqrt, jnp.sqrt),
    "tan": (fnp.tan, jnp.tan),
    "arcsin": (fnp.arcsin, jnp.arcsin),
    "arccos": (fnp.arccos, jnp.arccos),
    "arctan": (fnp.arctan, jnp.arctan),
    "arcsinh": (fnp.arcsinh, jnp.arcsinh),
    "arctanh": (fnp.arctanh, jnp.arctanh),
    "tanh": (fnp.tanh, jnp.tanh),
    "pow_const": (lambda z: z ** (0.5 + 1j), lambda z: z ** (0.5 + 1j)),
    "const_pow": (lambda z: (1.5 - 0.5j) ** z, lambda z: (1.5 - 0.5j) ** z),
    "div": (lambda z: z / (z * z + 2.0), lambda z: z / (z * z + 2.0)),
    "matmul": (
        lambda z: (z.reshape(2, 3) @ fnp.conj(z.reshape(2, 3)).T).reshape(-1),
        lambda z: (z.reshape(2, 3) @ jnp.conj(z.reshape(2, 3)).T).reshape(-1),
    ),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_against_jax(name):
    """Forward-over-reverse (as JAX's check_grads at order 2) on complex inputs."""
    f, jf = SECOND_ORDER[name]
    z = crand((6,), C128, lo=0.2, hi=0.8, seed=50)
    ct = like(np.asarray(jf(z)), seed=51)
    t = like(z, seed=52)

    def pull(fun, vjp):
        return lambda v: vjp(fun, v)[1](ct)[0]

    got = fg.jvp(pull(f, fg.vjp), (z,), (t,))
    want = jo.jvp(pull(jf, jax.vjp), (z,), (t,))
    assert_same(got, want, rtol=1e-8, atol=1e-8)
    _, pb = fg.vjp(pull(f, fg.vjp), z)
    jout, jpb = jax.vjp(pull(jf, jax.vjp), z)
    c2 = like(np.asarray(jout), seed=53)
    assert_same(pb(c2), jpb(c2), rtol=1e-8, atol=1e-8)


# --------------------------------------------------------------------------- numpy odds and ends


def test_rounding_and_closeness_of_complex():
    z = np.array([1.26 + 2.5j, -1.5 + 0.45j, 0.5 - 3.5j])
    for name in ("round", "rint", "around"):
        assert_same(getattr(fnp, name)(z), getattr(jnp, name)(z))
    assert_same(fnp.isclose(z, z + 1e-9), jnp.isclose(z, z + 1e-9))
    assert_same(fnp.isclose(z.astype(C64), 1j), jnp.isclose(z.astype(C64), 1j))
    assert_same(fnp.allclose(z, z * (1 + 1e-7j)), jnp.allclose(z, z * (1 + 1e-7j)))


@pytest.mark.parametrize(
    "case",
    [
        ("clip", lambda m, z: m.clip(z, 0, 1)),
        ("hypot", lambda m, z: m.hypot(z, z)),
        ("fabs", lambda m, z: m.fabs(z)),
    ],
    ids=lambda c: c[0],
)
def test_functions_of_reals_reject_complex_as_jax(case):
    _, fn = case
    z = np.array([1 + 2j])
    jtype, _ = _jax_message(lambda: fn(jnp, z))
    with pytest.raises(jtype, match="complex"):
        fn(fnp, z)
