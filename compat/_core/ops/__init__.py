"""Torch ops: elementwise math, reductions and linear algebra.

Each op is a pure function of arrays written with ``funcgrad.numpy`` /
``funcgrad.nn`` and applied by :func:`~compat._core.tensor.apply`, so its
gradient is funcgrad's VJP of it. Ops are written so that the VJP follows
PyTorch's subgradient conventions:

* ``relu``/``abs`` at 0 → 0 (``where(x > 0, x, 0)``; ``sign(0) = 0``);
* ``clamp`` at a bound → 1, ``clamp(min > max)`` → 0 (a mask ``lo <= x <= hi``);
* ``x ** 0.`` at 0 → 0 and the exponent's gradient at a zero base → 0 (funcgrad's
  ``pow`` rule);
* ``max(dim)``/``min(dim)`` ties → the whole gradient to the first index (``argmax``
  then ``take_along_axis``); full ``max``/``min``/``amax`` ties → split evenly
  (funcgrad's ``reduce_max`` rule), binary ``maximum`` ties → halves.

Type promotion follows PyTorch (:func:`compat._core.dtypes.result_type`), computed
in Python and passed to each op as a static ``dtype``.

The ops live in modules by job (``binary``, ``unary``, ``floating``,
``special``, ``reductions``, ``reshaping``, ``linalg``, ``inplace``, ...), each declaring
its rows of the op table (``compat._core.optable``); this package re-exports every row's
implementation by name and alias (``ops.tanh``, ``ops.clip``), generated from the rows,
and the few helpers that are no row.
"""

from __future__ import annotations

from compat._core.ops import (  # noqa: F401  (each declares its rows of the op table)
    array_rows,
    binary,
    clamping,
    composite,
    floating,
    linalg,
    linalg_decomp,
    linalg_eig,
    linalg_ldl,
    linalg_ns,
    linalg_top,
    reductions,
    reshaping,
    selecting,
    sorting,
    special,
    spectral,
    unary,
    view_copies,
)
from compat._core.ops._common import _c, coerce  # noqa: F401
from compat._core.ops.binary import _bitwise  # noqa: F401
from compat._core.ops.inplace import (  # noqa: F401
    inplace_addc,
    inplace_binary,
    inplace_copy,
    inplace_fill,
    inplace_lerp,
    inplace_random,
)
from compat._core.ops.linalg import linear  # noqa: F401
from compat._core.ops.reductions import zeros_like_int  # noqa: F401
from compat._core.optable import implementations as _implementations

# every row's implementation (``tanh``, ``clamp`` and its alias ``clip``, ...)
globals().update(_implementations())
