"""``funcgrad.image`` against ``jax.image`` (JAX 0.10.2): ``resize`` for every method,
with and without antialiasing, up and down, over dtypes (the dtype too);
``scale_and_translate`` with traced scale and translation under ``jit``, its gradient
against central finite differences, negative ``spatial_dims``; and the errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import image as fi

METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]


@settings(max_examples=30, deadline=None)
@given(
    method=st.sampled_from(METHODS),
    antialias=st.booleans(),
    dtype=st.sampled_from(["float32", "int32", "complex64"]),
    sizes=st.lists(st.tuples(st.integers(1, 9), st.integers(0, 12)), min_size=1, max_size=3),
    seed=st.integers(0, 99),
)
def test_resize_matches_jax(method, antialias, dtype, sizes, seed):
    if method == "area" and dtype != "float32":
        dtype = "float32"
    shape = tuple(m for m, _ in sizes)
    target = tuple(n for _, n in sizes)
    x = np.random.default_rng(seed).uniform(-3, 3, shape)
    x = (x * 10 if dtype == "int32" else x).astype(dtype)
    got = np.asarray(fi.resize(x, target, method, antialias=antialias))
    want = np.asarray(jax.image.resize(x, target, method, antialias=antialias))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_pytorch_bicubic_golden():
    """PyTorch's bicubic (align_corners=False, no antialiasing) of a 2 x 5 ramp."""
    torch = pytest.importorskip("torch")
    x = np.arange(10, dtype=np.float32).reshape(2, 5) / 9.0
    got = np.asarray(fi.resize(x, (4, 10), "bicubic-pytorch", antialias=False))
    want = torch.nn.functional.interpolate(
        torch.tensor(x)[None, None], size=(4, 10), mode="bicubic", align_corners=False
    )[0, 0].numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area"])
def test_scale_and_translate_traced_under_jit_and_its_gradient(method, antialias):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(1, 6, 7, 1)).astype(np.float32)
    s = np.array([1.0, 0.35, 0.4, 1.0], np.float32)
    t = np.array([0.0, 0.2, 0.1, 0.0], np.float32)

    def ours(x, s, t):
        return fi.scale_and_translate(x, (1, 3, 3, 1), (0, 1, 2, 3), s, t, method, antialias)

    got = fg.jit(ours)(x, s, t)
    want = jax.image.scale_and_translate(x, (1, 3, 3, 1), (0, 1, 2, 3), s, t, method, antialias)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)
    # d/d translation (smooth at this point) against central differences in float64
    r = rng.uniform(size=(1, 3, 3, 1))
    g = np.asarray(fg.grad(lambda t: (ours(x, s, t) * r).sum())(t))
    x64 = x.astype(np.float64)
    for k in (1, 2):
        e = np.zeros(4)
        e[k] = 1e-4
        hi = np.asarray(ours(x64, s.astype(np.float64), t + e), np.float64)
        lo = np.asarray(ours(x64, s.astype(np.float64), t - e), np.float64)
        np.testing.assert_allclose(g[k], ((hi - lo) * r).sum() / 2e-4, rtol=2e-2, atol=2e-3)


def test_scale_and_translate_negative_dims_and_errors():
    data = np.full((3, 3), 0.5, np.float32)
    a = fi.scale_and_translate(data, (5, 5), (-2, -1), np.ones(2), np.zeros(2), "linear")
    b = jax.image.scale_and_translate(data, (5, 5), (0, 1), jnp.ones(2), jnp.zeros(2), "linear")
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-6)
    with pytest.raises(ValueError, match="Nearest neighbor"):
        fi.scale_and_translate(data, (5, 5), (0, 1), np.ones(2), np.zeros(2), "nearest")
    with pytest.raises(ValueError, match="Unknown resize method"):
        fi.resize(data, (4, 4), "bogus")
    with pytest.raises(ValueError, match="shape must have length"):
        fi.resize(data, (4,), "linear")
    with pytest.raises(TypeError):
        fi.resize(data, [10.5, 17], "bicubic")
    assert fi.resize(data, jnp.array((10, 17)), "nearest").shape == (10, 17)
    assert fi.ResizeMethod.from_string("bilinear") is fi.ResizeMethod.LINEAR
