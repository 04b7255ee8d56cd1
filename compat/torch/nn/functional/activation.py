"""``nn.functional`` layers and activations: ``linear``, ``relu``, ``gelu``,
``dropout``, the ELU family, ``softplus``, the hard and shrink functions,
``prelu``/``rrelu``, ``glu``, ``softmin``, ``mish``, ``logsigmoid``.

Each activation is one compat op over a ``funcgrad.numpy`` function, computed for
float16/bfloat16 in float32 and rounded once (``_fused.opmath``), as PyTorch's CPU
kernels compute them. Piecewise
functions are written with ``where`` so that the gradient at a breakpoint is the one
PyTorch's backward gives (e.g. ``hardtanh``'s is 0 at ``min_val``/``max_val``,
``hardswish``'s is 0 at -3 and 1 at 3). ``inplace=True`` runs the op in place (PyTorch's
version-counter rules apply)."""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from compat._core import creation as _creation
from compat._core import rng as _rng
from compat._core import tensor as _t
from compat._core.mutation import apply_inplace, inplace_result
from compat._core.ops.reductions import legacy_softmax_dim
from compat._core.out_arg import write_out
from compat._core.tensor import apply
from compat.torch.nn import _fused
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _to_dtype


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    if weight.ndim == 2 and input.ndim >= 1 and input.shape[-1] != weight.shape[1]:
        rows = math.prod(input.shape[:-1])
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    fused = _fused.linear(input, weight, bias)
    if fused is not None:
        return fused
    out = torch.matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (gradient 0 at 0, as in PyTorch)."""
    if inplace and hasattr(input, "relu_"):
        return input.relu_()
    return torch.relu(input)


@_fused.opmath
def _leaky_relu_f(x: Any, *, slope: float) -> Any:
    return fnp.where(x > 0, x, x * slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere (one op, PyTorch's
    ``LeakyReluBackward0``, ``LeakyReluBackward1`` in place)."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(
            f"leaky_relu(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if not input.is_floating_point():
        raise NotImplementedError(f"\"leaky_relu\" not implemented for '{input.dtype}'")
    static = (("slope", float(negative_slope)),)
    if inplace:
        return apply_inplace(input, _leaky_relu_f, "LeakyReluBackward1", (), static)
    return apply(_leaky_relu_f, "LeakyReluBackward0", (input,), static)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    if inplace:
        return inplace_result(input, silu, (), {})
    out = _fused.silu(input)
    return out if out is not None else input * torch.sigmoid(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh formula."""
    if approximate in ("none", "tanh"):
        out = _fused.gelu(input, approximate)
        if out is not None:
            return out
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * input * (1.0 + torch.tanh(c * (input + 0.044715 * input * input * input)))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")
    erf = getattr(torch, "erf", None)
    if erf is None:
        raise NotImplementedError("gelu(approximate='none') needs torch.erf")
    return 0.5 * input * (1.0 + erf(input * (1.0 / math.sqrt(2.0))))


def _dropout_draws(input: Tensor, keep: float) -> Tensor:
    """0 where kept, 1 where dropped (``draws < keep`` is the mask): PyTorch's CPU draws,
    ``1 - empty_like(input).bernoulli_(keep)``. Made from the generator's Bernoulli draws
    directly (one tensor, the same values) unless a forward-AD level or dispatch mode
    would see those three ops."""
    if _t.FORWARD is None:
        kept = _rng.bernoulli_scalar(_creation._gen(None), tuple(input.shape), keep)
        return _creation._leaf(np.logical_not(kept).astype(input._npdtype), False)
    with torch.no_grad():
        return 1.0 - torch.empty(tuple(input.shape), dtype=input.dtype).bernoulli_(keep)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask is drawn as PyTorch's CPU dropout draws it (``bernoulli_(1 - p)`` on a tensor
    like ``input``), so a seeded run zeroes the same elements; with ``training=False`` (or ``p == 0``) the input is returned as is.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if inplace:
        return inplace_result(input, dropout, (p, training), {})
    if p == 1.0:
        return input * 0.0
    keep = 1.0 - p
    draws = _dropout_draws(input, keep)
    fused = _fused.scaled_mask_mul(input, draws, keep)
    if fused is not None:
        return fused
    with torch.no_grad():
        mask = _to_dtype(draws < keep, input.dtype) * (1.0 / keep)
    return input * mask


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A Gumbel-softmax sample: ``softmax((logits + g) / tau, dim)`` with ``g ~ Gumbel(0, 1)``.

    The noise is ``-log`` of ``empty_like(logits).exponential_()``, as PyTorch
    draws it, so a seeded run gives PyTorch's sample. ``hard=True`` returns the
    one-hot of the sample's argmax in the forward pass and the soft sample's
    gradient (straight-through). ``eps`` is deprecated and unused.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = -torch.empty_like(logits).exponential_().log()
    y_soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _run(
    fn: Any,
    name: str,
    input: Tensor,
    static: tuple = (),
    inplace: bool = False,
    inplace_name: str | None = None,
) -> Tensor:
    """``fn`` applied to ``input`` as one op, or in place (``input`` takes the result and
    the gradient is taken at its old value) when ``inplace``; ``inplace_name`` is the
    in-place node's name where PyTorch's differs (``EluBackward1`` for ``elu_``)."""
    if inplace:
        return apply_inplace(input, fn, inplace_name or name, (), static)
    return apply(fn, name, (input,), static)


def _mul_f(x: Any, s: Any) -> Any:
    return x * s


def _check_float(name: str, input: Tensor) -> None:
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{input.dtype}'")


@_fused.opmath
def _elu_f(x: Any, *, alpha: float, scale: float, input_scale: float) -> Any:
    pos = x > 0
    neg = alpha * (fnp.exp(fnp.where(pos, fnp.zeros_like(x), x) * input_scale) - 1.0)
    return scale * fnp.where(pos, x, neg)


def _elu(
    name: str, input: Tensor, alpha: float, scale: float, in_scale: float, inplace: bool
) -> Tensor:
    _check_float(name, input)
    static = (("alpha", float(alpha)), ("scale", float(scale)), ("input_scale", float(in_scale)))
    node = "CeluBackward" if name == "celu" else "EluBackward"
    return _run(_elu_f, node + "0", input, static, inplace, node + "1")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return _elu("elu", input, alpha, 1.0, 1.0, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu("celu", input, alpha, 1.0, 1.0 / alpha, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _elu("selu", input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


@_fused.opmath
def _softplus_f(x: Any, *, beta: float, threshold: float) -> Any:
    linear = x * beta > threshold
    safe = fnp.where(linear, fnp.zeros_like(x), x)
    return fnp.where(linear, x, fnp.log1p(fnp.exp(safe * beta)) / beta)


def softplus(
    input: Tensor, beta: float = 1.0, threshold: float = 20.0, *, out: Tensor | None = None
) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, the identity where ``beta x > threshold``."""
    _check_float("softplus", input)
    static = (("beta", float(beta)), ("threshold", float(threshold)))
    return _out("softplus", apply(_softplus_f, "SoftplusBackward0", (input,), static), out)


@_fused.opmath
def _hardtanh_f(x: Any, *, lo: float, hi: float) -> Any:
    low = fnp.full_like(x, lo)
    return fnp.where(x <= lo, low, fnp.where(x >= hi, fnp.full_like(x, hi), x))


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``clamp(x, min_val, max_val)`` (gradient 0 at and beyond the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"hardtanh(): argument 'input' must be Tensor, not {type(input).__name__}")
    static = (("lo", float(min_val)), ("hi", float(max_val)))
    return _run(_hardtanh_f, "HardtanhBackward0", input, static, inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


@_fused.opmath
def _hardswish_f(x: Any) -> Any:
    mid = x * (x + 3.0) / 6.0
    return fnp.where(x <= -3.0, fnp.zeros_like(x), fnp.where(x < 3.0, mid, x))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    _check_float("hardswish", input)
    return _run(_hardswish_f, "HardswishBackward0", input, (), inplace)


@_fused.opmath
def _hardsigmoid_f(x: Any) -> Any:
    # PyTorch's backward multiplies by 1/6 rounded to float32 (also for float64 inputs)
    c = float(np.float32(1.0 / 6.0))
    mid = c * x + flax.stop_gradient(x / 6.0 - c * x) + 0.5
    return fnp.where(x <= -3.0, fnp.zeros_like(x), fnp.where(x >= 3.0, fnp.ones_like(x), mid))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    _check_float("hardsigmoid", input)
    return _run(_hardsigmoid_f, "HardsigmoidBackward0", input, (), inplace)


@_fused.opmath
def _mish_f(x: Any) -> Any:
    return x * fnp.tanh(fnn.softplus(x))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _check_float("mish", input)
    return _run(_mish_f, "MishBackward0", input, (), inplace)


def _out(name: str, result: Tensor, out: Tensor | None) -> Tensor:
    """``result``, or written into ``out`` (PyTorch's ``out=`` of its C functions)."""
    return result if out is None else write_out(name, result, out)


_log_sigmoid_f = _fused.opmath(fnn.log_sigmoid)


def logsigmoid(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log(sigmoid(x))``, computed stably."""
    _check_float("log_sigmoid_forward", input)
    return _out("log_sigmoid", apply(_log_sigmoid_f, "LogSigmoidBackward0", (input,)), out)


# (softsign and tanhshrink are composites in PyTorch: each step rounds, no opmath)
def _softsign_f(x: Any) -> Any:
    return x / (1.0 + fnp.abs(x))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return apply(_softsign_f, "DivBackward0", (input,))


def _tanhshrink_f(x: Any) -> Any:
    return x - fnp.tanh(x)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return apply(_tanhshrink_f, "SubBackward0", (input,))


def _in_dtype(value: float, input: Tensor) -> float:
    """``value`` rounded to ``input``'s dtype, as ``hardshrink``'s kernel takes its ``lambd``
    (``lambd.to<scalar_t>()``) before comparing in float32."""
    return float(np.asarray(value, dtype=input._npdtype))


@_fused.opmath
def _softshrink_f(x: Any, *, lambd: float) -> Any:
    zero = fnp.zeros_like(x)
    return fnp.where(x > lambd, x - lambd, fnp.where(x < -lambd, x + lambd, zero))


def softshrink(input: Tensor, lambd: float = 0.5, *, out: Tensor | None = None) -> Tensor:
    """``x ∓ lambd`` outside ``[-lambd, lambd]``, 0 inside."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    _check_float("softshrink", input)
    result = apply(_softshrink_f, "SoftshrinkBackward0", (input,), (("lambd", float(lambd)),))
    return _out("softshrink", result, out)


@_fused.opmath
def _hardshrink_f(x: Any, *, lambd: float) -> Any:
    return fnp.where((x >= -lambd) & (x <= lambd), fnp.zeros_like(x), x)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""
    _check_float("hardshrink", input)
    static = (("lambd", _in_dtype(lambd, input)),)
    return apply(_hardshrink_f, "HardshrinkBackward0", (input,), static)


@_fused.opmath
def _threshold_f(x: Any, *, threshold: float, value: float) -> Any:
    # PyTorch's ``x <= threshold ? value : x``: a NaN input or threshold keeps ``x``
    return fnp.where(x <= threshold, fnp.full_like(x, value), x)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    static = (("threshold", float(threshold)), ("value", float(value)))
    return _run(_threshold_f, "ThresholdBackward0", input, static, inplace, "ThresholdBackward1")


def _prelu_f(x: Any, w: Any) -> Any:
    if w.size != 1 and x.ndim >= 2:
        w = fnp.reshape(w, (1, -1) + (1,) * (x.ndim - 2))
    elif w.size == 1:
        w = fnp.reshape(w, ())
    return fnp.where(x > 0, x, w * x)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one element or one per
    channel (dimension 1 of the input)."""
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    return apply(_prelu_f, "PreluKernelBackward0", (input, weight))


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU whose negative slope is drawn uniformly from ``[lower, upper]`` per element
    while training (PyTorch's draws: one double uniform per non-positive element, in order),
    ``(lower + upper) / 2`` else."""
    _check_float("rrelu_with_noise", input)
    with torch.no_grad():
        if training:
            neg = torch.from_numpy(
                _rng.rrelu_slopes(
                    _creation.default_generator, np.asarray(input._st.array), lower, upper
                )
            )
        else:
            neg = torch.full(tuple(input.shape), (lower + upper) / 2.0, dtype=input.dtype)
        slopes = torch.where(input > 0, torch.ones_like(input), neg)
    if inplace:
        return apply_inplace(input, _mul_f, "RreluWithNoiseBackward1", (slopes,))
    return apply(_mul_f, "RreluWithNoiseBackward0", (input, slopes))


@_fused.opmath
def _glu_f(x: Any, *, dim: int) -> Any:
    a, b = fnp.split(x, 2, axis=dim)
    return a * fnn.sigmoid(b)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a``, ``b`` are the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    nd = input.dim()
    dim = operator.index(dim)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    dim %= nd
    if input.shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}"
        )
    return apply(_glu_f, "GluBackward0", (input,), (("dim", dim),))


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``softmax(-input, dim)``."""
    if dim is None:
        dim = legacy_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is not None:
        input = _to_dtype(input, dtype)
    return (-input).softmax(dim)
