"""conv_general_dilated against JAX: values, jit, grad, jvp, vmap, second order, errors.

Hypothesis draws the shapes, strides, padding (negative too), dilations, feature or
batch groups and a random layout for each operand; ``jax.lax.conv_general_dilated``
with ``jax.grad``/``jax.jvp``/``jax.vmap``/``jax.hessian`` is the oracle.
"""

from __future__ import annotations

import jax
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import conv as conv_mod

jax.config.update("jax_enable_x64", True)

TOL = dict(rtol=1e-10, atol=1e-10)


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


@st.composite
def conv_cases(draw, max_spatial=2):
    """(lhs, rhs, params) with a valid configuration in a random layout."""
    nsp = draw(st.integers(1, max_spatial))
    nd = nsp + 2
    mode = draw(st.sampled_from(["plain", "feature", "batch"]))
    g = draw(st.integers(2, 3)) if mode != "plain" else 1
    c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    n = draw(st.integers(1, 2))
    if mode == "feature":
        batch, feats, rhs_in, rhs_out, fgc, bgc = n, g * c, c, g * o, g, 1
    elif mode == "batch":
        batch, feats, rhs_in, rhs_out, fgc, bgc = g * n, c, c, g * o, 1, g
    else:
        batch, feats, rhs_in, rhs_out, fgc, bgc = n, c, c, o, 1, 1
    strides, pads, ldil, rdil, lhs_sp, rhs_sp = [], [], [], [], [], []
    for _ in range(nsp):
        k = draw(st.integers(1, 3))
        rd = draw(st.integers(1, 2))
        ld = draw(st.integers(1, 2))
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        window = _dilate(k, rd)
        # smallest input whose padded, dilated size holds the window
        need = max(window - lo - hi, 1 - min(lo, 0) - min(hi, 0), 1)
        n_min = max(1, -(-(need - 1) // ld) + 1)
        size = draw(st.integers(n_min, n_min + 3))
        strides.append(draw(st.integers(1, 3)))
        pads.append((lo, hi))
        ldil.append(ld)
        rdil.append(rd)
        lhs_sp.append(size)
        rhs_sp.append(k)
    specs = [tuple(draw(st.permutations(range(nd)))) for _ in range(3)]
    lhs_shape, rhs_shape = [0] * nd, [0] * nd
    for i, s in enumerate((batch, feats, *lhs_sp)):
        lhs_shape[specs[0][i]] = s
    for i, s in enumerate((rhs_out, rhs_in, *rhs_sp)):
        rhs_shape[specs[1][i]] = s
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    params = dict(
        window_strides=tuple(strides),
        padding=tuple(pads),
        lhs_dilation=tuple(ldil),
        rhs_dilation=tuple(rdil),
        dimension_numbers=jax.lax.ConvDimensionNumbers(*specs),
        feature_group_count=fgc,
        batch_group_count=bgc,
    )
    lhs = rng.standard_normal(lhs_shape)
    rhs = rng.standard_normal(rhs_shape)
    return lhs, rhs, params, rng


def fg_conv(params):
    return lambda x, w: fg.lax.conv_general_dilated(x, w, **params)


def jax_conv(params):
    return lambda x, w: jax.lax.conv_general_dilated(x, w, **params)


def close(a, b, **kw):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, **(kw or TOL))


@given(conv_cases())
def test_value_jit_grad_jvp_vs_jax(case):
    lhs, rhs, params, rng = case
    f, fj = fg_conv(params), jax_conv(params)
    ct = rng.standard_normal(jax.eval_shape(fj, lhs, rhs).shape)
    tl, tr = rng.standard_normal(lhs.shape), rng.standard_normal(rhs.shape)

    def derivatives(conv, grad, jvp, sum_):
        def run(x, w):
            loss = lambda x, w: sum_(conv(x, w) * ct)
            out, t = jvp(conv, (x, w), (tl, tr))
            # one operand's tangent only (the other a symbolic zero in funcgrad)
            t_rhs = jvp(lambda w: conv(x, w), (w,), (tr,))[1]
            return out, t, t_rhs, grad(loss, (0, 1))(x, w)

        return run

    # compiled on both sides: one XLA program per example instead of one per op
    got = fg.jit(derivatives(f, fg.grad, fg.jvp, fnp.sum))(lhs, rhs)
    ref = jax.jit(derivatives(fj, jax.grad, jax.jvp, jax.numpy.sum))(lhs, rhs)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(ref)):
        close(a, b)
    close(f(lhs, rhs), ref[0])  # eager


@given(conv_cases(), st.data())
def test_vmap_vs_jax(case, data):
    lhs, rhs, params, rng = case
    f, fj = fg_conv(params), jax_conv(params)
    B = data.draw(st.integers(1, 3))
    which = data.draw(st.sampled_from(["lhs", "rhs", "both"]))
    xa = data.draw(st.integers(0, lhs.ndim)) if which != "rhs" else None
    wa = data.draw(st.integers(0, rhs.ndim)) if which != "lhs" else None
    x = lhs if xa is None else rng.standard_normal((*lhs.shape[:xa], B, *lhs.shape[xa:]))
    w = rhs if wa is None else rng.standard_normal((*rhs.shape[:wa], B, *rhs.shape[wa:]))
    ct = rng.standard_normal(jax.eval_shape(fj, lhs, rhs).shape)

    def batched(conv, vmap, grad, sum_):
        def run(x, w):
            loss = lambda x, w: sum_(conv(x, w) * ct)
            # the batched conv and per-example gradients (vmap of grad)
            return vmap(conv, in_axes=(xa, wa))(x, w), vmap(grad(loss, (0, 1)), (xa, wa))(x, w)

        return run

    got = fg.jit(batched(f, fg.vmap, fg.grad, fnp.sum))(x, w)
    ref = jax.jit(batched(fj, jax.vmap, jax.grad, jax.numpy.sum))(x, w)
    close(fg.vmap(f, in_axes=(xa, wa))(x, w), ref[0])  # eager
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(ref)):
        close(a, b)
    # still one convolution after batching
    prog = fg.make_ir(fg.vmap(f, in_axes=(xa, wa)))(x, w)
    assert [e.prim.name for e in prog.eqns].count("conv_general_dilated") == 1


@pytest.mark.parametrize(
    "params",
    [
        dict(window_strides=(2,), padding=((1, 0),), rhs_dilation=(2,)),
        dict(window_strides=(1,), padding=((0, 1),), lhs_dilation=(2,), feature_group_count=2),
        dict(window_strides=(2,), padding=((1, 1),), batch_group_count=2),
    ],
)
def test_second_order_vs_jax(params):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5))
    w = rng.standard_normal((2, 1 if params.get("feature_group_count") else 2, 2))
    f, fj = fg_conv(params), jax_conv(params)
    loss = lambda x, w: fnp.sum(fnp.tanh(f(x, w)))
    loss_j = lambda x, w: jax.numpy.sum(jax.numpy.tanh(fj(x, w)))

    def second(lib, loss):
        # both Hessian blocks, and the mixed block as d/dw of the gradient in x
        return lambda x, w: (
            lib.hessian(loss, 0)(x, w),
            lib.hessian(loss, 1)(x, w),
            lib.jacrev(lib.grad(loss, 0), 1)(x, w),
        )

    got = fg.jit(second(fg, loss))(x, w)
    ref = jax.jit(second(jax, loss_j))(x, w)
    for a, b in zip(got, ref):
        close(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "padding,dn,strides,rhs_dilation",
    [
        ("SAME", None, (2, 1), (1, 2)),
        ("SAME_LOWER", None, (1, 3), None),
        ("VALID", ("NHWC", "HWIO", "NHWC"), (2, 2), (2, 1)),
        ("same", ("NWHC", "OHWI", "CNHW"), (1, 2), None),
        ([(1, 2), (0, 1)], ("HNWC", "WIOH", "NHCW"), (1, 1), (2, 2)),
    ],
)
def test_public_wrapper_strings_vs_jax(padding, dn, strides, rhs_dilation):
    rng = np.random.default_rng(1)
    lhs_shape = {None: (2, 3, 7, 6), ("NHWC", "HWIO", "NHWC"): (2, 7, 6, 3)}.get(dn)
    rhs_shape = {None: (4, 3, 2, 3), ("NHWC", "HWIO", "NHWC"): (2, 3, 3, 4)}.get(dn)
    if lhs_shape is None:  # build shapes from the layout strings
        sizes = {"N": 2, "C": 3, "H": 7, "W": 6}
        ksizes = {"O": 4, "I": 3, "H": 2, "W": 3}
        lhs_shape = tuple(sizes[c] for c in dn[0])
        rhs_shape = tuple(ksizes[c] for c in dn[1])
    x, w = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    kw = dict(dimension_numbers=dn, rhs_dilation=rhs_dilation)
    got = fg.lax.conv_general_dilated(x, w, strides, padding, **kw)
    want = jax.lax.conv_general_dilated(x, w, strides, padding, **kw)
    close(got, want)
    g = fg.grad(lambda w: fnp.sum(fg.lax.conv_general_dilated(x, w, strides, padding, **kw) ** 2))
    gj = jo.grad(lambda w: (jax.lax.conv_general_dilated(x, w, strides, padding, **kw) ** 2).sum())
    close(g(w), gj(w))
    norm = fg.lax.conv_dimension_numbers(lhs_shape, rhs_shape, dn)
    assert tuple(norm) == tuple(jax.lax.conv_dimension_numbers(lhs_shape, rhs_shape, dn))


def test_conv_wrapper_and_dtypes():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 6, 5)), rng.standard_normal((3, 2, 3, 3))
    for pad in ("SAME", "VALID"):
        close(fg.lax.conv(x, w, (2, 1), pad), jax.lax.conv(x, w, (2, 1), pad))
    # preferred_element_type: float32 operands, float64 result; cotangents keep float32
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    f = lambda a, b: fg.lax.conv(a, b, (1, 1), "VALID", preferred_element_type=np.float64)
    fj = lambda a, b: jax.lax.conv(a, b, (1, 1), "VALID", preferred_element_type=np.float64)
    close(f(x32, w32), fj(x32, w32), rtol=1e-6)
    gs = fg.grad(lambda a, b: fnp.sum(f(a, b)), (0, 1))(x32, w32)
    gjs = jo.grad(lambda a, b: fj(a, b).sum(), (0, 1))(x32, w32)
    for got, ref in zip(gs, gjs):
        close(got, ref, rtol=1e-5)
    # integer convolutions (no derivatives)
    xi, wi = np.arange(30).reshape(1, 2, 15) % 7, np.arange(12).reshape(2, 2, 3) % 5
    close(fg.lax.conv(xi, wi, (2,), "SAME"), jax.lax.conv(xi, wi, (2,), "SAME"))
    # precision is accepted (and ignored)
    close(
        fg.lax.conv(x, w, (1, 1), "SAME", precision="highest"), jax.lax.conv(x, w, (1, 1), "SAME")
    )


def test_empty_operands_have_zero_gradients():
    rng = np.random.default_rng(3)
    x, w = np.zeros((0, 2, 5)), rng.standard_normal((3, 2, 2))
    f = lambda x, w: fnp.sum(fg.lax.conv(x, w, (1,), "VALID"))
    fj = lambda x, w: jax.lax.conv(x, w, (1,), "VALID").sum()
    for got, ref in zip(fg.grad(f, (0, 1))(x, w), jo.grad(fj, (0, 1))(x, w)):
        close(got, ref)


def test_registry_examples_cover_the_features():
    exs = conv_mod.conv_general_dilated_p.examples(np.random.default_rng(0))
    ps = [e.params for e in exs]
    assert {len(p["window_strides"]) for p in ps} == {1, 2}
    assert any(max(p["window_strides"]) > 1 for p in ps)
    assert any(max(p["lhs_dilation"]) > 1 for p in ps)
    assert any(max(p["rhs_dilation"]) > 1 for p in ps)
    assert any(p["feature_group_count"] > 1 for p in ps)
    assert any(p["batch_group_count"] > 1 for p in ps)
    assert any(p["dimension_numbers"][0] != tuple(range(4)) for p in ps if len(p["padding"]) == 2)
    assert all(e.args[0].dtype == np.float64 for e in exs)


@pytest.mark.parametrize(
    "lhs,rhs,kw,exc,fragments",
    [
        (
            (2, 3, 7),
            (4, 3, 2, 2),
            {},
            ValueError,  # (as JAX's)
            ["same number of dimensions", "lhs f64[2,3,7] and rhs f64[4,3,2,2]"],
        ),
        ((2, 3, 7), (4, 2, 2), {}, ValueError, ["in-feature mismatch", "f64[2,3,7]", "f64[4,2,2]"]),
        (
            (2, 3, 7),
            (4, 1, 2),
            {"feature_group_count": 2},
            ValueError,
            ["feature_group_count=2 does not divide the lhs feature count 3"],
        ),
        (
            (2, 4, 7),
            (3, 2, 2),
            {"feature_group_count": 2},
            ValueError,
            ["does not divide the rhs output feature count 3"],
        ),
        (
            (3, 2, 7),
            (4, 2, 2),
            {"batch_group_count": 2},
            ValueError,
            ["batch_group_count=2 does not divide the lhs batch size 3"],
        ),
        ((2, 3, 2), (4, 3, 3), {}, ValueError, ["non-positive output size", "window of size 3"]),
        (
            (2, 3, 4),
            (4, 3, 2),
            {"rhs_dilation": (4,)},
            ValueError,
            ["non-positive output size", "window of size 5", "padded input of size 4"],
        ),
        (
            (2, 3, 7),
            (4, 3, 2),
            {"window_strides": (0,)},
            ValueError,
            ["window_strides must be positive"],
        ),
    ],
)
def test_errors_name_primitive_operands_and_user_line(lhs, rhs, kw, exc, fragments):
    params = {"window_strides": (1,), "padding": "VALID", **kw}
    strides, padding = params.pop("window_strides"), params.pop("padding")
    with pytest.raises(exc) as info:
        fg.lax.conv_general_dilated(np.ones(lhs), np.ones(rhs), strides, padding, **params)
    msg = str(info.value)
    assert msg.startswith("conv_general_dilated"), msg
    for frag in fragments:
        assert frag in msg, (frag, msg)
    assert "test_conv.py" in msg, msg


def test_dtype_and_parameter_errors():
    x, w = np.ones((1, 2, 5)), np.ones((3, 2, 2))
    with pytest.raises(
        TypeError,
        match=r"^conv_general_dilated requires operands of one dtype.*f32\[1,2,5\].*f64\[3,2,2\]",
    ):
        fg.lax.conv(x.astype(np.float32), w, (1,), "VALID")
    # Booleans convolve as booleans (JAX's conv_general_dilated accepts them).
    both = fg.lax.conv(x > 0, w > 0, (1,), "VALID")
    want = jax.lax.conv(x > 0, w > 0, (1,), "VALID")
    assert both.dtype == want.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(both), np.asarray(want))
    with pytest.raises(TypeError, match="preferred_element_type"):
        fg.lax.conv(x, w, (1,), "VALID", preferred_element_type=np.float32)
    with pytest.raises(ValueError, match="Unrecognized padding type"):
        fg.lax.conv(x, w, (1,), "FULL")
    with pytest.raises(ValueError, match="sequence of \\(low, high\\) pairs"):
        fg.lax.conv(x, w, (1,), [1])
    with pytest.raises(ValueError, match=r"window and window_strides .* but got 1 and 2"):
        fg.lax.conv(x, w, (1, 1), "VALID")
    with pytest.raises(TypeError, match="'N' and 'C' exactly once"):
        fg.lax.conv_general_dilated(x, w, (1,), "VALID", dimension_numbers=("NNW", "OIW", "NCW"))
    with pytest.raises(TypeError, match="same spatial dimensions"):
        fg.lax.conv_general_dilated(x, w, (1,), "VALID", dimension_numbers=("NCW", "OIH", "NCW"))
    with pytest.raises(ValueError, match="transposed convolution"):
        fg.lax.conv_general_dilated(x, w, (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(
        ValueError, match="at most one of feature_group_count and batch_group_count"
    ):
        fg.lax.conv_general_dilated(
            np.ones((2, 2, 5)),
            np.ones((2, 1, 2)),
            (1,),
            "VALID",
            feature_group_count=2,
            batch_group_count=2,
        )
    # traced: the error names the user's line too
    with pytest.raises(ValueError, match=r"in-feature mismatch[\s\S]*test_conv.py"):
        fg.jit(lambda a, b: fg.lax.conv(a, b, (1,), "VALID"))(np.ones((1, 3, 5)), w)
