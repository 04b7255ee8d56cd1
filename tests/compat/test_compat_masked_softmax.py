"""``torch._masked_softmax`` against PyTorch 2.13: the three mask types (the default mask
of the input's shape, a ``(B, L)`` padding mask, an ``(L, L)`` attention mask) along the
last axis and others, rows masked whole (NaN, as PyTorch's CPU kernel), the float dtypes,
0-d inputs, the gradient (masked entries get none; ``MaskedSoftmaxBackward0``), and
PyTorch's errors in its order (mask dtype, mask shape, ``dim``, input dtype, mask type)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch, npv

import compat.torch as ctorch


def _outcome(lib, call):
    try:
        r = call(lib)
    except Exception as e:  # (compared with PyTorch's)
        return type(e).__name__, str(e)
    return "ok", str(r.dtype).replace("torch.", ""), npv(r.float())


def _inputs(lib, seed=0, shape=(2, 3, 4, 4)):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32))
    m = rng.random(shape) > 0.5
    m[0, 0, 0] = True  # (a row masked whole)
    b, _, n, _ = shape
    pm = rng.random((b, n)) > 0.5
    pm[-1] = True
    return x, lib.tensor(m), lib.tensor(pm), lib.tensor(rng.random((n, n)) > 0.5)


CALLS = {
    "default": lambda L, x, m, pm, am: L._masked_softmax(x, m),
    "default_dim1": lambda L, x, m, pm, am: L._masked_softmax(x, m, 1, 2),
    "padding_last": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 3, 1),
    "padding_dim2": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 2, 1),
    "padding_no_dim": lambda L, x, m, pm, am: L._masked_softmax(x, pm, None, 1),
    "attention_last": lambda L, x, m, pm, am: L._masked_softmax(x, am, -1, 0),
    "attention_dim1": lambda L, x, m, pm, am: L._masked_softmax(x, am, 1, 0),
    "float64": lambda L, x, m, pm, am: L._masked_softmax(x.double(), m, 0),
    "float16": lambda L, x, m, pm, am: L._masked_softmax(x.half(), m),
    "bfloat16": lambda L, x, m, pm, am: L._masked_softmax(x.bfloat16(), m, 2),
    "3d_type_ignored": lambda L, x, m, pm, am: L._masked_softmax(x[0], m[0], -1, 7),
    "0d": lambda L, x, m, pm, am: L._masked_softmax(L.tensor(1.5), L.tensor(False), -1, 2),
    "0d_masked": lambda L, x, m, pm, am: L._masked_softmax(L.tensor(1.5), L.tensor(True), 0, 2),
    "float_mask": lambda L, x, m, pm, am: L._masked_softmax(x, m.float()),
    "shape": lambda L, x, m, pm, am: L._masked_softmax(x, m[0]),
    "type_5": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 3, 5),
    "padding_shape": lambda L, x, m, pm, am: L._masked_softmax(x, am[:3], 3, 1),
    "attention_shape": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 3, 0),
    "int_input": lambda L, x, m, pm, am: L._masked_softmax(x.int(), m),
    "dim_range": lambda L, x, m, pm, am: L._masked_softmax(x, m, 4),
    "type_undefined": lambda L, x, m, pm, am: L._masked_softmax(x, pm),
    "int_before_type": lambda L, x, m, pm, am: L._masked_softmax(x.int(), pm, 3, 7),
    "dim_before_type": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 7, 7),
    "float_type": lambda L, x, m, pm, am: L._masked_softmax(x, pm, 3, 1.0),
    "bool_dim": lambda L, x, m, pm, am: L._masked_softmax(x, pm, True, 1),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_masked_softmax_as_pytorch(real_torch, name):
    got, want = (_outcome(L, lambda L: CALLS[name](L, *_inputs(L))) for L in (ctorch, real_torch))
    assert got[:2] == want[:2]
    if want[0] == "ok":
        tol = 4e-3 if want[1] in ("float16", "bfloat16") else 1e-6
        np.testing.assert_allclose(got[2], want[2], rtol=tol, atol=tol)
        np.testing.assert_array_equal(np.isnan(got[2]), np.isnan(want[2]))


#: the default-mask form of each call (PyTorch's backward reads the mask as given, so
#: its own gradient of a padding or attention mask fails: "Mask shape should match grad
#: shape"; compat's is compared with PyTorch's of the mask spread to the input's shape)
SPREAD = {
    "default": lambda L, x, m, pm, am: L._masked_softmax(x, m),
    "padding_last": lambda L, x, m, pm, am: L._masked_softmax(
        x, pm[:, None, None, :].expand(x.shape), 3, 2
    ),
    "padding_dim2": lambda L, x, m, pm, am: L._masked_softmax(
        x, pm[:, None, None, :].expand(x.shape), 2, 2
    ),
    "attention_dim1": lambda L, x, m, pm, am: L._masked_softmax(x, am.expand(x.shape), 1, 2),
}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 5), kind=st.sampled_from(sorted(SPREAD)))
def test_masked_softmax_gradient_as_pytorch(seed, n, kind):
    real_torch = import_real_torch()

    def grads(L, calls):
        x, m, pm, am = _inputs(L, seed, (2, 2, n, n))
        x.requires_grad_()
        y = calls[kind](L, x, m, pm, am)
        ct = L.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(y.shape)))
        (y.nan_to_num(0.0) * ct.float()).sum().backward()
        return y.grad_fn.name(), npv(y.detach()), npv(x.grad)

    got, want = grads(ctorch, CALLS), grads(real_torch, SPREAD)
    assert got[0] == want[0] == "MaskedSoftmaxBackward0"
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)
