"""The names both flavours export at top level (``torch.zeros``, ``flow.cat``, ...)."""

from __future__ import annotations

from compat._core import dtypes as _dt
from compat._core.creation import (  # noqa: F401
    arange,
    as_tensor,
    bernoulli,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    initial_seed,
    linspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    tensor,
    zeros,
    zeros_like,
)
from compat._core.device import device  # noqa: F401
from compat._core.dtypes import (  # noqa: F401
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from compat._core.grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from compat._core.ops import (  # noqa: F401
    abs,
    absolute,
    add,
    addcdiv,
    addcmul,
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    atan2,
    bmm,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    cos,
    cumprod,
    cumsum,
    div,
    dot,
    einsum,
    eq,
    exp,
    floor,
    floor_divide,
    ge,
    ger,
    gt,
    isfinite,
    isinf,
    isnan,
    le,
    lerp,
    log,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logsumexp,
    lt,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    mv,
    ne,
    neg,
    negative,
    nonzero,
    norm,
    outer,
    pow,
    prod,
    reciprocal,
    relu,
    remainder,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    sqrt,
    square,
    std,
    sub,
    sum,
    tanh,
    trunc,
    var,
    where,
)
from compat._core.ops import ops_by_name as _ops_by_name
from compat._core.shape_ops import (  # noqa: F401
    broadcast_to,
    cat,
    chunk,
    clone,
    concat,
    concatenate,
    flatten,
    flip,
    gather,
    index_select,
    masked_fill,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    t,
    take_along_dim,
    transpose,
    tril,
    triu,
    unbind,
    unsqueeze,
)
from compat._core.tensor import Size, Tensor  # noqa: F401

for _n in ("log2", "log10", "log1p", "expm1", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf"):
    globals()[_n] = _ops_by_name(_n)

subtract = sub
multiply = mul
divide = true_divide = div
greater = gt
less = lt
fmod = remainder


def is_tensor(obj: object) -> _dt.builtins.bool:
    """Whether ``obj`` is a compat Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> _dt.builtins.int:
    return input.numel()


def is_floating_point(input: Tensor) -> _dt.builtins.bool:
    return input.is_floating_point()


def result_type(tensor1: object, tensor2: object) -> _dt.dtype:
    return _dt.from_np(_dt.result_type(tensor1, tensor2))


def promote_types(type1: _dt.dtype, type2: _dt.dtype) -> _dt.dtype:
    import numpy as np

    return _dt.from_np(np.promote_types(type1.np, type2.np))


def numpy_dtype(d: _dt.dtype) -> object:
    return d.np


strided = "torch.strided"
