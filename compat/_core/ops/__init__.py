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

The ops live in modules by job (``binary``, ``unary``, ``integer``, ``floating``,
``special``, ``reductions``, ``reshaping``, ``linalg``, ``inplace``, ...); this package
re-exports them.
"""

from __future__ import annotations

from compat._core.ops import (
    composite,  # noqa: F401
    floating,  # noqa: F401
    integer,  # noqa: F401
    linalg_decomp,  # noqa: F401
    linalg_eig,  # noqa: F401
    linalg_ldl,  # noqa: F401
    linalg_ns,  # noqa: F401
    linalg_top,  # noqa: F401
    reshaping,  # noqa: F401
    selecting,  # noqa: F401
    sorting,  # noqa: F401  (rows of the op table)
    special,  # noqa: F401
    spectral,  # noqa: F401
)
from compat._core.ops._common import (  # noqa: F401
    _c,
    coerce,
)
from compat._core.ops.binary import (  # noqa: F401
    _bitwise,
    add,
    atan2,
    div,
    eq,
    floor_divide,
    ge,
    gt,
    le,
    logical_and,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    pow,
    remainder,
    sub,
)
from compat._core.ops.inplace import (  # noqa: F401
    inplace_addc,
    inplace_binary,
    inplace_clamp,
    inplace_copy,
    inplace_fill,
    inplace_lerp,
    inplace_random,
)
from compat._core.ops.linalg import (  # noqa: F401
    bmm,
    dot,
    einsum,
    ger,
    linear,
    matmul,
    mm,
    mv,
    outer,
)
from compat._core.ops.reductions import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    softmax,
    std,
    sum,
    var,
    zeros_like_int,
)
from compat._core.ops.unary import (  # noqa: F401
    _UNARY,
    abs,
    absolute,
    addcdiv,
    addcmul,
    bitwise_not,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    cos,
    exp,
    floor,
    isfinite,
    isinf,
    isnan,
    lerp,
    log,
    logical_not,
    neg,
    negative,
    nonzero,
    reciprocal,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tanh,
    trunc,
    where,
)
