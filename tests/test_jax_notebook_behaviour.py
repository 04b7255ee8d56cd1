"""What JAX's documentation notebooks showed differing under funcgrad
(``tools/jax_notebooks.py``), checked against JAX as the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp

LIBS = {"jax": (jax, jnp), "funcgrad": (funcgrad, fnp)}

COMPLEX_FUNS = {
    "sum of squares of parts": lambda np_: lambda z: np_.real(z) ** 2 + np_.imag(z) ** 2,
    "real": lambda np_: lambda z: np_.real(z),
    "imag": lambda np_: lambda z: np_.imag(z),
    "abs": lambda np_: lambda z: np_.abs(z),
    "abs squared": lambda np_: lambda z: np_.abs(z) ** 2,
}


def _typed(x: object) -> tuple:
    return (np.asarray(x).dtype, x.weak_type, np.asarray(x).tolist())


@pytest.mark.parametrize("name", COMPLEX_FUNS)
@pytest.mark.parametrize("arg", ["python", "array"])
@pytest.mark.parametrize("jitted", [False, True])
def test_grad_at_complex_input_typed_as_jax(name: str, arg: str, jitted: bool) -> None:
    """autodiff_cookbook: ``grad(f)(3. + 4j)`` of a real-valued ``f`` is strongly typed."""
    got = {}
    for lib_name, (lib, np_) in LIBS.items():
        z = 3.0 + 4j if arg == "python" else np_.asarray(3.0 + 4j)
        g = lib.grad(COMPLEX_FUNS[name](np_))
        g = lib.jit(g) if jitted else g
        got[lib_name] = _typed(g(z))
    assert got["funcgrad"][:2] == got["jax"][:2]
    np.testing.assert_allclose(got["funcgrad"][2], got["jax"][2], rtol=1e-6)


def test_holomorphic_grad_at_python_complex_stays_weak() -> None:
    got = {
        n: _typed(lib.grad(np_.sin, holomorphic=True)(3.0 + 4j)) for n, (lib, np_) in LIBS.items()
    }
    assert got["funcgrad"][:2] == got["jax"][:2]
    np.testing.assert_allclose(got["funcgrad"][2], got["jax"][2], rtol=1e-6)


def test_leaked_jit_tracer_repr_is_jax_s() -> None:
    """Common Gotchas: a tracer saved to a global inside ``jit`` prints as on JAX."""
    reprs = {}
    for n, (lib, np_) in LIBS.items():
        saved = []

        def f(x, saved=saved):
            saved.append(x)
            return x * 2

        lib.jit(f)(4.0)
        lib.jit(f)(np_.ones((2, 3), np_.int32))
        reprs[n] = [repr(s) for s in saved]
    assert reprs["funcgrad"] == reprs["jax"]
