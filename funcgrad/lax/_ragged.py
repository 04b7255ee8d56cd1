"""``lax.ragged_dot``: a matrix product whose lhs rows are split into consecutive groups,
each multiplied by its own rhs matrix (mixture-of-experts layers).

Rows ``[start_g, start_g + group_sizes[g])`` of ``lhs`` use ``rhs[g]``; rows past the
last group come out zero, as JAX's. Written as one ``dot_general`` against every group's
matrix and a mask selecting each row's group (``m * g * n`` products: exact, and
differentiable, batchable and traceable with traced group sizes as those ops are).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core.interp import to_aval
from funcgrad.lax._elementwise import bitwise_and, ge, lt, sub
from funcgrad.lax._reductions import cumsum, reduce_sum
from funcgrad.lax._structural import (
    broadcast_in_dim,
    broadcasted_iota,
    dot_general,
    full,
    select,
)
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import ragged as rg

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``(m, k) x (g, k, n) -> (m, n)``: row ``i`` of ``lhs`` times ``rhs[g]`` for the
    group ``g`` whose rows (consecutive, ``group_sizes[g]`` of them) hold ``i``.

    Example:
        >>> lhs, rhs = np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)])
        >>> ragged_dot(lhs, rhs, np.array([1, 2])).tolist()
        [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    """
    del precision, out_sharding
    if group_offset is not None:
        raise NotImplementedError(f"ragged_dot: group_offset is not supported{here()}")
    lhs, rhs = prep(lhs, "ragged_dot"), prep(rhs, "ragged_dot")
    sizes = prep(group_sizes, "ragged_dot")
    la, ra, ga = to_aval(lhs), to_aval(rhs), to_aval(sizes)
    if la.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise TypeError(
            f"ragged_dot: expects lhs (m, k), rhs (g, k, n) and group_sizes (g,), got "
            f"{la}, {ra} and {ga}{here()}"
        )
    if la.shape[1] != ra.shape[1] or ra.shape[0] != ga.shape[0]:
        raise TypeError(
            f"ragged_dot: lhs {la}, rhs {ra} and group_sizes {ga} disagree on k or on "
            f"the number of groups{here()}"
        )
    if not np.issubdtype(ga.dtype, np.integer):
        raise TypeError(f"ragged_dot: group_sizes must be integers, got {ga}{here()}")
    m, g = la.shape[0], ga.shape[0]
    ends = broadcast_in_dim(cumsum(sizes), (m, g), (1,))
    starts = sub(ends, broadcast_in_dim(sizes, (m, g), (1,)))
    rows = broadcasted_iota(ga.dtype, (m, g), 0)
    member = bitwise_and(ge(rows, starts), lt(rows, ends))  # (m, g): row i is in group g
    every = dot_general(
        lhs, rhs, (((1,), (1,)), ((), ())), preferred_element_type=preferred_element_type
    )  # (m, g, n)
    ea = to_aval(every)
    member = broadcast_in_dim(member, ea.shape, (0, 1))
    return reduce_sum(select(member, every, full(ea.shape, 0, ea.dtype)), (1,))


class RaggedDotDimensionNumbers:
    """The dimensions of a ``ragged_dot_general`` (``jax.lax.RaggedDotDimensionNumbers``):
    ``dot_dimension_numbers`` (``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``), the one lhs ragged dimension and the rhs group dimensions."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(
        self,
        dot_dimension_numbers: Any,
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        dims = tuple(
            tuple(tuple(int(d) for d in ds) for ds in pair) for pair in dot_dimension_numbers
        )
        object.__setattr__(self, "dot_dimension_numbers", dims)
        object.__setattr__(
            self, "lhs_ragged_dimensions", tuple(int(d) for d in lhs_ragged_dimensions)
        )
        object.__setattr__(
            self, "rhs_group_dimensions", tuple(int(d) for d in rhs_group_dimensions)
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RaggedDotDimensionNumbers is immutable (setting {name!r})")

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions)

    def __repr__(self) -> str:
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """A ``dot_general`` whose lhs ragged dimension is split into consecutive groups of
    ``group_sizes`` rows (``jax.lax.ragged_dot_general``): with the ragged dimension free,
    group ``g``'s rows meet the rhs slice ``g`` of its group dimension; contracted, each
    group contracts its own rows (a leading group dimension in the result); a batch
    dimension, the groups change nothing.

    Example:
        >>> dn = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])
        >>> lhs, rhs = np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)])
        >>> ragged_dot_general(lhs, rhs, np.array([1, 2]), dn).tolist()
        [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    """
    del precision, out_sharding
    if group_offset is not None:
        raise NotImplementedError(f"ragged_dot_general: group_offset is not supported{here()}")
    dn = ragged_dot_dimension_numbers
    if not all(hasattr(dn, f) for f in RaggedDotDimensionNumbers.__slots__):
        raise TypeError(
            f"ragged_dot_general: expected RaggedDotDimensionNumbers, got {dn!r}{here()}"
        )
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError(f"ragged_dot_general expects exactly one lhs ragged dimension.{here()}")
    dims = tuple(
        tuple(tuple(int(d) for d in ds) for ds in pair) for pair in dn.dot_dimension_numbers
    )
    return rg.ragged_dot_general(
        prep(lhs, "ragged_dot_general"),
        prep(rhs, "ragged_dot_general"),
        prep(group_sizes, "ragged_dot_general"),
        dims,
        int(dn.lhs_ragged_dimensions[0]),
        tuple(int(d) for d in dn.rhs_group_dimensions),
        preferred_element_type,
    )
