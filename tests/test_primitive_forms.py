"""The public forms funcgrad generates from its primitives' rows (``public=`` on a row in
``funcgrad/primitives/``), checked against JAX's namespaces; nothing is listed by hand.

Each declared form must be exported (in ``__all__`` where the namespace has one), be what
JAX's namespace has under that name (a function, with the same parameter names, the same
object as its aliases exactly when JAX's are), carry the row's docstring (its namespace's own where it has one), and compute
JAX's values on the input domain the row declares. That the names funcgrad exported
before are all still there is the coverage page's check (tests/test_jax_coverage.py
renders docs/jax-coverage.md again); ``test_callable_kinds_match_jax`` adds that every
name funcgrad shares with JAX's namespaces is the same kind of object.
"""

from __future__ import annotations

import importlib
import inspect
import types

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
import pytest

import funcgrad.scipy.special  # (its rows: xlogy; funcgrad.grad below)
from funcgrad.primitives import public_doc, public_forms

JAX = {"numpy": jnp, "lax": jax.lax, "nn": jax.nn, "scipy.special": jax.scipy.special}
FORMS = [pytest.param(ns, name, id=f"{ns}.{name}") for ns in JAX for name in public_forms(ns)]


def _required(f):
    """``f``'s parameters without a default, as (name, positional only)."""
    params = inspect.signature(f).parameters.values()
    return [
        (p.name, p.kind is p.POSITIONAL_ONLY)
        for p in params
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _same_parameters(ours, theirs):
    """The same required parameters; a name is compared where both can be passed by it
    (a positional-only one's name is no part of the API: ``jnp.true_divide(x1, x2, /)``
    and ``(x, y, /)`` agree)."""
    a, b = _required(ours), _required(theirs)
    return len(a) == len(b) and all(p == q or (po and qo) for (p, po), (q, qo) in zip(a, b))


def _operands(prim, rng):
    """One operand per operand of ``prim`` (its arity), drawn from the domain its row
    declares for that operand (integers for an integer and bool primitive)."""
    if prim.domains is None:  # (bitwise_not, bitwise_and, ...)
        return [rng.integers(-5, 5, (2, 3)).astype(np.int32) for _ in range(prim.arity)]
    return [rng.uniform(*d, (2, 3)).astype(np.float32) for d in prim.domains]


def _kind(v):
    if isinstance(v, (types.UnionType, types.GenericAlias)) or type(v).__module__ == "typing":
        return "type alias"
    if inspect.ismodule(v):
        return "module"
    if inspect.isclass(v):
        return "class"
    return "callable" if callable(v) else "value"


def test_rows_declare_forms_in_every_namespace():
    # the generation must see the rows (or every check below passes vacuously)
    assert all(public_forms(ns) for ns in JAX)


def _mode(prim, ns, name):
    """The numpy name's own preparation (``logical_and``: ``"logical"``), if it has one."""
    return prim.numpy_modes.get(name) if ns == "numpy" else None


@pytest.mark.parametrize(("ns", "name"), FORMS)
def test_declared_form_is_exported_as_jax_has_it(ns, name):
    mod = importlib.import_module(f"funcgrad.{ns}")
    prim = public_forms(ns)[name]
    ours, theirs = getattr(mod, name), getattr(JAX[ns], name)
    assert _kind(ours) == _kind(theirs) == "callable"
    assert name in getattr(mod, "__all__", [name])
    if not isinstance(theirs, jnp.ufunc):  # (a ufunc object's parameters are *args)
        assert _same_parameters(ours, theirs), (_required(ours), _required(theirs))
    mode = _mode(prim, ns, name)
    if mode is None:  # (a name's own preparation has its own docstring: logical_and)
        assert ours.__doc__.startswith(public_doc(prim, ns))
    for other, p in public_forms(ns).items():  # a row's names of one preparation are one function
        assert (getattr(mod, other) is ours) == (p is prim and _mode(p, ns, other) == mode)
    xs = _operands(prim, np.random.default_rng(0))
    got, want = np.asarray(ours(*xs)), np.asarray(theirs(*xs))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6)


@pytest.mark.parametrize("ns", sorted(JAX))
def test_callable_kinds_match_jax(ns):
    mod = importlib.import_module(f"funcgrad.{ns}")
    shared = [n for n in dir(JAX[ns]) if not n.startswith("_") and hasattr(mod, n)]
    assert shared
    differ = {
        n: (_kind(getattr(mod, n)), _kind(getattr(JAX[ns], n)))
        for n in shared
        if _kind(getattr(mod, n)) != _kind(getattr(JAX[ns], n))
    }
    assert not differ, f"funcgrad.{ns} names of another kind than JAX's: {differ}"


TERNARY = [
    pytest.param(ns, name, id=f"{ns}.{name}")
    for ns in JAX
    for name, row in public_forms(ns).items()
    if row.arity == 3
]


def test_rows_declare_ternary_forms():
    assert {("lax", "clamp"), ("numpy", "clip"), ("numpy", "where")} <= {
        tuple(p.values) for p in TERNARY
    }


@pytest.mark.parametrize(("ns", "name"), TERNARY)
def test_ternary_form_derivatives_match_jax(ns, name):
    """A ternary form's derivatives in each operand against JAX's, on operands drawn from a
    grid of three values so that ties are common: where two operands are equal each
    library has its own convention (``lax.clamp``: none at a bound; ``jnp.clip``: half to
    each, as ``maximum``/``minimum``), which the row's form must keep."""
    mod = importlib.import_module(f"funcgrad.{ns}")
    ours, theirs = getattr(mod, name), getattr(JAX[ns], name)
    rng = np.random.default_rng(0)
    xs = [rng.integers(-1, 2, (4, 6)).astype(np.float32) for _ in range(3)]
    got = funcgrad.grad(lambda *a: ours(*a).sum(), argnums=(0, 1, 2))(*xs)
    want = jax.grad(lambda *a: theirs(*a).sum(), argnums=(0, 1, 2))(*xs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
