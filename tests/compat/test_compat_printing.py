"""Tensor ``repr``/``str``/``format`` and ``set_printoptions``, compared character for
character with real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

# each case builds a tensor from NumPy data with either library (same values exactly)
_CASES = {
    "float_vec": lambda T: T.tensor([1.0, 2.0]),
    "float_scalar": lambda T: T.tensor(3.0),
    "fixed": lambda T: T.tensor([1.5, 2.25]),
    "fixed_scalar": lambda T: T.tensor(3.7),
    "negative_ints": lambda T: T.tensor([-1.0, 2.0]),
    "neg_zero": lambda T: T.tensor([-0.0, 1.0]),
    "int": lambda T: T.tensor([1, 2, 3]),
    "int_scalar": lambda T: T.tensor(5),
    "int32": lambda T: T.tensor([1, 2], dtype=T.int32),
    "int16_wide": lambda T: T.tensor([1, -200, 3], dtype=T.int16),
    "uint8": lambda T: T.tensor([1, 2], dtype=T.uint8),
    "float64": lambda T: T.tensor([1.0, 2.0], dtype=T.float64),
    "float64_scalar": lambda T: T.tensor(2.5, dtype=T.float64),
    "float16": lambda T: T.tensor([1.0, 2.0], dtype=T.float16),
    "bool": lambda T: T.tensor([True, False]),
    "bool_scalar": lambda T: T.tensor(True),
    "matrix": lambda T: T.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4)),
    "int_3d": lambda T: T.tensor(np.arange(24).reshape(2, 3, 4)),
    "float_3d": lambda T: T.tensor(np.arange(60.0, dtype=np.float32).reshape(3, 4, 5) - 30),
    "wrapped": lambda T: T.tensor((np.arange(100.0).reshape(10, 10) / 3).astype(np.float32)),
    "linspace": lambda T: T.tensor(np.linspace(0, 1, 50).astype(np.float32)),
    "sci_small": lambda T: T.tensor([1e-5, 1.0]),
    "sci_large": lambda T: T.tensor([1e10, 1.0]),
    "sci_ratio": lambda T: T.tensor([[1e-3, 2e5], [3.0, 4.0]]),
    "sci_1e8": lambda T: T.tensor([2e8]),
    "sci_big_int": lambda T: T.tensor([123456789.0]),
    "spread": lambda T: T.tensor([0.1234567, 123.456]),
    "nonfinite": lambda T: T.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
    "zeros": lambda T: T.tensor([0.0, 0.0]),
    "complex": lambda T: T.tensor([1 + 2j, 3 - 1j]),
    "complex_matrix": lambda T: T.tensor([[1 + 0.5j, -2 - 1j], [0.25j, 3.0]]),
    "complex_scalar": lambda T: T.tensor(-1.5 - 2j),
    "empty": lambda T: T.zeros(0),
    "empty_2d": lambda T: T.zeros(2, 0),
    "empty_int": lambda T: T.zeros(0, dtype=T.int64),
    "summarized_float": lambda T: T.tensor(np.arange(2000.0, dtype=np.float32)),
    "summarized_int_2d": lambda T: T.tensor(np.arange(2000).reshape(40, 50)),
    "summarized_fixed_2d": lambda T: T.tensor(
        (np.arange(3000.0).reshape(30, 100) / 8).astype(np.float32)
    ),
    "requires_grad": lambda T: T.tensor([1.5, 2.25], requires_grad=True),
    "grad_fn_add": lambda T: T.tensor([1.0, 2.0], requires_grad=True) + 1,
    "grad_fn_sum": lambda T: T.ones(2, 2, requires_grad=True).sum(),
    "grad_fn_mean": lambda T: (T.tensor([1.0, 2.0], requires_grad=True) * 2).mean(),
    "grad_fn_dtype": lambda T: T.tensor([0.5, 0.25], dtype=T.float64, requires_grad=True) * 3,
    "grad_fn_wraps": lambda T: T.ones(20, requires_grad=True) * 1.5,
    "detached": lambda T: T.tensor([1.0, 2.0], requires_grad=True).detach(),
    "parameter": lambda T: T.nn.Parameter(T.ones(2)),
}

_OPTIONS = [
    {},
    {"precision": 2},
    {"profile": "short"},
    {"threshold": 5, "edgeitems": 1},
    {"linewidth": 40},
    {"sci_mode": True},
    {"sci_mode": False, "precision": 6},
    {"profile": "full"},
    {"edgeitems": 0, "threshold": 3},
]


@pytest.fixture
def printoptions(real_torch):
    """Restore both libraries' defaults after the test."""
    yield
    for lib in (ctorch, real_torch):
        lib.set_printoptions(profile="default")


@pytest.mark.parametrize("opts", _OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_repr_matches_pytorch(real_torch, printoptions, opts):
    for lib in (ctorch, real_torch):
        lib.set_printoptions(**opts)
    bad = []
    for name, make in _CASES.items():
        ours, theirs = make(ctorch), make(real_torch)
        if repr(ours) != repr(theirs) or str(ours) != str(theirs):
            bad.append(f"{name}:\n{ours!r}\n{theirs!r}")
    assert not bad, "\n".join(bad)


def test_get_printoptions(real_torch, printoptions):
    for lib in (ctorch, real_torch):
        lib.set_printoptions(precision=3, linewidth=100)
    assert ctorch.get_printoptions() == {
        k: v
        for k, v in real_torch._tensor_str.get_printoptions().items()
        if k in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")
    }


def test_format(lib):
    assert format(lib.tensor(2.345), ".2f") == "2.35"
    assert f"{lib.tensor(3):d}" == "3" and f"{lib.tensor(True)}" == "True"
    assert f"{lib.tensor(1.5, requires_grad=True) * 2:.1f}" == "3.0"
    assert format(lib.tensor([1.0, 2.0]), "") == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        format(lib.tensor([1.0, 2.0]), ".2f")
    with pytest.raises(TypeError):
        format(lib.tensor([1.0]), ".2f")  # one element, but not 0-d
    with pytest.raises(TypeError):
        format(lib.nn.Parameter(lib.tensor(1.0)), ".2f")  # only plain tensors format values
