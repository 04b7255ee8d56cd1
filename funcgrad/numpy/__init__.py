"""``funcgrad.numpy``: NumPy's API over funcgrad's primitives.

Outside a transform these functions return ``jax.Array``s; inside one they
return tracers, which support the operators and array methods. Broadcasting
follows NumPy and type promotion follows JAX (Python scalars are weakly
typed, so ``x * 2.0`` keeps ``x``'s dtype).

    >>> import funcgrad.numpy as fnp
    >>> fnp.sum(fnp.arange(4.0) ** 2)
    Array(14., dtype=float32)
"""

from __future__ import annotations

import ml_dtypes as _ml_dtypes
import numpy as _np

from funcgrad.interop import _jax_array
from funcgrad.interop._array_api import array_namespace_info as __array_namespace_info__  # noqa: F401
from funcgrad.interop._array_api import from_dlpack  # noqa: F401
from funcgrad.numpy import (  # noqa: F401
    _at,
    _creation,
    _indexing,
    _methods,
    _setops,
    _ufunc_objects,
    _ufuncs,
    fft,
    linalg,
)
from funcgrad.numpy._creation import (  # noqa: F401
    arange,
    array,
    asarray,
    astype,
    copy,
    diag,
    diagflat,
    eye,
    geomspace,
    identity,
    linspace,
    logspace,
    meshgrid,
    tri,
)
from funcgrad.numpy._editing import (  # noqa: F401
    delete,
    fill_diagonal,
    insert,
    place,
    put,
    put_along_axis,
)
from funcgrad.numpy._einsum_path import einsum_path  # noqa: F401
from funcgrad.numpy._equality import allclose, array_equal, array_equiv, isclose  # noqa: F401
from funcgrad.numpy._files import load, save, savez  # noqa: F401
from funcgrad.numpy._floating import (  # noqa: F401
    frexp,
    ldexp,
    modf,
    spacing,
)
from funcgrad.numpy._from_data import block, frombuffer, fromiter, fromstring, resize  # noqa: F401
from funcgrad.numpy._functional import (  # noqa: F401
    apply_along_axis,
    apply_over_axes,
    fromfunction,
    pad,
    piecewise,
    vectorize,
)
from funcgrad.numpy._index_tricks import (  # noqa: F401
    c_,
    diag_indices,
    diag_indices_from,
    index_exp,
    indices,
    ix_,
    mask_indices,
    mgrid,
    ogrid,
    r_,
    ravel_multi_index,
    s_,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unravel_index,
)
from funcgrad.numpy._indexing import take, take_along_axis  # noqa: F401
from funcgrad.numpy._info import (  # noqa: F401
    can_cast,
    isdtype,
    isscalar,
    issubdtype,
    iterable,
    ndarray,
    ndim,
    promote_types,
    result_type,
    shape,
    size,
)
from funcgrad.numpy._integers import (  # noqa: F401
    bitwise_count,
    gcd,
    lcm,
    packbits,
    unpackbits,
)
from funcgrad.numpy._linalg import (  # noqa: F401
    cross,
    dot,
    einsum,
    inner,
    kron,
    matmul,
    matvec,
    outer,
    tensordot,
    trace,
    vdot,
    vecdot,
    vecmat,
)
from funcgrad.numpy._numeric import (  # noqa: F401
    convolve,
    correlate,
    diff,
    ediff1d,
    gradient,
    interp,
    trapezoid,
    unwrap,
)
from funcgrad.numpy._polynomial import (  # noqa: F401
    poly,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
    vander,
)
from funcgrad.numpy._printing import (  # noqa: F401
    array_repr,
    array_str,
    get_printoptions,
    printoptions,
    set_printoptions,
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
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    nanmean,
    nansum,
    prod,
    ptp,
    std,
    sum,
    var,
)
from funcgrad.numpy._rotations import fliplr, flipud, rot90  # noqa: F401
from funcgrad.numpy._scalar_types import scalar_type as _scalar_type
from funcgrad.numpy._selection import (  # noqa: F401
    choose,
    compress,
    extract,
    trim_zeros,
)
from funcgrad.numpy._setops import (  # noqa: F401
    argwhere,
    bincount,
    digitize,
    flatnonzero,
    intersect1d,
    isin,
    nonzero,
    searchsorted,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from funcgrad.numpy._shape import (  # noqa: F401
    append,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    column_stack,
    concat,
    concatenate,
    diagonal,
    dsplit,
    dstack,
    expand_dims,
    flip,
    hsplit,
    hstack,
    matrix_transpose,
    moveaxis,
    permute_dims,
    ravel,
    repeat,
    reshape,
    roll,
    rollaxis,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    tril,
    triu,
    unstack,
    vsplit,
    vstack,
)
from funcgrad.numpy._sorting import (  # noqa: F401
    argpartition,
    argsort,
    lexsort,
    median,
    msort,
    partition,
    sort,
    sort_complex,
)
from funcgrad.numpy._statistics import (  # noqa: F401
    corrcoef,
    cov,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nanvar,
    percentile,
    quantile,
)
from funcgrad.numpy._ufunc_objects import frompyfunc, ufunc  # noqa: F401
from funcgrad.numpy._ufuncs import (  # noqa: F401
    angle,
    around,
    conj,
    conjugate,
    divmod,
    fmod,
    imag,
    iscomplex,
    iscomplexobj,
    isrealobj,
    nan_to_num,
    pow,
    power,
    real,
    rint,
    round,
    select,
)
from funcgrad.numpy._windows import (  # noqa: F401
    bartlett,
    blackman,
    hamming,
    hanning,
    kaiser,
)

pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None

# dtypes (scalar types usable as ``dtype=``) and dtype helpers
bool_ = _scalar_type(_np.bool_)
bool = bool_  # as jax.numpy.bool (shadows the builtin here: use _builtins.bool)
bfloat16 = _scalar_type(_ml_dtypes.bfloat16)
float16 = _scalar_type(_np.float16)
float32 = _scalar_type(_np.float32)
float64 = _scalar_type(_np.float64)
int8 = _scalar_type(_np.int8)
int16 = _scalar_type(_np.int16)
int32 = _scalar_type(_np.int32)
int64 = _scalar_type(_np.int64)
uint8 = _scalar_type(_np.uint8)
uint16 = _scalar_type(_np.uint16)
uint32 = _scalar_type(_np.uint32)
uint64 = _scalar_type(_np.uint64)
complex64 = _scalar_type(_np.complex64)
complex128 = _scalar_type(_np.complex128)
# NumPy-style aliases, resolved as jax.numpy does (its defaults follow jax_enable_x64)
single = float32
csingle = complex64
double = float_ = float64
cdouble = complex_ = complex128
int_ = int64
uint = uint64
float8_e3m4 = _ml_dtypes.float8_e3m4
float8_e4m3 = _ml_dtypes.float8_e4m3
float8_e4m3b11fnuz = _ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn = _ml_dtypes.float8_e4m3fn
float8_e4m3fnuz = _ml_dtypes.float8_e4m3fnuz
float8_e5m2 = _ml_dtypes.float8_e5m2
float8_e5m2fnuz = _ml_dtypes.float8_e5m2fnuz
float8_e8m0fnu = _ml_dtypes.float8_e8m0fnu
float4_e2m1fn = _ml_dtypes.float4_e2m1fn
int2 = _ml_dtypes.int2
int4 = _ml_dtypes.int4
uint2 = _ml_dtypes.uint2
uint4 = _ml_dtypes.uint4
number = _np.number
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
floating = _np.floating
inexact = _np.inexact
complexfloating = _np.complexfloating
generic = _np.generic
dtype = _np.dtype
finfo = _ml_dtypes.finfo
iinfo = _ml_dtypes.iinfo
#: the version of the array API standard followed (jax.numpy's)
__array_api_version__ = "2024.12"

# the creation rows' forms (``zeros``, ``full_like``, ...)
globals().update(_creation.DECLARED)
# the forms the primitives' rows declare (``exp``, ``arcsin``/``asin``, ``add``, ...)
globals().update(_ufuncs.DECLARED)
# ``add``, ``multiply``, ``maximum``... of them as ufunc objects (``add.reduce``, ``add.at``)
globals().update(_ufunc_objects.ufunc_objects(_ufuncs.DECLARED))
# (``where``'s form with ``nonzero`` for a condition alone, over the three-term one)
globals().update(_setops.DECLARED)

_methods.install()
_jax_array.install(_at.at)  # jax.Array methods given funcgrad tracers route here
