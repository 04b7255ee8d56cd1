"""Names PyTorch programs use that compat had missing or different (issue 35's sample):
``torch.GradScaler``, ``torch.set_warn_always``/``is_warn_always_enabled``, the legacy
tensor types' ``dtype``, and ``Tensor.to(memory_format=...)``; checked against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

LEGACY = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


def test_top_level_grad_scaler_is_amps(real_torch):
    assert real_torch.GradScaler is real_torch.amp.GradScaler
    assert ctorch.GradScaler is ctorch.amp.GradScaler
    scaler = ctorch.GradScaler(enabled=False)
    assert not scaler.is_enabled()


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types_have_their_dtype(real_torch, name):
    ours, theirs = getattr(ctorch, name).dtype, getattr(real_torch, name).dtype
    assert str(ours) == str(theirs)
    assert getattr(ctorch, name)([1, 0]).dtype == ours


def test_warn_always_makes_once_per_process_warnings_repeat(real_torch):
    for lib in (ctorch, real_torch):
        assert lib.is_warn_always_enabled() is False
        x = lib.tensor(np.eye(3))
        lib.set_warn_always(True)
        try:
            assert lib.is_warn_always_enabled() is True
            for _ in range(2):  # a deprecated op warns at each call, not only the first
                with pytest.warns(UserWarning, match="torch.qr is deprecated"):
                    lib.qr(x)
        finally:
            lib.set_warn_always(False)
        assert lib.is_warn_always_enabled() is False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ctorch.qr(ctorch.tensor(np.eye(3)))  # once again: compat warned already
    assert not [w for w in seen if "torch.qr is deprecated" in str(w.message)]


@pytest.mark.parametrize("fmt", ["contiguous_format", "preserve_format", "channels_last"])
def test_to_memory_format_returns_the_tensor_as_pytorch(real_torch, fmt):
    shape = (1, 2, 2, 3) if fmt == "channels_last" else (2, 3)
    results = []
    for lib in (ctorch, real_torch):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        y = x.to(memory_format=getattr(lib, fmt))
        z = x.to(lib.float64, memory_format=getattr(lib, fmt))
        results.append((y.tolist(), str(z.dtype), z.tolist()))
        if fmt != "channels_last":  # PyTorch returns the tensor itself when nothing changes
            assert y is x
    assert results[0] == results[1]
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        ctorch.ones(2).to(memory_format="channels_last")


def _new_cases(lib):
    x = lib.ones(2, 3, dtype=lib.float64)
    return [
        (tuple(x.new(2, 3).shape), str(x.new(2, 3).dtype), x.new(2, 3).requires_grad),
        x.new([1, 2]).tolist(),
        tuple(x.new().shape),
        tuple(x.new(lib.Size([4])).shape),
        x.new((1, 2)).tolist(),  # a tuple is data, not sizes
        x.new([1.5]).tolist(),
        x.new(lib.tensor([3.0, 4.0], dtype=lib.float64)).tolist(),
    ]


def test_legacy_tensor_new_as_pytorch(real_torch):
    assert _new_cases(ctorch) == _new_cases(real_torch)
    for lib in (ctorch, real_torch):
        x = lib.ones(2, dtype=lib.float64)
        with pytest.raises(TypeError):
            x.new([1], dtype=lib.int32)
        with pytest.raises(TypeError):
            x.new(lib.tensor([1, 2]))  # another dtype


def test_unsafe_split_and_chunk_are_split_and_chunk(real_torch):
    def cases(lib):
        a = lib.arange(6)
        return [
            [t.tolist() for t in lib.unsafe_split(a, 4)],
            [t.tolist() for t in a.unsafe_split(2)],
            [t.tolist() for t in lib.unsafe_chunk(a, 4)],
            [t.tolist() for t in a.unsafe_chunk(3)],
        ]

    assert cases(ctorch) == cases(real_torch)


def test_tensors_made_from_numpy_do_not_share_its_memory(real_torch):
    # compat keeps a CPU tensor made from NumPy data as a read-only NumPy copy (the host
    # tier's values); like PyTorch's torch.tensor, writing to the source changes nothing
    for lib in (ctorch, real_torch):
        a = np.arange(4.0)
        t = lib.tensor(a)
        z = lib.zeros(3)
        a[0] = 100.0
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        t.add_(1.0)  # in place on the tensor, never on the source
        assert a.tolist() == [100.0, 1.0, 2.0, 3.0] and t.tolist() == [1.0, 2.0, 3.0, 4.0]
        assert (z + 1).tolist() == [1.0, 1.0, 1.0]


def test_factories_keep_host_values_and_match_pytorch(real_torch):
    # arange/zeros/tensor (Tensor._make) keep the read-only NumPy copy as the tensor's value
    # (no conversion per new shape: jnp.asarray compiled one), with PyTorch's values/dtypes
    for n in (1, 2, 5):
        for make in (
            lambda lib, n=n: lib.arange(n),
            lambda lib, n=n: lib.arange(0.5, n, 0.5),
            lambda lib, n=n: lib.zeros((n, 2), dtype=lib.float64),
            lambda lib, n=n: lib.tensor(np.arange(n, dtype=np.int32)),
        ):
            got, want = make(ctorch), make(real_torch)
            assert type(got._st.a) is np.ndarray and not got._st.a.flags.writeable
            assert str(got.dtype) == str(want.dtype) and got.tolist() == want.tolist()
            assert (got * 2).tolist() == (want * 2).tolist()
