"""One behaviour for concrete and traced values: concrete arrays that funcgrad
handed out (plain ``jax.Array``s) indexed, updated or combined with funcgrad
tracers inside every transform, checked against the same code on JAX."""

from __future__ import annotations

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

U_NP = np.arange(12.0, dtype=np.float32).reshape(3, 4)
V_NP = np.linspace(-1, 1, 4, dtype=np.float32)


def _cases(m):
    """Functions of (i, w) closing over a concrete array ``U`` made by module ``m``."""
    U = m.asarray(U_NP)
    return {
        "index": lambda i, w: U[i] * w,
        "index_slice": lambda i, w: U[i, 1:] * w[1:],
        "index_neg": lambda i, w: U[-1 - i] + w,
        "at_set": lambda i, w: U.at[i].set(w),
        "at_add": lambda i, w: U.at[i].add(w * 2),
        "at_mul": lambda i, w: U.at[i].multiply(w),
        "at_min": lambda i, w: U.at[i].min(w),
        "at_max": lambda i, w: U.at[:, i].max(w[:3]),
        "at_get": lambda i, w: U.at[i].get() * w,
        "at_set_const_index": lambda i, w: U.at[0].set(w),
        "dot": lambda i, w: U.dot(w) * i,
        "take": lambda i, w: U.take(m.stack([i, i + 1])) * w[:2],
        "clip": lambda i, w: U[0].clip(w, 3.0),
        "operators": lambda i, w: (U[0] + w) * (w - U[1]) / (U[2] + 1) @ w,
    }


NAMES = sorted(_cases(jnp))


def _fg(name):
    return _cases(fnp)[name]


def _jx(name):
    return _cases(jnp)[name]


def _close(a, b):
    chex_like = jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5), a, b
    )
    return chex_like


@pytest.mark.parametrize("name", NAMES)
def test_under_jit_and_vmap(name):
    i, w = np.int32(1), V_NP
    _close(fg.jit(_fg(name))(i, w), jax.jit(_jx(name))(i, w))
    idx = np.array([0, 1], np.int32)
    _close(
        fg.vmap(_fg(name), in_axes=(0, None))(idx, w),
        jax.vmap(_jx(name), in_axes=(0, None))(idx, w),
    )


@pytest.mark.parametrize("name", NAMES)
def test_under_grad(name):
    def loss(f):
        return lambda w, i: (f(i, w) ** 2).sum()

    w, i = V_NP, np.int32(1)
    _close(fg.grad(loss(_fg(name)))(w, i), jax.grad(loss(_jx(name)))(w, i))
    # the index traced too (inside jit), the array still concrete
    _close(fg.jit(fg.grad(loss(_fg(name))))(w, i), jax.jit(jax.grad(loss(_jx(name))))(w, i))


def test_inside_loops():
    U = fnp.asarray(U_NP)
    Uj = jnp.asarray(U_NP)
    w = V_NP
    _close(
        fg.fori_loop(0, 3, lambda i, c: c + U[i], w),
        jax.lax.fori_loop(0, 3, lambda i, c: c + Uj[i], w),
    )
    _close(
        fg.scan(lambda c, i: (c * U[i], U.at[i].set(c)[i]), w, fnp.arange(3)),
        jax.lax.scan(lambda c, i: (c * Uj[i], Uj.at[i].set(c)[i]), w, jnp.arange(3)),
    )
    _close(
        fg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + U[c[0]]), (0, w)),
        jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + Uj[c[0]]), (0, w)),
    )
    # a funcgrad loop under grad, indexing a closed-over data set
    gf = fg.grad(lambda w: fg.fori_loop(0, 3, lambda i, c: c + (U[i] * w).sum() ** 2, 0.0))
    gj = jax.grad(lambda w: jax.lax.fori_loop(0, 3, lambda i, c: c + (Uj[i] * w).sum() ** 2, 0.0))
    _close(gf(w), gj(w))


def test_jax_operations_on_closed_over_arrays_inside_jit_stay_concrete():
    """JAX code applied to concrete arrays while funcgrad traces under jit is
    evaluated, not staged into jax.jit's trace (it would leak into the cache)."""
    U = fnp.asarray(U_NP)
    f = fg.jit(lambda w: jnp.sin(U[0]) * w)
    for k in range(3):
        _close(f(V_NP + k), np.sin(U_NP[0]) * (V_NP + k))
    _close(fg.vmap(f)(np.stack([V_NP, V_NP])), np.sin(U_NP[0]) * np.stack([V_NP, V_NP]))


def test_plain_jax_behaviour_unchanged():
    """Without funcgrad tracers, jax.Array keeps JAX's own semantics."""
    x = jnp.arange(5.0)
    _close(x[1:3], np.arange(5.0)[1:3])
    _close(x.at[jnp.array([1, 1])].add(1.0), np.array([0, 3, 2, 3, 4.0]))
    _close(x.at[10].get(mode="fill", fill_value=-1.0), -1.0)
    _close(x.at[2].set(7.0, mode="promise_in_bounds"), np.array([0, 1, 7, 3, 4.0]))
    _close(x.clip(1, 3), np.clip(np.arange(5.0), 1, 3))
    assert type(x.at).__name__ == "_At"  # routed through funcgrad's bridge, same result
    with pytest.raises(AttributeError):
        x.at[0].not_a_method  # noqa: B018


def test_numpy_arrays_and_outputs_interoperate():
    # a NumPy array indexed by a traced index is an error, as in JAX
    with pytest.raises(TypeError):
        fg.jit(lambda i: U_NP[i])(1)
    out = fg.jit(lambda w: w * 2)(V_NP)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(np.asarray(out), V_NP * 2)
    back = pickle.loads(pickle.dumps(out))
    np.testing.assert_allclose(np.asarray(back), V_NP * 2)
    # jax.Array inputs, outputs fed to JAX, printing
    _close(jnp.sum(fg.grad(lambda w: (w**2).sum())(jnp.asarray(V_NP))), 2 * V_NP.sum())
    assert "Array(" in repr(out)


class _Wrapped:
    """An array-like object that converts itself with ``__jax_array__``."""

    def __init__(self, v):
        self.v = jnp.asarray(v)

    def __jax_array__(self):
        return self.v


def test_jax_array_protocol_objects_convert():
    w = _Wrapped(V_NP)
    _close(fnp.asarray(w), jnp.asarray(w))
    _close(fnp.sin(w), jnp.sin(jnp.asarray(w)))
    _close(fg.jit(lambda x: x * fnp.asarray(w))(V_NP), V_NP * V_NP)
    _close(
        fg.grad(lambda x: (x * fnp.asarray(w)).sum())(V_NP),
        jax.grad(lambda x: (x * jnp.asarray(w)).sum())(V_NP),
    )


def test_array_type_covers_concrete_and_traced_values():
    seen = []
    x = fnp.arange(3.0)
    assert isinstance(x, fg.Array) and not isinstance(U_NP, fg.Array)
    fg.jit(lambda v: seen.append(isinstance(v, fg.Array)) or v)(x)
    fg.grad(lambda v: seen.append(isinstance(v, fg.Array)) or v.sum())(x)
    fg.vmap(lambda v: seen.append(isinstance(v, fg.Array)) or v)(x)
    assert seen == [True, True, True]
    with pytest.raises(TypeError):
        fg.Array()


def test_jax_names_used_by_the_tutorials():
    x = np.linspace(0.1, 1, 3, dtype=np.float32)
    _close(fg.jacobian(fnp.exp)(x), jax.jacobian(jnp.exp)(x))
    from funcgrad import lax

    assert lax.while_loop is fg.while_loop and lax.cond is fg.cond and lax.scan is fg.scan
    from funcgrad.test_util import check_grads

    check_grads(lambda w: fnp.sum(fnp.tanh(w) ** 2), (x,), order=2)

    @fg.custom_jvp
    def wrong(w):
        return fnp.sin(w)

    wrong.defjvp(lambda p, t: (fnp.sin(p[0]), 2.0 * t[0]))  # not sin's derivative
    with pytest.raises(AssertionError):
        check_grads(wrong, (x,), order=1)
