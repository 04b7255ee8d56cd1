"""Every row of compat's op table against real PyTorch, from the row's own samples.

For each sample of each row: the ``torch.X`` function's values, dtype and shape; the
``Tensor.X`` method and its aliases; the in-place ``X_`` on a fresh tensor; the
gradients of every float input (float64, against PyTorch's autograd) and the backward
node's name. Nothing here lists ops by hand: a new row is tested by declaring it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import sample as _sample
from optable_cases import arrays as _arrays
from optable_cases import assert_same as _assert_same
from optable_cases import call as _call
from optable_cases import call_with_out as _call_with_out
from optable_cases import empty_out as _empty_out
from optable_cases import flat as _flat
from optable_cases import function_of as _function
from optable_cases import gauged as _gauged

import compat.torch as ctorch
from compat._core.optable import REGISTRY

CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, d in sorted(REGISTRY.items())
    for i in range(len(d.samples))
    if not d.random
]


def test_every_row_has_samples():
    missing = sorted(n for n, d in REGISTRY.items() if not d.samples and not d.random)
    assert missing == []


def _row(case) -> str:
    return case.values[0]


@pytest.mark.parametrize(("name", "i"), _sample(CASES, salt="test_row_matches_pytorch", group=_row))
def test_row_matches_pytorch(name, i, real_torch):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = _arrays(sample, seed=i)
    forms = []
    if d.function:
        forms.append("function")
    if d.method_impl() is not None and sample.method:
        forms.append("method")
    if d.inplace is not False and sample.method:
        forms.append("inplace")
    assert forms, name
    for form in forms:
        # deprecation warnings are once per process in both libraries (and tested on their
        # own): which test calls a deprecated op first depends on the xdist schedule
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                theirs, _ = _call(real_torch, d, sample, data, form)
            except Exception as e:  # PyTorch rejects this form: compat must, with its type
                with pytest.raises(type(e)):
                    _call(ctorch, d, sample, data, form)
                continue
            ours, _ = _call(ctorch, d, sample, data, form)
        _assert_same(_gauged(d, ours), _gauged(d, theirs), f"{name} ({form})")


@pytest.mark.parametrize(
    ("name", "i"),
    _sample(
        [
            c
            for c in CASES
            if REGISTRY[c.values[0]].samples[c.values[1]].grad
            and REGISTRY[c.values[0]].samples[c.values[1]].dtype.startswith("float")
        ],
        salt="test_row_gradients_match_pytorch",
        group=_row,
    ),
)
def test_row_gradients_match_pytorch(name, i, real_torch):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = _arrays(sample, seed=i)
    form = "function" if d.function else "method"
    results = []
    for lib in (real_torch, ctorch):
        with warnings.catch_warnings():  # once-per-process deprecations: tested on their own
            warnings.simplefilter("ignore")
            out, leaves = _call(lib, d, sample, data, form, requires_grad=True)
        out = _gauged(d, out)
        outs = [o for o in _flat(out) if hasattr(o, "grad_fn") and o.requires_grad]
        assert outs, name
        rng = np.random.default_rng(7)
        loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
        grads = lib.autograd.grad(loss, leaves, allow_unused=True)
        node = outs[0].grad_fn.name() if outs[0].grad_fn is not None else None
        # force: PyTorch returns "ZeroTensor"s for some gradients (sgn)
        arrays = [None if g is None else g.detach().numpy(force=True) for g in grads]
        results.append((arrays, node))
    (theirs, their_node), (ours, our_node) = results
    for g_t, g_o in zip(theirs, ours):
        if g_t is None:
            assert g_o is None or not np.any(g_o), name
        else:
            np.testing.assert_allclose(g_o, g_t, rtol=1e-6, atol=1e-9, err_msg=name)
    if d.node_name:
        assert our_node == their_node, (name, our_node, their_node)


@pytest.mark.parametrize(
    "name", sorted(n for n, d in REGISTRY.items() if d.function and d.samples and not d.random)
)
def test_row_out_argument_matches_pytorch(name, real_torch):
    """``torch.X(..., out=t)`` where PyTorch has an ``out=`` overload: the result lands in
    ``t`` (resized from empty, PyTorch's dtype) and ``t`` is returned."""
    d = REGISTRY[name]
    sample = d.samples[0]
    data = _arrays(sample, seed=0)
    results = []
    for lib in (real_torch, ctorch):
        with warnings.catch_warnings():  # deprecation warnings are tested on their own
            warnings.simplefilter("ignore")
            plain, _ = _call(lib, d, sample, data, "function")
        out = _empty_out(lib, plain)
        if out is None:
            return  # a Python value (allclose, equal): no out=
        try:
            got = _call_with_out(lib, d, sample, data, out)
        except TypeError:
            if lib is real_torch:
                return  # PyTorch has no out= overload for this op
            raise
        assert all(a is b for a, b in zip(_flat(got), _flat(out))), name
        results.append(_gauged(d, out))
    _assert_same(results[1], results[0], f"{name} (out=)")


def _bf16(lib, v):
    """A sample's float arrays as bfloat16 tensors of ``lib`` (both libraries round the
    same float32 values to bfloat16 to nearest even), other arguments as usual."""
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        return t.to(lib.bfloat16) if v.dtype.kind == "f" else t
    if isinstance(v, list):
        return [_bf16(lib, x) for x in v]
    return v


#: rows whose PyTorch CPU bfloat16 kernel returns garbage (inf/nan for any input):
#: compat computes them in float32 instead, tested in test_compat_linalg_decomp.py
BF16_BROKEN_IN_PYTORCH = ("linalg.matrix_exp", "matrix_exp")

BF16_CASES = [
    pytest.param(name, id=name)
    for name, d in sorted(REGISTRY.items())
    if d.function
    and not d.random
    and d.samples
    and d.samples[0].dtype.startswith("float")
    and name not in BF16_BROKEN_IN_PYTORCH
]


@pytest.mark.parametrize("name", BF16_CASES)
def test_row_in_bfloat16_matches_pytorch(name, real_torch):
    """Every float row's first sample with its float inputs in bfloat16: PyTorch's result
    dtype and values to bfloat16 rounding (2 ulps), or PyTorch's exception type."""
    d = REGISTRY[name]
    sample = d.samples[0]
    tensors, args, kwargs = _arrays(sample, seed=0)

    def call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _function(lib, d)(
                *sample.prefix,
                *[_bf16(lib, a) for a in tensors],
                *[_bf16(lib, a) for a in args],
                **{k: _bf16(lib, v) for k, v in kwargs.items()},
            )

    try:
        theirs = call(real_torch)
    except Exception as e:  # PyTorch has no bfloat16 kernel here: compat says so too
        with pytest.raises(type(e)):
            call(ctorch)
        return
    _assert_same(_gauged(d, call(ctorch)), _gauged(d, theirs), name)
