"""``funcgrad.ops.segment_{sum,prod,max,min}`` against JAX's ``jax.ops``: values and
dtypes (float, int, bool), empty segments, ids out of range (dropped, or clipped with
``mode``), default ``num_segments``, ``bucket_size``, several leading axes of ids,
derivatives, ``jit`` and ``vmap``, and the refusal of lists."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import ops as fops

KINDS = ["sum", "prod", "max", "min"]
IDS = np.array([0, 2, 2, -1, 5, 1, 1, 0, 7, 2], np.int32)


def _data(dtype: str) -> np.ndarray:
    rng = np.random.RandomState(0)
    if dtype == "bool":
        return rng.randn(10, 3) > 0
    if dtype == "int32":
        return rng.randint(-4, 5, (10, 3)).astype(np.int32)
    return rng.randn(10, 3).astype(dtype)


def _same(ours: object, theirs: object) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("num_segments", [None, 4, 9])
def test_values_and_dtypes(kind: str, dtype: str, num_segments: int | None) -> None:
    if dtype == "bool" and kind in ("sum", "prod"):
        pytest.skip("JAX's scatter_add/mul refuse booleans")
    data = _data(dtype)
    theirs = getattr(jax.ops, f"segment_{kind}")(data, IDS, num_segments)
    ours = getattr(fops, f"segment_{kind}")(data, IDS, num_segments)
    _same(ours, theirs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["clip", "drop", "fill"])
def test_modes(kind: str, mode: str) -> None:
    data = _data("float32")
    theirs = getattr(jax.ops, f"segment_{kind}")(data, IDS, 4, mode=mode)
    ours = getattr(fops, f"segment_{kind}")(data, IDS, 4, mode=mode)
    _same(ours, theirs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bucket_size", [1, 3, 4, 20])
def test_bucket_size(kind: str, bucket_size: int) -> None:
    data = _data("float32")
    theirs = getattr(jax.ops, f"segment_{kind}")(data, IDS, 8, bucket_size=bucket_size)
    ours = getattr(fops, f"segment_{kind}")(data, IDS, 8, bucket_size=bucket_size)
    _same(ours, theirs)


def test_sorted_and_unique_hints() -> None:
    data = _data("float32")
    ids = np.sort(np.abs(IDS) % 4)
    theirs = jax.ops.segment_sum(data, ids, 4, indices_are_sorted=True)
    ours = fops.segment_sum(data, ids, 4, indices_are_sorted=True)
    _same(ours, theirs)
    uniq = np.array([3, 0, 2], np.int32)
    _same(
        fops.segment_max(data[:3, 0], uniq, 5, unique_indices=True),
        jax.ops.segment_max(data[:3, 0], uniq, 5, unique_indices=True),
    )


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_gradients(kind: str) -> None:
    data = _data("float32")

    def loss(ops: object, np_: object) -> object:
        return lambda d: np_.sum(np_.sin(getattr(ops, f"segment_{kind}")(d, IDS, 6)) * 1.5)

    theirs = jax.grad(loss(jax.ops, jnp))(data)
    ours = fg.grad(loss(fops, fnp))(data)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)


def test_prod_gradient_with_repeated_ids_refused() -> None:
    # neither has a derivative of scatter_mul at repeated indices
    data = _data("float32")
    with pytest.raises(NotImplementedError):
        jax.grad(lambda d: jnp.sum(jax.ops.segment_prod(d, IDS, 6)))(data)
    with pytest.raises(NotImplementedError):
        fg.grad(lambda d: fnp.sum(fops.segment_prod(d, IDS, 6)))(data)


def test_jit_and_vmap() -> None:
    data = np.stack([_data("float32"), _data("float32") * 2])

    def f(ops: object) -> object:
        return lambda d, i: ops.segment_sum(d, i, 8) + ops.segment_max(d, i, 8)

    theirs = jax.jit(jax.vmap(f(jax.ops), in_axes=(0, None)))(data, IDS)
    ours = fg.jit(fg.vmap(f(fops), in_axes=(0, None)))(data, IDS)
    _same(ours, theirs)


def test_default_num_segments_needs_concrete_ids() -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jax.ops.segment_sum)(_data("float32"), IDS)
    with pytest.raises(fg.ConcretizationError):
        fg.jit(fops.segment_sum)(_data("float32"), IDS)


def test_errors_like_jax() -> None:
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jax.ops.segment_sum([1.0, 2.0], IDS[:2])
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        fops.segment_sum([1.0, 2.0], IDS[:2])
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        jax.ops.segment_sum(_data("float32"), IDS, -1)
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        fops.segment_sum(_data("float32"), IDS, -1)
    with pytest.raises(ValueError):
        jax.ops.segment_sum(np.ones((5, 2, 3)), np.zeros((5, 2), np.int32), 4)
    with pytest.raises(ValueError, match="one-dimensional"):
        fops.segment_sum(np.ones((5, 2, 3)), np.zeros((5, 2), np.int32), 4)


def test_namespace() -> None:
    assert fg.ops is fops
    assert sorted(fops.__all__) == sorted(n for n in dir(jax.ops) if not n.startswith("_"))
