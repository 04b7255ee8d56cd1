"""``nn.functional.unfold`` (im2col) and ``fold`` (col2im), one compat op each.

``unfold`` stacks the strided slices of the padded input, one per kernel offset (channel
major, kernel offsets row-major, as PyTorch). ``fold`` is its transpose: funcgrad's VJP of
``unfold`` applied to the blocks, so overlapping blocks are summed.
"""

from __future__ import annotations

from typing import Any

import funcgrad
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor, _int_list


def _pair(fname: str, name: str, value: Any) -> tuple[int, int]:
    values = _int_list(value, 2)
    if values is None or len(values) != 2:
        raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {value!r}")
    return values[0], values[1]


def _blocks(
    spatial: tuple[int, int],
    k: tuple[int, int],
    d: tuple[int, int],
    p: tuple[int, int],
    s: tuple[int, int],
) -> tuple[int, int]:
    return tuple(
        (n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, di, pi, si in zip(spatial, k, d, p, s)
    )


def _unfold_f(x: Any, *, k: Any, d: Any, p: Any, s: Any) -> Any:
    """``(N, C, H, W)`` to ``(N, C * kh * kw, L)``."""
    n, c, h, w = x.shape
    oh, ow = _blocks((h, w), k, d, p, s)
    xp = fnp.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    cols = []
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * d[0], j * d[1]
            cols.append(
                xp[:, :, r0 : r0 + (oh - 1) * s[0] + 1 : s[0], c0 : c0 + (ow - 1) * s[1] + 1 : s[1]]
            )
    y = fnp.stack(cols, axis=2)  # (N, C, K, oh, ow)
    return fnp.reshape(y, (n, c * k[0] * k[1], oh * ow))


def _unfold_op(x: Any, *, k: Any, d: Any, p: Any, s: Any, unbatched: bool) -> Any:
    if unbatched:
        return _unfold_f(x[None], k=k, d=d, p=p, s=s)[0]
    return _unfold_f(x, k=k, d=d, p=p, s=s)


def _fold_op(cols: Any, *, out: Any, k: Any, d: Any, p: Any, s: Any, unbatched: bool) -> Any:
    if unbatched:
        cols = cols[None]
    n, ck, _ = cols.shape
    zeros = fnp.zeros((n, ck // (k[0] * k[1]), *out), dtype=cols.dtype)
    _, pullback = funcgrad.vjp(lambda z: _unfold_f(z, k=k, d=d, p=p, s=s), zeros)
    y = pullback(cols)[0]
    return y[0] if unbatched else y


def unfold(
    input: Tensor,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Sliding local blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) input as columns
    ``(N, C * kh * kw, L)``."""
    k = _pair("im2col", "kernel_size", kernel_size)
    d = _pair("im2col", "dilation", dilation)
    p = _pair("im2col", "padding", padding)
    s = _pair("im2col", "stride", stride)
    if input.dim() not in (3, 4) or any(n == 0 for n in input.shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor for input with possible 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    _check_args(k, d, p, s)
    blocks = _blocks(tuple(input.shape[-2:]), k, d, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size ({input.shape[-2]}, {input.shape[-1]}), "
            f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
            f"{p[1]}), calculated shape of the array of sliding blocks as ({blocks[0]}, "
            f"{blocks[1]}), but its components must be at least one."
        )
    static = (("k", k), ("d", d), ("p", p), ("s", s), ("unbatched", input.dim() == 3))
    return apply(_unfold_op, "Im2ColBackward0", (input,), static)


def _check_args(k: Any, d: Any, p: Any, s: Any) -> None:
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
            f"kernel_width: {k[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )
    if min(p) < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got stride_height: {s[0]} "
            f"stride_width: {s[1]}"
        )


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` (or ``(C * kh * kw, L)``) back into an
    ``(N, C, *output_size)`` image, overlapping blocks added."""
    out = _pair("col2im", "output_size", output_size)
    k = _pair("col2im", "kernel_size", kernel_size)
    d = _pair("col2im", "dilation", dilation)
    p = _pair("col2im", "padding", padding)
    s = _pair("col2im", "stride", stride)
    if input.dim() not in (2, 3) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possible 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    _check_args(k, d, p, s)
    ck, n_blocks = input.shape[-2], input.shape[-1]
    if ck % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size=({k[0]}, {k[1]})"
        )
    blocks = _blocks(out, k, d, p, s)
    if blocks[0] * blocks[1] != n_blocks:
        raise RuntimeError(
            f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={n_blocks}."
        )
    static = (
        ("out", out),
        ("k", k),
        ("d", d),
        ("p", p),
        ("s", s),
        ("unbatched", input.dim() == 2),
    )
    return apply(_fold_op, "Col2ImBackward0", (input,), static)
