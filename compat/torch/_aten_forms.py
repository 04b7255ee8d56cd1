"""``torch.X`` forms PyTorch keeps beside ``torch.nn.functional`` and ``Tensor`` where
their signatures differ, and a few functions of their own.

PyTorch's top-level namespace holds its ATen operators: ``torch.conv2d``,
``torch.dropout``, ``torch.batch_norm``, ``torch.embedding``, the losses, ... the same
computation as the ``nn.functional`` function. Where the signature is the same
(``conv2d``, ``max_pool2d``, ``prelu``, ...) ``compat.torch`` hands out the
``nn.functional`` function itself (``_FUNCTIONAL_ALIASES``); the forms here map a
different signature onto it: ``torch.dropout(input, p, train)`` requires ``train``,
``torch.batch_norm`` and ``torch.instance_norm`` take ``weight, bias`` before the running
statistics, ``torch.embedding`` takes ``weight`` first (``padding_idx=-1`` for none), the
losses take ATen's integer ``reduction`` (0 none, 1 mean, 2 sum; any other value leaves
the loss unreduced, as ATen's ``apply_loss_reduction``; left out, it is 0 in PyTorch's
Python binding, whatever the schema's default says: ``torch.kl_div(x, y)`` is unreduced),
``torch.adaptive_max_pool1d`` always returns the indices. One implementation of each
computation.

The module is loaded on first access of one of its names (``compat.torch.__getattr__``),
as ``nn`` is: ``import compat.torch`` does not pay for ``nn.functional``."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import compat.torch as torch
import compat.torch.nn.functional as F
from compat._core import dtypes as _dt
from compat._core.creation import _leaf
from compat._core.ops._common import tensor_list
from compat._core.return_types import return_type
from compat._core.tensor import Tensor
from compat._core.warn_once import warn_once
from compat.torch.nn.functional import grid as _grid

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _reduction(name: str, value: Any, position: int) -> str:
    """ATen's integer ``reduction`` as ``nn.functional``'s name."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name}(): argument 'reduction' (position {position}) must be int, not "
            f"{type(value).__name__}"
        )
    return _REDUCTION.get(value, "none")


# --------------------------------------------------------------------------- nn ops


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``aten::adaptive_max_pool1d``: values and indices, always."""
    return F.adaptive_max_pool1d(input, output_size, True)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::dropout``: ``train`` required, as ATen's."""
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::alpha_dropout``."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::feature_alpha_dropout``."""
    return F.feature_alpha_dropout(input, p, train)


def layer_norm(
    input: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    eps: Any = 1e-5,
    cudnn_enable: Any = True,
) -> Any:
    """``aten::layer_norm`` (``cudnn_enable`` accepted, as on a CPU)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(
    input: Any,
    num_groups: Any,
    weight: Any = None,
    bias: Any = None,
    eps: Any = 1e-5,
    cudnn_enabled: Any = True,
) -> Any:
    """``aten::group_norm``."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: Any,
    momentum: Any,
    eps: Any,
    cudnn_enabled: Any,
) -> Any:
    """``aten::batch_norm``: ``weight, bias`` before the running statistics, every
    argument required."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    use_input_stats: Any,
    momentum: Any,
    eps: Any,
    cudnn_enabled: Any,
) -> Any:
    """``aten::instance_norm``: ``weight, bias`` before the running statistics."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def embedding(
    weight: Any,
    indices: Any,
    padding_idx: Any = -1,
    scale_grad_by_freq: Any = False,
    sparse: Any = False,
) -> Any:
    """``aten::embedding``: ``weight`` first; a negative ``padding_idx`` is none."""
    pad = padding_idx if padding_idx >= 0 else None
    return F.embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``aten::native_channel_shuffle``: ``channel_shuffle``."""
    return F.channel_shuffle(input, groups)


def rrelu(
    input: Any,
    lower: Any = 1.0 / 8,
    upper: Any = 1.0 / 3,
    training: Any = False,
    generator: Any = None,
) -> Any:
    """``aten::rrelu`` (a ``generator`` other than the default is refused)."""
    if generator is not None:
        raise NotImplementedError("compat.torch.rrelu: a generator= other than the default")
    return F.rrelu(input, lower, upper, training)


_SAMPLER_MODES = ("bilinear", "nearest", "bicubic")
_SAMPLER_PADDINGS = ("zeros", "border", "reflection")


def _grid_sampler(
    input: Tensor, grid: Tensor, modes: tuple[int, int], align_corners: bool, want: int | None
) -> Tensor:
    """``aten::grid_sampler`` and its 2-D/3-D kernels: ``nn.functional.grid_sample`` with
    ATen's integer modes (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection) and ``align_corners`` required."""
    for value, names, what in zip(
        modes, (_SAMPLER_MODES, _SAMPLER_PADDINGS), ("interpolation", "padding")
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 3:
            raise RuntimeError(
                f"grid_sampler(): expected {what}_mode to be 0 ({names[0]}), 1 ({names[1]}) or "
                f"2 ({names[2]}), but got {value!r}"
            )
    mode, padding = _SAMPLER_MODES[modes[0]], _SAMPLER_PADDINGS[modes[1]]
    if isinstance(input, Tensor) and isinstance(grid, Tensor) and input.dim() >= 2:
        _grid.check_shapes(input, grid, mode, want)
    return F.grid_sample(input, grid, mode, padding, align_corners)


def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``aten::grid_sampler``: ``nn.functional.grid_sample`` of a 4-D or 5-D input."""
    return _grid_sampler(input, grid, (interpolation_mode, padding_mode), align_corners, None)


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``aten::grid_sampler_2d``: ``torch.grid_sampler`` of a 4-D input only."""
    return _grid_sampler(input, grid, (interpolation_mode, padding_mode), align_corners, 4)


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``aten::grid_sampler_3d``: ``torch.grid_sampler`` of a 5-D input only."""
    return _grid_sampler(input, grid, (interpolation_mode, padding_mode), align_corners, 5)


def _grid_sampler_2d_cpu_fallback(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """PyTorch's float32-only CPU fallback kernel of ``grid_sampler_2d`` (the same values)."""
    if isinstance(input, Tensor) and isinstance(grid, Tensor) and input.dim() >= 2:
        _grid.check_shapes(input, grid, "bilinear", 4)
        for t in (input, grid):
            if t.dtype != torch.float32:
                raise RuntimeError(
                    f"expected scalar type Float but found {_dt.scalar_type_name(t._npdtype)}"
                )
    return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


# --------------------------------------------------------------------------- losses


def kl_div(input: Any, target: Any, reduction: Any = 0, *, log_target: Any = False) -> Any:
    """``aten::kl_div``: ``reduction=1`` is the elementwise mean (without
    ``nn.functional``'s warning)."""
    name = _reduction("kl_div", reduction, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=name, log_target=log_target)


def poisson_nll_loss(
    input: Any, target: Any, log_input: Any, full: Any, eps: Any, reduction: Any
) -> Any:
    """``aten::poisson_nll_loss``: every argument required."""
    name = _reduction("poisson_nll_loss", reduction, 6)
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=name)


def margin_ranking_loss(
    input1: Any, input2: Any, target: Any, margin: Any = 0.0, reduction: Any = 0
) -> Any:
    """``aten::margin_ranking_loss``."""
    name = _reduction("margin_ranking_loss", reduction, 5)
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=name)


def hinge_embedding_loss(input: Any, target: Any, margin: Any = 1.0, reduction: Any = 0) -> Any:
    """``aten::hinge_embedding_loss``."""
    name = _reduction("hinge_embedding_loss", reduction, 4)
    return F.hinge_embedding_loss(input, target, margin, reduction=name)


def cosine_embedding_loss(
    input1: Any, input2: Any, target: Any, margin: Any = 0.0, reduction: Any = 0
) -> Any:
    """``aten::cosine_embedding_loss``."""
    name = _reduction("cosine_embedding_loss", reduction, 5)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=name)


def triplet_margin_loss(
    anchor: Any,
    positive: Any,
    negative: Any,
    margin: Any = 1.0,
    p: Any = 2.0,
    eps: Any = 1e-6,
    swap: Any = False,
    reduction: Any = 0,
) -> Any:
    """``aten::triplet_margin_loss``."""
    name = _reduction("triplet_margin_loss", reduction, 8)
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=name)


def binary_cross_entropy_with_logits(
    input: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: Any = 0
) -> Any:
    """``aten::binary_cross_entropy_with_logits``: ``pos_weight`` before ``reduction``."""
    name = _reduction("binary_cross_entropy_with_logits", reduction, 5)
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=name, pos_weight=pos_weight
    )


def ctc_loss(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: Any = 0,
    reduction: Any = 0,
    zero_infinity: Any = False,
) -> Any:
    """``aten::ctc_loss``."""
    name = _reduction("ctc_loss", reduction, 6)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, name, zero_infinity)


# --------------------------------------------------------------------------- methods


def is_complex(input: Tensor) -> bool:
    """``torch.is_complex``: whether ``input``'s dtype is complex."""
    return input.is_complex()


def is_nonzero(input: Tensor) -> bool:
    """``torch.is_nonzero``: the truth of a one-element tensor."""
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """``torch.is_same_size``."""
    return input.is_same_size(other)


def detach(input: Tensor) -> Tensor:
    """``torch.detach``: ``input.detach()``."""
    return input.detach()


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    """``torch.split_with_sizes``: views of ``input`` of the given sizes along ``dim``."""
    return input.split_with_sizes(split_sizes, dim)


def get_device(input: Tensor) -> int:
    """``torch.get_device``: the CUDA index, -1 on the CPU."""
    return input.get_device()


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.matrix_power``: ``torch.linalg.matrix_power``."""
    return torch.linalg.matrix_power(input, n)


# --------------------------------------------------------------------------- new functions


def _window(name: str, n: int, periodic: bool, dtype: Any, values: Any) -> np.ndarray:
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = torch.get_default_dtype() if dtype is None else dtype
    if _dt.kind(np.dtype(dt.np)) != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if n <= 1:
        return np.ones(n, dt.np)
    m = n + 1 if periodic else n
    k = np.arange(m, dtype=np.float64)
    return np.asarray(values(k, m - 1)[:n], dt.np)


def _window_form(name: str, values: Any, doc: str) -> Any:
    def window(
        window_length: int,
        periodic: bool = True,
        *args: Any,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        pin_memory: bool | None = None,
    ) -> Tensor:
        arr = _window(name, window_length, periodic, dtype, lambda k, d: values(k, d, *args))
        return _leaf(arr, requires_grad, device)

    window.__name__ = window.__qualname__ = name
    window.__doc__ = doc
    return window


hann_window = _window_form(
    "hann_window",
    lambda k, d: 0.5 - 0.5 * np.cos(2 * np.pi * k / d),
    "``torch.hann_window(window_length, periodic=True)``: the Hann window.",
)
hamming_window = _window_form(
    "hamming_window",
    lambda k, d, alpha=0.54, beta=0.46: alpha - beta * np.cos(2 * np.pi * k / d),
    "``torch.hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46)``.",
)
blackman_window = _window_form(
    "blackman_window",
    lambda k, d: 0.42 - 0.5 * np.cos(2 * np.pi * k / d) + 0.08 * np.cos(4 * np.pi * k / d),
    "``torch.blackman_window(window_length, periodic=True)``: the Blackman window.",
)
bartlett_window = _window_form(
    "bartlett_window",
    lambda k, d: 1 - np.abs(2 * k / d - 1),
    "``torch.bartlett_window(window_length, periodic=True)``: the triangular window.",
)
kaiser_window = _window_form(
    "kaiser_window",
    lambda k, d, beta=12.0: (
        np.i0(beta * np.sqrt(np.clip(1 - (2 * k / d - 1) ** 2, 0, None))) / np.i0(beta)
    ),
    "``torch.kaiser_window(window_length, periodic=True, beta=12.0)``: the Kaiser window.",
)


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``torch.unravel_index``: flat indices as one tensor of coordinates per dimension of
    ``shape`` (C order; floor division, so out-of-range and negative indices wrap, as
    PyTorch's)."""
    if _dt.kind(indices._npdtype) not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in dims):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(dims)))
    rest = indices.to(torch.int64)
    out = []
    for d in reversed(dims):
        out.append(torch.remainder(rest, d))
        rest = torch.div(rest, d, rounding_mode="floor")
    return tuple(reversed(out))


def block_diag(*tensors: Tensor) -> Tensor:
    """``torch.block_diag``: the tensors (0-d as 1x1, 1-d as a row) on the diagonal of a
    zero matrix, in their promoted dtype; differentiable."""
    tensors = tensor_list(tensors, unpack=False)  # (varargs only, as PyTorch's)
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return torch.empty((1, 0))
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = torch.promote_types(dtype, m.dtype)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        w = m.shape[1]
        rows.append(F.pad(m.to(dtype), (left, cols - left - w)))
        left += w
    return torch.cat(rows, 0)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """``torch.combinations``: the ``r``-element combinations of a 1-d tensor's elements,
    one per row, in ``itertools`` order."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return torch.empty((0,), dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return input[_leaf(idx, False, input.device)]


def _trapezoid_dx(y: Tensor, x: Tensor | None, dx: Any, dim: int) -> tuple[Tensor, Any]:
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    if _dt.kind(y._npdtype) not in "fc":
        y = y.to(torch.get_default_dtype())
    if x is None:
        return y, 1 if dx is None else dx
    return y, torch.diff(x, dim=dim if x.dim() > 1 else -1)


def _shift(y: Tensor, dim: int) -> Tensor:
    n = y.shape[dim]
    return y.narrow(dim, 1, max(n - 1, 0)) + y.narrow(dim, 0, max(n - 1, 0))


def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """``torch.cumulative_trapezoid``: the running trapezoidal rule along ``dim`` (one
    element fewer than ``y``)."""
    y, step = _trapezoid_dx(y, x, dx, dim)
    return torch.cumsum(_shift(y, dim) * step / 2, dim)


def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: tuple[float, float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
    out: Any = None,
) -> Any:
    """``torch.histogram``: counts (or densities) of ``input``'s values in ``bins`` (a
    count of equal bins over ``range``, default the data's, or a tensor of edges), as
    ``(hist, bin_edges)``; floating inputs only, as PyTorch's."""
    if _dt.kind(input._npdtype) != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype.name}'")
    if out is not None:
        raise NotImplementedError("compat.torch.histogram: out=")
    data = input.detach().numpy().reshape(-1)
    edges = bins.detach().numpy() if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight.detach().numpy().reshape(-1)
    hist, bin_edges = np.histogram(data, edges, range=range, weights=w, density=density)
    npd = input._npdtype
    return return_type("histogram", "hist bin_edges")(
        _leaf(hist.astype(npd), False, input.device),
        _leaf(bin_edges.astype(npd), False, input.device),
    )


def _refuse_alias(obj: Any) -> None:
    """``asarray(obj, copy=False)`` of what is not a tensor: PyTorch's errors for NumPy
    scalars and Python data; an array, buffer or DLPack capsule PyTorch would alias, and
    compat cannot (its tensors hold immutable arrays, and ``from_numpy`` copies)."""
    if isinstance(obj, np.generic):
        raise RuntimeError(
            "can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. "
        )
    shares = ("__array_interface__", "__array__", "__dlpack__")
    capsule = type(obj).__name__ == "PyCapsule"
    if not capsule and not isinstance(obj, memoryview) and not any(hasattr(obj, a) for a in shares):
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    raise ValueError(
        f"compat.torch.asarray: a {type(obj).__name__} cannot be aliased (copy=False): "
        "compat's tensors hold immutable arrays and never share memory with NumPy"
    )


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool | None = None,
) -> Tensor:
    """``torch.asarray``: ``obj`` as a tensor, the tensor itself when it already has the
    dtype and device asked for (``copy=True``: always a new one; ``copy=False``: PyTorch's
    error where a copy is needed). Other data becomes a new tensor as ``torch.tensor``
    makes it; a NumPy array is copied, not aliased (compat's arrays are immutable, as for
    ``from_numpy``)."""
    if type(obj).__name__ == "PyCapsule":  # a DLPack capsule: its values (copied)
        if copy is False:
            _refuse_alias(obj)
        obj = torch.utils.dlpack.from_dlpack(obj)
    if not isinstance(obj, Tensor):
        if copy is False:
            _refuse_alias(obj)
        return torch.tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))
    if requires_grad is None and obj.requires_grad:
        warn_once(
            "asarray_requires_grad",
            "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
            "instead of False. Pass requires_grad=False explicitly to get the old behavior "
            "and silence this warning.",
        )
    other_dtype = dtype is not None and dtype != obj.dtype
    other_device = device is not None and torch.device(device) != obj.device
    if copy is False and other_dtype:
        raise ValueError(
            f"can't alias tensor with dtype '{_dt.scalar_type_name(obj._npdtype)}' into "
            f"dtype '{_dt.scalar_type_name(np.dtype(dtype.np))}'."
        )
    if copy is False and other_device:
        raise ValueError(f"can't alias tensor from device '{obj.device}' to '{device}'.")
    out = obj
    if other_dtype or other_device:
        out = obj.to(device=device, dtype=dtype)
    elif copy:
        out = obj.clone()
    if requires_grad is not None and not requires_grad and out.requires_grad:
        out = out.detach()
    elif requires_grad:
        out.requires_grad_(True)
    return out


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``torch.empty_strided``: a new leaf of ``size`` laid out with ``stride`` over a
    storage just large enough (its values unspecified: zeros here)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            "mismatch in length of strides and shape"  # (PyTorch's words)
        )
    extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    base = torch.empty(extent, dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.requires_grad_(True) if requires_grad else out


def fill(input: Tensor, value: Any) -> Tensor:
    """``torch.fill``: a new tensor of ``input``'s shape and dtype filled with ``value`` (a
    number or a 0-d tensor, which gets the gradient's sum; ``input`` gets none)."""
    return input.clone().fill_(value)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::feature_dropout``: whole channels (dimension 1) zeroed with probability
    ``p``, the others scaled by ``1 / (1 - p)``, when ``train``."""
    if not train or p == 0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = F.dropout(torch.ones(shape, dtype=input.dtype, device=input.device), p, True)
    return input * keep


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::dropout_``: :func:`dropout` in place."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::alpha_dropout_``."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::feature_alpha_dropout_``."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``aten::feature_dropout_``: :func:`feature_dropout` in place."""
    return input if not train or p == 0 else input.copy_(feature_dropout(input, p, train))


#: ``torch.newaxis``: ``None``, as NumPy's
newaxis = None


#: the names ``compat.torch`` loads from here on first access
NAMES = tuple(
    name
    for name, value in list(globals().items())
    if callable(value) and not name.startswith("_") and value.__module__ == __name__
) + ("newaxis", "_grid_sampler_2d_cpu_fallback")
