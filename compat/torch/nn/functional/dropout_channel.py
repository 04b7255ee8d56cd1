"""``nn.functional`` channel-wise and alpha dropout: ``dropout1d/2d/3d``, ``alpha_dropout``,
``feature_alpha_dropout``.

Masks are drawn as PyTorch's CPU kernels draw them (``bernoulli_(1 - p)`` per element or per
``(N, C)`` channel), so a seeded run drops the same elements; shapes, scaling and the eval-mode
identity are PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import compat.torch as torch
from compat._core.mutation import apply_inplace
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor

_ALPHA = 1.7580993408473766  # SELU's scale * alpha: the value dropped units are pushed to


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input: Tensor, p: float, feature: bool) -> Tensor:
    """A 0/1 mask of ``input``'s dtype, one draw per element (or per ``(N, C)`` channel)."""
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    with torch.no_grad():
        return torch.empty(shape, dtype=input.dtype).bernoulli_(1.0 - p)


def _affine_f(x: Any, a: Any, b: Any) -> Any:
    return x * a + b


def _finish(input: Tensor, scale: Tensor, shift: Any, inplace: bool) -> Tensor:
    """``input * scale + shift`` (constants), as one op or in place."""
    if inplace:
        return apply_inplace(input, _affine_f, "MulBackward0", (scale, shift))
    return apply(_affine_f, "MulBackward0", (input, scale, shift))


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _finish(input, torch.zeros((), dtype=input.dtype), 0.0, inplace)
    with torch.no_grad():
        mask = _keep_mask(input, p, True) * (1.0 / (1.0 - p))
    return _finish(input, mask, 0.0, inplace)


def _batched(input: Tensor, batched: bool, fn: Any) -> Tensor:
    if batched:
        return fn(input)
    return fn(input.unsqueeze(0)).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``,
    scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _batched(input, nd == 3, lambda x: _feature_dropout(x, p, training, inplace))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` input with probability ``p`` (a 3-D input is
    taken as ``(N, C, L)``, with PyTorch's warning)."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability
    ``p``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _batched(input, nd != 4, lambda x: _feature_dropout(x, p, training, inplace))


def _alpha(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _finish(input, torch.zeros((), dtype=input.dtype), 0.0, inplace)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1.0) * (1.0 - p))
    mask = _keep_mask(input, p, feature)
    with torch.no_grad():
        shift = (mask - 1.0) * (_ALPHA * a) + _ALPHA * a * p
        scale = mask * a
    return _finish(input, scale, shift, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and an
    affine correction keeps the mean and variance."""
    return _alpha(input, p, training, inplace, feature=False)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
):
    """:func:`alpha_dropout` of whole ``(N, C)`` channels."""
    return _alpha(input, p, training, inplace, feature=True)
