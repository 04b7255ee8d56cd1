"""The few ops the distributions need that compat's core lacks, and their random draws.

Each op is a pure function of arrays (``funcgrad.numpy``, ``funcgrad.scipy``) applied
through compat's ``apply``, so its gradient is funcgrad's VJP like every other torch op:
special functions (``lgamma``, ``digamma``, ``erfinv``, ``xlogy``, ``softplus``), the
matrix pieces of the multivariate normal (Cholesky factor, triangular solves) and the
reparameterised gamma/Dirichlet draws (funcgrad.random's implicit gamma gradient).
Draws take their seed from compat's global generator, so ``torch.manual_seed`` fixes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import rng as _rng
from compat._core.creation import default_generator, from_numpy, ones
from compat._core.ops import clamp, exp, softmax
from compat._core.shape_ops import cat
from compat._core.tensor import Tensor, apply
from funcgrad import nn as fnn
from funcgrad import numpy as fnp
from funcgrad import random as frandom
from funcgrad.scipy import linalg as fsl
from funcgrad.scipy import special as fsp


def _float(*xs: Any) -> np.dtype:
    return _dt.float_type(_dt.result_type(*xs))


def _c(x: Any, dt: np.dtype) -> Any:
    return fnp.asarray(x, dt)


# --------------------------------------------------------------------------- special functions


def _lgamma_f(x: Any, *, dtype: np.dtype) -> Any:
    return fsp.gammaln(_c(x, dtype))


def _digamma_f(x: Any, *, dtype: np.dtype) -> Any:
    return fsp.digamma(_c(x, dtype))


def _erfinv_f(x: Any, *, dtype: np.dtype) -> Any:
    return fsp.erfinv(_c(x, dtype))


def _softplus_f(x: Any, *, dtype: np.dtype) -> Any:
    return fnn.softplus(_c(x, dtype))


def _xlogy_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    shape = np.broadcast_shapes(x.shape, y.shape)
    x, y = fnp.broadcast_to(_c(x, dtype), shape), fnp.broadcast_to(_c(y, dtype), shape)
    return fsp.xlogy(x, y)


def lgamma(x: Tensor) -> Tensor:
    """``log |Gamma(x)|``."""
    return apply(_lgamma_f, "LgammaBackward0", (x,), (("dtype", _float(x)),))


def digamma(x: Tensor) -> Tensor:
    """``d/dx log Gamma(x)``."""
    return apply(_digamma_f, "DigammaBackward0", (x,), (("dtype", _float(x)),))


def erfinv(x: Tensor) -> Tensor:
    """Inverse error function."""
    return apply(_erfinv_f, "ErfinvBackward0", (x,), (("dtype", _float(x)),))


def softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` without overflow."""
    return apply(_softplus_f, "SoftplusBackward0", (x,), (("dtype", _float(x)),))


def xlogy(x: Any, y: Any) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0``."""
    return apply(_xlogy_f, "XlogyBackward0", (x, y), (("dtype", _float(x, y)),))


def _gammainc_f(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    return fsp.gammainc(_c(a, dtype), _c(x, dtype))


def gammainc(a: Any, x: Any) -> Tensor:
    """Regularised lower incomplete gamma function ``P(a, x)``."""
    return apply(_gammainc_f, "IgammaBackward0", (a, x), (("dtype", _float(a, x)),))


def _bce_logits_f(z: Any, y: Any, *, dtype: np.dtype) -> Any:
    z, y = _c(z, dtype), _c(y, dtype)
    return fnp.maximum(z, 0) - z * y + fnp.log1p(fnp.exp(-fnp.abs(z)))


def bce_with_logits(logits: Tensor, target: Any) -> Tensor:
    """Elementwise binary cross entropy of ``target`` against ``sigmoid(logits)``."""
    dt = _float(logits, target)
    return apply(
        _bce_logits_f, "BinaryCrossEntropyWithLogitsBackward0", (logits, target), (("dtype", dt),)
    )


# --------------------------------------------------------------------------- matrices


def _cholesky_f(a: Any) -> Any:
    return fnp.linalg.cholesky(a)


def cholesky(a: Tensor) -> Tensor:
    """Lower Cholesky factor of a batch of positive-definite matrices."""
    return apply(_cholesky_f, "LinalgCholeskyExBackward0", (a,))


def _inv_f(a: Any) -> Any:
    return fnp.linalg.inv(a)


def inverse(a: Tensor) -> Tensor:
    """Batched matrix inverse."""
    return apply(_inv_f, "LinalgInvExBackward0", (a,))


def _tri_solve_f(lower: Any, b: Any, *, left: bool) -> Any:
    """``L^-1 b`` for lower-triangular ``L``, batch dimensions broadcast."""
    n = lower.shape[-1]
    batch = np.broadcast_shapes(lower.shape[:-2], b.shape[:-2])
    lo = fnp.broadcast_to(lower, (*batch, n, n))
    rhs = fnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    return fsl.solve_triangular(lo, rhs, lower=left)


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """``lower^-1 @ b`` (``b`` has shape ``(..., n, k)``)."""
    return apply(_tri_solve_f, "LinalgSolveTriangularBackward0", (lower, b), (("left", True),))


def _diagonal_f(a: Any) -> Any:
    return fnp.diagonal(a, axis1=-2, axis2=-1)


def diagonal(a: Tensor) -> Tensor:
    """The diagonals of a batch of matrices (last two dimensions)."""
    return apply(_diagonal_f, "DiagonalBackward0", (a,))


def _eigvalsh_f(a: Any) -> Any:
    return fnp.linalg.eigvalsh(a)


def eigvalsh(a: Tensor) -> Tensor:
    """Eigenvalues of a batch of symmetric matrices (ascending)."""
    return apply(_eigvalsh_f, "LinalgEighBackward0", (a,))


# --------------------------------------------------------------------------- random draws


def rng() -> np.random.Generator:
    """A NumPy generator seeded from one draw of compat's global generator, so
    ``torch.manual_seed`` makes samples reproducible (they are not PyTorch's values)."""
    return default_generator.numpy()


def _key() -> np.ndarray:
    return rng().integers(0, 2**32, size=2, dtype=np.uint32)


def standard_normal(shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """Standard normal draws of ``shape`` (PyTorch's ``normal_()`` stream)."""
    return as_tensor(_rng.normal(default_generator, shape, dtype))


def uniform(shape: tuple[int, ...], dtype: np.dtype, low: float = 0.0, high: float = 1.0) -> Tensor:
    """``empty(shape).uniform_(low, high)`` draws (PyTorch's stream)."""
    return as_tensor(_rng.uniform(default_generator, shape, dtype, low, high))


def exponential(shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """``empty(shape).exponential_()`` draws (PyTorch's stream)."""
    return as_tensor(np.asarray(_rng.exponential(default_generator, shape, 1.0), dtype))


def as_tensor(a: np.ndarray) -> Tensor:
    """A NumPy draw as a tensor (a leaf without gradient)."""
    return from_numpy(np.ascontiguousarray(a))


def _bucket(n: int) -> int:
    """Draw sizes are rounded up to powers of 4, at least 4**7: one compiled sampler (whose
    compilation takes seconds) serves every shape in a bucket; drawing is cheap."""
    b = 4**7
    while b < n:
        b *= 4
    return b


def _log_gamma_f(key: Any, conc: Any) -> Any:
    return frandom.loggamma(key, conc, dtype=conc.dtype)


def log_standard_gamma(conc: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Logs of Gamma(``conc``, 1) draws of ``shape`` (accurate for small ``conc``),
    differentiable in ``conc`` through funcgrad.random's implicit gamma gradient."""
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    b = _bucket(n)
    flat = conc.expand(shape).reshape(-1)
    if b > n:
        flat = cat([flat, ones(b - n, dtype=conc.dtype)])
    out = apply(_log_gamma_f, "StandardGammaBackward0", (_key(), flat))
    return out[:n].reshape(shape)


def standard_gamma(conc: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Gamma(``conc``, 1) draws of ``shape``, differentiable in ``conc``."""
    tiny = float(np.finfo(conc._npdtype).tiny)
    return clamp(exp(log_standard_gamma(conc, shape)), min=tiny)


def dirichlet(conc: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Dirichlet(``conc``) draws of ``shape`` (last axis the event), differentiable:
    normalised gamma draws, computed from their logs."""
    tiny = float(np.finfo(conc._npdtype).tiny)
    return clamp(softmax(log_standard_gamma(conc, shape), -1), min=tiny)
