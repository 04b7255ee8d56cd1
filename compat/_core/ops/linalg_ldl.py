"""``torch.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve`` (issue 15).

PyTorch returns LAPACK's ``sytrf``/``hetrf`` output for ``uplo='L'``: the compact ``LD``
matrix (unit lower ``L`` below the diagonal, the block-diagonal ``D`` on the diagonal
and first subdiagonal) and 1-based pivots, negative for the two rows of a 2 x 2 block.
:func:`ldl_kernel` is LAPACK's unblocked Bunch-Kaufman partial pivoting (``dsytf2``,
``zsytf2``, ``zhetf2``, lower variant, ``alpha = (1 + sqrt(17)) / 8``) written over
funcgrad arrays: a ``fori_loop`` over the columns whose state is the matrix with the
trailing Schur complement kept whole (both triangles), so that each symmetric
interchange is one gather; pivot choices, interchanges and updates are made in LAPACK's
order, so ``LD`` and the pivots agree with PyTorch's. :func:`ldl_solve_kernel` is
``sytrs``/``hetrs``: the interchanges, the unit-``L`` solves and the 1 x 1 / 2 x 2 block
solves, in the same interleaved order. Batches are ``vmap``-ped.

Neither function is differentiable in PyTorch: backward through them raises its
``RuntimeError``. Here the kernels stop gradients and a hook on the float output raises
that error in backward; under funcgrad transforms (``torch.func``) the kernels run
behind a ``custom_vjp`` whose backward raises it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.grad_mode import is_grad_enabled
from compat._core.ops.linalg_ns import _square
from compat._core.optable import LINALG_ROW, Sample, defop, no_bf16_kernel
from compat._core.out_arg import with_out, write_out
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, apply
from compat._core.tensor_checks import _infer_size
from funcgrad import custom_vjp, fori_loop, stop_gradient, vmap
from funcgrad import numpy as fnp
from funcgrad._compat_contract import is_tracing

LDL_FACTOR = return_type("linalg_ldl_factor", "LD pivots")
LDL_FACTOR_EX = return_type("linalg_ldl_factor_ex", "LD pivots info")


# ------------------------------------------------------------------ the kernels


def _abs1(x: Any) -> Any:
    """LAPACK's ``|x|`` for pivot search: ``|re| + |im|`` (``cabs1``) for complex."""
    if fnp.iscomplexobj(x):
        return fnp.abs(fnp.real(x)) + fnp.abs(fnp.imag(x))
    return fnp.abs(x)


def _conj(x: Any, herm: bool) -> Any:
    return fnp.conj(x) if herm else x


def _alpha(dtype: Any) -> Any:
    """``(1 + sqrt(17)) / 8`` computed in the real dtype, as LAPACK does."""
    r = np.finfo(dtype).dtype.type
    return r((r(1) + np.sqrt(r(17))) / r(8))


def _ldl_one(a: Any, *, herm: bool) -> tuple:
    """``(LD, pivots, info)`` of one ``n x n`` matrix read from its lower triangle."""
    n = a.shape[-1]
    idx = fnp.arange(n)
    row, col = idx[:, None], idx[None, :]
    lower = row >= col
    diag = row == col
    alpha = _alpha(a.dtype)
    cplx = fnp.iscomplexobj(a)

    def absd(x: Any) -> Any:  # |diagonal entry|: its real part for Hermitian matrices
        return fnp.abs(fnp.real(x)) if herm else _abs1(x)

    def whole(w: Any) -> Any:  # both triangles from the lower one (real diagonal if herm)
        w = fnp.where(lower, w, _conj(fnp.swapaxes(w, 0, 1), herm))
        if herm and cplx:
            w = fnp.where(diag, fnp.real(w).astype(w.dtype), w)
        return w

    def update(w: Any, k: Any, two: Any) -> Any:
        """Eliminate the pivot block at ``k`` (1 x 1, or 2 x 2 where ``two``): LAPACK's
        ``xSYR``/``xHER`` and scaling of ``L``'s column, or its explicit rank-2 update,
        written as one: ``W -= c1 u1^T + c2 u2^T`` below the block (``^H`` if herm)."""
        k1 = fnp.minimum(k + 1, n - 1)  # (k + 1 = n only for a 1 x 1 block)
        below = idx > k + two.astype(idx.dtype)
        c1 = fnp.where(below, w[:, k], 0)
        c2 = fnp.where(below & two, w[:, k1], 0)
        a21 = w[k1, k]
        if herm:
            u1 = c1 * (1 / fnp.real(w[k, k]))
            d = fnp.abs(a21)
            d11 = fnp.real(w[k1, k1]) / d
            d22 = fnp.real(w[k, k]) / d
            tt = 1 / (d11 * d22 - 1)
            d21 = a21 / d
            d = tt / d
            wk = d * (d11 * c1 - d21 * c2)
            wkp1 = d * (d22 * c2 - fnp.conj(d21) * c1)
        else:
            u1 = c1 * (1 / w[k, k])
            d11 = w[k1, k1] / a21
            d22 = w[k, k] / a21
            d21 = (1 / (d11 * d22 - 1)) / a21
            wk = d21 * (d11 * c1 - c2)
            wkp1 = d21 * (d22 * c2 - c1)
        u1 = fnp.where(two, wk, u1)
        u2 = fnp.where(two, wkp1, 0)
        new = w - c1[:, None] * _conj(u1, herm)[None, :] - c2[:, None] * _conj(u2, herm)[None, :]
        w = fnp.where(below[:, None] & (col == k), u1[:, None], w)
        w = fnp.where(below[:, None] & two & (col == k1), u2[:, None], w)
        return fnp.where(below[:, None] & below[None, :], whole(new), w)

    def step(k: Any, state: tuple) -> tuple:
        w, piv, info, skip = state
        colk = w[:, k]
        absakk = absd(w[k, k])
        colabs = fnp.where(idx > k, _abs1(colk), -1.0)
        imax = fnp.argmax(colabs)
        colmax = fnp.where(k < n - 1, colabs[imax], 0.0)
        rowmax = fnp.max(fnp.where((idx >= k) & (idx != imax), _abs1(w[imax]), -1.0))
        zero = (fnp.maximum(absakk, colmax) == 0) | fnp.isnan(absakk)
        keep = zero | (absakk >= alpha * colmax) | (absakk >= alpha * colmax * (colmax / rowmax))
        two = ~keep & ~(absd(w[imax, imax]) >= alpha * rowmax)
        kp = fnp.where(keep, k, imax)
        kk = k + two.astype(idx.dtype)
        # interchange rows and columns kk, kp of the trailing matrix (columns of L stay)
        perm = fnp.where(idx == kk, kp, fnp.where(idx == kp, kk, idx))
        trail = (row >= k) & (col >= k)
        w = fnp.where(trail, fnp.take(fnp.take(w, perm, axis=0), perm, axis=1), w)
        wn = fnp.where(zero, w, update(w, k, two))
        pv = (kp + 1).astype(np.int32)
        pn = fnp.where(idx == k, fnp.where(two, -pv, pv), piv)
        pn = fnp.where(two & (idx == k + 1), -pv, pn)
        infon = fnp.where(zero & (info == 0), k + 1, info).astype(np.int32)
        return (
            fnp.where(skip, state[0], wn),
            fnp.where(skip, piv, pn),
            fnp.where(skip, info, infon),
            ~skip & two,
        )

    init = (whole(a), fnp.zeros((n,), np.int32), fnp.zeros((), np.int32), fnp.zeros((), bool))
    w, piv, info, _ = fori_loop(0, n, step, init)
    return fnp.where(lower, w, 0), piv, info


def _ldl_solve_one(ld: Any, piv: Any, b: Any, *, herm: bool) -> Any:
    """``X`` with ``A X = B`` from one ``(LD, pivots)`` (LAPACK's ``sytrs``/``hetrs``)."""
    n = ld.shape[-1]
    idx = fnp.arange(n)
    piv = piv.astype(np.int32)

    def swap(b: Any, i: Any, j: Any) -> Any:
        return fnp.take(b, fnp.where(idx == i, j, fnp.where(idx == j, i, idx)), axis=0)

    def put(b: Any, i: Any, v: Any) -> Any:
        return fnp.where((idx == i)[:, None], v[None, :], b)

    def forward(k: Any, state: tuple) -> tuple:  # solve (P L) D Y = B, block by block
        b, skip = state
        p = piv[k]
        one = p > 0
        k1 = fnp.minimum(k + 1, n - 1)
        bs = swap(b, fnp.where(one, k, k1), fnp.where(one, p, -p) - 1)
        lk = ld[:, k]
        b1 = bs + fnp.where(idx > k, lk, 0)[:, None] * (-bs[k])[None, :]
        dkk = fnp.real(ld[k, k]) if herm else ld[k, k]
        b1 = put(b1, k, b1[k] * (1 / dkk))
        b2 = bs + fnp.where(idx > k1, lk, 0)[:, None] * (-bs[k])[None, :]
        b2 = b2 + fnp.where(idx > k1, ld[:, k1], 0)[:, None] * (-b2[k1])[None, :]
        akm1k = ld[k1, k]
        ck = _conj(akm1k, herm)
        akm1 = ld[k, k] / ck
        ak = ld[k1, k1] / akm1k
        denom = akm1 * ak - 1
        bkm1 = b2[k] / ck
        bk = b2[k1] / akm1k
        b2 = put(put(b2, k, (ak * bkm1 - bk) / denom), k1, (akm1 * bk - bkm1) / denom)
        bn = fnp.where(one, b1, b2)
        return fnp.where(skip, b, bn), ~skip & ~one

    def backward(i: Any, state: tuple) -> tuple:  # solve (P L)^H X = Y from the last row
        b, skip = state
        k = n - 1 - i
        p = piv[k]
        one = p > 0
        km1 = fnp.maximum(k - 1, 0)
        below = (idx > k)[:, None]
        dk = fnp.sum(fnp.where(below, _conj(ld[:, k], herm)[:, None] * b, 0), axis=0)
        dkm1 = fnp.sum(fnp.where(below, _conj(ld[:, km1], herm)[:, None] * b, 0), axis=0)
        bn = put(b, k, b[k] - dk)
        bn = fnp.where(one, bn, put(bn, km1, b[km1] - dkm1))
        bn = swap(bn, k, fnp.where(one, p, -p) - 1)
        return fnp.where(skip, b, bn), ~skip & ~one

    false = fnp.zeros((), bool)
    y, _ = fori_loop(0, n, forward, (b, false))
    x, _ = fori_loop(0, n, backward, (y, false))
    return x


def _batched(fn: Callable, *args: Any, static: dict) -> Any:
    """``fn`` vmapped over the leading dimensions (shared by all ``args``)."""
    batch = args[0].shape[:-2]
    nb = int(np.prod(batch, dtype=np.int64))
    flat = [a.reshape((nb,) + a.shape[len(batch) :]) for a in args]
    if nb == 0 or args[0].shape[-1] == 0:
        out = _empty(fn, *flat, **static)
    else:
        out = vmap(lambda *xs: fn(*xs, **static))(*flat)
    if isinstance(out, tuple):
        return tuple(o.reshape(batch + o.shape[1:]) for o in out)
    return out.reshape(batch + out.shape[1:])


def _empty(fn: Callable, *flat: Any, **static: Any) -> Any:
    """The outputs of a batch of no matrices, or of ``0 x 0`` matrices."""
    if fn is _ldl_one:
        a = flat[0]
        nb, n = a.shape[0], a.shape[-1]
        return a, fnp.ones((nb, n), np.int32), fnp.zeros((nb,), np.int32)
    return flat[2]


def _undifferentiable(name: str) -> Callable:
    """The identity, whose backward raises PyTorch's error for ``name``."""

    @custom_vjp
    def ident(x: Any) -> Any:
        return x

    def bwd(res: Any, g: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    ident.defvjp(lambda x: (x, None), bwd)
    return ident


_NO_GRAD_FACTOR = _undifferentiable("linalg_ldl_factor_ex")
_NO_GRAD_SOLVE = _undifferentiable("linalg_ldl_solve")


def ldl_kernel(a: Any, *, herm: bool, traced: bool = False) -> tuple:
    """``(LD, pivots, info)`` of a batch of matrices (funcgrad arrays)."""
    a = _NO_GRAD_FACTOR(a) if traced else stop_gradient(a)
    return _batched(_ldl_one, a, static={"herm": herm})


def ldl_solve_kernel(ld: Any, piv: Any, b: Any, *, herm: bool, traced: bool = False) -> Any:
    """``X`` with ``A X = B`` from ``ldl_kernel``'s ``(LD, pivots)``; ``ld``, ``piv`` and
    ``b`` share their batch dimensions."""
    nd = _NO_GRAD_SOLVE if traced else stop_gradient
    return _batched(_ldl_solve_one, nd(ld), piv, nd(b), static={"herm": herm})


# ------------------------------------------------------------------ torch.linalg


def _no_derivative(name: str) -> Callable[[Tensor], None]:
    def hook(grad: Tensor) -> None:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return hook


def _hook(t: Tensor, name: str) -> Tensor:
    if t.requires_grad and is_grad_enabled():
        t.register_hook(_no_derivative(name))
    return t


def _float_kind(t: Tensor, name: str) -> None:
    if _dt.kind(t._npdtype) not in "fc":
        raise RuntimeError(
            f"torch.linalg.{name}: Expected a floating point or complex tensor as input. "
            f"Got {_dt.scalar_type_name(t._npdtype)}"
        )


def _kernel_dtype(t: Tensor, kernel: str) -> None:
    """PyTorch's CPU kernels have no half-precision versions."""
    if t._npdtype in (_dt.float16.np, _dt.bfloat16.np):
        name = _dt.scalar_type_name(t._npdtype)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _check_matrix(a: Tensor, name: str) -> None:
    if a.ndim < 2:
        raise RuntimeError(
            f"torch.linalg.{name}: The input tensor A must have at least 2 dimensions."
        )
    try:
        _square(a, name)
    except RuntimeError as e:
        raise RuntimeError(f"torch.{e}") from None


def _factor_f(a: Any, *, herm: bool, traced: bool) -> tuple:
    return ldl_kernel(a, herm=herm, traced=traced)


def _factor(A: Tensor, hermitian: bool) -> tuple:
    _check_matrix(A, "ldl_factor_ex")  # (PyTorch's ldl_factor is ldl_factor_ex)
    _float_kind(A, "ldl_factor_ex")
    _kernel_dtype(A, "ldl_factor_kernel_cpu")
    herm = bool(hermitian) and _dt.kind(A._npdtype) == "c"  # real: sytrf = hetrf
    st = (("herm", herm), ("traced", is_tracing()))
    ld, piv, info = apply(_factor_f, "NotImplemented", (A,), st)
    return _hook(ld, "linalg_ldl_factor_ex"), piv, info


def _raise_info(info: Tensor, name: str) -> None:
    """PyTorch's error for a zero block of ``D``: its check has no message for
    ``ldl_factor``'s ``info`` and reports LAPACK's code (the first batch element's)."""
    if is_tracing():
        return
    bad = np.asarray(info.numpy()).reshape(-1)
    for v in bad:
        if v != 0:
            raise RuntimeError(f"torch.linalg.{name}: Unknown error code: {int(v)}.")


_SAMPLES = (
    Sample(((3, 3),), grad=False),
    Sample(((2, 4, 4),), grad=False),
    Sample(((3, 3),), grad=False, dtype="complex128"),
    Sample(((3, 3),), kwargs=(("hermitian", True),), grad=False, dtype="complex128"),
)


@defop(samples=_SAMPLES, **LINALG_ROW, bf16_error=no_bf16_kernel("ldl_factor_kernel_cpu"))
def ldl_factor(A: Tensor, *, hermitian: bool = False) -> tuple:
    """``(LD, pivots)``: LAPACK's compact Bunch-Kaufman ``L D L^T`` (``L D L^H`` with
    ``hermitian`` for complex input) of the lower triangle of ``A``, 1-based pivots.
    Raises for a singular block of ``D`` (LAPACK's ``info > 0``)."""
    ld, piv, info = _factor(A, hermitian)
    _raise_info(info, "ldl_factor")
    return LDL_FACTOR(ld, piv)


@defop(samples=_SAMPLES[:2], **LINALG_ROW, bf16_error=no_bf16_kernel("ldl_factor_kernel_cpu"))
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> tuple:
    """``(LD, pivots, info)``: ``ldl_factor`` with LAPACK's ``info`` (``k`` if ``D[k-1,
    k-1]`` is exactly zero, 0 otherwise); ``check_errors`` raises as ``ldl_factor``."""
    out = LDL_FACTOR_EX(*_factor(A, hermitian))
    if check_errors:
        _raise_info(out.info, "ldl_factor_ex")
    return out


def _solve_f(ld: Any, piv: Any, b: Any, *, herm: bool, traced: bool) -> Any:
    return ldl_solve_kernel(ld, piv, b, herm=herm, traced=traced)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A X = B`` from ``ldl_factor``'s ``(LD, pivots)`` (``hermitian`` as
    given to ``ldl_factor``); ``B``'s batch dimensions broadcast with ``LD``'s."""
    # PyTorch's checks, in its order
    _check_matrix(LD, "ldl_solve")
    _float_kind(LD, "ldl_solve")
    if B._npdtype != LD._npdtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_dt.scalar_type_name(B._npdtype)} and A of type "
            f"{_dt.scalar_type_name(LD._npdtype)} instead."
        )
    if B.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(B.ndim, 1)}, "
            f"{max(B.ndim, 1) - 1}], but got -2)"
        )
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is {B.shape[-2]} by "
            f"{B.shape[-1]}"
        )
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(pivots.shape)} instead"
        )
    if _dt.kind(pivots._npdtype) not in "iu":
        raise RuntimeError(
            "torch.linalg.ldl_solve: Expected pivots to be integers. Got "
            f"{_dt.scalar_type_name(pivots._npdtype)}"
        )
    batch = _infer_size(tuple(B.shape[:-2]), tuple(LD.shape[:-2]))
    if isinstance(batch, str):
        raise RuntimeError(batch)
    _kernel_dtype(LD, "ldl_solve_kernel_cpu")
    n = LD.shape[-1]
    ld = LD.expand(*batch, n, n)
    piv = pivots.expand(*batch, n)
    b = B.expand(*batch, *B.shape[-2:])
    herm = bool(hermitian) and _dt.kind(LD._npdtype) == "c"
    st = (("herm", herm), ("traced", is_tracing()))
    x = apply(_solve_f, "NotImplemented", (ld, piv, b), st)
    return _hook(x, "linalg_ldl_solve")


def _exact_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with ``out=``, whose tensors must have the results' dtypes (PyTorch's
    linalg kernels check this instead of casting)."""

    name = f"linalg_{fn.__name__}"  # (PyTorch's name in its errors)
    plain = with_out(fn, name=name)

    @functools.wraps(fn)
    def checked(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = plain(*args, **kwargs)
        if out is None:
            return result
        results = result if isinstance(result, tuple) else (result,)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        for r, o in zip(results, outs):
            if isinstance(o, Tensor) and o._npdtype != r._npdtype:
                raise RuntimeError(
                    f"Expected out tensor to have dtype {_dt.type_meta_name(r._npdtype)}, but "
                    f"got {_dt.type_meta_name(o._npdtype)} instead"
                )
        return write_out(name, result, out)

    return checked


#: ``torch.linalg``'s three functions (``ldl_solve`` is outside the op table: it needs
#: pivots), with PyTorch's exact ``out=`` dtypes
EXTRA = {f.__name__: _exact_out(f) for f in (ldl_factor, ldl_factor_ex, ldl_solve)}
