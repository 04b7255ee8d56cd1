"""``make_jaxpr``, ``device_get``, ``ensure_compile_time_eval``, ``float0``, process
queries and ``effects_barrier`` as JAX's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_make_jaxpr_returns_the_program_and_shapes_as_jax():
    def f(x, n):
        return {"y": fnp.sin(x) * n, "s": x.sum()}

    prog, shape = fg.make_jaxpr(f, static_argnums=1, return_shape=True)(np.ones((2, 3)), 2)
    _, jshape = jax.make_jaxpr(
        lambda x, n: {"y": jnp.sin(x) * n, "s": x.sum()}, static_argnums=1, return_shape=True
    )(np.ones((2, 3)), 2)
    assert shape == jshape
    assert isinstance(prog, fg.Program)
    assert [e.prim.name for e in prog.eqns] == ["sin", "mul", "reduce_sum"]
    assert isinstance(fg.make_jaxpr(f, static_argnums=1)(np.ones(2), 3), fg.Program)
    with pytest.raises(NotImplementedError, match="axis_env"):
        fg.make_jaxpr(f, axis_env=[("i", 2)])(np.ones(2), 3)


def test_device_get_matches_jax():
    tree = {"a": fnp.arange(3.0), "b": (np.float32(2.0), "label", 4)}
    got, want = fg.device_get(tree), jax.device_get({"a": jnp.arange(3.0), "b": tree["b"]})
    assert type(got["a"]) is type(want["a"]) is np.ndarray
    np.testing.assert_array_equal(got["a"], want["a"])
    assert got["b"] == want["b"]


def test_ensure_compile_time_eval_makes_constants_concrete_under_jit():
    def body(lib, x):
        np_ = fnp if lib is fg else jnp
        with lib.ensure_compile_time_eval():
            table = np_.cumsum(np_.arange(5.0))
            n = int(table[-1])  # concrete: Python can use it
            y = x * 2.0  # traced: still recorded
        return y + n

    got = fg.jit(lambda x: body(fg, x))(np.float32(1.0))
    want = jax.jit(lambda x: body(jax, x))(np.float32(1.0))
    np.testing.assert_allclose(got, want)
    with pytest.raises(fg.errors.ConcretizationTypeError):
        fg.jit(lambda x: int(x.sum()))(np.ones(2))


def test_small_names_are_jaxs():
    assert fg.float0 == jax.dtypes.float0
    assert fg.Device is jax.Device and isinstance(fg.devices()[0], fg.Device)
    assert fg.process_index() == jax.process_index()
    assert fg.process_count() == jax.process_count()


def test_effects_barrier_waits_for_callbacks():
    seen = []
    fg.jit(lambda x: fg.debug.callback(lambda v: seen.append(float(v)), x) or x)(np.float32(3.0))
    fg.effects_barrier()
    assert seen == [3.0]
