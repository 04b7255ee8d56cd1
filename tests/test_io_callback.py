"""``funcgrad.experimental.io_callback`` against ``jax.experimental.io_callback``: the same
values and the same calls (count and order) eagerly, under ``jit``, ``scan`` and ``vmap``,
kept when its results are unused, and JAX's errors for ``vmap`` of an ordered callback
and for derivatives."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax
from funcgrad.experimental import io_callback


def _run(lib: str, program: Any) -> tuple[Any, list]:
    """``program(api)``'s result and the callback's calls, for JAX or funcgrad."""
    calls: list = []
    rng = np.random.default_rng(0)

    def host_random_like(x: np.ndarray) -> np.ndarray:
        calls.append((x.dtype.name, x.shape))
        return rng.uniform(size=x.shape).astype(x.dtype)

    if lib == "jax":
        api = dict(jit=jax.jit, vmap=jax.vmap, scan=jax.lax.scan, np=jnp, cb=jax_io_callback)
    else:
        api = dict(jit=fg.jit, vmap=fg.vmap, scan=flax.scan, np=fnp, cb=io_callback)
    api["host"] = host_random_like
    out = program(api)
    return out, calls


PROGRAMS = {
    "eager": lambda a: a["cb"](a["host"], a["np"].zeros(5, "float32"), a["np"].zeros(5, "float32")),
    "jit": lambda a: a["jit"](lambda x: a["cb"](a["host"], x, x))(a["np"].zeros(5, "float32")),
    "jit_twice": lambda a: [
        a["jit"](lambda x: a["cb"](a["host"], x, x, ordered=True))(a["np"].zeros(3, "float32"))
        for _ in range(2)
    ],
    "vmap": lambda a: a["jit"](a["vmap"](lambda x: a["cb"](a["host"], x, x)))(
        a["np"].zeros((4, 2), "float32")
    ),
    "scan_ordered": lambda a: a["scan"](
        lambda c, x: (c, a["cb"](a["host"], x, x, ordered=True)), None, a["np"].arange(5.0)
    )[1],
    "unused_result": lambda a: a["jit"](lambda x: (a["cb"](a["host"], x, x), x * 2)[1])(
        a["np"].ones(2, "float32")
    ),
    "pytree": lambda a: a["jit"](
        lambda x: a["cb"](lambda t: {"y": t[0] + 1}, {"y": x}, (x,), ordered=True)
    )(a["np"].ones(2, "float32")),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_calls_as_jax(name: str) -> None:
    want, want_calls = _run("jax", PROGRAMS[name])
    got, got_calls = _run("fg", PROGRAMS[name])
    assert got_calls == want_calls
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_grad_through_a_callback_without_operands_runs_it_once() -> None:
    seen = []

    def f(x: Any) -> Any:
        io_callback(lambda: seen.append("hello"), None)
        return x * 3.0

    assert float(fg.grad(fg.jit(f))(1.0)) == 3.0
    assert seen == ["hello"]


def test_errors_are_jaxs() -> None:
    x = np.zeros(3, np.float32)
    like = lambda v: v
    for vmap, cb in ((jax.vmap, jax_io_callback), (fg.vmap, io_callback)):
        with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
            vmap(lambda v, cb=cb: cb(like, v, v, ordered=True))(np.zeros((2, 3), np.float32))
    for grad, cb in ((jax.grad, jax_io_callback), (fg.grad, io_callback)):
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            grad(lambda v, cb=cb: cb(like, v, v).sum())(x)
        # a non-scalar output too: the derivative's error comes before the output's check
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            grad(lambda v, cb=cb: cb(like, v, v))(x)
    for grad in (jax.grad, fg.grad):
        with pytest.raises(TypeError, match="Gradient only defined for scalar-output"):
            grad(lambda v: v * 2.0)(x)
    # (inside a compiled program the callback's error reaches the caller as XLA's, as JAX's)
    bad = (TypeError, jax.errors.JaxRuntimeError)
    with pytest.raises(bad, match=r"io_callback: result 0 of the callback .* float64\[3\]"):
        fg.jit(lambda v: io_callback(lambda u: u.astype(np.float64), v, v))(x)


def _refusals(api: Any, cb: Any, lax_: Any, np_: Any) -> list[Any]:
    """Programs JAX refuses: an IO callback in a cond or while_loop with a batched
    predicate, in a checkpoint under grad, under linear_transpose."""

    def vmap_cond() -> Any:
        def f(pred: Any) -> Any:
            return lax_.cond(pred, lambda: cb(lambda: print("a"), None), lambda: None)

        return api.vmap(f)(np_.array([True, False]))

    def vmap_while() -> Any:
        def f(i: Any) -> Any:
            def body(i: Any) -> Any:
                cb(lambda x: None, None, i)
                return i + 1

            return lax_.while_loop(lambda i: i < 5, body, i)

        return api.vmap(f)(np_.array([0, 4]))

    def grad_checkpoint() -> Any:
        def f(x: Any, y: Any) -> Any:
            cb(lambda v: v, y, y)
            return x

        return api.grad(api.checkpoint(f))(2.0, 3.0)

    def transpose() -> Any:
        x = np_.array(1.0)
        f = lambda x: cb(lambda v: v, jax.ShapeDtypeStruct((), x.dtype), x)
        return api.linear_transpose(f, x)(x)

    return [vmap_cond, vmap_while, grad_checkpoint, transpose]


def test_refusals_as_jax() -> None:
    # each of these would run the callback where JAX's programs never do (the branch not
    # taken, finished loop lanes, the recomputation): JAX refuses, so does funcgrad
    patterns = [
        (NotImplementedError, "IO effect not supported in vmap-of-cond."),
        (Exception, "not supported in while_loop with batched predicate"),
        (NotImplementedError, "Effects not supported in partial-eval of `checkpoint`"),
        (ValueError, "IO callbacks do not support transpose."),
    ]
    ours = _refusals(fg, io_callback, flax, fnp)
    theirs = _refusals(jax, jax_io_callback, jax.lax, jnp)
    for (kind, pattern), mine, jaxs in zip(patterns, ours, theirs):
        with pytest.raises(kind, match=pattern):
            jaxs()
        with pytest.raises(kind, match=pattern):
            mine()


def test_io_callback_outside_the_batched_branch_still_runs() -> None:
    # the refusal is for a callback inside the branches: one beside the cond runs per example
    seen: list = []

    def f(pred: Any, x: Any) -> Any:
        io_callback(lambda v: seen.append(float(v)), None, x)
        return flax.cond(pred, lambda v: v + 1, lambda v: v - 1, x)

    out = fg.vmap(f)(fnp.array([True, False]), fnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(out), [2.0, 1.0])
    assert sorted(seen) == [1.0, 2.0]
