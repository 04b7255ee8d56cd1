"""TEMPORARY: ``lax.conv_transpose`` and its shape helper for :mod:`stax`'s transposed
convolutions, used only while :mod:`funcgrad.lax` lacks them (issue 13 lists them with
the convolutions; once ``funcgrad.lax.conv_transpose`` exists this module can go).

``conv_transpose`` here is a plain composite (``conv_general_dilated`` with the input
dilated by the strides and JAX's padding rule), so it differentiates, batches and jits
like any funcgrad code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import lax


def _transpose_pads(kernel: int, stride: int, padding: str) -> tuple[int, int]:
    if padding == "SAME":
        total = kernel + stride - 2
        lo = kernel - 1 if stride > kernel - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + max(kernel - stride, 0)
        lo = kernel - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME' or 'VALID', got {padding!r}")
    return lo, total - lo


def conv_transpose(
    lhs: Any, rhs: Any, strides: Sequence[int], padding: Any, dimension_numbers: Any = None
) -> Any:
    """``lax.conv_transpose`` (``transpose_kernel=False``): a dilated-input convolution."""
    dn = lax.conv_dimension_numbers(np.shape(lhs), np.shape(rhs), dimension_numbers)
    kernel = [np.shape(rhs)[i] for i in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = [_transpose_pads(k, s, padding) for k, s in zip(kernel, strides)]
    else:
        pads = padding
    ones = (1,) * len(kernel)
    return lax.conv_general_dilated(lhs, rhs, ones, pads, strides, ones, dimension_numbers=dn)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """Output shape of :func:`conv_transpose`."""
    dn = lax.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = [lhs_shape[i] for i in dn.lhs_spec]
    rhs = [rhs_shape[i] for i in dn.rhs_spec]
    spatial = []
    for i, (n, k, s) in enumerate(zip(lhs[2:], rhs[2:], window_strides)):
        lo, hi = _transpose_pads(k, s, padding) if isinstance(padding, str) else padding[i]
        spatial.append((n - 1) * s + 1 + lo + hi - k + 1)
    nchw = (lhs[0], rhs[0], *spatial)
    out = [0] * len(nchw)
    for pos, i in enumerate(dn.out_spec):
        out[i] = nchw[pos]
    return tuple(out)
