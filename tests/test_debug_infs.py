"""The ``jax_debug_infs`` option (JAX's: raise where an Inf is made, NaNs let through):
funcgrad's check for Inf alone, beside JAX's own; checked against JAX 0.10.2."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.fixture
def infs_only():
    """funcgrad's check for Inf alone (JAX's own check off, so funcgrad's is the one seen)."""
    fg.config.update("jax_debug_infs", True)
    jax.config.update("jax_debug_infs", False)
    try:
        yield
    finally:
        fg.config.update("jax_debug_infs", False)


def _cond_literal(m, lax):
    return lambda x: lax.cond(x == 1, lambda _: m.inf, lambda _: 2.0, None)


def test_option_sets_jaxs_flag_and_funcgrads_check():
    assert fg.config.read("jax_debug_infs") is False
    try:
        fg.config.update("jax_debug_infs", True)
        assert jax.config.jax_debug_infs is True
        assert fg.config.read("debug_nans") is False  # (a separate option)
    finally:
        fg.config.update("jax_debug_infs", False)
    assert jax.config.jax_debug_infs is False


def test_inf_from_a_cond_literal_names_the_cond_as_jax(infs_only):
    msg = r"invalid value \(inf\) encountered in .*cond.*"
    with jax.debug_infs(True), pytest.raises(FloatingPointError, match=msg):
        jax.jit(_cond_literal(np, jax.lax))(1)
    f = fg.jit(_cond_literal(np, fg.lax))
    assert float(f(2)) == 2.0
    with pytest.raises(FloatingPointError, match=msg):
        f(1)


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_inf_raises_and_nan_does_not(infs_only, mode):
    wrap = fg.jit if mode == "jit" else (lambda f: f)
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
        wrap(lambda x: fnp.divide(1.0, x))(fnp.array(0.0))
    with pytest.raises(FloatingPointError, match=r"\(-inf\) encountered in log"):
        wrap(fnp.log)(fnp.array(0.0))
    assert np.isnan(np.asarray(wrap(lambda x: fnp.divide(0.0, x))(fnp.array(0.0))))
    assert np.isnan(np.asarray(wrap(fnp.log)(fnp.array(-1.0))))
    # JAX's option does the same: a NaN passes, an Inf raises
    with jax.debug_infs(True):
        assert np.isnan(np.asarray(jax.jit(lambda x: 0.0 / x)(jnp.array(0.0))))
        with pytest.raises(FloatingPointError):
            jax.jit(lambda x: 1.0 / x)(jnp.array(0.0))


def test_debug_nans_still_checks_both_while_infs_is_on(infs_only):
    with fg.debug.nans(True), pytest.raises(FloatingPointError, match=r"\(nan\)"):
        fg.jit(lambda x: 0.0 / x)(fnp.array(0.0))
    assert np.isnan(np.asarray(fg.jit(lambda x: 0.0 / x)(fnp.array(0.0))))  # (infs alone)


def test_off_again_returns_inf():
    f = fg.jit(_cond_literal(np, fg.lax))
    assert np.isinf(np.asarray(f(1)))


def test_debug_infs_block_and_decorator_as_jax():
    f = fg.jit(_cond_literal(np, fg.lax))
    with fg.debug_infs(True):
        assert fg.config.read("jax_debug_infs") and jax.config.jax_debug_infs
        # (JAX's own check on the executable may answer first, in its words: "inf")
        with pytest.raises(FloatingPointError, match="inf"):
            f(1)
        assert np.isnan(np.asarray(fg.jit(lambda x: fnp.divide(0.0, x))(fnp.array(0.0))))
    assert not fg.config.read("jax_debug_infs") and not jax.config.jax_debug_infs

    @fg.debug_infs(True)
    def g():
        return fg.config.read("jax_debug_infs")

    assert g() is True and fg.config.read("jax_debug_infs") is False
