"""PyTorch's values of the regularized incomplete gamma functions at their edges.

``torch.igamma(a, x)`` and ``torch.igammac(a, x)`` follow funcgrad's ``gammainc`` and
``gammaincc`` (JAX's) except where PyTorch's kernel answers before it computes, in this
order: a negative operand is NaN; ``a == 0`` is ``1`` for ``x > 0`` (``igammac``: ``0``),
else NaN; ``x == 0`` is ``0`` (``1``), whatever ``a`` (NaN included); an infinite ``a`` is
NaN for an infinite ``x``, else ``0`` (``1``), a NaN ``x`` included; an infinite ``x`` is
``1`` (``0``). JAX's values differ only where ``a`` is 0 or infinite, or NaN with an edge
``x``: only those lanes are replaced, so the derivative in ``x`` elsewhere (at ``x == 0``
too) is funcgrad's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.scipy import special as fsp


def _edges(a: Any, x: Any, value: Any, upper: bool) -> Any:
    """``value`` (``gammainc``'s, or ``gammaincc``'s where ``upper``) with PyTorch's edges."""
    one, zero, nan = (fnp.full_like(value, v) for v in (1.0, 0.0, np.nan))
    lo, hi = (one, zero) if upper else (zero, one)
    a_inf, x_inf = fnp.isinf(a), fnp.isinf(x)
    edge = fnp.where(x_inf, hi, nan)  # (the lanes replaced are all edges: no ``value``)
    edge = fnp.where(a_inf, fnp.where(x_inf, nan, lo), edge)
    edge = fnp.where(x == 0, lo, edge)
    edge = fnp.where(a == 0, fnp.where(x > 0, hi, nan), edge)
    edge = fnp.where((x < 0) | (a < 0), nan, edge)
    replace = (a == 0) | a_inf | (fnp.isnan(a) & ((x == 0) | x_inf))
    return fnp.where(replace, edge, value)


def igamma(a: Any, x: Any) -> Any:
    """The lower regularized incomplete gamma function, PyTorch's values at the edges."""
    return _edges(a, x, fsp.gammainc(a, x), upper=False)


def igammac(a: Any, x: Any) -> Any:
    """The upper regularized incomplete gamma function, PyTorch's values at the edges."""
    return _edges(a, x, fsp.gammaincc(a, x), upper=True)


#: op -> its function of two real operands of one dtype (``binary._TORCH_REAL``)
TORCH_REAL = {"igamma": igamma, "igammac": igammac}
