"""The forms funcgrad generates from its reduction rows (``Reduction`` in
``funcgrad/primitives/reductions.py``), against JAX's: every declared form is exported,
has ``jax.numpy``'s or ``jax.lax``'s parameters (names, kinds and defaults), the row's
docstring, and JAX's values and dtypes (or an error where JAX raises one) on a grid of
dtypes, shapes, axes, ``keepdims``, ``initial=`` and ``where=``. Nothing is listed by hand:
the rows are read. (``tests/numpy/test_reductions.py`` draws more cases for the numpy
forms.)"""

from __future__ import annotations

import inspect
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import sample

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fsp
from funcgrad.core.reduction_row import REDUCTIONS, form_doc, reduction_forms

NAMESPACES = {"numpy": (fnp, jnp), "lax": (flax, jax.lax)}
FORMS = [
    pytest.param(ns, name, id=f"{ns}.{name}") for ns in NAMESPACES for name in reduction_forms(ns)
]
DTYPES = ["bool", "uint8", "int8", "int32", "float16", "float32", "float64", "complex64"]
SHAPES = [(), (0,), (4,), (2, 3), (2, 0, 3)]


def _params(f):
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


@pytest.mark.parametrize(("ns", "name"), FORMS)
def test_declared_form_is_jax_s(ns, name):
    mine, theirs = (getattr(m, name) for m in NAMESPACES[ns])
    row = reduction_forms(ns)[name]
    assert _params(mine) == _params(theirs)
    assert mine.__doc__.startswith(form_doc(row, ns))
    exported = getattr(NAMESPACES[ns][0], "__all__", None)
    assert exported is None or name in exported
    if ns == "numpy":  # (aliases are one function, named as the row: ``amax`` is ``max``)
        assert mine is getattr(fnp, row.name) and mine.__name__ == row.name


def _value(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("uint8", "int8", "int32"):
        return rng.integers(0, 5, shape).astype(dtype)
    x = rng.uniform(-2, 2, shape)
    if dtype == "complex64":
        x = x + 1j * rng.uniform(-2, 2, shape)
    x = x.astype(dtype)
    if x.size > 2:
        x.flat[1] = x.flat[0]  # (a tie)
    return x


def _axes_for(shape):
    return [None, *range(len(shape)), -1, tuple(range(len(shape)))] if shape else [None, ()]


def _outcome(f, *args, **kwargs):
    try:
        r = np.asarray(f(*args, **kwargs))
    except (TypeError, ValueError):
        return "error"
    return r


def _jax_outcomes(f, calls):
    """JAX's outcome of ``f(*args, **kwargs)`` for each ``(args, kwargs)`` of ``calls``, as
    :func:`_outcome` gives it ("error" where JAX raises), all traced into one program and
    compiled once, their NumPy arrays its arguments: called one by one, each call (a new
    static ``axis``/``keepdims``/``dtype``) would be a compilation of its own. An error
    JAX raises only when lowering (complex ``argmax``) runs the calls one by one."""
    leaves, tree = jax.tree_util.tree_flatten(list(calls))
    at = [i for i, v in enumerate(leaves) if isinstance(v, np.ndarray)]
    errors = set()

    def run(arrays):
        filled = list(leaves)
        for i, a in zip(at, arrays, strict=True):
            filled[i] = a
        outs = []
        for n, (args, kwargs) in enumerate(jax.tree_util.tree_unflatten(tree, filled)):
            try:
                outs.append(f(*args, **kwargs))
            except (TypeError, ValueError):
                errors.add(n)
                outs.append(None)
        return outs

    try:
        outs = jax.jit(run)([leaves[i] for i in at])
    except (TypeError, ValueError):  # (raised in lowering, past the calls: one by one then)
        return [_outcome(f, *args, **kwargs) for args, kwargs in calls]
    return ["error" if n in errors else jax.tree.map(np.asarray, o) for n, o in enumerate(outs)]


def _agree(mine, theirs, what):
    if isinstance(theirs, str) or isinstance(mine, str):
        assert isinstance(mine, str) and isinstance(theirs, str), (what, mine, theirs)
        return
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (what, mine, theirs)
    tol = 1e-2 if mine.dtype == np.float16 else 1e-5
    np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", sorted(reduction_forms("numpy")))
def test_numpy_form_values_as_jax(name):
    """Values, dtypes and refusals of each numpy form on the grid, with ``keepdims``,
    ``initial=`` (where the kind takes it) and ``where=``."""
    rng = np.random.default_rng(34)
    mine, theirs = getattr(fnp, name), getattr(jnp, name)
    row = REDUCTIONS[reduction_forms("numpy")[name].name]
    takes_initial = row.numpy in ("fold", "extremum")
    # (complex max/min: funcgrad's primitives refuse them where JAX orders complex numbers
    # lexicographically; a gap of the primitives, not of the rows)
    dts = [d for d in DTYPES if row.numpy != "extremum" or d != "complex64"]
    # (CI samples the grid, every dtype kept: each case compiles JAX's side afresh)
    grid = sample(list(itertools.product(dts, SHAPES)), salt=name, group=lambda c: c[0])
    for dtype, shape in grid:
        x = _value(rng, shape, dtype)
        where = rng.random(shape) < 0.6
        kws = [
            {"axis": axis, "keepdims": keepdims}
            for axis, keepdims in itertools.product(_axes_for(shape), (False, True))
        ]
        kws.append({"where": where, **({"initial": 1} if takes_initial else {})})
        for kw, want in zip(kws, _jax_outcomes(theirs, [((x,), kw) for kw in kws]), strict=True):
            what = f"{name}({dtype}{list(shape)}, {kw})"
            _agree(_outcome(mine, x, **kw), want, what)


@pytest.mark.parametrize("name", sorted(reduction_forms("lax")))
def test_lax_form_values_as_jax(name):
    """The lax forms reduce the operand as given: bitwise for integers (``reduce_or`` is no
    ``any``: the row's ``numpy="logical"`` says the difference)."""
    rng = np.random.default_rng(35)
    mine, theirs = getattr(flax, name), getattr(jax.lax, name)
    row = reduction_forms("lax")[name]
    dts = [d for d in DTYPES if row.numpy != "extremum" or d != "complex64"]
    grid = sample(list(itertools.product(dts, SHAPES[1:])), salt=name, group=lambda c: c[0])
    for dtype, shape in grid:
        x = _value(rng, shape, dtype)
        calls = [((x, axes), {}) for axes in ((), (0,), tuple(range(len(shape))))]
        for (args, _), want in zip(calls, _jax_outcomes(theirs, calls), strict=True):
            _agree(_outcome(mine, *args), want, f"{name}({dtype}{list(shape)}, {args[1]})")
    assert "error" == _outcome(mine, np.ones(3), None) == _outcome(theirs, np.ones(3), None)


MOMENTS = sorted(n for n, r in reduction_forms("numpy").items() if r.numpy == "moment")


@pytest.mark.parametrize("name", MOMENTS)
def test_moment_forms_as_jax(name):
    """``var``/``std``: ``ddof=`` and ``correction=`` (not both), a divisor at or below 0
    (NaN), ``mean=``, ``dtype=`` (an inexact one for ``std``; none real for complex input),
    and the gradient."""
    rng = np.random.default_rng(36)
    mine, theirs = getattr(fnp, name), getattr(jnp, name)
    x = rng.uniform(-2, 2, (3, 4))
    z = x + 1j * rng.uniform(-2, 2, (3, 4))
    m = np.mean(x, axis=1, keepdims=True) + 0.5
    cases = [
        (x, {"ddof": 1}),
        (x, {"correction": 1.5, "axis": 0}),
        (x, {"ddof": 1, "correction": 1}),
        (x, {"ddof": 3, "axis": 0}),
        (x, {"ddof": 5, "axis": 0}),
        (x, {"axis": 1, "mean": m, "keepdims": True}),
        (x, {"axis": 1, "mean": m, "where": x > 0}),
        (x.astype("int32"), {"dtype": "float32"}),
        (x.astype("int32"), {"dtype": "int32"}),
        (x, {"dtype": "float16", "axis": 1}),
        (z, {"axis": 0}),
        (z.astype("complex64"), {"dtype": "complex128"}),
        (z, {"dtype": "float64"}),
    ]
    calls = [((a,), kw) for a, kw in cases]
    for (a, kw), want in zip(cases, _jax_outcomes(theirs, calls), strict=True):
        _agree(_outcome(mine, a, **kw), want, f"{name}({a.dtype}, {kw})")
    for kw in ({}, {"axis": 0, "ddof": 1}, {"axis": 1, "where": x > -1}):
        g = fg.grad(lambda v: mine(v, **kw).sum())(x)
        want = jax.grad(lambda v: theirs(v, **kw).sum())(x)
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-10, err_msg=str(kw))


SCANS = [r for r in REDUCTIONS.values() if r.numpy == "cumulative"]


@pytest.mark.parametrize("row", SCANS, ids=lambda r: r.name)
def test_cumulative_forms_as_jax(row):
    """``cumsum``, ``cumprod`` (numpy and lax), ``cummax``, ``cummin`` (lax): values and
    dtypes along each axis, ``reverse``, numpy's ``dtype=`` and the flattened array, and
    the gradient."""
    rng = np.random.default_rng(37)
    for ns in row.public:
        mine, theirs = (getattr(m, name) for m in NAMESPACES[ns] for name in [row.name])
        # (complex cummax/cummin: funcgrad's primitives refuse them, as complex max/min)
        extremum = row.identity in ("lowest", "highest")
        for dtype in ("bool", "int8", "int32", "float16", "float32", "complex64"):
            if extremum and dtype == "complex64":
                continue
            x = _value(rng, (3, 4), dtype)
            if ns == "lax":
                calls = [((a,), {"reverse": r}) for a in (0, 1, -1, 2) for r in (False, True)]
            else:
                dts = (None, "int32", "float32", "bool")
                calls = [((a,), {"dtype": d}) for a in (None, 0, 1, -1) for d in dts]
                if dtype == "complex64":  # (a real dtype= of complex input: NumPy warns)
                    calls = [c for c in calls if c[1]["dtype"] is None]
            wants = _jax_outcomes(theirs, [((x, *args), kw) for args, kw in calls])
            for (args, kw), want in zip(calls, wants, strict=True):
                what = f"{ns}.{row.name}({dtype}, {args}, {kw})"
                _agree(_outcome(mine, x, *args, **kw), want, what)
        x = rng.uniform(0.5, 1.5, (3, 4))
        g, want = (
            grad(lambda v, f=f: (f(v, 1) * np.arange(4.0)).sum())(x)
            for f, grad in ((mine, fg.grad), (theirs, jax.grad))
        )
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-10, err_msg=ns)


# ------------------------------------------------ the composite rows (``logsumexp``, softmax)
COMPOSITE_NS = {"nn": (fnn, jax.nn), "scipy.special": (fsp, jax.scipy.special)}
COMPOSITE_FORMS = [
    pytest.param(ns, name, id=f"{ns}.{name}") for ns in COMPOSITE_NS for name in reduction_forms(ns)
]


# (JAX's softmax of integers casts its ``initial=-inf`` to the integer dtype, with NumPy's
# warning; funcgrad's takes the dtype's least value)
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
@pytest.mark.parametrize(("ns", "name"), COMPOSITE_FORMS)
def test_composite_form_is_jax_s(ns, name):
    """``funcgrad.nn``'s and ``funcgrad.scipy.special``'s forms of the composite rows: JAX's
    parameters, the row's docstring, exported; ``logsumexp`` one function in both, as JAX's;
    values, dtypes and refusals on a dtype x shape x axis grid (``where=``, ``b=``,
    ``return_sign``, complex input) and the gradient."""
    mine, theirs = (getattr(m, name) for m in COMPOSITE_NS[ns])
    row = reduction_forms(ns)[name]
    assert _params(mine) == _params(theirs)
    assert mine.__doc__.startswith(form_doc(row, ns)) and name in COMPOSITE_NS[ns][0].__all__
    assert (getattr(fnn, name) is getattr(fsp, name)) == (row.numpy == "logsumexp")
    rng = np.random.default_rng(38)
    lse = row.numpy == "logsumexp"
    # (complex softmaxes: funcgrad's max refuses complex numbers, which JAX orders
    # lexicographically; a gap of the primitives, as for the extrema above)
    complex_ = ("complex64",) if lse else ()
    # (the promotions on one shape, the shapes in float32; ``tests/numpy/test_nn.py`` draws
    # more values, axes and ``b=``. CI samples the grid, every dtype kept: each case
    # compiles both sides afresh)
    grid = [(d, (2, 3)) for d in ("bool", "int32", "float16", *complex_)]
    grid += [("float32", s) for s in ((), (2, 0, 3), (2, 3))]
    for dtype, shape in sample(grid, salt=ns + name, group=lambda c: c[0]):
        x = _value(rng, shape, dtype)
        axis = -1 if len(shape) == 3 else None
        what = f"{ns}.{name}({dtype}{list(shape)}, axis={axis})"
        _agree(_outcome(mine, x, axis=axis), _outcome(theirs, x, axis=axis), what)
    for dtype, axis in (("float32", 1), *((d, None) for d in complex_)):
        x = _value(rng, (2, 3), dtype)
        where, b = rng.random((2, 3)) < 0.6, rng.uniform(-1, 2, (2, 3))
        calls = [{"where": where}] if ns == "nn" or lse else []
        calls += [{"b": b, "keepdims": True}, {"b": b, "where": where}] if lse else []
        calls += [{"b": b, "return_sign": True, "keepdims": True}] if lse else []
        for kw in calls:
            what = f"{ns}.{name}({dtype}, axis={axis}, {sorted(kw)})"
            got, want = (_outcome(f, x, axis=axis, **kw) for f in (mine, theirs))
            if kw.get("return_sign"):  # (the value and the sign)
                _agree(got[1], want[1], what + " sign")
                got, want = got[0], want[0]
            _agree(got, want, what)
    x = rng.uniform(-2, 2, (3, 4))
    for kw in ({"axis": 1}, {"axis": 0}, {"axis": 1, "where": x > -1})[: 3 if ns == "nn" else 2]:
        g, j = (
            grad(lambda v, f=f: (f(v, **kw) ** 2).sum())(x)
            for f, grad in ((mine, fg.grad), (theirs, jax.grad))
        )
        np.testing.assert_allclose(np.asarray(g), np.asarray(j), rtol=1e-10, err_msg=str(kw))


NAN_ROWS = sorted(n for n, r in reduction_forms("numpy").items() if r.nan)


@pytest.mark.parametrize("name", NAN_ROWS)
def test_nan_forms_as_jax(name):
    """``nansum``/``nanmean`` (``Reduction.nan``) of arrays holding NaNs: values and dtypes
    with ``axis``, ``where=``, ``dtype=``, a row of NaNs only, and the gradient."""
    mine, theirs = getattr(fnp, name), getattr(jnp, name)
    x = np.array(
        [[1.5, np.nan, -2.0, 0.5], [np.nan, np.nan, np.nan, np.nan], [3.0, 1.0, np.nan, 2.0]]
    )
    where = np.array([[True, True, False, True]] * 3)
    for a, kw in [
        (x, {}),
        (x, {"axis": 1}),
        (x, {"axis": 0, "keepdims": True}),
        (x, {"axis": 1, "where": where}),
        (x.astype("float16"), {"axis": 1}),
        (x.astype("float32"), {"axis": 0, "dtype": "float64"}),
        (x + 1j, {"axis": 1}),
        (np.arange(6).reshape(2, 3), {"axis": 0}),
    ]:
        _agree(_outcome(mine, a, **kw), _outcome(theirs, a, **kw), f"{name}({a.dtype}, {kw})")
    for kw in ({"axis": 1}, {"axis": 0, "where": where}):
        g, want = (
            grad(lambda v, f=f: (f(v, **kw) ** 2).sum())(x)
            for f, grad in ((mine, fg.grad), (theirs, jax.grad))
        )
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-10, err_msg=str(kw))


def test_array_methods_are_jax_array_s():
    """A row's numpy form is an array method exactly where ``jax.Array`` has that method
    (``x.sum()``, no ``x.nansum()``): ``Reduction.method``."""
    seen = {}

    def f(x):
        seen.update({r: hasattr(x, r) for r in {r.name for r in reduction_forms("numpy").values()}})
        return x.sum()

    fg.jit(f)(fnp.ones(3))
    assert seen == {name: hasattr(jax.Array, name) for name in seen}
    assert not seen["nansum"] and seen["sum"]
