"""``funcgrad.lax.platform_dependent`` picks the branch JAX's picks on this platform."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp


def _branches(np_):  # type: ignore[no-untyped-def]
    return {
        "cpu": lambda x, y: np_.sin(x) * y,
        "cuda": lambda x, y: x + y,
        "tpu": lambda x, y: x - y,
        "default": lambda x, y: x * 0.0,
    }


@pytest.mark.parametrize("drop", [(), ("cpu",), ("cpu", "cuda"), ("cuda", "tpu")])
def test_platform_dependent_matches_jax(drop: tuple[str, ...]) -> None:
    x, y = np.float32(0.7), np.float32(2.0)
    jb = {k: v for k, v in _branches(jax.numpy).items() if k not in drop}
    fb = {k: v for k, v in _branches(fnp).items() if k not in drop}
    want = jax.lax.platform_dependent(x, y, **jb)
    np.testing.assert_allclose(flax.platform_dependent(x, y, **fb), want, rtol=1e-6)
    np.testing.assert_allclose(
        fg.jit(lambda a, b: flax.platform_dependent(a, b, **fb))(x, y), want, rtol=1e-6
    )
    want_g = jax.grad(lambda a: jax.lax.platform_dependent(a, y, **jb))(x)
    got_g = fg.grad(lambda a: flax.platform_dependent(a, y, **fb))(x)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-6)


def test_platform_dependent_without_a_branch_raises() -> None:
    with pytest.raises(NotImplementedError, match="platform_dependent"):
        flax.platform_dependent(1.0, tpu=lambda x: x)
