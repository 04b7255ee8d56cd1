"""``lax``'s convolutions: ``conv_general_dilated``, ``conv``, ``conv_dimension_numbers``
and ``padtype_to_pads`` (also used by ``reduce_window`` and ``conv_transpose``)."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import conv as _conv
from funcgrad.primitives.conv import ConvDimensionNumbers

__all__ = [
    "ConvDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "padtype_to_pads",
]

DimensionNumbers = ConvDimensionNumbers | Sequence[str] | Sequence[Sequence[int]] | None


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """Explicit ``(lo, hi)`` pads for ``'VALID'``, ``'SAME'`` or ``'SAME_LOWER'``.

    ``'SAME'`` pads so the output has ``ceil(in / stride)`` elements, the odd element
    going to the end (to the start for ``'SAME_LOWER'``), as ``jax.lax`` does.
    """
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
            f"got {padding!r}{here()}"
        )
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = builtins.max((out - 1) * s + w - n, 0)  # (lax.max shadows max here)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _spec_from_string(spec: str, pair: tuple[str, str], rhs_spec: str) -> tuple[int, ...]:
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    # spatial dimensions are ordered as they appear in the kernel's spec
    spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: DimensionNumbers
) -> ConvDimensionNumbers:
    """Normalise ``None``, layout strings like ``('NHWC', 'HWIO', 'NHWC')`` or index
    triples (e.g. a ``jax.lax.ConvDimensionNumbers``) to a :class:`ConvDimensionNumbers`."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(
            f"conv_general_dilated: lhs and rhs must have the same rank, got shapes "
            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}{here()}"
        )
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(
            f"conv_general_dilated: dimension_numbers must be None, a ConvDimensionNumbers "
            f"or a (lhs, rhs, out) triple, got {dimension_numbers!r}{here()}"
        )
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        pairs = (("N", "C"), ("O", "I"), ("N", "C"))
        for i, (spec, (a, b)) in enumerate(zip(dimension_numbers, pairs)):
            if len(spec) != nd:
                raise TypeError(
                    f"conv_general_dilated: dimension_numbers[{i}]={spec!r} must have one "
                    f"character per dimension of the operands of shapes {tuple(lhs_shape)} "
                    f"and {tuple(rhs_shape)}{here()}"
                )
            if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
                raise TypeError(
                    f"conv_general_dilated: dimension_numbers[{i}]={spec!r} must contain "
                    f"'{a}' and '{b}' exactly once and no repeated characters{here()}"
                )
        if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
            raise TypeError(
                f"conv_general_dilated: dimension_numbers {tuple(dimension_numbers)} must "
                f"name the same spatial dimensions in each spec{here()}"
            )
        return ConvDimensionNumbers(
            _spec_from_string(lhs, pairs[0], rhs),
            _spec_from_string(rhs, pairs[1], rhs),
            _spec_from_string(out, pairs[2], rhs),
        )
    try:
        specs = [tuple(operator.index(d) for d in s) for s in dimension_numbers]
    except TypeError as e:
        raise TypeError(
            f"conv_general_dilated: dimension_numbers must be layout strings or integer "
            f"index tuples, got {dimension_numbers!r}{here()}"
        ) from e
    return ConvDimensionNumbers(*specs)


def _ints(name: str, xs: Any, n: int) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(x) for x in xs)
    except TypeError as e:
        raise TypeError(
            f"conv_general_dilated: {name} must be a sequence of ints, got {xs!r}{here()}"
        ) from e
    if len(out) != n:
        raise ValueError(
            f"conv_general_dilated: {name}={out} needs one entry per spatial dimension "
            f"({n}){here()}"
        )
    return out


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: DimensionNumbers = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """General n-d convolution with strides, padding, dilations and groups, as
    ``jax.lax.conv_general_dilated``.

    ``padding`` is ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or ``(lo, hi)`` pairs;
    ``dimension_numbers`` is ``None`` (``NCHW``/``OIHW``/``NCHW``), layout strings or a
    :class:`ConvDimensionNumbers`. ``precision`` is accepted for compatibility and
    ignored, as elsewhere in funcgrad (XLA's CPU convolutions run at full precision).

    Example:
        >>> x, w = np.ones((1, 5, 5, 2)), np.ones((3, 3, 2, 4))
        >>> conv_general_dilated(x, w, (2, 2), "VALID",
        ...                      dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
        (1, 2, 2, 4)
    """
    del precision
    lhs, rhs = prep(lhs, "conv_general_dilated"), prep(rhs, "conv_general_dilated")
    lhs_shape, rhs_shape = to_aval(lhs).shape, to_aval(rhs).shape
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            f"conv_general_dilated: lhs and rhs must have the same rank, got lhs "
            f"{to_aval(lhs)} and rhs {to_aval(rhs)}{here()}"
        )
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = builtins.max(len(lhs_shape) - 2, 0)
    strides = _ints("window_strides", window_strides, nsp)
    ld = (1,) * nsp if lhs_dilation is None else _ints("lhs_dilation", lhs_dilation, nsp)
    rd = (1,) * nsp if rhs_dilation is None else _ints("rhs_dilation", rhs_dilation, nsp)
    if isinstance(padding, str):
        if any(d != 1 for d in ld):
            raise ValueError(
                "conv_general_dilated: string padding is not implemented for transposed "
                f"convolution (lhs_dilation={ld}); give explicit (lo, hi) pairs{here()}"
            )
        in_sp = [lhs_shape[d] for d in dn.lhs_spec[2:]]
        window = [_conv._dilate(rhs_shape[d], r) for d, r in zip(dn.rhs_spec[2:], rd)]
        pads = padtype_to_pads(in_sp, window, strides, padding)
    else:
        try:
            pads = [(operator.index(lo), operator.index(hi)) for lo, hi in padding]
        except (TypeError, ValueError) as e:
            raise ValueError(
                "conv_general_dilated: padding should be 'SAME', 'SAME_LOWER', 'VALID' or a "
                f"sequence of (low, high) pairs, got {padding!r}{here()}"
            ) from e
    return _conv.conv_general_dilated(
        lhs,
        rhs,
        window_strides=strides,
        padding=pads,
        lhs_dilation=ld,
        rhs_dilation=rd,
        dimension_numbers=dn,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        preferred_element_type=preferred_element_type,
    )


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Convolution in the default ``NC...``/``OI...`` layout, as ``jax.lax.conv``."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
