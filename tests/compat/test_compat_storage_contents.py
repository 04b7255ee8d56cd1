"""Storages against PyTorch 2.13: their contents (``tolist``, indexing, ``type()``), the
legacy classes (``torch.FloatStorage(...)``, ``isinstance``, ``from_buffer``),
``torch.TypedStorage``/``UntypedStorage`` constructors, ``Tensor.new(storage)`` sharing the
memory, ``__sizeof__`` growing with the bytes and ``_cdata`` naming one memory (compat's
storages had sizes and addresses only, and no classes under ``torch``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_LEGACY = [
    "ByteStorage",
    "CharStorage",
    "ShortStorage",
    "IntStorage",
    "LongStorage",
    "HalfStorage",
    "FloatStorage",
    "DoubleStorage",
    "BoolStorage",
    "BFloat16Storage",
    "ComplexFloatStorage",
    "ComplexDoubleStorage",
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (TypedStorage's deprecation warning)
        yield


def _both(f):
    out = []
    for lib in (ctorch, torch):
        try:
            out.append(("ok", f(lib)))
        except Exception as e:  # (the oracle's error is the expected value)
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("name", _LEGACY)
def test_legacy_classes(name):
    got, want = _both(
        lambda t: (
            getattr(t, name)().element_size(),
            getattr(t, name)(3).size(),
            getattr(t, name)([1, 0, 2]).tolist(),
            getattr(t, name)([1, 0, 2]).type(),
            str(getattr(t, name).dtype),
            isinstance(getattr(t, name)(2), t.TypedStorage),
            isinstance(t.tensor([1.0]).storage(), getattr(t, name)),
        )
    )
    assert got == want


@pytest.mark.parametrize(
    "dtype",
    ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool", "complex64"],
)
def test_contents_of_tensor_storages(dtype):
    x = np.arange(-3, 9).reshape(3, 4)

    def f(t):
        a = t.tensor(x).to(getattr(t, dtype))
        s = a.t()[1:].storage()  # (a view's storage is its base's memory)
        return s.tolist(), s[0], s[-1], len(s), s.size(), s.type(), s.element_size(), s.nbytes()

    got, want = _both(f)
    assert got == want


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.ByteStorage.from_buffer(bytearray([1, 2, 3, 4])).tolist(),
        lambda t: t.ShortStorage.from_buffer(bytearray([1, 2, 3, 4]), "big").tolist(),
        lambda t: t.ShortStorage.from_buffer(bytearray([1, 2, 3, 4]), "little").tolist(),
        lambda t: t.IntStorage.from_buffer(bytearray([1, 2, 3, 4]), "native")[0],
        lambda t: t.FloatStorage.from_buffer(bytearray([0x40, 0x10, 0, 0]), "big")[0],
        lambda t: t.DoubleStorage.from_buffer(
            bytes(range(16)), "little", count=1, offset=8
        ).tolist(),
        lambda t: t.BoolStorage.from_buffer(bytearray([0, 1, 2, 0x10, 0x40]), "big").tolist(),
        lambda t: t.BoolStorage.from_buffer(bytearray(b"\0x4A"), "big").type(),
        lambda t: t.ShortStorage.from_buffer(bytearray([1, 2, 3]), "big"),
        lambda t: t.ShortStorage.from_buffer(bytearray([1, 2, 3, 4]), "middle"),
        lambda t: t.ShortStorage.from_buffer(bytearray([1, 2, 3, 4])),
        lambda t: t.FloatStorage.from_buffer(bytearray(4), "little", count=2),
        lambda t: t.FloatStorage(2)[5],
        lambda t: t.FloatStorage(2)[0:1],
        lambda t: t.TypedStorage([1, 2], dtype=t.int16).tolist(),
        lambda t: t.TypedStorage(2).dtype == t.float32,
        lambda t: t.UntypedStorage(3).nbytes(),
        lambda t: t.UntypedStorage([1, 255]).nbytes(),
        lambda t: t.tensor([1.0]).untyped_storage().tolist(),
        lambda t: t.tensor([1.0]).untyped_storage().is_shared(),
        lambda t: t.arange(4.0)[1:].storage().is_shared(),
        lambda t: t.UntypedStorage(3).is_shared(),
    ],
)
def test_constructors_and_from_buffer(call):
    got, want = _both(call)  # (values, or refusals: the same error type and words)
    assert got == want


def test_new_of_a_storage_shares_memory():
    got, want = [], []
    for lib, out in ((ctorch, got), (torch, want)):
        x, y, z = lib.tensor([]), lib.randn(4, 4), lib.IntTensor([1, 2, 3])
        n = x.new(y.storage())
        out.append((tuple(n.shape), n.data_ptr() == y.data_ptr()))
        n[5] = 7.0
        out.append(float(y[1, 1]))
        u = x.new(z.untyped_storage())
        out.append((tuple(u.shape), str(u.dtype)))
        with pytest.raises(RuntimeError) as info:
            x.new(z.storage())
        out.append(str(info.value))
    assert got == want


def test_sizeof_grows_with_the_bytes_and_cdata_names_the_memory():
    for lib in (ctorch, torch):
        sizes = [lib.randn(n).storage().__sizeof__() for n in (0, 10, 100)]
        assert (sizes[2] - sizes[0]) == 10 * (sizes[1] - sizes[0]) == 400
        a = lib.randn(3, 4)
        b = lib.tensor([])
        b.set_(a)
        assert b.storage()._cdata == a.storage()._cdata
        assert lib.randn(2).storage()._cdata != a.storage()._cdata
