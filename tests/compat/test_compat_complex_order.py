"""compat refuses complex inputs where PyTorch's CPU kernels do, now that funcgrad orders
complex values (lexicographically, as JAX): sort-based ops and full ``max``/``min`` raise
PyTorch's exception type and message (checked against the installed PyTorch)."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

CASES = {
    "sort": lambda t, y: t.sort(y),
    "argsort": lambda t, y: t.argsort(y),
    "msort": lambda t, y: t.msort(y),
    "Tensor.sort": lambda t, y: y.sort(),
    "topk": lambda t, y: t.topk(y, 1),
    "kthvalue": lambda t, y: t.kthvalue(y, 1),
    "median": lambda t, y: t.median(y),
    "median_dim": lambda t, y: t.median(y, 1),
    "nanmedian": lambda t, y: t.nanmedian(y),
    "max": lambda t, y: t.max(y),
    "min": lambda t, y: t.min(y),
    "Tensor.max": lambda t, y: y.max(),
}


def _error(lib, case, dtype):
    y = lib.tensor([[1 + 2j, 3 - 1j], [0.5 + 1j, 2 + 2j]], dtype=getattr(lib, dtype))
    with pytest.raises(Exception) as info:
        CASES[case](lib, y)
    return type(info.value), str(info.value).strip()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_refused_as_pytorch(real_torch, case, dtype):
    assert _error(ctorch, case, dtype) == _error(real_torch, case, dtype)


def test_real_inputs_still_sort():
    y = ctorch.tensor([3.0, 1.0, 2.0])
    assert ctorch.sort(y).values.tolist() == [1.0, 2.0, 3.0]
    assert float(ctorch.max(y)) == 3.0
