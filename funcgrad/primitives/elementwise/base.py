"""What the elementwise primitives are built from: dtype-class checks, the dtype join of
operands, lowering casts, the vectorised batching rule, test-example generators and the
host rules where XLA's semantics differ from NumPy's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive, TorchForm
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand

FAMILY = "elementwise"


def _fmt(avals: tuple[Aval, ...]) -> str:
    return ", ".join(str(a) for a in avals)


_check_dtype = rules.check_dtype  # (the one dtype check; categories in primitives/rules.py)


def _unary_aval(name: str, allowed: str) -> Callable[..., Aval]:
    def abstract_eval(x: Aval) -> Aval:
        _check_dtype(name, x, allowed)
        return x

    return abstract_eval


def _join_avals(name: str, avals: tuple[Aval, ...], allowed: str) -> Aval:
    shape: tuple = ()
    mismatch = False
    for a in avals:  # (no set of shapes: a symbolic dimension is compared, not hashed)
        s = a.shape
        if s != ():
            if shape == ():
                shape = s
            elif s != shape:
                mismatch = True
    if mismatch:
        raise TypeError(
            f"{name} requires operands of equal shapes (or 0-d), got {_fmt(avals)}; "
            "funcgrad.numpy broadcasts by NumPy's rules before calling it"
        )
    dtype, weak = rules.join_dtypes(name, *avals)
    out = Aval(shape, dtype, weak)
    _check_dtype(name, out, allowed)
    return out


def _binary_aval(name: str, allowed: str, out_dtype: str | None = None) -> Callable[..., Aval]:
    def abstract_eval(*avals: Aval) -> Aval:
        out = _join_avals(name, avals, allowed)
        if out_dtype is not None:
            return Aval(out.shape, np.dtype(out_dtype), False)
        return out

    return abstract_eval


def lax_convert(x: Any, dtype: np.dtype, weak_type: bool = False) -> Any:
    """(lowering) ``x`` converted to ``dtype``, weakly typed if ``weak_type`` (as the aval says).

    ``lax.convert_element_type`` always gives a strong result; JAX's own weak conversion
    is private, so it is imported here, inside lowering, and nowhere else.
    """
    if weak_type:
        from jax._src.lax.lax import _convert_element_type

        return _convert_element_type(x, np.dtype(dtype), weak_type=True)
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtype)
    return lax.convert_element_type(x, dtype)


def _cast(vals: tuple, dtype: np.dtype, weak: bool = False) -> list:
    """(lowering) operands of a join, all of ``dtype``; weak only if the join is weak."""
    out = []
    for v in vals:
        if isinstance(v, (bool, int, float, complex)) or v.dtype != dtype:
            v = lax_convert(v, dtype, weak)
        out.append(v)
    return out


def _lower_nary(fn: Callable, name: str) -> Callable:
    def lower(*vals: Any) -> Any:
        out = _join_avals(name, tuple(to_aval(v) for v in vals), "any")
        return fn(*_cast(vals, out.dtype, out.weak_type))

    return lower


def vectorized_batch(prim: Primitive) -> Callable:
    """Batching rule for elementwise primitives: align batch axes, then apply."""

    def batch(args: list, dims: list, **params: Any) -> tuple[Any, int]:
        size = rules.batch_size(args, dims)
        bd = next(d for d in dims if d is not None)
        rest = _rest_shape(args, dims)
        full = (*rest[:bd], size, *rest[bd:])
        out_args = []
        for a, d in zip(args, dims):
            nd = to_aval(a).ndim
            if d is None:
                if nd == 0:
                    out_args.append(a)
                else:
                    keep = tuple(i for i in range(len(full)) if i != bd)
                    out_args.append(rules.broadcast(a, full, keep))
            elif nd == 1 and rest:
                out_args.append(rules.broadcast(a, full, (bd,)))
            else:
                out_args.append(rules.moveaxis(a, d, bd))
        return prim.bind(*out_args, **params), bd

    return batch


def _rest_shape(args: list, dims: list) -> tuple:
    for a, d in zip(args, dims):
        sh = list(to_aval(a).shape)
        if d is not None:
            sh.pop(d)
        if sh:
            return tuple(sh)
    return ()


def _examples_unary(lo: float = -2.0, hi: float = 2.0, smooth: bool = True) -> Callable:
    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example([rand(rng, (3,), lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (2, 3), lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (), lo=lo, hi=hi)], smooth=smooth),
        ]

    return examples


def _examples_binary(lo: float = -2.0, hi: float = 2.0, smooth: bool = True, lo2=None, hi2=None):
    lo2 = lo if lo2 is None else lo2
    hi2 = hi if hi2 is None else hi2

    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example(
                [rand(rng, (3,), lo=lo, hi=hi), rand(rng, (3,), lo=lo2, hi=hi2)], smooth=smooth
            ),
            Example(
                [rand(rng, (2, 3), lo=lo, hi=hi), rand(rng, (2, 3), lo=lo2, hi=hi2)], smooth=smooth
            ),
            Example(
                [rand(rng, (2, 3), lo=lo, hi=hi), rand(rng, (), lo=lo2, hi=hi2)], smooth=smooth
            ),
        ]

    return examples


def declare(
    p: Primitive,
    *,
    domain: tuple[float, float] | None = None,
    host: Callable | None = None,
    doc: str | None = None,
    docs: dict[str, str] | None = None,
    public: tuple[str, ...] = (),
    numpy: str = "inexact",
    numpy_bool: str | None = None,
    domains: tuple[tuple[float, float], ...] | None = None,
    arity: int = 1,
    torch: TorchForm | None = None,
    operands: tuple[str, ...] | None = None,
) -> Primitive:
    """Record on ``p`` its input domain (``domains``: each operand's, where they differ),
    host rule, arity, public forms, their parameter names and PyTorch form (see
    ``_unary`` and ``_binary``)."""
    if domains is None and domain is not None:
        domains = (domain,) * arity
    p.domain = domains[0] if domains else None
    p.domains = domains
    p.arity = arity
    p.host = host
    p.doc = doc
    p.docs = dict(docs or {})
    p.numpy_promotion = numpy
    p.numpy_bool = numpy_bool
    p.torch = torch
    p.operands = operands
    for form in public:
        ns, _, named = form.partition(":")
        public_name, _, mode = named.partition("=")
        p.public[ns] = (*p.public.get(ns, ()), public_name or p.name)
        if mode:
            p.numpy_modes[public_name] = mode
    return p


# --------------------------------------------------------------------------- host rules
# (the host tier, funcgrad.core.host: NumPy on host arrays, with XLA's semantics where
# NumPy's differ; the rows declare them, ``host=``)


def _host_int(x: Any) -> bool:
    # (a NumPy integer scalar too: a ufunc's 0-d result is one on the host tier)
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "iub"


def host_div(x: Any, y: Any) -> Any:
    """``div``'s host rule: integers divide rounding toward zero, -1 for a zero divisor."""
    if not (_host_int(x) or _host_int(y)):
        return np.true_divide(x, y)
    q = np.floor_divide(x, y)
    r = np.remainder(x, y)
    q = np.where((r != 0) & ((np.less(x, 0)) != (np.less(y, 0))), q + 1, q)
    return np.where(np.equal(y, 0), np.asarray(-1).astype(q.dtype), q)


def host_rem(x: Any, y: Any) -> Any:
    """``rem``'s host rule: C's ``fmod``; an integer ``x`` for a zero divisor."""
    r = np.fmod(x, y)
    if _host_int(x) or _host_int(y):
        return np.where(np.equal(y, 0), x, r)
    return r


def host_integer_pow(x: Any, *, y: int) -> Any:
    """``x ** y`` by the multiplication chain XLA computes (same rounding)."""
    if y == 0:
        return np.ones_like(x)
    n, acc = -y if y < 0 else y, None
    while n > 0:
        if n & 1:
            acc = x if acc is None else np.multiply(acc, x)
        n >>= 1
        if n > 0:
            x = np.multiply(x, x)
    return np.divide(np.ones_like(acc), acc) if y < 0 else acc
