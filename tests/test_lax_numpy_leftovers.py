"""The remaining small ``jax.lax`` / ``jax.numpy`` names (funcgrad/lax/_extras.py,
funcgrad/numpy/_extras.py), checked against JAX's own values, dtypes and gradients."""

import jax
import jax.numpy as jnp
import jax_oracle as jo
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as fl
from funcgrad.errors import ConcretizationTypeError

L = jax.lax
RNG = np.random.default_rng(0)


def same(a, b, rtol=1e-6, atol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------- lax: special


X = np.array([0.5, 1.5, 3.0])
A = np.array([0.5, 2.0, 3.0])


@pytest.mark.parametrize(
    "name, args",
    [
        ("bessel_i0e", (np.array([-2.0, 0.0, 0.5, 3.0]),)),
        ("bessel_i1e", (np.array([-2.0, 0.0, 0.5, 3.0]),)),
        ("igamma", (A, X)),
        ("igammac", (A, X)),
        ("igamma_grad_a", (A, X)),
        ("betainc", (A, A[::-1], np.array([0.1, 0.5, 0.9]))),
        ("polygamma", (np.array([0.0, 1.0, 2.0]), X)),
        ("zeta", (np.array([2.0, 3.0, 4.5]), X)),
        ("random_gamma_grad", (A, X)),
        ("reciprocal", (X,)),
    ],
)
def test_lax_special_values(name, args):
    same(getattr(fl, name)(*args), getattr(L, name)(*args))


def test_lax_special_scalar_operand_and_grad():
    same(fl.igamma(2.0, X), L.igamma(2.0, X))
    x32 = X.astype(np.float32)
    same(fl.igamma(np.float32(2.0), x32), L.igamma(np.float32(2.0), x32), rtol=1e-5)
    g = fg.grad(lambda x: fl.igamma(2.0, x).sum())(X)
    same(g, jo.grad(lambda x: L.igamma(2.0, x).sum())(X))
    g = fg.grad(lambda x: fl.zeta(3.0, x).sum())(X)
    same(g, -3.0 * L.zeta(4.0, X))  # d/dq zeta(s, q) = -s zeta(s + 1, q) (JAX has no rule)
    g = fg.grad(lambda x: fl.bessel_i1e(x).sum())(X)
    same(g, jo.grad(lambda x: L.bessel_i1e(x).sum())(X))


def test_lax_special_errors():
    with pytest.raises(TypeError, match="igamma: operands must have one dtype"):
        fl.igamma(np.ones(2, np.float32), np.ones(2))
    with pytest.raises(TypeError, match="zeta: operands must have one shape"):
        fl.zeta(np.ones(2), np.ones(3))


# --------------------------------------------------------------------------- lax: misc


@pytest.mark.parametrize("kind", ["FFT", "IFFT"])
def test_lax_fft(kind):
    c = RNG.normal(size=(2, 4)) + 1j * RNG.normal(size=(2, 4))
    same(fl.fft(c, getattr(fl.FftType, kind), (4,)), L.fft(c, getattr(L.FftType, kind), (4,)))
    same(fl.fft(c, getattr(L.FftType, kind), (2, 4)), L.fft(c, getattr(L.FftType, kind), (2, 4)))
    r = RNG.normal(size=(3, 6))
    same(fl.fft(r, fl.FftType.RFFT, (6,)), L.fft(r, L.FftType.RFFT, (6,)))


def test_optimization_barrier_pytree_and_grad():
    tree = {"a": X, "b": (np.float64(2.0),)}
    res = fl.optimization_barrier(tree)
    assert set(res) == {"a", "b"} and isinstance(res["b"], tuple)
    same(res["a"], X)
    g = fg.grad(lambda x: (fl.optimization_barrier((x, x))[0] ** 2).sum())(X)
    same(g, 2 * X)
    assert fl.optimization_barrier(()) == ()


def test_broadcast_shapes_empty_stack_unstack():
    assert fl.broadcast_shapes((2, 1), (3,)) == L.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert fl.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="broadcast_shapes"):
        fl.broadcast_shapes((2,), (3,))
    e = fl.empty((2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32
    xs = [RNG.normal(size=(2, 3)) for _ in range(3)]
    for axis in (0, 1, -1):
        same(fl.stack(xs, axis), L.stack(xs, axis))
        for a, b in zip(fl.unstack(xs[0], axis), L.unstack(xs[0], axis)):
            same(a, b)
    g = fg.grad(lambda x: (fl.stack([x, 2 * x], 1) ** 2).sum())(xs[0])
    same(g, 10 * xs[0])
    with pytest.raises(ValueError, match="stack: axis 3"):
        fl.stack(xs, 3)


def test_scatter_sub():
    dn = L.ScatterDimensionNumbers((), (0,), (0,))
    idx, upd = np.array([[0], [2], [0]]), np.array([1.0, 2.0, 3.0])
    same(fl.scatter_sub(X, idx, upd, dn), L.scatter_sub(X, idx, upd, dn))
    g = fg.grad(lambda u: fl.scatter_sub(X, idx, u, dn).sum())(upd)
    same(g, -np.ones(3))


def test_dimension_number_aliases():
    assert fl.DotDimensionNumbers is not None
    assert fl.ConvGeneralDilatedDimensionNumbers is not None


# --------------------------------------------------------------------------- lax: conv

LHS = RNG.normal(size=(1, 5, 6, 2))
RHS = RNG.normal(size=(3, 2, 2, 4))


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_conv_transpose(padding, transpose_kernel):
    w = np.swapaxes(RHS, 2, 3).copy() if transpose_kernel else RHS
    kw = dict(transpose_kernel=transpose_kernel)
    same(
        fl.conv_transpose(LHS, w, (2, 1), padding, **kw),
        L.conv_transpose(LHS, w, (2, 1), padding, **kw),
        rtol=1e-10,
    )


def test_conv_transpose_nchw_dilation_consistent_padding_and_grad():
    lhs, rhs = RNG.normal(size=(1, 2, 4, 4)), RNG.normal(size=(3, 2, 2, 2))
    dn = ("NCHW", "OIHW", "NCHW")
    for pad, cons in [("SAME", False), ([(1, 0), (0, 1)], True)]:
        kw = dict(rhs_dilation=(2, 1), dimension_numbers=dn, use_consistent_padding=cons)
        same(
            fl.conv_transpose(lhs, rhs, (2, 2), pad, **kw),
            L.conv_transpose(lhs, rhs, (2, 2), pad, **kw),
        )
    g = fg.grad(lambda w: fl.conv_transpose(LHS, w, (2, 1), "SAME").sum())(RHS)
    same(g, jo.grad(lambda w: L.conv_transpose(LHS, w, (2, 1), "SAME").sum())(RHS))


def test_conv_with_general_padding_and_shape_tuples():
    lhs, rhs = RNG.normal(size=(1, 2, 5, 5)), RNG.normal(size=(3, 2, 2, 2))
    args = ((1, 1), [(1, 1), (0, 1)], (2, 1), (1, 2))
    same(
        fl.conv_with_general_padding(lhs, rhs, *args),
        L.conv_with_general_padding(lhs, rhs, *args),
    )
    for pads in ["SAME", "VALID", [(1, 0), (0, 0)]]:
        ours = fl.conv_shape_tuple((2, 3, 7, 8), (4, 3, 3, 2), (2, 1), pads)
        assert ours == tuple(
            int(d) for d in L.conv_shape_tuple((2, 3, 7, 8), (4, 3, 3, 2), (2, 1), pads)
        )
    assert fl.conv_shape_tuple((4, 3, 7, 8), (4, 3, 3, 2), (1, 1), "VALID", 2)[0] == 2
    for dn in [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW")]:
        for pad in ["SAME", "VALID", [(1, 2), (0, 1)]]:
            ours = fl.conv_transpose_shape_tuple(LHS.shape, RHS.shape, (2, 1), pad, dn)
            ref = L.conv_transpose_shape_tuple(LHS.shape, RHS.shape, (2, 1), pad, dn)
            assert ours == tuple(int(d) for d in ref)


def test_conv_transpose_errors():
    with pytest.raises(TypeError, match="conv_transpose: lhs and rhs"):
        fl.conv_transpose(np.ones((1, 3, 3, 1)), np.ones((3, 3, 1)), (1, 1), "SAME")
    with pytest.raises(ValueError, match="conv_transpose: padding"):
        fl.conv_transpose(LHS, RHS, (2, 1), ["FULL", "SAME"], use_consistent_padding=True)


# --------------------------------------------------------------------------- numpy: dtypes


@pytest.mark.parametrize(
    "name",
    ["bool", "cdouble", "complex_", "csingle", "double", "float_", "int_", "single", "uint"]
    + [n for n in dir(ml_dtypes) if n.startswith("float8_") and hasattr(jnp, n)],
)
def test_dtype_aliases(name):
    assert np.dtype(getattr(fnp, name)) == np.dtype(getattr(jnp, name))
    if not name.startswith("float8_"):  # (funcgrad arrays do not hold float8 yet)
        assert fnp.zeros(2, getattr(fnp, name)).dtype == np.dtype(getattr(jnp, name))


def test_bool_alias_keeps_helpers_working():
    assert fnp.can_cast(np.int8, np.int16) is True and fnp.isscalar(3) is True


# --------------------------------------------------------------------------- numpy: bits

IA = np.array([3, -8, 12, 0, 7], np.int32)
J = np.array([1, 2, 18, 5, 0], np.int32)


@pytest.mark.parametrize(
    "name", ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"]
)
@pytest.mark.parametrize("dtype", [np.int8, np.uint16])
def test_integer_binary(name, dtype):
    x, y = np.abs(IA).astype(dtype) if dtype == np.uint16 else IA.astype(dtype), J.astype(dtype)
    if "shift" in name:
        y = y % 4
    same(getattr(fnp, name)(x, y), getattr(jnp, name)(x, y))
    same(getattr(fnp, name)(x, 3), getattr(jnp, name)(x, 3))


def test_gcd_jit_and_errors():
    same(fg.jit(fnp.gcd)(IA, J), jnp.gcd(IA, J))
    same(fnp.right_shift(np.uint8(200), 1), jnp.right_shift(np.uint8(200), 1))
    with pytest.raises(TypeError, match="gcd"):
        fnp.gcd(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="left_shift"):
        fnp.left_shift(np.ones(2), 1)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint32, np.bool_])
def test_bitwise_count(dtype):
    x = IA.astype(dtype)
    same(fnp.bitwise_count(x), jnp.bitwise_count(x))


# --------------------------------------------------------------------------- numpy: floats

F = np.array([3.0, 0.0, -0.3, np.inf, 1e-3, 4.0, -np.inf, np.nan, 1e30, -7.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_decomposition(dtype):
    f = F.astype(dtype)
    for a, b in zip(fnp.frexp(f), jnp.frexp(f)):
        same(a, b)
    for a, b in zip(fnp.modf(f), jnp.modf(f)):
        same(a, b)
    same(fnp.spacing(f), jnp.spacing(f))
    same(fnp.nextafter(f, dtype(0)), jnp.nextafter(f, dtype(0)))
    e = np.arange(-5, 5, dtype=np.int32)
    same(fnp.ldexp(f, e), jnp.ldexp(f, e))
    same(
        fnp.ldexp(np.array([1.5], dtype), np.array([-140])),
        jnp.ldexp(np.array([1.5], dtype), np.array([-140])),
    )


def test_vmap_of_loops_and_bit_tricks():
    a, b = np.array([[4, 6], [9, 12]]), np.array([[6, 4], [6, 8]])
    same(fg.vmap(fnp.gcd)(a, b), jnp.gcd(a, b))
    f = np.array([[3.0, 5.0], [0.1, 8.0]])
    for x, y in zip(fg.vmap(fnp.frexp)(f), jnp.frexp(f)):
        same(x, y)


def test_float_helpers_grad_and_errors():
    same(fnp.ldexp(3, 2), jnp.ldexp(3, 2))
    g = fg.grad(lambda x: fnp.modf(x)[0].sum())(np.array([1.5, -2.25]))
    same(g, np.ones(2))
    g = fg.grad(lambda x: fnp.ldexp(x, np.array([2, -1])).sum())(np.array([1.5, -2.25]))
    same(g, np.array([4.0, 0.5]))
    with pytest.raises(TypeError, match="ldexp"):
        fnp.ldexp(np.ones(2), np.ones(2))


def test_i0_kaiser():
    x = np.array([-2.0, 0.0, 0.5, 3.0])
    same(fnp.i0(x), jnp.i0(x))
    same(fg.grad(lambda v: fnp.i0(v).sum())(x), jo.grad(lambda v: jnp.i0(v).sum())(x))
    for m in (1, 6):
        same(fnp.kaiser(m, 2.5), jnp.kaiser(m, 2.5))
    same(
        fg.grad(lambda b: fnp.kaiser(5, b).sum())(2.5),
        jo.grad(lambda b: jnp.kaiser(5, b).sum())(2.5),
    )


# --------------------------------------------------------------------------- index tricks


def test_grids():
    same(fnp.mgrid[0:3, 0:2], jnp.mgrid[0:3, 0:2])
    same(fnp.mgrid[0:1:5j], jnp.mgrid[0:1:5j])
    same(fnp.mgrid[0:1:0.25, 0:2], jnp.mgrid[0:1:0.25, 0:2])
    for a, b in zip(fnp.ogrid[0:3, 1:4:2], jnp.ogrid[0:3, 1:4:2]):
        same(a, b)


@pytest.mark.parametrize(
    "key",
    [
        (slice(1, 3), [5, 6], 7),
        ("0,2", [1, 2]),
        ("0,2,0", [1, 2], [3, 4]),
        ("1,3", [1, 2], [3, 4]),
        ("0,3,1", [1, 2]),
        ("-1", np.ones((2, 2)), np.zeros((2, 1))),
        (slice(0, 1, 3j), 2.5),
    ],
)
def test_r_(key):
    same(fnp.r_[key], jnp.r_[key])


def test_c_():
    same(fnp.c_[[1, 2], [3, 4]], jnp.c_[[1, 2], [3, 4]])
    same(fnp.c_[np.ones((2, 2)), [3, 4]], jnp.c_[np.ones((2, 2)), [3, 4]])


# --------------------------------------------------------------------------- polyfit

XS = np.linspace(0.0, 1.0, 7)
YS = np.sin(3 * XS)


def test_polyfit():
    same(fnp.polyfit(XS, YS, 0), jnp.polyfit(XS, YS, 0), rtol=1e-8)
    same(fnp.polyfit(XS, YS, 3), jnp.polyfit(XS, YS, 3), rtol=1e-8)
    y2 = np.stack([YS, YS**2], 1)
    same(fnp.polyfit(XS, y2, 2, w=XS + 1), jnp.polyfit(XS, y2, 2, w=XS + 1), rtol=1e-8)
    for a, b in zip(fnp.polyfit(XS, YS, 2, full=True), jnp.polyfit(XS, YS, 2, full=True)):
        same(a, b, rtol=1e-8)
    for cov, y in ((True, YS), ("unscaled", y2)):
        for a, b in zip(fnp.polyfit(XS, y, 2, cov=cov), jnp.polyfit(XS, y, 2, cov=cov)):
            same(a, b, rtol=1e-7)


def test_polyfit_grad_and_errors():
    g = fg.grad(lambda v: fnp.polyfit(XS, v, 2).sum())(YS)
    same(g, jo.grad(lambda v: jnp.polyfit(XS, v, 2).sum())(YS), rtol=1e-8)
    with pytest.raises(TypeError, match="polyfit: y"):
        fnp.polyfit(XS, YS[:3], 1)
    with pytest.raises(ValueError, match="polyfit: deg"):
        fnp.polyfit(XS, YS, -1)


# --------------------------------------------------------------------------- trim / put / place


@pytest.mark.parametrize("trim", ["fb", "f", "b", "B"])
def test_trim_zeros(trim):
    t = np.array([0, 0, 1, 2, 0, 3, 0])
    same(fnp.trim_zeros(t, trim), jnp.trim_zeros(t, trim))
    same(fnp.trim_zeros(np.zeros(3), trim), jnp.trim_zeros(np.zeros(3), trim))
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    same(fnp.trim_zeros(m, trim, axis=1), jnp.trim_zeros(m, trim, axis=1))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        fg.jit(fnp.trim_zeros)(t)


ARR = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
def test_put(mode):
    ind = np.array([0, 7, -1, 2])
    v = np.array([9.0, 8.0, 7.0])
    same(
        fnp.put(ARR, ind, v, mode=mode, inplace=False),
        jnp.put(ARR, ind, v, mode=mode, inplace=False),
    )
    same(
        fg.jit(lambda a: fnp.put(a, ind, v, mode=mode, inplace=False))(ARR),
        jnp.put(ARR, ind, v, mode=mode, inplace=False),
    )


def test_put_along_axis_place_and_inplace_errors():
    i = np.array([[0], [2]])
    for axis in (1, -1):
        same(
            fnp.put_along_axis(ARR, i, 99.0, axis, inplace=False),
            jnp.put_along_axis(ARR, i, 99.0, axis, inplace=False),
        )
    same(
        fnp.put_along_axis(
            ARR.ravel(), np.array([1, -1]), np.array([5.0, 6.0]), None, inplace=False
        ),
        jnp.put_along_axis(
            ARR.ravel(), np.array([1, -1]), np.array([5.0, 6.0]), None, inplace=False
        ),
    )
    mask = ARR > 2
    same(
        fnp.place(ARR, mask, [7.0, 8.0], inplace=False),
        jnp.place(ARR, mask, jnp.array([7.0, 8.0]), inplace=False),
    )
    same(
        fg.jit(lambda a, m: fnp.place(a, m, [1.0], inplace=False))(ARR, mask),
        jnp.place(ARR, mask, jnp.array([1.0]), inplace=False),
    )
    g = fg.grad(lambda v: fnp.place(ARR, mask, v, inplace=False).sum())(np.array([7.0, 8.0]))
    same(g, jo.grad(lambda v: jnp.place(ARR, mask, v, inplace=False).sum())(np.array([7.0, 8.0])))
    for fn, args in [(fnp.put, (ARR, [0], [1.0])), (fnp.place, (ARR, mask, [1.0]))]:
        with pytest.raises(ValueError, match="inplace=False"):
            fn(*args)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.put_along_axis(ARR, i, 1.0, 1)


# --------------------------------------------------------------------------- host helpers


def test_printing_and_from_helpers():
    assert fnp.get_printoptions() == np.get_printoptions()
    with fnp.printoptions(precision=2):
        assert fnp.array_str(fnp.asarray([1.23456])) == "[1.23]"
    assert fnp.set_printoptions is np.set_printoptions
    assert fnp.array_repr(np.arange(2)) == np.array_repr(np.arange(2))
    same(
        fnp.frombuffer(b"\x01\x02\x03", np.uint8, offset=1),
        jnp.frombuffer(b"\x01\x02\x03", np.uint8, offset=1),
    )
    same(fnp.fromstring("1 2 3", sep=" "), jnp.fromstring("1 2 3", sep=" "))
    with pytest.raises(NotImplementedError, match="fromiter"):
        fnp.fromiter(iter([1, 2]), float)


def test_shift_operators_on_traced_values_match_jax():
    import jax

    x = np.arange(4, dtype=np.int32)

    def f(a):
        return a << 2, 1 << a, a >> 1, 16 >> a

    for g, w in zip(fg.jit(f)(x), jax.jit(f)(x)):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype
