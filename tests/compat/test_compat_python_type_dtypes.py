"""``dtype=float``/``int``/``bool``/``complex`` as PyTorch 2.13 reads them (the C types of
Python's numbers: ``float`` is ``float64``, ``complex`` is ``complex128``, whatever the
default dtype; compat gave the default dtype), and ``chunk``'s argument errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
