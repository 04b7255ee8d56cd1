"""``einsum_path``: an order of pairwise contractions for :func:`funcgrad.numpy.einsum`,
and the checking of a path given to ``einsum(..., optimize=path)``.

A path is a list of steps, each a tuple of the positions (in the current list of
operands) of the one or two operands to contract; the result goes to the end of the
list, as in NumPy's and ``opt_einsum``'s paths (``jax.numpy.einsum_path`` returns the
latter). The order is found by NumPy's ``einsum_path`` from the operands' shapes alone
(zero-stride stand-ins: nothing is computed or copied); ``"optimal"``/``True`` search all
orders (so does ``"auto"`` for up to 4 operands, as ``opt_einsum``'s), the other
strategies (``"greedy"``, ``"eager"``, ``opt_einsum``'s ``"dp"``/``"branch-*"``) take
NumPy's greedy choice, and ``False`` contracts left to right. The second result is NumPy's printed report of that path (``jax.numpy`` returns
``opt_einsum``'s ``PathInfo``, whose text is alike).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> a, b, c = np.ones((2, 2)), np.ones((2, 5)), np.ones((5, 2))
    >>> fnp.einsum_path("ij,jk,kl->il", a, b, c, optimize="greedy")[0]
    [(1, 2), (0, 1)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.numpy._core import ArrayLike, as_array, aval, check_arraylike, here

__all__ = ["einsum_path"]

_GREEDY = ("auto", "greedy", "eager", "auto-hq", "dp", "branch-all", "branch-2", "branch-1")


def einsum_path(
    subscripts: str, /, *operands: ArrayLike, optimize: Any = "auto"
) -> tuple[list[tuple[int, ...]], str]:
    """The contraction order ``einsum(subscripts, *operands, optimize=path)`` follows, and
    a printed report of its cost (NumPy's ``einsum_path`` over the operands' shapes)."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum_path: subscripts must be a string, got {subscripts!r}{here()}")
    check_arraylike("einsum_path", *operands)
    shapes = [aval(as_array(o, "einsum_path")).shape for o in operands]
    stand_ins = [np.broadcast_to(np.zeros((), np.float32), s) for s in shapes]
    n = len(operands)
    if optimize is False:
        strategy: Any = ["einsum_path", *([(0, 1)] * (n - 1) if n > 1 else [(0,)])]
    elif optimize is True or optimize == "optimal" or (optimize == "auto" and n <= 4):
        strategy = "optimal"  # opt_einsum's "auto" searches all orders of up to 4 operands
    elif isinstance(optimize, str):
        if optimize not in _GREEDY:
            raise ValueError(f"einsum_path: unknown optimize strategy {optimize!r}{here()}")
        strategy = "greedy"
    else:
        strategy = ["einsum_path", *parse_path(optimize, n)]
    path, report = np.einsum_path(subscripts, *stand_ins, optimize=strategy)
    return [tuple(int(i) for i in step) for step in path[1:]], report


def parse_path(optimize: Any, n: int) -> list[tuple[int, ...]] | None:
    """The explicit path in ``einsum``'s ``optimize`` (a list of position tuples, NumPy's
    ``["einsum_path", ...]`` too) checked against ``n`` operands; ``None`` for a strategy
    name or a bool (funcgrad contracts left to right then: the order changes rounding,
    not values)."""
    if optimize is None or isinstance(optimize, (bool, str)):
        return None
    steps = list(optimize)
    if steps and steps[0] == "einsum_path":
        steps = steps[1:]
    path, left = [], n
    for step in steps:
        if not isinstance(step, (tuple, list)) or not step:
            raise ValueError(f"einsum: invalid contraction {step!r} in the path {optimize!r}")
        step = tuple(int(i) for i in step)
        if len(step) > 2:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the "
                f"einsum optimize parameter (got {optimize!r})."
            )
        if len(set(step)) != len(step) or not all(0 <= i < left for i in step):
            raise ValueError(
                f"einsum: contraction {step} of the path {optimize!r} names operands outside "
                f"the {left} left at that step"
            )
        path.append(step)
        left -= len(step) - 1
    return path
