"""``transpose`` with axes given as NumPy integers (a tuple of ``np.int64``/``np.int32``, a
NumPy array, mixed widths, negative values), as programs that compute a permutation with
NumPy pass it: ``numpy.transpose``, the array method, ``lax.transpose``, under ``jit``,
``grad`` and ``vmap``, against JAX; non-integer axes and repeated axes are errors of the
same type as JAX's."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 7
W = np.linspace(-1.0, 1.0, 24, dtype=np.float32)

PERMS = [
    tuple(np.int64(i) for i in (2, 0, 1)),
    tuple(np.int32(i) for i in (1, 2, 0)),
    (np.int8(-1), np.uint8(0), np.int16(1)),
    np.array([2, 1, 0]),
    np.array([0, 2, 1], dtype=np.int32),
]

LIBS = {"fg": (fg, fnp, flax), "jax": (jax, jnp, jax.lax)}


def _forms(which: str, perm: Any) -> list:
    T, np_, lax_ = LIBS[which]
    a = np_.asarray(X)
    forms = [
        np_.transpose(a, perm),
        a.transpose(perm),
        a.transpose(*perm),
        T.jit(lambda b: np_.transpose(b, perm))(a),
        T.vmap(lambda b: np_.transpose(b, (np.int64(1), np.int64(0))))(a),
    ]
    if all(p >= 0 for p in perm):  # lax.transpose takes no negative axes (JAX's either)
        forms.append(lax_.transpose(a, tuple(perm)))
    return forms


@pytest.mark.parametrize("perm", PERMS, ids=lambda p: type(p).__name__ + str(list(map(int, p))))
def test_values_and_shapes_as_jax(perm: Any) -> None:
    for got, want in zip(_forms("fg", perm), _forms("jax", perm)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("perm", PERMS[:3], ids=["int64", "int32", "mixed"])
def test_gradient_as_jax(perm: Any) -> None:
    def loss(np_: Any) -> Any:
        return lambda a: (np_.transpose(a, perm).reshape(-1) * W).sum()

    got = fg.grad(loss(fnp))(X)
    want = jax.grad(loss(jnp))(X)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize(
    "perm",
    [(np.float64(1.0), 0, 2), (np.int64(1), np.int64(1), np.int64(0))],
    ids=["float-axis", "repeated"],
)
def test_bad_axes_raise_jaxs_exception_type(perm: Any) -> None:
    with pytest.raises(TypeError) as want:
        jnp.transpose(jnp.asarray(X), perm)
    with pytest.raises(want.type, match="transpose"):
        fnp.transpose(fnp.asarray(X), perm)
