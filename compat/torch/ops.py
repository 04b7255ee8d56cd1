"""``torch.ops``: ``torch.ops.aten.<op>.<overload>``, naming compat's ops (generated from
the op table, :mod:`compat._core.aten`), and the aten ops PyTorch exposes only there
(``convolution_backward``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import funcgrad as fg
from compat._core import aten as _aten
from compat._core.aten import ATEN as aten
from compat._core.aten import OpOverload, OpOverloadPacket
from compat._core.tensor import Tensor, apply
from compat.torch.nn.functional.conv import _conv_f
from funcgrad import numpy as fnp

__all__ = ["OpOverload", "OpOverloadPacket", "aten"]


def _conv_backward_f(g: Any, x: Any, w: Any, *, conv: tuple, mask: tuple) -> tuple:
    """The gradients of a convolution's input, weight and bias (those ``mask`` asks for)."""
    kw = dict(conv)
    _, pull = fg.vjp(lambda a, b: _conv_f(a, b, unbatched=False, **kw), x, w)
    gx, gw = pull(g)
    gb = fnp.sum(g, axis=(0, *range(2, g.ndim)))
    return tuple(v for v, m in zip((gx, gw, gb), mask) if m)


def convolution_backward(
    grad_output: Tensor,
    input: Tensor,
    weight: Tensor,
    bias_sizes: Any,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple:
    """``aten::convolution_backward``: ``(grad_input, grad_weight, grad_bias)``, ``None``
    where ``output_mask`` is ``False`` (differentiable: one compat op)."""
    if transposed:
        raise NotImplementedError("aten.convolution_backward: transposed convolutions")
    nd = input.ndim - 2
    conv = (
        ("stride", tuple(stride) * (nd if len(stride) == 1 else 1)),
        ("padding", tuple((p, p) for p in tuple(padding) * (nd if len(padding) == 1 else 1))),
        ("dilation", tuple(dilation) * (nd if len(dilation) == 1 else 1)),
        ("groups", int(groups)),
    )
    mask = tuple(bool(m) for m in output_mask)
    if not any(mask):
        return (None, None, None)
    out = apply(
        _conv_backward_f,
        "ConvolutionBackwardBackward0",
        (grad_output, input, weight),
        (("conv", conv), ("mask", mask)),
    )
    it = iter(out if isinstance(out, tuple) else (out,))
    return tuple(next(it) if m else None for m in mask)


_aten.register("convolution_backward", convolution_backward)


def _local_scalar_dense(input: Tensor) -> Any:
    """``aten::_local_scalar_dense``: the one element of ``input`` as a Python number
    (``Tensor.item``'s kernel; PyTorch's error for an empty tensor)."""
    if input.numel() == 0:
        raise RuntimeError("_local_scalar_dense: Empty tensor not supported")
    return input.item()


_aten.register("_local_scalar_dense", _local_scalar_dense)
