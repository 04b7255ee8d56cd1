"""Products (``matmul``, ``dot``, ``tensordot``, ``einsum``, ...) and norms.

Every product is one or a few ``dot_general`` equations. Operands are promoted on
JAX's lattice without widening small integers (``int8 @ int8`` is ``int8``, as in
``jax.numpy``); bool products are computed in ``int32`` and compared with zero.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.numpy import _creation, _reductions, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_shapes,
    broadcast_to_shape,
    check_arraylike,
    convert,
    fmt,
    here,
    index,
    normalize_axes,
    normalize_axis,
    out,
    prep,
    promote,
    result_dtype,
    unsupported,
    user_dtype,
)
from funcgrad.numpy._einsum_path import parse_path
from funcgrad.numpy._reductions import sum as _sum
from funcgrad.numpy._shape import diagonal, expand_dims, moveaxis, squeeze, stack
from funcgrad.numpy._ufuncs import conjugate, multiply, subtract
from funcgrad.primitives import decomp
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh
from funcgrad.primitives.linalg import dot_general
from funcgrad.sharding import auto_axes, reshard

_BOOL = np.dtype("bool")
_I32 = np.dtype("int32")


def _operands(name: str, *xs: Any) -> tuple[list[Any], bool]:
    """Promoted array operands; bools computed as int32 (second result: convert back).

    As in ``jnp``, a weakly typed result takes its kind's default dtype (the products'
    ``preferred_element_type`` comes from ``dtypes.result_type``).
    """
    xs = tuple(prep(x, name) for x in xs)
    dt, weak = result_dtype(*xs)
    if weak:
        dt = dtypes.default_dtype(dtypes.kind(dt))
    ops = [as_array(convert(x, dt, weak), name) for x in xs]
    is_bool = aval(ops[0]).dtype == _BOOL
    if is_bool:
        ops = [convert(x, _I32) for x in ops]
    return ops, is_bool


def _finish(x: Any, is_bool: bool, pet: Any = None) -> Any:
    if is_bool and pet is None:
        x = ew.ne(x, np.asarray(0, aval(x).dtype))
    return out(x)


def _dot(x: Any, y: Any, dn: Any, pet: Any, out_sharding: Any = None) -> Any:
    return dot_general(x, y, dn, preferred_element_type=pet, out_sharding=out_sharding)


def _pet(name: str, preferred_element_type: Any) -> Any:
    return None if preferred_element_type is None else user_dtype(preferred_element_type, name)


def matmul(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Matrix product with NumPy's broadcasting of leading (batch) dimensions;
    ``out_sharding`` places the result over explicit mesh axes (``lax.dot_general``)."""
    check_arraylike("matmul", a, b)
    del precision
    return _matmul("matmul", a, b, preferred_element_type, out_sharding)


def _matmul(
    name: str, a: Any, b: Any, preferred_element_type: Any, out_sharding: Any = None
) -> Any:
    """``matmul``; errors name ``name``, the function the user called."""
    pet = _pet(name, preferred_element_type)
    (a, b), is_bool = _operands(name, a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:  # JAX's words
        raise ValueError(
            f"{name} input operand {0 if not sa else 1} must have ndim at least 1, but it has "
            f"ndim 0{here()}"
        )
    ka, kb = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        # a TypeError, as jnp's (lax.dot_general's shape check)
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{(ka,)} and {(kb,)}. ({name}: contracting dimensions differ: {fmt(a)} and "
            f"{fmt(b)}){here()}"
        )
    if len(sa) == 1 or len(sb) <= 2:
        # a vector operand or a (k, n) matrix: one plain contraction, no reshapes; the
        # free dimensions come out in matmul's order (a's leading ones, then b's)
        dims = (((len(sa) - 1,), (0 if len(sb) <= 2 else len(sb) - 2,)), ((), ()))
        return _finish(_dot(a, b, dims, pet, out_sharding), is_bool, pet)
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        raise ValueError(
            f"{name}: batch dimensions do not broadcast: {fmt(a)} and {fmt(b)}{here()}"
        ) from None
    nb = len(batch)
    a2 = broadcast_to_shape(a, batch + sa[-2:], name)
    b2 = broadcast_to_shape(b, batch + sb[-2:], name)
    bd = tuple(range(nb))
    dn = (((nb + 1,), (nb,)), (bd, bd))
    return _finish(_dot(a2, b2, dn, pet, out_sharding), is_bool, pet)


def dot(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """NumPy ``dot``: products of scalars, inner products of vectors, matrix products, and
    sums over ``a``'s last and ``b``'s second-to-last axis beyond; ``out_sharding``
    places the result over explicit mesh axes (``lax.dot_general``)."""
    check_arraylike("dot", a, b)
    na, nb = aval(as_array(a, "dot")).ndim, aval(as_array(b, "dot")).ndim
    if na == 0 or nb == 0:
        res = _scaled("dot", a, b, preferred_element_type)
        return res if out_sharding is None else reshard(res, out_sharding)
    if nb <= 2:
        return _matmul("dot", a, b, preferred_element_type, out_sharding)
    axes = ((na - 1,), (nb - 2,))
    return _tensordot("dot", a, b, axes, preferred_element_type, out_sharding)


def _scaled(name: str, a: Any, b: Any, preferred_element_type: Any) -> Any:
    """A product with a 0-d operand: an elementwise product (product dtype rules)."""

    pet = _pet(name, preferred_element_type)
    (a, b), is_bool = _operands(name, a, b)
    res = multiply(a, b)
    if pet is not None:
        res = convert(res, pet)
    return _finish(res, is_bool, pet)


def vdot(
    a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Dot product of the flattened arrays."""

    check_arraylike("vdot", a, b)
    a, b = as_array(a, "vdot"), as_array(b, "vdot")
    return _matmul(
        "vdot",
        sh.reshape(conjugate(a), (aval(a).size,)),
        sh.reshape(b, (aval(b).size,)),
        preferred_element_type,
    )


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Any:
    """Dot product of vectors along ``axis``, broadcasting the other axes."""

    check_arraylike("jnp.vecdot", x1, x2)
    (x1, x2), is_bool = _operands("vecdot", x1, x2)
    x1 = conjugate(x1)
    shape = broadcast_shapes("vecdot", x1, x2)
    ax = normalize_axis(axis, len(shape), "vecdot")
    p = multiply(broadcast_to_shape(x1, shape), broadcast_to_shape(x2, shape))
    return _finish(rd.reduce_sum(p, (ax,)), is_bool)


def inner(
    a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Sum of products over the last axes."""

    check_arraylike("inner", a, b)
    na, nb = aval(as_array(a, "inner")).ndim, aval(as_array(b, "inner")).ndim
    if na == 0 or nb == 0:
        return multiply(a, b)  # jnp.inner: plain promotion here, unlike dot
    return _tensordot("inner", a, b, ((na - 1,), (nb - 1,)), preferred_element_type)


def outer(a: ArrayLike, b: ArrayLike, out: Any = None) -> Any:
    """Outer product of the flattened arrays."""

    check_arraylike("outer", a, b)
    if out is not None:
        raise unsupported("outer(..., out=...)")
    a, b = as_array(a, "outer"), as_array(b, "outer")
    return multiply(sh.reshape(a, (aval(a).size, 1)), sh.reshape(b, (1, aval(b).size)))


# PyTorch's outer (and ger) takes two vectors, where NumPy's flattens its operands
ArrayRow(
    outer,
    torch=TorchArrayForm(
        "MulBackward0",
        (
            TorchParam(
                "vec2",
                "b",
                "tensor",
                ndim=(1, 1, "outer: Expected 1-D argument vec2, but got {ndim}-D"),
            ),
        ),
        ndim=(1, 1, "outer: Expected 1-D argument self, but got {ndim}-D"),
        aliases=("ger",),
        samples=(((3,), ((2,),)), ((4,), ((1,),))),
    ),
)


def tensordot(
    a: ArrayLike,
    b: ArrayLike,
    axes: Any = 2,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Sum products over ``axes`` (an int: the last/first ``axes`` axes; or a pair of
    axis sequences); ``out_sharding`` places the result over explicit mesh axes."""
    check_arraylike("tensordot", a, b)
    return _tensordot("tensordot", a, b, axes, preferred_element_type, out_sharding)


def _tensordot(
    name: str, a: Any, b: Any, axes: Any, preferred_element_type: Any, out_sharding: Any = None
) -> Any:
    """``tensordot``; errors name ``name``, the function the user called (shape
    mismatches are ``TypeError``s, as jnp's)."""
    pet = _pet(name, preferred_element_type)
    (a, b), is_bool = _operands(name, a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if isinstance(axes, (int, np.integer)):
        k = index(axes, "axes", name)
        if not 0 <= k <= min(na, nb):
            raise TypeError(
                f"Number of tensordot axes (axes {k}) exceeds input ranks ({aval(a).shape} "
                f"and {aval(b).shape}) "
                f"({name}: operands {fmt(a, b)}){here()}"
            )
        ax_a, ax_b = tuple(range(na - k, na)), tuple(range(k))
    else:
        if isinstance(axes, np.ndarray):
            axes = axes.tolist()
        if not (isinstance(axes, (list, tuple)) and len(axes) == 2):
            raise TypeError(
                "tensordot axes argument must be an int, a pair of ints, or a pair of lists/"
                f"tuples of ints ({name}: got {axes!r}){here()}"
            )
        xa, xb = axes
        ints = (int, np.integer)
        if isinstance(xa, ints) and isinstance(xb, ints):
            xa, xb = (xa,), (xb,)
        elif isinstance(xa, (list, tuple, np.ndarray)) and isinstance(
            xb, (list, tuple, np.ndarray)
        ):
            xa, xb = tuple(np.asarray(xa).tolist()), tuple(np.asarray(xb).tolist())
        else:
            raise TypeError(
                "tensordot requires both axes lists to be either ints, tuples or lists, "
                f"got {xa} and {xb}{here()}"
            )
        if len(xa) != len(xb):
            raise TypeError(
                f"tensordot requires axes lists to have equal length, got {xa} and {xb}.{here()}"
            )
        ax_a = normalize_axes(xa, na, name)
        ax_b = normalize_axes(xb, nb, name)
    for i, j in zip(ax_a, ax_b):
        if aval(a).shape[i] != aval(b).shape[j]:
            raise TypeError(
                f"{name}: shape mismatch for sum: axis {i} of {fmt(a)} vs axis {j} of "
                f"{fmt(b)}{here()}"
            )
    return _finish(_dot(a, b, ((ax_a, ax_b), ((), ())), pet, out_sharding), is_bool, pet)


def kron(a: ArrayLike, b: ArrayLike) -> Any:
    """Kronecker product."""

    check_arraylike("kron", a, b)
    a, b = as_array(a, "kron"), as_array(b, "kron")
    nd = max(aval(a).ndim, aval(b).ndim)
    sa = (1,) * (nd - aval(a).ndim) + aval(a).shape
    sb = (1,) * (nd - aval(b).ndim) + aval(b).shape
    a = sh.reshape(a, tuple(x for s in sa for x in (s, 1)))
    b = sh.reshape(b, tuple(x for s in sb for x in (1, s)))
    return out(sh.reshape(multiply(a, b), tuple(x * y for x, y in zip(sa, sb))))


# PyTorch's kron: its node is its last reshape's (its operands, reshaped to one number of
# dimensions first, promote as NumPy's: a 0-d one as dimensioned)
_KRONS = ((2, 2), ((2, 3),)), ((3,), ((2,),)), ((2, 3), ((2,),))
ArrayRow(
    kron,
    torch=TorchArrayForm(
        "UnsafeViewBackward0",
        (TorchParam("other", "b", "tensor"),),
        samples=_KRONS,
    ),
)


def cross(
    a: ArrayLike,
    b: ArrayLike,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: int | None = None,
) -> Any:
    """Cross product of 3-vectors (or 2-vectors) along the given axes."""

    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote("cross", a, b)
    a = moveaxis(as_array(a, "cross"), axisa, -1)
    b = moveaxis(as_array(b, "cross"), axisb, -1)
    na, nb = aval(a).shape[-1], aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: vectors must have 2 or 3 components, got {fmt(a, b)}{here()}")

    def comp(x: Any, i: int) -> Any:
        n = aval(x).shape[-1]
        if i >= n:
            return np.zeros((), aval(x).dtype)
        xa = aval(x)
        lo = (0,) * (xa.ndim - 1) + (i,)
        hi = (*xa.shape[:-1], i + 1)
        return sh.reshape(sh.slice(x, lo, hi), xa.shape[:-1])

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    c2 = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return c2
    c0 = subtract(multiply(a1, b2), multiply(a2, b1))
    c1 = subtract(multiply(a2, b0), multiply(a0, b2))
    shape = broadcast_shapes("cross", c0, c1, c2)
    res = stack([broadcast_to_shape(as_array(c, "cross"), shape) for c in (c0, c1, c2)], axis=-1)
    return moveaxis(res, -1, axisc)


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched matrix-vector product ``x1 @ x2[..., None]`` (broadcast batch axes)."""
    check_arraylike("matvec", x1, x2)
    return matmul(x1, _creation.asarray(x2)[..., None])[..., 0]


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched vector-matrix product ``conj(x1)[..., None, :] @ x2``."""
    check_arraylike("matvec", x1, x2)
    return matmul(_ufuncs.conj(_creation.asarray(x1))[..., None, :], x2)[..., 0, :]


# --------------------------------------------------------------------------- einsum


def einsum(
    subscripts: str,
    /,
    *operands: ArrayLike,
    optimize: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Einstein summation: explicit (``"ij,jk->ik"``) or implicit output, ``...``
    broadcasting, repeated labels within an operand (diagonals); ``optimize`` may be a
    contraction path (:func:`einsum_path`), followed as given; ``out_sharding`` places
    the result over explicit mesh axes (the last contraction's, as JAX's)."""
    del precision
    if not isinstance(subscripts, str):
        raise unsupported("einsum with the sublist (interleaved operand/axis list) form")
    check_arraylike("einsum", *operands)
    if not operands:
        raise ValueError(f"einsum: needs at least one operand{here()}")
    out_sharding = sharding_types.canonical(out_sharding, "einsum")
    if out_sharding is not None and len(operands) > 2:
        # several contractions: computed with the mesh's axes automatic and the result
        # placed by out_sharding, as JAX's (an intermediate's split has no given type)
        def contract(*ops: Any) -> Any:
            return einsum(
                subscripts, *ops, optimize=optimize, preferred_element_type=preferred_element_type
            )

        return auto_axes(contract, out_sharding=out_sharding)(*operands)
    pet = _pet("einsum", preferred_element_type)
    ops, is_bool = _operands("einsum", *operands)
    subs = subscripts.replace(" ", "")
    explicit = "->" in subs
    ins, outs = subs.split("->") if explicit else (subs, "")
    in_list = ins.split(",")
    if len(in_list) != len(ops):
        raise ValueError(
            f"einsum: {len(in_list)} operand subscripts in {subscripts!r} for {len(ops)} "
            f"operands{here()}"
        )
    for s in [*in_list, outs]:
        bad = set(s.replace("...", "")) - set(string.ascii_letters)
        if bad or s.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}{here()}")
    free = [c for c in string.ascii_letters if c not in subs]
    ell_nd = 0
    for s, o in zip(in_list, ops):
        if "..." in s:
            ell_nd = max(ell_nd, aval(o).ndim - (len(s) - 3))
    ell = "".join(free[:ell_nd])
    terms: list[tuple[str, Any]] = []
    for s, o in zip(in_list, ops):
        if "..." in s:
            k = aval(o).ndim - (len(s) - 3)
            if k < 0:
                raise ValueError(
                    f"einsum: subscripts {s!r} have too many labels for {fmt(o)}{here()}"
                )
            s = s.replace("...", ell[ell_nd - k :])
        if len(s) != aval(o).ndim:
            raise ValueError(
                f"einsum: subscripts {s!r} do not match an operand {fmt(o)} in {subscripts!r}{here()}"
            )
        terms.append((s, o))
    if explicit:
        outs = outs.replace("...", ell)  # without "..." in the output, those dims are summed
    else:
        counts: dict[str, int] = {}
        for s, _ in terms:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        outs = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    if len(set(outs)) != len(outs):
        raise ValueError(f"einsum: output subscript {outs!r} repeats a label{here()}")
    labels_in = set("".join(s for s, _ in terms))
    if set(outs) - labels_in:
        raise ValueError(
            f"einsum: output label(s) {sorted(set(outs) - labels_in)} do not appear in the inputs"
            f"{here()}"
        )
    sizes: dict[str, int] = {}
    for s, o in terms:
        for c, n in zip(s, aval(o).shape):
            if c in sizes and sizes[c] != n and 1 not in (n, sizes[c]):
                raise ValueError(
                    f"einsum: size of label {c!r} differs between operands ({sizes[c]} vs {n}) "
                    f"in {subscripts!r} for operands {fmt(*ops)}{here()}"
                )
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]  # 1 broadcasts; 0 stays 0
    # over explicit axes: each output label's split, given to the last contraction
    placed = None
    if out_sharding is not None:
        placed = sharding_types.named(out_sharding)
        parts = placed.spec.partitions
        spec = tuple(parts) + (None,) * (len(outs) - len(parts))
        placed = (placed.mesh, dict(zip(outs, spec)), placed.spec.unreduced, placed.spec.reduced)
    # per operand: take diagonals of repeated labels, sum labels used nowhere else
    prepared = []
    for i, (s, o) in enumerate(terms):
        others = set(outs).union(*[set(t) for j, (t, _) in enumerate(terms) if j != i])
        prepared.append(_prep_term(s, o, others))
    for step in parse_path(optimize, len(prepared)) or ():
        picked = [prepared[i] for i in step]
        prepared = [t for i, t in enumerate(prepared) if i not in step]
        keep = set(outs).union(*[set(t) for t, _ in prepared])
        if len(picked) == 1:
            prepared.append(_prep_term(*picked[0], keep))
        else:
            last = (None, None) if prepared else (pet, placed)
            prepared.append(_contract_pair(*picked[0], *picked[1], keep, *last))
    s0, x = prepared[0]
    for j in range(1, len(prepared)):  # left to right (all of them without a path)
        s1, y = prepared[j]
        keep = set(outs).union(*[set(t) for t, _ in prepared[j + 1 :]])
        last = j == len(prepared) - 1
        s0, x = _contract_pair(s0, x, s1, y, keep, *((pet, placed) if last else (None, None)))
    drop = tuple(i for i, c in enumerate(s0) if c not in outs)
    if drop:
        x = rd.reduce_sum(x, drop)
        s0 = "".join(c for c in s0 if c in outs)
    for c in outs:  # labels broadcast from size 1
        if aval(x).shape[s0.index(c)] != sizes[c]:
            shape = list(aval(x).shape)
            shape[s0.index(c)] = sizes[c]
            x = broadcast_to_shape(x, tuple(shape), "einsum")
    x = sh.transpose(x, tuple(s0.index(c) for c in outs))
    if pet is not None and aval(x).dtype != pet:
        x = convert(x, pet)
    if out_sharding is not None and len(terms) == 1:  # (no contraction: resharded)
        x = reshard(x, out_sharding)
    return _finish(x, is_bool, pet)


def _prep_term(s: str, x: Any, others: set) -> tuple[str, Any]:

    while len(set(s)) != len(s):
        c = next(ch for ch in s if s.count(ch) > 1)
        p, q = s.index(c), s.index(c, s.index(c) + 1)
        if aval(x).shape[p] != aval(x).shape[q]:
            raise ValueError(
                f"einsum: repeated label {c!r} has different sizes {aval(x).shape[p]} and "
                f"{aval(x).shape[q]} in one operand{here()}"
            )
        x = diagonal(x, 0, p, q)
        s = s[:p] + s[p + 1 : q] + s[q + 1 :] + c
    drop = tuple(k for k, c in enumerate(s) if c not in others)
    if drop:
        x = rd.reduce_sum(x, drop)
        s = "".join(c for c in s if c in others)
    return s, x


def _contract_pair(
    s0: str, x: Any, s1: str, y: Any, keep: set, pet: Any, placed: Any = None
) -> tuple[str, Any]:
    shared = [c for c in s0 if c in s1]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    for c in shared:
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
    s = (
        "".join(batch)
        + "".join(c for c in s0 if c not in shared)
        + "".join(c for c in s1 if c not in shared)
    )
    out_sharding = None
    if placed is not None:  # (mesh, the output labels' splits, unreduced and reduced axes)
        spec = PartitionSpec(*[placed[1].get(c) for c in s], unreduced=placed[2], reduced=placed[3])
        out_sharding = NamedSharding(placed[0], spec)
    res = dot_general(x, y, dn, preferred_element_type=pet, out_sharding=out_sharding)
    return s, res


def _expand(x: Any, axis: int, n: int) -> Any:
    shape = list(aval(x).shape)
    shape[axis] = n
    return broadcast_to_shape(x, tuple(shape), "einsum")


# --------------------------------------------------------------------------- trace, norms


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    """Sum along a diagonal (``offset``) of the ``axis1``/``axis2`` planes."""

    a = as_array(a, "trace")
    nd = aval(a).ndim
    if nd >= 2 and normalize_axis(axis1, nd, "trace") == normalize_axis(axis2, nd, "trace"):
        # a ValueError here, as jnp.trace (jnp.diagonal's is a TypeError)
        raise ValueError(
            f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2} (trace of "
            f"{fmt(a)}){here()}"
        )
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# PyTorch's trace: of a matrix only, bools refused, integers summed as int64
ArrayRow(
    trace,
    torch=TorchArrayForm(
        "TraceBackward0",
        (),
        ndim=(2, 2, "trace: expected a matrix, but got tensor with dim {ndim}"),
        promote="int64",
        bool_error="\"trace\" not implemented for 'Bool'",
        samples=(((3, 4), ()), ((3, 3), ())),
        out=False,  # (PyTorch's takes no ``out=``)
    ),
    method=True,
)


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (``ord`` None/2, 1, inf, -inf, 0, p) and matrix norms (``'fro'``, 1, -1,
    inf, -inf) as ``numpy.linalg.norm``; integer inputs are promoted to float."""

    check_arraylike("jnp.linalg.norm", x)
    (x,) = promote("norm", x, to="inexact")
    x = as_array(convert(x, aval(x).dtype), "norm")
    nd = aval(x).ndim
    if axis is None:
        if ord is None:
            return _ufuncs.sqrt(_reductions.sum(_abs2(x), axis=None, keepdims=keepdims))
        if nd not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm: {fmt(x)}{here()}")
        axis = tuple(range(nd))
    axes = normalize_axes(axis, nd, "norm")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: improper number of axes {axis!r} for norm{here()}")


def _abs2(x: Any) -> Any:
    """``|x|**2`` elementwise: ``x * x`` for real ``x``, ``Re(x * conj(x))`` for complex."""

    if dtypes.kind(aval(x).dtype) == 3:
        return _ufuncs.real(_ufuncs.multiply(x, _ufuncs.conjugate(x)))
    return _ufuncs.multiply(x, x)


def _vector_norm(x: Any, ord: Any, axes: tuple, keepdims: bool) -> Any:

    if ord is None or ord == 2:
        return _ufuncs.sqrt(_reductions.sum(_abs2(x), axis=axes, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"norm: Invalid order {ord!r} for vector norm.{here()}")
    if ord == np.inf:
        return _reductions.max(_ufuncs.abs(x), axis=axes, keepdims=keepdims)
    if ord == -np.inf:
        return _reductions.min(_ufuncs.abs(x), axis=axes, keepdims=keepdims)
    if ord == 0:  # the count, in the real dtype of the norm (as JAX's)
        dt = aval(_ufuncs.abs(_creation.zeros((), aval(x).dtype))).dtype
        return _reductions.sum(_ufuncs.not_equal(x, 0), axis=axes, keepdims=keepdims, dtype=dt)
    if ord == 1:
        return _reductions.sum(_ufuncs.abs(x), axis=axes, keepdims=keepdims)
    p = float(ord)
    return _ufuncs.power(
        _reductions.sum(_ufuncs.power(_ufuncs.abs(x), p), axis=axes, keepdims=keepdims), 1.0 / p
    )


def _matrix_norm(x: Any, ord: Any, axes: tuple, keepdims: bool) -> Any:

    row, col = axes
    if ord in (None, "fro"):
        return _ufuncs.sqrt(_reductions.sum(_abs2(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1):
        red = _reductions.max if ord == 1 else _reductions.min
        res = red(_reductions.sum(_ufuncs.abs(x), axis=row, keepdims=True), axis=col, keepdims=True)
    elif ord in (np.inf, -np.inf):
        red = _reductions.max if ord == np.inf else _reductions.min
        res = red(_reductions.sum(_ufuncs.abs(x), axis=col, keepdims=True), axis=row, keepdims=True)
    elif ord in (2, -2, "nuc"):
        res = _svd_norm(x, ord, row, col)
    else:
        raise ValueError(f"norm: Invalid order {ord!r} for matrix norm.{here()}")
    return res if keepdims else squeeze(res, axis=axes)


def _svd_norm(x: Any, ord: Any, row: int, col: int) -> Any:
    """Matrix norms from singular values (largest, smallest, or their sum), kept as
    size-1 axes at ``row`` and ``col``."""

    s = decomp.svd(moveaxis(x, (row, col), (-2, -1)), full_matrices=False, compute_uv=False)[0]
    red = {2: _reductions.max, -2: _reductions.min, "nuc": _reductions.sum}[ord]
    return expand_dims(red(s, axis=-1), tuple(sorted((row, col))))


def vector_norm(x: ArrayLike, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """Vector norm over ``axis`` (the flattened array when ``None``)."""

    check_arraylike("jnp.linalg.vector_norm", x)
    x = as_array(x, "vector_norm")
    # the vector norm over every axis given (all for None, none for ()), never a matrix
    # norm; its dtype as JAX's (integers stay integers where the formula keeps them)
    axes = tuple(range(aval(x).ndim)) if axis is None else axis
    return _vector_norm(x, ord, normalize_axes(axes, aval(x).ndim, "vector_norm"), keepdims)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """Matrix norm over the last two axes."""
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord, (-2, -1), keepdims)
