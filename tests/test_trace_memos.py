"""The trace's memoised avals and abstract evaluations (issue 33) give what the unmemoised
computations give: per x64 mode, per dtype object, and errors raised at every call."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import interp, ir


@pytest.mark.parametrize(
    "value",
    [1, 1.5, True, 2j, np.zeros((2, 3)), np.float32(3), np.zeros(2, ">f4"), jnp.ones(3)],
)
def test_aval_of_memo_matches_uncached(value):
    for x64 in (False, True):
        with jax.enable_x64(x64):
            assert ir.aval_of(value) == ir._aval_of(value)
            assert ir.aval_of(value) == ir._aval_of(value)  # the memoised answer


def test_aval_of_follows_x64():
    with jax.enable_x64(False):
        assert ir.aval_of(1.0).dtype == np.float32
        assert ir.aval_of(np.zeros(2)).dtype == np.float32
    with jax.enable_x64(True):
        assert ir.aval_of(1.0).dtype == np.float64
        assert ir.aval_of(np.zeros(2)).dtype == np.float64


def test_abstract_eval_memo_raises_every_time():
    def f(x):
        return fnp.sum(fg.lax.add(x, np.ones(3, np.int32)))

    for _ in range(2):
        with pytest.raises(TypeError, match="add"):
            fg.grad(f)(np.ones(3, np.float32))


def test_abstract_eval_memo_follows_x64_and_values():
    def f(x):
        return fnp.sum(fnp.sin(x) * 2.0)

    g32 = fg.grad(f)(np.ones(3, np.float32))
    with jax.enable_x64(True):
        g64 = fg.grad(f)(np.ones(3, np.float64))
    assert g32.dtype == np.float32 and g64.dtype == np.float64
    np.testing.assert_allclose(g32, 2 * np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(g64, 2 * np.cos(1.0), rtol=1e-12)
    assert interp._AEVAL  # the memo was used
