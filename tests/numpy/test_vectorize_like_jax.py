"""``vectorize`` against ``jax.numpy.vectorize``: ``None`` arguments pass through without
a signature (refused with one), ``excluded`` is checked, and the signature's core
dimensions are checked on inputs and outputs with JAX's exception types and phrases;
values over broadcast loop shapes agree."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.numpy as fnp


def _pair(x, y):
    return x, y


def _error(call):
    """The exception ``call()`` raises: its type and its message before JAX's suffix."""
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value).split(" on vectorized function")[0]


BAD = [
    ("dot", "(n,m),(m,k)->(n,k),()", [(2, 2), (2, 2)]),
    ("pair", "(),()->(),(),()", [(), ()]),
    ("dot", "(n,m),(m,k)->(n)", [(2, 2), (2, 2)]),
    ("dot", "(n,m),(m,k)->(n,n)", [(2, 3), (3, 4)]),
    ("dot", "(n,m),(m,k)->(n,k)", [(2,), (2, 2)]),
    ("dot", "(n,m),(m,k)->(n,k)", [(2, 3), (4, 5)]),
    ("dot", "(n,m),(m,k)->(n,k)", [(3, 2)]),
]


@pytest.mark.parametrize("fn,sig,shapes", BAD)
def test_signature_errors_as_jax(fn, sig, shapes):
    def make(mod):
        f = mod.dot if fn == "dot" else _pair
        return lambda: mod.vectorize(f, signature=sig)(*[np.zeros(s, np.float32) for s in shapes])

    ours, theirs = _error(make(fnp)), _error(make(jnp))
    assert ours[0] is theirs[0]
    # (the repr of an array in "output must be a tuple ..." differs: compare its head)
    assert ours[1][:60] == theirs[1][:60], (ours, theirs)


@pytest.mark.parametrize("excluded", [{1.5}, {-1}, {"a", None}])
def test_excluded_checked_as_jax(excluded):
    ours = _error(lambda: fnp.vectorize(lambda x: x, excluded=excluded))
    theirs = _error(lambda: jnp.vectorize(lambda x: x, excluded=excluded))
    assert ours == theirs


def test_none_arguments_as_jax():
    def f(x, y):
        return x if y is None else x + y

    x = np.arange(10)
    np.testing.assert_array_equal(fnp.vectorize(f)(x, None), jnp.vectorize(f)(x, None))
    np.testing.assert_array_equal(fnp.vectorize(f)(x, x), jnp.vectorize(f)(x, x))
    sig = "(k),(k)->(k)"
    assert _error(lambda: fnp.vectorize(f, signature=sig)(x, None)) == _error(
        lambda: jnp.vectorize(f, signature=sig)(x, None)
    )


loop_shapes = st.lists(st.integers(1, 3), max_size=2).map(tuple)


@settings(max_examples=25, deadline=None)
@given(
    loop_shapes,
    st.integers(0, 2),
    st.lists(st.booleans(), min_size=2, max_size=2),
    st.integers(1, 4),
)
def test_values_over_broadcast_loops(la, drop, ones, k):
    """``(n),(n)->(),(n)``: a dot and a sum, two outputs, over broadcast loop axes (the
    second operand's loop shape: the first's without ``drop`` leading axes, some 1s)."""
    rng = np.random.default_rng(len(la) + 3 * drop + k)
    lb = tuple(1 if z else d for d, z in zip(la[drop:], ones))
    a = rng.standard_normal((*la, k)).astype(np.float32)
    b = rng.standard_normal((*lb, k)).astype(np.float32)

    def g(mod):
        return mod.vectorize(lambda x, y: (mod.dot(x, y), x + y), signature="(n),(n)->(),(n)")

    got, want = g(fnp)(a, b), g(jnp)(a, b)
    assert isinstance(got, tuple) and len(got) == 2
    for o, w in zip(got, want):
        assert o.shape == w.shape
        np.testing.assert_allclose(np.asarray(o), np.asarray(w), rtol=1e-5, atol=1e-5)
