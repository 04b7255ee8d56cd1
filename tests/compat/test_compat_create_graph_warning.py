"""The warning ``backward(create_graph=True)`` gives (a reference cycle between a leaf and
its gradient), against PyTorch: its category and full text, for ``Tensor.backward``,
``autograd.backward`` and ``inputs=`` naming a leaf or a non-leaf, and no warning from
``autograd.grad`` or from ``backward`` without ``create_graph``. PyTorch warns once per
process; ``set_warn_always(True)`` makes both libraries warn at every call, so each case
is compared on its own (PyTorch's "(Triggered internally at <its C++ file>)" suffix
dropped)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch


def _leaf_backward(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)


def _autograd_backward_inputs(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.backward((x * x).sum(), create_graph=True, inputs=[x])


def _non_leaf_inputs(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    (h * h).sum().backward(create_graph=True, inputs=[h])


def _grad_create_graph(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.grad((x * x).sum(), x, create_graph=True)


def _backward_without_create_graph(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()


CASES: list[Callable[[Any], None]] = [
    _leaf_backward,
    _autograd_backward_inputs,
    _non_leaf_inputs,
    _grad_create_graph,
    _backward_without_create_graph,
]


_SOURCE = re.compile(r" \(Triggered internally at [^)]*\)$")


def _warnings_of(lib: Any, case: Callable[[Any], None]) -> list[tuple[str, str]]:
    before = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            case(lib)
    finally:
        lib.set_warn_always(before)
    # PyTorch's C++ warnings end with where they were raised in its sources
    return [(w.category.__name__, _SOURCE.sub("", str(w.message))) for w in seen]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_create_graph_warning_as_pytorch(case: Callable[[Any], None], real_torch: Any) -> None:
    want = _warnings_of(real_torch, case)
    got = _warnings_of(ctorch, case)
    assert got == want
