"""The memory layout of compat's views as PyTorch's: sizes, strides and storage offset
after each view step (index, reshape, permute, expand, diagonal, unfold, as_strided,
dtype and complex views), ``view``'s stride rule and PyTorch's contiguity test. Pure
functions of tuples: :mod:`compat._core.views` applies them to tensors."""

from __future__ import annotations

import math


def contiguous_strides(shape: tuple) -> tuple:
    """Row-major strides of ``shape``, in elements."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    """PyTorch's rule: dims of size 1 do not count, empty tensors are contiguous."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def view_strides(shape: tuple, strides: tuple, new_shape: tuple) -> tuple | None:
    """Strides of ``new_shape`` viewing memory laid out as (``shape``, ``strides``), or
    ``None`` when no strides can (a dimension would span two non-adjacent chunks)."""
    if not shape or math.prod(shape) == 0:
        return contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    vd = len(new_shape) - 1
    base = strides[-1]
    t_numel = v_numel = 1
    for td in range(len(shape) - 1, -1, -1):
        t_numel *= shape[td]
        # a chunk ends where the next-outer dim is not laid out right after this one
        if td == 0 or (shape[td - 1] != 1 and strides[td - 1] != t_numel * base):
            while vd >= 0 and (v_numel < t_numel or new_shape[vd] == 1):
                out[vd] = v_numel * base
                v_numel *= new_shape[vd]
                vd -= 1
            if v_numel != t_numel:
                return None
            if td > 0:
                base = strides[td - 1]
                t_numel = v_numel = 1
    return tuple(out) if vd == -1 else None


def _ix_layout(shape: tuple, strides: tuple, offset: int, spec: tuple, dyn: tuple) -> tuple:
    osh: list = []
    ost: list = []
    d = 0
    used = sum(1 for s in spec if s[0] in "sdi")
    for s in spec:
        k = s[0]
        if k == "n":
            osh.append(1)
            ost.append(shape[d] * strides[d] if d < len(shape) else 1)
        elif k == "e":
            for _ in range(len(shape) - used):
                osh.append(shape[d])
                ost.append(strides[d])
                d += 1
        elif k == "s":
            start, stop, step = slice(s[1], s[2], s[3]).indices(shape[d])
            n = len(range(start, stop, step))
            if n:
                offset += start * strides[d]
            osh.append(n)
            ost.append(strides[d] * step)
            d += 1
        else:
            offset += (s[1] if k == "i" else dyn[s[1]]) * strides[d]
            d += 1
    return (*osh, *shape[d:]), (*ost, *strides[d:]), offset


def step_layout(layout: tuple, step: tuple, dyn: tuple) -> tuple:
    """The (shape, strides, offset) after one view step."""
    shape, strides, offset = layout
    k = step[0]
    if k == "ix":
        return _ix_layout(shape, strides, offset, step[1], dyn)
    if k == "pm":
        p = step[1]
        return tuple(shape[i] for i in p), tuple(strides[i] for i in p), offset
    if k == "rs":
        return step[1], view_strides(shape, strides, step[1]), offset
    if k == "us":  # unsqueeze: PyTorch's stride for the new dim
        a = step[2]
        st = shape[a] * strides[a] if a < len(shape) else 1
        return step[1], (*strides[:a], st, *strides[a:]), offset
    if k == "sq":
        return step[1], tuple(s for i, s in enumerate(strides) if i not in step[2]), offset
    if k == "ex":  # PyTorch's inferExpandGeometry: a new dim of size 1 takes the stride
        new = step[1]  # its inner neighbour would have as one more dim; a grown dim 0
        lead = len(new) - len(shape)
        st = [0] * len(new)
        for i in range(len(new) - 1, -1, -1):
            if i >= lead:
                st[i] = strides[i - lead] if shape[i - lead] == new[i] else 0
            elif new[i] == 1 and i + 1 < len(new):
                st[i] = new[i + 1] * st[i + 1]
        return new, tuple(st), offset
    if k == "uf":  # unfold: windows along an axis, their elements as a new last dim
        a, size, stp = step[1:]
        n = (shape[a] - size) // stp + 1
        return (
            (*shape[:a], n, *shape[a + 1 :], size),
            (*strides[:a], strides[a] * stp, *strides[a + 1 :], strides[a]),
            offset,
        )
    if k == "vr":  # view_as_real: each complex element is two floats
        return (*shape, 2), (*(2 * s for s in strides), 1), 2 * offset
    if k == "vc":  # view_as_complex: pairs of floats are one complex element
        return shape[:-1], tuple(s // 2 for s in strides[:-1]), offset // 2
    if k in ("cj", "ng"):  # conj() / _neg_view(): the same memory read with a bit set
        return layout
    if k == "bc":  # view(dtype): the same bytes; the last dim counts the new elements
        a, b = step[2], step[3]
        if a == b:
            return layout
        if a > b:
            r = a // b
            return (*shape[:-1], shape[-1] * r), (*(s * r for s in strides[:-1]), 1), offset * r
        r = b // a
        return (*shape[:-1], shape[-1] // r), (*(s // r for s in strides[:-1]), 1), offset // r
    if k in ("re", "im"):  # .real / .imag: every other float of the complex storage
        return shape, tuple(2 * s for s in strides), 2 * offset + (k == "im")
    if k == "as":  # as_strided: absolute, from the root's storage
        return step[1], step[2], step[3]
    if k == "dg":
        off, a1, a2 = step[1:]
        n1, n2 = shape[a1], shape[a2]
        n = max(min(n1, n2 - off), 0) if off >= 0 else max(min(n1 + off, n2), 0)
        if n:
            offset += off * strides[a2] if off >= 0 else -off * strides[a1]
        rest = [i for i in range(len(shape)) if i not in (a1, a2)]
        return (
            (*(shape[i] for i in rest), n),
            (*(strides[i] for i in rest), strides[a1] + strides[a2]),
            offset,
        )
    raise AssertionError(k)
