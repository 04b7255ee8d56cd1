"""Smoke tests of dot_general: forward vs einsum, derivatives vs JAX, one-dot batching."""

from __future__ import annotations

import itertools

import jax
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
from funcgrad.primitives import linalg as la

jax.config.update("jax_enable_x64", True)

EXAMPLES = la.dot_general_p.examples(np.random.default_rng(0))
CASES = [  # (the float examples: the integer ones are checked by the registry's tests)
    pytest.param(ex, id=str(ex.params["dimension_numbers"]))
    for ex in EXAMPLES
    if all(np.asarray(a).dtype.kind == "f" for a in ex.args)
]


def _einsum_spec(x_nd, y_nd, dn):
    """An einsum string with lax.dot_general's output layout."""
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in range(x_nd)]
    ys = [next(letters) for _ in range(y_nd)]
    for i, j in zip(lc + lb, rc + rb):
        ys[j] = xs[i]
    out = [xs[i] for i in lb]
    out += [xs[i] for i in range(x_nd) if i not in lc + lb]
    out += [ys[j] for j in range(y_nd) if j not in rc + rb]
    return f"{''.join(xs)},{''.join(ys)}->{''.join(out)}"


@pytest.mark.parametrize("ex", CASES)
def test_forward_vs_einsum(ex):
    x, y = ex.args
    dn = ex.params["dimension_numbers"]
    np.testing.assert_allclose(
        la.dot_general(x, y, dn), np.einsum(_einsum_spec(x.ndim, y.ndim, dn), x, y), rtol=1e-12
    )


@pytest.mark.parametrize("ex", CASES)
def test_derivatives_vs_jax(ex):
    x, y = ex.args
    dn = ex.params["dimension_numbers"]
    rng = np.random.default_rng(1)
    f = lambda a, b: la.dot_general(a, b, dn)
    f_jax = lambda a, b: jax.lax.dot_general(a, b, dn)
    ts = (rng.normal(size=x.shape), rng.normal(size=y.shape))
    np.testing.assert_allclose(fg.jvp(f, (x, y), ts)[1], jo.jvp(f_jax, (x, y), ts)[1], 1e-12)
    out, pb = fg.vjp(f, x, y)
    ct = rng.normal(size=np.shape(out))
    for g, g_ref in zip(pb(ct), jax.vjp(f_jax, x, y)[1](ct)):
        assert g.shape == g_ref.shape
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12)
    # second order: the VJP of the VJP (bilinear: exact)
    h = fg.jvp(lambda a, b: fg.vjp(f, a, b)[1](ct), (x, y), ts)[1]
    h_ref = jo.jvp(lambda a, b: jax.vjp(f_jax, a, b)[1](ct), (x, y), ts)[1]
    for a, b in zip(h, h_ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ex", CASES)
def test_vmap_is_one_dot_general_for_every_batch_position(ex):
    x, y = ex.args
    dn = ex.params["dimension_numbers"]
    rng = np.random.default_rng(2)
    B = 3
    xb, yb = rng.normal(size=(B, *x.shape)), rng.normal(size=(B, *y.shape))
    f = lambda a, b: la.dot_general(a, b, dn)
    for dx, dy in itertools.product([None, *range(x.ndim + 1)], [None, *range(y.ndim + 1)]):
        if dx is None and dy is None:
            continue
        args = (
            x if dx is None else np.moveaxis(xb, 0, dx),
            y if dy is None else np.moveaxis(yb, 0, dy),
        )
        vf = fg.vmap(f, in_axes=(dx, dy))
        prog = fg.make_ir(vf)(*args)
        names = [e.prim.name for e in prog.eqns]
        assert names.count("dot_general") == 1, names
        got = vf(*args)
        for b in range(B):
            want = f(x if dx is None else xb[b], y if dy is None else yb[b])
            np.testing.assert_allclose(got[b], want, rtol=1e-12)


def test_preferred_element_type_and_dtypes():
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    out = la.dot_general(x, x.T, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x.astype(np.int32) @ x.T.astype(np.int32))
    a = np.ones((2, 3), np.float32)
    f = lambda u, v: la.dot_general(u, v, (((1,), (0,)), ((), ())), np.float64)
    _, pb = fg.vjp(f, a, a.T)
    ga, gb = pb(np.ones((2, 2)))
    assert ga.dtype == np.float32 and gb.dtype == np.float32
    np.testing.assert_allclose(ga, 2 * np.ones((2, 3)))


def test_errors_name_primitive_and_operands():
    with pytest.raises(TypeError) as info:
        la.dot_general(np.ones((3, 4)), np.ones((5, 6)), (((1,), (0,)), ((), ())))
    msg = str(info.value)
    # JAX's sentence (lax.dot_general's own error), then the operands
    with pytest.raises(TypeError) as want:
        jax.lax.dot_general(np.ones((3, 4)), np.ones((5, 6)), (((1,), (0,)), ((), ())))
    assert msg.startswith(str(want.value)), (msg, str(want.value))
    assert "f64[3,4] and f64[5,6]" in msg and "test_linalg_smoke.py" in msg, msg
    # two strong dtypes are multiplied as they are, as JAX's (the higher-ranked type wins)
    mixed = la.dot_general(np.ones(3, np.float32), np.ones(3), (((0,), (0,)), ((), ())))
    want = jax.lax.dot_general(np.ones(3, np.float32), np.ones(3), (((0,), (0,)), ((), ())))
    assert mixed.dtype == want.dtype and float(mixed) == float(want)
    with pytest.raises(ValueError, match=r"^dot_general: lhs dimensions out of range"):
        la.dot_general(np.ones(3), np.ones(3), (((1,), (0,)), ((), ())))
