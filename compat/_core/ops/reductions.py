"""Torch reductions: sums, means, extrema (with indices), variance, ``any``/``all``,
``logsumexp``, softmax, cumulative ops and norms."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core.creation_rows import FORMS as _CREATION
from compat._core.mutation import apply_inplace
from compat._core.ops import conventions as _conv
from compat._core.ops._common import _c, _vector_norm_f, acc
from compat._core.ops.binary import maximum, minimum
from compat._core.ops.linalg_ns import matrix_norm, norm_dtype
from compat._core.optable import Mask, Sample, defop
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import lax as flax
from funcgrad import nn as _nn  # noqa: F401  (declares the logsumexp and softmax rows)
from funcgrad import numpy as fnp
from funcgrad._compat_contract import is_tracing, reduction_rows


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        wrapped = [_wrap_dim(d, ndim) for d in dim]
        if len(set(wrapped)) != len(wrapped):
            d = next(d for i, d in enumerate(wrapped) if d in wrapped[:i])
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(sorted(wrapped))
    return (_wrap_dim(dim, ndim),)


_FULL = {"max": _conv.even_extremum(fnp.max), "min": _conv.even_extremum(fnp.min)}


def _full_extremum_f(x: Any, *, op: str) -> Any:
    """Full ``max``/``min``: the gradient shared by the elements equal to the result."""
    if _dt.kind(x.dtype) == "f":
        return _FULL[op](x)
    return fnp.max(x) if op == "max" else fnp.min(x)


# --------------------------------------------------------------------------- the rows' ops
# (``torch.sum``, ``prod``, ``mean``, ``amax``, ``amin``, ``any``, ``all``, ``argmax``,
# ``argmin``: the reduction rows of ``funcgrad/primitives/reductions.py``, whose
# ``TorchReduction`` says how PyTorch's form differs from the numpy form each op computes
# with)


#: each row's funcgrad function its op computes with: the numpy form, or a composite
#: row's own function (``logsumexp``, ``softmax``: ``jax.nn``'s conventions)
_FORM = {
    r.name: getattr(fnp, r.name) if "numpy" in r.public else r.reduce for r in reduction_rows()
}


def _reduce_f(x: Any, *, op: str, promote: str, axes: Any, keepdims: bool, dtype: Any) -> Any:
    """The row ``op``'s function of ``x`` in ``dtype``; PyTorch's gradient of the extrema
    of floats (``conventions.amax``: ties and NaN shared evenly)."""
    form = _FORM[op]
    if promote == "index":  # (one axis or none)
        axis = axes[0] if axes else None
        return form(x, axis=axis, keepdims=keepdims).astype(dtype)
    if promote == "keep" and _dt.kind(x.dtype) == "f":
        return _conv.amax(x, axes, keepdims, op)
    if promote == "bool":  # (a uint8 input gives uint8, as PyTorch)
        return form(x, axis=axes, keepdims=keepdims).astype(dtype)
    # (``dtype=torch.bool``: PyTorch reduces in bools, so a sum is any and a product all)
    return form(_c(x, dtype), axis=axes, keepdims=keepdims).astype(dtype)


def _result_dtype(t: Any, name: str, given: np.dtype, dtype: Any) -> np.dtype:
    """The result dtype of a row's op as PyTorch types it (``TorchReduction.promote``; a
    ``"float"`` row's ``int_error`` refuses a non-float input whatever ``dtype=`` says)."""
    promote = t.promote
    if promote == "float" and t.int_error is not None and _dt.kind(given) not in "fc":
        raise RuntimeError(t.int_error.format(dtype=_dt.scalar_type_name(given)))
    if promote == "bool":
        return given if given == np.uint8 else np.dtype(bool)
    if promote == "index":
        return np.dtype(np.int64)
    dt = _dt.np_dtype(dtype) if dtype is not None else given
    if promote == "float" and _dt.kind(dt) not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_dt.from_np(dt).name.capitalize()}"
        )
    if promote == "int64" and dtype is None and _dt.kind(dt) in "biu":
        return np.dtype(np.int64)
    if promote == "inexact" and _dt.kind(dt) in "biu":
        return _dt.get_default_dtype().np
    return dt


#: PyTorch's refusal to reduce every element of an empty tensor, by its exception type
#: (``TorchReduction.no_identity``: ``amax``'s ``RuntimeError``, ``argmax``'s ``IndexError``)
_EMPTY_ALL = {
    RuntimeError: "{}(): Expected reduction dim to be specified for input.numel() == 0. "
    "Specify the reduction dim with the 'dim' argument.",
    IndexError: "{}(): Expected reduction dim to be specified for input.numel() == 0.",
}


def _check_nonempty(name: str, input: Tensor, axes: Any, no_identity: type) -> None:
    """PyTorch's errors for reducing an empty extent of a reduction without identity."""
    if input.numel():  # (no extent is empty)
        return
    if axes is None:
        raise no_identity(_EMPTY_ALL[no_identity].format(name))
    for a in axes or ():
        if input.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _refuse_kind(t: Any, input: Tensor) -> None:
    """PyTorch's refusals of a bool or complex input its row declares."""
    kind = input._npdtype.kind
    if kind == "b" and t.bool_error is not None:
        raise RuntimeError(t.bool_error)
    if kind == "c" and t.complex_error is not None:
        exc, text = (
            t.complex_error
            if isinstance(t.complex_error, tuple)
            else (NotImplementedError, t.complex_error)
        )
        raise exc(text.format(dtype=_dt.scalar_type_name(input._npdtype)))


def _reducer(row: Any, name: str) -> Any:
    """``(input, dim, keepdim, dtype) -> Tensor``: a row's op, with only the checks its
    ``TorchReduction`` declares (read once, here), in PyTorch's order: arguments, dtype,
    dims, empty, complex (argmax's dtype refusals come before its dim's)."""
    t = row.torch
    index = t.promote == "index"
    refuses = t.bool_error is not None or t.complex_error is not None
    early, late = refuses and index, refuses and not index
    no_identity, empty_none = t.no_identity, not t.empty_dim_all
    node0, node1 = t.grad_fn or name, t.dim_grad_fn or t.grad_fn or name
    fixed = (("op", row.name), ("promote", t.promote))

    required = t.dim_required

    def reduce(input: Tensor, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
        if index and isinstance(dim, (list, tuple)):  # (one dim, or None)
            raise TypeError(
                f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}"
            )
        if required and dim is None:
            raise TypeError(
                f"{name}(): argument 'dim' (position 2) must be tuple of ints, not NoneType"
            )
        if not isinstance(keepdim, (bool, np.bool_)):
            raise TypeError(
                f"{name}(): argument 'keepdim' (position 3) must be bool, not "
                f"{'torch.dtype' if isinstance(keepdim, _dt.dtype) else _gm.typename(keepdim)}"
            )
        dt = _result_dtype(t, name, input._npdtype, dtype)
        if early:
            _refuse_kind(t, input)
        if dim is None:
            axes: Any = None
        elif input.ndim == 0:  # (a 0-d tensor has one dimension to name)
            _dims(dim, 1)
            axes = ()
        elif empty_none and isinstance(dim, (list, tuple)) and not dim:
            axes = ()
        else:
            axes = _dims(dim, input.ndim)
        if no_identity is not None:
            _check_nonempty(name, input, axes, no_identity)
        if late:
            _refuse_kind(t, input)
        static = (*fixed, ("axes", axes), ("keepdims", bool(keepdim)), ("dtype", dt))
        return apply(_reduce_f, node0 if dim is None else node1, (input,), static)

    return reduce


def _samples(row: Any) -> tuple[Sample, ...]:
    """The op's test cases, from its row: every dimension, one kept, the last, several
    (where PyTorch takes several); an integer input where PyTorch computes one; bool masks
    for ``any``/``all``; gradients where the row names a node."""
    t = row.torch
    if t.promote == "bool":
        return (
            Sample((Mask((2, 3)),), grad=False),
            Sample((Mask((2, 3)),), args=(1,), grad=False),
            Sample((Mask((2, 3, 2)),), args=((0, 2), True), grad=False),
        )
    d, grad = t.domain, t.grad_fn is not None
    out = () if t.dim_required else (Sample(((2, 3),), domain=d, grad=grad),)
    out += (
        Sample(((2, 3),), kwargs=(("dim", 1), ("keepdim", True)), domain=d, grad=grad),
        Sample(((2, 3),), args=(-1,), domain=d, grad=grad),
    )
    if not t.one_dim:
        out += (Sample(((2, 3, 2),), args=((0, 2),), domain=d, grad=grad),)
    if t.promote != "float":
        out += (Sample(((4,),), dtype="int64", domain=d, grad=False),)
    return out


#: the rows whose PyTorch form takes ``correction`` (``var``, ``std``), by name
_MOMENTS = {r.name: r for r in reduction_rows() if r.torch.correction}


def _count(shape: tuple[int, ...], axes: Any) -> int:
    return builtins.int(np.prod([shape[a] for a in (range(len(shape)) if axes is None else axes)]))


def _moment_f(x: Any, *, op: str, axes: Any, keepdims: bool, correction: float) -> Any:
    """The variance by the numpy form with ``correction``, then the row ``op``'s ``finish``
    (``std``'s root). PyTorch divides by ``max(0, N - correction)`` (so ``inf``, or NaN for a
    zero sum), where NumPy's gives NaN, and its root has no gradient where the variance is
    0, where the derivative is infinite."""
    n = _count(x.shape, axes)
    if n - correction > 0:
        v = fnp.var(x, axis=axes, keepdims=keepdims, correction=correction)
    else:  # (PyTorch's derivative: 2 (x - mean) / 0, the mean held, so ``inf``)
        d = x - flax.stop_gradient(fnp.mean(x, axis=axes, keepdims=True))
        v = fnp.sum((d * fnp.conj(d)).real, axis=axes, keepdims=keepdims) / 0.0
    finish = _MOMENTS[op].finish
    if finish is None:
        return v
    zero = v == 0
    return fnp.where(zero, 0.0, finish(fnp.where(zero, 1.0, v))).astype(v.dtype)


def _moment_static(input: Tensor, name: str, dim: Any, unbiased: Any, correction: Any) -> tuple:
    """``(axes, correction)`` of PyTorch's ``var``/``std`` arguments: a bool second argument
    is ``unbiased``; ``unbiased`` and ``correction`` not both; ``correction`` 1 by default;
    PyTorch's warning where ``N - correction`` is not positive."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if unbiased is not None and correction is not None:
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got both unbiased= and "
            "correction=: give one"
        )
    if isinstance(dim, float):
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not float")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if dim is None or input.ndim:
        axes = _dims(dim, input.ndim)
    else:  # (a 0-d tensor has one dimension to name)
        _dims(dim, 1)
        axes = ()
    if _count(input.shape, axes) - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=4,
        )
    return axes, float(correction)


def _moment_op(row: Any) -> Any:
    """``torch.X``/``Tensor.X``/``out=`` of a row whose PyTorch form takes ``correction``
    (``TorchReduction.correction``: ``var``, ``std``)."""
    t = row.torch
    name, node = t.name or row.name, t.grad_fn

    def f(
        input: Tensor,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        if _dt.kind(input._npdtype) not in "fc":
            raise RuntimeError(t.int_error)
        axes, corr = _moment_static(input, name, dim, unbiased, correction)
        static = (("op", row.name), ("axes", axes), ("keepdims", bool(keepdim)))
        return apply(_moment_f, node, (input,), (*static, ("correction", corr)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.doc} (PyTorch's ``dim``/``correction``; the row's ``TorchReduction``)."
    samples = (
        Sample(((2, 3),)),
        Sample(((2, 3),), args=(1,), kwargs=(("correction", 0),)),
        Sample(((2, 3),), args=(0,), kwargs=(("keepdim", True),)),
        Sample(((2, 3, 2),), args=((0, 2), False)),
        Sample(((3,),), dtype="complex64", grad=False),
    )
    return defop(name, samples=samples)(f)


def _scan_f(x: Any, *, op: str, axis: int, dtype: np.dtype) -> Any:
    """The row ``op``'s numpy form (``cumsum``, ``cumprod``) in ``dtype`` (float16 and
    bfloat16 accumulate in float32); a 0-d tensor stays 0-d, where NumPy's form flattens it."""
    return getattr(fnp, op)(_c(x, acc(dtype)), axis=axis).astype(dtype).reshape(x.shape)


def _cumulative_op(row: Any) -> Any:
    """``torch.X``/``Tensor.X``/``Tensor.X_``/``out=`` of a cumulative row (``cumsum``,
    ``cumprod``): one ``dim``; bool and integer inputs give int64 unless ``dtype=``."""
    t = row.torch
    name, node = t.name or row.name, t.grad_fn

    def f(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        if dtype is not None:
            dt = _dt.np_dtype(dtype)
        else:
            dt = np.dtype(np.int64) if _dt.kind(input._npdtype) in "biu" else input._npdtype
        static = (("op", row.name), ("axis", _wrap_dim(dim, input.ndim)), ("dtype", dt))
        return apply(_scan_f, node, (input,), static)

    def inplace(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        """``Tensor.X_``: the scan in ``self``'s dtype (PyTorch's ``X_out(self, self)``)."""
        dt = self._npdtype
        if dtype is not None and _dt.np_dtype(dtype) != dt:
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {_dt.from_np(dt).name} and output "
                f"tensor dtype {_dt.from_np(_dt.np_dtype(dtype)).name} should match"
            )
        if dt == np.bool_ and self.ndim and self.numel():  # (no kernel runs otherwise)
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        static = (("op", row.name), ("axis", _wrap_dim(dim, self.ndim)), ("dtype", dt))
        return apply_inplace(self, _scan_f, node, (), static)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.doc} (PyTorch's ``dim``; the row's ``TorchReduction``)."
    inplace.__name__ = inplace.__qualname__ = name + "_"
    samples = (
        Sample(((2, 3),), args=(1,), domain=t.domain),
        Sample(((4,),), args=(0,), dtype="int64", domain=t.domain, grad=False),
    )
    return defop(name, inplace=inplace if t.inplace else False, samples=samples)(f)


def _softmax_f(x: Any, *, op: str, axis: Any, dtype: np.dtype) -> Any:
    """The softmax row ``op``'s function of ``x`` in ``dtype`` along ``axis`` (an empty
    input of any dtype as it is: PyTorch runs no kernel)."""
    if x.size == 0:
        return _c(x, dtype)
    # float16/bfloat16 in float32, rounded once (PyTorch's kernels; the row's form of
    # float16 rounded each step: 60% of the values 1 ulp or more off)
    return _c(_FORM[op](_c(_c(x, dtype), acc(dtype)), axis), dtype)


def legacy_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's implicit ``dim`` of ``nn.functional``'s softmaxes (and ``softmin``), with
    its warning."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_op(row: Any) -> Any:
    """``torch.X``, ``Tensor.X``, ``torch.special.X``, ``out=`` (of the result's exact dtype)
    and ``nn.functional.X`` of a softmax row (``softmax``, ``log_softmax``): one ``dim``,
    ``dtype=`` applied to the input first, floats only (the row's ``kernel`` refuses
    others), the node saving its result."""
    t = row.torch
    name, node, kernel = t.name or row.name, t.grad_fn, t.kernel

    def f(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
        if isinstance(dim, (list, tuple)) or dim is None:
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
        if dtype is not None and not isinstance(dtype, _dt.dtype):
            raise TypeError(
                f"{name}(): argument 'dtype' (position 3) must be torch.dtype, not "
                f"{type(dtype).__name__}"
            )
        dt = _dt.np_dtype(dtype) if dtype is not None else input._npdtype
        axis = _wrap_dim(dim, input.ndim)
        if _dt.kind(dt) != "f" and input.numel():
            where = "lastdim_" if input.ndim == 0 or axis == input.ndim - 1 else ""
            raise NotImplementedError(
                f"\"{kernel}_{where}kernel_impl\" not implemented for '{_dt.scalar_type_name(dt)}'"
            )
        static = (("op", row.name), ("axis", axis if input.ndim else ()), ("dtype", dt))
        return apply(_softmax_f, node, (input,), static, saves="result")

    def functional(
        input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
    ) -> Tensor:
        if dim is None:
            dim = legacy_softmax_dim(name, input.dim(), _stacklevel)
        return f(input, dim, dtype)

    f.__name__ = f.__qualname__ = functional.__name__ = functional.__qualname__ = name
    f.__doc__ = f"{row.doc} (PyTorch's ``dim``/``dtype``; the row's ``TorchReduction``)."
    functional.__doc__ = f"{row.doc}; no ``dim`` warns and picks PyTorch's legacy one."
    samples = (
        Sample(((2, 4),), args=(1,)),
        Sample(((3, 2),), args=(0,)),
        Sample(((2, 3, 2),), args=(-2,)),
    )
    for n in t.special:
        defop(n, module="special", method=False, out=False, samples=samples)(f)
    return defop(name, functional=functional, exact_out=_EXACT_OUT, samples=samples)(f)


#: PyTorch's refusal of a softmax's ``out=`` of another dtype than the result's
_EXACT_OUT = "Expected out tensor to have dtype {want_c}, but got {got_c} instead"


def _reduction_op(row: Any) -> Any:
    """``torch.X``/``Tensor.X``/``out=`` of a reduction row (its ``TorchReduction``)."""
    t = row.torch
    name = t.name or row.name
    if t.correction:
        return _moment_op(row)
    if row.numpy == "cumulative":
        return _cumulative_op(row)
    if row.numpy == "normalize":
        return _softmax_op(row)
    reduce = _reducer(row, name)

    def with_dtype(
        input: Tensor, dim: Any = t.dim, keepdim: bool = False, *, dtype: Any = None
    ) -> Tensor:
        return reduce(input, dim, keepdim, dtype)

    def without_dtype(input: Tensor, dim: Any = t.dim, keepdim: bool = False) -> Tensor:
        return reduce(input, dim, keepdim, None)

    def dim_required(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
        return reduce(input, dim, keepdim, None)

    if t.dim_required:
        f = dim_required
    else:
        f = with_dtype if t.dtype else without_dtype
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.doc} (PyTorch's ``dim``/``keepdim``; the row's ``TorchReduction``)."
    samples = _samples(row)
    for n in t.special:
        defop(n, module="special", method=False, samples=samples)(f)
    check = _out_needs_dim(name) if name in _OUT_NEEDS_DIM else None
    text = _NANSUM_OUT if name in ("nansum", "nanmean") else None
    return defop(name, samples=samples, out_check=check, dtype_out=text)(f)


#: PyTorch's ``nansum``'s refusal of an ``out`` of another dtype than ``dtype=``'s
#: (``nanmean`` calls it)
_NANSUM_OUT = "nansum: provided dtype must match dtype of result. Got {got} and {want}."


#: the reductions whose ``out=`` overload wants a ``dim`` (``None`` allowed): PyTorch's
#: ``torch.X(input, *, dtype)`` has no ``out``; its parser's refusal lists both forms
_OUT_NEEDS_DIM = {
    "sum": "tuple of ints dim",
    "prod": "int dim",
}


def _out_needs_dim(name: str) -> Callable[[tuple, dict[str, Any], Any], None]:
    """The row's ``out_check``: PyTorch's ``TypeError`` for ``out=`` without ``dim``."""
    forms = (
        " * (Tensor input, *, torch.dtype dtype = None)\n"
        f" * (Tensor input, {_OUT_NEEDS_DIM[name]}, bool keepdim = False, *, torch.dtype dtype "
        "= None, Tensor out = None)\n"
    )

    def check(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
        if len(args) > 1 or "dim" in kwargs:
            return
        if len(args) + len(kwargs) == 1:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, "
                f"out=Tensor), but expected one of:\n{forms}"
            )
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')

    return check


for _row in reduction_rows():
    globals()[_row.torch.name or _row.name] = _reduction_op(_row)
del _row


def _max_dim_f(x: Any, *, axis: int, keepdims: bool, op: str) -> Any:
    # ties: the first index gets the whole gradient (argmax + take_along_axis)
    idx = fnp.argmax(x, axis=axis) if op == "max" else fnp.argmin(x, axis=axis)
    idx = fnp.expand_dims(idx, axis)
    vals = fnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        vals = fnp.squeeze(vals, axis=axis)
        idx = fnp.squeeze(idx, axis=axis)
    return vals, fnp.asarray(idx, np.int64)


def _extremum(op: str, input: Tensor, dim: Any, keepdim: bool, other: Any) -> Any:
    if isinstance(dim, Tensor):
        return maximum(input, dim) if op == "max" else minimum(input, dim)
    if other is not None:
        return maximum(input, other) if op == "max" else minimum(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        if input._npdtype.kind == "c":  # (funcgrad orders complex values; PyTorch does not)
            kind = _dt.scalar_type_name(input._npdtype)
            raise NotImplementedError(f"\"{op}_all\" not implemented for '{kind}'")
        name = "MaxBackward1" if op == "max" else "MinBackward1"
        return apply(_full_extremum_f, name, (input,), (("op", op),))
    axis = _wrap_dim(dim, input.ndim)
    _check_nonempty(op, input, (axis,) if input.ndim else (), RuntimeError)
    if input.ndim == 0:
        return return_type(op, "values indices")(input * 1, zeros_like_int(input))
    name = "MaxBackward0" if op == "max" else "MinBackward0"
    vals, idx = apply(
        _max_dim_f, name, (input,), (("axis", axis), ("keepdims", bool(keepdim)), ("op", op))
    )
    return return_type(op, "values indices")(vals, idx)


def zeros_like_int(t: Tensor) -> Tensor:

    return _CREATION["zeros"](*t.shape, dtype=_dt.int64)


@defop(
    samples=(
        Sample(((2, 3),)),
        Sample(((2, 3),), args=(1,)),
        Sample(((2, 3),), kwargs=(("dim", 0), ("keepdim", True))),
    )
)
def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return _extremum("max", input, dim, keepdim, other)


@defop(samples=(Sample(((2, 3),)), Sample(((2, 3),), args=(1,))))
def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return _extremum("min", input, dim, keepdim, other)


@defop(
    samples=(Sample(((2, 3),)), Sample(((2, 3),), args=(1,), kwargs=(("dim", 1),))),
    number_first=True,  # (PyTorch's Python function: a number fails on ``.layout``)
    numpy_names=(),  # (and so takes no ``axis=``/``keepdims=``)
)
def norm(
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    dtype: Any = None,
) -> Tensor:
    """The ``p``-norm over ``dim`` (all elements by default); ``p="nuc"`` the nuclear norm
    of the matrices over ``dim``, which must then name two dimensions."""
    if isinstance(p, str) and p == "nuc":
        dims = list(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    pv = 2.0 if p in ("fro", None) else float(p)
    dt = norm_dtype("linalg.vector_norm", input, dtype)
    st = (("ord", pv), ("axes", _dims(dim, input.ndim)), ("keepdims", bool(keepdim)), ("dtype", dt))
    return apply(_vector_norm_f, "LinalgVectorNormBackward0", (input,), st)


ValuesMinMax = return_type("aminmax", "min max")


@defop(
    node_name=False,
    samples=(Sample(((3, 4),), grad=False), Sample(((3, 4),), kwargs=(("dim", 1),), grad=False)),
)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> ValuesMinMax:
    """``(min, max)`` over ``dim`` (all elements by default)."""
    d = () if dim is None else dim
    if input.numel() == 0 and dim is None:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
            "no identity."
        )
    axis = _wrap_dim(dim, input.ndim) if dim is not None and input.ndim else None
    if axis is not None and input.shape[axis] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size.")
    return ValuesMinMax(input.amin(d, keepdim), input.amax(d, keepdim))


_COV_DOF_WARNING = (
    "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
    "of observations."
)


def _cov_matrix(x: Any, fw: Any, aw: Any, correction: int, dtype: np.dtype) -> Any:
    """PyTorch's weighted covariance of the rows of ``x`` (variables by observations), in
    ``dtype``, before its final squeeze: a normalisation factor <= 0 divides by zero."""
    x = (fnp.reshape(x, (1, -1)) if x.ndim < 2 else x).astype(dtype)
    real = fnp.real(fnp.zeros((), dtype)).dtype
    w = None
    for weights in (fw, aw):
        if weights is not None:
            weights = fnp.reshape(weights, (-1,)).astype(real)
            w = weights if w is None else w * weights
    if w is None:
        wsum = fnp.asarray(float(x.shape[1]), real)
        avg = fnp.sum(x, axis=1) / wsum
    else:
        wsum = fnp.sum(w)
        avg = fnp.sum(x * w, axis=1) / wsum
    if aw is not None and correction != 0:
        norm = wsum - correction * fnp.sum(w * fnp.reshape(aw, (-1,)).astype(real)) / wsum
    else:
        norm = wsum - correction
    norm = fnp.where(norm <= 0, fnp.zeros_like(norm), norm)
    xc = x - fnp.expand_dims(avg, 1)
    xw = xc if w is None else xc * w
    return fnp.matmul(xc, fnp.conj(fnp.transpose(xw))) / norm.astype(dtype)


def _cov_f(x: Any, *w: Any, correction: int, fw: bool, aw: bool, dtype: np.dtype) -> Any:
    ws = list(w)
    fweights = ws.pop(0) if fw else None
    aweights = ws.pop(0) if aw else None
    c = _cov_matrix(x, fweights, aweights, correction, dtype)
    return fnp.squeeze(c) if c.shape == (1, 1) else c


def _cov_weights(input: Tensor, weights: Any, name: str, n: int) -> np.ndarray | None:
    """PyTorch's checks of ``fweights``/``aweights`` (its messages, its order); their values
    as float64 where concrete (outside funcgrad transforms), for the value checks."""
    if weights is None:
        return None
    if not isinstance(weights, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(weights).__name__}")
    if weights.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{weights.ndim} dimensions"
        )
    k = _dt.kind(weights._npdtype)
    if (k not in "iu") if name == "fweights" else (k != "f"):
        what = "integral" if name == "fweights" else "floating point"
        raise RuntimeError(
            f"cov(): expected {name} to have {what} dtype but got {name} with "
            f"{_dt.scalar_type_name(weights._npdtype)} dtype"
        )
    if weights.numel() != n:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {weights.numel()} != {n}"
        )
    if is_tracing():
        return None
    v = np.asarray(weights.detach().numpy(), np.float64).reshape(-1)
    if n and not v.min() >= 0:  # (NaN fails as PyTorch's ``min().ge(0)`` does)
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return v


def _cov_checks(input: Tensor, correction: Any, fweights: Any, aweights: Any) -> tuple:
    """``cov``'s argument checks and its degrees-of-freedom warning; the static params of
    :func:`_cov_f` and the weight tensors it takes."""
    if isinstance(correction, Tensor):
        correction = correction.item()
    if isinstance(correction, bool) or not isinstance(correction, (int, np.integer)):
        raise TypeError(
            f"cov(): argument 'correction' must be int, not {type(correction).__name__}"
        )
    if input._npdtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    n = input.shape[-1] if input.ndim else 1
    fw = _cov_weights(input, fweights, "fweights", n)
    aw = _cov_weights(input, aweights, "aweights", n)
    correction = int(correction)
    if fweights is None and aweights is None:
        norm: float | None = n - correction
    elif is_tracing():
        norm = None
    else:
        w = fw if aw is None else aw if fw is None else fw * aw
        wsum = float(w.sum())
        if wsum == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        norm = wsum - correction
        if aw is not None and correction != 0:
            norm = wsum - correction * float((w * aw).sum()) / wsum
    if norm is not None and norm <= 0:
        warnings.warn(_COV_DOF_WARNING, UserWarning, stacklevel=3)
    weights = [t for t in (fweights, aweights) if t is not None]
    dtype = _dt.float_type(_dt.result_type(input, *weights))
    st = (
        ("correction", correction),
        ("fw", fweights is not None),
        ("aw", aweights is not None),
        ("dtype", dtype),
    )
    return st, weights


@defop(
    out=False,
    node_name=False,
    samples=(Sample(((3, 5),)), Sample(((3, 5),), kwargs=(("correction", 0),))),
)
def cov(
    input: Tensor, *, correction: int = 1, fweights: Any = None, aweights: Any = None
) -> Tensor:
    """The covariance matrix of the rows of ``input`` (variables by observations): integer
    inputs give the default float dtype; weights checked, and a factor <= 0 warned, as
    PyTorch does; the node is PyTorch's last one (``SqueezeBackward0``)."""
    if input.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} dimensions"
        )
    st, weights = _cov_checks(input, correction, fweights, aweights)
    return apply(_cov_f, "SqueezeBackward0", [input, *weights], st)


def _corrcoef_f(x: Any, *, dtype: np.dtype) -> Any:
    c = _cov_matrix(x, None, None, 1, dtype)
    if c.shape == (1, 1):  # (one variable: PyTorch's ``c / c``, NaN for 0, inf or NaN)
        c = fnp.squeeze(c)
        return c / c
    d = fnp.diagonal(c)
    std = fnp.sqrt(fnp.real(d) if _dt.kind(np.dtype(dtype)) == "c" else d)
    c = c / fnp.expand_dims(std, 1) / fnp.expand_dims(std, 0)
    if _dt.kind(np.dtype(dtype)) == "c":  # (each part clipped to [-1, 1])
        re, im = fnp.clip(fnp.real(c), -1, 1), fnp.clip(fnp.imag(c), -1, 1)
        return re.astype(dtype) + 1j * im.astype(dtype)
    return fnp.clip(c, -1, 1)


@defop(out=False, node_name=False, samples=Sample(((3, 5),)))
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows of ``input``, clipped to [-1, 1] (each
    part of a complex one) as PyTorch does, with its dtypes, checks, warning and last node."""
    if input.ndim > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    st, _ = _cov_checks(input, 1, None, None)
    dtype = dict(st)["dtype"]
    one = input.ndim < 2 or input.shape[0] == 1
    node = (
        "DivBackward0"
        if one
        else "ComplexBackward0"
        if _dt.kind(dtype) == "c"
        else "ClampBackward1"
    )
    return apply(_corrcoef_f, node, (input,), (("dtype", dtype),))


def _renorm_f(x: Any, *, p: float, axis: int, maxnorm: float) -> Any:
    axes = tuple(a for a in range(x.ndim) if a != axis)
    norms = fnp.sum(fnp.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    scale = fnp.where(norms > maxnorm, maxnorm / (norms + 1e-7), fnp.ones_like(norms))
    return x * scale


@defop(inplace=True, node_name=False, samples=Sample(((3, 4),), args=(2, 0, 1.0)))
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled to ``p``-norm at most ``maxnorm``."""
    axis = _wrap_dim(dim, input.ndim)
    st = (("p", float(p)), ("axis", axis), ("maxnorm", float(maxnorm)))
    return apply(_renorm_f, "RenormBackward0", (input,), st)
