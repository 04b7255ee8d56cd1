"""Complex parts and ``torch.fft``: ``real``/``imag``/``angle``/``conj``/``polar``/
``complex`` and the discrete Fourier transforms, as op-table rows.

Transforms of real inputs give the complex dtype of the input's float type
(``float32`` -> ``complex64``), integer inputs that of the default float, as PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import views as _views
from compat._core.creation import tensor
from compat._core.ops._common import _c
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import lax as flax
from funcgrad import numpy as fnp
from funcgrad import stop_gradient


def _complex_of(npd: np.dtype) -> np.dtype:
    if _dt.kind(npd) == "c":
        return npd
    f = _dt.float_type(npd)
    return np.dtype(np.complex128 if f == np.float64 else np.complex64)


def check_parts(name: str, a: Any, b: Any, names: tuple[str, str]) -> None:
    """PyTorch's refusals of the two real parts of ``torch.complex``/``torch.polar``
    (``names``: its parameters): tensors only, both Half, Float or Double, of one dtype."""
    for pos, (arg, what) in enumerate(zip((a, b), names), 1):
        if not isinstance(arg, Tensor):
            raise TypeError(
                f"{name}(): argument '{what}' (position {pos}) must be Tensor, "
                f"not {type(arg).__name__}"
            )
    x, y = _dt.scalar_type_name(a._npdtype), _dt.scalar_type_name(b._npdtype)
    if not {x, y} <= {"Half", "Float", "Double"}:
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got {x} and {y}"
        )
    if x != y:
        raise RuntimeError(
            f"Expected object of scalar type {x} but got scalar type {y} for second argument"
        )


def _part_f(x: Any, *, op: str) -> Any:
    return {"real": fnp.real, "imag": fnp.imag, "angle": fnp.angle, "conj": fnp.conj}[op](x)


@defop(
    out=False,
    samples=(Sample(((2, 3),), dtype="complex128", grad=False), Sample(((3,),), grad=False)),
)
def real(input: Tensor) -> Tensor:
    """The real part, a view of the complex storage (the tensor itself for real dtypes)."""
    if _dt.kind(input._npdtype) != "c":
        return input
    out = apply(_part_f, "RealBackward0", (input,), (("op", "real"),))
    return _views.make_view(out, input, ("re",))


@defop(out=False, samples=Sample(((2, 3),), dtype="complex128", grad=False))
def imag(input: Tensor) -> Tensor:
    """The imaginary part, a view of the complex storage."""
    if _dt.kind(input._npdtype) != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    out = apply(_part_f, "ImagBackward0", (input,), (("op", "imag"),))
    return _views.make_view(out, input, ("im",))


def _view_as_real_f(x: Any) -> Any:
    return fnp.stack([fnp.real(x), fnp.imag(x)], axis=-1)


@defop(
    out=False, method=False, samples=Sample(((2, 3),), dtype="complex128", grad=False, method=False)
)
def view_as_real(input: Tensor) -> Tensor:
    """The complex tensor's storage seen as floats: a trailing dimension of 2 (re, im)."""
    if _dt.kind(input._npdtype) != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if _views.bits(input)[0]:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT "
            "alias the original."
        )
    out = apply(_view_as_real_f, "ViewAsRealBackward0", (input,))
    return _views.make_view(out, input, ("vr",))


def _view_as_complex_f(x: Any, *, dtype: np.dtype) -> Any:
    # (the parts as they are: ``re + 1j * im`` makes ``1 + inf j`` NaN, loses -0.0)
    return flax.complex(x[..., 0], x[..., 1])


@defop(out=False, method=False, samples=Sample(((3, 2),), grad=False, method=False))
def view_as_complex(input: Tensor) -> Tensor:
    """Pairs of floats (the last dimension, of size 2 and stride 1) seen as complex numbers."""
    npd = input._npdtype
    if npd not in (np.dtype(np.float32), np.dtype(np.float64)):
        # (PyTorch's message names half too; compat has no complex32 to view half pairs as)
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {_dt.scalar_type_name(npd)}"
        )
    shape, strides, offset = _views.layout_of(input)
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    cd = _complex_of(npd)
    out = apply(_view_as_complex_f, "ViewAsComplexBackward0", (input,), (("dtype", cd),))
    return _views.make_view(out, input, ("vc", cd))


def _angle_f(x: Any, *, dtype: np.dtype) -> Any:
    if x.dtype == np.complex64:
        # (in double, rounded once: XLA's and NumPy's float atan2 are up to 3 ulp from
        # PyTorch's, double's rounding is within 1 ulp and equal for ~98% of inputs)
        return _angle_f(x.astype(np.complex128), dtype=dtype).astype(np.float32)
    if _dt.kind(x.dtype) == "c":
        re, im = fnp.real(x), fnp.imag(x)
        # (PyTorch's gradient is 0 at 0: no NaN from atan2's derivative there)
        zero = (re == 0) & (im == 0)
        safe = fnp.arctan2(
            fnp.where(zero, fnp.zeros_like(im), im), fnp.where(zero, fnp.ones_like(re), re)
        )
        return fnp.where(zero, fnp.arctan2(stop_gradient(im), stop_gradient(re)), safe)
    x = x.astype(dtype)
    # PyTorch's real angle: pi below 0, else 0 (-0.0 included), NaN kept; gradient 0
    base = fnp.where(x < 0, fnp.full_like(x, np.pi), fnp.zeros_like(x))
    return stop_gradient(fnp.where(fnp.isnan(x), x, base))


@defop(samples=(Sample(((2, 3),), dtype="complex128", grad=False), Sample(((4,),))))
def angle(input: Tensor) -> Tensor:
    """The argument of each element: real for complex inputs; for real ones pi below zero
    and 0 otherwise (``-0.0`` too), NaN kept, integers in the default float dtype."""
    dtype = _dt.float_type(input._npdtype)
    return apply(_angle_f, "AngleBackward0", (input,), (("dtype", dtype),))


@defop(out=False, samples=(Sample(((2, 3),), dtype="complex128", grad=False), Sample(((3,),))))
def conj(input: Tensor) -> Tensor:
    """The conjugate as a view with the conjugate bit (``is_conj()``); the tensor itself
    for real dtypes."""
    if _dt.kind(input._npdtype) != "c":
        return input
    out = apply(_part_f, "ConjBackward0", (input,), (("op", "conj"),))
    return _views.make_view(out, input, ("cj",))


@defop(
    inplace=True,
    samples=(Sample(((2, 3),), dtype="complex128", grad=False), Sample(((3,),))),
)
def conj_physical(input: Tensor) -> Tensor:
    """The conjugate in new memory (no conjugate bit)."""
    if _dt.kind(input._npdtype) != "c":
        return input
    return apply(_part_f, "ConjPhysicalBackward0", (input,), (("op", "conj"),))


def conj_copy(input: Tensor) -> Tensor:
    """The conjugate as a new tensor recorded as ``ConjBackward0`` (no view, no bit): the
    engine's switch between gradient conventions under ``create_graph``."""
    if _dt.kind(input._npdtype) != "c":
        return input
    return apply(_part_f, "ConjBackward0", (input,), (("op", "conj"),))


def _neg_view(input: Tensor) -> Tensor:
    """``Tensor._neg_view()``: the negation as a view with the negative bit."""
    out = apply(fnp.negative, "NegViewBackward0", (input,))
    return _views.make_view(out, input, ("ng",))


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` with its conjugate bit resolved: a new tensor when it was set."""
    return input.clone() if _views.bits(input)[0] else input


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` with its negative bit resolved: a new tensor when it was set."""
    return input.clone() if _views.bits(input)[1] else input


def is_conj(input: Tensor) -> bool:
    """Whether ``input`` has the conjugate bit (a ``conj()`` view of a complex tensor)."""
    return _views.bits(input)[0]


def is_neg(input: Tensor) -> bool:
    """Whether ``input`` has the negative bit (``_neg_view()``, ``.imag`` of a conjugate)."""
    return _views.bits(input)[1]


#: PyTorch builds complex tensors from Half, Float or Double parts only
_NO_BF16_PAIR = (
    RuntimeError,
    "Expected both inputs to be Half, Float or Double tensors but got BFloat16 and BFloat16",
)


def _polar_f(r: Any, t: Any, *, dtype: np.dtype) -> Any:
    part = np.finfo(dtype).dtype  # (PyTorch's parts as they are: ``inf * cos(0)`` + NaN j)
    re, im = fnp.asarray(r * fnp.cos(t), part), fnp.asarray(r * fnp.sin(t), part)
    return flax.complex(*fnp.broadcast_arrays(re, im))


@defop(
    method=False,
    samples=Sample(((2, 3), (3,)), grad=False, method=False),
    bf16_error=_NO_BF16_PAIR,
)
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + 1j * sin(angle))`` of two tensors of one float dtype."""
    check_parts("polar", abs, angle, ("abs", "angle"))
    return apply(_polar_f, "PolarBackward0", (abs, angle), (("dtype", _complex_of(abs._npdtype)),))


# ----------------------------------------------------------------------- torch.fft

_FFT = {
    "module": "fft",
    "method": False,
    "node_name": False,
    "bf16_error": (RuntimeError, "Unsupported dtype BFloat16"),
}
_NORMS = (None, "backward", "ortho", "forward")


def _fft_f(x: Any, *, op: str, n: Any, axes: Any, norm: Any, dtype: np.dtype) -> Any:
    f = getattr(fnp.fft, op)
    x = _c(x, dtype)
    if op in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        return f(x, n=n, axis=axes, norm=norm)
    return f(x, s=n, axes=axes, norm=norm)


def _fft(op: str, input: Tensor, n: Any, dim: Any, norm: Any) -> Tensor:
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    real_in = op in ("rfft", "rfftn", "rfft2", "ihfft")
    if real_in and _dt.kind(input._npdtype) == "c":
        raise RuntimeError(f"{op} expects a real input tensor, but got {input.dtype}")
    dt = _dt.float_type(input._npdtype) if real_in else _complex_of(input._npdtype)
    if isinstance(dim, (tuple, list)):
        dim = tuple(_wrap_dim(d, input.ndim) for d in dim)
        n = tuple(n) if n is not None else None
    elif dim is not None:
        dim = _wrap_dim(dim, input.ndim)
    st = (("op", op), ("n", n), ("axes", dim), ("norm", norm), ("dtype", np.dtype(dt)))
    return apply(_fft_f, f"Fft{op.capitalize()}Backward0", (input,), st)


def _one_dim(op: str) -> Any:
    def f(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
        return _fft(op, input, n, dim, norm)

    f.__name__ = op
    f.__doc__ = f"``torch.fft.{op}`` along one dimension."
    samples = (
        Sample(((2, 4),), grad=False),
        Sample(((2, 4),), kwargs=(("n", 6), ("dim", 0), ("norm", "ortho")), grad=False),
    )
    return defop(op, samples=samples, **_FFT)(f)


def _n_dim(op: str, default_dim: Any) -> Any:
    def f(input: Tensor, s: Any = None, dim: Any = default_dim, norm: str | None = None) -> Tensor:
        if dim is None:
            dim = tuple(range(input.ndim)) if s is None else tuple(range(-len(s), 0))
        return _fft(op, input, s, tuple(dim), norm)

    f.__name__ = op
    f.__doc__ = f"``torch.fft.{op}`` over several dimensions."
    return defop(op, samples=Sample(((2, 3, 4),), grad=False), **_FFT)(f)


for _op in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    _one_dim(_op)
for _op in ("fft2", "ifft2", "rfft2", "irfft2"):
    _n_dim(_op, (-2, -1))
for _op in ("fftn", "ifftn", "rfftn", "irfftn"):
    _n_dim(_op, None)
del _op


#: the normalisation of the transform in the other direction (``hfftn`` is ``irfftn`` of
#: the conjugate with the scaling on the other side)
_SWAP_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _hermitian_f(x: Any, *, op: str, s: Any, axes: Any, norm: Any, dtype: np.dtype) -> Any:
    x = _c(x, dtype)
    if op.startswith("i"):  # ihfftn: the conjugate of rfftn
        return fnp.conj(fnp.fft.rfftn(x, s=s, axes=axes, norm=_SWAP_NORM[norm]))
    return fnp.fft.irfftn(fnp.conj(x), s=s, axes=axes, norm=_SWAP_NORM[norm])


def _hermitian_n(op: str, default_dim: Any) -> Any:
    def f(input: Tensor, s: Any = None, dim: Any = default_dim, norm: str | None = None) -> Tensor:
        if norm not in _NORMS:
            raise RuntimeError(f'Invalid normalization mode: "{norm}"')
        if dim is None:
            dim = tuple(range(input.ndim)) if s is None else tuple(range(-len(s), 0))
        dim = tuple(_wrap_dim(d, input.ndim) for d in dim)
        inverse = op.startswith("i")
        if inverse and _dt.kind(input._npdtype) == "c":
            name = _dt.scalar_type_name(input._npdtype)
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {name}")
        dt = _dt.float_type(input._npdtype) if inverse else _complex_of(input._npdtype)
        st = (("op", op), ("s", None if s is None else tuple(s)), ("axes", dim), ("norm", norm))
        return apply(_hermitian_f, "FftC2CBackward0", (input,), (*st, ("dtype", np.dtype(dt))))

    f.__name__ = op
    f.__doc__ = (
        f"``torch.fft.{op}``: the {'inverse ' if op.startswith('i') else ''}FFT of a "
        "Hermitian-symmetric signal over several dimensions (``irfftn``/``rfftn`` of the "
        "conjugate, the normalisation on the other side)."
    )
    return defop(op, samples=Sample(((2, 3, 4),), grad=False), **_FFT)(f)


for _op in ("hfft2", "ihfft2"):
    _hermitian_n(_op, (-2, -1))
for _op in ("hfftn", "ihfftn"):
    _hermitian_n(_op, None)
del _op


def _shift_f(x: Any, *, axes: Any, inverse: bool) -> Any:
    return (fnp.fft.ifftshift if inverse else fnp.fft.fftshift)(x, axes=axes)


def _shift(name: str, inverse: bool) -> Any:
    def f(input: Tensor, dim: Any = None) -> Tensor:
        if isinstance(dim, int):
            dim = (dim,)
        axes = None if dim is None else tuple(_wrap_dim(d, input.ndim) for d in dim)
        return apply(_shift_f, "RollBackward0", (input,), (("axes", axes), ("inverse", inverse)))

    f.__name__ = name
    shifts = {**_FFT, "bf16_error": None}  # a roll: PyTorch has it for bfloat16
    samples = (Sample(((3, 4),)), Sample(((3, 4),), args=(1,)))
    return defop(name, out=False, samples=samples, **shifts)(f)


_shift("fftshift", False)
_shift("ifftshift", True)


def _freq(name: str) -> Any:
    def f(
        n: int,
        d: float = 1.0,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
    ) -> Tensor:

        vals = (np.fft.fftfreq if name == "fftfreq" else np.fft.rfftfreq)(n, d)
        return tensor(vals, dtype=dtype or _dt.get_default_dtype(), requires_grad=requires_grad)

    f.__name__ = name
    text = "dtype {want} does not match dtype of out parameter ({got})"
    return defop(name, samples=Sample((), args=(5, 0.5), grad=False), dtype_out=text, **_FFT)(f)


_freq("fftfreq")
_freq("rfftfreq")
