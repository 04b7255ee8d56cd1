"""Top-level ``torch`` linear algebra (``torch.det``, ``inverse``, ``slogdet``, ``lu``, ...).

PyTorch keeps these older names next to ``torch.linalg``; each is the ``torch.linalg``
op (``compat/_core/ops/linalg_ns.py``, ``linalg_decomp.py``) under PyTorch's top-level
signature, with its ``Tensor`` method. ``torch.lu_unpack`` and ``torch.lu_solve`` need
``lu_factor``'s pivots, so they are not op-table rows (no generic sample) and are
tested in ``tests/compat/test_compat_linalg_decomp.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import warn_once
from compat._core.ops.linalg_decomp import lu_factor_ex
from compat._core.ops.linalg_decomp import lu_solve as _linalg_lu_solve
from compat._core.ops.linalg_ns import _float, _square, _unary
from compat._core.ops.linalg_ns import inv as _inv
from compat._core.ops.linalg_ns import slogdet as _slogdet
from compat._core.optable import SPD, Sample, defop, no_bf16_kernel
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad.numpy import linalg as fla

SLOGDET = return_type("slogdet", "sign logabsdet")
LU_UNPACK = return_type("lu_unpack", "P L U")
_TOP = {"node_name": False}


@defop(
    out=False,
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),))),
    **_TOP,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def det(input: Tensor) -> Tensor:
    """``torch.det``: ``torch.linalg.det``."""
    return _unary("det", input)


@defop(
    samples=Sample(((3, 3),), domain=(-1, 1)),
    **_TOP,
    bf16_error=(RuntimeError, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
)
def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``torch.linalg.inv``."""
    return _inv(input)


@defop(
    samples=Sample(((3, 3),)),
    **_TOP,
    bf16_error=(RuntimeError, "linalg.slogdet: Low precision dtypes not supported. Got BFloat16"),
)
def slogdet(input: Tensor) -> tuple:
    """``torch.slogdet``: ``(sign, logabsdet)``."""
    return SLOGDET(*_slogdet(input))


def _logdet_f(a: Any) -> Any:
    sign, logabs = fla.slogdet(a)
    if np.dtype(a.dtype).kind == "c":
        return logabs.astype(a.dtype) + fnp.log(sign)
    return fnp.where(sign < 0, fnp.nan, logabs)


@defop(
    out=False,
    samples=(Sample((SPD(3),)), Sample(((3, 3),), grad=False)),
    **_TOP,
    bf16_error=(RuntimeError, "linalg.slogdet: Low precision dtypes not supported. Got BFloat16"),
)
def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: NaN for a negative determinant of a real matrix."""
    _float(input)
    _square(input, "slogdet")
    return apply(_logdet_f, "LogdetBackward0", (input,))


def _pinverse_f(a: Any, *, rcond: float) -> Any:
    return fla.pinv(a, rtol=rcond)


@defop(
    out=False,
    samples=(Sample(((3, 4),)), Sample(((2, 4, 3),), args=(1e-3,))),
    **_TOP,
    bf16_error=no_bf16_kernel("linalg_svd_cpu"),
)
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values below ``rcond`` times the largest dropped."""
    _float(input)
    return apply(_pinverse_f, "PinverseBackward0", (input,), (("rcond", float(rcond)),))


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),), kwargs=(("get_infos", True),))),
    **_TOP,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``torch.lu`` (deprecated): ``(LU, pivots)`` (``get_infos``: and ``info``)."""
    warn_once(
        "torch.lu",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)",
    )
    out = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return tuple(out) if get_infos else (out.LU, out.pivots)


def _lu_unpack_f(lu: Any, piv: Any, *, data: bool, pivots: bool) -> Any:
    m, n = lu.shape[-2:]
    k = min(m, n)
    out = []
    if pivots:  # P = S_0 S_1 ... S_{k-1}, S_i swapping rows i and piv[i] - 1
        rows = fnp.arange(m)
        p = fnp.broadcast_to(fnp.eye(m, dtype=lu.dtype), lu.shape[:-2] + (m, m))
        for i in range(k):
            ei = (rows == i).astype(lu.dtype)
            ej = (rows == (piv[..., i : i + 1].astype(np.int64) - 1)).astype(lu.dtype)
            d = (ej - ei)[..., :, None] * (ej - ei)[..., None, :]
            p = p - fnp.matmul(p, d)
        out.append(p)
    else:
        out.append(fnp.zeros((0,), lu.dtype))
    if data:
        lo = fnp.tril(lu[..., :, :k], -1) + fnp.eye(m, k, dtype=lu.dtype)
        out += [lo, fnp.triu(lu[..., :k, :])]
    else:
        out += [fnp.zeros((0,), lu.dtype)] * 2
    return tuple(out)


def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> tuple:
    """``(P, L, U)`` from ``lu_factor``'s packed ``LU`` and pivots (empty when not
    unpacked)."""
    if _dt.kind(LU_pivots._npdtype) not in "iu":
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            f"dtype.\nNote: this function is intended to be used with the output produced by "
            f"torch.linalg.lu_factor, but got {_dt.scalar_type_name(LU_pivots._npdtype)}"
        )
    st = (("data", bool(unpack_data)), ("pivots", bool(unpack_pivots)))
    p, lo, up = apply(_lu_unpack_f, "LuUnpackBackward0", (LU_data, LU_pivots), st)
    return LU_UNPACK(p.detach(), lo, up)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve`` (deprecated): ``torch.linalg.lu_solve(LU_data, LU_pivots, b)``."""
    warn_once(
        "torch.lu_solve",
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B)",
    )
    return _linalg_lu_solve(LU_data, LU_pivots, b)
