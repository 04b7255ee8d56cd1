"""``jax.lax``'s ``accuracy=`` of the transcendental unary operations: ``AccuracyMode``
and ``Tolerance`` as JAX 0.10.2 has them (members, validation errors), and the
operations taking either, with JAX's values and gradients (funcgrad lowers every one to
XLA's default implementation)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg


def test_accuracy_mode_members():
    assert [(m.name, m.value) for m in fg.lax.AccuracyMode] == [
        (m.name, m.value) for m in jax.lax.AccuracyMode
    ]


@pytest.mark.parametrize(
    "kw", [{}, {"atol": -1.0}, {"ulps": -1}, {"rtol": 1e-3}, {"atol": 1e-6, "ulps": 2}]
)
def test_tolerance(kw):
    try:
        theirs = jax.lax.Tolerance(**kw)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            fg.lax.Tolerance(**kw)
        return
    ours = fg.lax.Tolerance(**kw)
    assert (ours.atol, ours.rtol, ours.ulps) == (theirs.atol, theirs.rtol, theirs.ulps)


@pytest.mark.parametrize("name", ["exp", "expm1", "log1p", "tanh", "logistic", "sin", "sqrt"])
@pytest.mark.parametrize("acc", ["highest", "default", "tolerance"])
def test_values_and_gradients(name, acc):
    x = np.linspace(0.1, 3.0, 7, dtype=np.float32)
    pick = {"highest": "HIGHEST", "default": "DEFAULT"}
    args = {}
    for lib in (jax, fg):
        a = lib.lax.Tolerance(atol=1e-5) if acc == "tolerance" else lib.lax.AccuracyMode[pick[acc]]
        args[lib] = a
    want = getattr(jax.lax, name)(x, accuracy=args[jax])
    got = getattr(fg.lax, name)(x, accuracy=args[fg])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    g = lambda lib: lib.vmap(lib.grad(lambda v: getattr(lib.lax, name)(v, accuracy=args[lib])))
    np.testing.assert_allclose(g(fg)(x), g(jax)(x), rtol=1e-5, atol=1e-5)
