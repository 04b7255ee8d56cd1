"""``torch.linalg.eig``/``eigvals`` (general, non-symmetric matrices), the older
top-level ``torch.cholesky`` and ``torch.triangular_solve``, and the Householder
functions (``linalg.householder_product``, ``torch.orgqr``, ``torch.geqrf``,
``torch.ormqr``, funcgrad's composites in ``funcgrad/lax/_householder.py``): rows of the
op table.

``eig`` binds funcgrad's ``eig`` primitive (``funcgrad.lax.linalg.eig``, LAPACK's
``geev`` as PyTorch's CPU kernel): eigenvalues and eigenvectors are always complex, the
eigenvectors of unit norm. The gradient is funcgrad's rule with eigenvector derivatives
enabled (under ``geev``'s normalisation); as PyTorch, a loss that depends on the
eigenvectors' phases is rejected in backward (a hook on the eigenvectors checks
``Im(diag(V^H gV)) ~ 0``, PyTorch's test).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.grad_mode import is_grad_enabled, no_grad
from compat._core.ops._common import warn_once
from compat._core.ops.linalg_info import _check_info, _not_pd_msg, cholesky_info
from compat._core.ops.linalg_ns import _square
from compat._core.optable import LINALG_ROW, SPD, Sample, defop, no_bf16_kernel
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad.lax import linalg as flax
from funcgrad.numpy import linalg as fla
from funcgrad.scipy import linalg as fsl

EIG = return_type("linalg_eig", "eigenvalues eigenvectors")
TRIANGULAR_SOLVE = return_type("triangular_solve", "solution cloned_coefficient")

_PHASE_MSG = (
    "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
    "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
    "so it is ill-defined."
)


def eig_gauge(out: Any) -> tuple:
    """Order-, phase- and sign-free functions of ``(eigenvalues, eigenvectors)``, as real
    tensors: the power sums of the eigenvalues and ``|V|^2 w``, ``|V|^2 w^2``."""
    w, v = out
    p = v.abs() ** 2
    parts = []
    for k in (1, 2, 3):
        parts.append((w**k).sum(-1))
    parts.append((p * w.unsqueeze(-2)).sum(-1))
    parts.append((p * (w * w).unsqueeze(-2)).sum(-1))
    return tuple(x for c in parts for x in (c.real, c.imag))


def _eigvals_gauge(w: Any) -> tuple:
    return tuple(x for k in (1, 2, 3) for x in ((w**k).sum(-1).real, (w**k).sum(-1).imag))


def _eig_check(A: Tensor, name: str) -> None:
    dt = A._npdtype
    if _dt.kind(dt) not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_dt.scalar_type_name(dt)}")
    if dt == _dt.float16.np:
        raise NotImplementedError("\"linalg_eig_out_cpu\" not implemented for 'Half'")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    _square(A, name)


def _eig_f(a: Any, *, vectors: bool) -> Any:
    if not vectors:
        return flax.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]
    w, v = flax.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


def _phase_check(v: Tensor) -> Callable[[Tensor], None]:
    """PyTorch's test that the loss does not depend on the eigenvectors' phases."""

    def check(grad: Tensor) -> None:
        with no_grad():
            d = (v.mH @ grad).diagonal(0, -2, -1).imag
            if not bool((d.abs() <= 1e-2).all()):
                raise RuntimeError(_PHASE_MSG)

    return check


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),)), Sample(((3, 3),), dtype="complex128")),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_eig_out_cpu"),
    gauge=eig_gauge,
)
def eig(A: Tensor) -> tuple:
    """``(eigenvalues, eigenvectors)`` of a general square matrix, both complex, with
    ``A = V diag(eigenvalues) V^-1`` and unit-norm eigenvector columns."""
    _eig_check(A, "eig")
    w, v = apply(_eig_f, "LinalgEigBackward0", (A,), (("vectors", True),))
    if v.requires_grad:
        v.register_hook(_phase_check(v.detach()))
    return EIG(w, v)


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),), dtype="complex128")),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_eig_out_cpu"),
    gauge=_eigvals_gauge,
)
def eigvals(A: Tensor) -> Tensor:
    """The (complex) eigenvalues of a general square matrix, in ``eig``'s order."""
    _eig_check(A, "eigvals")
    return apply(_eig_f, "LinalgEigBackward0", (A,), (("vectors", False),))


# ------------------------------------------------------------------ torch.cholesky


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive "
    "definite) inputs."
)


@defop(
    samples=(Sample((SPD(3),)), Sample((SPD(3),), args=(True,))),
    node_name=False,
    bf16_error=no_bf16_kernel("cholesky_cpu"),
)
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated): ``torch.linalg.cholesky(input, upper=upper)``,
    with ``cholesky:`` in its error messages."""
    warn_once("torch.cholesky", _CHOLESKY_DEPRECATED)
    _kernel_dtype(input, "cholesky_cpu")
    if input.ndim < 2:
        raise RuntimeError("cholesky: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(_not_square("cholesky: ", input))
    lo, info = cholesky_info(input)
    _check_info(info, "cholesky", _not_pd_msg)
    return lo.mT.conj() if upper else lo


def _kernel_dtype(t: Tensor, kernel: str) -> None:
    if _dt.kind(t._npdtype) not in "fc":
        name = _dt.scalar_type_name(t._npdtype)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _not_square(prefix: str, a: Tensor) -> str:
    return (
        f"{prefix}A must be batches of square matrices, but they are "
        f"{a.shape[-2]} by {a.shape[-1]} matrices"
    )


# ------------------------------------------------------------------ torch.triangular_solve

_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
    "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
    "arguments reversed and does not return a copy of one of the inputs.\n"
    "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B)."
)


def _tri_solve_f(b: Any, a: Any, *, upper: bool, trans: bool, unit: bool) -> Any:
    a = fnp.triu(a) if upper else fnp.tril(a)
    return fsl.solve_triangular(a, b, trans=1 if trans else 0, lower=not upper, unit_diagonal=unit)


@defop(
    samples=(
        Sample(((3, 2), (3, 3)), domain=(0.5, 2)),
        Sample(((3, 2), (3, 3)), args=(False, True), domain=(0.5, 2)),
        Sample(((2, 3, 1), (2, 3, 3)), kwargs=(("unitriangular", True),), domain=(0.5, 2)),
    ),
    node_name=False,
    bf16_error=no_bf16_kernel("triangular_solve_cpu"),
)
def triangular_solve(
    input: Tensor,
    A: Tensor,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
) -> tuple:
    """``torch.triangular_solve`` (deprecated): ``(X, A.clone())`` with ``op(A) X = input``
    for the ``upper`` (or lower) triangle of ``A`` (``op``: transpose if ``transpose``)."""
    warn_once("torch.triangular_solve", _TRIANGULAR_SOLVE_DEPRECATED)
    for what, t in (("b", input), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(
                f"torch.triangular_solve: Expected {what} to have at least 2 dimensions, but "
                f"it has {t.ndim} dimensions instead"
            )
    if input._npdtype != A._npdtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_dt.scalar_type_name(input._npdtype)} and A of type "
            f"{_dt.scalar_type_name(A._npdtype)} instead."
        )
    _kernel_dtype(A, "triangular_solve_cpu")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(_not_square("", A))
    if input.shape[-2] != A.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-2]} "
            f"by {A.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}"
        )
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    b = input.expand(*batch, *input.shape[-2:])
    a = A.expand(*batch, *A.shape[-2:])
    st = (("upper", bool(upper)), ("trans", bool(transpose)), ("unit", bool(unitriangular)))
    x = apply(_tri_solve_f, "TriangularSolveBackward0", (b, a), st)
    return TRIANGULAR_SOLVE(x, a.clone())


# ------------------------------------------------------------------ Householder (issue 15)

GEQRF = return_type("geqrf", "a tau")


def _hh_check(A: Tensor, tau: Tensor, name: str, kernel: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    _kernel_dtype(A, kernel)
    if tau._npdtype != A._npdtype:
        raise RuntimeError(
            f"{name}: tau dtype {_dt.scalar_type_name(tau._npdtype)} does not match input "
            f"dtype {_dt.scalar_type_name(A._npdtype)}"
        )
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got {list(tau.shape[:-1])}"
        )


def _householder_f(a: Any, tau: Any) -> Any:
    return flax.householder_product(a, tau)


def _householder(A: Tensor, tau: Tensor, name: str) -> Tensor:
    _hh_check(A, tau, name, "orgqr_cpu")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    return apply(_householder_f, "LinalgHouseholderProductBackward0", (A, tau))


_HH_SAMPLES = (
    Sample(((4, 3), (3,)), domain=(-1, 1)),
    Sample(((2, 3, 3), (2, 2)), domain=(-1, 1)),
    Sample(((3, 2), (2,)), domain=(-1, 1), dtype="complex128"),
)


@defop(samples=_HH_SAMPLES, **LINALG_ROW, bf16_error=no_bf16_kernel("orgqr_cpu"))
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with
    ``v_i`` stored below ``A``'s diagonal (LAPACK's ``orgqr``)."""
    return _householder(A, tau, "torch.linalg.householder_product")


@defop(samples=_HH_SAMPLES[:1], node_name=False, bf16_error=no_bf16_kernel("orgqr_cpu"))
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr``: ``torch.linalg.householder_product``."""
    return _householder(input, input2, "torch.linalg.householder_product")


def _geqrf_f(a: Any) -> Any:
    h, tau = fla.qr(a, mode="raw")
    return fnp.swapaxes(h, -1, -2), tau


def _no_derivative(name: str) -> Callable[[Tensor], None]:
    def hook(grad: Tensor) -> None:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return hook


@defop(
    samples=(Sample(((4, 3),), grad=False), Sample(((2, 3, 4),), grad=False)),
    node_name=False,
    bf16_error=no_bf16_kernel("geqrf_cpu"),
)
def geqrf(input: Tensor) -> tuple:
    """``(a, tau)``: LAPACK's ``geqrf``, ``R`` on and above ``a``'s diagonal and the
    Householder vectors below it. Not differentiable (as in PyTorch: backward raises)."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _kernel_dtype(input, "geqrf_cpu")
    if input.requires_grad and is_grad_enabled() and _dt.kind(input._npdtype) == "c":
        raise RuntimeError(
            "geqrf does not support automatic differentiation for outputs with complex dtype."
        )
    out = GEQRF(*apply(_geqrf_f, "GeqrfBackward0", (input,)))
    for t in out:
        if t.requires_grad:
            t.register_hook(_no_derivative("geqrf"))
    return out


def _ormqr_f(a: Any, tau: Any, c: Any, *, left: bool, transpose: bool) -> Any:
    return flax.ormqr(a, tau, c, left=left, transpose=transpose)


@defop(
    samples=(
        Sample(((4, 3), (3,), (4, 2)), domain=(-1, 1)),
        Sample(((3, 3), (3,), (2, 3)), args=(False, True), domain=(-1, 1)),
        Sample(((2, 3, 2), (2, 2), (2, 3, 3)), kwargs=(("transpose", True),), domain=(-1, 1)),
    ),
    node_name=False,
    bf16_error=no_bf16_kernel("ormqr_cpu"),
)
def ormqr(
    input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """``op(Q) C`` (``left``) or ``C op(Q)`` for ``Q`` of the Householder reflectors
    ``(input, input2)`` and ``C = input3`` (``op``: conjugate transpose if ``transpose``)."""
    _hh_check(input, input2, "torch.ormqr", "ormqr_cpu")
    if input3._npdtype != input._npdtype:
        raise RuntimeError(
            "torch.ormqr: Expected input and other to have the same dtype, but input has dtype"
            f"{_dt.scalar_type_name(input._npdtype)} and other has dtype "
            f"{_dt.scalar_type_name(input3._npdtype)}"
        )
    ax = -2 if left else -1
    if input3.ndim < 2 or input3.shape[ax] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{ax}] must be equal to input.shape[-2]")
    if input2.shape[-1] != min(input3.shape[ax], input.shape[-1]):
        raise RuntimeError(
            f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{ax}], input.shape[-1])"
        )
    st = (("left", bool(left)), ("transpose", bool(transpose)))
    return apply(_ormqr_f, "OrmqrBackward0", (input, input2, input3), st)
