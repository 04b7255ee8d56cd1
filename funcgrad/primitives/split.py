"""``split``: an array cut along one axis into pieces of given sizes, as JAX's
``lax.split`` (one equation with several results, where slices were one each).

Its transpose is one ``concatenate`` of the pieces' cotangents (zeros for pieces without
one), where the slices' was a ``pad`` of each cotangent to the whole operand and a sum
of the pads: the backward of an LSTM's four gates or of attention's ``q, k, v`` wrote
and added three or four operand-sized arrays.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand
from funcgrad.primitives.shape import concatenate
from funcgrad.primitives.sharding import typed_as

FAMILY = "shape"

split_p = Primitive("split", family=FAMILY, multiple_results=True)


@split_p.def_abstract_eval
def _split_abstract_eval(x: Aval, *, sizes: tuple[int, ...], axis: int) -> list[Aval]:
    if not 0 <= axis < x.ndim:
        raise TypeError(f"split: axis {axis} out of range for an operand of shape {x.shape}")
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise TypeError(
            f"split: sizes {list(sizes)} must be nonnegative and add up to dimension {axis} "
            f"of the operand's shape {list(x.shape)}"
        )
    return [Aval(x.shape[:axis] + (s,) + x.shape[axis + 1 :], x.dtype, x.weak_type) for s in sizes]


split_p.lower = lambda x, *, sizes, axis: lax.split(x, sizes, axis)
split_p.host = lambda x, *, sizes, axis: np.split(
    np.asarray(x), list(itertools.accumulate(sizes))[:-1], axis
)


def _split_sharding(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """Each piece keeps the operand's splits, as JAX's rule (a split dimension cut into
    pieces that do not divide over its axes is JAX's ``ShardingTypeError``)."""
    x = avals[0]
    if x.sharding is None:
        return outs
    return [
        sharding_types.typed(
            o, sharding_types.varying_out_shape(x, o.shape, "split"), x.sharding.mesh
        )
        for o in outs
    ]


split_p.sharding_rule = _split_sharding
rules.def_linear(split_p)


@split_p.def_vjp
def _split_vjp(cts: list, x: Any, *, out: Any, sizes: tuple, axis: int) -> tuple:
    xa = to_aval(x)
    if all(is_zero(c) for c in cts):
        return (None,)
    pieces = [  # (a zero typed as its piece's cotangent: JAX concatenates alike types)
        typed_as(
            rules.zeros_like_aval(Aval(o.shape, xa.dtype)),
            sharding_types.cotangent_sharding(o.sharding),
        )
        if is_zero(c)
        else c
        for c, o in zip(cts, map(to_aval, out))
    ]
    return (concatenate(*pieces, dimension=axis),)


@split_p.def_batch
def _split_batch(args: list, dims: list, *, sizes: tuple, axis: int) -> tuple:
    (x,), (d,) = args, dims
    outs = bind(split_p, x, sizes=sizes, axis=axis + (axis >= d))
    return outs, [d] * len(sizes)


@split_p.def_examples
def _split_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (5,))], {"sizes": (2, 3), "axis": 0}),
        Example([rand(rng, (2, 6))], {"sizes": (1, 0, 3, 2), "axis": 1}),
        Example([rand(rng, (4, 3, 2))], {"sizes": (2, 2), "axis": 0}),
    ]


def split(x: Any, sizes: Sequence[int], axis: int) -> list:
    """``x`` cut along ``axis`` into pieces of ``sizes`` (checked by the caller)."""
    return list(
        bind(split_p, x, sizes=tuple(operator.index(s) for s in sizes), axis=operator.index(axis))
    )
