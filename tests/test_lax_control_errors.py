"""``associative_scan`` of a non-callable and ``platform_dependent`` with no branch for
the platform, a scan body that returns no pair: JAX's exception types and the words its
tests match, for funcgrad and JAX."""

import jax
import numpy as np
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


BODIES = {
    "numpy_scalar": lambda c, x: np.float32(0.0),
    "python_float": lambda c, x: 1.0,
    "array": lambda c, x: c * np.ones(3, np.float32),
    "triple": lambda c, x: (1.0, 2.0, 3.0),
    "one_item_list": lambda c, x: [c],
    "triple_with_none": lambda c, x: (c, x, None),
}


@pytest.mark.parametrize("body", BODIES, ids=list(BODIES))
def test_scan_body_output_not_a_pair(body):
    """The types of what the body returned, as JAX prints them (``~float32[]`` for a weak
    type, ``ShapedArray(...)`` inside a container)."""
    msgs = []
    for lib in (jax, fg):
        with pytest.raises(TypeError) as info:
            lib.lax.scan(BODIES[body], 0.0, np.arange(5.0, dtype=np.float32))
        msgs.append(str(info.value).split("\n")[0].split("  (in your code")[0])
    assert msgs[0].startswith("scan body output must be a pair, got ")
    assert msgs[1] == msgs[0]
