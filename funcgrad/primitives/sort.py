"""``sort``: ``lax.sort`` of several operands along one dimension, lexicographically by the
first ``num_keys``, the others permuted alongside; with every rule (tangents and
cotangents ride along as extra operands). Used by ``funcgrad.numpy.sort``/``argsort``,
``funcgrad.lax.sort`` and ``funcgrad.random.permutation``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand
from funcgrad.primitives.shape import iota

FAMILY = "sort"


sort_p = Primitive("sort", family=FAMILY, multiple_results=True)


@sort_p.def_abstract_eval
def _sort_abstract_eval(
    *operands: Aval, dimension: int, is_stable: bool, num_keys: int
) -> list[Aval]:
    if not operands:
        raise TypeError("sort: needs at least one operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands):
        shapes = ", ".join(str(o) for o in operands)
        raise TypeError(f"sort: operands must have equal shapes, got {shapes}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort: dimension {dimension} out of range for operands of shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be in [1, {len(operands)}]")
    return [o.strip_weak() for o in operands]


@sort_p.def_lower
def _sort_lower(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list:
    ops = [np.asarray(o) if isinstance(o, (bool, int, float)) else o for o in operands]
    out = lax.sort(tuple(ops), dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    return list(out)


@sort_p.def_host
def _sort_host(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list:
    # (NumPy's order is the lowering's: NaNs last and equal, -0.0 == 0.0; always stable)
    if num_keys == 1:
        perm = operands[0].argsort(axis=dimension, kind="stable")
    else:
        perm = np.lexsort(operands[num_keys - 1 :: -1], axis=dimension)
    if perm.ndim == 1:
        return [o[perm] for o in operands]
    return [np.take_along_axis(o, perm, axis=dimension) for o in operands]


@sort_p.def_jvp
def _sort_jvp(primals: list, tangents: list, *, dimension: int, is_stable: bool, num_keys: int):
    # tangents ride along as extra payload operands: they are permuted exactly as their primals
    nz = [not is_zero(t) and dtypes.is_inexact(to_aval(p).dtype) for p, t in zip(primals, tangents)]
    ts = [t for t, z in zip(tangents, nz) if z]
    outs = sort(*primals, *ts, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    n = len(primals)
    it = iter(outs[n:])
    touts = [next(it) if z else Zero(to_aval(o).strip_weak()) for z, o in zip(nz, outs[:n])]
    return outs[:n], touts


@sort_p.def_vjp
def _sort_vjp(cts: list, *operands: Any, out: Any, dimension: int, is_stable: bool, num_keys: int):
    shape = to_aval(operands[0]).shape
    idx = iota(np.int32, shape, dimension)
    perm = sort(
        *operands[:num_keys], idx, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )[-1]
    # out[.., j, ..] = x[.., perm[j], ..]; sorting (perm, ct) by perm applies the inverse
    live = [
        i
        for i, (c, x) in enumerate(zip(cts, operands))
        if not is_zero(c) and dtypes.is_inexact(to_aval(x).dtype)
    ]
    if not live:
        return [None] * len(operands)
    back = sort(perm, *[cts[i] for i in live], dimension=dimension, is_stable=True, num_keys=1)
    res: list[Any] = [None] * len(operands)
    for i, c in zip(live, back[1:]):
        res[i] = c
    return res


@sort_p.def_batch
def _sort_batch(args: list, dims: list, *, dimension: int, is_stable: bool, num_keys: int):
    size = rules.batch_size(args, dims)
    ops = [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    outs = sort(*ops, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


@sort_p.def_examples
def _sort_examples(rng: np.random.Generator) -> list[Example]:
    p = {"is_stable": True, "num_keys": 1}
    return [
        Example([rand(rng, (5,))], {"dimension": 0, **p}),
        Example([rand(rng, (3, 4)), rand(rng, (3, 4))], {"dimension": 1, **p}),
        Example([rand(rng, (4, 3)), rand(rng, (4, 3))], {"dimension": 0, **p, "num_keys": 2}),
        # keys with ties (a stable sort keeps their order); only the payload is differentiated
        Example(
            [np.asarray(rng.integers(0, 3, (6,)), np.float64), rand(rng, (6,))],
            {"dimension": 0, **p},
            diff_argnums=(1,),
        ),
        # NaNs last, -0.0 and 0.0 equal (the stable sort keeps their order); ties in the
        # first key sorted by the second
        Example(
            [np.array([0.0, np.nan, -0.0, 1.0, -np.inf, 0.0]), rand(rng, (6,))],
            {"dimension": 0, **p},
            diff_argnums=(),
        ),
        Example(
            [
                np.array([1, 0, 1, 0, 1, 0], np.int32),
                np.array([3.0, 2.0, 1.0, 2.0, -1.0, 2.0]),
                rand(rng, (6,)),
            ],
            {"dimension": 0, **p, "num_keys": 2},
            diff_argnums=(2,),
        ),
    ]


def sort(*operands: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> list:
    """Sort ``operands`` along ``dimension`` lexicographically by the first ``num_keys``
    (``lax.sort``); the other operands are permuted alongside."""
    nd = to_aval(operands[0]).ndim
    if nd and not -nd <= dimension < nd:
        raise ValueError(f"sort: dimension {dimension} out of range for rank {nd}")
    dim = dimension % nd if nd else dimension
    return bind(sort_p, *operands, dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys))
