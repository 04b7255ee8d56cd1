"""cond/switch branches whose outputs differ in structure or type: JAX's message, word for
word (funcgrad adds the user's line after it)."""

import jax
import jax.numpy as jnp
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _message(call):
    with pytest.raises(TypeError) as info:
        call()
    return str(info.value)


CASES = {
    "cond structure": lambda lax, np: lax.cond(
        True, lambda t: dict(a=2.0), lambda f: dict(a=(3.0, 3.0)), 1.0
    ),
    "switch structure": lambda lax, np: lax.switch(
        1, [lambda _: dict(a=2.0), lambda _: dict(a=(3.0, 3.0))], 1.0
    ),
    "switch root type": lambda lax, np: lax.switch(
        1, [lambda _: dict(a=2.0), lambda _: dict(a=2.0), lambda _: [3.0]], 1.0
    ),
    "cond shapes": lambda lax, np: lax.cond(
        True, lambda t: np.ones((1,), np.float32), lambda f: np.float32(1.0), 1.0
    ),
    "switch shapes at a path": lambda lax, np: lax.switch(
        1, [lambda _: dict(a=np.ones((1,), np.float32)), lambda _: dict(a=np.float32(1.0))], 1.0
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_message_is_jaxs(case):
    ours = _message(lambda: CASES[case](fg.lax, fnp))
    theirs = _message(lambda: CASES[case](jax.lax, jnp))
    assert ours.startswith(theirs), (ours, theirs)
    assert "in your code at" in ours[len(theirs) :]
