"""``funcgrad.image``: ``jax.image``'s resampling (``resize``, ``scale_and_translate``,
``ResizeMethod``) over ``funcgrad.numpy``, so it differentiates (in the image, the scale
and the translation), batches and compiles.

Resampling is separable: for each resampled dimension a weight matrix ``W``
(``input size x output size``) is built from the kernel, and the image is contracted
with it along that dimension. Pixels are half-centred: output pixel ``j`` samples the
input at ``s_j = (j + 1/2 - translation) / scale - 1/2``; input pixel ``i`` weighs
``k(|s_j - i| / max(1 / scale, 1))`` when antialiasing (the kernel widened to the output
pixel's footprint when shrinking), ``k(|s_j - i|)`` otherwise. Each column is normalised
to sum to one, and a sample outside the input (``s_j`` beyond half a pixel from it) gets
zero weight, except for ``"cubic-pytorch"`` without antialiasing, which repeats the edge
pixels (PyTorch's bicubic). ``"area"`` weighs each input pixel by its overlap with the
output pixel's footprint. ``"nearest"`` picks ``floor((j + 1/2) m / n)``.

    >>> import numpy as np
    >>> from funcgrad import image
    >>> image.resize(np.array([0.0, 1.0]), (4,), "linear")
    Array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core import dtypes
from funcgrad.numpy._core import aval, here

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

#: columns whose weights sum to less than this get no weight (as JAX: float32's eps x 1000)
_TINY_TOTAL = 1000.0 * float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """Image resampling methods (``jax.image.ResizeMethod``): nearest neighbour, linear,
    Lanczos of radius 3 and 5, Keys cubic, PyTorch's (OpenCV's) cubic, and area."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for (``"bilinear"``, ``"bicubic"``, ``"lanczos3"``...)."""
        for names, method in _NAMES:
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES = (
    (("nearest",), ResizeMethod.NEAREST),
    (("linear", "bilinear", "trilinear", "triangle"), ResizeMethod.LINEAR),
    (("lanczos3",), ResizeMethod.LANCZOS3),
    (("lanczos5",), ResizeMethod.LANCZOS5),
    (("cubic", "bicubic", "tricubic"), ResizeMethod.CUBIC),
    (("cubic-pytorch", "bicubic-pytorch"), ResizeMethod.CUBIC_PYTORCH),
    (("area",), ResizeMethod.AREA),
)


def _triangle(x: Any) -> Any:
    return fnp.maximum(0.0, 1.0 - x)


def _cubic(a: float) -> Callable[[Any], Any]:
    """Keys' cubic convolution kernel with parameter ``a`` (-0.5: Keys; -0.75: OpenCV's
    and PyTorch's), on ``x >= 0``."""

    def kernel(x: Any) -> Any:
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return fnp.where(x >= 2.0, 0.0, fnp.where(x >= 1.0, far, near))

    return kernel


def _lanczos(radius: float) -> Callable[[Any], Any]:
    """``sinc(x) sinc(x / radius)`` on ``x <= radius`` (``1`` near ``0``)."""

    def kernel(x: Any) -> Any:
        safe = fnp.where(x > 1e-3, x, 1.0)
        y = radius * fnp.sin(np.pi * safe) * fnp.sin(np.pi * safe / radius) / (np.pi**2 * safe**2)
        return fnp.where(x > radius, 0.0, fnp.where(x > 1e-3, y, 1.0))

    return kernel


#: method -> (the kernel's radius, the kernel; ``None``: area weights)
_KERNELS: dict[ResizeMethod, tuple[int, Callable[[Any], Any] | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, None),
}


def _normalise(w: Any) -> Any:
    """Columns scaled to sum to one; a column summing to (nearly) nothing, zero."""
    total = fnp.sum(w, axis=0, keepdims=True)
    safe = fnp.where(total != 0, total, 1.0)
    return fnp.where(fnp.abs(total) > _TINY_TOTAL, w / safe, 0.0)


def _weights(
    m: int, n: int, scale: Any, translation: Any, method: ResizeMethod, antialias: bool
) -> Any:
    """The ``m x n`` weight matrix of one resampled dimension (see the module docstring)."""
    radius, kernel = _KERNELS[method]
    dt = aval(scale).dtype
    inv = 1.0 / scale
    j = fnp.arange(n, dtype=dt)
    sample = (j + 0.5) * inv - translation * inv - 0.5
    edges = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    pad = radius if edges else 0
    i = fnp.arange(-pad, m + pad, dtype=dt)
    if kernel is None:  # area: the overlap of [i, i + 1) with the output pixel's footprint
        left = j * inv - translation * inv
        w = fnp.minimum(left + inv, i[:, None] + 1.0) - fnp.maximum(left, i[:, None])
        w = fnp.maximum(0.0, w)
    else:
        widen = fnp.maximum(inv, 1.0) if antialias else 1.0
        w = kernel(fnp.abs(sample[None, :] - i[:, None]) / widen)
    if edges:  # rows beyond the edges fold onto the edge pixels
        rows = np.clip(np.arange(-pad, m + pad), 0, m - 1)
        fold = (rows[:, None] == np.arange(m)[None, :]).astype(dt)
        return _normalise(fnp.matmul(fold.T, w, precision="highest"))
    w = _normalise(w)
    inside = (sample >= -0.5) & (sample <= m - 0.5)
    return fnp.where(inside[None, :], w, 0.0)


def _resample(
    x: Any,
    shape: tuple[int, ...],
    dims: Sequence[int],
    scale: Sequence[Any],
    translation: Sequence[Any],
    method: ResizeMethod,
    antialias: bool,
    precision: Any,
) -> Any:
    for d, s, t in zip(dims, scale, translation):
        w = _weights(aval(x).shape[d], shape[d], s, t, method, antialias).astype(aval(x).dtype)
        x = fnp.moveaxis(fnp.tensordot(x, w, axes=([d], [0]), precision=precision), -1, d)
    return x


def _method(method: str | ResizeMethod) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a string or a ResizeMethod, got {method!r}")
    return method


def _shape(shape: Any, image: Any) -> tuple[int, ...]:
    """The output shape as Python ints (an integer sequence or array; not fractions)."""
    try:
        out = tuple(operator.index(int(s) if isinstance(s, np.integer) else s) for s in shape)
    except TypeError:
        try:
            arr = np.asarray(shape)
        except Exception as e:  # a traced shape
            raise TypeError(f"shape must be a sequence of integers, got {shape!r}{here()}") from e
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise TypeError(
                f"shape must be a sequence of integers, got {shape!r}{here()}"
            ) from None
        out = tuple(int(s) for s in arr)
    if len(out) != aval(image).ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {out} vs {aval(image).shape}"
        )
    return out


def _inexact(x: Any) -> Any:
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, fnp.inexact) else x.astype(fnp.float32)


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = "highest",
) -> Any:
    """Resample ``image`` to ``shape``, mapping input location ``x`` of each dimension in
    ``spatial_dims`` to ``x * scale + translation`` (an output pixel sampling outside
    the input is zero). ``scale`` and ``translation`` may be traced (and differentiated)."""
    shape = _shape(shape, image)
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    if m is ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    image = _inexact(image)
    scale, translation = fnp.asarray(scale), fnp.asarray(translation)
    dt = fnp.result_type(scale, translation)
    dt = dt if fnp.issubdtype(dt, fnp.inexact) else dtypes.default_dtype(2)
    scale, translation = scale.astype(dt), translation.astype(dt)
    nd = aval(image).ndim
    dims = [d + nd if d < 0 else d for d in spatial_dims]
    if any(not 0 <= d < nd for d in dims):
        raise ValueError(f"spatial_dims {tuple(spatial_dims)} out of range for {nd} dimensions")
    if len(dims) != aval(scale).shape[0] or len(dims) != aval(translation).shape[0]:
        raise ValueError(
            f"scale and translation need one entry per spatial dimension ({len(dims)}), got "
            f"{aval(scale).shape} and {aval(translation).shape}"
        )
    scales = [scale[k] for k in range(len(dims))]
    shifts = [translation[k] for k in range(len(dims))]
    return _resample(image, shape, dims, scales, shifts, m, antialias, precision)


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    for d, (m, n) in enumerate(zip(aval(x).shape, shape)):
        if m != n:
            picks = np.floor((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n))
            x = fnp.take(x, picks.astype(np.int32), axis=d)
    return x


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = "highest",
) -> Any:
    """Resample ``image`` to ``shape`` (every dimension whose size changes is resampled:
    a batch or channel dimension keeps its size). ``"nearest"`` keeps the dtype; the
    other methods promote to a floating dtype."""
    shape = _shape(shape, image)
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(fnp.asarray(image), shape)
    if m is ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    image = _inexact(image)
    dims = [d for d, (a, b) in enumerate(zip(aval(image).shape, shape)) if a != b]
    # (Python floats: the default float dtype, as JAX's weakly typed scales)
    sizes = [(aval(image).shape[d], shape[d]) for d in dims]
    dt = dtypes.default_dtype(2)
    scales = [fnp.asarray(1.0 if n == 0 else n / m, dt) for m, n in sizes]
    shifts = [fnp.asarray(0.0, dt) for _ in dims]
    return _resample(image, shape, dims, scales, shifts, m, antialias, precision)
