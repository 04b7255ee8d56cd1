"""``funcgrad.numpy``: NumPy's API over funcgrad's primitives.

Outside a transform these functions return ``jax.Array``s; inside one they
return tracers, which support the operators and array methods. Broadcasting
follows NumPy and type promotion follows JAX (Python scalars are weakly
typed, so ``x * 2.0`` keeps ``x``'s dtype).
"""

import numpy as _np

from funcgrad.numpy import _methods, linalg  # noqa: F401
from funcgrad.numpy._creation import (  # noqa: F401
    arange,
    array,
    asarray,
    copy,
    diag,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tri,
    zeros,
    zeros_like,
)
from funcgrad.numpy._indexing import take, take_along_axis  # noqa: F401
from funcgrad.numpy._linalg import (  # noqa: F401
    dot,
    einsum,
    inner,
    matmul,
    outer,
    tensordot,
    trace,
    vdot,
)
from funcgrad.numpy._reductions import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    average,
    count_nonzero,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from funcgrad.numpy._shape import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    broadcast_arrays,
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    fliplr,
    flipud,
    hstack,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    tril,
    triu,
    vstack,
)
from funcgrad.numpy._ufuncs import (  # noqa: F401
    abs,
    absolute,
    acos,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    atan,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    copysign,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    float_power,
    floor,
    floor_divide,
    fmod,
    greater,
    greater_equal,
    heaviside,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    power,
    rad2deg,
    radians,
    real,
    reciprocal,
    remainder,
    rint,
    round,
    sign,
    sin,
    sinc,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None

bool_ = _np.bool_
float16 = _np.float16
float32 = _np.float32
float64 = _np.float64
int8 = _np.int8
int16 = _np.int16
int32 = _np.int32
int64 = _np.int64
uint8 = _np.uint8
uint32 = _np.uint32
complex64 = _np.complex64
dtype = _np.dtype
ndim = lambda x: asarray(x).ndim  # noqa: E731
shape = lambda x: asarray(x).shape  # noqa: E731
size = lambda x: asarray(x).size  # noqa: E731

_methods.install()
