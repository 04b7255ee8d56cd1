"""PyTorch's checks on a tensor's autograd attributes and on inference tensors.

The ``Tensor`` properties in ``tensor.py`` call these (the tensor is passed in; this
module imports no tensor class). Errors and wording are PyTorch 2.13's
(``python_variable.cpp``, ``VariableTypeManual.cpp``, ``InferenceMode``).

Inference tensors: a tensor made while inference mode is on has ``_inference = True``
(a slot on ``Tensor``, copied to ``detach()``/``.data`` aliases; views should copy it
too). Outside inference mode such a tensor cannot be saved for backward
(:func:`check_saved`), updated in place (:func:`check_inplace`), made to require grad,
or asked for its version.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from funcgrad import _compat_contract
from funcgrad._compat_contract import op_cache as _op_cache
from funcgrad.errors import BroadcastError

INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
INFERENCE_VERSION = "Inference tensors do not track version counter."
INFERENCE_REQUIRES_GRAD = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
)
NON_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)
DETACHED_SAVED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This "
    "is not supported, please use out-of-place `.detach()` instead"
)
DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)

#: node -> output numbers of it whose tensor was detached in place (``detach_()``)
_detached: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_inplace(t: Any) -> None:
    """In-place update of an inference tensor outside inference mode."""
    if t._inference and not _gm._state.inference:
        raise RuntimeError(INFERENCE_INPLACE)


def check_saved(args: Sequence[Any], saved_in: Sequence[int]) -> None:
    """An op being recorded would save an inference tensor (``args[i]`` for ``i`` in
    ``saved_in``; non-tensors have no ``_inference``)."""
    for i in saved_in:
        if getattr(args[i], "_inference", False):
            raise RuntimeError(INFERENCE_SAVED)


def check_version(t: Any) -> None:
    if t._inference:
        raise RuntimeError(INFERENCE_VERSION)


def requires_grad_value(t: Any, value: Any, method: bool) -> bool:
    """The checked new ``requires_grad`` of ``t``: ``method`` for ``requires_grad_(value)``
    (which accepts ``True`` on a non-leaf), else the attribute setter."""
    if not isinstance(value, bool):
        if method:
            _gm.check_bool("requires_grad_", "requires_grad", value)
        raise RuntimeError("requires_grad must be a bool")
    if t._grad_fn is not None:
        if value and method:
            return True
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables." if value else NON_LEAF_FLAG
        )
    if value:
        if _dt.kind(t._st.a.dtype) not in "fc":
            kinds = "floating point" if method else "floating point and complex"
            raise RuntimeError(f"only Tensors of {kinds} dtype can require gradients")
        if t._inference and not _gm._state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD)
    return value


def check_grad(t: Any, value: Any, is_tensor: bool) -> None:
    """``t.grad = value``: a tensor of ``t``'s dtype, device and shape, not ``t`` itself."""
    if value is None:
        return
    if not is_tensor:
        raise TypeError(
            "assigned grad expected to be a Tensor or None but got grad of type "
            f"{type(value).__name__}"
        )
    if value is t:
        raise RuntimeError("can't assign Variable as its own grad")
    gd, td = value._st.a.dtype, t._st.a.dtype
    if gd != td:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_dt.type_meta_name(gd)}' "
            f"to a tensor with grad_dtype '{_dt.scalar_type_name(td)}'. The gradient must "
            "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
            "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
            "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
            "break downstream systems that assume they match."
        )
    gdev, tdev = value.device, t.device
    if gdev.type != tdev.type:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{gdev.type}' to a tensor with "
            f"device type '{tdev.type}'. Please ensure that the gradient and the tensor are on "
            "the same device"
        )
    if tuple(value._st.a.shape) != tuple(t._st.a.shape):
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(value._st.a.shape)}' to a "
            f"tensor of size '{list(t._st.a.shape)}'. Please ensure that the gradient and "
            "the tensor are the same size"
        )


def check_data(t: Any, value: Any, is_tensor: bool) -> None:
    """``t.data = value``: a tensor, floating point or complex when ``t`` requires grad."""
    if not is_tensor:
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    if t._requires_grad and _dt.kind(np.dtype(value._st.a.dtype)) not in "fc":
        raise RuntimeError(
            "data set to a tensor that requires gradients must be floating point or complex dtype"
        )


def note_detached(t: Any) -> None:
    """``t.detach_()``: remember that ``t``'s output of its node was detached, so that a
    node which saved it as an input raises at backward (as PyTorch's ``SavedVariable``)."""
    fn = t._grad_fn
    if fn is not None:
        _detached.setdefault(fn, set()).add(t._output_nr)


def check_detached(node: Any, fn: Any, nr: int) -> None:
    """A saved entry of ``node`` (the output ``nr`` of ``fn``) was detached in place;
    outputs a node saved of itself are exempt (PyTorch saves those without a grad_fn)."""
    if fn is not None and fn is not node and nr in _detached.get(fn, ()):
        raise RuntimeError(DETACHED_SAVED)


#: ops PyTorch lets mix meta and CPU operands (its matrix products check no device): a
#: meta result here (PyTorch's is on the first operand's device, of unspecified values)
_META_MIXES = frozenset(
    {"MmBackward0", "BmmBackward0", "AddmmBackward0", "ConvolutionBackward0"}
    | {"EinsumBackward0", "EmbeddingBackward0"}
)


def check_meta_mix(args: Sequence[Any], name: str) -> None:
    """PyTorch's error for an op on a ``meta`` tensor and a tensor of another device (the
    device expected is the first tensor's; 0-d CPU tensors mix with any device)."""
    if name in _META_MIXES:
        return
    ts = [a for a in args if hasattr(a, "_st") and not (a.ndim == 0 and a.device.type == "cpu")]
    for t in ts[1:]:
        if t.device != ts[0].device:
            raise RuntimeError(
                f"Tensor on device {t.device} is not on the expected device {ts[0].device}!"
            )


def one_element(t: Any) -> Any:
    """The value of a one-element tensor for ``float()``/``int()``/``complex()``."""
    if t._st.a.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t.item()


def lookup_op(
    fn: Any,
    name: str,
    static: tuple,
    sig: tuple,
    saves: str | None,
    args: Sequence[Any],
    generic: bool = True,
) -> Any:
    """``funcgrad._compat_contract.lookup_op`` with PyTorch's error for operands ``args`` that do
    not broadcast (:func:`broadcast_error`); ``generic``: a shape template's op may serve."""
    try:
        return _compat_contract.lookup_op(fn, name, static, sig, saves, generic=generic)
    except BroadcastError as e:
        raise broadcast_error(_shapes(args), e) from None


def trace_op(fn: Any, name: str, static: tuple, arrays: Sequence[Any], args: Sequence[Any]) -> Any:
    """``funcgrad._compat_contract.trace_op`` with PyTorch's broadcast error (see :func:`lookup_op`).

    A signature seen before is read from the op cache first, as ``apply`` does."""
    sig = []
    for a in arrays:
        d = getattr(a, "dtype", None)
        sig.append((a.shape, d) if d is not None else type(a))
    sig_t = tuple(sig)
    op = _op_cache.get((fn, name, static, sig_t, None))
    if op is not None:
        return op
    try:
        return _compat_contract.lookup_op(fn, name, static, sig_t)
    except BroadcastError as e:
        raise broadcast_error(_shapes(args), e) from None


def _shapes(args: Sequence[Any]) -> list:
    return [a._st.a.shape for a in args if hasattr(a, "_st")]


def _infer_size(a: tuple, b: tuple) -> tuple | str:
    """PyTorch's ``infer_size``: the broadcast of ``a`` and ``b``, or its error message
    (the rightmost dimension that does not match)."""
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        off = ndim - 1 - i
        sa = a[len(a) - 1 - off] if len(a) - 1 - off >= 0 else 1
        sb = b[len(b) - 1 - off] if len(b) - 1 - off >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            return (
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {i}"
            )
        out[i] = sa if sb == 1 else sb
    return tuple(out)


def broadcast_error(shapes: Sequence[tuple], err: Exception) -> RuntimeError:
    """PyTorch's ``RuntimeError`` for operands that do not broadcast: the first mismatch
    folding ``shapes`` (the op's tensor arguments, in order) left to right as
    ``TensorIterator`` does, else that of the shapes in ``err`` (a funcgrad
    ``BroadcastError`` inside a composite op); keeps funcgrad's pointer to the user's line."""
    msg = None
    for group in (shapes, getattr(err, "shapes", ())):
        acc: tuple | str = ()
        for s in group:
            acc = _infer_size(acc, tuple(s))
            if isinstance(acc, str):
                msg = acc
                break
        if msg is not None:
            break
    text = str(err)
    at = text.find("\n  (in your code at ")
    if msg is None:
        msg = text if at < 0 else text[:at]
    return RuntimeError(msg + (text[at:] if at >= 0 else ""))
