"""Matrix building blocks of the decompositions' derivative rules (``decomp``, ``eig``),
made of primitives only: triangles and identities as selects of constant masks,
batched products as ``dot_general``, diagonals as strided slices, transposes,
conjugates and the Hermitian constructions LAPACK kernels read."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from funcgrad.core.interp import to_aval
from funcgrad.core.ir import Aval
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import linalg, rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.elementwise import convert_element_type

_LAPACK = {np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")}
_HALF = {np.dtype("float16"), np.dtype(ml_dtypes.bfloat16)}


def _bcast(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast (NumPy's rules: trailing axes align) to ``shape``."""
    xs = to_aval(x).shape
    if xs == tuple(shape):
        return x
    return sh.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def _keep(x: Any, mask: np.ndarray) -> Any:
    """``x`` where the (matrix) ``mask`` holds, ``0`` elsewhere (a select, so infinities
    outside the mask do not become NaN)."""
    av = to_aval(x)
    zero = sh.full(av.shape, 0, av.dtype)
    return ew.select_n(_bcast(mask, av.shape), zero, x)


def _tril(x: Any, k: int = 0) -> Any:
    m, n = to_aval(x).shape[-2:]
    return _keep(x, np.tri(m, n, k, dtype=bool))


def _triu(x: Any, k: int = 0) -> Any:
    m, n = to_aval(x).shape[-2:]
    return _keep(x, ~np.tri(m, n, k - 1, dtype=bool))


def _eye(n: int, m: int | None = None, *, dtype: np.dtype) -> np.ndarray:
    return np.eye(n, m, dtype=dtype)


def _check_matrix(name: str, x: Aval, square: bool = True) -> None:
    if x.dtype in _HALF:  # (JAX's CPU kernels: LAPACK has no half-precision routines)
        raise NotImplementedError(
            f"Unsupported dtype {x.dtype}: {name} requires a float32, float64, complex64 or "
            f"complex128 operand, got {x}"
        )
    if x.dtype not in _LAPACK:
        raise TypeError(
            f"{name} requires a float32, float64, complex64 or complex128 operand, got {x}"
        )
    if x.ndim < 2:
        raise ValueError(f"{name} requires a matrix (or a stack of them), got {x}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} requires square matrices in its last two axes, got {x}")


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.finfo(dtype).dtype)


def _is_complex(x: Any) -> bool:
    return to_aval(x).dtype.kind == "c"


def _real(x: Any) -> Any:
    return ew.real(x) if _is_complex(x) else x


def _T(x: Any) -> Any:
    nd = to_aval(x).ndim
    return sh.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _conj(x: Any) -> Any:
    return ew.conj(x) if _is_complex(x) else x


def _H(x: Any) -> Any:
    return _T(_conj(x))


def _mm(a: Any, b: Any) -> Any:
    """Matrix product of two stacks (batch dimensions broadcast, dtypes joined)."""
    aa, ba = to_aval(a), to_aval(b)
    dt = np.result_type(aa.dtype, ba.dtype)
    batch = np.broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
    a = _bcast(_as(a, dt), (*batch, *aa.shape[-2:]))
    b = _bcast(_as(b, dt), (*batch, *ba.shape[-2:]))
    nb = len(batch)
    return linalg.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def _as(x: Any, dtype: np.dtype) -> Any:

    return x if to_aval(x).dtype == dtype else convert_element_type(x, dtype)


def _diag(x: Any) -> Any:
    """The main diagonals of a stack of matrices: a strided slice of the flattened
    matrices (element ``i`` of the diagonal is element ``i * (n + 1)``)."""
    *batch, m, n = to_aval(x).shape
    k = min(m, n)
    flat = sh.reshape(x, (*batch, m * n))
    if k == 0:
        return sh.slice(flat, (0,) * (len(batch) + 1), (*batch, 0))
    z = (0,) * len(batch)
    return sh.slice(flat, (*z, 0), (*batch, (k - 1) * (n + 1) + 1), (*(1,) * len(batch), n + 1))


def _embed(d: Any, dtype: np.dtype) -> Any:
    """A diagonal matrix (stack) with diagonal ``d`` (as ``dtype``)."""
    n = to_aval(d).shape[-1]
    return _as(d, dtype)[..., None] * _eye(n, dtype=dtype)


def _real_diag_part(x: Any) -> Any:
    """``diag(Re(diag(x)))``: the real diagonal of ``x`` as a matrix of ``x``'s dtype."""
    return _embed(ew.real(_diag(x)) if _is_complex(x) else _diag(x), to_aval(x).dtype)


def _ct(ct: Any, x: Any) -> Any:
    return rules.instantiate(ct, to_aval(x).strip_weak())


def _hermitian_from(x: Any, lower: bool) -> Any:
    """``E(x)``: the Hermitian matrix a LAPACK kernel reads from ``x``'s lower (upper)
    triangle: the strict triangle, its conjugate transpose and the real diagonal."""
    tri = _tril(x, -1) if lower else _triu(x, 1)
    return tri + _H(tri) + _real_diag_part(x)


def _hermitian_from_adjoint(g: Any, lower: bool) -> Any:
    """The (Hermitian-pairing) adjoint of :func:`_hermitian_from`."""
    s = g + _H(g)
    tri = _tril(s, -1) if lower else _triu(s, 1)
    return tri + _real_diag_part(g)


def _pairing_adjoint(adj: Any, *cts: Any) -> Any:
    """funcgrad's cotangent (pairing ``Re(sum(a * b))``) from a Hermitian adjoint ``adj``:
    ``conj(adj(conj(ct)))``; for real operands just ``adj(ct)``."""
    res = adj(*(_conj(c) for c in cts))
    return _conj(res)
