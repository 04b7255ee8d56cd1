"""``funcgrad.debug_nans`` (``jax.debug_nans``) and the ``jax_debug_nans`` option: the
same flag as ``funcgrad.debug.nans``; a NaN literal output of a jitted function raises
as JAX's (checked against JAX 0.10.2)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _nan_literal(m):
    def f(x):
        return m.nan, x + 2

    return f


def test_nan_literal_output_raises_as_jax():
    msg = "the de-optimized function did not .*literal"
    with jax.debug_nans(True), pytest.raises(FloatingPointError, match=msg):
        jax.jit(_nan_literal(jnp))(3.0)
    with fg.debug_nans(True), pytest.raises(FloatingPointError, match=msg):
        fg.jit(_nan_literal(fnp))(3.0)
    out = fg.jit(_nan_literal(fnp))(3.0)  # (off: returned)
    assert np.isnan(np.asarray(out[0]))


def test_context_manager_and_decorator_set_one_flag():
    assert fg.config.read("debug_nans") is False
    with fg.debug_nans(True):
        assert fg.config.read("debug_nans")
        with fg.debug_nans(False):
            assert not fg.config.read("debug_nans")
        assert fg.config.read("debug_nans")
    assert fg.config.read("debug_nans") is False

    @fg.debug_nans(True)
    def f():
        return fg.config.read("debug_nans")

    assert f() is True and fg.config.read("debug_nans") is False


def test_jax_option_name_sets_both_checks():
    f = fg.jit(lambda x: 0.0 / x)
    try:
        fg.config.update("jax_debug_nans", True)
        assert fg.config.read("debug_nans") is True
        with pytest.raises(FloatingPointError, match="nan"):  # (JAX's check is first here)
            f(fnp.array(0.0))
        assert jax.config.jax_debug_nans is True  # (JAX's own check, for jax.Array's operators)
        with pytest.raises(FloatingPointError, match="log"):  # an eager funcgrad operation
            fnp.log(fnp.array(-1.0))
    finally:
        fg.config.update("jax_debug_nans", False)
    assert fg.config.read("debug_nans") is False
    assert np.isnan(np.asarray(f(fnp.array(0.0))))  # off again: no check
    assert jax.config.jax_debug_nans is False


def test_jax_context_manager_sets_jaxs_flag_and_funcgrads_option_does_not():
    with fg.debug_nans(True):
        assert jax.config.jax_debug_nans is True
        with fg.debug_nans(False):  # (a decorated test inside a class that sets it)
            assert jax.config.jax_debug_nans is False and not fg.config.read("debug_nans")
    assert jax.config.jax_debug_nans is False
    with fg.debug.nans(True):
        assert jax.config.jax_debug_nans is False


def test_nan_from_the_inputs_is_not_a_literal():
    with fg.debug.nans(True):  # (funcgrad's check alone: JAX's raises for any NaN made)
        out = fg.jit(lambda x: x + 1)(np.float32(np.nan))
    assert np.isnan(np.asarray(out))
