"""The distributions' random draws (their other ops are compat's torch ops).

PyTorch's streams for ``normal_``/``uniform_``/``exponential_`` draws, and the
reparameterised gamma/Dirichlet draws (funcgrad.random's implicit gamma gradient), whose
seed comes from compat's global generator, so ``torch.manual_seed`` fixes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import rng as _rng
from compat._core.creation import default_generator, from_numpy
from compat._core.creation_rows import ones
from compat._core.ops import clamp, exp, softmax
from compat._core.ops.array_rows import cat
from compat._core.tensor import Tensor, apply
from funcgrad import random as frandom

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


def cauchy(shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """``empty(shape).cauchy_()`` draws (standard Cauchy, PyTorch's stream)."""
    return as_tensor(np.asarray(_rng.cauchy(default_generator, shape, 0.0, 1.0), dtype))


def as_tensor(a: np.ndarray) -> Tensor:
    """A NumPy draw as a tensor (a leaf without gradient); a 0-d draw stays 0-d (NumPy's
    ``ascontiguousarray`` would make it 1-d)."""
    a = np.asarray(a)
    return from_numpy(np.ascontiguousarray(a).reshape(a.shape))


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
