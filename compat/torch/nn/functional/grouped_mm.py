"""``nn.functional.grouped_mm``: the per-group matrix products of Mixture-of-Experts
layers, groups delimited along a jagged dimension by ``offs`` (the end of each group).

* ``mat_a`` 2-D ``(M, K)``, ``mat_b`` 3-D ``(G, K, N)``: rows of ``mat_a`` in group ``g``
  times ``mat_b[g]``, ``(M, N)``;
* ``mat_a`` 3-D ``(G, M, K)``, ``mat_b`` 2-D ``(K, N)``: ``mat_a[g]`` times the columns of
  ``mat_b`` in group ``g``, ``(M, N)``;
* both 2-D: ``mat_a[:, group] @ mat_b[group, :]`` for each group, ``(G, M, N)``;
* both 3-D (no ``offs``): ``mat_a @ mat_b``.

Rows or columns past ``offs[-1]`` are left uninitialised by PyTorch; compat gives zeros.
PyTorch's kernels also require 16-byte-aligned strides; compat has no layout constraint.
Differentiable in both operands (as PyTorch's, without ``out_dtype``).
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn.functional._arguments import Tensor

__all__ = ["grouped_mm"]

_KINDS = {"float32": "Float32", "bfloat16": "BFloat16", "float16": "Float16"}


def _check_operand(name: str, t: Tensor) -> None:
    if t.dim() not in (2, 3):
        raise RuntimeError(f"{name} has to be 2 or 3d")
    kind = str(t.dtype).removeprefix("torch.")
    if kind not in _KINDS:
        found = {"float64": "Double"}.get(kind, kind)
        raise RuntimeError(
            f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {found}"
        )


def grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    *,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    out_dtype: Any = None,
) -> Tensor:
    """The grouped matrix product of ``mat_a`` and ``mat_b`` (see the module docstring)."""
    _check_operand("mat_a", mat_a)
    _check_operand("mat_b", mat_b)
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    jagged = mat_a.dim() == 2 or mat_b.dim() == 2
    if jagged != (offs is not None):
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if offs is None:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("matrix batch sizes have to match")
        return mat_a @ mat_b
    if offs.dtype != torch.int32:
        raise RuntimeError("Offsets have to be int32")
    if offs.dim() != 1:
        raise RuntimeError("offs has to be 1D")
    ends = [int(e) for e in offs.tolist()]
    bounds = list(zip([0, *ends[:-1]], ends))
    groups = len(ends)
    batched = [t.shape[0] for t in (mat_a, mat_b) if t.dim() == 3]
    if any(b != groups for b in batched):
        raise RuntimeError("matrix batch sizes have to match")
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(bounds)]
        rest = mat_a.new_zeros((mat_a.shape[0] - ends[-1], mat_b.shape[-1]))
        return torch.cat([*parts, rest], dim=0)
    if mat_a.dim() == 3:
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(bounds)]
        rest = mat_a.new_zeros((mat_a.shape[1], mat_b.shape[1] - ends[-1]))
        return torch.cat([*parts, rest], dim=1)
    return torch.stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in bounds])
