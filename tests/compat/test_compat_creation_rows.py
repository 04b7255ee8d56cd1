"""The creation rows' PyTorch forms (``funcgrad.core.creation_row``: ``torch.zeros``,
``ones``, ``empty``, ``full`` and their ``*_like`` forms, ``out=``, ``Tensor.new_X``)
against PyTorch 2.13: dtypes, shapes, values (``empty``'s contents are unspecified, so
only its dtype and shape), signatures and refusals."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import compat.torch as ctorch
from funcgrad._compat_contract import COMPUTED, FILL_VALUE, creation_rows

#: the fill rows (the computed ones, ``arange`` & co: test_compat_range_rows.py)
ROWS = {r.name: r for r in creation_rows() if r.fill != COMPUTED}
DTYPES = ("float32", "float64", "int8", "uint8", "int32", "int64", "bool", "complex64")


def outcome(lib: Any, call: Any, values: bool = True) -> tuple:
    """What ``call(lib)`` gives: the result's dtype, shape and values, or the exception's
    type and first line."""
    try:
        r = call(lib)
    except Exception as e:  # (the exception is the outcome compared)
        return type(e).__name__, str(e).splitlines()[0]
    return str(r.dtype), tuple(r.shape), str(r.tolist()) if values else None, r.requires_grad


def both(real_torch: Any, call: Any, values: bool = True) -> None:
    assert outcome(ctorch, call, values) == outcome(real_torch, call, values)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_signature_is_pytorchs(real_torch: Any, name: str) -> None:
    """Every keyword after the size (and fill value) is keyword-only, as PyTorch's."""
    params = inspect.signature(getattr(ctorch, name)).parameters.values()
    positional = [p.name for p in params if p.kind != p.KEYWORD_ONLY]
    fill = ["fill_value"] if ROWS[name].fill == FILL_VALUE else []
    assert positional == ["input" if ROWS[name].like else "size", *fill]
    doc_line = getattr(real_torch, name).__doc__.splitlines()[1]
    for p in params:  # (each keyword is one of PyTorch's)
        known = p.kind != p.KEYWORD_ONLY or p.name == "pin_memory"  # (taken, undocumented)
        assert known or p.name + "=" in doc_line, (name, p.name)


@pytest.mark.parametrize("dtype", (None, *DTYPES))
@pytest.mark.parametrize("name", ("zeros", "ones", "empty"))
def test_sized_forms(real_torch: Any, name: str, dtype: str | None) -> None:
    values = name != "empty"

    def kw(t: Any) -> dict:
        return {} if dtype is None else {"dtype": getattr(t, dtype)}

    for size in ((2, 3), ((2, 3),), ([4],), ((),), (0, 2)):
        both(real_torch, lambda t: getattr(t, name)(*size, **kw(t)), values)
    both(real_torch, lambda t: getattr(t, name)(size=(2, 1), **kw(t)), values)
    both(real_torch, lambda t: getattr(t, name)(3, requires_grad=True, **kw(t)), values)
    both(real_torch, lambda t: getattr(t, name)(2, 3).__class__ and t.ones(2).new_zeros(2), values)
    new = f"new_{name}"
    both(real_torch, lambda t: getattr(t.ones(2, dtype=t.int16), new)(3, 2, **kw(t)), values)
    both(real_torch, lambda t: getattr(t.ones(2, dtype=t.float64), new)((1, 2)), values)


@pytest.mark.parametrize(
    "fill", (0, 3, -1, 2.5, True, 1j, 300, -129, 1e10, float("inf"), float("nan"), 2**63)
)
@pytest.mark.parametrize("dtype", (None, *DTYPES, "float16"))
def test_full_forms(real_torch: Any, dtype: str | None, fill: Any) -> None:
    """``full``, ``full_like`` and ``new_full``: the dtype from the fill value's kind (or
    the input's), and PyTorch's refusal of a value the dtype cannot hold."""

    def kw(t: Any) -> dict:
        return {} if dtype is None else {"dtype": getattr(t, dtype)}

    both(real_torch, lambda t: t.full((2, 2), fill, **kw(t)))
    both(real_torch, lambda t: t.full_like(t.ones(3, dtype=t.int8), fill, **kw(t)))
    both(real_torch, lambda t: t.ones(2, dtype=t.float64).new_full((1, 2), fill, **kw(t)))


@pytest.mark.parametrize("name", ("zeros_like", "ones_like", "empty_like"))
def test_like_forms(real_torch: Any, name: str) -> None:
    values = name != "empty_like"
    for dtype in DTYPES:
        both(real_torch, lambda t: getattr(t, name)(t.ones(2, 3, dtype=getattr(t, dtype))), values)
        both(
            real_torch,
            lambda t: getattr(t, name)(t.ones(2), dtype=getattr(t, dtype), requires_grad=True),
            values,
        )
    both(real_torch, lambda t: getattr(t, name)(input=t.ones(())), values)


def test_out(real_torch: Any) -> None:
    """``out=``: written into ``out`` (resized) and returned, in its dtype unless ``dtype=``
    says another, which is refused."""
    for name in ("zeros", "ones", "empty"):
        values = name != "empty"
        for out in ("int32", "float64"):
            both(
                real_torch,
                lambda t: getattr(t, name)(2, 3, out=t.empty(0, dtype=getattr(t, out))),
                values,
            )
            both(
                real_torch,
                lambda t: getattr(t, name)(
                    2, out=t.empty(2, dtype=getattr(t, out)), dtype=t.float32
                ),
                values,
            )
        for t in (ctorch, real_torch):
            o = t.empty(5)
            assert getattr(t, name)(2, 3, out=o) is o and tuple(o.shape) == (2, 3)
    for fill in (3, 3.5, 1j, True):
        for out in ("int64", "float32", "bool"):
            both(real_torch, lambda t: t.full((2,), fill, out=t.empty(0, dtype=getattr(t, out))))


CALLS = [
    lambda t: t.zeros(-1),
    lambda t: t.ones(2, -1),
    lambda t: t.full((-1,), 2.0),
    lambda t: t.full(2, 1.0),
    lambda t: t.full((2,), 1.0, t.float64),
    lambda t: t.full((2,), None),
    lambda t: t.full((2,), "a"),
    lambda t: t.full((2,), t.tensor([1.0, 2.0])),
    lambda t: t.full((2,), t.tensor(2.0, requires_grad=True)),
    lambda t: t.full((2,), t.tensor(3)),
    lambda t: t.full((2,), t.tensor(True)),
    lambda t: t.full((2,), t.tensor(3.5, dtype=t.float64)),
    lambda t: t.full((2,), 2**64),
    lambda t: t.zeros(2, foo=1),
    lambda t: t.ones(2, memory_format=t.contiguous_format),
    lambda t: t.empty(2, pin_memory=False, memory_format=t.contiguous_format).fill_(1),
    lambda t: t.full([2], 1.0, pin_memory=False, layout=t.strided),
    lambda t: t.zeros(2, requires_grad=True, dtype=t.int32),
    lambda t: t.zeros_like(t.ones(2), t.float64),
    lambda t: t.zeros_like([1, 2]),
    lambda t: t.zeros_like(t.ones(2, dtype=t.int32), requires_grad=True),
    lambda t: t.zeros_like(t.ones(2), pin_memory=False, memory_format=t.preserve_format),
    lambda t: t.full_like(t.ones(2), 3, t.float64),
    lambda t: t.full_like(t.ones(2)),
    lambda t: t.full_like(t.ones(2), fill_value=4),
    lambda t: t.full_like(t.ones(2), 1j),
    lambda t: t.ones(2).new_full(3, 5.0),
    lambda t: t.ones(2).new_ones(size=(3, 4)),
    lambda t: t.ones(2).new_ones(3, pin_memory=False),
    lambda t: t.ones(2).new_zeros((3,), dtype=t.int8, requires_grad=False),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_arguments_and_refusals(real_torch: Any, i: int) -> None:
    both(real_torch, CALLS[i])
