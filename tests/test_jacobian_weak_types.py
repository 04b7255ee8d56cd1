"""Jacobians keep weak types as JAX's: ``jacfwd``'s entries are typed like the function's
outputs, ``jacrev``'s like its inputs, so ``jacrev(f)(2.0)`` and ``hessian(f)(2.0)`` are
weakly typed as ``grad(f)(2.0)`` is (JAX 0.10 is the oracle: dtype, weak type, values)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _f(np_: Any) -> Any:
    return lambda x, y: np_.sin(x) ** 3 * y


_INPUTS = {
    "two_weak": (2.0, 1.5),
    "weak_and_strong": (2.0, np.float32(1.5)),
    "strong_array": (np.array([0.5, 1.0], np.float32), 2.0),
    "weak_out_of_strong_in": (np.float32(0.5), 3.0),
}
_TRANSFORMS = ["jacfwd", "jacrev", "hessian"]


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
@pytest.mark.parametrize("transform", _TRANSFORMS)
@pytest.mark.parametrize("inputs", list(_INPUTS))
def test_weak_types_as_jax(inputs: str, transform: str, argnums: Any) -> None:
    args = _INPUTS[inputs]
    want = getattr(jax, transform)(_f(jnp), argnums)(*args)
    got = getattr(fg, transform)(_f(fnp), argnums)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert (g.dtype, g.weak_type) == (w.dtype, w.weak_type)
        # (float32 inside: a float64 entry may carry float32 rounding either way)
        np.testing.assert_allclose(g, w, rtol=1e-6)
