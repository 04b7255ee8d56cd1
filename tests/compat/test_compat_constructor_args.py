"""Argument forms PyTorch 2.13 accepts and compat refused: sizes given as 0-d NumPy
integer arrays, ``Tensor.new(size=...)``, ``Tensor.view(dtype=...)``/``view(size=...)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

FORMS: dict[str, Callable[[Any], Any]] = {
    "ones_np_0d_in_tuple": lambda t: t.ones((np.array(3), np.int64(4))),
    "ones_np_0d_args": lambda t: t.ones(np.array(3), np.int64(4)),
    "zeros_np_0d_first": lambda t: t.zeros((np.int64(3), np.array(4, dtype=np.int32))),
    "new_size_kw": lambda t: t.ones(2, dtype=t.float64).new(size=(3, 4)).zero_(),
    "new_size_kw_list": lambda t: t.ones(2).new(size=[2], device="cpu").zero_(),
    "view_dtype_kw": lambda t: t.ones(2, 3).view(dtype=t.int32),
    "view_size_kw": lambda t: t.arange(6).view(size=(3, 2)),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms(name: str) -> None:
    def made(lib: Any) -> tuple[str, tuple[int, ...], list[Any]]:
        out = FORMS[name](lib)
        return str(out.dtype), tuple(out.shape), out.tolist()

    assert made(ctorch) == made(torch)


REFUSED: dict[str, Callable[[Any], Any]] = {
    "float_0d_size": lambda t: t.ones(np.array(3.0)),
    "float_tensor_in_size": lambda t: t.ones((t.tensor(3.0), t.tensor(4))),
    "float_numpy_in_size": lambda t: t.ones((np.array(3.0), t.tensor(4))),
    "view_size_and_args": lambda t: t.ones(2, 3).view(3, size=(3, 2)),
    "new_unknown_kw": lambda t: t.ones(2).new(foo=3),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_are_type_errors(name: str) -> None:
    with pytest.raises(TypeError):
        REFUSED[name](torch)
    with pytest.raises(TypeError):
        REFUSED[name](ctorch)
