"""What the ``torch.linalg`` ops that report failures share: ``LinAlgError``, LAPACK's
``info`` codes and PyTorch's messages for them.

``linalg.cholesky``/``inv``/``solve`` raise ``LinAlgError`` as PyTorch does (the error
check reads ``info`` back to Python, as PyTorch's CPU kernels do; skipped under funcgrad
transforms, where values are not concrete); the ``*_ex`` variants return ``info``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad import stop_gradient
from funcgrad._compat_contract import is_tracing
from funcgrad.numpy import linalg as fla
from funcgrad.scipy import linalg as fsl


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a decomposition or solve failed."""


def _check_info(info: Tensor, name: str, message: Any, exc: type = LinAlgError) -> None:
    if is_tracing():
        return
    bad = np.asarray(info.detach().numpy()).reshape(-1)
    for i, v in enumerate(bad):
        if v > 0:
            where = f" (Batch element {i}):" if info.ndim else ""
            raise exc(f"{name}:{where} {message(int(v))}")


def _singular_msg(v: int) -> str:
    return (
        f"The diagonal element {v} is zero, the inversion could not be completed "
        "because the input matrix is singular."
    )


def _lu_msg(v: int) -> str:
    return (
        f"U[{v},{v}] is zero and using it on lu_solve would result in a division by zero. "
        "If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def _solve_msg(v: int) -> str:
    return "The solver failed because the input matrix is singular."


def _not_pd_msg(v: int) -> str:
    return (
        "The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {v} is not positive-definite)."
    )


def _cholesky_ex_f(a: Any) -> Any:
    lo = fla.cholesky(a)
    bad = ~fnp.all(fnp.isfinite(lo), axis=(-2, -1))
    return lo, bad.astype(np.int32)


def _leading_minor(a: np.ndarray) -> int:
    """1 + the order of the first leading minor of ``a`` that is not positive-definite."""
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return a.shape[-1]


def _singular_info(lu: Any) -> Any:
    """LAPACK ``getrf``'s ``info``: 1 + the first zero pivot of ``U``, 0 if none."""
    zero = fnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    first = fnp.argmax(zero, axis=-1) + 1
    return fnp.where(fnp.any(zero, axis=-1), first, 0).astype(np.int32)


def _inv_ex_f(a: Any) -> Any:
    return fla.inv(a), _singular_info(fsl.lu_factor(stop_gradient(a))[0])


def cholesky_info(A: Tensor) -> tuple:
    """``(L, info)`` of the lower Cholesky factor; ``info`` is the order of the first
    leading minor that is not positive-definite (read on the host when one failed)."""
    lo, bad = apply(_cholesky_ex_f, "LinalgCholeskyExBackward0", (A,))
    if not is_tracing() and bool(bad.any()):
        a = np.asarray(A.detach().numpy())
        flags = np.asarray(bad.numpy()).reshape(-1)
        mats = a.reshape(-1, *a.shape[-2:])
        info = [_leading_minor(m) if f else 0 for m, f in zip(mats, flags)]
        bad = bad.new_tensor(np.asarray(info, np.int32).reshape(bad.shape))
    return lo, bad
