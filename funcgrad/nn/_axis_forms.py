"""The ``funcgrad.nn`` and ``funcgrad.scipy.special`` forms of the composite reduction rows
(``logsumexp``, ``softmax``, ``log_softmax``: ``Reduction(numpy="logsumexp"|"normalize")``,
declared in ``_activations.py`` beside their functions).

Each kind has ``jax.nn``'s and ``jax.scipy.special``'s signatures: ``logsumexp`` is one
function in both namespaces (as JAX's), a softmax takes ``(x, axis=-1, where=None)`` in
``nn`` and ``(x, /, *, axis=None)`` in ``scipy.special`` (every axis by default, as SciPy's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.core.reduction_row import Reduction, form_doc, reduction_forms
from funcgrad.nn import _activations  # noqa: F401  (declares the rows)
from funcgrad.numpy._core import ArrayLike


def _logsumexp_form(row: Reduction, namespace: str) -> Callable[..., Any]:
    fn = row.reduce

    def f(
        a: ArrayLike,
        axis: Any = None,
        b: ArrayLike | None = None,
        keepdims: bool = False,
        return_sign: bool = False,
        where: ArrayLike | None = None,
    ) -> Any:
        return fn(a, axis, b, keepdims, return_sign, where)

    return f


def _normalize_form(row: Reduction, namespace: str) -> Callable[..., Any]:
    fn = row.reduce
    if namespace == "scipy.special":

        def scipy_form(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
            return fn(x, axis)

        return scipy_form

    def nn_form(x: ArrayLike, axis: Any = -1, where: ArrayLike | None = None) -> Any:
        return fn(x, axis, where)

    return nn_form


_KINDS = {"logsumexp": _logsumexp_form, "normalize": _normalize_form}
_MADE: dict[tuple[str, str], Callable[..., Any]] = {}


def _form(row: Reduction, namespace: str) -> Callable[..., Any]:
    # (``logsumexp``'s forms are one function, as ``jax.nn.logsumexp`` is
    # ``jax.scipy.special.logsumexp``)
    key = (row.name, "" if row.numpy == "logsumexp" else namespace)
    if key not in _MADE:
        f = _KINDS[row.numpy](row, namespace)
        f.__name__ = f.__qualname__ = row.name
        f.__doc__ = f"{form_doc(row, namespace)}."
        _MADE[key] = f
    return _MADE[key]


def declared_forms(namespace: str) -> dict[str, Callable[..., Any]]:
    """The forms the composite reduction rows declare in ``namespace`` (``"nn"``,
    ``"scipy.special"``), name -> function."""
    return {
        n: _form(r, namespace) for n, r in reduction_forms(namespace).items() if r.numpy in _KINDS
    }
