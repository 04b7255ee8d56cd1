"""``lax.conv_general_dilated_patches``: the receptive fields of a convolution as
features, and ``lax.conv_general_dilated_local``, the convolution with a filter per
output position that contracts them.

Each output position holds the ``C * prod(filter_shape)`` input values its window
covers (channel-major, then the window's positions in row-major order), laid out by the
output spec of ``dimension_numbers``: a grouped ``conv_general_dilated`` with one one-hot
filter per (channel, window position), so strides, padding, dilations, derivatives and
batching are the convolution's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core.interp import to_aval
from funcgrad.lax._conv import conv_dimension_numbers, conv_general_dilated
from funcgrad.lax._structural import dot_general
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import shape as sh

__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches"]


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches ``conv_general_dilated`` with a ``filter_shape`` window would
    contract, as ``jax.lax.conv_general_dilated_patches``: the feature dimension of the
    output (``out_spec``'s ``C``) has ``C * prod(filter_shape)`` entries, channel-major.

    Example:
        >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
        >>> conv_general_dilated_patches(x, (2, 2), (2, 2), "VALID").shape
        (1, 4, 2, 2)
    """
    lhs = prep(lhs, "conv_general_dilated_patches")
    av = to_aval(lhs)
    shape = tuple(int(d) for d in filter_shape)
    if len(shape) != av.ndim - 2:
        raise ValueError(
            f"conv_general_dilated_patches: filter_shape {shape} must have one entry per "
            f"spatial dimension of lhs {av}{here()}"
        )
    dn = conv_dimension_numbers(av.shape, (1, 1, *shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    size = math.prod(shape)
    channels = av.shape[lhs_spec[1]]
    # kernel[c * size + j, 0, *window] = 1 where the window position's flat index is j
    onehot = np.eye(size, dtype=av.dtype).reshape(size, 1, *shape)
    kernel = np.concatenate([onehot] * channels, axis=0) if channels else onehot[:0]
    order = [rhs_spec[0], rhs_spec[1], *rhs_spec[2:]]
    kernel = np.transpose(kernel, np.argsort(order))
    return conv_general_dilated(
        lhs,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        feature_group_count=channels,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
) -> Any:
    """A locally connected convolution (``jax.lax.conv_general_dilated_local``): like
    ``conv_general_dilated`` with a ``filter_shape`` window, but with its own filter at
    each output position. ``rhs`` is laid out by ``rhs_spec``: its ``O`` dimension the
    output features, its ``I`` dimension the ``C * prod(filter_shape)`` patch entries
    (channel-major, as :func:`conv_general_dilated_patches` lays them out), its spatial
    dimensions the output positions."""
    lhs = prep(lhs, "conv_general_dilated_local")
    rhs = prep(rhs, "conv_general_dilated_local")
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers
    )
    shape = tuple(int(d) for d in filter_shape)
    _, rhs_spec, out_spec = conv_dimension_numbers(
        to_aval(lhs).shape, (1, 1, *shape), dimension_numbers
    )
    nsp = len(shape)
    # contract each position's patch with its filter; the output positions pair up
    # (patches' k-th spatial dimension with rhs's), giving (positions..., N, O)
    res = dot_general(
        patches,
        rhs,
        (([out_spec[1]], [rhs_spec[1]]), (list(out_spec[2:]), list(rhs_spec[2:]))),
        precision=precision,
    )
    perm = [0] * (nsp + 2)
    perm[out_spec[0]], perm[out_spec[1]] = nsp, nsp + 1
    for k in range(nsp):
        perm[out_spec[2 + k]] = k
    return sh.transpose(res, tuple(perm))
