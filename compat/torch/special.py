"""``torch.special``: the op table's rows of that namespace (see ``compat/_core/ops/special.py``),
and the functions PyTorch computes without a derivative (Bessel and Airy functions,
orthogonal polynomials: kernels in ``_bessel_kernels`` and ``_orthogonal_polynomials``),
``erfcx``, ``zeta`` and the spellings of top-level ops (``polygamma``, ``multigammaln``,
``round``)."""

from __future__ import annotations

import math as _math
from collections.abc import Callable as _Callable
from typing import Any as _Any

import numpy as _np

import funcgrad as _fg
from compat._core import dtypes as _dt
from compat._core import numpy_names as _np_names
from compat._core.ops.special import mvlgamma as _mvlgamma
from compat._core.ops.special import polygamma as _polygamma
from compat._core.ops.unary import round as _round_op
from compat._core.optable import functions as _functions
from compat._core.optable import name_as_public as _name_as_public
from compat._core.out_arg import with_out as _with_out
from compat._core.tensor import Tensor as _Tensor
from compat._core.tensor import apply as _apply
from compat.torch import _bessel_kernels as _bk
from compat.torch import _orthogonal_polynomials as _op
from funcgrad import numpy as _fnp
from funcgrad.scipy import special as _fsp

globals().update(_functions(_with_out, module="special"))


def _kernel_dtype(name: str, *operands: _Any) -> _np.dtype:
    """The float dtype of ``torch.special.name``'s result; PyTorch has no float16, bfloat16
    or complex kernel of these functions, so neither does compat (its error)."""
    dt = _dt.float_type(_dt.result_type(*operands))
    if dt in (_np.dtype(_np.float16), _dt.bfloat16.np) or _dt.kind(dt) == "c":
        kind = _dt.scalar_type_name(dt)
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{kind}'")
    return dt


#: PyTorch computes these without a derivative (their results do not require grad)
_KERNELS: dict[str, _Callable[[_Any], _Any]] = {
    "bessel_j0": _bk.bessel_j0,
    "bessel_j1": _bk.bessel_j1,
    "bessel_y0": _bk.bessel_y0,
    "bessel_y1": _bk.bessel_y1,
    "modified_bessel_i0": lambda x: _fsp.i0(_fnp.asarray(x, _np.float64)),
    "modified_bessel_i1": lambda x: _fsp.i1(_fnp.asarray(x, _np.float64)),
    "modified_bessel_k0": _bk.modified_bessel_k0,
    "modified_bessel_k1": _bk.modified_bessel_k1,
    "scaled_modified_bessel_k0": _bk.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": _bk.scaled_modified_bessel_k1,
    "spherical_bessel_j0": _bk.spherical_bessel_j0,
    "airy_ai": _bk.airy_ai,
}


def _kernel_f(x: _Any, *, op: str, dtype: _np.dtype) -> _Any:
    return _fnp.asarray(_KERNELS[op](x), dtype)


def _special(f: _Callable[..., _Any], name: str, **kw: _Any) -> _Callable[..., _Any]:
    """``torch.special.name`` from ``f``: ``out=`` and, as PyTorch's parser, NumPy's names
    of ``f``'s parameters (``x=`` for ``input``, ``x2=`` for ``other``)."""
    return _with_out(f, name=f"special_{name}", numpy_names=_np_names.table(f), **kw)


#: the functions PyTorch names the parameter ``x`` (they take no ``input=``, ``a=``, ``x1=``)
_NAMED_X = ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0")
_NAMED_X += ("airy_ai",)


def _no_grad_unary(op: str, doc: str) -> _Callable[..., _Tensor]:
    def f(input: _Tensor) -> _Tensor:
        dt = _kernel_dtype(op, input)
        return _apply(_kernel_f, "", (input.detach(),), (("op", op), ("dtype", dt)))

    def f_x(x: _Tensor) -> _Tensor:
        return f(x)

    g = f_x if op in _NAMED_X else f
    g.__name__ = g.__qualname__ = op
    g.__doc__ = (
        f"``torch.special.{op}({'x' if g is f_x else 'input'}, *, out=None)``: {doc} Not "
        "differentiable, as PyTorch's."
    )
    return _special(g, op)


bessel_j0 = _no_grad_unary("bessel_j0", "the Bessel function of the first kind of order 0.")
bessel_j1 = _no_grad_unary("bessel_j1", "the Bessel function of the first kind of order 1.")
bessel_y0 = _no_grad_unary("bessel_y0", "the Bessel function of the second kind of order 0.")
bessel_y1 = _no_grad_unary("bessel_y1", "the Bessel function of the second kind of order 1.")
modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", "the modified Bessel function I0.")
modified_bessel_i1 = _no_grad_unary("modified_bessel_i1", "the modified Bessel function I1.")
modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", "the modified Bessel function K0.")
modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", "the modified Bessel function K1.")
scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0", "``exp(x) K0(x)``.")
scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1", "``exp(x) K1(x)``.")
spherical_bessel_j0 = _no_grad_unary("spherical_bessel_j0", "``sin(x) / x``, 1 at 0.")
airy_ai = _no_grad_unary("airy_ai", "the Airy function ``Ai``.")


def _poly_f(x: _Any, n: _Any, *, family: str, dtype: _np.dtype) -> _Any:
    x = _fnp.asarray(x, _np.float64)
    n = _fnp.trunc(_fnp.asarray(n, _np.float64))
    return _fnp.asarray(_op.evaluate(x, n, family=family), dtype)


def _polynomial(family: str, doc: str) -> _Callable[..., _Tensor]:
    def f(x: _Tensor | float, n: _Tensor | float) -> _Tensor:
        if not isinstance(n, (_Tensor, int, float)) or isinstance(n, bool):
            raise TypeError(
                f"special_{family}(): argument 'n' must be Tensor or Number, not {type(n).__name__}"
            )
        if not isinstance(x, _Tensor) and not isinstance(n, _Tensor):
            raise TypeError(f"special_{family}(): takes a Tensor for 'x' or 'n', got two numbers")
        dt = _kernel_dtype(family, x, n)
        args = tuple(a.detach() if isinstance(a, _Tensor) else float(a) for a in (x, n))
        return _apply(_poly_f, "", args, (("family", family), ("dtype", dt)))

    f.__name__ = f.__qualname__ = family
    f.__doc__ = (
        f"``torch.special.{family}(x, n, *, out=None)``: {doc} at ``x`` (``n`` "
        "truncated to an integer; 0 for a negative ``n``). Not differentiable, as PyTorch's."
    )
    return _special(f, family, number_first=True)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "Chebyshev's ``T_n``")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "Chebyshev's ``U_n``")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "Chebyshev's ``V_n``")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "Chebyshev's ``W_n``")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "``T_n(2 x - 1)``")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "``U_n(2 x - 1)``")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "``V_n(2 x - 1)``")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "``W_n(2 x - 1)``")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "the physicists' Hermite ``H_n``")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "the probabilists' Hermite ``He_n``")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "Laguerre's ``L_n``")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "Legendre's ``P_n``")


def _erfcx_large(x: _Any) -> _Any:
    # erfc(x) exp(x^2) sqrt(pi) = 1 / (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))),
    # Laplace's continued fraction, evaluated from its 80th term back
    t = x
    for k in range(80, 0, -1):
        t = x + (k / 2) / t
    return 1 / (_math.sqrt(_math.pi) * t)


@_fg.custom_jvp
def _erfcx64(x: _Any) -> _Any:
    large = x >= 2
    direct = _fnp.exp(x * x) * _fsp.erfc(_fnp.where(large, 0.0, x))
    return _fnp.where(large, _erfcx_large(_fnp.where(large, x, 2.0)), direct)


@_erfcx64.defjvp
def _erfcx64_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    y = _erfcx64(x)
    return y, t * (2 * x * y - 2 / _math.sqrt(_math.pi))


def _erfcx_f(x: _Any, *, dtype: _np.dtype) -> _Any:
    return _fnp.asarray(_erfcx64(_fnp.asarray(x, _np.float64)), dtype)


def _erfcx(input: _Tensor) -> _Tensor:
    """``torch.special.erfcx(input, *, out=None)``: the scaled complementary error function
    ``exp(x^2) erfc(x)``, accurate where ``erfc`` underflows; its derivative is
    ``2 x erfcx(x) - 2 / sqrt(pi)``."""
    dt = _kernel_dtype("erfcx", input)
    return _apply(_erfcx_f, "SpecialErfcxBackward0", (input,), (("dtype", dt),))


_erfcx.__name__ = _erfcx.__qualname__ = "erfcx"
erfcx = _special(_erfcx, "erfcx")


@_fg.custom_jvp
def _zeta64(x: _Any, q: _Any) -> _Any:
    return _fsp.zeta(x, q)


@_zeta64.defjvp
def _zeta64_jvp(primals: tuple, tangents: tuple) -> tuple:
    # PyTorch differentiates in ``q`` only; in ``x`` backward raises (a hook, below)
    (x, q), (_, tq) = primals, tangents
    return _zeta64(x, q), tq * -x * _zeta64(x + 1, q)


def _zeta_f(x: _Any, q: _Any, *, dtype: _np.dtype) -> _Any:
    return _fnp.asarray(_zeta64(_fnp.asarray(x, _np.float64), _fnp.asarray(q, _np.float64)), dtype)


def _raise_zeta_derivative(grad: _Tensor) -> None:
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta(input: _Tensor | float, other: _Tensor | float) -> _Tensor:
    """``torch.special.zeta(input, other, *, out=None)``: the Hurwitz zeta function
    ``sum_k (k + other)^-input``. Differentiable in ``other``; PyTorch has no derivative
    in ``input`` (backward through it raises, as PyTorch's)."""
    if not isinstance(input, _Tensor) and not isinstance(other, _Tensor):
        raise TypeError("special_zeta(): takes a Tensor for 'input' or 'other', got two numbers")
    dt = _kernel_dtype("zeta", input, other)
    out = _apply(_zeta_f, "SpecialZetaBackward0", (input, other), (("dtype", dt),))
    if isinstance(input, _Tensor) and input.requires_grad and out.requires_grad:
        out.register_hook(_raise_zeta_derivative)
    return out


_zeta.__name__ = _zeta.__qualname__ = "zeta"
zeta = _special(_zeta, "zeta", number_first=True)

polygamma = _special(_polygamma, "polygamma")


def _multigammaln(input: _Tensor, p: int) -> _Tensor:
    """``torch.special.multigammaln(input, p, *, out=None)``: ``torch.mvlgamma``, the
    multivariate log-gamma function of dimension ``p``."""
    return _mvlgamma(input, p)


_multigammaln.__name__ = _multigammaln.__qualname__ = "multigammaln"
multigammaln = _special(_multigammaln, "multigammaln")


def _round(input: _Tensor, *, decimals: int = 0) -> _Tensor:
    """``torch.special.round(input, *, decimals=0, out=None)``: ``torch.round``."""
    return _round_op(input, decimals=decimals)


_round.__name__ = _round.__qualname__ = "round"
round = _special(_round, "round")

# the functions written here pickle by their public names, as the op table's rows
_name_as_public({k: v for k, v in globals().items() if not k.startswith("_")}, __name__)
