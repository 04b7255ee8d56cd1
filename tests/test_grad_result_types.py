"""Gradients come back typed as JAX types them: ``jax.Array``s (constant gradients too),
weakly typed for Python-scalar inputs, with the input's dtype."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg

CASES = {
    "two_scalars_constant_grad": (lambda x, y: x * 2 + y, (1.0, 2.0), (0, 1)),
    "constant_function": (lambda x: 3.0, (1.0,), 0),
    "f32_input": (lambda x: x * x, (np.float32(1.5),), 0),
    "dict_unused_leaf": (lambda d: d["a"] * 2, ({"a": 1.0, "b": 2.0},), 0),
    "tuple_mixed": (lambda t: t[0] * t[1], ((np.float32(2.0), 3.0),), 0),
    "array_input": (lambda x: (x**2).sum(), (np.arange(3.0, dtype=np.float32),), 0),
}


def _describe(tree):
    return jax.tree_util.tree_map(
        lambda a: (type(a).__name__ == "ArrayImpl", a.dtype, a.weak_type, np.asarray(a).tolist()),
        tree,
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_grad_types_match_jax(name, wrap):
    f, args, argnums = CASES[name]
    got = fg.grad(f, argnums=argnums)
    want = jax.grad(f, argnums=argnums)
    if wrap == "jit":
        got, want = fg.jit(got), jax.jit(want)
    assert _describe(got(*args)) == _describe(want(*args))
