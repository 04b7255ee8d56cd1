"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian`` (``vmap`` of ``jvp``/``vjp`` over a basis)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.api._forward import jvp
from funcgrad.api._reverse import vjp
from funcgrad.api._tracing import (
    _argnums_tuple,
    _check_diff_dtypes,
    _check_out_dtype,
    _split_diff,
    check_callable,
)
from funcgrad.api._vmap import check_chunk_size, vmap
from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh
from funcgrad.tree_util import tree_flatten, tree_leaves, tree_unflatten


def _std_basis(leaves: list) -> tuple[Any, list[int]]:
    """An identity matrix split per leaf: returns (list of basis leaves, sizes)."""
    sizes = [int(np.prod(to_aval(x).shape, dtype=np.int64)) for x in leaves]
    n = sum(sizes)
    eye = ew.eq(sh.iota(np.int32, (n, n), 0), sh.iota(np.int32, (n, n), 1))
    out, start = [], 0
    for x, s in zip(leaves, sizes):
        a = to_aval(x)
        blk = ew.convert_element_type(sh.slice(eye, (0, start), (n, start + s)), a.dtype)
        out.append(sh.reshape(blk, (n, *a.shape)))
        start += s
    return out, sizes


def _basis_row(idx: Any, leaves: list) -> list:
    """Row ``idx`` of the identity :func:`_std_basis` splits, one one-hot array per leaf
    (under a chunked ``vmap`` over ``idx``, only a chunk of the basis exists at once)."""
    out, start = [], 0
    for x in leaves:
        a = to_aval(x)
        pos = sh.iota(np.int32, (a.size,), 0)
        at = sh.broadcast_in_dim(ew.sub(idx, np.int32(start)), (a.size,), ())
        out.append(sh.reshape(ew.convert_element_type(ew.eq(pos, at), a.dtype), a.shape))
        start += a.size
    return out


def _over_basis(f: Callable, leaves: list, chunk_size: int | None, **kw: Any) -> Any:
    """``f`` mapped over the rows of the identity split like ``leaves``; chunked, the
    rows are made inside the loop from their indices rather than stored whole."""
    if chunk_size is None:
        return vmap(f, **kw)(*_std_basis(leaves)[0])
    n = sum(to_aval(x).size for x in leaves)
    idx = sh.iota(np.int32, (n,), 0)
    return vmap(lambda i: f(*_basis_row(i, leaves)), chunk_size=chunk_size, **kw)(idx)


def _rows(x: Any, start: int, stop: int) -> Any:
    """``x[start:stop]`` (along the leading axis)."""
    shape = to_aval(x).shape
    return sh.slice(x, (start,) + (0,) * (len(shape) - 1), (stop, *shape[1:]))


def jacfwd(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Jacobian by forward mode: ``vmap`` of ``jvp`` over the input basis.

    Cheaper than :func:`jacrev` when there are fewer inputs than outputs.

    Args:
        fun: the function to differentiate.
        argnums: which positional argument(s) to differentiate with respect to.
        has_aux: ``fun`` returns ``(out, aux)``; the Jacobian function then returns
            ``(jacobian, aux)``.
        holomorphic: ``fun`` is complex-to-complex; inputs and outputs must be complex.
        chunk_size: push ``chunk_size`` basis vectors at a time (``vmap``'s
            ``chunk_size``: one compiled loop over the chunks); funcgrad's own.

    Returns:
        A function returning the Jacobian: for an output of shape ``S`` and an input of
        shape ``T``, an array of shape ``S + T`` (pytrees nest accordingly).

    Raises:
        TypeError: an input is not real floating (or not complex with ``holomorphic``),
            as in JAX.
    """
    check_callable(fun)
    check_chunk_size(chunk_size, "jacfwd")

    @functools.wraps(fun)  # fun's signature: jit's static_argnames may name its parameters
    def jac(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        f = _split_diff(fun, args, nums, {})
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff)
        _check_diff_dtypes(leaves, False, "jacfwd", holomorphic)

        weak: list[bool] = []

        def push(*t: Any) -> Any:
            r = jvp(f, diff, tree_unflatten(in_tree, list(t)), has_aux=has_aux)
            weak[:] = [to_aval(o).weak_type for o in tree_leaves(r[0])]
            if holomorphic:
                for o in tree_leaves(r[0]):
                    _check_out_dtype(to_aval(o).dtype, "jacfwd", True)
            return (r[1], r[2]) if has_aux else r[1]

        res = _over_basis(push, leaves, chunk_size, out_axes=(0, None) if has_aux else 0)
        tout, aux = res if has_aux else (res, None)
        t_leaves, out_tree = tree_flatten(tout)
        in_shapes = [to_aval(x).shape for x in leaves]
        jac_leaves = []
        for t, w in zip(t_leaves, weak):
            out_shape = to_aval(t).shape[1:]
            parts, start = [], 0
            for s in in_shapes:
                sz = int(np.prod(s, dtype=np.int64))
                blk = _rows(t, start, start + sz)
                blk = sh.reshape(blk, (*s, *out_shape))
                nd_in = len(s)
                perm = tuple(range(nd_in, nd_in + len(out_shape))) + tuple(range(nd_in))
                parts.append(_weak_as(sh.transpose(blk, perm), w))
                start += sz
            jac_leaves.append(_pack(parts, in_tree, argnums))
        out = tree_unflatten(out_tree, jac_leaves)
        return (out, aux) if has_aux else out

    return jac


def _weak_as(x: Any, weak: bool) -> Any:
    """``x`` weakly typed when its example is, as JAX's Jacobians are: ``jacfwd``'s
    entries follow the function's output, ``jacrev``'s its input (``jacrev(f)(2.0)``
    is weakly typed like ``grad(f)(2.0)``)."""
    a = to_aval(x)
    return ew.convert_element_type(x, a.dtype, True) if weak and not a.weak_type else x


def _pack(parts: list, in_tree: Any, argnums: Any) -> Any:
    t = tree_unflatten(in_tree, parts)
    return t[0] if isinstance(argnums, int) else t


def jacrev(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Jacobian by reverse mode: ``vmap`` of ``vjp`` over the output basis.

    Cheaper than :func:`jacfwd` when there are fewer outputs than inputs.

    Args:
        fun: the function to differentiate.
        argnums: which positional argument(s) to differentiate with respect to.
        has_aux: ``fun`` returns ``(out, aux)``; the Jacobian function then returns
            ``(jacobian, aux)``.
        holomorphic: ``fun`` is complex-to-complex; inputs and outputs must be complex.
        allow_int: allow integer inputs; their Jacobian blocks are zeros of their dtype (JAX's).
        chunk_size: pull back ``chunk_size`` basis vectors at a time (one compiled loop
            over the chunks; the forward pass runs once); funcgrad's own.

    Returns:
        A function returning the Jacobian: for an output of shape ``S`` and an input of
        shape ``T``, an array of shape ``S + T``. Complex inputs of a real function give
        ``df/dx - i df/dy``, as in JAX.

    Raises:
        TypeError: an output is not real floating (or not complex with
            ``holomorphic``), as in JAX.
    """
    check_callable(fun)
    check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(fun)  # fun's signature: jit's static_argnames may name its parameters
    def jac(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        f = _split_diff(fun, args, nums, {})
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff)
        _check_diff_dtypes(leaves, allow_int, "jacrev", holomorphic)
        if has_aux:
            out, vjp_fn, aux = vjp(f, *diff, has_aux=True)
        else:
            out, vjp_fn = vjp(f, *diff)
            aux = None
        o_leaves, out_tree = tree_flatten(out)
        for o in o_leaves:
            _check_out_dtype(to_aval(o).dtype, "jacrev", holomorphic)

        def pull(*c: Any) -> Any:
            return vjp_fn(tree_unflatten(out_tree, list(c)))

        cts = _over_basis(pull, o_leaves, chunk_size)
        ct_leaves = tree_flatten(cts)[0]  # per input leaf, shape (n_out_total, *in_shape)
        out_shapes = [to_aval(o).shape for o in o_leaves]
        jac_leaves = []
        start = 0
        for s in out_shapes:
            sz = int(np.prod(s, dtype=np.int64))
            parts = [
                sh.full((*s, *to_aval(x).shape), 0, to_aval(x).dtype)  # as JAX: not float0
                if not dtypes.is_inexact(to_aval(x).dtype)
                else _weak_as(
                    sh.reshape(_rows(c, start, start + sz), (*s, *to_aval(c).shape[1:])),
                    to_aval(x).weak_type,
                )
                for c, x in zip(ct_leaves, leaves)
            ]
            jac_leaves.append(_pack(parts, in_tree, argnums))
            start += sz
        res = tree_unflatten(out_tree, jac_leaves)
        return (res, aux) if has_aux else res

    return jac


def hessian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Hessian as ``jacfwd(jacrev(fun))``.

    Args:
        fun: a scalar-output function.
        argnums: which positional argument(s) to differentiate with respect to.
        has_aux: ``fun`` returns ``(out, aux)``; passed to both Jacobians.
        holomorphic: passed to both Jacobians.

    Returns:
        A function returning the matrix of second derivatives, of shape ``T + T`` for
        an input of shape ``T``. For large inputs prefer a Hessian-vector product,
        ``jvp(grad(fun), (x,), (v,))[1]``, which never forms the matrix.
    """
    inner = jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, has_aux=has_aux, holomorphic=holomorphic)
