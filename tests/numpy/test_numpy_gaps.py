"""funcgrad.numpy's nonzero/unique/set operations, searching, counting, differences,
interpolation, convolution and polynomials against ``jax.numpy``: values, shapes, dtypes,
weak types, errors; ``size=`` under ``jit``; gradients vs ``jax.grad``; ``vmap`` vs
``jax.vmap``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from fnp_testutil import assert_same_leaves, fg_call

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationTypeError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 5))
A = np.array([3.0, 1.0, 2.0, 1.0, np.nan, 3.0])
M = np.array([[0, 1, 0], [2, 0, 3]])
I3 = np.array([3, 1, 2])
a5 = np.array([1.0, 2.0, 4.0, 7.0, 0.0])
v3 = np.array([1.0, -1.0, 3.0])
v4 = np.array([1.0, -1.0, 3.0, 2.0])
ci = np.array([1 + 2j, 3 - 1j, 0.5j])
XP, FP = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0, 0.0])
XQ = np.array([-1.0, 0.5, 1.5, 2.0, 9.0])

CASES = [
    ("nonzero", (A > 1,), {}),
    ("nonzero", (A > 1,), {"size": 5, "fill_value": -1}),
    ("nonzero", (M,), {"size": 2}),
    ("nonzero", (M,), {"size": 5, "fill_value": (7, 8)}),
    ("argwhere", (M,), {}),
    ("argwhere", (M,), {"size": 5, "fill_value": -1}),
    ("argwhere", (3.0,), {}),
    ("argwhere", (0.0,), {}),
    ("flatnonzero", (M,), {"size": 4, "fill_value": 9}),
    ("where", (M,), {}),
    ("where", (M > 0,), {"size": 1}),
    ("unique", (A,), {"return_index": True, "return_inverse": True, "return_counts": True}),
    (
        "unique",
        (A,),
        {"return_index": True, "return_inverse": True, "return_counts": True, "size": 6},
    ),
    ("unique", (np.array([[1, 2], [1, 2]]),), {"return_inverse": True}),
    (
        "unique",
        (np.array([[1, 2], [1, 2], [0, 5]]),),
        {"axis": 0, "return_inverse": True, "return_counts": True, "return_index": True},
    ),
    ("unique", (np.array([[1, 2, 1], [1, 2, 1]]),), {"axis": 1, "return_index": True}),
    ("unique", (np.array([3, 1]),), {"size": 4, "return_index": True, "return_counts": True}),
    (
        "unique",
        (np.array([3, 1, 3]),),
        {"size": 1, "return_index": True, "return_counts": True, "return_inverse": True},
    ),
    ("unique", (np.array([1.0, np.nan, np.nan]),), {"equal_nan": False}),
    ("unique", (np.array([3, 1]),), {"size": 4, "fill_value": 7}),
    ("unique_values", (np.array([3, 1, 3]),), {}),
    ("unique_counts", (np.array([3, 1, 3]),), {}),
    ("unique_inverse", (np.array([[3, 1, 3]]),), {}),
    ("unique_all", (np.array([3, 1, 3]),), {}),
    ("bincount", (np.array([0, 1, 1, 5, -1]),), {"length": 4}),
    ("bincount", (np.array([0, 1, 1]),), {"weights": np.array([0.5, 0.5, 1.0])}),
    ("bincount", (np.array([0, 1, 1], dtype=np.int8),), {"minlength": 5}),
    ("digitize", (np.array([0.5, 1.0, 2.5, 9]), np.array([1.0, 2.0, 3.0])), {}),
    ("digitize", (np.array([0.5, 1.0, 2.5, 9]), np.array([3.0, 2.0, 1.0])), {}),
    ("digitize", (np.array([0.5, 1.0, 2.5]), np.array([1.0, 2.0, 3.0])), {"right": True}),
    ("digitize", (np.array([0.5, 1.0, 2.5]), np.array([3.0, 2.0, 1.0])), {"right": True}),
    ("searchsorted", (np.array([1.0, 2, 2, 3, np.nan]), np.array([2.0, np.nan, 0, 5])), {}),
    (
        "searchsorted",
        (np.array([1.0, 2, 2, 3, np.nan]), np.array([2.0, np.nan, 0, 5])),
        {"side": "right"},
    ),
    ("searchsorted", (I3, np.array([[2, 0], [3, 4]])), {"sorter": np.array([1, 2, 0])}),
    ("searchsorted", (np.array([1, 2]), 2), {"method": "compare_all"}),
    ("searchsorted", (np.zeros(0), np.array([1.0])), {}),
    ("isin", (np.array([[1, 2], [3, 4]]), np.array([2, 5, 4])), {}),
    ("isin", (np.array([1, 2, 3]), np.array([2])), {"invert": True}),
    ("setdiff1d", (np.array([3, 1, 2, 2]), np.array([2])), {}),
    ("setdiff1d", (np.array([3, 1, 2, 2]), np.array([2])), {"size": 4}),
    ("union1d", (np.array([3, 1]), np.array([2, 1])), {}),
    ("union1d", (np.array([3, 1]), np.array([2, 1])), {"size": 5}),
    ("intersect1d", (np.array([3, 1, 2, 1]), np.array([2, 1, 7])), {"return_indices": True}),
    (
        "intersect1d",
        (np.array([0, 1, 2]), np.array([2, 1, 7])),
        {"size": 4, "return_indices": True},
    ),
    ("setxor1d", (np.array([3, 1, 2]), np.array([2, 1, 7, 7])), {}),
    ("setxor1d", (np.array([3, 1, 2]), np.array([2, 1, 7])), {"size": 4}),
    ("diff", (a5,), {}),
    ("diff", (X,), {"n": 2, "axis": 0}),
    ("diff", (np.array([True, False, False]),), {}),
    ("diff", (I3,), {"prepend": 0, "append": np.array([9])}),
    ("ediff1d", (X,), {}),
    ("ediff1d", (I3,), {"to_begin": -1, "to_end": np.array([7, 8])}),
    ("trapezoid", (a5,), {}),
    ("trapezoid", (X,), {"x": np.arange(5.0) ** 2}),
    ("trapezoid", (X,), {"dx": 0.5, "axis": 0}),
    ("trapezoid", (I3,), {}),
    ("gradient", (a5,), {}),
    ("gradient", (X,), {}),
    ("gradient", (X, 2.0), {"axis": 1}),
    ("gradient", (a5, np.array([0.0, 1, 3, 4, 7])), {}),
    ("gradient", (I3,), {}),
    ("unwrap", (np.array([0.0, 3.0, 6.5, 1.0, -2.0]),), {}),
    ("interp", (XQ, XP, FP), {}),
    ("interp", (XQ, XP, FP), {"left": -5.0, "right": 5.0}),
    ("interp", (XQ, XP, FP), {"left": "extrapolate", "right": "extrapolate"}),
    ("interp", (XQ, XP, FP), {"period": 2.5}),
    ("interp", (1, np.array([0, 2]), np.array([0, 4])), {}),
    ("convolve", (a5, v3), {}),
    ("convolve", (a5, v4), {"mode": "same"}),
    ("convolve", (a5, v3), {"mode": "valid"}),
    ("convolve", (v4, a5), {"mode": "same"}),
    ("convolve", (I3, I3), {}),
    ("correlate", (a5, v3), {}),
    ("correlate", (a5, v4), {"mode": "same"}),
    ("correlate", (v3, a5), {"mode": "full"}),
    ("correlate", (v4, a5), {"mode": "same"}),
    ("correlate", (ci, a5), {"mode": "full"}),
    ("correlate", (a5, ci), {"mode": "same"}),
    ("polyval", (v3, a5), {}),
    ("polyval", (I3, 2), {}),
    ("polyval", (v3, 2.0), {}),
    ("polyadd", (v3, v4), {}),
    ("polysub", (v3, v4), {}),
    ("polymul", (v3, v4), {}),
    ("polyder", (v4,), {}),
    ("polyder", (v4,), {"m": 2}),
    ("polyint", (v3,), {}),
    ("polyint", (v3,), {"m": 2, "k": 3.0}),
    ("poly", (v3,), {}),
    ("polydiv", (v4, v3), {}),
    ("vander", (v3,), {}),
    ("vander", (I3,), {"N": 4, "increasing": True}),
    ("poly", (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),), {}),
    ("poly", (np.zeros(0, np.float32),), {}),
]


@pytest.mark.parametrize("name,args,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jnp(name, args, kw):
    got = fg_call(name, args, kw)
    want = getattr(jnp, name)(*args, **kw)
    assert_same_leaves(got, want, what=f"{name}{kw}")


@pytest.mark.parametrize("i", [1, 12, 24, 31, 62, 71, 80])
def test_eager(i):
    name, args, kw = CASES[i]
    assert_same_leaves(getattr(fnp, name)(*args, **kw), getattr(jnp, name)(*args, **kw), what=name)


def test_size_under_jit():
    x = np.array([1.0, -1, 2, 3, 4, -2])
    f = fg.jit(
        lambda x: (
            fnp.nonzero(x > 0, size=3),
            fnp.argwhere(x > 0, size=6, fill_value=-1),
            fnp.flatnonzero(x, size=2),
            fnp.where(x < 0, size=3, fill_value=9),
            fnp.unique(fnp.round(x), size=4, return_counts=True, return_inverse=True),
            fnp.union1d(x, -x, size=3),
            fnp.bincount(fnp.abs(x).astype(int), length=3),
        )
    )
    g = jax.jit(
        lambda x: (
            jnp.nonzero(x > 0, size=3),
            jnp.argwhere(x > 0, size=6, fill_value=-1),
            jnp.flatnonzero(x, size=2),
            jnp.where(x < 0, size=3, fill_value=9),
            jnp.unique(jnp.round(x), size=4, return_counts=True, return_inverse=True),
            jnp.union1d(x, -x, size=3),
            jnp.bincount(jnp.abs(x).astype(int), length=3),
        )
    )
    got, want = f(x), g(x)
    for gl, wl in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert gl.dtype == wl.dtype
        np.testing.assert_array_equal(gl, wl)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: fnp.nonzero(x),
        lambda x: fnp.argwhere(x),
        lambda x: fnp.where(x),
        lambda x: fnp.unique(x),
        lambda x: fnp.setdiff1d(x, x),
        lambda x: fnp.bincount(x.astype(int)),
    ],
)
def test_concretization_error_without_size(fn):
    with pytest.raises(ConcretizationTypeError):
        fg.jit(fn)(np.array([1.0, 0.0, 2.0]))


def test_errors():
    with pytest.raises(ValueError, match="0d arrays"):
        fnp.nonzero(1.0)
    with pytest.raises(ValueError, match="three-term"):
        fnp.where(X > 0, 1.0, 0.0, size=2)
    with pytest.raises(ValueError, match="side"):
        fnp.searchsorted(a5, 1.0, side="middle")
    with pytest.raises(ValueError, match="method"):
        fnp.searchsorted(a5, 1.0, method="bogus")
    with pytest.raises(ValueError, match="1-dimensional"):
        fnp.convolve(X, v3)
    with pytest.raises(ValueError, match="mode"):
        fnp.convolve(a5, v3, mode="middle")
    with pytest.raises(ValueError, match="equal size"):
        fnp.interp(1.0, XP, FP[:2])
    with pytest.raises(TypeError, match="integer"):
        fnp.bincount(a5)
    with pytest.raises(ValueError, match="order"):
        fnp.diff(a5, n=-1)


GRADS = [
    ("interp", lambda m, x: m.sum(m.interp(XQ, XP, x) ** 2), FP),
    ("interp-x", lambda m, x: m.sum(m.interp(x, XP, FP, period=2.5)), XQ),
    ("convolve", lambda m, x: m.sum(m.convolve(x, v4, mode="same") ** 2), a5),
    ("correlate", lambda m, x: m.sum(m.correlate(v3, x, mode="full") ** 2), a5),
    ("polyval", lambda m, x: m.sum(m.polyval(x, a5)), v4),
    ("trapezoid", lambda m, x: m.sum(m.trapezoid(x**2, x=m.arange(5.0))), X),
    ("gradient", lambda m, x: m.sum(m.gradient(x, axis=1) ** 2), X),
    ("diff", lambda m, x: m.sum(m.diff(x, n=2) ** 2), X),
    ("bincount", lambda m, x: m.sum(m.bincount(np.array([0, 2, 2, 1, 0]), x, length=3) ** 2), a5),
]


@pytest.mark.parametrize("name,f,x", GRADS, ids=[g[0] for g in GRADS])
def test_grad_against_jax(name, f, x):
    np.testing.assert_allclose(
        fg.grad(lambda x: f(fnp, x))(x), jo.grad(lambda x: f(jnp, x))(x), rtol=1e-9, atol=1e-9
    )


def test_vmap_against_jax():
    vs = RNG.uniform(-1, 4, (4, 3))
    got = fg.vmap(lambda v: fnp.searchsorted(XP, v))(vs)
    np.testing.assert_array_equal(got, jo.vmap(lambda v: jnp.searchsorted(XP, v))(vs))
    got = fg.vmap(lambda v: fnp.interp(v, XP, FP))(vs)
    np.testing.assert_allclose(got, jo.vmap(lambda v: jnp.interp(v, XP, FP))(vs))
    got = fg.vmap(lambda v: fnp.convolve(v, v3))(vs)
    np.testing.assert_allclose(got, jo.vmap(lambda v: jnp.convolve(v, v3))(vs))
    got = fg.vmap(lambda v: fnp.unique(v > 1, size=2))(vs)
    np.testing.assert_array_equal(got, jo.vmap(lambda v: jnp.unique(v > 1, size=2))(vs))


XM = np.arange(12.0).reshape(3, 4)
LIN = np.linspace(-2, 2, 5)
MISC = [
    ("astype", (I3, np.float32), {}),
    ("astype", (XM, int), {}),
    ("unstack", (XM,), {"axis": 1}),
    ("tril_indices", (3,), {}),
    ("triu_indices", (3, 1, 4), {}),
    ("tril_indices_from", (XM,), {"k": -1}),
    ("triu_indices_from", (XM,), {}),
    ("diag_indices", (3,), {}),
    ("diag_indices_from", (np.ones((2, 2, 2)),), {}),
    ("mask_indices", (3, jnp.triu), {"size": 6}),
    ("indices", ((2, 3),), {}),
    ("indices", ((2, 3),), {"sparse": True}),
    ("ix_", (np.array([0, 1]), np.array([2, 3, 4])), {}),
    ("unravel_index", (np.array([0, 5, 11, -1]), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([1, 3])), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 5]), np.array([1, 3])), (3, 4)), {"mode": "clip"}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([1, 3])), (3, 4)), {"order": "F"}),
    ("lexsort", ((np.array([1, 2, 1, 2]), np.array([3, 3, 1, 1])),), {}),
    ("sort_complex", (np.array([3, 1, 2]),), {}),
    ("delete", (XM, 1), {"axis": 0}),
    ("delete", (XM, np.array([0, -1])), {"axis": 1}),
    ("delete", (XM, slice(0, None, 2)), {}),
    ("insert", (np.arange(4.0), 2, np.array([10.0, 11.0])), {}),
    ("insert", (XM, 1, np.array([7.0, 8.0, 9.0])), {"axis": 1}),
    ("insert", (XM, np.array([0, 2, 2]), 5.0), {"axis": 1}),
    ("insert", (XM, np.array([3, 0]), np.array([[1.0, 2.0, 3.0, 4.0]])), {"axis": 0}),
    ("block", ([[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 3))]],), {}),
    ("block", ([np.ones(2), np.zeros(3)],), {}),
    ("rollaxis", (np.ones((2, 3, 4)), 2), {}),
    ("rollaxis", (np.ones((2, 3, 4)), 0, 2), {}),
    ("dsplit", (np.ones((2, 3, 4)), 2), {}),
    ("resize", (I3, (2, 4)), {}),
    ("geomspace", (1.0, 1000.0, 4), {}),
    ("geomspace", (-1.0, -16.0, 5), {"endpoint": False}),
    ("compress", (np.array([True, False, True]), XM), {"axis": 0}),
    ("compress", (np.array([1, 0, 1]), XM), {"size": 2, "fill_value": -1}),
    ("extract", (XM > 5, XM), {}),
    ("choose", (np.array([0, 1, 2]), [np.arange(3), 10 + np.arange(3), 20 + np.arange(3)]), {}),
    ("choose", (np.array([0, 4]), [np.arange(2), np.ones(2)]), {"mode": "wrap"}),
    ("fill_diagonal", (XM, 7.0), {"inplace": False}),
    ("bartlett", (5,), {}),
    ("blackman", (5,), {}),
    ("hamming", (4,), {}),
    ("hanning", (1,), {}),
    ("matvec", (np.ones((2, 3, 4)), np.arange(4.0)), {}),
    ("vecmat", (np.arange(3.0), np.ones((3, 4))), {}),
    ("piecewise", (LIN, [LIN < 0, LIN > 1], [lambda x: -x, 5.0, lambda x: x * 2]), {}),
    ("apply_along_axis", (lambda r: r.sum() * r, 1, XM), {}),
    ("apply_along_axis", (lambda r: r[:2], 0, XM), {}),
    ("apply_over_axes", (jnp.sum, XM, (0, 1)), {}),
    ("fromfunction", (lambda i, j: i + j, (2, 3)), {}),
    ("partition", (np.array([3.0, 1, 2, 5, 0]), 2), {}),
    ("argpartition", (np.array([3.0, 1, 2, 5, 0]), 2), {}),
    ("repeat", (XM, np.array([1, 0, 2, 1])), {"axis": 1, "total_repeat_length": 6}),
    ("repeat", (XM, 2), {"total_repeat_length": 5}),
]


@pytest.mark.parametrize("name,args,kw", MISC, ids=[f"{c[0]}-{i}" for i, c in enumerate(MISC)])
def test_misc_against_jnp(name, args, kw):
    got = getattr(fnp, name)(*args, **kw)
    want = getattr(jnp, name)(*args, **kw)
    assert_same_leaves(got, want, what=f"{name}{kw}")


def test_misc_traced_and_kinds():
    r = np.array([1, 0, 2, 1])
    for t in (2, 4, 7):
        got = fg.jit(lambda r, t=t: fnp.repeat(XM, r, axis=1, total_repeat_length=t))(r)
        want = jnp.repeat(XM, r, axis=1, total_repeat_length=t)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ConcretizationTypeError):
        fg.jit(lambda r: fnp.repeat(XM, r, axis=1))(r)
    assert fnp.isdtype(np.float32, "real floating") and not fnp.isdtype(np.float32, np.int8)
    assert fnp.isdtype(np.int8, ("bool", "integral"))
    assert fnp.iterable([1]) and not fnp.iterable(1)
    with pytest.raises(NotImplementedError):
        fnp.fill_diagonal(XM, 1.0)
    with pytest.raises(ValueError, match="kth"):
        fnp.partition(I3, 5)
    got = fg.grad(lambda x: fnp.sum(fnp.apply_along_axis(lambda r: r * fnp.sum(r), 0, x)))(XM)
    want = jo.grad(lambda x: jnp.sum(jnp.apply_along_axis(lambda r: r * jnp.sum(r), 0, x)))(XM)
    np.testing.assert_allclose(got, want)


def test_vectorize_against_jax():
    y = np.arange(4.0)
    got = fnp.vectorize(lambda a, b: a * b + 1)(XM, y)
    np.testing.assert_allclose(got, jnp.vectorize(lambda a, b: a * b + 1)(XM, y))
    sig = "(n),(n)->()"
    got = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature=sig)(XM, y)
    np.testing.assert_allclose(
        got, jnp.vectorize(lambda a, b: jnp.sum(a * b), signature=sig)(XM, y)
    )
    got = fnp.vectorize(lambda a, p: a**p, excluded={1})(XM, 2)
    np.testing.assert_allclose(got, XM**2)
    got = fg.grad(lambda x: fnp.sum(fnp.vectorize(lambda a: fnp.sin(a) * a)(x)))(XM)
    np.testing.assert_allclose(got, jo.grad(lambda x: jnp.sum(jnp.sin(x) * x))(XM))
    with pytest.raises(TypeError, match="positional"):
        fnp.vectorize(lambda a: a, signature="(n),(n)->()")(y)


# ---------------------------------------------------------------------------
# polyfit
# ---------------------------------------------------------------------------

XS = np.linspace(0.0, 1.0, 7)
YS = np.sin(3 * XS)


def test_polyfit():
    jo.same_values(fnp.polyfit(XS, YS, 0), jnp.polyfit(XS, YS, 0), rtol=1e-8)
    jo.same_values(fnp.polyfit(XS, YS, 3), jnp.polyfit(XS, YS, 3), rtol=1e-8)
    y2 = np.stack([YS, YS**2], 1)
    jo.same_values(fnp.polyfit(XS, y2, 2, w=XS + 1), jnp.polyfit(XS, y2, 2, w=XS + 1), rtol=1e-8)
    for a, b in zip(fnp.polyfit(XS, YS, 2, full=True), jnp.polyfit(XS, YS, 2, full=True)):
        jo.same_values(a, b, rtol=1e-8)
    for cov, y in ((True, YS), ("unscaled", y2)):
        for a, b in zip(fnp.polyfit(XS, y, 2, cov=cov), jnp.polyfit(XS, y, 2, cov=cov)):
            jo.same_values(a, b, rtol=1e-7)


def test_polyfit_grad_and_errors():
    g = fg.grad(lambda v: fnp.polyfit(XS, v, 2).sum())(YS)
    jo.same_values(g, jo.grad(lambda v: jnp.polyfit(XS, v, 2).sum())(YS), rtol=1e-8)
    with pytest.raises(TypeError, match="polyfit: y"):
        fnp.polyfit(XS, YS[:3], 1)
    with pytest.raises(ValueError, match="polyfit: deg"):
        fnp.polyfit(XS, YS, -1)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int32, np.float16, np.complex64])
@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_with_preferred_element_type(dt, op, mode) -> None:
    """With ``preferred_element_type`` the operands keep their promoted dtype (integers and
    booleans convolve as such, as JAX's ``lax.conv_general_dilated`` lets them); without
    it the result is inexact. Eager and under jit, against ``jnp``."""
    rng = np.random.default_rng(0)
    for n1, n2 in ((6, 1), (3, 5)):
        x, y = rng.integers(0, 3, n1).astype(dt), rng.integers(0, 3, n2).astype(dt)
        for pet in (dt, None):
            want = getattr(jnp, op)(x, y, mode=mode, preferred_element_type=pet)
            f = lambda a, b, pet=pet: getattr(fnp, op)(a, b, mode=mode, preferred_element_type=pet)
            for got in (f(x, y), fg.jit(f)(x, y)):
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=1e-3)
