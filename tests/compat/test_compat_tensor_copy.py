"""``copy.copy`` of a tensor is PyTorch 2.13's shallow copy: a new leaf of the same class
sharing the storage (writes show through), keeping ``requires_grad`` and Python attributes,
not the grad."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _fill_copy(t: Any) -> list[Any]:
    x = t.tensor([1, 2, 3])
    copy.copy(x).fill_(1)
    return x.tolist()


def _fill_copy_of_view(t: Any) -> list[Any]:
    x = t.tensor([1.0, 2.0, 3.0])
    copy.copy(x[1:]).fill_(7)
    return x.tolist()


def _non_leaf(t: Any) -> tuple[bool, bool, Any]:
    y = copy.copy(t.ones(2, requires_grad=True) * 2)
    return y.is_leaf, y.requires_grad, y.grad_fn


def _parameter(t: Any) -> tuple[str, list[float], bool]:
    p = t.nn.Parameter(t.ones(2))
    q = copy.copy(p)
    q.data.fill_(3)
    return type(q).__name__, p.tolist(), q.requires_grad


def _grad_and_attrs(t: Any) -> tuple[Any, int, int]:
    x = t.ones(2, requires_grad=True)
    x.sum().backward()
    x.tag = 5
    with t.no_grad():
        x.add_(1)
    y = copy.copy(x)
    return y.grad, y.tag, y._version


CASES: dict[str, Callable[[Any], Any]] = {
    "fill_copy": _fill_copy,
    "fill_copy_of_view": _fill_copy_of_view,
    "non_leaf": _non_leaf,
    "parameter": _parameter,
    "grad_and_attrs": _grad_and_attrs,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shallow_copy_as_pytorch(name: str) -> None:
    assert CASES[name](ctorch) == CASES[name](torch)
