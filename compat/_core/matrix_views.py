"""The matrix transposes of the last two dimensions: ``Tensor.mT``, ``Tensor.mH``,
``Tensor.adjoint()`` / ``torch.adjoint`` and ``Tensor.H``, with PyTorch's dimension checks
and its deprecation warnings on 0-D tensors."""

from __future__ import annotations

import warnings

from compat._core.ops.spectral import conj
from compat._core.shape_ops import transpose
from compat._core.tensor import Tensor


def _batched_matrices(x: Tensor, what: str) -> None:
    if x.ndim == 1:
        raise RuntimeError(
            f"tensor.{what} is only supported on matrices or batches of matrices. Got 1-D tensor."
        )


def mT(x: Tensor) -> Tensor:
    """``x`` with its last two dimensions swapped (a view)."""
    if x.ndim == 0:
        warnings.warn(
            "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
        return x
    _batched_matrices(x, "mT")
    return transpose(x, -2, -1)


def _conj_transpose(x: Tensor, what: str, deprecated: str) -> Tensor:
    if x.ndim == 0:
        warnings.warn(
            f"{deprecated} is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=3,
        )
        return conj(x)
    _batched_matrices(x, what)
    return conj(transpose(x, -2, -1))


def mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (``mT`` for real tensors)."""
    return _conj_transpose(x, "mH", "Tensor.mH")


def adjoint(input: Tensor) -> Tensor:
    """``input.mH``: the conjugate transpose of the last two dimensions."""
    return _conj_transpose(input, "adjoint()", "adjoint()")


def H(x: Tensor) -> Tensor:
    """The conjugate transpose of a matrix (2-D tensor)."""
    if x.ndim == 0:
        return _conj_transpose(x, "H", "Tensor.H")
    if x.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if x.ndim > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {x.ndim}-D tensor.{hint}"
        )
    return conj(transpose(x, 0, 1))
