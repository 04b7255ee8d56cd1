"""Calls built from op-table rows' samples, shared by the tests that run the table.

A row's :class:`~compat._core.optable.Sample` says its input shapes, domain and dtypes
once; ``arrays`` draws them, ``call`` runs one form of the row (``torch.X``,
``Tensor.X`` or the in-place ``X_``) on either library.
"""

from __future__ import annotations

import warnings

import numpy as np
from torch_oracle import npv

from compat._core.optable import SPD, Idx, Mask, T
from funcgrad.primitives import declared_row


def domain(sample):
    """The sample's input domain ``(lo, hi)``: its own, or the one the funcgrad primitive
    or declared composite it names declares (written once, on that row, for both
    libraries' tests)."""
    if isinstance(sample.domain, str):
        return declared_row(sample.domain).domain
    return sample.domain


def arrays(sample, seed):
    """The sample's tensor arguments as NumPy arrays, in call order (markers resolved):
    ``(tensors, args, kwargs)``."""
    rng = np.random.default_rng(seed)
    lo, hi = domain(sample)

    def make(spec):
        if isinstance(spec, Idx):
            return rng.integers(0, spec.high, spec.shape)
        if isinstance(spec, Mask):
            return rng.random(spec.shape) < 0.5
        if isinstance(spec, SPD):
            a = rng.uniform(lo, hi, (spec.n, spec.n))
            return (a @ a.T + spec.n * np.eye(spec.n)).astype(sample.dtype)
        shape = spec.shape if isinstance(spec, T) else spec
        if sample.dtype == "int64":
            return rng.integers(int(np.floor(lo)), int(np.ceil(hi)) + 1, shape)
        if sample.dtype.startswith("complex"):
            return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(
                sample.dtype
            )
        return rng.uniform(lo, hi, shape).astype(sample.dtype)

    def walk(v):
        if isinstance(v, (T, Idx, Mask, SPD)):
            return make(v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    tensors = [make(s) for s in sample.tensors]
    args = [walk(a) for a in sample.args]
    kwargs = {k: walk(v) for k, v in sample.kwargs}
    return tensors, args, kwargs


def to_lib(lib, v, requires_grad, leaves):
    """``v`` with its NumPy arrays as ``lib`` tensors (float ones appended to ``leaves``
    and requiring grad when ``requires_grad``)."""
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        if requires_grad and v.dtype.kind == "f":
            t.requires_grad_(True)
            leaves.append(t)
        return t
    if isinstance(v, list):
        return [to_lib(lib, x, requires_grad, leaves) for x in v]
    return v


def function_of(lib, d):
    """``torch.X`` or ``torch.linalg.X`` of either library."""
    ns = lib if d.module == "torch" else getattr(lib, d.module)
    return getattr(ns, d.name.rpartition(".")[2])


def call(lib, d, sample, data, form, requires_grad=False):
    """Row ``d`` called on ``data`` in ``form`` (``"function"``, ``"method"`` or
    ``"inplace"``): ``(output, float leaves)``."""
    tensors, args, kwargs = data
    leaves: list = []
    ts = [to_lib(lib, a, requires_grad, leaves) for a in tensors]
    args = [to_lib(lib, a, requires_grad, leaves) for a in args]
    kwargs = {k: to_lib(lib, v, requires_grad, leaves) for k, v in kwargs.items()}
    if form == "function":
        out = function_of(lib, d)(*sample.prefix, *ts, *args, **kwargs)
    elif form == "method":
        out = getattr(ts[0], d.name)(*ts[1:], *args, **kwargs)
    else:  # in place on a non-leaf copy
        self = ts[0] * 1 if requires_grad and ts[0].requires_grad else ts[0].clone()
        out = getattr(self, d.name + "_")(*ts[1:], *args, **kwargs)
        assert out is self
    return out, leaves


def empty_out(lib, plain):
    """Empty ``lib`` tensors of the dtypes of the plain call's outputs ``plain``, as the
    row's ``out=`` takes them (one tensor, or a tuple); ``None`` where an output is not a
    tensor (``allclose``, ``equal``: no ``out=``)."""
    if not all(hasattr(o, "dtype") for o in flat(plain)):
        return None
    outs = [lib.empty(0, dtype=o.dtype) for o in flat(plain)]
    return outs[0] if len(outs) == 1 and not isinstance(plain, tuple) else tuple(outs)


def call_with_out(lib, d, sample, data, out):
    """Row ``d``'s ``torch.X`` called on ``data`` with ``out=out`` (warnings ignored:
    deprecations are tested on their own); returns what it returns."""
    tensors, args, kwargs = data
    ts = [to_lib(lib, a, False, []) for a in tensors]
    args = [to_lib(lib, a, False, []) for a in args]
    kwargs = {k: to_lib(lib, v, False, []) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function_of(lib, d)(*sample.prefix, *ts, *args, out=out, **kwargs)


def flat(out):
    """A (nested) tuple or list of outputs as one flat list."""
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in flat(x)]
    return [out]


def gauged(d, out):
    """The row's outputs, or their gauge-invariant functions for rows with a ``gauge``."""
    return out if d.gauge is None else d.gauge(out)


def assert_same(ours, theirs, name):
    """compat's outputs against PyTorch's: values (to the dtype's tolerance), dtypes, shapes."""
    ours, theirs = flat(ours), flat(theirs)
    assert len(ours) == len(theirs), name
    for o, t in zip(ours, theirs):
        if not hasattr(t, "detach"):
            assert o == t, name
            continue
        assert str(o.dtype) == str(t.dtype), (name, o.dtype, t.dtype)
        assert tuple(o.shape) == tuple(t.shape), (name, o.shape, t.shape)
        if str(t.dtype) == "torch.bfloat16":  # to bfloat16 rounding (2 ulps)
            o, t, tol = o.detach().double(), t.detach().double(), (2**-7, 2**-7)
        elif str(t.dtype) in ("torch.float32", "torch.complex64"):
            tol = (1e-5, 1e-6)
        else:
            tol = (1e-7, 1e-9)
        t = t.resolve_conj()  # PyTorch's lazy conjugation
        np.testing.assert_allclose(npv(o), npv(t), rtol=tol[0], atol=tol[1], err_msg=name)
