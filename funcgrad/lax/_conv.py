"""``lax``'s convolutions: ``conv_general_dilated`` and its forms ``conv``,
``conv_with_general_padding`` and ``conv_transpose``; the shape helpers
``conv_shape_tuple`` and ``conv_transpose_shape_tuple``; ``conv_dimension_numbers``
and ``padtype_to_pads`` (also used by ``reduce_window``)."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.lax import _structural
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import conv as _conv
from funcgrad.primitives.conv import ConvDimensionNumbers

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
]

DimensionNumbers = ConvDimensionNumbers | Sequence[str] | Sequence[Sequence[int]] | None
#: Layout strings, a :class:`ConvDimensionNumbers` or ``None``, as ``jax.lax``'s alias.
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


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
        # Python ints, as JAX's, also from NumPy shapes (pads feed static params)
        n, w, s = operator.index(n), operator.index(w), operator.index(s)
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
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but "
            f"got {tuple(lhs_shape)} and {tuple(rhs_shape)}{here()}"
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
        if name == "window_strides":  # (JAX's words)
            raise ValueError(
                "conv_general_dilated window and window_strides must have the same number of "
                f"dimensions, but got {n} and {len(out)}{here()}"
            )
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
    out_sharding: Any = None,
) -> Any:
    """General n-d convolution with strides, padding, dilations and groups, as
    ``jax.lax.conv_general_dilated``; ``out_sharding`` types the result over explicit
    mesh axes (where JAX cannot infer it: a split kernel or feature dimension).

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
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but "
            f"got lhs {to_aval(lhs)} and rhs {to_aval(rhs)}{here()}"
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
                "padding argument to conv_general_dilated should be a string ('SAME', "
                f"'SAME_LOWER', 'VALID') or a sequence of (low, high) pairs, got {padding!r}"
                f"{here()}"
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
        out_sharding=out_sharding,
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
    return conv_with_general_padding(
        lhs, rhs, window_strides, padding, None, None, precision, preferred_element_type
    )


def conv_with_general_padding(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``conv_general_dilated`` in the default ``NC...``/``OI...`` layout."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _transpose_pads(k: int, s: int, padding: Any) -> tuple[int, int]:
    # padding of the dilated input so the output matches keras' Conv2DTranspose; a
    # (lo, hi) pair is the forward convolution's padding
    if isinstance(padding, (tuple, list)) and len(padding) == 2:
        return k - operator.index(padding[0]) - 1, k - operator.index(padding[1]) - 1
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + builtins.max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(
            f"conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) pairs, "
            f"got {padding!r}{here()}"
        )
    return lo, total - lo


_DEFAULT_TRANSPOSE_DN = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Any,
    rhs: Any,
    strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Any:
    """Transposed ("deconvolution") n-d convolution, as ``jax.lax.conv_transpose``.

    The input is dilated by ``strides`` and convolved with stride 1; ``'SAME'`` and
    ``'VALID'`` pad as Keras' ``Conv2DTranspose`` does, explicit ``(lo, hi)`` pairs pad
    the dilated input (unless ``use_consistent_padding``, which reads them as the
    forward convolution's padding). The default layout is ``NHWC``/``HWIO``.
    ``transpose_kernel=True`` flips the kernel's spatial axes and swaps I and O, giving
    the gradient of a forward convolution.
    """
    lhs, rhs = prep(lhs, "conv_transpose"), prep(rhs, "conv_transpose")
    lshape, rshape = to_aval(lhs).shape, to_aval(rhs).shape
    nd = len(lshape)
    if len(rshape) != nd or nd < 2:
        raise TypeError(
            f"conv_transpose: lhs and rhs must have one rank >= 2, got {to_aval(lhs)} and "
            f"{to_aval(rhs)}{here()}"
        )
    if dimension_numbers is None:
        if nd not in _DEFAULT_TRANSPOSE_DN:
            raise ValueError(f"conv_transpose: no default dimension_numbers for rank {nd}")
        dimension_numbers = _DEFAULT_TRANSPOSE_DN[nd]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    ksp = [rshape[d] for d in dn.rhs_spec[2:]]
    rd = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    strides = tuple(operator.index(s) for s in strides)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        each = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = [
            _transpose_pads(_conv._dilate(k, r), s, p) for k, r, s, p in zip(ksp, rd, strides, each)
        ]
    else:
        pads = padding
    if transpose_kernel:
        rhs = _structural.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = i, o
        rhs = _structural.transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * (nd - 2),
        pads,
        strides,
        rd,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: str | Sequence[tuple[int, int]],
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """Output shape of an ``NC...``/``OI...`` convolution with these strides and pads."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            f"conv_shape_tuple: pads {pads} need one entry per spatial dimension of "
            f"{tuple(lhs_shape)}"
        )
    space = [
        builtins.max(0, (n + lo + hi - k) // s + 1)
        for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads)
    ]
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *space)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: ConvGeneralDilatedDimensionNumbers,
) -> tuple[int, ...]:
    """Output shape of :func:`conv_transpose` (``dimension_numbers`` as layout strings
    like ``('NHWC', 'HWIO', 'NHWC')`` or a :class:`ConvDimensionNumbers`)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_spec, rhs_spec, out_spec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    lt = [lhs_shape[d] for d in lhs_spec]
    rt = [rhs_shape[d] for d in rhs_spec]
    if isinstance(padding, str):
        padding = [_transpose_pads(k, s, padding) for k, s in zip(rt[2:], window_strides)]
    space = [
        (n - 1) * s - k + 2 + lo + hi
        for n, k, s, (lo, hi) in zip(lt[2:], rt[2:], window_strides, padding)
    ]
    out_t = (lt[0], rt[0], *space)
    out = [0] * len(out_t)
    for pos, d in enumerate(out_spec):
        out[d] = out_t[pos]
    return tuple(int(v) for v in out)
