"""``check_grads`` without tolerances uses JAX's per-dtype gradient tolerances: low
precision values pass where JAX's own ``check_grads`` passes, and a wrong rule fails."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads as jax_check_grads

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads


@pytest.mark.parametrize("dtype", [jnp.bfloat16, np.float16])
def test_low_precision_select(dtype):
    rng = np.random.RandomState(0)
    pred = rng.randn(2, 3) > 0
    a, b = (3 * rng.randn(2, 3)).astype(dtype), (3 * rng.randn(2, 3)).astype(dtype)
    jax_check_grads(lambda x, y: jax.lax.select(pred, x, y), (a, b), 2, ["fwd", "rev"], eps=1.0)
    check_grads(lambda x, y: fg.lax.select(pred, x, y), (a, b), 2, ["fwd", "rev"], eps=1.0)


def test_wrong_rule_still_fails():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError):
        check_grads(f, (np.float32(0.3),), 1, ["fwd"])
