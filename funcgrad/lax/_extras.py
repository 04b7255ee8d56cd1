"""Remaining ``jax.lax`` names: special functions, ``fft``, ``optimization_barrier``,
stacking, ``scatter_sub``, the convolution variants and shape helpers.

All are thin wrappers over existing funcgrad primitives (or composites of them), so
``grad``, ``vmap`` and ``jit`` apply as for the rest of ``funcgrad.lax``.
"""

from __future__ import annotations

import builtins
import enum
import operator
from collections.abc import Sequence
from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.lax import _conv as lax_conv
from funcgrad.lax import _gather, _structural
from funcgrad.numpy._core import here, prep, user_dtype
from funcgrad.primitives import calls as _calls
from funcgrad.primitives import conv as _conv
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import fft as _fft
from funcgrad.primitives import random as _random
from funcgrad.primitives import shape as sh
from funcgrad.primitives import special as _special
from funcgrad.primitives.conv import ConvDimensionNumbers
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "ConvGeneralDilatedDimensionNumbers",
    "DotDimensionNumbers",
    "FftType",
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "broadcast_shapes",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "empty",
    "fft",
    "igamma",
    "igamma_grad_a",
    "igammac",
    "optimization_barrier",
    "polygamma",
    "random_gamma_grad",
    "reciprocal",
    "scatter_sub",
    "stack",
    "unstack",
    "zeta",
]

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, as ``jax.lax``'s alias.
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]
#: Layout strings, a :class:`ConvDimensionNumbers` or ``None``, as ``jax.lax``'s alias.
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def _same(fn: Any, name: str) -> Any:
    """Wrap the primitive wrapper ``fn`` with lax's operand rule:
    one dtype, one shape (0-d operands and Python scalars adapt)."""

    def f(*args: Any) -> Any:
        xs = [prep(a, name) for a in args]
        avals = [to_aval(x) for x in xs]
        strong = [a for a in avals if not getattr(a, "weak_type", False)]
        ref = strong[0] if strong else avals[0]
        dts = {a.dtype for a in strong}
        if len(dts) > 1:
            raise TypeError(
                f"{name}: operands must have one dtype, got "
                f"{', '.join(str(a) for a in avals)}{here()}"
            )
        shapes = {a.shape for a in avals if a.shape != ()}
        if len(shapes) > 1:
            raise TypeError(
                f"{name}: operands must have one shape, got "
                f"{', '.join(str(a) for a in avals)}{here()}"
            )
        shape = shapes.pop() if shapes else ()
        out = []
        for x, a in zip(xs, avals):
            if a.dtype != ref.dtype:
                x = ew.convert_element_type(x, ref.dtype)
            if a.shape != shape:
                x = sh.broadcast_in_dim(x, shape, ())
            out.append(x)
        return fn(*out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = fn.__doc__
    return f


bessel_i0e = _same(_special.bessel_i0e, "bessel_i0e")
bessel_i1e = _same(_special.bessel_i1e, "bessel_i1e")
betainc = _same(_special.betainc, "betainc")
igamma = _same(_special.igamma, "igamma")
igammac = _same(_special.igammac, "igammac")
igamma_grad_a = _same(_special.igamma_grad_a, "igamma_grad_a")
polygamma = _same(_special.polygamma, "polygamma")
zeta = _same(_special.zeta, "zeta")
random_gamma_grad = _same(_random.random_gamma_grad, "random_gamma_grad")


def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x``."""
    return ew.integer_pow(prep(x, "reciprocal"), -1)


class FftType(enum.IntEnum):
    """Which transform :func:`fft` computes (``jax.lax.FftType``)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """Discrete Fourier transform over ``x``'s trailing ``len(fft_lengths)`` axes.

    ``fft_type`` is a :class:`FftType` (or ``jax.lax.FftType``) or its name; the input
    must be complex except for ``RFFT`` (real), as in ``jax.lax.fft``.
    """
    return _fft.fft(prep(x, "fft"), fft_type, fft_lengths)


def optimization_barrier(operand: Any, /) -> Any:
    """Return ``operand`` (a pytree) unchanged, keeping XLA from moving computations
    across this point (e.g. merging a rematerialisation into the forward pass)."""
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return operand
    outs = _calls.optimization_barrier(*[prep(x, "optimization_barrier") for x in leaves])
    return tree_unflatten(tree, list(outs))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy-style broadcast of ``shapes`` (ranks aligned on the right)."""
    try:
        norm = [tuple(operator.index(d) for d in s) for s in shapes]
    except TypeError as e:
        raise TypeError(f"broadcast_shapes: shapes must be int sequences, got {shapes}") from e
    rank = builtins.max((len(s) for s in norm), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in norm if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ValueError(f"broadcast_shapes: incompatible shapes for broadcasting: {norm}")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros here)."""
    del out_sharding
    dt = user_dtype(dtype, "empty")
    return sh.full(tuple(operator.index(d) for d in shape), 0, dt)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack arrays of one shape and dtype along a new axis ``axis``."""
    xs = [prep(x, "stack") for x in operands]
    if not xs:
        raise ValueError(f"stack: need at least one operand{here()}")
    nd = len(to_aval(xs[0]).shape) + 1
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of bounds for rank {nd}{here()}")
    axis = axis % nd
    return _structural.concatenate([_structural.expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
    x = prep(x, "unstack")
    shape = to_aval(x).shape
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"unstack: axis {axis} is out of bounds for shape {shape}{here()}")
    axis = axis % len(shape)
    return tuple(_structural.index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def scatter_sub(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """Subtract ``updates`` from ``operand`` at the selected windows (see ``scatter``)."""
    return _gather.scatter_add(
        operand,
        scatter_indices,
        ew.neg(prep(updates, "scatter_sub")),
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )


# --------------------------------------------------------------------------- convolutions


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
    return lax_conv.conv_general_dilated(
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
    dn = lax_conv.conv_dimension_numbers(lshape, rshape, dimension_numbers)
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
    return lax_conv.conv_general_dilated(
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
        pads = lax_conv.padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
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
    dn = lax_conv.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
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
