"""``associative_scan`` of a non-callable and ``platform_dependent`` with no branch for
the platform: JAX's exception types and the words its tests match, for funcgrad and JAX."""

import jax
import pytest

import funcgrad as fg


@pytest.mark.parametrize("lax", [fg.lax, jax.lax])
def test_associative_scan_not_callable(lax):
    with pytest.raises(TypeError, match=r"lax.associative_scan.*callable"):
        lax.associative_scan(42, 0)


@pytest.mark.parametrize("lax", [fg.lax, jax.lax])
def test_platform_dependent_without_branch(lax):
    with pytest.raises(NotImplementedError, match=r"translation rule .* not found for platform"):
        lax.platform_dependent(3.0, tpu=lambda x: x + 2.0)


def test_cond_and_switch_take_jax_s_operand_keyword():
    for lib in (jax, fg):
        got = lib.lax.cond(True, lambda x: x + 1, lambda x: x, operand=1.0)
        assert float(got) == 2.0
        got = lib.lax.switch(1, [lambda x: x, lambda x: 3 * x], operand=2.0)
        assert float(got) == 6.0
        # operand=None is an operand (the branches take one argument)
        f = lib.jit(lambda x: lib.lax.cond(x == 1, lambda _: 1.0, lambda _: 2.0, operand=None))
        assert float(f(2)) == 2.0
        with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional"):
            lib.lax.cond(True, lambda x: x, lambda x: x, 2.0, operand=1.0)
