"""Array creation against jax.numpy: values, dtypes and weak types (eager and jit)."""

from __future__ import annotations

import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from fnp_testutil import (
    BOOL,
    F16,
    F32,
    I8,
    I32,
    check,
    check_abstract,
    check_batch,
    operand,
    raises_same,
    rand,
)

import funcgrad as fg
import funcgrad.numpy as fnp

ARANGE = [
    (5,),
    (0,),
    (-3,),
    (2, 7),
    (7, 2),
    (1, 10, 3),
    (10, 1, -2),
    (0.5,),
    (0, 1, 0.1),
    (-1.5, 2.5, 0.5),
    (np.int32(4),),
    (np.int8(1), 9, 2),
    (3.0,),
    (0, 5, 1.5),
    (np.float16(2.5),),
]


@pytest.mark.parametrize("args", ARANGE, ids=str)
def test_arange(args) -> None:
    check(lambda: fnp.arange(*args), lambda: jnp.arange(*args))
    for dt in [F32, I32, F16, int, float]:
        if raises_same(lambda: fnp.arange(*args, dtype=dt), lambda: jnp.arange(*args, dtype=dt)):
            continue
        check(lambda: fnp.arange(*args, dtype=dt), lambda: jnp.arange(*args, dtype=dt), jit=False)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"num": 1},
        {"num": 0},
        {"num": 5, "dtype": I32},
        {"num": 7, "dtype": F16},
        {"num": 4, "endpoint": False, "retstep": True},
    ],
    ids=str,
)
def test_linspace(kw) -> None:
    cases = []
    for start, stop in [(0, 1), (-2.5, 10), (3, -3), (1, 1)]:
        if kw.get("dtype") in (I32, int) and start == -2.5:
            continue  # XLA fuses jnp's start * (1 - t) + stop * t into an FMA: floor differs
        cases.append(
            (
                f"{start},{stop}",
                lambda a=start, b=stop: fnp.linspace(a, b, **kw),
                lambda a=start, b=stop: jnp.linspace(a, b, **kw),
                (),
            )
        )
    a, b = np.array([0.0, 1.0], np.float32), np.array([[2.0, 5.0]], np.float32)
    for axis in (0, -1, 1):
        cases.append(
            (
                f"axis={axis}",
                lambda x, y, axis=axis: fnp.linspace(x, y, axis=axis, **kw),
                lambda x, y, axis=axis: jnp.linspace(x, y, axis=axis, **kw),
                (a, b),
            )
        )
    check_batch(cases)


def test_logspace() -> None:
    check(lambda: fnp.logspace(0, 2, 5), lambda: jnp.logspace(0, 2, 5))
    check(
        lambda: fnp.logspace(0, 3, 4, base=2.0, endpoint=False),
        lambda: jnp.logspace(0, 3, 4, base=2.0, endpoint=False),
    )
    check(lambda: fnp.logspace(0, 2, 3, dtype=F32), lambda: jnp.logspace(0, 2, 3, dtype=F32))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_zeros_ones(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    for shape in [3, (2, 3), (), (0, 2), [2, 1], np.int64(2)]:
        for dt in [None, F32, I32, BOOL, F16, int, float, bool, "float32", np.int8]:
            check(lambda: f(shape, dt), lambda: g(shape, dt), jit=dt is None)


def test_full() -> None:
    for shape in [3, (2, 3), ()]:
        for v in [
            2,
            2.5,
            True,
            np.float32(1.5),
            np.array([1, 2, 3], np.int8),
            np.array(7, np.int16),
        ]:
            for dt in [None, F32, I32, BOOL]:
                if raises_same(lambda: fnp.full(shape, v, dt), lambda: jnp.full(shape, v, dt)):
                    continue
                check(lambda: fnp.full(shape, v, dt), lambda: jnp.full(shape, v, dt), jit=False)
    check(lambda x: fnp.full((2, 3), x), lambda x: jnp.full((2, 3), x), np.float32(3.0))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    extra = (2.5,) if name == "full_like" else ()
    for kind in [F32, I8, BOOL, "py_float", "py_int", "weak_f32", F16]:
        x = operand(kind, (2, 3))
        for kw in [
            {},
            {"dtype": F32},
            {"dtype": I32},
            {"shape": (4,)},
            {"dtype": BOOL, "shape": (1, 2)},
        ]:
            check(lambda a: f(a, *extra, **kw), lambda a: g(a, *extra, **kw), x, jit=not kw)
    check(
        lambda a: fnp.full_like(a, np.array([1, 2, 3])),
        lambda a: jnp.full_like(a, np.array([1, 2, 3])),
        operand(F32, (2, 3)),
    )


@pytest.mark.parametrize(
    "n,m,k", [(3, None, 0), (3, 4, 1), (4, 3, -1), (2, 5, 3), (0, 2, 0), (3, 3, -5)]
)
def test_eye_identity_tri(n, m, k) -> None:
    for dt in [None, I32, BOOL, F16]:
        check(lambda: fnp.eye(n, m, k, dt), lambda: jnp.eye(n, m, k, dt))
        check(lambda: fnp.tri(n, m, k, dt), lambda: jnp.tri(n, m, k, dt), jit=False)
    check(lambda: fnp.identity(n), lambda: jnp.identity(n))
    check(lambda: fnp.identity(n, dtype=int), lambda: jnp.identity(n, dtype=int), jit=False)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing: str, sparse: bool) -> None:
    rng = np.random.default_rng(0)
    a, b, c = rand(rng, (3,), F32), rand(rng, (2,), I32), rand(rng, (4,), F32)
    check(
        lambda x, y: fnp.meshgrid(x, y, indexing=indexing, sparse=sparse),
        lambda x, y: jnp.meshgrid(x, y, indexing=indexing, sparse=sparse),
        a,
        b,
    )
    check(
        lambda x, y, z: fnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
        lambda x, y, z: jnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
        a,
        b,
        c,
    )
    check(
        lambda x: fnp.meshgrid(x, indexing=indexing),
        lambda x: jnp.meshgrid(x, indexing=indexing),
        a,
    )


@pytest.mark.parametrize("k", [0, 1, -1, 2, -3])
def test_diag_diagflat(k: int) -> None:
    rng = np.random.default_rng(1)
    v, m = rand(rng, (3,), I32), rand(rng, (3, 4), F32)
    m[0, 0] = np.nan  # the diagonal of a matrix must not be polluted by other elements
    check(lambda a: fnp.diag(a, k), lambda a: jnp.diag(a, k), v)
    check(lambda a: fnp.diag(a, k), lambda a: jnp.diag(a, k), m)
    check(lambda a: fnp.diagflat(a, k), lambda a: jnp.diagflat(a, k), m[:2, :2])
    check_abstract(lambda a: fnp.diag(a, k), lambda a: jnp.diag(a, k), operand("weak_f32", (3,)))


ASARRAY_INPUTS = [
    2,
    2.5,
    True,
    3,
    [1, 2],
    [1.0, 2],
    [[1, 2], [3, 4]],
    [True, False],
    (1, 2.5),
    np.float32(2),
    np.int8(3),
    np.array([1, 2], np.int64),
    np.array(2.5),
    np.array([[1.5]], np.float64),
    [],
    [np.float32(1), 2],
]


@pytest.mark.parametrize("x", ASARRAY_INPUTS, ids=lambda v: f"{type(v).__name__}:{v!r}"[:30])
def test_asarray_array(x) -> None:
    for f, g in [(fnp.asarray, jnp.asarray), (fnp.array, jnp.array), (fnp.copy, jnp.copy)]:
        if f is fnp.copy and isinstance(x, (list, tuple)):
            continue  # jnp.copy takes arrays only
        check(lambda: f(x), lambda: g(x))
    for dt in [F32, I32, BOOL, int, float]:
        check(lambda: fnp.asarray(x, dtype=dt), lambda: jnp.asarray(x, dtype=dt), jit=False)
    check(lambda: fnp.array(x, ndmin=3), lambda: jnp.array(x, ndmin=3), jit=False)


def test_asarray_of_tracers_and_jax_arrays() -> None:
    a = jnp.arange(3.0)
    assert fnp.asarray(a) is a
    got = fg.jit(lambda x: fnp.asarray([x[0], x[1] * 2, 1.0]))(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(np.asarray(got), [1.0, 4.0, 1.0])
    assert got.dtype == np.float32
    got = fg.jit(lambda x: fnp.array([[x, x], [x, 2 * x]]))(np.float32(2))
    assert got.shape == (2, 2) and got.dtype == np.float32
    assert isinstance(fnp.zeros(2), fnp.ndarray) and isinstance(a, fnp.ndarray)
    assert not isinstance(np.zeros(2), fnp.ndarray)
    assert fg.jit(lambda x: isinstance(x, fnp.ndarray) and x)(np.float32(1)) == 1


# ---------------------------------------------------------------------------
# index tricks (mgrid/ogrid/r_/c_), from* constructors, printing, shifts of traced values
# ---------------------------------------------------------------------------


def test_grids():
    jo.same_values(fnp.mgrid[0:3, 0:2], jnp.mgrid[0:3, 0:2])
    jo.same_values(fnp.mgrid[0:1:5j], jnp.mgrid[0:1:5j])
    jo.same_values(fnp.mgrid[0:1:0.25, 0:2], jnp.mgrid[0:1:0.25, 0:2])
    for a, b in zip(fnp.ogrid[0:3, 1:4:2], jnp.ogrid[0:3, 1:4:2]):
        jo.same_values(a, b)
    # corner cases: empty keys and open slices give an empty integer range, as jnp
    for key in [(), slice(None), slice(None, None, 2)]:
        jo.same_values(fnp.mgrid[key], jnp.mgrid[key])
        if key != ():
            jo.same_values(fnp.ogrid[key], jnp.ogrid[key])


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
        ("r", [1, 2, 3], [4, 5, 6]),
        ("c", [1, 2, 3], 4, slice(0, 2)),
        ("c", np.ones((2, 2)), np.zeros((1, 2))),
    ],
)
def test_r_(key):
    jo.same_values(fnp.r_[key], jnp.r_[key])


def test_c_():
    jo.same_values(fnp.c_[[1, 2], [3, 4]], jnp.c_[[1, 2], [3, 4]])
    jo.same_values(fnp.c_[np.ones((2, 2)), [3, 4]], jnp.c_[np.ones((2, 2)), [3, 4]])
    jo.same_values(fnp.c_["r", [1, 2], [3, 4]], jnp.c_["r", [1, 2], [3, 4]])


def test_printing_and_from_helpers():
    assert fnp.get_printoptions() == np.get_printoptions()
    with fnp.printoptions(precision=2):
        assert fnp.array_str(fnp.asarray([1.23456])) == "[1.23]"
    assert fnp.set_printoptions is np.set_printoptions
    assert fnp.array_repr(np.arange(2)) == np.array_repr(np.arange(2))
    jo.same_values(
        fnp.frombuffer(b"\x01\x02\x03", np.uint8, offset=1),
        jnp.frombuffer(b"\x01\x02\x03", np.uint8, offset=1),
    )
    jo.same_values(fnp.fromstring("1 2 3", sep=" "), jnp.fromstring("1 2 3", sep=" "))
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


# --------------------------------------------------------------------------- device=, errors

_DEVICE_CALLS = [
    lambda m, d: m.arange(5, dtype=np.float32, device=d),
    lambda m, d: m.eye(5, 6, device=d),
    lambda m, d: m.linspace(5, 6, 7, device=d),
    lambda m, d: m.linspace(5, 6, 7, retstep=True, device=d)[0],
    lambda m, d: m.array([1, 2, 3], device=d),
    lambda m, d: m.asarray([1.0, 2.0], device=d),
    lambda m, d: m.zeros((2, 3), device=d),
    lambda m, d: m.ones(3, np.int32, device=d),
    lambda m, d: m.empty(2, device=d),
    lambda m, d: m.full((2,), 7, device=d),
    lambda m, d: m.zeros_like(np.ones(3, np.int8), device=d),
    lambda m, d: m.ones_like(np.ones(3), device=d),
    lambda m, d: m.empty_like(np.ones(3), device=d),
    lambda m, d: m.full_like(np.ones(3), 2, device=d),
    lambda m, d: m.astype(np.ones(3), np.int32, device=d),
]


@pytest.mark.parametrize("call", _DEVICE_CALLS)
def test_creation_with_device(call) -> None:
    """``device=`` places the result as jax.numpy does (and is ignored under jit)."""
    import jax

    dev = jax.devices()[-1]
    want = call(jnp, dev)
    got = call(fnp, dev)
    jo.same_values(got, want)
    assert got.devices() == want.devices() == {dev}
    jo.same_values(fg.jit(lambda: call(fnp, dev))(), jax.jit(lambda: call(jnp, dev))())


def test_like_functions_take_duck_typed_templates() -> None:
    import jax

    spec = jax.ShapeDtypeStruct((2, 3), np.int16)
    for name in ("zeros_like", "ones_like", "empty_like"):
        jo.same_values(getattr(fnp, name)(spec), getattr(jnp, name)(spec))
    jo.same_values(fnp.full_like(spec, 3), jnp.full_like(spec, 3))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, tr: m.ones((-1, 1)),
        lambda m, tr: m.zeros(1.0),
        lambda m, tr: tr.jit(m.zeros)(2),
        lambda m, tr: m.ones(2, 3),
        lambda m, tr: m.zeros(2, 3),
        lambda m, tr: tr.jit(m.tri)(3, M=3, k=0),
        lambda m, tr: tr.jit(m.arange)(3),
        lambda m, tr: tr.jit(lambda s: m.arange(s, 3))(0),
        lambda m, tr: m.arange(1 + 2j, 5 + 3j),
        lambda m, tr: m.arange(0, 5, 1 + 1j),
    ],
)
def test_creation_errors_as_jax(call) -> None:
    """JAX's exception type, and the phrases its own tests match."""
    import jax

    with pytest.raises(Exception) as want:
        call(jnp, jax)
    with pytest.raises(Exception) as got:
        call(fnp, fg)
    assert isinstance(got.value, getattr(fg.errors, type(want.value).__name__, type(want.value)))
    w, g = str(want.value), str(got.value)
    for phrase in (
        "Shapes must be 1D sequences of concrete values of integer type",
        "If using `jit`, try using `static_argnums`",
        "Did you accidentally write `jax.numpy.",
        "It arose in the jnp.arange argument 'stop'",
        "It arose in the jnp.arange argument 'start'",
        "Passing complex start/stop/step to jnp.arange is no longer supported",
        "must have every element be nonnegative",
    ):
        assert (phrase in w) == (phrase in g), (phrase, g, w)


def test_arange_with_one_bound_and_a_step() -> None:
    jo.same_values(fnp.arange(5, step=2), jnp.arange(5, step=2))
    jo.same_values(fnp.arange(7, None, 3), jnp.arange(7, None, 3))


@pytest.mark.parametrize(
    "name",
    [
        "bool_",
        "uint8",
        "uint16",
        "uint32",
        "int8",
        "int16",
        "int32",
        "bfloat16",
        "float16",
        "float32",
        "complex64",
    ],
)
def test_scalar_types_are_callable_like_jax(name: str) -> None:
    """``fnp.int8(0)`` is a 0-d array of that dtype (not a NumPy scalar), traceable, and
    the type still works as a dtype, as ``jnp.int8``."""
    import jax

    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    for v in (0, 1, 2.5):
        got, want = ours(v), theirs(v)
        assert isinstance(got, jax.Array) and isinstance(want, jax.Array)
        jo.same_values(got, want)
    jo.same_values(fg.jit(lambda x: ours(x) * 2)(3), jax.jit(lambda x: theirs(x) * 2)(3))
    assert np.dtype(ours) == np.dtype(theirs)
    assert fnp.zeros(2, ours).dtype == jnp.zeros(2, theirs).dtype
    assert np.issubdtype(ours, np.number) == np.issubdtype(theirs, np.number)
    scalar = np.dtype(theirs).type(1)
    assert isinstance(scalar, ours) and isinstance(scalar, theirs)
    assert (ours == np.dtype(ours).type) == (theirs == np.dtype(theirs).type)
    assert hash(ours) == hash(np.dtype(ours).type)
    # equal to its dtype too (JAX's testDtypeWrappers filters on ``t == canonicalize(t)``),
    # not to its name or another dtype
    for other in (np.dtype(ours), name, np.dtype("int64"), np.dtype("float64"), None, 0):
        assert (ours == other) == (theirs == other), other
        assert (ours != other) == (theirs != other), other
    for t in ("int64", "float64", "complex128", "uint64"):
        assert (getattr(fnp, t) == fg.dtypes.canonicalize_dtype(getattr(fnp, t))) == (
            getattr(jnp, t) == jax.dtypes.canonicalize_dtype(getattr(jnp, t))
        )
