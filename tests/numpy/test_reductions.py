"""Reductions against jax.numpy: axis (int, negative, tuple, None), keepdims, dtype=, where=."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest
from fnp_testutil import (
    BF16,
    BOOL,
    F16,
    F32,
    F64,
    I8,
    I32,
    I64,
    U8,
    check,
    check_abstract,
    check_batch,
    operand,
    raises_same,
    rand,
    seeds,
)
from hypothesis import given
from hypothesis import strategies as st

import funcgrad.numpy as fnp

AXIS_REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "max",
    "min",
    "amax",
    "amin",
    "ptp",
    "any",
    "all",
    "count_nonzero",
    "nansum",
    "nanmean",
]
ARG_REDUCTIONS = ["argmax", "argmin"]
CUMULATIVE = ["cumsum", "cumprod"]
AXES = [None, 1, -3, (2, 0), (-1, 1), (), 3, (0, 0)]
KINDS = [F32, F16, BF16, I8, U8, I32, BOOL, "py_int", "py_float", "weak_f32"]


def _kw(name, axis, keepdims):
    kw = {"axis": axis}
    if keepdims:
        kw["keepdims"] = True
    return kw


@pytest.mark.parametrize("name", AXIS_REDUCTIONS + ARG_REDUCTIONS + CUMULATIVE + ["median"])
def test_reduction_dtypes(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    for kind in KINDS:
        x = operand(kind, (2, 3, 4))
        for axis in AXES:
            if name in ARG_REDUCTIONS + CUMULATIVE and isinstance(axis, tuple):
                continue
            for keepdims in (False, True) if name not in CUMULATIVE else (False,):
                kw = _kw(name, axis, keepdims)
                check_abstract(
                    lambda v, kw=kw: f(v, **kw),
                    lambda v, kw=kw: g(v, **kw),
                    x,
                    what=f"{name}({kind}, {kw})",
                )


@pytest.mark.parametrize(
    "name", ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "nansum", "nanmean"]
)
def test_reduction_dtype_argument(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    for kind, dt in itertools.product(
        [F32, I8, BOOL, F16, U8], [None, F32, F64, I32, I64, F16, int, float]
    ):
        x = operand(kind, (2, 3))
        if name in ("var", "std", "mean", "nanmean") and dt in (I32, I64, int):
            continue  # integer means are not meaningful (jnp warns)
        check_abstract(
            lambda v: f(v, axis=0, dtype=dt),
            lambda v: g(v, axis=0, dtype=dt),
            x,
            what=f"{name}({kind}, dtype={dt})",
        )


@given(
    seed=seeds,
    params=st.sampled_from(
        [
            (None, False, F32),
            (1, True, F32),
            (-1, False, F32),
            ((0, 2), True, F32),
            (None, False, I32),
            ((0, 2), False, I32),
        ]
    ),
)
def test_reduction_values(seed: int, params) -> None:
    axis, keepdims, kind = params
    """Every reduction on random values for one (axis, keepdims, dtype), batched."""
    rng = np.random.default_rng(seed)
    cases = []
    for name in AXIS_REDUCTIONS + ARG_REDUCTIONS + CUMULATIVE + ["median"]:
        ax = (
            0
            if name in ARG_REDUCTIONS + CUMULATIVE + ["median"] and isinstance(axis, tuple)
            else axis
        )
        x = rand(rng, (2, 3, 4), kind, -2, 2)
        if name in ("nansum", "nanmean") and kind == F32:
            x.flat[rng.integers(x.size, size=3)] = np.nan
        if name in ("prod", "cumprod") and kind == F32:
            x = rand(rng, (2, 3, 4), kind, 0.5, 1.5)
        kw = {"axis": ax} if name in CUMULATIVE else _kw(name, ax, keepdims)
        f, g = getattr(fnp, name), getattr(jnp, name)
        cases.append(
            (name, lambda v, f=f, kw=kw: f(v, **kw), lambda v, g=g, kw=kw: g(v, **kw), (x,))
        )
    check_batch(cases, key=(axis, keepdims, kind), scale=10.0)


def test_reductions_on_scalars_and_empty() -> None:
    for name in ["sum", "prod", "mean", "max", "min", "any", "all", "argmax", "cumsum", "var"]:
        f, g = getattr(fnp, name), getattr(jnp, name)
        for v in [2.5, 3, True, np.float16(1.5)]:
            check(f, g, v, jit=False)
        e = np.zeros((0, 3), np.float32)
        for kw in [{}, {"axis": 0}, {"axis": 1}]:
            if raises_same(lambda: f(e, **kw), lambda: g(e, **kw)):
                continue
            check(lambda v: f(v, **kw), lambda v: g(v, **kw), e, jit=False)


def test_where_initial_ddof() -> None:
    rng = np.random.default_rng(0)
    x = rand(rng, (3, 4), F32)
    m = rng.random((3, 4)) < 0.6
    m[:, 0] = True
    for name in ["sum", "prod", "mean", "any", "all"]:
        f, g = getattr(fnp, name), getattr(jnp, name)
        check(lambda v: f(v, axis=1, where=m), lambda v: g(v, axis=1, where=m), x, jit=False)
    for name in ["max", "min"]:
        f, g = getattr(fnp, name), getattr(jnp, name)
        check(
            lambda v: f(v, axis=0, where=m, initial=0.5),
            lambda v: g(v, axis=0, where=m, initial=0.5),
            x,
            jit=False,
        )
        check(lambda v: f(v, initial=5.0), lambda v: g(v, initial=5.0), x, jit=False)
    check(lambda v: fnp.sum(v, initial=2.0), lambda v: jnp.sum(v, initial=2.0), x, jit=False)
    check(lambda v: fnp.var(v, axis=0, ddof=1), lambda v: jnp.var(v, axis=0, ddof=1), x, jit=False)
    check(
        lambda v: fnp.std(v, ddof=2, keepdims=True), lambda v: jnp.std(v, ddof=2, keepdims=True), x
    )
    check(
        lambda v: fnp.var(v, axis=1, where=m), lambda v: jnp.var(v, axis=1, where=m), x, jit=False
    )
    with pytest.raises(ValueError, match="initial"):
        fnp.max(x, where=m)


def test_average_and_cumulative() -> None:
    rng = np.random.default_rng(1)
    x = rand(rng, (3, 4), F32)
    w = rand(rng, (3, 4), F32, 0.1, 1.0)
    w1 = rand(rng, (4,), I32, 1, 3)
    check(fnp.average, jnp.average, x, jit=False)
    check(
        lambda a: fnp.average(a, axis=1, weights=w),
        lambda a: jnp.average(a, axis=1, weights=w),
        x,
        jit=False,
    )
    check(
        lambda a: fnp.average(a, axis=1, weights=w1, returned=True),
        lambda a: jnp.average(a, axis=1, weights=w1, returned=True),
        x,
        jit=False,
    )
    check(
        lambda a: fnp.average(a, axis=0, returned=True, keepdims=True),
        lambda a: jnp.average(a, axis=0, returned=True, keepdims=True),
        x,
        jit=False,
    )
    check(
        lambda a: fnp.average(a, weights=w),
        lambda a: jnp.average(a, weights=w),
        x.astype(np.int32),
        jit=False,
    )
    for name in ["cumulative_sum", "cumulative_prod"]:
        f, g = getattr(fnp, name), getattr(jnp, name)
        for kw in [{"axis": 1}, {"axis": 0, "include_initial": True}, {"axis": -1, "dtype": F64}]:
            check(lambda a: f(a, **kw), lambda a: g(a, **kw), x, jit=False)
        check(
            lambda a: f(a, include_initial=True),
            lambda a: g(a, include_initial=True),
            x[0].astype(np.int8),
            jit=False,
        )
        check(f, g, np.array([True, False, True]), jit=False)
    check(
        lambda a: fnp.median(a, axis=1, keepdims=True),
        lambda a: jnp.median(a, axis=1, keepdims=True),
        x,
        jit=False,
    )
    check(fnp.median, jnp.median, x[:, :3], jit=False)


def test_reduction_methods_on_tracers() -> None:
    import funcgrad as fg

    x = rand(np.random.default_rng(2), (2, 3), F32)

    def f(a):
        return [
            a.sum(),
            a.sum(axis=0),
            a.mean(1, keepdims=True),
            a.max(),
            a.min(axis=-1),
            a.prod(),
            a.var(),
            a.std(ddof=1),
            a.argmax(),
            a.argmin(axis=1),
            a.cumsum(1),
            a.cumprod(),
            a.any(),
            (a > 0).all(axis=0),
            a.ptp(),
        ]

    want = f(jnp.asarray(x))
    got = fg.jit(f)(x)
    from fnp_testutil import assert_same

    assert_same(got, want, what="methods")
