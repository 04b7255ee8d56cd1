"""Public names PyTorch code calls that compat lacked, against real PyTorch 2.13:
``narrow_copy`` (function and method, ``out=``), ``split_with_sizes_copy`` (``out=``, its
errors), ``set_default_tensor_type`` (legacy types and dotted names, its refusals),
``torch.cpu`` (device queries, the deprecated ``amp`` aliases), ``backends.cpu``'s
``get_cpu_capability`` and ``Tensor.is_pinned``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("args", [(0, 1, 1), (1, 0, 2), (2, -3, 2), (-1, 1, 2)])
def test_narrow_copy_matches_torch(real_torch, args):
    got, want = [], []
    for lib, acc in ((ctorch, got), (real_torch, want)):
        x = lib.tensor(X, requires_grad=True)
        r = lib.narrow_copy(x, *args)
        r2 = x.detach().movedim(-1, 0).narrow_copy(*args)
        assert r.is_contiguous()
        assert r.grad_fn.name() == "NarrowCopyBackward0"
        (r * r).sum().backward()
        acc += [npv(r).copy(), npv(r2), npv(x.grad)]
        out = lib.empty(0)
        lib.narrow_copy(x.detach(), *args, out=out)
        acc.append(npv(out))
        # a copy: writing it leaves the input alone
        r.detach().fill_(-1)
        acc.append(npv(x))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_narrow_copy_errors_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds"):
            lib.narrow_copy(lib.zeros(3), 0, 2, 2)


@pytest.mark.parametrize(
    "dim,sizes", [(0, [1, 1]), (1, [1, 2]), (-1, [3, 0, 1]), (2, [4]), (-2, [0, 3])]
)
def test_split_with_sizes_copy_matches_torch(real_torch, dim, sizes):
    got, want = [], []
    for lib, acc in ((ctorch, got), (real_torch, want)):
        x = lib.tensor(X, requires_grad=True)
        pieces = lib.split_with_sizes_copy(x, sizes, dim=dim)
        assert isinstance(pieces, tuple) and len(pieces) == len(sizes)
        assert all(p.is_contiguous() for p in pieces)
        sum((p * (i + 1)).sum() for i, p in enumerate(pieces)).backward()
        acc += [npv(p) for p in pieces] + [npv(x.grad)]
        out = [lib.full(tuple(p.shape), 7.0) for p in pieces]
        assert lib.split_with_sizes_copy(x.detach(), sizes, dim=dim, out=out) is None
        acc += [npv(o) for o in out]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_split_with_sizes_copy_errors_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        x = lib.zeros(2, 3)
        with pytest.raises(RuntimeError, match="expected an out= argument of size 2, got size 1"):
            lib.split_with_sizes_copy(x, [1, 2], dim=1, out=[lib.empty(2, 1)])
        with pytest.raises(RuntimeError, match="split_sizes to sum exactly to 3"):
            lib.split_with_sizes_copy(x, [1, 1], dim=1)
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got"):
            lib.split_with_sizes_copy(
                x, [1, 2], dim=1, out=[lib.empty(2, 1, dtype=lib.float64), lib.empty(2, 2)]
            )


@pytest.mark.filterwarnings("ignore:torch.set_default_tensor_type")
def test_set_default_tensor_type_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        try:
            with pytest.warns(UserWarning, match="is deprecated as of PyTorch 2.1"):
                lib.set_warn_always(True)  # (the warning is once per process otherwise)
                lib.set_default_tensor_type(lib.DoubleTensor)
            lib.set_warn_always(False)
            assert lib.get_default_dtype() == lib.float64
            assert lib.tensor([1.5]).dtype == lib.float64
            lib.set_default_tensor_type("torch.HalfTensor")
            assert lib.get_default_dtype() == lib.float16
            with pytest.raises(TypeError, match=r"^only floating-point types are supported"):
                lib.set_default_tensor_type(lib.IntTensor)
            with pytest.raises(TypeError, match=r"^invalid type object: only floating-point"):
                lib.set_default_tensor_type(lib.float64)
            with pytest.raises(TypeError, match=r"not available\. Torch not compiled with CUDA"):
                lib.set_default_tensor_type("torch.cuda.FloatTensor")
        finally:
            lib.set_warn_always(False)
            lib.set_default_tensor_type(lib.FloatTensor)
        assert lib.get_default_dtype() == lib.float32


def test_torch_cpu_and_backends_cpu_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        assert lib.cpu.is_available() is True
        assert lib.cpu.device_count() == 1
        assert lib.cpu.current_device() == "cpu"
        assert lib.cpu.synchronize() is None
        with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.GradScaler\(args...\)` is dep"):
            scaler = lib.cpu.amp.GradScaler(init_scale=4.0)
        assert scaler.get_scale() == 4.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.cpu.amp.autocast()  # (compat warns too that it does not autocast)
        assert any(
            w.category is FutureWarning
            and "`torch.cpu.amp.autocast(args...)` is deprecated" in str(w.message)
            for w in caught
        )
    assert ctorch.backends.cpu.get_cpu_capability() == real_torch.backends.cpu.get_cpu_capability()


def test_is_pinned_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        assert lib.randn(3, 5).is_pinned() is False
