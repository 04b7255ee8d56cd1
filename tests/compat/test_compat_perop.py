"""The per-op fast paths keep PyTorch's results: backward nodes whose program only
forwards a cotangent (``y + c``, ``y - c``, a same-shape reshape) skip the dispatch,
and the graph walk orders shared nodes (diamonds) correctly; compared with PyTorch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from torch_oracle import import_real_torch, npv

import compat.torch as ctorch
from compat._core import engine
from funcgrad import _compat_contract

real = import_real_torch()


def _mixed(t, x, n):
    """A chain mixing nodes with a forwarding backward and nodes with a real one, with
    diamonds (a value used twice) every few steps."""
    y = x
    for i in range(n):
        y = y * 1.0001
        y = y + 0.5
        y = y - 0.25
        y = y.reshape(y.shape)
        if i % 3 == 0:
            y = y * y + y  # a diamond: y feeds three uses
    return y.sum()


@pytest.mark.parametrize("assemble", ["never", "auto"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forwarding_backward_nodes_match_torch(monkeypatch, assemble, dtype):
    monkeypatch.setattr(engine.policy, "assemble", assemble)
    x0 = np.linspace(-0.5, 0.5, 3)
    grads = {}
    for lib in (ctorch, real):
        x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
        out = _mixed(lib, x, 7)
        for _ in range(3):  # node by node, then (auto) assembled from the second sighting
            x.grad = None
            out.backward(retain_graph=True)
        grads[lib.__name__] = (npv(out), npv(x.grad), str(x.grad.dtype))
    c, r = grads["compat.torch"], grads["torch"]
    np.testing.assert_allclose(c[0], r[0], rtol=1e-5)
    np.testing.assert_allclose(c[1], r[1], rtol=1e-5)
    assert c[2] == r[2]


def test_hooks_see_the_forwarded_gradient():
    seen = {}
    for lib in (ctorch, real):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3.0
        z = y + 1.0  # AddBackward0 forwards z's gradient to y
        got = []
        y.register_hook(lambda g, got=got: got.append(npv(g)) or g * 2)
        z.retain_grad()
        (z * z).sum().backward()
        seen[lib.__name__] = (got, npv(z.grad), npv(x.grad))
    c, r = seen["compat.torch"], seen["torch"]
    for a, b in zip(c[0], r[0]):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(c[1], r[1])
    np.testing.assert_allclose(c[2], r[2])


def _program(fn, *avals):
    return _compat_contract.trace_flat(
        fn, [_compat_contract.Aval(s, np.dtype(d)) for s, d in avals], "test"
    )


def test_forwarding_executable_returns_arrays_like_the_compiled_one():
    """An equation-free program's executable: arrays pass through (JAX arrays, and NumPy
    arrays: the host tier's values), other values (NumPy scalars) become arrays of the
    dtype and shape the compiled program (the oracle, ``jax.jit``) makes."""
    prog = _program(lambda a, b: [b, a, b], ((2,), "float32"), ((), "float64"))
    assert not prog.eqns
    run = _compat_contract.x64(_compat_contract.executable(prog))
    a, b = jnp.asarray([1.0, 2.0], jnp.float32), np.float64(3.5)
    with jax.enable_x64(True):
        want = jax.jit(lambda a, b: [b, a, b])(a, b)
        arrays = (a, jnp.asarray(b))
    for args in (arrays, (np.asarray(a), b)):
        got = run(*args)
        assert len(got) == len(want)
        for g, x, w in zip(got, (args[1], args[0], args[1]), want):
            assert isinstance(g, (jax.Array, np.ndarray))
            if isinstance(x, (jax.Array, np.ndarray)):
                assert g is x
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


_SCALAR_OPS = {
    "mul": lambda x: x * 1.5,
    "rdiv": lambda x: 1.5 / x,
    "div": lambda x: x / 3,
    "pow": lambda x: x**2.5,
    "sub_mul": lambda x: (x - 0.5) * 2,
    "rsub_rmul": lambda x: 2.0 * (0.25 - x),
}


def _outcome(f):
    try:
        out = f()
    except Exception as e:  # the type is compared with PyTorch's
        return ("raised", type(e).__name__)
    return ("ok", None if out is None else npv(out[0] if isinstance(out, tuple) else out))


@pytest.mark.parametrize("name", sorted(_SCALAR_OPS))
def test_ops_with_python_numbers_match_torch_to_second_order(name):
    """Residuals computed from a Python number alone are recomputed by the backward:
    first and second derivatives, batched gradients, and a second backward through a
    freed graph behave as PyTorch's."""
    fn = _SCALAR_OPS[name]
    got = {}
    for lib in (ctorch, real):
        x = lib.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = fn(x)
        eye = lib.eye(3)
        jac = _outcome(
            lambda: lib.autograd.grad(y, x, eye, retain_graph=True, is_grads_batched=True)
        )
        (g,) = lib.autograd.grad(fn(x).sum(), x, create_graph=True)
        h = _outcome(lambda g=g: lib.autograd.grad(g.sum(), x))
        y.sum().backward()
        first = npv(x.grad)
        again = _outcome(lambda: y.sum().backward())
        got[lib.__name__] = (jac, ("ok", npv(g)), h, ("ok", first), again)
    for (kc, vc), (kr, vr) in zip(got["compat.torch"], got["torch"]):
        assert kc == kr, (got["compat.torch"], got["torch"])
        if kc == "ok" and vr is not None:
            np.testing.assert_allclose(vc, vr, rtol=1e-5)
        else:
            assert vc == vr
