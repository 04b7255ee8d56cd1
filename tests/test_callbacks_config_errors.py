"""``fg.pure_callback``, ``fg.config`` and the ``fg.errors`` names, against JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

S = jax.ShapeDtypeStruct
X = np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(np.float32)
Y = np.arange(3.0, dtype=np.float32)


def _calls(lib, vmap_method=None):
    def f(x, y):
        return lib.pure_callback(
            lambda a, b: (np.sin(a) * b, a.sum(axis=-1)),
            (S(x.shape, x.dtype), S((), x.dtype)),
            x,
            y,
            vmap_method=vmap_method,
        )

    return f


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_pure_callback_values_match_jax(wrap):
    w = (lambda f: f) if wrap == "eager" else None
    got = (w or fg.jit)(_calls(fg))(X[0], Y)
    want = (w or jax.jit)(_calls(jax))(X[0], Y)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-6)
        assert g.dtype == e.dtype and g.shape == e.shape


@pytest.mark.parametrize(
    "method", ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"]
)
@pytest.mark.parametrize("in_axes", [(0, None), (1, 0), (0, 0)])
def test_pure_callback_vmap_methods_match_jax(method, in_axes):
    xs = X if in_axes[0] == 0 else np.ascontiguousarray(X.T)
    ys = Y if in_axes[1] is None else np.stack([Y, 2 * Y])
    got = fg.vmap(_calls(fg, method), in_axes=in_axes)(xs, ys)
    want = jax.vmap(_calls(jax, method), in_axes=in_axes)(xs, ys)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_pure_callback_sees_what_jax_shows_per_method():
    seen = []

    def cb(a, b):
        seen.append((a.shape, b.shape))
        return a * b

    def f(lib, method):
        return lambda x, y: lib.pure_callback(cb, S(x.shape, x.dtype), x, y, vmap_method=method)

    for method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        seen.clear()
        jax.vmap(f(jax, method), in_axes=(0, None))(X, Y)
        want = list(seen)
        seen.clear()
        fg.vmap(f(fg, method), in_axes=(0, None))(X, Y)
        assert seen == want


def test_pure_callback_errors_as_jax():
    f = _calls(fg)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        fg.vmap(f, in_axes=(0, None))(X, Y)
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        fg.grad(lambda x: f(x, Y)[1])(X[0])
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        fg.jvp(lambda x: f(x, Y)[1], (X[0],), (X[0],))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        fg.pure_callback(np.sin, S((3,), np.float32), Y, vmap_method="bogus")
    # a callback that breaks its declaration fails at run time, inside XLA's call (as JAX)
    with pytest.raises(fg.errors.JaxRuntimeError, match=r"result 0 .* float64\[3\].*float32"):
        fg.jit(lambda y: fg.pure_callback(lambda a: a.astype(np.float64), S((3,), np.float32), y))(
            Y
        )


def test_pure_callback_under_custom_jvp_is_differentiable():
    @fg.custom_jvp
    def host_sin(x):
        return fg.pure_callback(np.sin, S(x.shape, x.dtype), x)

    @host_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), fnp.cos(x) * t

    g = fg.jit(fg.grad(lambda x: host_sin(x).sum()))(Y)
    np.testing.assert_allclose(g, np.cos(Y), rtol=1e-6)


def test_config_reads_and_forwards_jax_options():
    assert fg.config.jax_enable_x64 == jax.config.jax_enable_x64
    assert fg.config.read("jax_enable_x64") == jax.config.jax_enable_x64
    fg.config.update("jax_enable_x64", True)  # the test suite runs with x64 on
    assert jax.config.jax_enable_x64
    with pytest.raises(AttributeError, match="Unrecognized config option: no_such_option"):
        fg.config.update("no_such_option", 1)
    with pytest.raises(AttributeError, match="no_such_option"):
        fg.config.no_such_option  # noqa: B018


def test_config_own_options(monkeypatch):
    from funcgrad import config

    # the registry as it was, after the test (the option must not outlive it)
    monkeypatch.setattr(config, "_OWN", dict(config._OWN))
    monkeypatch.setattr(config, "_DOCS", dict(config._DOCS))
    config.define("funcgrad_test_option", 3, "an option for this test")
    assert fg.config.funcgrad_test_option == 3
    fg.config.update("funcgrad_test_option", 4)
    assert fg.config.read("funcgrad_test_option") == 4


def test_boolean_mask_under_jit_raises_jax_error_type():
    x = np.arange(4.0)
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 1])(jnp.asarray(x))
    for f in (lambda x: x[x > 1], lambda x: x.at[x > 1].set(0.0)):
        with pytest.raises(fg.errors.NonConcreteBooleanIndexError, match="must be concrete") as e:
            fg.jit(f)(x)
        assert isinstance(e.value, IndexError) and isinstance(e.value, fg.errors.JAXIndexError)
        # funcgrad's contract: an error about an abstract value is a ConcretizationError
        assert isinstance(e.value, fg.ConcretizationError)
    assert issubclass(fg.errors.JAXTypeError, TypeError)
    assert fg.errors.JaxRuntimeError is jax.errors.JaxRuntimeError
