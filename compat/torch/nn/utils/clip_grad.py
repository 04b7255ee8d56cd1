"""``nn.utils.clip_grad_norm_``/``clip_grad_value_``: rescale or clamp ``.grad`` in place.

As PyTorch: the total norm is the ``norm_type`` norm of the per-gradient norms
(``inf``: the largest absolute entry), the scale is
``min(1, max_norm / (total + 1e-6))``, and parameters without a gradient are skipped.
``foreach`` is accepted and has no effect (there is one code path).

Example:
    >>> import compat.torch as torch
    >>> w = torch.nn.Parameter(torch.ones(4))
    >>> (w * 3.0).sum().backward()
    >>> torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(6.)
"""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.ops._common import _vector_norm_f as _norm_of
from compat._core.tensor import apply as _apply

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

Tensor = Any
_tensor_or_tensors = Any


def _as_list(tensors: _tensor_or_tensors) -> list[Tensor]:
    if isinstance(tensors, torch.Tensor):
        return [tensors]
    return list(tensors)


def _grads(parameters: _tensor_or_tensors) -> list[Tensor]:
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


def _vector_norm_f(x: Any, p: float) -> Any:
    """``linalg.vector_norm(x, p)`` of the whole of ``x`` (every order: 0 counts the
    nonzero entries, -inf is the least magnitude)."""
    return _norm_of(x, ord=p, axes=None, keepdims=False, dtype=x.dtype)


def _total_norm_f(*xs: Any, p: float) -> Any:
    # the norm of the per-tensor norms, as PyTorch's
    return _vector_norm_f(fnp.stack([_vector_norm_f(x, p) for x in xs]), p)


def get_total_norm(
    tensors: _tensor_or_tensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as if concatenated)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return torch.tensor(0.0)
    with torch.no_grad():
        if norm_type == math.inf:
            norms = [t.detach().abs().max() for t in tensors]
            total = norms[0] if len(norms) == 1 else torch.stack(norms).max()
        elif len({t.dtype for t in tensors}) == 1:
            # one op for every per-tensor norm and their norm (PyTorch's foreach kernel),
            # the same reductions as ``torch.norm`` of each and of their stack
            args = tuple(t.detach() for t in tensors)
            total = _apply(_total_norm_f, "LinalgVectorNormBackward0", args, (("p", norm_type),))
        else:
            norms = [torch.norm(t.detach(), norm_type) for t in tensors]
            total = torch.norm(torch.stack(norms), norm_type)
    if error_if_nonfinite and not bool(torch.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale every ``.grad`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = _grads(parameters)
    if not grads:
        return
    with torch.no_grad():
        coef = torch.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Rescale the gradients of ``parameters`` so their total norm is at most
    ``max_norm``; returns the total norm before clipping (a 0-d tensor).

    ``error_if_nonfinite=True`` raises ``RuntimeError`` when that norm is NaN or inf.
    """
    params = _as_list(parameters)
    grads = _grads(params)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(
    parameters: _tensor_or_tensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every ``.grad`` of ``parameters`` into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with torch.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
