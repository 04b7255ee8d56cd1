"""``torch.func.rearrange``: einops' ``rearrange`` (``"b (h w) c -> b h w c"``) as one
reshape, one permute and one reshape.

A side of the pattern is a list of axes, each a name, ``...`` (the dimensions no name
covers, left side: as many as the tensor has beyond the named ones), ``1`` or ``()``
(a dimension of size 1), or a parenthesised group of names (one dimension, their
product; ``axes_lengths`` give the sizes a group cannot infer). Both sides name the same
axes; the left side's split into single axes is permuted into the right side's order and
merged by its groups.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import compat.torch as torch

__all__ = ["rearrange"]

_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def _parse(side: str, where: str) -> list[list[str]]:
    """``side`` as its axes: each a list of names (``[]``: a unit axis); ``...`` is the
    name ``"..."``, expanded later."""
    axes: list[list[str]] = []
    group: list[str] | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if group is not None:
                raise ValueError(
                    f"Axis composition is one-level (brackets inside brackets) in {where}"
                )
            group = []
        elif tok == ")":
            if group is None:
                raise ValueError(f"Brackets are not balanced in {where}")
            axes.append(group)
            group = None
        elif tok.isdigit():
            if tok != "1":
                raise ValueError(
                    f"Non-unitary anonymous axes are not supported in rearrange: {tok}"
                )
            if group is None:
                axes.append([])
        elif tok == "..." or tok.isidentifier():
            if group is None:
                axes.append([tok])
            else:
                group.append(tok)
        else:
            raise ValueError(f"Unknown character {tok!r} in the pattern's {where}")
    if group is not None:
        raise ValueError(f"Brackets are not balanced in {where}")
    names = [n for a in axes for n in a]
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"Indexing expression contains duplicate dimension '{n}'")
    return axes


def _expand(axes: list[list[str]], count: int) -> list[list[str]]:
    """``...`` replaced by ``count`` single axes (a group holding it: by all of them)."""
    dots = [f"...{i}" for i in range(count)]
    out: list[list[str]] = []
    for a in axes:
        if a == ["..."]:
            out += [[d] for d in dots]
        else:
            out.append([d for n in a for d in (dots if n == "..." else [n])])
    return out


def _sizes(left: list[list[str]], shape: Sequence[int], lengths: dict[str, int]) -> dict[str, int]:
    """Each single axis's size, from the tensor's dimensions and ``lengths``."""
    sizes: dict[str, int] = {}
    for group, dim in zip(left, shape):
        if not group:
            if dim != 1:
                raise ValueError(f"Expected a dimension of size 1 for an anonymous axis, got {dim}")
            continue
        unknown = [n for n in group if n not in lengths and not n.startswith("...")]
        if len(group) == 1:
            unknown = group
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}")
        known = math.prod(lengths[n] for n in group if n not in unknown)
        if unknown:
            if known == 0 or dim % known:
                raise ValueError(
                    "inferred dimension does not evenly fit into larger dimension: "
                    f"{dim} vs {tuple(lengths.get(n, '?') for n in group)}"
                )
            lengths_here = {unknown[0]: dim // known}
        elif known != dim:
            raise ValueError(f"Shape mismatch, {dim} != {known} for the axes {group}")
        else:
            lengths_here = {}
        for n in group:
            sizes[n] = lengths_here.get(n, lengths.get(n, dim))
        if len(group) == 1 and group[0] in lengths and lengths[group[0]] != dim:
            raise ValueError(
                f"Shape mismatch, {dim} != {lengths[group[0]]} for the axis {group[0]}"
            )
    return sizes


def rearrange(
    tensor: Any,
    pattern: str,
    **axes_lengths: int,
) -> Any:
    """Reorder, split, merge, insert or remove unit axes of ``tensor`` (a tensor, or a
    sequence of tensors stacked on a new first dimension) as ``pattern`` says."""
    if isinstance(tensor, list | tuple):
        tensor = torch.stack(list(tensor))
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            f"rearrange(): expected a Tensor or a sequence of them, got {type(tensor).__name__}"
        )
    if pattern.count("->") != 1:
        raise ValueError(f"Pattern must contain a single '->' separator: {pattern!r}")
    lhs, rhs = pattern.split("->")
    left, right = _parse(lhs, "the left side"), _parse(rhs, "the right side")
    left_names = {n for a in left for n in a}
    right_names = {n for a in right for n in a}
    if left_names != right_names:
        raise ValueError(
            "Identifiers only on one side of rearrange expression (should be on both): "
            f"{left_names ^ right_names}"
        )
    for n in axes_lengths:
        if n not in left_names or n == "...":
            raise ValueError(f"Unexpected axis length {n!r}: not an axis of the pattern")
    ndim = tensor.dim()
    has_dots = "..." in left_names
    if any(len(a) > 1 and "..." in a for a in left):
        raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
    named = len(left) - (1 if has_dots else 0)
    if (ndim != len(left)) if not has_dots else ndim < named:
        raise ValueError(
            f"Number of dimensions in pattern ({len(left)}) must be equal to the number of "
            f"dimensions in the tensor ({ndim})"
        )
    count = ndim - named if has_dots else 0
    left, right = _expand(left, count), _expand(right, count)
    sizes = _sizes(left, tensor.shape, axes_lengths)
    order = [n for a in left for n in a]
    split = tensor.reshape([sizes[n] for n in order])
    wanted = [n for a in right for n in a]
    moved = split.permute([order.index(n) for n in wanted])
    return moved.reshape([math.prod(sizes[n] for n in a) for a in right])
