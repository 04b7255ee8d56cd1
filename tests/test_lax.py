"""funcgrad.lax against jax.lax: values, dtypes, weak types, errors, grad and vmap."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax as jlax

import funcgrad as fg
import funcgrad.lax as flax

RNG = np.random.default_rng(0)


def _same(got, want, rtol=1e-6, atol=1e-6):
    gl, wl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        g, w = jnp.asarray(g), jnp.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        assert getattr(g, "weak_type", False) == getattr(w, "weak_type", False), (g, w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


X = RNG.uniform(0.2, 0.9, (2, 3))
Y = RNG.uniform(0.2, 0.9, (2, 3))
IA = RNG.integers(-20, 20, (2, 3)).astype(np.int32)
J = RNG.integers(0, 5, (2, 3)).astype(np.int32)

UNARY = [
    "neg",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "atanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "logistic",
    "erf",
    "erfc",
    "erf_inv",
    "lgamma",
    "digamma",
    "abs",
    "sign",
    "floor",
    "ceil",
    "is_finite",
    "square",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "pow",
    "max",
    "min",
    "atan2",
    "nextafter",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
INT_BINARY = [
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
    "add",
    "div",
    "rem",
    "max",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    _same(getattr(flax, name)(X), getattr(jlax, name)(X))
    _same(
        getattr(flax, name)(X.astype(np.float32)),
        getattr(jlax, name)(X.astype(np.float32)),
        rtol=1e-5,
    )


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    _same(getattr(flax, name)(X, Y), getattr(jlax, name)(X, Y))
    # Python scalars are weakly typed: with an array of their kind, or with each other
    _same(getattr(flax, name)(X, 0.5), getattr(jlax, name)(X, 0.5))
    _same(getattr(flax, name)(0.7, 0.5), getattr(jlax, name)(0.7, 0.5))


@pytest.mark.parametrize("name", INT_BINARY)
def test_int_binary(name):
    _same(getattr(flax, name)(IA, np.abs(J) + 1), getattr(jlax, name)(IA, np.abs(J) + 1))


@pytest.mark.parametrize("name", ["population_count", "clz", "bitwise_not", "neg", "abs"])
def test_int_unary(name):
    _same(getattr(flax, name)(IA), getattr(jlax, name)(IA))


def test_round_and_integer_pow_and_complex():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994])
    _same(flax.round(x), jlax.round(x))
    for m in (jlax.RoundingMethod.TO_NEAREST_EVEN, flax.RoundingMethod.TO_NEAREST_EVEN):
        _same(flax.round(x, m), jlax.round(x, jlax.RoundingMethod.TO_NEAREST_EVEN))
    _same(flax.integer_pow(X, 3), jlax.integer_pow(X, 3))
    z = flax.complex(X, Y)
    _same(z, jlax.complex(X, Y))
    for f in ("real", "imag", "conj", "abs"):
        _same(getattr(flax, f)(z), getattr(jlax, f)(z))


def test_elementwise_errors_name_the_function():
    with pytest.raises(TypeError, match="add"):
        flax.add(X, IA)
    with pytest.raises(TypeError, match="add"):
        flax.add(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="shift_left"):
        flax.shift_left(X, X)
    with pytest.raises(TypeError, match="integer_pow"):
        flax.integer_pow(X, 1.5)


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "sin",
        "tanh",
        "logistic",
        "erf",
        "erfc",
        "sqrt",
        "rsqrt",
        "log1p",
        "exp2",
        "cbrt",
        "lgamma",
    ],
)
def test_unary_grad_and_vmap(name):
    f, g = getattr(flax, name), getattr(jlax, name)
    np.testing.assert_allclose(
        fg.grad(lambda x: f(x).sum())(X), jo.grad(lambda x: g(x).sum())(X), rtol=1e-6
    )
    np.testing.assert_allclose(fg.vmap(f)(X), jo.vmap(g)(X), rtol=1e-6)


# --------------------------------------------------------------------------- structural

A = RNG.normal(size=(2, 3, 4))

STRUCT = [
    ("broadcast_in_dim", (X, (4, 2, 3), (1, 2)), {}),
    ("broadcast", (X, (5,)), {}),
    ("broadcast_to_rank", (X, 4), {}),
    ("reshape", (A, (6, 4)), {}),
    ("reshape", (A, (4, 6)), {"dimensions": (2, 0, 1)}),
    ("transpose", (A, (2, 0, 1)), {}),
    ("squeeze", (A[:, :1], (1,)), {}),
    ("expand_dims", (A, (0, 2)), {}),
    ("rev", (A, (0, 2)), {}),
    ("collapse", (A, 1, 3), {}),
    ("tile", (X, (2, 3)), {}),
    ("slice", (A, (0, 1, 0), (2, 3, 4), (1, 1, 2)), {}),
    ("slice_in_dim", (A, 1, None), {"axis": 2}),
    ("slice_in_dim", (A, -3, -1, 2, 2), {}),
    ("index_in_dim", (A, -1, 1), {}),
    ("index_in_dim", (A, 2, 2, False), {}),
    ("dynamic_slice", (A, (1, 1, 2), (1, 2, 2)), {}),
    ("dynamic_slice", (A, (-1, 0, 3), (1, 2, 2)), {}),
    ("dynamic_slice_in_dim", (A, 2, 2, 2), {}),
    ("dynamic_index_in_dim", (A, -1, 1, False), {}),
    ("dynamic_update_slice", (A, np.ones((1, 2, 2)), (1, 2, 5)), {}),
    ("dynamic_update_slice_in_dim", (A, np.ones((2, 3, 1)), -1, 2), {}),
    ("dynamic_update_index_in_dim", (A, np.ones((2, 4)), 1, 1), {}),
    ("pad", (X, 0.5, ((1, 2, 1), (-1, 0, 2))), {}),
    ("concatenate", ([X, Y, X], 1), {}),
    ("select", (X > 0.5, X, Y), {}),
    ("select_n", (J % 3, X, Y, -X), {}),
    ("clamp", (0.4, X, 0.6), {}),
    ("convert_element_type", (X, np.float32), {}),
    ("convert_element_type", (IA, np.bool_), {}),
    ("bitcast_convert_type", (X.astype(np.float32), np.int32), {}),
    ("bitcast_convert_type", (IA, np.uint8), {}),
    ("dot_general", (A, RNG.normal(size=(2, 4, 5)), (((2,), (1,)), ((0,), (0,)))), {}),
    ("dot", (X, Y.T), {}),
    ("dot", (X[0], Y[0]), {"precision": jlax.Precision.HIGHEST}),
    ("dot", (X, Y.T), {"preferred_element_type": np.float64}),
    ("batch_matmul", (A, RNG.normal(size=(2, 4, 3))), {}),
    ("full", ((2, 3), 1.5), {}),
    ("full", ((2,), 3, np.int32), {}),
    ("full_like", (X, 2), {}),
    ("full_like", (IA, 2.0, np.float32, (4,)), {}),
    ("broadcasted_iota", (np.int32, (2, 3), 1), {}),
    ("iota", (np.float32, 5), {}),
]


@pytest.mark.parametrize("name,args,kw", STRUCT, ids=[s[0] for s in STRUCT])
def test_structural(name, args, kw):
    _same(getattr(flax, name)(*args, **kw), getattr(jlax, name)(*args, **kw))


def test_split_and_zeros_like():
    _same(flax.split(A, (1, 3), axis=2), jlax.split(A, (1, 3), axis=2))
    _same(flax.zeros_like_array(X), jnp.zeros_like(X))
    with pytest.raises(ValueError, match="split"):
        flax.split(A, (1, 2), axis=2)


def test_structural_errors():
    with pytest.raises(TypeError, match=r"broadcast_in_dim|reshape"):
        flax.reshape(A, (5, 5))
    with pytest.raises(TypeError, match="select"):
        flax.select(X, X, Y)
    with pytest.raises(TypeError, match="dot"):
        flax.dot(A, A)
    with pytest.raises(TypeError, match="dynamic_slice"):
        flax.dynamic_slice(A, (0, 0), (1, 1, 1))
    with pytest.raises(IndexError, match="index_in_dim"):
        flax.index_in_dim(A, 5, 1)


def test_structural_grad_vmap_jit():
    def f(mod, x):
        y = mod.dynamic_slice(x, (1, 0, 1), (1, 3, 2))
        y = mod.pad(y, 0.0, ((0, 1, 0), (1, 0, 1), (0, 0, 0)))
        y = mod.dynamic_update_slice(x[:2, :2, :2] * 0, y[:, :2, :], (0, 0, 0))
        z = mod.concatenate([y, mod.rev(y, (1,))], 1)
        return (mod.dot_general(z, z, (((2,), (2,)), ((0,), (0,)))) ** 2).sum()

    want = jo.grad(lambda x: f(jlax, x))(A)
    np.testing.assert_allclose(fg.grad(lambda x: f(flax, x))(A), want, rtol=1e-10)
    np.testing.assert_allclose(fg.jit(fg.grad(lambda x: f(flax, x)))(A), want, rtol=1e-10)
    g = lambda mod: lambda x, i: mod.dynamic_index_in_dim(x, i, 1, False)
    idx = np.array([0, 2], np.int32)
    np.testing.assert_allclose(fg.vmap(g(flax))(A, idx), jo.vmap(g(jlax))(A, idx))


# --------------------------------------------------------------------------- reductions


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
@pytest.mark.parametrize("axes", [(0,), (1, 2), (), (0, 1, 2)])
def test_reductions(name, axes):
    _same(getattr(flax, name)(A, axes), getattr(jlax, name)(A, axes))


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or", "reduce_xor"])
def test_bit_reductions(name):
    for x in (IA, IA > 0, RNG.integers(0, 2**31, (3, 5)).astype(np.int32)):
        for axes in ((0,), (1,), (0, 1)):
            _same(getattr(flax, name)(x, axes), getattr(jlax, name)(x, axes))


@pytest.mark.parametrize(
    "comp,init",
    [("add", 0.0), ("max", -np.inf), ("min", np.inf), ("mul", 1.0), ("add", 2.0), ("max", 0.5)],
)
def test_reduce_monoids(comp, init):
    for fn in (getattr(flax, comp), getattr(jlax, comp)):
        _same(flax.reduce(A, init, fn, (0, 2)), jlax.reduce(A, init, getattr(jlax, comp), (0, 2)))
    # a pytree of operands reduces leaf by leaf
    got = flax.reduce({"a": A, "i": IA}, {"a": init, "i": np.int32(0)}, flax.add, (0,))
    assert got["i"].dtype == np.int32 and got["a"].shape == (3, 4)


def test_reduce_unknown_computation():
    # not a monoid: the general path (tests/test_lax_general_reductions.py), as jax.lax
    comp = lambda a, b: a + 2 * b
    _same(flax.reduce(A, 0.0, comp, (0,)), jlax.reduce(A, 0.0, comp, (0,)))


def test_arg_reductions():
    for name in ("argmax", "argmin"):
        for axis, dt in ((0, np.int32), (2, np.int64)):
            _same(getattr(flax, name)(A, axis, dt), getattr(jlax, name)(A, axis, dt))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True)])
def test_cumulative(name, axis, reverse):
    f, g = getattr(flax, name), getattr(jlax, name)
    _same(f(A, axis=axis, reverse=reverse), g(A, axis=axis, reverse=reverse), rtol=1e-10)
    w = RNG.normal(size=A.shape)
    np.testing.assert_allclose(
        fg.grad(lambda x: (f(x, axis, reverse) * w).sum())(A),
        jo.grad(lambda x: (g(x, axis, reverse) * w).sum())(A),
        rtol=1e-8,
        atol=1e-10,
    )


def test_cumlogsumexp_is_stable():
    x = np.array([1000.0, 1000.0, -1000.0, 1001.0])
    _same(flax.cumlogsumexp(x), jlax.cumlogsumexp(x))
    with pytest.raises(TypeError, match="cumlogsumexp"):
        flax.cumlogsumexp(IA)


def test_sort_family():
    k = RNG.integers(0, 3, (4, 5)).astype(np.float64)
    v = RNG.normal(size=(4, 5))
    _same(flax.sort(v), jlax.sort(v))
    _same(flax.sort(v, dimension=0), jlax.sort(v, dimension=0))
    _same(flax.sort((k, v), num_keys=1), jlax.sort((k, v), num_keys=1))
    _same(flax.sort([k, v], num_keys=2), jlax.sort([k, v], num_keys=2))
    _same(flax.sort_key_val(k, v), jlax.sort_key_val(k, v))
    w = RNG.normal(size=(4, 5))
    np.testing.assert_allclose(
        fg.grad(lambda v: (flax.sort_key_val(k, v)[1] * w).sum())(v),
        jo.grad(lambda v: (jlax.sort_key_val(k, v)[1] * w).sum())(v),
    )


@pytest.mark.parametrize("axis", [-1, 0])
def test_top_k(axis):
    x = RNG.permutation(24).reshape(4, 6).astype(np.float64)
    _same(flax.top_k(x, 3, axis=axis), jlax.top_k(x, 3, axis=axis))
    _same(flax.top_k(x.astype(np.int32), 2), jlax.top_k(x.astype(np.int32), 2))
    w = RNG.normal(size=(4, 3) if axis == -1 else (3, 6))
    np.testing.assert_allclose(
        fg.grad(lambda x: (flax.top_k(x, 3, axis=axis)[0] * w).sum())(x),
        jo.grad(lambda x: (jlax.top_k(x, 3, axis=axis)[0] * w).sum())(x),
    )
    np.testing.assert_allclose(
        fg.vmap(lambda r: flax.top_k(r, 2)[0])(x), jo.vmap(lambda r: jlax.top_k(r, 2)[0])(x)
    )
    with pytest.raises(ValueError, match="top_k"):
        flax.top_k(x, 7)


# --------------------------------------------------------------------------- control


def test_map_and_batch_size():
    xs = RNG.normal(size=(7, 3))
    f = lambda x: x * 2.0 + 1.0
    want = jlax.map(f, xs)
    for bs in (None, 0, 2, 7, 10):  # 0: one full batch, as JAX
        _same(flax.map(f, xs, batch_size=bs), want)
    tree = {"a": xs, "b": xs[:, 0]}
    got = flax.map(lambda t: t["a"] * t["b"][None], tree, batch_size=3)
    _same(got, jlax.map(lambda t: t["a"] * t["b"][None], tree, batch_size=3))


@given(n=st.integers(1, 9), reverse=st.booleans())
def test_associative_scan(n, reverse):
    x = np.arange(1.0, 2 * n + 1).reshape(2, n) / 3
    for fn_f, fn_j in ((flax.add, jlax.add), (flax.max, jlax.max)):
        _same(
            flax.associative_scan(fn_f, x, reverse=reverse, axis=1),
            jlax.associative_scan(fn_j, x, reverse=reverse, axis=1),
            rtol=1e-12,
        )
    # a pytree of elements: first-order linear recurrence (a, b) pairs
    fa = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
    _same(
        flax.associative_scan(fa, (x, -x), axis=1),
        jlax.associative_scan(fa, (x, -x), axis=1),
        rtol=1e-12,
    )


def test_control_flow_reexports_accept_unroll():
    body = lambda i, c: c * 1.5 + i
    one = np.float64(1.0)
    _same(flax.fori_loop(0, 4, body, one, unroll=2), jlax.fori_loop(0, 4, body, one, unroll=2))
    _same(
        flax.scan(lambda c, x: (c + x, c), one, np.arange(3.0), unroll=True),
        jlax.scan(lambda c, x: (c + x, c), one, np.arange(3.0), unroll=True),
    )
    assert flax.while_loop is fg.while_loop and flax.cond is fg.cond
    assert flax.stop_gradient is fg.stop_gradient


# ---------------------------------------------------------------------------
# special functions, fft, optimization_barrier, stack/unstack, scatter_sub, conv_transpose
# ---------------------------------------------------------------------------

LAX_RNG = np.random.default_rng(0)

SX = np.array([0.5, 1.5, 3.0])
SA = np.array([0.5, 2.0, 3.0])


@pytest.mark.parametrize(
    "name, args",
    [
        ("bessel_i0e", (np.array([-2.0, 0.0, 0.5, 3.0]),)),
        ("bessel_i1e", (np.array([-2.0, 0.0, 0.5, 3.0]),)),
        ("igamma", (SA, SX)),
        ("igammac", (SA, SX)),
        ("igamma_grad_a", (SA, SX)),
        ("betainc", (SA, SA[::-1], np.array([0.1, 0.5, 0.9]))),
        ("polygamma", (np.array([0.0, 1.0, 2.0]), SX)),
        ("zeta", (np.array([2.0, 3.0, 4.5]), SX)),
        ("random_gamma_grad", (SA, SX)),
        ("reciprocal", (SX,)),
    ],
)
def test_lax_special_values(name, args):
    jo.same_values(getattr(flax, name)(*args), getattr(jlax, name)(*args))


def test_lax_special_scalar_operand_and_grad():
    jo.same_values(flax.igamma(2.0, SX), jlax.igamma(2.0, SX))
    x32 = SX.astype(np.float32)
    jo.same_values(flax.igamma(np.float32(2.0), x32), jlax.igamma(np.float32(2.0), x32), rtol=1e-5)
    g = fg.grad(lambda x: flax.igamma(2.0, x).sum())(SX)
    jo.same_values(g, jo.grad(lambda x: jlax.igamma(2.0, x).sum())(SX))
    g = fg.grad(lambda x: flax.zeta(3.0, x).sum())(SX)
    jo.same_values(
        g, -3.0 * jlax.zeta(4.0, SX)
    )  # d/dq zeta(s, q) = -s zeta(s + 1, q) (JAX has no rule)
    g = fg.grad(lambda x: flax.bessel_i1e(x).sum())(SX)
    jo.same_values(g, jo.grad(lambda x: jlax.bessel_i1e(x).sum())(SX))


def test_lax_special_errors():
    # (igamma is its row's lax form: the binary forms' dtype error, JAX's size-1 broadcasting)
    with pytest.raises(TypeError, match="igamma requires arguments to have the same dtypes"):
        flax.igamma(np.ones(2, np.float32), np.ones(2))
    jo.same_values(flax.igamma(SA[None], SX[:, None]), jlax.igamma(SA[None], SX[:, None]))
    with pytest.raises(TypeError, match="zeta: operands must have one shape"):
        flax.zeta(np.ones(2), np.ones(3))


@pytest.mark.parametrize("kind", ["FFT", "IFFT"])
def test_lax_fft(kind):
    c = LAX_RNG.normal(size=(2, 4)) + 1j * LAX_RNG.normal(size=(2, 4))
    jo.same_values(
        flax.fft(c, getattr(flax.FftType, kind), (4,)),
        jlax.fft(c, getattr(jlax.FftType, kind), (4,)),
    )
    jo.same_values(
        flax.fft(c, getattr(jlax.FftType, kind), (2, 4)),
        jlax.fft(c, getattr(jlax.FftType, kind), (2, 4)),
    )
    r = LAX_RNG.normal(size=(3, 6))
    jo.same_values(flax.fft(r, flax.FftType.RFFT, (6,)), jlax.fft(r, jlax.FftType.RFFT, (6,)))


def test_optimization_barrier_pytree_and_grad():
    tree = {"a": SX, "b": (np.float64(2.0),)}
    res = flax.optimization_barrier(tree)
    assert set(res) == {"a", "b"} and isinstance(res["b"], tuple)
    jo.same_values(res["a"], SX)
    g = fg.grad(lambda x: (flax.optimization_barrier((x, x))[0] ** 2).sum())(SX)
    jo.same_values(g, 2 * SX)
    assert flax.optimization_barrier(()) == ()


def test_broadcast_shapes_empty_stack_unstack():
    assert flax.broadcast_shapes((2, 1), (3,)) == jlax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert flax.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="broadcast_shapes"):
        flax.broadcast_shapes((2,), (3,))
    e = flax.empty((2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32
    xs = [LAX_RNG.normal(size=(2, 3)) for _ in range(3)]
    for axis in (0, 1, -1):
        jo.same_values(flax.stack(xs, axis), jlax.stack(xs, axis))
        for a, b in zip(flax.unstack(xs[0], axis), jlax.unstack(xs[0], axis)):
            jo.same_values(a, b)
    g = fg.grad(lambda x: (flax.stack([x, 2 * x], 1) ** 2).sum())(xs[0])
    jo.same_values(g, 10 * xs[0])
    with pytest.raises(ValueError, match="stack: axis 3"):
        flax.stack(xs, 3)


def test_scatter_sub():
    dn = jlax.ScatterDimensionNumbers((), (0,), (0,))
    idx, upd = np.array([[0], [2], [0]]), np.array([1.0, 2.0, 3.0])
    jo.same_values(flax.scatter_sub(SX, idx, upd, dn), jlax.scatter_sub(SX, idx, upd, dn))
    g = fg.grad(lambda u: flax.scatter_sub(SX, idx, u, dn).sum())(upd)
    jo.same_values(g, -np.ones(3))


def test_dimension_number_aliases():
    assert flax.DotDimensionNumbers is not None
    assert flax.ConvGeneralDilatedDimensionNumbers is not None


LHS = LAX_RNG.normal(size=(1, 5, 6, 2))
RHS = LAX_RNG.normal(size=(3, 2, 2, 4))


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_conv_transpose(padding, transpose_kernel):
    w = np.swapaxes(RHS, 2, 3).copy() if transpose_kernel else RHS
    kw = dict(transpose_kernel=transpose_kernel)
    jo.same_values(
        flax.conv_transpose(LHS, w, (2, 1), padding, **kw),
        jlax.conv_transpose(LHS, w, (2, 1), padding, **kw),
        rtol=1e-10,
    )


def test_conv_transpose_nchw_dilation_consistent_padding_and_grad():
    lhs, rhs = LAX_RNG.normal(size=(1, 2, 4, 4)), LAX_RNG.normal(size=(3, 2, 2, 2))
    dn = ("NCHW", "OIHW", "NCHW")
    for pad, cons in [("SAME", False), ([(1, 0), (0, 1)], True)]:
        kw = dict(rhs_dilation=(2, 1), dimension_numbers=dn, use_consistent_padding=cons)
        jo.same_values(
            flax.conv_transpose(lhs, rhs, (2, 2), pad, **kw),
            jlax.conv_transpose(lhs, rhs, (2, 2), pad, **kw),
        )
    g = fg.grad(lambda w: flax.conv_transpose(LHS, w, (2, 1), "SAME").sum())(RHS)
    jo.same_values(g, jo.grad(lambda w: jlax.conv_transpose(LHS, w, (2, 1), "SAME").sum())(RHS))


def test_conv_with_general_padding_and_shape_tuples():
    lhs, rhs = LAX_RNG.normal(size=(1, 2, 5, 5)), LAX_RNG.normal(size=(3, 2, 2, 2))
    args = ((1, 1), [(1, 1), (0, 1)], (2, 1), (1, 2))
    jo.same_values(
        flax.conv_with_general_padding(lhs, rhs, *args),
        jlax.conv_with_general_padding(lhs, rhs, *args),
    )
    for pads in ["SAME", "VALID", [(1, 0), (0, 0)]]:
        ours = flax.conv_shape_tuple((2, 3, 7, 8), (4, 3, 3, 2), (2, 1), pads)
        assert ours == tuple(
            int(d) for d in jlax.conv_shape_tuple((2, 3, 7, 8), (4, 3, 3, 2), (2, 1), pads)
        )
    assert flax.conv_shape_tuple((4, 3, 7, 8), (4, 3, 3, 2), (1, 1), "VALID", 2)[0] == 2
    for dn in [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW")]:
        for pad in ["SAME", "VALID", [(1, 2), (0, 1)]]:
            ours = flax.conv_transpose_shape_tuple(LHS.shape, RHS.shape, (2, 1), pad, dn)
            ref = jlax.conv_transpose_shape_tuple(LHS.shape, RHS.shape, (2, 1), pad, dn)
            assert ours == tuple(int(d) for d in ref)


def test_conv_transpose_errors():
    with pytest.raises(TypeError, match="conv_transpose: lhs and rhs"):
        flax.conv_transpose(np.ones((1, 3, 3, 1)), np.ones((3, 3, 1)), (1, 1), "SAME")
    with pytest.raises(ValueError, match="conv_transpose: padding"):
        flax.conv_transpose(LHS, RHS, (2, 1), ["FULL", "SAME"], use_consistent_padding=True)


def test_vmap_of_select_with_a_python_bool_predicate():
    """An unmapped Python-bool predicate reaches select_n's host rule as a Python bool."""
    import jax

    for pred, axes in ((True, (None, 0, None)), (np.array([False, True]), (0, 0, None))):
        args = (pred, np.array([0, 1], np.float32), np.array(3, np.float32))
        got = fg.vmap(fg.lax.select, axes)(*args)
        want = jax.vmap(jax.lax.select, axes)(*args)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
