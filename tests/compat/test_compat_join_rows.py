"""The joining rows' PyTorch forms (``ArrayRow`` with a ``TorchJoinForm``: ``torch.cat``
and its aliases, ``stack``, ``hstack``, ``vstack``/``row_stack``, ``dstack``,
``column_stack``) against PyTorch 2.13: dtypes, shapes, values, nodes, gradients and
refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch
from funcgrad._compat_contract import array_rows

JOINS = {(r.torch.name or r.name): r for r in array_rows() if hasattr(r.torch, "layout")}
ROW_OF = {n: r for r in JOINS.values() for n in (r.torch.name or r.name, *r.torch.aliases)}
NAMES = sorted(ROW_OF)


def outcome(lib: Any, call: Any) -> tuple:
    """The result's dtype, shape, values and node, or the exception's type and first line."""
    try:
        r = call(lib)
    except Exception as e:  # (the exception is the outcome compared)
        return type(e).__name__, str(e).splitlines()[0]
    if isinstance(r, tuple):
        return r
    node = r.grad_fn.name() if r.grad_fn is not None else None
    return str(r.dtype), tuple(r.shape), str(r.tolist()), node


def both(real_torch: Any, call: Any) -> None:
    assert outcome(ctorch, call) == outcome(real_torch, call)


def test_every_name_is_generated() -> None:
    assert {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack"} <= set(NAMES)
    for n in NAMES:
        assert getattr(ctorch, n).__module__ != "compat._core.shape_ops"


SHAPES = [
    ((2, 3), (2, 3)),
    ((3,), (2,)),
    ((), ()),
    ((2, 3), (1, 3)),
    ((2, 3), (2, 1)),
    ((0,), (2, 3)),
    ((2, 3, 2), (2, 3, 1)),
    ((3,), (3, 2)),
    ((2, 3), (2, 3, 2)),
]
DTYPES = ("float32", "float64", "int64", "bool", "complex64")


def tensors(t: Any, shapes: tuple, dtypes: tuple[str, str], grad: bool) -> list:
    rng = np.random.default_rng(0)
    out = []
    for s, d in zip(shapes, dtypes):
        x = t.tensor(rng.normal(size=s).round(1)).to(getattr(t, d))
        out.append(x.requires_grad_() if grad and d in ("float32", "float64") else x)
    return out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_nodes_and_refusals(real_torch: Any, name: str, shapes: tuple) -> None:
    for dtypes in (("float32", "float32"), ("float32", "float64"), ("int64", "bool")):
        both(real_torch, lambda t: getattr(t, name)(tensors(t, shapes, dtypes, True)))
    if ROW_OF[name].torch.dim is not None:
        for dim in (1, -1, 2):
            both(real_torch, lambda t: getattr(t, name)(tensors(t, shapes, DTYPES[:2], True), dim))


@pytest.mark.parametrize("name", NAMES)
def test_gradients(real_torch: Any, name: str) -> None:
    """The gradient of each tensor joined (a weighted sum of the result, the weights
    distinct), as PyTorch's."""
    for shapes in ((((2, 3), (2, 3))), ((3,), (3,))):

        def grads(t: Any) -> tuple:
            xs = tensors(t, shapes, ("float64", "float32"), True)
            y = getattr(t, name)(xs)
            w = t.arange(y.numel(), dtype=t.float64).reshape(y.shape)
            (y * w).sum().backward()
            return tuple(str(x.grad.tolist()) for x in xs)

        assert outcome(ctorch, grads) == outcome(real_torch, grads)


CALLS = [
    lambda t: t.cat([t.ones(2, 3), t.ones(2, 3)], axis=1),
    lambda t: t.concatenate([t.ones(2, 3), t.ones(2, 3)], axis=1),
    lambda t: t.stack([t.ones(2, 3), t.ones(2, 3)], 3),
    lambda t: t.stack([t.ones(2, 3), t.ones(3)]),
    lambda t: t.stack([]),
    lambda t: t.cat([]),
    lambda t: t.hstack([]),
    lambda t: t.column_stack([]),
    lambda t: t.stack(t.ones(2, 3)),
    lambda t: t.cat(t.ones(2, 3)),
    lambda t: t.stack(x for x in [t.ones(2), t.ones(2)]),
    lambda t: t.stack([t.ones(2), 1]),
    lambda t: t.cat([t.ones(2), 1]),
    lambda t: t.hstack([t.ones(2), 1]),
    lambda t: t.stack([t.ones(2)], dim=1.0),
    lambda t: t.cat([t.ones(2, 3), t.ones(2)]),
    lambda t: t.cat([t.ones(2, 3), t.ones(2, 3)], 2),
    lambda t: t.vstack([t.ones(2, 3), t.ones(3, 2)]),
    lambda t: t.dstack([t.ones(2, 3), t.ones(3, 2)]),
    lambda t: t.column_stack([t.ones(2, 3, 4), t.ones(2)]),
    lambda t: (lambda o: (t.stack([t.ones(2), t.ones(2)], out=o) is o, tuple(o.shape)))(t.empty(0)),
    lambda t: (lambda o: (t.hstack([t.ones(2), t.ones(2)], out=o) is o, tuple(o.shape)))(
        t.empty(0)
    ),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_arguments_and_refusals(real_torch: Any, i: int) -> None:
    both(real_torch, CALLS[i])
