"""``dtype=float``/``int``/``bool``/``complex`` as PyTorch 2.13 reads them (the C types of
Python's numbers: ``float`` is ``float64``, ``complex`` is ``complex128``, whatever the
default dtype; compat gave the default dtype), and ``chunk``'s argument errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]

MAKERS: dict[str, Callable[[Any, Any], Any]] = {
    "zeros": lambda lib, d: lib.zeros(2, 3, dtype=d),
    "randn": lambda lib, d: lib.randn((1, 2), dtype=d),
    "arange": lambda lib, d: lib.arange(1, 4, dtype=d),
    "tensor": lambda lib, d: lib.tensor([1, 2], dtype=d),
    "full": lambda lib, d: lib.full((2,), 1, dtype=d),
    "to": lambda lib, d: lib.ones(2, dtype=lib.int32).to(d),
    "to_dtype_kw": lambda lib, d: lib.ones(2).to(dtype=d),
}


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("pytype", [float, int, bool, complex])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_python_types_as_dtypes(maker: str, pytype: type, default: str) -> None:
    if maker == "randn" and pytype in (int, bool):
        pytest.skip("randn of integers is an error in both")
    if maker == "arange" and pytype in (bool, complex):
        pytest.skip("PyTorch has no arange kernel for them")
    dtypes = []
    for lib in LIBS:
        old = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            dtypes.append(str(MAKERS[maker](lib, pytype).dtype))
        finally:
            lib.set_default_dtype(old)
    assert dtypes[0] == dtypes[1]


@pytest.mark.parametrize("shape,chunks", [((3,), 0), ((3,), -2), ((), 2)])
def test_chunk_errors(shape: tuple, chunks: int) -> None:
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.ones(shape).chunk(chunks)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword(name: str) -> None:
    shapes, errors = [], []
    for lib in LIBS:
        f = getattr(lib, name)
        shapes.append(
            [
                tuple(f(size=(2, 3)).shape),
                tuple(f(size=[4]).shape),
                str(f(size=(2,), dtype=lib.float64).dtype),
            ]
        )
        with pytest.raises(TypeError) as info:
            f((2,), size=(3,))
        errors.append(str(info.value).split(" - ")[0])
    assert shapes[0] == shapes[1]
    if name in ("zeros", "ones", "empty"):  # (rand/randn: PyTorch lists its signatures)
        assert errors[0] == errors[1]


@pytest.mark.parametrize("pads,value", [([1, 2, 1, 0], 9), ([1, 2], 0), ([-1, 1, 0, -1], 5)])
def test_constant_pad_nd(pads: list, value: int) -> None:
    x = np.arange(12).reshape(3, 4)
    outs = [lib.constant_pad_nd(lib.tensor(x), pads, value).numpy() for lib in LIBS]
    np.testing.assert_array_equal(outs[0], outs[1])
