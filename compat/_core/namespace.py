"""The names both flavours export at top level (``torch.zeros``, ``flow.cat``, ...)."""

from __future__ import annotations

import math

from compat._core import dtypes as _dt
from compat._core import ops as _ops  # noqa: F401  (declares the op table's rows)
from compat._core import shape_ops as _shape_ops  # noqa: F401
from compat._core.anomaly import (  # noqa: F401
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from compat._core.broadcasting import (  # noqa: F401
    broadcast_shapes,
    broadcast_tensors,
    can_cast,
    scalar_tensor,
)
from compat._core.creation import (  # noqa: F401
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    Generator,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    as_tensor,
    bernoulli,
    default_generator,
    from_numpy,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
)
from compat._core.creation_rows import FORMS as _CREATION_FORMS
from compat._core.device import device  # noqa: F401
from compat._core.dtypes import (  # noqa: F401
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
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
from compat._core.index_put import index_put, index_put_, put  # noqa: F401
from compat._core.matrix_views import adjoint  # noqa: F401
from compat._core.memory_formats import (  # noqa: F401
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from compat._core.ops.linalg_top import lu_solve, lu_unpack  # noqa: F401
from compat._core.ops.spectral import (  # noqa: F401
    _neg_view,
    is_conj,
    is_neg,
    resolve_conj,
    resolve_neg,
)
from compat._core.optable import functions as _functions
from compat._core.out_arg import with_out
from compat._core.restride import as_strided  # noqa: F401
from compat._core.tensor import Size, Tensor  # noqa: F401

# ``torch.X`` for every row of the op table (aliases included)
globals().update(_functions(with_out))


def is_tensor(obj: object) -> _dt.builtins.bool:
    """Whether ``obj`` is a compat Tensor."""
    return isinstance(obj, Tensor)


def is_inference(input: Tensor) -> _dt.builtins.bool:
    """Whether ``input`` is an inference tensor (made in ``inference_mode``)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "is_inference(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input._inference


def typename(obj: object, /) -> str:
    """PyTorch's name of ``obj``'s type for its messages: a tensor's type string
    (``torch.FloatTensor``), else the qualified name (``int``, ``torch.nn.Linear``'s module
    path), as ``torch.typename``."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def numel(input: Tensor) -> _dt.builtins.int:
    return input.numel()


def is_floating_point(input: Tensor) -> _dt.builtins.bool:
    return input.is_floating_point()


def result_type(tensor1: object, tensor2: object) -> _dt.dtype:
    return _dt.from_np(_dt.result_type(tensor1, tensor2))


def promote_types(type1: _dt.dtype, type2: _dt.dtype) -> _dt.dtype:

    return _dt.from_np(_dt.promote(type1.np, type2.np))


def numpy_dtype(d: _dt.dtype) -> object:
    return d.np


# the creation rows' functions (``zeros``, ``full_like``, ...)
globals().update(_CREATION_FORMS)


e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
