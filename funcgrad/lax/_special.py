"""``jax.lax``'s special functions beyond the elementwise basics: the scaled Bessel
functions ``bessel_i0e``/``bessel_i1e``, ``igamma_grad_a``, the incomplete beta function
``betainc``, ``polygamma``, ``zeta`` and ``random_gamma_grad`` (``igamma`` and ``igammac``
are their rows' forms: ``funcgrad.lax._elementwise``).

Each wraps a funcgrad primitive with lax's operand rule (one dtype, one shape up to
size-1 dimensions; 0-d operands and Python scalars adapt), so ``grad``, ``vmap`` and
``jit`` apply.
"""

from __future__ import annotations

from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import random as _random
from funcgrad.primitives import shape as sh
from funcgrad.primitives import special as _special

__all__ = [
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "igamma_grad_a",
    "polygamma",
    "random_gamma_grad",
    "zeta",
]


def _same(fn: Any, name: str) -> Any:
    """Wrap the primitive wrapper ``fn`` with lax's operand rule:
    one dtype, one shape up to size-1 dimensions (0-d operands and Python scalars adapt)."""

    def f(*args: Any) -> Any:
        xs = [prep(a, name) for a in args]
        avals = [to_aval(x) for x in xs]
        strong = [a for a in avals if not getattr(a, "weak_type", False)]
        ref = strong[0] if strong else avals[0]
        dts = {a.dtype for a in strong}
        if len(dts) > 1:
            raise TypeError(
                f"{name}: operands must have one dtype, got "
                f"{', '.join(str(a) for a in avals)}{here()}"
            )
        shapes = [a.shape for a in avals if a.shape != ()]
        ranks = {len(s) for s in shapes}
        if len(ranks) > 1:
            raise TypeError(
                f"{name}: arrays must have the same number of dimensions, got {ranks} "
                f"({', '.join(str(a) for a in avals)}){here()}"
            )
        # JAX 0.10's lax rule: each dimension equal or 1 (size-1 dimensions broadcast)
        shape = tuple(max(d) for d in zip(*shapes)) if shapes else ()
        if any(n not in (1, m) for s in shapes for n, m in zip(s, shape)):
            raise TypeError(
                f"{name}: operands must have one shape (size-1 dimensions broadcast), got "
                f"{', '.join(str(a) for a in avals)}{here()}"
            )
        out = []
        for x, a in zip(xs, avals):
            if a.dtype != ref.dtype:
                x = ew.convert_element_type(x, ref.dtype)
            if a.shape != shape:
                dims = tuple(range(len(shape))) if a.shape else ()
                x = sh.broadcast_in_dim(x, shape, dims)
            out.append(x)
        return fn(*out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = fn.__doc__
    return f


bessel_i0e = _same(_special.bessel_i0e, "bessel_i0e")
bessel_i1e = _same(_special.bessel_i1e, "bessel_i1e")
betainc = _same(_special.betainc, "betainc")
igamma_grad_a = _same(_special.igamma_grad_a, "igamma_grad_a")
polygamma = _same(_special.polygamma, "polygamma")
zeta = _same(_special.zeta, "zeta")
random_gamma_grad = _same(_random.random_gamma_grad, "random_gamma_grad")
