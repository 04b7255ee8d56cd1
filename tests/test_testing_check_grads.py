"""``funcgrad.test_util.check_grads`` takes ``jax.test_util.check_grads``'s arguments
(positional ``atol, rtol, eps``; ``{dtype: tol}`` tables) and checks reverse mode alone
without forward mode; JAX's ``check_grads`` is the oracle on the same calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.test_util as jtu
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import test_util as ftu


def _custom_vjp(lib: Any, np_: Any, wrong: bool) -> Callable:
    @lib.custom_vjp
    def f(x: Any) -> Any:
        return np_.sin(x) * 2.0

    def fwd(x: Any) -> Any:
        return f(x), x

    def bwd(x: Any, g: Any) -> Any:
        return ((3.0 if wrong else 2.0) * np_.cos(x) * g,)

    f.defvjp(fwd, bwd)
    return f


def _both(check: Callable[[Any, Any, Any], None]) -> list[bool]:
    """Whether the check passes under JAX and under funcgrad."""
    out = []
    for lib, np_, tu in ((jax, jnp, jtu), (fg, fnp, ftu)):
        try:
            check(lib, np_, tu)
            out.append(True)
        except AssertionError:
            out.append(False)
    return out


def test_positional_tolerances_and_tables() -> None:
    x = np.linspace(0.1, 1.0, 5).astype(np.float32)
    tol = {np.float32: 2e-2, np.float64: 1e-5}

    def check(lib: Any, np_: Any, tu: Any) -> None:
        tu.check_grads(lambda a: np_.tanh(a) * a, (x,), 2, ["fwd", "rev"], tol, tol, 1e-2)

    assert _both(check) == [True, True]


@pytest.mark.parametrize("wrong", [False, True])
def test_reverse_mode_only_on_custom_vjp(wrong: bool) -> None:
    x = np.array([0.3, -0.7, 1.1])

    def check(lib: Any, np_: Any, tu: Any) -> None:
        tu.check_grads(_custom_vjp(lib, np_, wrong), (x,), 1, modes=["rev"])

    assert _both(check) == [not wrong, not wrong]


def test_forward_mode_on_custom_vjp_raises_like_jax() -> None:
    x = np.array([0.3, -0.7])
    for lib, np_, tu in ((jax, jnp, jtu), (fg, fnp, ftu)):
        with pytest.raises(TypeError, match="custom_vjp"):
            tu.check_grads(_custom_vjp(lib, np_, False), (x,), 1, modes=["fwd"])


def test_keyword_calls_still_work() -> None:
    x = np.array([0.5, 1.5])
    ftu.check_grads(fnp.sin, (x,), order=2, eps=1e-6, rtol=1e-5, atol=1e-5)
    with pytest.raises(AssertionError):
        ftu.check_grads(_custom_vjp(fg, fnp, True), (x,), modes=("rev",), rtol=1e-5)


@pytest.mark.parametrize("wrong", [False, True])
def test_pytree_arguments_and_results(wrong: bool) -> None:
    """Arguments and results that are pytrees (a tuple of weights, a dict), as JAX's
    ``testScanRnn`` passes; a wrong derivative on one leaf is caught by both."""
    rng = np.random.default_rng(0)
    params = (rng.standard_normal((2, 3)), rng.standard_normal(3))
    x = {"a": rng.standard_normal(3), "b": 0.5}

    def make(lib: Any, np_: Any) -> Callable:
        @lib.custom_jvp
        def g(y: Any) -> Any:
            return np_.sin(y)

        @g.defjvp
        def g_jvp(p: Any, t: Any) -> Any:
            return g(p[0]), (2.0 if wrong else 1.0) * np_.cos(p[0]) * t[0]

        def f(params: Any, x: Any) -> Any:
            w, b = params
            h = np_.tanh(w @ x["a"] + b[:2] * x["b"])
            return {"out": g(np_.sum(h**2)), "h": h}

        return f

    def check(lib: Any, np_: Any, tu: Any) -> None:
        tu.check_grads(make(lib, np_), (params, x), order=2, modes=["fwd", "rev"])

    with jax.enable_x64(True):
        assert _both(check) == [not wrong, not wrong]


@pytest.mark.parametrize("wrong", [False, True])
def test_forward_mode_alone_at_second_order(wrong: bool) -> None:
    """``modes=["fwd"]`` with ``order=2`` differentiates the JVP in forward mode only:
    a jitted ``while_loop`` (no reverse mode) passes, as in JAX's ``testWhileJVP``, and
    a wrong second derivative (a first derivative whose own rule is wrong) is caught."""
    x = np.arange(9.0).reshape(3, 3) / 10

    def make(lib: Any, np_: Any) -> Callable:
        @lib.custom_jvp
        def c(y: Any) -> Any:
            return np_.cos(y)

        c.defjvp(lambda p, t: (c(p[0]), (1.0 if wrong else -1.0) * np_.sin(p[0]) * t[0]))

        @lib.custom_jvp
        def s(y: Any) -> Any:
            return np_.sin(y)

        s.defjvp(lambda p, t: (s(p[0]), c(p[0]) * t[0]))

        def loop(v: Any) -> Any:
            return lib.lax.while_loop(lambda u: u[0, 2] <= 1, lambda u: u * 1.5 + 0.1 * u * u, v)

        return lib.jit(lambda v: s(loop(v)))

    def check(lib: Any, np_: Any, tu: Any) -> None:
        tu.check_grads(make(lib, np_), (x,), order=2, modes=["fwd"])

    with jax.enable_x64(True):
        assert _both(check) == [not wrong, not wrong]
