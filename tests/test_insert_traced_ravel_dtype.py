"""``insert`` at traced indices and ``ravel_multi_index``'s ``mode="ignore"``/dtypes,
against JAX (and NumPy's values)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.parametrize("shape, axis", [((5,), None), ((3, 4), 0), ((3, 4), -1), ((2, 3, 2), 1)])
@pytest.mark.parametrize("obj", [np.int32(-2), np.int32(0), np.int32(3), np.array([0, 3, 1, -1])])
@pytest.mark.parametrize("values_shape", [(), (2,)])
def test_insert_traced_index(shape, axis, obj, values_shape):
    rng = np.random.default_rng(0)
    a = rng.normal(size=shape).astype(np.float32)
    v = rng.normal(size=values_shape).astype(np.float32)
    try:
        want = jax.jit(lambda a, i, v: jnp.insert(a, i, v, axis=axis))(a, obj, v)
    except (ValueError, TypeError):
        pytest.skip("JAX refuses this combination too")
    got = fg.jit(lambda a, i, v: fnp.insert(a, i, v, axis=axis))(a, obj, v)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.insert(a, obj, v, axis=axis))


def test_insert_traced_index_gradient():
    a = np.arange(4.0, dtype=np.float32)

    def f(lib, np_):
        return lambda a, v: np_.sum(np_.insert(a, np.int32(2), v) * np_.arange(5.0))

    got = fg.grad(f(fg, fnp), argnums=(0, 1))(a, np.float32(3.0))
    want = jax.grad(f(jax, jnp), argnums=(0, 1))(a, np.float32(3.0))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("in_dtype", [np.int8, np.uint8, np.int32])
@pytest.mark.parametrize("out_dtype", [None, np.int16, np.int32])
@pytest.mark.parametrize("mode", ["ignore", "clip", "wrap"])
def test_ravel_multi_index_dtype_and_ignore(in_dtype, out_dtype, mode):
    def run(np_, jit):
        idx = np_.array([0, 1], dtype=in_dtype)
        f = lambda i: np_.ravel_multi_index((i, i), dims=(2, 3), mode=mode, dtype=out_dtype)
        return jit(f)(idx)

    got, want = run(fnp, fg.jit), run(jnp, jax.jit)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type


@pytest.mark.parametrize("shape", [(2, 3), (5,), (2, 3, 4), (1, 0, 2), 7])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8])
def test_unravel_index_traced_shape(shape, dtype):
    size = int(np.prod(shape))
    idx = np.arange(-2 * size - 2, 2 * size + 2)
    if dtype == np.uint8:
        idx = idx[idx >= 0]
    idx = np.clip(idx, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
    want = jnp.unravel_index(idx, shape)
    for got in (fnp.unravel_index(idx, shape), fg.jit(fnp.unravel_index)(idx, shape)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
