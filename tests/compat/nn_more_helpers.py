"""Shared oracle comparison for the ``test_compat_nn_more_*`` tests (a plain module).

``compare(real_torch, fn, arrays)`` runs ``fn(F, torch, *tensors)`` on compat and on real
PyTorch with the same inputs, back-propagates the same random cotangent through the
(first) output, and checks shapes, dtypes, values and the gradient of every floating
input that requires one.
"""

from __future__ import annotations

import numpy as np

import compat.torch as ctorch
import compat.torch.nn.functional as CF

F64 = dict(rtol=1e-9, atol=1e-10)
F32 = dict(rtol=2e-5, atol=2e-6)


def npv(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _run(lib, F, fn, arrays, grads, ct_seed):
    ts = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        req = (grads is None and a.dtype.kind == "f") or (grads is not None and i in grads)
        ts.append(lib.tensor(a, requires_grad=bool(req)))
    out = fn(F, lib, *ts)
    extra = None
    if isinstance(out, tuple):
        out, extra = out
    if out.requires_grad:
        rng = np.random.default_rng(ct_seed)
        ct = rng.standard_normal(tuple(out.shape)).astype(npv(out).dtype)
        (out * lib.tensor(ct)).sum().backward()
    return out, extra, [t.grad for t in ts]


def compare(real_torch, fn, arrays, grads=None, tol=None, ct_seed=0):
    """Compare ``fn(F, torch, *tensors)`` on compat and PyTorch; returns compat's output.

    ``grads`` lists the indices of the inputs that require grad (default: the floating ones).
    """
    TF = real_torch.nn.functional
    y, yi, gs = _run(ctorch, CF, fn, arrays, grads, ct_seed)
    yt, yti, gts = _run(real_torch, TF, fn, arrays, grads, ct_seed)
    if tol is None:
        tol = F64 if str(yt.dtype) == "torch.float64" else F32
    assert tuple(y.shape) == tuple(yt.shape)
    assert str(y.dtype) == str(yt.dtype)
    np.testing.assert_allclose(npv(y), npv(yt), **tol)
    if yti is not None:
        assert str(yi.dtype) == str(yti.dtype)
        np.testing.assert_array_equal(npv(yi), npv(yti))
    for g, gt in zip(gs, gts):
        assert (g is None) == (gt is None)
        if g is not None:
            np.testing.assert_allclose(npv(g), npv(gt), **tol)
    return y


def same_error(real_torch, fn, arrays):
    """Both libraries raise the same exception type; returns (compat's, torch's) exception."""
    TF = real_torch.nn.functional
    errs = []
    for lib, F in ((ctorch, CF), (real_torch, TF)):
        ts = [lib.tensor(np.asarray(a)) for a in arrays]
        try:
            fn(F, lib, *ts)
        except Exception as e:
            errs.append(e)
        else:
            errs.append(None)
    assert errs[1] is not None, "PyTorch accepted the input"
    assert type(errs[0]) is type(errs[1]), (errs[0], errs[1])
    return errs
