"""``fg.tree`` (``jax.tree``'s short names) and ``fg.tree_util`` are there after a plain
``import funcgrad``, as ``jax.tree`` is after ``import jax``, and agree with JAX's."""

from __future__ import annotations

import subprocess
import sys

import jax
import numpy as np

import funcgrad as fg
import funcgrad.scipy.stats as fst


def test_fresh_import_has_tree_and_tree_util():
    code = (
        "import funcgrad as fg\n"
        "print(fg.tree.map(lambda x: 2 * x, {'a': 1, 'b': (2, 3)}))\n"
        "print(fg.tree_util.tree_leaves({'a': 1, 'b': (2, 3)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == str(jax.tree.map(lambda x: 2 * x, {"a": 1, "b": (2, 3)}))
    assert out[1] == "[1, 2, 3]"


def test_gaussian_kde_is_a_pytree():
    kde = fst.gaussian_kde(np.array([0.0, 1.0, 2.5]))
    leaves = fg.tree_util.tree_leaves(kde)
    assert leaves and all(hasattr(x, "shape") for x in leaves)
    f = fg.jit(lambda k, x: k.evaluate(x))
    np.testing.assert_allclose(f(kde, np.array([0.5])), kde.evaluate(np.array([0.5])), rtol=1e-6)
