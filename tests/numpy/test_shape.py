"""Shape manipulation against jax.numpy (values, dtypes, weak types; eager and jit)."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fnp_testutil import (
    BOOL,
    F32,
    I8,
    I32,
    check,
    check_abstract,
    check_batch,
    operand,
    raises_same,
    rand,
    seeds,
    tail,
)
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

X = rand(np.random.default_rng(0), (2, 3, 4), F32)
KINDS = [F32, I8, BOOL, "py_float", "weak_f32"]

# (name, args after the array, kwargs) -- every case runs for every operand kind
CASES = [
    ("reshape", ((4, 6),), {}),
    ("reshape", ((-1, 2),), {}),
    ("reshape", ((24,),), {}),
    ("reshape", (), {"shape": (2, 12)}),
    ("reshape", ((3, -1, 2),), {}),
    ("ravel", (), {}),
    ("transpose", (), {}),
    ("transpose", ((1, 0, 2),), {}),
    ("transpose", ((-1, 0, 1),), {}),
    ("permute_dims", ((2, 0, 1),), {}),
    ("matrix_transpose", (), {}),
    ("moveaxis", (0, -1), {}),
    ("moveaxis", ((0, 1), (2, 0)), {}),
    ("swapaxes", (0, 2), {}),
    ("swapaxes", (-1, 1), {}),
    ("expand_dims", (0,), {}),
    ("expand_dims", (-1,), {}),
    ("expand_dims", ((0, 3),), {}),
    ("expand_dims", ((1, -1),), {}),
    ("squeeze", (), {}),
    ("flip", (), {}),
    ("flip", (1,), {}),
    ("flip", ((0, -1),), {}),
    ("fliplr", (), {}),
    ("flipud", (), {}),
    ("rot90", (), {}),
    ("rot90", (2,), {}),
    ("rot90", (3, (1, 2)), {}),
    ("rot90", (-1,), {}),
    ("tile", (2,), {}),
    ("tile", ((2, 1, 1, 2),), {}),
    ("tile", ((1, 3),), {}),
    ("repeat", (2,), {}),
    ("repeat", (3,), {"axis": 1}),
    ("repeat", (np.array([1, 0, 2]),), {"axis": 1}),
    ("roll", (1,), {}),
    ("roll", (-2,), {"axis": 2}),
    ("roll", ((1, 2), (0, 2)), {}),
    ("roll", (5,), {"axis": -1}),
    ("tril", (), {}),
    ("tril", (-1,), {}),
    ("triu", (1,), {}),
    ("triu", (-2,), {}),
    ("diagonal", (), {}),
    ("diagonal", (1, 1, 2), {}),
    ("diagonal", (-1, -1, 0), {}),
    ("trace", (), {}),
    ("trace", (1, 1, 2), {}),
    ("broadcast_to", ((2, 2, 3, 4),), {}),
    ("atleast_1d", (), {}),
    ("atleast_2d", (), {}),
    ("atleast_3d", (), {}),
    ("split", (2,), {}),
    ("split", ([1, 3],), {"axis": 2}),
    ("split", ([2],), {"axis": 1}),
    ("array_split", (3,), {"axis": 2}),
    ("array_split", (5,), {"axis": 1}),
    ("hsplit", (3,), {}),
    ("vsplit", (2,), {}),
    ("pad", (1,), {}),
    ("pad", (((0, 1), (2, 0), (1, 1)),), {}),
    ("pad", ((1, 2),), {"constant_values": 7}),
    ("pad", (1,), {"mode": "edge"}),
    ("pad", (((2, 1), (1, 3), (0, 0)),), {"mode": "wrap"}),
    ("pad", (2,), {"mode": "reflect"}),
    ("pad", (((1, 2), (2, 1), (3, 0)),), {"mode": "symmetric"}),
    ("pad", ((1, 1),), {"constant_values": ((1, 2), (3, 4), (5, 6))}),
    ("append", (np.ones((1, 3, 4)),), {"axis": 0}),
    ("append", (2.5,), {}),
    ("squeeze", (), {"axis": None}),
]
ND_ONLY = {
    "matrix_transpose",
    "moveaxis",
    "swapaxes",
    "fliplr",
    "flipud",
    "rot90",
    "tril",
    "triu",
    "diagonal",
    "trace",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
}


def _case(name, args, kw):
    f, g = getattr(fnp, name), getattr(jnp, name)
    return (f"{name}{args}{kw}", lambda a: f(a, *args, **kw), lambda a: g(a, *args, **kw))


def test_shape_op_values() -> None:
    """Every case on a float32 array (eager, traced, one jit for all)."""
    check_batch([(label, f, g, (X,)) for label, f, g in (_case(*c) for c in CASES)])


@pytest.mark.parametrize("kind", KINDS)
def test_shape_op_dtypes(kind) -> None:
    """Every case keeps the operand's dtype and weak type (Python scalars too)."""
    x = operand(kind, (2, 3, 4))
    for name, args, kw in CASES:
        if name in ND_ONLY and not np.ndim(x):
            continue
        label, f, g = _case(name, args, kw)
        check_abstract(f, g, x, what=f"{label}({kind})")


@given(seed=seeds, perm=st.permutations([0, 1, 2]), neg=st.booleans())
def test_transpose_moveaxis_random(seed: int, perm, neg: bool) -> None:
    axes = [p - 3 if neg else p for p in perm]
    check(lambda a: fnp.transpose(a, axes), lambda a: jnp.transpose(a, axes), X)
    check(
        lambda a: fnp.moveaxis(a, axes[0], axes[1]), lambda a: jnp.moveaxis(a, axes[0], axes[1]), X
    )
    check(
        lambda a: fnp.moveaxis(a, axes[:2], axes[1:]),
        lambda a: jnp.moveaxis(a, axes[:2], axes[1:]),
        X,
    )


SHAPES_RESHAPE = [(24,), (4, 6), (2, -1), (3, 2, 4), (-1,), (1, 24, 1), (2, 3, 2, 2)]


@given(shape=st.sampled_from(SHAPES_RESHAPE), squeeze_axis=st.sampled_from([None, 0, (0, 2), -1]))
def test_reshape_squeeze_expand(shape, squeeze_axis) -> None:
    check(lambda a: fnp.reshape(a, shape), lambda a: jnp.reshape(a, shape), X)
    y = X.reshape(1, 2, 1, 3, 4, 1)
    ax = {None: None, 0: 0, (0, 2): (0, 2), -1: -1}[squeeze_axis]
    check(lambda a: fnp.squeeze(a, ax), lambda a: jnp.squeeze(a, ax), y)
    check(
        lambda a: fnp.expand_dims(a, ax if ax is not None else 1),
        lambda a: jnp.expand_dims(a, ax if ax is not None else 1),
        X,
    )


JOIN_KINDS = [
    (F32, F32),
    (F32, I32),
    (I8, BOOL),
    ("py_float", F32),
    (I32, "py_int"),
    ("weak_f32", I8),
]


@pytest.mark.parametrize(
    "name", ["concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack"]
)
def test_joins(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    rng = np.random.default_rng(3)
    a, b = rand(rng, (2, 3), F32), rand(rng, (2, 3), I32)
    check(lambda x, y: f([x, y]), lambda x, y: g([x, y]), a, b)
    check(lambda x, y: f((x, y, x)), lambda x, y: g((x, y, x)), a[0], b[1])
    if name in ("concatenate", "concat", "stack"):
        for axis in [0, 1, -1, None] if name != "stack" else [0, 1, 2, -1, -3]:
            if name == "concat" and axis is None:
                continue
            check(lambda x, y: f([x, y], axis=axis), lambda x, y: g([x, y], axis=axis), a, b)
        if name != "concat":  # jnp.concat has no dtype argument
            check(
                lambda x, y: f([x, y], dtype=np.float16),
                lambda x, y: g([x, y], dtype=np.float16),
                a,
                b,
            )
    for k1, k2 in JOIN_KINDS:
        x, y = operand(k1, (2, 3)), operand(k2, (2, 3))
        if name in ("concatenate", "concat") and (np.ndim(x) == 0 or np.ndim(y) == 0):
            continue
        check_abstract(
            lambda u, v: f([u, v]), lambda u, v: g([u, v]), x, y, what=f"{name}({k1},{k2})"
        )
    check(lambda x: f([x[0], x[1]]), lambda x: g([x[0], x[1]]), a)  # a list of tracers


def test_concatenate_uneven_and_errors() -> None:
    rng = np.random.default_rng(4)
    a, b = rand(rng, (2, 3), F32), rand(rng, (2, 5), F32)
    check(
        lambda x, y: fnp.concatenate([x, y], axis=1),
        lambda x, y: jnp.concatenate([x, y], axis=1),
        a,
        b,
    )
    with pytest.raises(TypeError, match="concatenate"):  # as jnp
        fnp.concatenate([a, b], axis=0)
    with pytest.raises(ValueError, match="stack"):
        fnp.stack([a, b])


def test_broadcast_helpers() -> None:
    rng = np.random.default_rng(5)
    a, b, c = rand(rng, (3, 1), F32), rand(rng, (4,), I32), 2.0
    check(
        lambda x, y: fnp.broadcast_arrays(x, y, c), lambda x, y: jnp.broadcast_arrays(x, y, c), a, b
    )
    assert fnp.broadcast_shapes((3, 1), (4,), ()) == jnp.broadcast_shapes((3, 1), (4,), ())
    check(
        lambda x: fnp.broadcast_to(x, (2, 3, 4)),
        lambda x: jnp.broadcast_to(x, (2, 3, 4)),
        a[:, 0][:, None] * np.ones(4, np.float32),
    )
    check(lambda: fnp.broadcast_to(1.5, (2,)), lambda: jnp.broadcast_to(1.5, (2,)))
    check(
        lambda x: fnp.atleast_2d(x, 2.0, x[0]), lambda x: jnp.atleast_2d(x, 2.0, x[0]), a, jit=False
    )


@given(
    seed=seeds,
    sections=st.sampled_from([1, 2, 4, [1], [1, 1], [0, 2, 2], [1, 2]]),
    axis=st.sampled_from([0, 2, -1]),
)
def test_split_random(seed: int, sections, axis: int) -> None:
    f = lambda a: fnp.array_split(a, sections, axis=axis)
    g = lambda a: jnp.array_split(a, sections, axis=axis)
    if raises_same(lambda: f(X), lambda: g(X)):
        return
    check(f, g, X)
    if not raises_same(
        lambda: fnp.split(X, sections, axis=axis), lambda: jnp.split(X, sections, axis=axis)
    ):
        check(
            lambda a: fnp.split(a, sections, axis=axis),
            lambda a: jnp.split(a, sections, axis=axis),
            X,
        )


@given(shift=st.integers(-7, 7), axis=st.sampled_from([None, 0, 1, -1, (0, 2)]))
def test_roll_random(shift: int, axis) -> None:
    s = (shift, -shift) if isinstance(axis, tuple) else shift
    check(lambda a: fnp.roll(a, s, axis), lambda a: jnp.roll(a, s, axis), X)


def test_roll_traced_shift() -> None:
    import funcgrad as fg

    for shift in (-4, 0, 2, 7):
        got = fg.jit(lambda a, s: fnp.roll(a, s, axis=1))(X, shift)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(jnp.roll(X, shift, axis=1)))


@given(k=st.sampled_from([-4, -1, 0, 2]), shape=st.sampled_from([(3, 4), (2, 3, 3)]))
def test_tril_triu_diagonal_random(k: int, shape) -> None:
    x = rand(np.random.default_rng(6), shape, I32)
    cases = [
        (
            name,
            tail(getattr(fnp, name), k, *extra),
            tail(getattr(jnp, name), k, *extra),
            (x,),
        )
        for name, extra in [("tril", ()), ("triu", ()), ("diagonal", (-2, -1)), ("trace", (-2, -1))]
    ]
    check_batch(cases, key=(k, shape))


@given(
    seed=seeds,
    reps=st.sampled_from([1, 2, (2, 1), (1, 2, 1), (0, 2)]),
    repeats=st.sampled_from([0, 1, 2, [2, 0, 1], [1, 1, 3]]),
)
def test_tile_repeat_random(seed: int, reps, repeats) -> None:
    x = rand(np.random.default_rng(seed % 3), (2, 3), F32)
    check(lambda a: fnp.tile(a, reps), lambda a: jnp.tile(a, reps), x)
    r = np.asarray(repeats) if isinstance(repeats, list) else repeats
    check(lambda a: fnp.repeat(a, r, axis=1), lambda a: jnp.repeat(a, r, axis=1), x)
    if not isinstance(repeats, list):
        check(lambda a: fnp.repeat(a, r), lambda a: jnp.repeat(a, r), x)


@given(
    mode=st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric"]),
    widths=st.sampled_from([0, 1, 3, (1, 2), ((0, 2), (3, 1)), ((5, 0), (0, 4))]),
)
def test_pad_random(mode: str, widths) -> None:
    x = rand(np.random.default_rng(7), (3, 4), F32)
    check(lambda a: fnp.pad(a, widths, mode=mode), lambda a: jnp.pad(a, widths, mode=mode), x)


def test_shape_methods_on_tracers() -> None:
    from fnp_testutil import assert_same

    import funcgrad as fg

    def f(a):
        return [
            a.T,
            a.mT,
            a.reshape(6, 4),
            a.reshape((4, -1)),
            a.transpose(),
            a.transpose(2, 0, 1),
            a.transpose((1, 0, 2)),
            a.ravel(),
            a.flatten(),
            a.squeeze(),
            a[None].squeeze(0),
            a.swapaxes(0, 1),
            a.repeat(2, axis=0),
            a.diagonal(),
            a.trace(),
            a.astype(np.int32),
            a.astype("float16"),
            a.clip(-1, 1),
            a.round(),
            a.take(np.array([1, 0]), axis=2),
            a.real,
            a.conj(),
            a.shape,
            a.ndim,
            a.size,
            a.dtype,
            a.nbytes,
        ]

    want = f(jnp.asarray(X))
    got = fg.jit(lambda a: [v for v in f(a) if not isinstance(v, (tuple, int, np.dtype))])(X)
    want_arrays = [v for v in want if not isinstance(v, (tuple, int, np.dtype))]
    assert_same(got, want_arrays, what="methods")

    def g(a):
        return [a.shape, a.ndim, a.size, a.dtype, a.nbytes, len(a)]

    out = {}
    fg.jit(lambda a: out.setdefault("v", g(a)) and a)(X)
    assert out["v"] == g(jnp.asarray(X))


def test_weak_scalars_through_shape_ops() -> None:
    for name, args in [
        ("reshape", ((1,),)),
        ("expand_dims", (0,)),
        ("tile", (3,)),
        ("repeat", (2,)),
        ("broadcast_to", ((2, 2),)),
        ("atleast_2d", ()),
        ("ravel", ()),
        ("roll", (1,)),
    ]:
        f, g = getattr(fnp, name), getattr(jnp, name)
        check(lambda: f(2.0, *args), lambda: g(2.0, *args))
        check(lambda: f(3, *args), lambda: g(3, *args))


def test_weak_pairs_table() -> None:
    for k1, k2 in itertools.product(["py_float", "weak_f32", F32, I8], repeat=2):
        x, y = operand(k1, (2,)), operand(k2, (2,))
        check_abstract(
            lambda u, v: fnp.stack([u, v]),
            lambda u, v: jnp.stack([u, v]),
            x,
            y,
            what=f"stack({k1},{k2})",
        )


@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median", "linear_ramp"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_statistic_and_ramp_modes(mode, dtype) -> None:
    """pad's statistic modes (with stat_length) and linear_ramp (with end_values), against
    NumPy (jnp agrees except for some rounded integer ramps, where it differs from NumPy)
    and jnp's dtypes (traced, not compiled: only the dtype is read), eagerly and under jit."""
    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 4)]:
        x = (rng.normal(size=shape) * 5).astype(dtype)
        opts = (
            [{}, {"stat_length": 2}, {"stat_length": ((1, 2),) * len(shape)}]
            if mode != "linear_ramp"
            else [{}, {"end_values": 4}, {"end_values": ((1, -2),) * len(shape)}]
        )
        for pw in [1, ((1, 2),) * len(shape), 3]:
            for kw in opts:
                want = np.pad(x, pw, mode, **kw)
                want_dtype = jax.eval_shape(lambda a: jnp.pad(a, pw, mode, **kw), x).dtype
                for got in (
                    fnp.pad(x, pw, mode, **kw),
                    fg.jit(lambda a: fnp.pad(a, pw, mode, **kw))(x),
                ):
                    assert got.dtype == want_dtype
                    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)


def test_pad_rejects_other_modes_options_as_jax() -> None:
    import jax.numpy as jnp

    arr = np.array([1, 2, 3])
    for mode, kw in [("constant", {"end_values": 0}), ("edge", {"stat_length": None}),
                     ("maximum", {"reflect_type": "even"}), ("linear_ramp", {"constant_values": 0}),
                     ("wrap", {"end_values": 0}), ("reflect", {"stat_length": None})]:  # fmt: skip
        for m in (jnp, fnp):
            with pytest.raises(
                ValueError, match=f"unsupported keyword arguments for mode '{mode}'"
            ):
                m.pad(arr, 1, mode, **kw)
    np.testing.assert_array_equal(fnp.pad(arr, 1, "reflect", reflect_type="even"),
                                  jnp.pad(arr, 1, "reflect", reflect_type="even"))  # fmt: skip


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.tensordot(np.ones((3, 2, 2)), np.ones(2), 2),
        lambda m: m.trace(np.ones((2, 3, 2), np.int32), axis1=1, axis2=-2),
        lambda m: m.interp(0.0, m.arange(2.0), m.arange(3.0)),
        lambda m: m.rot90(m.ones(3)),
    ],
)
def test_shape_errors_in_jax_words(call) -> None:
    import jax.numpy as jnp

    with pytest.raises(Exception) as want:
        call(jnp)
    with pytest.raises(type(want.value)) as got:
        call(fnp)
    assert str(got.value).startswith(str(want.value).split("\n")[0]), (got.value, want.value)


def test_argsort_dtype_size_over_axes_and_delete_with_a_mask() -> None:
    x = np.random.default_rng(0).normal(size=10).astype(np.float32)
    for dt in (np.int16, np.uint32):
        got, want = fnp.argsort(x, dtype=dt), jnp.argsort(x, dtype=dt)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert fg.jit(lambda v: fnp.argsort(v, dtype=dt))(x).dtype == want.dtype
    y = np.ones((2, 3, 4))
    for axis in (None, 1, (0, 2), (-1,)):
        assert fnp.size(y, axis) == jnp.size(y, axis)
    for m in (fnp, jnp):
        with pytest.raises(ValueError, match="repeated axis"):
            m.size(y, (0, -3))
    mask = np.array([True, False, True, False, False])
    np.testing.assert_array_equal(fnp.delete(np.arange(5), mask), jnp.delete(np.arange(5), mask))
    m2 = np.arange(10).reshape(2, 5)
    np.testing.assert_array_equal(fnp.delete(m2, mask, axis=1), jnp.delete(m2, mask, axis=1))


@pytest.mark.parametrize("name", ["ndim", "shape", "size"])
@pytest.mark.parametrize("arg", [[1, 2, 3], ((1, 2), (3, 4)), 3.0, np.ones((2, 3))])
def test_ndim_shape_size_of_sequences_warn(name: str, arg: object) -> None:
    """A list or tuple gives JAX's DeprecationWarning (word for word) and the same
    answer; arrays and scalars do not warn."""
    import warnings

    records = []
    for m in (jnp, fnp):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            value = getattr(m, name)(arg)
        records.append((value, [(w.category, str(w.message)) for w in rec]))
    (got, got_w), (want, want_w) = records[1], records[0]
    assert got == want
    # JAX's ``size`` warns a second time from the ``shape`` it calls; one is enough
    assert got_w == want_w[:1]
    assert bool(want_w) == isinstance(arg, (list, tuple))
    # funcgrad's own functions taking lists do not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fnp.block([[1.0, 2.0], [3.0, 4.0]])
        fnp.array_equal([1.0, 2.0], [1.0, 2.0])
        fnp.piecewise(np.arange(3.0), [[True, False, True]], [1.0, 2.0])
