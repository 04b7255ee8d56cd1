"""``einsum_path`` against ``jax.numpy.einsum_path`` (the same contraction order for each
strategy) and ``einsum(..., optimize=path)`` against NumPy's ``einsum`` (any valid path
gives the same values); a three-operand step is refused as in ``jax.numpy``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(0)

CASES = [
    ("i->", [(3,)]),
    ("ii->i", [(4, 4)]),
    ("ij,jk", [(3, 4), (4, 3)]),
    ("ij,jkl,klm", [(2, 2), (2, 3, 4), (3, 4, 2)]),
    ("ij,jk,kl->il", [(2, 2), (2, 5), (5, 2)]),
    ("ntk,kd,dc->nc", [(2, 6, 5), (5, 4), (4, 3)]),
    ("ea,fb,abcd,gc,hd->efgh", [(3, 3), (3, 3), (3, 3, 3, 3), (3, 3), (3, 3)]),
]


@pytest.mark.parametrize("optimize", [True, False, "optimal", "auto", "greedy", "eager"])
@pytest.mark.parametrize("sig,shapes", CASES, ids=[c[0] for c in CASES])
def test_path_as_jax_and_values_as_numpy(sig, shapes, optimize):
    args = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    path, report = fnp.einsum_path(sig, *args, optimize=optimize)
    assert path == jnp.einsum_path(sig, *args, optimize=optimize)[0]
    assert "Complete contraction" in report
    got = fnp.einsum(sig, *args, optimize=path)
    np.testing.assert_allclose(np.asarray(got), np.einsum(sig, *args), rtol=1e-4, atol=1e-4)


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, list, list]:
    """A chain ``ab,bc,cd...->a<last>`` of 2-5 matrices and a random valid pairwise path."""
    n = draw(st.integers(2, 5))
    labels = "abcdefg"[: n + 1]
    dims = [draw(st.integers(1, 4)) for _ in labels]
    sig = ",".join(labels[i : i + 2] for i in range(n)) + "->" + labels[0] + labels[-1]
    shapes = [(dims[i], dims[i + 1]) for i in range(n)]
    path, left = [], n
    while left > 1:
        i = draw(st.integers(0, left - 1))
        j = draw(st.integers(0, left - 1).filter(lambda k, i=i: k != i))
        path.append((i, j))
        left -= 1
    return sig, shapes, path


@settings(max_examples=40, deadline=None)
@given(chains())
def test_any_valid_path_gives_numpys_values(case):
    sig, shapes, path = case
    args = [RNG.standard_normal(s) for s in shapes]
    got = fnp.einsum(sig, *args, optimize=path)
    want = np.einsum(sig, *args)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # NumPy's own spelling of a path, and under jit/grad
    assert np.allclose(fnp.einsum(sig, *args, optimize=["einsum_path", *path]), want, 1e-4, 1e-4)
    g = fg.grad(lambda a: fnp.einsum(sig, a, *args[1:], optimize=path).sum())(args[0])
    gj = jax.grad(lambda a: jnp.einsum(sig, a, *args[1:]).sum())(args[0])
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-4, atol=1e-4)


def test_three_operand_step_refused_as_jax():
    arrs = [np.ones(s, np.float32) for s in [(2, 3), (2, 4), (2, 5)]]
    msg = "jax.numpy.einsum does not support simultaneous contraction of 3 or more operands"
    with pytest.raises(NotImplementedError, match=msg):
        jnp.einsum("ij,ik,il->jkl", *arrs, optimize=[(0, 1, 2)])
    with pytest.raises(NotImplementedError, match=msg):
        fnp.einsum("ij,ik,il->jkl", *arrs, optimize=[(0, 1, 2)])


def test_bad_paths_refused():
    a = np.ones((2, 2))
    with pytest.raises(ValueError, match="outside"):
        fnp.einsum("ij,jk", a, a, optimize=[(0, 2)])
    with pytest.raises(ValueError, match="unknown optimize strategy"):
        fnp.einsum_path("ij,jk", a, a, optimize="fastest")
