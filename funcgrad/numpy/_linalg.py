"""Products: matmul, dot, tensordot, outer, inner, einsum; and ``linalg.norm``."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import aval, broadcast_shapes, broadcast_to_shape, normalize_axis, prep, promote
from funcgrad.primitives import shape as sh
from funcgrad.primitives.linalg import dot_general


def _arrs(name: str, *xs: Any) -> list:
    out = promote(name, *xs)
    return [
        np.asarray(x, dtypes.python_scalar_dtype(x)) if type(x) in (bool, int, float, complex) else x
        for x in out
    ]


def matmul(a: Any, b: Any) -> Any:
    """Matrix product with NumPy's broadcasting of leading (batch) dimensions."""
    a, b = _arrs("matmul", a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        raise ValueError("matmul: operands must not be 0-d (use multiply)")
    a2 = sh.reshape(a, (1, sa[0])) if len(sa) == 1 else a
    b2 = sh.reshape(b, (sb[0], 1)) if len(sb) == 1 else b
    sa2, sb2 = aval(a2).shape, aval(b2).shape
    if sa2[-1] != sb2[-2]:
        raise ValueError(
            f"matmul: contracting dimensions differ: {aval(a)} @ {aval(b)} "
            f"({sa2[-1]} != {sb2[-2]})"
        )
    batch = broadcast_shapes("matmul", sa2[:-2], sb2[:-2])
    nb = len(batch)
    if len(sa2) - 2 == nb and sa2[:-2] == batch and len(sb2) == 2:
        # (..., m, k) @ (k, n): fold batch into rows, one plain dot
        out = dot_general(a2, b2, dimension_numbers=(((len(sa2) - 1,), (0,)), ((), ())))
    else:
        a2 = broadcast_to_shape(a2, batch + sa2[-2:]) if sa2[:-2] != batch else a2
        b2 = broadcast_to_shape(b2, batch + sb2[-2:]) if sb2[:-2] != batch else b2
        bd = tuple(range(nb))
        out = dot_general(a2, b2, dimension_numbers=(((nb + 1,), (nb,)), (bd, bd)))
    oshape = list(aval(out).shape)
    if len(sb) == 1:
        oshape.pop(-1)
    if len(sa) == 1:
        oshape.pop(-2 if len(sb) != 1 else -1)
    if tuple(oshape) != aval(out).shape:
        out = sh.reshape(out, tuple(oshape))
    return out


def dot(a: Any, b: Any) -> Any:
    """NumPy ``dot``: matmul for ≤2-D, sum over a's last and b's second-to-last axis otherwise."""
    a, b = _arrs("dot", a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 0 or nb == 0:
        from funcgrad.numpy._ufuncs import multiply

        return multiply(a, b)
    if nb <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=((na - 1,), (nb - 2,)))


def vdot(a: Any, b: Any) -> Any:
    from funcgrad.numpy._shape import ravel

    return dot(ravel(a), ravel(b))


def inner(a: Any, b: Any) -> Any:
    a, b = _arrs("inner", a, b)
    if aval(a).ndim == 0 or aval(b).ndim == 0:
        from funcgrad.numpy._ufuncs import multiply

        return multiply(a, b)
    return tensordot(a, b, axes=((aval(a).ndim - 1,), (aval(b).ndim - 1,)))


def outer(a: Any, b: Any) -> Any:
    from funcgrad.numpy._shape import ravel
    from funcgrad.numpy._ufuncs import multiply

    a, b = ravel(a), ravel(b)
    return multiply(sh.reshape(a, (aval(a).shape[0], 1)), sh.reshape(b, (1, aval(b).shape[0])))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum products over the given axes."""
    a, b = _arrs("tensordot", a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if isinstance(axes, int):
        ax_a = tuple(range(na - axes, na))
        ax_b = tuple(range(axes))
    else:
        xa, xb = axes
        xa = (xa,) if isinstance(xa, int) else tuple(xa)
        xb = (xb,) if isinstance(xb, int) else tuple(xb)
        ax_a = tuple(normalize_axis(i, na, "tensordot") for i in xa)
        ax_b = tuple(normalize_axis(i, nb, "tensordot") for i in xb)
    return dot_general(a, b, dimension_numbers=((ax_a, ax_b), ((), ())))


def einsum(subscripts: str, *operands: Any) -> Any:
    """Einstein summation over operands (explicit or implicit output, ``...`` supported)."""
    ops = _arrs("einsum", *operands)
    subs = subscripts.replace(" ", "")
    if "->" in subs:
        ins, out = subs.split("->")
        explicit = True
    else:
        ins, out, explicit = subs, "", False
    in_list = ins.split(",")
    if len(in_list) != len(ops):
        raise ValueError(
            f"einsum: {len(in_list)} operand subscripts for {len(ops)} operands in {subscripts!r}"
        )
    # expand ellipses with fresh letters
    free = [c for c in string.ascii_letters if c not in subs]
    ell_nd = 0
    for s, o in zip(in_list, ops):
        if "..." in s:
            ell_nd = max(ell_nd, aval(o).ndim - (len(s) - 3))
    ell = "".join(free[:ell_nd])
    new_in = []
    for s, o in zip(in_list, ops):
        if "..." in s:
            k = aval(o).ndim - (len(s) - 3)
            s = s.replace("...", ell[ell_nd - k :])
        if len(s) != aval(o).ndim:
            raise ValueError(
                f"einsum: subscripts {s!r} do not match operand of shape {aval(o).shape}"
            )
        new_in.append(s)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for s in new_in:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    sizes: dict[str, int] = {}
    for s, o in zip(new_in, ops):
        for c, n in zip(s, aval(o).shape):
            if c in sizes and sizes[c] != n and 1 not in (n, sizes[c]):
                raise ValueError(f"einsum: size of label {c!r} differs: {sizes[c]} vs {n}")
            sizes[c] = max(sizes.get(c, 1), n)
    # reduce each operand's repeated labels (diagonals) and private labels first
    terms = [_prep_term(s, o, out, new_in, i) for i, (s, o) in enumerate(zip(new_in, ops))]
    s0, x = terms[0]
    for s1, y in terms[1:]:
        rest_labels = set(out)
        s0, x = _contract_pair(s0, x, s1, y, rest_labels | _labels_after(terms, s1))
    # final: sum remaining labels not in out, then transpose
    from funcgrad.numpy._reductions import sum as _sum

    drop = tuple(i for i, c in enumerate(s0) if c not in out)
    if drop:
        x = _sum(x, axis=drop)
        s0 = "".join(c for c in s0 if c in out)
    if s0 != out:
        x = sh.transpose(x, tuple(s0.index(c) for c in out))
    return x


def _labels_after(terms: list, s1: str) -> set:
    seen, out = False, set()
    for s, _ in terms:
        if seen:
            out |= set(s)
        if s is s1:
            seen = True
    return out


def _prep_term(s: str, x: Any, out: str, all_in: list, i: int) -> tuple[str, Any]:
    from funcgrad.numpy._reductions import sum as _sum

    # diagonal for repeated labels within one operand
    while len(set(s)) != len(s):
        c = next(ch for ch in s if s.count(ch) > 1)
        p, q = s.index(c), s.index(c, s.index(c) + 1)
        x = _diagonal(x, p, q)
        s = s[:p] + s[p + 1 : q] + s[q + 1 :] + c
    others = set(out).union(*[set(t) for j, t in enumerate(all_in) if j != i])
    drop = tuple(k for k, c in enumerate(s) if c not in others)
    if drop:
        x = _sum(x, axis=drop)
        s = "".join(c for c in s if c in others)
    return s, x


def _diagonal(x: Any, p: int, q: int) -> Any:
    """Take the diagonal over axes p, q, appended as the last axis."""
    from funcgrad.numpy._creation import eye
    from funcgrad.numpy._reductions import sum as _sum
    from funcgrad.numpy._ufuncs import multiply

    shape = aval(x).shape
    n = shape[p]
    e = eye(n, dtype=aval(x).dtype)
    eshape = [1] * len(shape)
    eshape[p], eshape[q] = n, n
    y = multiply(x, sh.reshape(e, tuple(eshape)))
    y = _sum(y, axis=q)
    # move axis p to the end
    nd = len(shape) - 1
    perm = [i for i in range(nd) if i != p] + [p]
    return sh.transpose(y, tuple(perm))


def _contract_pair(s0: str, x: Any, s1: str, y: Any, keep: set) -> tuple[str, Any]:
    batch = [c for c in s0 if c in s1 and c in keep]
    contract = [c for c in s0 if c in s1 and c not in keep]
    # broadcast size-1 label mismatches
    for c in batch + contract:
        n0, n1 = aval(x).shape[s0.index(c)], aval(y).shape[s1.index(c)]
        if n0 != n1:
            if n0 == 1:
                x = _expand(x, s0.index(c), n1)
            else:
                y = _expand(y, s1.index(c), n0)
    dn = (
        (tuple(s0.index(c) for c in contract), tuple(s1.index(c) for c in contract)),
        (tuple(s0.index(c) for c in batch), tuple(s1.index(c) for c in batch)),
    )
    out = dot_general(x, y, dimension_numbers=dn)
    s = (
        "".join(batch)
        + "".join(c for c in s0 if c not in batch and c not in contract)
        + "".join(c for c in s1 if c not in batch and c not in contract)
    )
    return s, out


def _expand(x: Any, axis: int, n: int) -> Any:
    shape = list(aval(x).shape)
    shape[axis] = n
    return broadcast_to_shape(x, tuple(shape))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector / matrix norms (2-norm, 1, inf, Frobenius)."""
    from funcgrad.numpy import _reductions as r
    from funcgrad.numpy import _ufuncs as u

    x = prep(x, "norm")
    if not dtypes.is_inexact(aval(x).dtype):
        x = u._float_arg("norm", x)
    nd = aval(x).ndim
    if axis is None and ord is None:
        return u.sqrt(r.sum(u.multiply(x, x), axis=None, keepdims=keepdims))
    if axis is None:
        axis = tuple(range(nd)) if nd <= 2 else None
        if nd == 1:
            axis = 0
    if isinstance(axis, int) or (isinstance(axis, Sequence) and len(axis) == 1):
        if ord is None or ord == 2:
            return u.sqrt(r.sum(u.multiply(x, x), axis=axis, keepdims=keepdims))
        if ord == 1:
            return r.sum(u.abs(x), axis=axis, keepdims=keepdims)
        if ord in (np.inf, "inf"):
            return r.max(u.abs(x), axis=axis, keepdims=keepdims)
        if ord in (-np.inf,):
            return r.min(u.abs(x), axis=axis, keepdims=keepdims)
        if ord == 0:
            return r.sum(u.not_equal(x, 0), axis=axis, keepdims=keepdims)
        p = float(ord)
        return u.power(r.sum(u.power(u.abs(x), p), axis=axis, keepdims=keepdims), 1.0 / p)
    if ord in (None, "fro"):
        return u.sqrt(r.sum(u.multiply(x, x), axis=axis, keepdims=keepdims))
    if ord == 1:
        a0, a1 = axis
        return r.max(r.sum(u.abs(x), axis=a0, keepdims=True), axis=(a0, a1), keepdims=keepdims)
    if ord in (np.inf, "inf"):
        a0, a1 = axis
        return r.max(r.sum(u.abs(x), axis=a1, keepdims=True), axis=(a0, a1), keepdims=keepdims)
    raise NotImplementedError(f"funcgrad.numpy.linalg.norm with ord={ord!r} for matrices")


def trace(a: Any, offset: int = 0) -> Any:
    from funcgrad.numpy._creation import diag
    from funcgrad.numpy._reductions import sum as _sum

    return _sum(diag(a, offset))
