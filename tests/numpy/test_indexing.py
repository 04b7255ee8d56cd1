"""Indexing (basic, advanced, boolean masks), ``.at[]`` updates, take/take_along_axis.

funcgrad's indexing is what tracers use, so every case runs under ``fg.jit`` (and
eagerly through ``funcgrad.numpy._indexing.getitem`` on NumPy input).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from fnp_testutil import BOOL, F32, I32, assert_same, check, rand, seeds, weak_array
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationTypeError
from funcgrad.numpy._indexing import getitem

SHAPE = (4, 5, 3)
X = rand(np.random.default_rng(0), SHAPE, F32)


def _slices(n: int):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, 3, -1, -2, -3]))


@st.composite
def basic_index(draw):
    """A random basic index for SHAPE: ints (in range), slices (any step, any bounds), None,
    and at most one Ellipsis between a prefix and a suffix of indexed dimensions."""
    ellipsis = draw(st.booleans())
    n_pre = draw(st.integers(0, 3))
    n_suf = draw(st.integers(0, 3 - n_pre)) if ellipsis else 0
    dims = list(range(n_pre)) + list(range(3 - n_suf, 3))
    items = [draw(st.one_of(st.integers(-SHAPE[d], SHAPE[d] - 1), _slices(SHAPE[d]))) for d in dims]
    if ellipsis:
        items.insert(n_pre, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items) if draw(st.booleans()) or len(items) != 1 else items[0]


@settings(max_examples=8)  # each example compiles new slice/gather signatures
@given(idx=basic_index())
def test_basic_indexing(idx) -> None:
    check(lambda a: getitem(a, idx), lambda a: jnp.asarray(a)[idx], X)


def _int_array(rng, n, shape):
    return rng.integers(-n, n, shape).astype(rng.choice([np.int32, np.int64, np.int8]))


@st.composite
def advanced_index(draw):
    """Integer arrays (broadcasting shapes) in adjacent or separated positions, mixed with
    ints, slices, None and Ellipsis."""
    rng = np.random.default_rng(draw(seeds))
    n_arrays = draw(st.integers(1, 3))
    positions = sorted(
        draw(st.lists(st.integers(0, 2), min_size=n_arrays, max_size=n_arrays, unique=True))
    )
    bshape = draw(st.sampled_from([(2,), (3, 1), (1, 2), (), (2, 2)]))
    items: list = []
    for d in range(3):
        n = SHAPE[d]
        if d in positions:
            shape = bshape if draw(st.booleans()) else bshape[-1:] if bshape else ()
            items.append(_int_array(rng, n, shape) if shape else int(rng.integers(-n, n)))
        else:
            items.append(draw(st.one_of(_slices(n), st.just(slice(None)))))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):  # drop trailing full slices / replace a prefix by Ellipsis
        while items and isinstance(items[-1], slice) and items[-1] == slice(None):
            items.pop()
    if draw(st.booleans()) and items and isinstance(items[0], slice) and items[0] == slice(None):
        items[0] = Ellipsis
    if not any(isinstance(i, np.ndarray) for i in items):
        items.append(np.array([0, -1]))
    return tuple(items)


@settings(max_examples=8)  # each example compiles new slice/gather signatures
@given(idx=advanced_index())
def test_advanced_indexing(idx) -> None:
    used = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if used > 3:
        return
    check(lambda a: getitem(a, idx), lambda a: jnp.asarray(a)[idx], X)


@settings(max_examples=8)  # each example compiles new slice/gather signatures
@given(seed=seeds, which=st.sampled_from(["first", "first2", "last", "all", "mid"]))
def test_boolean_mask_indexing(seed: int, which: str) -> None:
    rng = np.random.default_rng(seed)
    if which == "first":
        idx = rng.random(4) < 0.5
    elif which == "first2":
        idx = rng.random((4, 5)) < 0.5
    elif which == "last":
        idx = (slice(None), slice(1, None), rng.random(3) < 0.5)
    elif which == "mid":
        idx = (Ellipsis, rng.random(5) < 0.5, slice(None, 2))
    else:
        idx = rng.random(SHAPE) < 0.3
    check(lambda a: getitem(a, idx), lambda a: jnp.asarray(a)[idx], X)
    check(
        lambda a: getitem(a, [True, False, True, True]),
        lambda a: jnp.asarray(a)[np.array([True, False, True, True])],
        X,
    )


@given(
    seed=seeds, form=st.sampled_from(["scalar", "vector", "matrix", "pair", "sliced", "negative"])
)
def test_traced_integer_indices(seed: int, form: str) -> None:
    """Index arrays that are traced values (jit arguments): wrap negatives, clamp."""
    rng = np.random.default_rng(seed)
    i = rng.integers(
        -4,
        4,
        {
            "scalar": (),
            "vector": (3,),
            "matrix": (2, 2),
            "pair": (2,),
            "sliced": (3,),
            "negative": (2,),
        }[form],
    ).astype(np.int32)
    j = rng.integers(-5, 5, i.shape).astype(np.int32)
    fs = {
        "scalar": (lambda a, i, j: a[i], lambda a, i, j: a[i]),
        "vector": (lambda a, i, j: a[i], lambda a, i, j: a[i]),
        "matrix": (lambda a, i, j: a[:, j % 5][i], lambda a, i, j: a[:, j % 5][i]),
        "pair": (lambda a, i, j: a[i, j], lambda a, i, j: a[i, j]),
        "sliced": (lambda a, i, j: a[i, 1:, ::-1], lambda a, i, j: a[i, 1:, ::-1]),
        "negative": (lambda a, i, j: a[:, j, i % 3], lambda a, i, j: a[:, j, i % 3]),
    }
    f, g = fs[form]
    assert_same(fg.jit(f)(X, i, j), jax.jit(g)(X, i, j), what=form)


def test_indexing_weak_and_scalars() -> None:
    w = weak_array(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    for idx in [0, (1, -1), (slice(None, None, -1),), np.array([1, 0]), (None, 0)]:
        assert_same(fg.jit(lambda a: a[idx])(w), w[idx], what=str(idx))
    assert_same(fg.jit(lambda a: a[1])(2.0 * np.ones(3)), jnp.ones(3)[1] * 2.0)


# --------------------------------------------------------------------------- .at[]

AT_INDICES = [
    -1,
    (slice(None), 2),
    np.array([0, 2, 3]),
    (np.array([1, 3]), slice(None, 2)),
    (Ellipsis, np.array([2, 0])),
    np.array([True, False, True, False]),
    (1, np.array([0, 4]), 2),
    (slice(None, None, -2), None, 1),
]
DUP_INDICES = [np.array([0, 2, 0, 3, 2]), (np.array([1, 1, 1]), np.array([2, 2, 0]))]


@pytest.mark.parametrize(
    "op",
    ["set", "add", "subtract", "multiply", "mul", "divide", "min", "max", "power", "get", "apply"],
)
@pytest.mark.parametrize("dtype", [F32, I32])
def test_at_updates(op: str, dtype) -> None:
    """Every index form, with array / Python scalar / broadcast values, in one jit per op."""
    rng = np.random.default_rng(1)
    x = rand(rng, SHAPE, dtype, 1, 4)
    if op in ("divide", "power") and dtype == I32:
        return
    dups = op in ("add", "subtract", "multiply", "mul", "min", "max", "get")
    cases = []
    for idx in AT_INDICES + (DUP_INDICES if dups else []):
        shape = np.asarray(x)[idx].shape
        values = [rand(rng, shape, dtype, 1, 3), 2]
        if op in ("set", "add"):
            values.append(rand(rng, shape[-1:], dtype, 1, 3))  # broadcast values
        for v in values:
            cases.append((idx, v))

    def update(a, idx, v):
        if op == "get":
            return a.at[idx].get()
        if op == "apply":
            return a.at[idx].apply(lambda t: t * 2 + 1)
        return getattr(a.at[idx], op)(v)

    def f(a, v0):
        return [update(a, idx, v) for idx, v in cases] + [update(a, AT_INDICES[2], v0)]

    v0 = rand(rng, (3, 5, 3), dtype, 1, 3)  # a traced update value for x[[0, 2, 3]]
    got = fg.jit(f)(x, v0)
    want = jax.jit(f)(x, v0)  # JAX's own .at[] (one compile for all cases)
    for (idx, _), gg, ww in zip([*cases, (AT_INDICES[2], None)], got, want):
        assert_same(gg, ww, what=f"{op}[{idx}]")


def test_at_set_duplicates_last_wins_and_traced() -> None:
    x = np.zeros(5, np.float32)
    idx = np.array([1, 3, 1])
    got = fg.jit(lambda a, v: a.at[idx].set(v))(x, np.array([1.0, 2.0, 3.0], np.float32))
    np.testing.assert_array_equal(np.asarray(got), [0, 3, 0, 2, 0])
    # traced indices, including duplicates and negative ones
    for ops in ["set", "add", "min", "max", "multiply"]:
        i = np.array([4, -1, 0, 2], np.int32)
        v = np.array([5.0, 7.0, 1.5, 2.0], np.float32)
        f = lambda a, i, v: getattr(a.at[i], ops)(v)
        got = fg.jit(f)(np.ones(5, np.float32) * 3, i, v)
        want = f(jnp.ones(5, np.float32) * 3, i, v)
        if ops == "set":
            np.testing.assert_array_equal(np.asarray(got), [1.5, 3, 2, 3, 7])  # last write wins
        else:
            assert_same(got, want, what=ops)


def test_at_bool_and_weak() -> None:
    b = np.array([True, False, True])
    for op, v in [("set", False), ("min", False), ("max", True)]:
        f = lambda a: getattr(a.at[np.array([0, 1])], op)(v)
        assert_same(fg.jit(f)(b), f(jnp.asarray(b)), what=op)
    w = weak_array(np.ones(3, np.float32))
    assert_same(fg.jit(lambda a: a.at[1].set(5.0))(w), w.at[1].set(5.0))


def test_at_grad() -> None:
    def f(x, v):
        return (x.at[np.array([0, 2])].set(v * 2) * x).sum() + (x.at[1:].add(v[0]) ** 2).sum()

    def g(x, v):
        return (x.at[np.array([0, 2])].set(v * 2) * x).sum() + (x.at[1:].add(v[0]) ** 2).sum()

    x, v = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0], np.float32)
    assert_same(fg.grad(f, argnums=(0, 1))(x, v), jax.grad(g, argnums=(0, 1))(x, v))


# --------------------------------------------------------------------------- take


@settings(max_examples=8)  # each example compiles new slice/gather signatures
@given(
    seed=seeds,
    axis=st.sampled_from([None, 0, 1, -1]),
    mode=st.sampled_from([None, "clip", "wrap", "fill"]),
    ishape=st.sampled_from([(3,), (2, 2), ()]),
)
def test_take(seed: int, axis, mode, ishape) -> None:
    rng = np.random.default_rng(seed)
    n = X.size if axis is None else SHAPE[axis]
    lo, hi = (-n, n) if mode in (None, "fill") else (-2 * n, 2 * n)
    i = rng.integers(lo, hi, ishape).astype(np.int32)
    check(
        lambda a, i: fnp.take(a, i, axis=axis, mode=mode),
        lambda a, i: jnp.take(a, i, axis=axis, mode=mode),
        X,
        i,
    )


def test_take_out_of_range_fill() -> None:
    i = np.array([0, 7, -9, 2], np.int32)
    check(lambda a, i: fnp.take(a, i, axis=1), lambda a, i: jnp.take(a, i, axis=1), X, i)
    check(
        lambda a, i: fnp.take(a, i, axis=1, fill_value=-1.0),
        lambda a, i: jnp.take(a, i, axis=1, fill_value=-1.0),
        X,
        i,
    )
    xi = rand(np.random.default_rng(2), (6,), I32)
    check(lambda a, i: fnp.take(a, i), lambda a, i: jnp.take(a, i), xi, i)
    xb = np.array([True, False, True])
    check(lambda a, i: fnp.take(a, i), lambda a, i: jnp.take(a, i), xb, np.array([0, 5], np.int32))


@settings(max_examples=8)  # each example compiles new slice/gather signatures
@given(seed=seeds, axis=st.sampled_from([0, 1, 2, -1, None]), k=st.sampled_from([1, 2, 3]))
def test_take_along_axis(seed: int, axis, k: int) -> None:
    rng = np.random.default_rng(seed)
    if axis is None:
        i = rng.integers(-X.size, X.size, (k,))
    else:
        shape = list(SHAPE)
        shape[axis] = k
        if rng.random() < 0.5:  # broadcast another axis
            shape[(axis + 1) % 3] = 1
        i = rng.integers(-SHAPE[axis], SHAPE[axis], shape)
    check(
        lambda a, i: fnp.take_along_axis(a, i, axis),
        lambda a, i: jnp.take_along_axis(a, i, axis),
        X,
        i.astype(np.int32),
    )


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"mode": "fill"},
        {"mode": "clip"},
        {"mode": "fill", "fill_value": 10.0},
        {"mode": "clip", "wrap_negative_indices": False},
        {"mode": "fill", "wrap_negative_indices": False},
        {"mode": "promise_in_bounds", "wrap_negative_indices": True},
    ],
)
def test_take_along_axis_out_of_bounds_modes(kw) -> None:
    # out-of-range and negative indices: filled, clamped or wrapped as jnp does per mode
    x = np.arange(10, dtype=F32)
    i = np.array([-11, -10, -9, -5, -1, 0, 1, 5, 9, 10, 11], np.int32)
    if kw.get("mode") == "promise_in_bounds":
        i = i[1:-2]  # in bounds after wrapping: the only indices the mode defines
    check(
        lambda a, j: fnp.take_along_axis(a, j, 0, **kw),
        lambda a, j: jnp.take_along_axis(a, j, 0, **kw),
        x,
        i,
    )
    m = rand(np.random.default_rng(4), (3, 4), F32)
    j = np.array([[0, -1, 4, -5]] * 3, np.int8)  # narrow index dtype
    check(
        lambda a, k: fnp.take_along_axis(a, k, 1, **kw),
        lambda a, k: jnp.take_along_axis(a, k, 1, **kw),
        m,
        j if kw.get("mode") != "promise_in_bounds" else j[:, :2],
    )


def test_take_along_axis_argsort_pattern() -> None:
    x = rand(np.random.default_rng(3), (3, 4), F32)

    def f(a):
        return fnp.take_along_axis(a, fnp.argsort(a, axis=1), axis=1)

    assert_same(fg.jit(f)(x), jnp.sort(x, axis=1))
    assert_same(f(x), jnp.sort(x, axis=1))
    _ = BOOL


# ---------------------------------------------------------------------------
# trim_zeros, put, put_along_axis, place
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("trim", ["fb", "f", "b", "B"])
def test_trim_zeros(trim):
    t = np.array([0, 0, 1, 2, 0, 3, 0])
    jo.same_values(fnp.trim_zeros(t, trim), jnp.trim_zeros(t, trim))
    jo.same_values(fnp.trim_zeros(np.zeros(3), trim), jnp.trim_zeros(np.zeros(3), trim))
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    jo.same_values(fnp.trim_zeros(m, trim, axis=1), jnp.trim_zeros(m, trim, axis=1))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        fg.jit(fnp.trim_zeros)(t)


ARR = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
def test_put(mode):
    ind = np.array([0, 7, -1, 2])
    v = np.array([9.0, 8.0, 7.0])
    jo.same_values(
        fnp.put(ARR, ind, v, mode=mode, inplace=False),
        jnp.put(ARR, ind, v, mode=mode, inplace=False),
    )
    jo.same_values(
        fg.jit(lambda a: fnp.put(a, ind, v, mode=mode, inplace=False))(ARR),
        jnp.put(ARR, ind, v, mode=mode, inplace=False),
    )


def test_put_along_axis_place_and_inplace_errors():
    i = np.array([[0], [2]])
    for axis in (1, -1):
        jo.same_values(
            fnp.put_along_axis(ARR, i, 99.0, axis, inplace=False),
            jnp.put_along_axis(ARR, i, 99.0, axis, inplace=False),
        )
    jo.same_values(
        fnp.put_along_axis(
            ARR.ravel(), np.array([1, -1]), np.array([5.0, 6.0]), None, inplace=False
        ),
        jnp.put_along_axis(
            ARR.ravel(), np.array([1, -1]), np.array([5.0, 6.0]), None, inplace=False
        ),
    )
    mask = ARR > 2
    jo.same_values(
        fnp.place(ARR, mask, [7.0, 8.0], inplace=False),
        jnp.place(ARR, mask, jnp.array([7.0, 8.0]), inplace=False),
    )
    jo.same_values(
        fg.jit(lambda a, m: fnp.place(a, m, [1.0], inplace=False))(ARR, mask),
        jnp.place(ARR, mask, jnp.array([1.0]), inplace=False),
    )
    g = fg.grad(lambda v: fnp.place(ARR, mask, v, inplace=False).sum())(np.array([7.0, 8.0]))
    jo.same_values(
        g, jo.grad(lambda v: jnp.place(ARR, mask, v, inplace=False).sum())(np.array([7.0, 8.0]))
    )
    for fn, args in [(fnp.put, (ARR, [0], [1.0])), (fnp.place, (ARR, mask, [1.0]))]:
        with pytest.raises(ValueError, match="inplace=False"):
            fn(*args)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.put_along_axis(ARR, i, 1.0, 1)
