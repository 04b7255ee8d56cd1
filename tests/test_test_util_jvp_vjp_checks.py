"""``funcgrad.test_util.check_jvp``/``check_vjp`` take ``jax.test_util``'s arguments (a
function and its derivative function, ``atol, rtol, eps, err_msg``) and reach JAX's
verdict: JAX's checks are the oracle on the same functions, right and wrong derivatives,
pytree arguments, complex functions and ``{dtype: tol}`` tables."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import jax.test_util as jtu
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import test_util as ftu

X = np.array([0.3, 1.2, -0.7], np.float32)
Z = np.array([0.3 + 0.2j, -1.1 + 0.5j], np.complex64)


def _verdicts(make: Callable[[Any, Any], tuple[Callable, Callable, tuple]], kind: str) -> list:
    """Whether ``check_<kind>`` passes under JAX and under funcgrad."""
    out = []
    for lib, np_, tu in ((jax, jnp, jtu), (fg, fnp, ftu)):
        f, deriv, args = make(lib, np_)
        try:
            getattr(tu, f"check_{kind}")(f, deriv, args)
            out.append(True)
        except AssertionError:
            out.append(False)
    return out


def test_signatures_are_jax_s() -> None:
    def params(fn: Callable) -> list:
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    for name in ("check_jvp", "check_vjp"):
        assert params(getattr(ftu, name)) == params(getattr(jtu, name))


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_right_derivative_passes(kind: str) -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(x: Any) -> Any:
            return np_.sin(x) * x

        return f, partial(getattr(lib, kind), f), (X,)

    assert _verdicts(make, kind) == [True, True]


def test_wrong_jvp_fails() -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(x: Any) -> Any:
            return np_.sin(x) * x

        def wrong(primals: Any, tangents: Any) -> Any:
            return f(*primals), 2.0 * tangents[0]

        return f, wrong, (X,)

    assert _verdicts(make, "jvp") == [False, False]


def test_wrong_primal_fails() -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(x: Any) -> Any:
            return np_.sin(x) * x

        def wrong(primals: Any, tangents: Any) -> Any:
            out, t = lib.jvp(f, primals, tangents)
            return out + 1.0, t

        return f, wrong, (X,)

    assert _verdicts(make, "jvp") == [False, False]


def test_wrong_vjp_fails() -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(x: Any, y: Any) -> Any:
            return np_.sin(x) * y

        def wrong(x: Any, y: Any) -> Any:
            out, pb = lib.vjp(f, x, y)
            return out, lambda ct: tuple(1.5 * g for g in pb(ct))

        return f, wrong, (X, X[::-1].copy())

    assert _verdicts(make, "vjp") == [False, False]


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_pytree_arguments_and_results(kind: str) -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(p: Any) -> Any:
            return {"a": np_.tanh(p["w"]) * p["b"], "b": np_.cos(p["w"])}

        args = ({"w": X, "b": np.float32(0.5) + X},)
        return f, partial(getattr(lib, kind), f), args

    assert _verdicts(make, kind) == [True, True]


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_complex_function(kind: str) -> None:
    def make(lib: Any, np_: Any) -> tuple:
        def f(z: Any) -> Any:
            return np_.exp(z) * np_.conj(z)

        return f, partial(getattr(lib, kind), f), (Z,)

    assert _verdicts(make, kind) == [True, True]


def test_tolerance_tables_and_eps() -> None:
    # a derivative off by 0.5%: inside a float32 tolerance of 1e-2, outside 1e-4
    def make(tol: float) -> Callable[[Any, Any], tuple]:
        def inner(lib: Any, np_: Any) -> tuple:
            def f(x: Any) -> Any:
                return np_.sin(x)

            def near(primals: Any, tangents: Any) -> Any:
                out, t = lib.jvp(f, primals, tangents)
                return out, t * 1.005

            return f, near, (X,)

        return inner

    for tol, expect in ((1e-2, True), (1e-4, False)):
        got = []
        for lib, np_, tu in ((jax, jnp, jtu), (fg, fnp, ftu)):
            f, deriv, args = make(tol)(lib, np_)
            table = {np.float32: tol}
            try:
                tu.check_jvp(f, deriv, args, atol=table, rtol=table, eps=1e-3)
                got.append(True)
            except AssertionError:
                got.append(False)
        assert got == [expect, expect], tol
