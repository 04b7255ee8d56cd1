"""compat's ``cov`` and ``corrcoef`` (functions and Tensor methods) against PyTorch 2.13 (the
``real_torch`` fixture): result dtypes of integer, bool, float, half and complex inputs;
``correction`` (an int; floats and bools refused), ``fweights`` and ``aweights`` with
PyTorch's refusals (negative or NaN weights, weights summing to zero, wrong shapes, dtypes
and types); 0-d, 1-d and 2-d inputs, a single observation and none (NaN with PyTorch's
warning); the last node's name; and gradients of input and weights, real and complex."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv, outcome

import compat.torch as ctorch

X = [[1, 2, 4, 7], [0, 3, 1, 2], [5, 5, 6, 9]]


def _x(L, dtype="float64"):
    return L.tensor(X, dtype=getattr(L, dtype))


#: name -> a call of ``lib`` (``L``): both libraries must agree on its outcome
CASES = {
    "int": lambda L: L.cov(L.tensor(X)),
    "int_method": lambda L: L.tensor(X).cov(),
    "int32": lambda L: L.cov(_x(L, "int32")),
    "uint8_1d": lambda L: L.cov(L.tensor([1, 5, 2], dtype=L.uint8)),
    "bool": lambda L: L.cov(L.tensor(X) > 2),
    "float32": lambda L: L.cov(_x(L, "float32")),
    "float16": lambda L: L.cov(_x(L, "float16")),
    "bfloat16": lambda L: L.cov(_x(L, "bfloat16")),
    "complex64": lambda L: L.cov(_x(L, "complex64") * (1 + 1j) + 1j * _x(L, "complex64").flip(1)),
    "0d": lambda L: L.cov(L.tensor(3.0)),
    "1d": lambda L: L.cov(L.tensor([1.0, 2, 4])),
    "one_variable": lambda L: L.cov(L.tensor([[1.0, 2, 4]])),
    "3d": lambda L: L.cov(L.zeros(2, 2, 2)),
    "single_observation": lambda L: L.cov(L.tensor([[1.0], [2.0]])),
    "single_observation_c0": lambda L: L.cov(L.tensor([[1.0], [2.0]]), correction=0),
    "no_observations": lambda L: L.cov(L.zeros(2, 0)),
    "correction2": lambda L: L.cov(_x(L), correction=2),
    "correction_n": lambda L: L.cov(_x(L), correction=4),
    "correction_past_n": lambda L: L.cov(_x(L), correction=5),
    "correction_negative": lambda L: L.cov(_x(L), correction=-1),
    "correction_float": lambda L: L.cov(_x(L), correction=0.5),
    "correction_float_whole": lambda L: L.cov(_x(L), correction=1.0),
    "correction_bool": lambda L: L.cov(_x(L), correction=True),
    "fweights": lambda L: L.cov(_x(L), fweights=L.tensor([1, 2, 0, 3])),
    "fweights_int32": lambda L: L.cov(_x(L), fweights=L.tensor([1, 2, 0, 3], dtype=L.int32)),
    "fweights_float": lambda L: L.cov(_x(L), fweights=L.tensor([1.0, 2, 0, 3])),
    "fweights_bool": lambda L: L.cov(_x(L), fweights=L.tensor([True, True, False, True])),
    "fweights_negative": lambda L: L.cov(_x(L), fweights=L.tensor([1, -2, 0, 3])),
    "fweights_numel": lambda L: L.cov(_x(L), fweights=L.tensor([1, 2, 3])),
    "fweights_2d": lambda L: L.cov(_x(L), fweights=L.tensor([[1, 2, 0, 3]])),
    "fweights_list": lambda L: L.cov(_x(L), fweights=[1, 2, 0, 3]),
    "fweights_zero_sum": lambda L: L.cov(_x(L), fweights=L.tensor([0, 0, 0, 0])),
    "fweights_int_input": lambda L: L.cov(L.tensor(X), fweights=L.tensor([1, 2, 0, 3])),
    "fweights_0d": lambda L: L.cov(L.tensor(2.0), fweights=L.tensor(3)),
    "fweights_1d": lambda L: L.cov(L.tensor([1.0, 2, 4]), fweights=L.tensor([1, 2, 3])),
    "fweights_small_dof": lambda L: L.cov(_x(L), fweights=L.tensor([1, 0, 0, 0])),
    "aweights": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, 0.5, 2, 3])),
    "aweights_float32": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, 0.5, 2, 3])),
    "aweights_float64_x32": lambda L: L.cov(
        _x(L, "float32"), aweights=L.tensor([1.0, 0.5, 2, 3], dtype=L.float64)
    ),
    "aweights_int_input": lambda L: L.cov(L.tensor(X), aweights=L.tensor([1.0, 0.5, 2, 3])),
    "aweights_int": lambda L: L.cov(_x(L), aweights=L.tensor([1, 2, 0, 3])),
    "aweights_complex": lambda L: L.cov(
        _x(L), aweights=L.tensor([1.0, 2, 3, 4], dtype=L.complex64)
    ),
    "aweights_negative": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, -2, 0, 3])),
    "aweights_nan": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, float("nan"), 0, 3])),
    "aweights_numel": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, 2, 3])),
    "aweights_2d": lambda L: L.cov(_x(L), aweights=L.tensor([[1.0, 2, 3, 4]])),
    "aweights_zero_sum": lambda L: L.cov(_x(L), aweights=L.tensor([0.0, 0, 0, 0])),
    "aweights_small_dof": lambda L: L.cov(_x(L), aweights=L.tensor([1.0, 0, 0, 0])),
    "both_weights": lambda L: L.cov(
        _x(L), fweights=L.tensor([1, 2, 1, 3]), aweights=L.tensor([1.0, 0.5, 2, 3])
    ),
    "both_weights_c2": lambda L: L.cov(
        _x(L), correction=2, fweights=L.tensor([1, 2, 1, 3]), aweights=L.tensor([1.0, 0.5, 2, 3])
    ),
    "method_keywords": lambda L: _x(L).cov(correction=0, aweights=L.tensor([1.0, 0.5, 2, 3])),
    "corr_int": lambda L: L.corrcoef(L.tensor(X)),
    "corr_method": lambda L: _x(L).corrcoef(),
    "corr_int_method": lambda L: L.tensor(X).corrcoef(),
    "corr_bool": lambda L: L.corrcoef(L.tensor(X) > 2),
    "corr_0d": lambda L: L.corrcoef(L.tensor(3.0)),
    "corr_1d": lambda L: L.corrcoef(L.tensor([1.0, 2, 4])),
    "corr_3d": lambda L: L.corrcoef(L.zeros(2, 2, 2)),
    "corr_complex": lambda L: L.corrcoef(
        _x(L, "complex64") * (1 + 1j) + 1j * L.tensor([[1, 0, 0, 2]] * 3)
    ),
    "corr_single_observation": lambda L: L.corrcoef(L.tensor([[1.0], [2.0]])),
    "corr_no_observations": lambda L: L.corrcoef(L.zeros(2, 0)),
    "corr_constant_row": lambda L: L.corrcoef(L.tensor([[1.0, 1, 1], [2, 3, 4]])),
    "corr_nan": lambda L: L.corrcoef(L.tensor([[1.0, float("nan"), 3], [1, 2, 3]])),
    "corr_float16": lambda L: L.corrcoef(_x(L, "float16")),
    "grad_fn_cov": lambda L: L.cov(L.tensor(X, dtype=L.float64, requires_grad=True)),
    "grad_fn_cov_aweights": lambda L: L.cov(
        _x(L), aweights=L.tensor([1.0, 0.5, 2, 3], dtype=L.float64, requires_grad=True)
    ),
    "grad_fn_corr": lambda L: L.corrcoef(L.tensor(X, dtype=L.float64, requires_grad=True)),
    "grad_fn_corr_1d": lambda L: L.corrcoef(L.tensor([1.0, 2, 4], requires_grad=True)),
    "grad_fn_corr_complex": lambda L: L.corrcoef(
        L.tensor(X, dtype=L.complex128, requires_grad=True)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(real_torch, name):
    ours, theirs = outcome(ctorch, CASES[name]), outcome(real_torch, CASES[name])
    assert len(ours) == len(theirs), (ours, theirs)
    if len(ours) == 2:
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2] and ours[3:] == theirs[3:], (ours, theirs)
    tol = 1e-2 if ours[0] in ("torch.float16", "torch.bfloat16") else 1e-5
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol)


def _grads(lib, fn, cplx, seed):
    rng = np.random.default_rng(seed)
    xv = rng.normal(size=(3, 5)) + (1j * rng.normal(size=(3, 5)) if cplx else 0)
    x = lib.tensor(xv, requires_grad=True)
    a = lib.tensor(rng.uniform(0.5, 2, 5), requires_grad=True)
    r = fn(lib, x, a)
    ct = lib.tensor(rng.normal(size=tuple(r.shape)) * (1 + 0.5j if cplx else 1))
    (r * ct).real.sum().backward() if cplx else (r * ct).sum().backward()
    return npv(x.grad), npv(a.grad)


GRADS = {
    "cov": lambda L, x, a: L.cov(x),
    "cov_weights": lambda L, x, a: L.cov(x, aweights=a, fweights=L.tensor([1, 2, 0, 3, 1])),
    "cov_correction2": lambda L, x, a: L.cov(x, correction=2, aweights=a),
    "cov_1d": lambda L, x, a: x[1].cov(correction=0),
    "corrcoef": lambda L, x, a: L.corrcoef(x),
    "corrcoef_1d": lambda L, x, a: x[0].corrcoef(),
}


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_as_pytorch(real_torch, name, cplx):
    ours = _grads(ctorch, GRADS[name], cplx, 7)
    theirs = _grads(real_torch, GRADS[name], cplx, 7)
    for p, q in zip(ours, theirs):
        assert (p is None) == (q is None), (ours, theirs)
        if p is not None:
            np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-12)
