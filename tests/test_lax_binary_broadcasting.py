"""``funcgrad.lax``'s binary operations broadcast size-1 dimensions and ``lax.pow``
takes an integer exponent, as JAX 0.10's ``lax`` does (JAX is the oracle)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax import lax as jlax

import funcgrad as fg
from funcgrad import lax as flax

_SHAPES = [((3, 1), (1, 4)), ((3, 4), (1, 4)), ((1,), (5,)), ((2, 1, 3), (1, 4, 1)), ((2, 3), ())]
_OPS = ["add", "sub", "mul", "div", "max", "min", "atan2", "lt", "eq", "rem", "pow", "nextafter"]


@pytest.mark.parametrize(("xs", "ys"), _SHAPES)
@pytest.mark.parametrize("op", _OPS)
def test_size_one_dimensions_broadcast(op: str, xs: tuple, ys: tuple) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, xs).astype(np.float32)
    y = rng.uniform(0.5, 2.0, ys).astype(np.float32)
    want = getattr(jlax, op)(x, y)
    got = getattr(flax, op)(x, y)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = fg.jit(getattr(flax, op))(x, y)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_broadcasting_gradients_and_vmap() -> None:
    x = np.arange(3.0).reshape(3, 1) + 0.5
    y = np.arange(4.0).reshape(1, 4) + 1.5

    def loss(lax: Any) -> Any:
        return lambda a, b: lax.reduce_sum(lax.mul(lax.add(a, b), b), axes=(0, 1))

    for got, want in zip(
        fg.grad(loss(flax), argnums=(0, 1))(x, y), jax.grad(loss(jlax), argnums=(0, 1))(x, y)
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    xb = np.arange(12.0).reshape(2, 3, 2)
    yb = np.ones((2, 1, 2))
    np.testing.assert_allclose(fg.vmap(flax.add)(xb, yb), jax.vmap(jlax.add)(xb, yb))


@pytest.mark.parametrize(
    ("xs", "ys", "message"),
    [
        ((3, 4), (4,), "must have the same number of dimensions"),
        ((2, 3), (3, 1), "incompatible shapes for broadcasting"),
    ],
)
def test_shape_errors_are_jaxs(xs: tuple, ys: tuple, message: str) -> None:
    x, y = np.ones(xs, np.float32), np.ones(ys, np.float32)
    with pytest.raises(TypeError, match=message):
        jlax.add(x, y)
    with pytest.raises(TypeError, match=message):
        flax.add(x, y)


@pytest.mark.parametrize("ydt", [np.int8, np.int32, np.uint8, np.uint32, np.int64])
@pytest.mark.parametrize("xdt", [np.float32, np.float64, np.complex64])
def test_pow_integer_exponent(xdt: Any, ydt: Any) -> None:
    x = np.array([-2.0, -0.5, 0.0, 1.5, 3.0], xdt)
    y = np.array([3, 2, 0, 1, 2], ydt)
    want = jlax.pow(x, y)
    got = flax.pow(x, y)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(flax.pow(x, ydt(3)), jlax.pow(x, ydt(3)), rtol=1e-6)


@pytest.mark.parametrize("power", [0, 1, 2, 3, -2])
def test_pow_integer_exponent_derivatives(power: int) -> None:
    points = [0.0, 0.7, -1.3] if power >= 0 else [0.7, -1.3]
    y = np.int32(power)
    for p in points:
        want = jax.grad(lambda a: jlax.pow(a, y))(p)
        got = fg.grad(lambda a: flax.pow(a, y))(p)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"x={p}, y={power}")
        want = jax.jvp(lambda a: jlax.pow(a, y), (p,), (1.0,))
        got = fg.jvp(lambda a: flax.pow(a, y), (p,), (1.0,))
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    ("dt", "out"), [(np.int8, np.int32), (np.int16, np.int32), (np.float16, np.float32)]
)
def test_mul_out_dtype(dt: Any, out: Any) -> None:
    x = np.array([100, -7, 3], dt)
    y = np.array([3, 90, -2], dt)
    want = jlax.mul(x, y, out_dtype=out)
    got = flax.mul(x, y, out_dtype=out)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fg.jit(lambda a, b: flax.mul(a, b, out_dtype=out))(x, y), want)


_NARY = [("betainc", 3), ("igamma_grad_a", 2), ("polygamma", 2), ("zeta", 2), ("bessel_i0e", 1)]
_NARY_SHAPES = [[(3, 4), (3, 4), (1, 4)], [(1, 4), (3, 1), (3, 4)], [(2, 3), (), (2, 1)]]


@pytest.mark.parametrize("shapes", _NARY_SHAPES)
@pytest.mark.parametrize(("op", "arity"), _NARY)
def test_special_functions_broadcast_size_one(op: str, arity: int, shapes: list) -> None:
    """``lax.betainc``/``zeta``/... broadcast size-1 dimensions as JAX's (they refused)."""
    rng = np.random.default_rng(1)
    args = [rng.uniform(0.2, 0.9, s).astype(np.float32) for s in shapes[:arity]]
    if op == "polygamma":
        args[0] = np.round(args[0] * 3).astype(np.float32)
    if op == "zeta":
        args[0] = args[0] + 1.5
    want = getattr(jlax, op)(*args)
    got = getattr(flax, op)(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_special_functions_refuse_other_ranks() -> None:
    a = np.full((3, 4), 0.5, np.float32)
    with pytest.raises(TypeError, match="same number of dimensions"):
        jlax.betainc(a, a, a[0])
    with pytest.raises(TypeError, match="same number of dimensions"):
        flax.betainc(a, a, a[0])


@pytest.mark.parametrize(
    "shapes", [[(-1,)], ["hello"], [(1.5,), (1,)], [(2,), (3,)], [(2, 3), (4, 3, 3)]]
)
def test_broadcast_shapes_errors_as_jax(shapes: list) -> None:
    """``lax.broadcast_shapes``'s exception types and phrases are JAX's (a negative size
    is a TypeError naming it; it passed)."""
    with pytest.raises(Exception) as want:
        jlax.broadcast_shapes(*shapes)
    with pytest.raises(type(want.value)) as got:
        flax.broadcast_shapes(*shapes)
    assert str(got.value).startswith(str(want.value)), (str(got.value), str(want.value))


def test_broadcast_shapes_values_as_jax() -> None:
    for shapes in [[(2, 1), (3,)], [(), (4, 1)], [(0, 1), (1, 5)], [(2, 3), (4, 1, 3)]]:
        assert flax.broadcast_shapes(*shapes) == jlax.broadcast_shapes(*shapes)
