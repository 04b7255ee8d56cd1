"""Flips and rotations in a plane: ``fliplr``, ``flipud``, ``rot90`` (``flip`` along fixed
axes), with their PyTorch forms declared beside them as array rows."""

from __future__ import annotations

from typing import Any

from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.numpy._core import ArrayLike, as_array, aval, fmt, here, index, normalize_axes, out
from funcgrad.numpy._shape import flip, transpose


def fliplr(m: ArrayLike) -> Any:
    """Reverse along axis 1."""
    a = as_array(m, "fliplr")
    if aval(a).ndim < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got {fmt(a)}{here()}")
    return flip(a, 1)


def flipud(m: ArrayLike) -> Any:
    """Reverse along axis 0."""
    a = as_array(m, "flipud")
    if aval(a).ndim < 1:
        raise ValueError(f"flipud: input must be >= 1-d, got {fmt(a)}{here()}")
    return flip(a, 0)


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    a = as_array(m, "rot90")
    nd = aval(a).ndim
    if nd < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first "
            f"argument of shape {aval(a).shape}, which has ndim {nd}{here()}"
        )
    ax = normalize_axes(axes, nd, "rot90")
    if len(ax) != 2:
        raise ValueError(f"rot90: axes must be two different axes, got {axes!r}{here()}")
    k = index(k, "k", "rot90") % 4
    perm = list(range(nd))
    perm[ax[0]], perm[ax[1]] = perm[ax[1]], perm[ax[0]]
    if k == 0:
        return out(a)
    if k == 2:
        return flip(flip(a, ax[0]), ax[1])
    if k == 1:
        return transpose(flip(a, ax[1]), perm)
    return flip(transpose(a, perm), ax[1])


# PyTorch's forms: fliplr/flipud refuse too few dimensions with its text; rot90 takes two
# different dims (its count checked before the input's dimensions, as PyTorch)
for _f, _least, _samples in ((fliplr, 2, (((2, 3), ()),)), (flipud, 1, (((3,), ()), ((2, 3), ())))):
    _text = f"Input must be >= {_least}-d."
    _form = TorchArrayForm(  # (PyTorch's fliplr, flipud, rot90 take no ``out=``)
        "FlipBackward0", (), ndim=(_least, None, _text), samples=_samples, out=False
    )
    ArrayRow(_f, torch=_form)
_PLANE = TorchParam(
    "dims",
    "axes",
    "unique_dims",
    (0, 1),
    count=(2, "expected total rotation dims == 2, but got dims = {count}"),
    distinct="expected rotation dims to be different, but got dim0 = {0} and dim1 = {1}",
)
ArrayRow(
    rot90,
    torch=TorchArrayForm(
        "Rot90Backward0",
        (TorchParam("k", "k", "int", 1), _PLANE),
        ndim=(2, None, "expected total dims >= 2, but got total dims = {ndim}"),
        samples=(((3, 4), ()), ((2, 3, 4), (3, (1, 2))), ((3, 4), (-1, (1, 0)))),
        out=False,
    ),
)
