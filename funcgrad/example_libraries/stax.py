"""Stax: neural-network layers as ``(init_fun, apply_fun)`` pairs (``jax.example_libraries.stax``).

A layer is a pair of functions:

* ``init_fun(rng, input_shape) -> (output_shape, params)`` draws parameters from a PRNG
  key (a ``uint32[2]`` key as :func:`funcgrad.random.key` makes) for inputs of the
  given shape (``-1`` for an unknown batch size is allowed);
* ``apply_fun(params, inputs, **kwargs) -> outputs`` runs the layer; ``rng=`` reaches
  layers that need randomness (:func:`Dropout`).

Combinators (:func:`serial`, :func:`parallel`, :func:`shape_dependent`) make layers from
layers::

    from funcgrad.example_libraries import stax

    init, apply = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    out_shape, params = init(fg.random.key(0), (-1, 784))
    logits = apply(params, images)

Parameters equal ``jax.example_libraries.stax``'s for the same key: the same keys are
split in the same order and the same initializers are drawn. Everything is written with
:mod:`funcgrad.numpy`, :mod:`funcgrad.lax`, :mod:`funcgrad.random` and :mod:`funcgrad.nn`,
so ``apply_fun`` is differentiable, batchable and jittable by funcgrad.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import lax, random
from funcgrad import numpy as fnp
from funcgrad.example_libraries import _fallback
from funcgrad.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)

try:  # issue 13 brings funcgrad.nn.initializers; until then the temporary copies
    from funcgrad.nn.initializers import glorot_normal, normal, ones, zeros
except ImportError:  # pragma: no cover - depends on what is on main
    from funcgrad.example_libraries._fallback import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "glorot",
    "glorot_normal",
    "logsoftmax",
    "normal",
    "ones",
    "parallel",
    "randn",
    "serial",
    "shape_dependent",
    "zeros",
]

Layer = tuple[Callable[..., Any], Callable[..., Any]]
Shape = tuple[int, ...]

# the names older stax code uses
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _lax(name: str) -> Callable[..., Any]:
    """``funcgrad.lax.<name>``, or the temporary stand-in while it is missing
    (``conv_transpose`` and ``conv_transpose_shape_tuple``)."""
    return getattr(lax, name, None) or getattr(_fallback, name)


# ---------------------------------------------------------------------------- layers


def Dense(
    out_dim: int,
    W_init: Callable[..., Any] = glorot_normal(),  # noqa: B008  (JAX's defaults)
    b_init: Callable[..., Any] = normal(),  # noqa: B008
) -> Layer:
    """Fully connected layer ``inputs @ W + b`` with ``W: (in, out_dim)``, ``b: (out_dim,)``."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        k_w, k_b = random.split(rng)
        params = W_init(k_w, (input_shape[-1], out_dim)), b_init(k_b, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return fnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(
    specs: Sequence[str], out_chan: int, filter_shape: Sequence[int], input_shape: Shape
) -> list[int]:
    lhs_spec, rhs_spec, _ = specs
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def GeneralConv(
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),  # noqa: B008
) -> Layer:
    """Convolution with layouts given as strings, e.g. ``('NHWC', 'HWIO', 'NHWC')``.

    The kernel is Glorot-normal over its ``I``/``O`` axes unless ``W_init`` is given; the
    bias broadcasts over every output axis but ``C``.
    """
    _lhs_spec, rhs_spec, out_spec = dimension_numbers
    ones_ = (1,) * len(filter_shape)
    strides = tuple(strides or ones_)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = lax.conv_general_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = random.split(rng)
        return tuple(output_shape), (W_init(k_w, kernel_shape), b_init(k_b, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = lax.conv_general_dilated(
            inputs, W, strides, padding, ones_, ones_, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),  # noqa: B008
) -> Layer:
    """Transposed convolution (``lax.conv_transpose``) with string layouts."""
    _lhs_spec, rhs_spec, out_spec = dimension_numbers
    ones_ = (1,) * len(filter_shape)
    strides = tuple(strides or ones_)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = _lax("conv_transpose_shape_tuple")(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = random.split(rng)
        return tuple(output_shape), (W_init(k_w, kernel_shape), b_init(k_b, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = _lax("conv_transpose")(
            inputs, W, strides, padding, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: int | Sequence[int] = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Callable[..., Any] = zeros,
    gamma_init: Callable[..., Any] = ones,
) -> Layer:
    """Normalise over ``axis`` with the batch's own statistics, then scale and shift.

    ``beta`` (shift) and ``gamma`` (scale) have the input's shape without ``axis``;
    ``center=False``/``scale=False`` leave them out (``()``).
    """
    axes = (axis,) if np.isscalar(axis) else tuple(axis)  # type: ignore[arg-type]

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k_beta, k_gamma = random.split(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        expand = tuple(None if i in axes else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameter-free layer applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---------------------------------------------------------------------------- pooling


def _with_unit_axes(
    window_shape: Sequence[int], strides: Sequence[int], spec: str | None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Window and strides over every axis: 1 on the batch and channel axes."""
    n = len(window_shape) + 2
    batch_chan = (0, n - 1) if spec is None else (spec.index("N"), spec.index("C"))
    window, stride = iter(window_shape), iter(strides)
    full_w = tuple(1 if i in batch_chan else next(window) for i in range(n))
    full_s = tuple(1 if i in batch_chan else next(stride) for i in range(n))
    return full_w, full_s


def _pooling(kind: str) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        strides = tuple(strides or (1,) * len(window_shape))
        window, stride = _with_unit_axes(tuple(window_shape), strides, spec)

        def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
            pads = lax.padtype_to_pads(input_shape, window, stride, padding)
            ones_ = (1,) * len(window)
            out = lax.reduce_window_shape_tuple(input_shape, window, stride, pads, ones_, ones_)
            return tuple(out), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            reduce_window = lax.reduce_window
            if kind == "max":
                return reduce_window(inputs, -np.inf, lax.max, window, stride, padding)
            total = reduce_window(inputs, 0.0, lax.add, window, stride, padding)
            if kind == "sum":
                return total
            # average: divide by how many (unpadded) entries each window covered
            counts = reduce_window(
                fnp.ones(inputs.shape, inputs.dtype), 0.0, lax.add, window, stride, padding
            )
            return total / counts

        return init_fun, apply_fun

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = f"{kind.capitalize()}Pool"
    PoolingLayer.__doc__ = (
        f"{kind.capitalize()}-pooling layer over the spatial axes (all but ``N`` and ``C``"
        " of ``spec``; by default the first and last axes are batch and channels)."
    )
    return PoolingLayer


MaxPool = _pooling("max")
SumPool = _pooling("sum")
AvgPool = _pooling("avg")


# ------------------------------------------------------------------ shape-only layers


def _flatten() -> Layer:
    """Flatten every axis but the leading (batch) one."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> Layer:
    """The layer that returns its inputs."""
    return (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kw: inputs)


Identity = _identity()


def FanOut(num: int) -> Layer:
    """Copy the input into a list of ``num`` inputs (for :func:`parallel` branches)."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[list[Shape], Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> list[Any]:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    """Sum a list of equally shaped inputs."""

    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Sequence[Any], **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenate a list of inputs along ``axis``."""

    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Any]:
        first = tuple(input_shape[0])
        ax = axis % len(first)
        size = sum(s[ax] for s in input_shape)
        return first[:ax] + (size,) + first[ax + 1 :], ()

    def apply_fun(params: Any, inputs: Sequence[Any], **kwargs: Any) -> Any:
        return fnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout in ``mode='train'``; the identity in any other mode.

    As in JAX's stax, ``rate`` is the probability of *keeping* an entry, and kept entries
    are divided by it. ``apply_fun`` needs ``rng=`` in training mode.
    """

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key "
                "(e.g. from `funcgrad.random.key`)."
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return fnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# ------------------------------------------------------------------------ combinators


def _split_or_none(rng: Any, n: int) -> Sequence[Any]:
    return (None,) * n if rng is None else random.split(rng, n)


def serial(*layers: Layer) -> Layer:
    """Compose layers one after the other.

    ``init_fun`` splits the key once per layer (keeping the first half for the next
    split); ``apply_fun`` splits ``rng=`` into one key per layer when given.
    """
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Any, list[Any]]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rngs = _split_or_none(kwargs.pop("rng", None), len(apply_funs))
        for apply, p, rng in zip(apply_funs, params, rngs):
            inputs = apply(p, inputs, rng=rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Apply the i-th layer to the i-th of a sequence of inputs (see :func:`FanOut`)."""
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> Any:
        rngs = random.split(rng, len(init_funs))
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)]
        return zip(*results)

    def apply_fun(params: Any, inputs: Sequence[Any], **kwargs: Any) -> list[Any]:
        rngs = _split_or_none(kwargs.pop("rng", None), len(apply_funs))
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Shape], Layer]) -> Layer:
    """A layer built by ``make_layer(input_shape)`` once the input shape is known."""

    def init_fun(rng: Any, input_shape: Shape) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
