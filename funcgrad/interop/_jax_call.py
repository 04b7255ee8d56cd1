"""The ``jax_call`` primitive: an opaque call of a foreign JAX function.

Params: ``fun`` (the JAX function, hashed by identity), ``in_tree`` (the
treedef of ``(args, kwargs)`` its flat operands rebuild), ``out_tree`` (the
treedef of its result) and ``name`` (for printing). Every rule derives a new
JAX function from ``fun`` — its JVP, its pullback, its batched version —
through JAX's own transformations, and binds ``jax_call`` of that. Derived
functions are cached, so the same transform of the same function always
yields the same param objects (stable program keys and ``jit`` caches).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

from funcgrad.core import compile_cache, dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules

FAMILY = "interop"

jax_call_p = Primitive("jax_call", family=FAMILY, multiple_results=True)


@functools.cache
def _flat_tree(n: int) -> Any:
    """The ``in_tree`` of a derived function taking ``n`` positional arrays."""
    return tree_util.tree_structure((tuple(range(n)), {}))


@functools.cache
def _flat_out_tree(n: int) -> Any:
    """The ``out_tree`` of a derived function returning a list of ``n`` arrays."""
    return tree_util.tree_structure(list(range(n)))


def _inexact(dtype: Any) -> bool:
    return dtypes.is_inexact(np.dtype(dtype))


def _derive(key: tuple, make: Callable[[], Callable]) -> Callable:
    """A derived function (flattened, jitted, JVP, pullback, batched), keyed by what it
    derives from (the foreign function itself, held by the key); kept in the one compile
    cache, so it is bounded and ``funcgrad.clear_caches()`` drops it."""
    return compile_cache.cached(key, make, kind="interop")


def _flat(fun: Callable, in_tree: Any) -> Callable:
    """``fun`` as a function of its flat operands returning the flat list of its outputs."""

    def make() -> Callable:
        def flat(*vals: Any) -> list:
            args, kwargs = tree_util.tree_unflatten(in_tree, vals)
            return tree_util.tree_leaves(fun(*args, **kwargs))

        flat.__name__ = getattr(fun, "__name__", "fun")
        return flat

    return _derive(("flat", fun, in_tree), make)


def _jitted(fun: Callable, in_tree: Any) -> Callable:
    return _derive(("jit", fun, in_tree), lambda: jax.jit(_flat(fun, in_tree)))


@compile_cache.register_lru_kind("jax_call_shapes")
@functools.lru_cache(maxsize=4096)
def _eval_shape(fun: Callable, in_tree: Any, avals: tuple[Aval, ...]) -> tuple[Any, list[Aval]]:
    args, kwargs = tree_util.tree_unflatten(
        in_tree, [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    )
    out = jax.eval_shape(fun, *args, **kwargs)
    leaves, out_tree = tree_util.tree_flatten(out)
    return out_tree, [
        Aval(tuple(x.shape), x.dtype, bool(getattr(x, "weak_type", False))) for x in leaves
    ]


# --------------------------------------------------------------------------- rules


@jax_call_p.def_abstract_eval
def _jax_call_abstract_eval(
    *avals: Aval, fun: Callable, in_tree: Any, out_tree: Any, name: str
) -> list[Aval]:
    if len(avals) != in_tree.num_leaves:
        raise TypeError(
            f"jax_call of {name}: expected {in_tree.num_leaves} operands, got {len(avals)}"
        )
    got_tree, out_avals = _eval_shape(fun, in_tree, tuple(avals))
    if got_tree != out_tree:
        raise TypeError(
            f"jax_call of {name}: the function returned a pytree {got_tree}, expected {out_tree}"
        )
    return out_avals


@jax_call_p.def_lower
def _jax_call_lower(*vals: Any, fun: Callable, in_tree: Any, out_tree: Any, name: str) -> list:
    return list(_jitted(fun, in_tree)(*vals))


def _out_avals(primals: Sequence[Any], fun: Callable, in_tree: Any) -> list[Aval]:
    return _eval_shape(fun, in_tree, tuple(to_aval(p) for p in primals))[1]


def _jvp_fun(fun: Callable, in_tree: Any, nz: tuple[bool, ...]) -> Callable:
    """``(*primals, *tangents of nz inputs) -> (*outs, *tangents of inexact outs)``."""

    def make() -> Callable:
        f = _flat(fun, in_tree)
        n = len(nz)
        idx = [i for i, z in enumerate(nz) if z]

        def jvp_flat(*vals: Any) -> list:
            prim, tans = list(vals[:n]), list(vals[n:])

            def g(*diff: Any) -> list:
                full = list(prim)
                for i, d in zip(idx, diff):
                    full[i] = d
                return f(*full)

            outs, touts = jax.jvp(g, [prim[i] for i in idx], tans)
            return list(outs) + [t for o, t in zip(outs, touts) if _inexact(o.dtype)]

        jvp_flat.__name__ = f"jvp_{f.__name__}"
        return jvp_flat

    return _derive(("jvp", fun, in_tree, nz), make)


@jax_call_p.def_jvp
def _jax_call_jvp(
    primals: list, tangents: list, *, fun: Callable, in_tree: Any, out_tree: Any, name: str
) -> tuple[list, list]:
    in_avals = [to_aval(p) for p in primals]
    nz = tuple(not is_zero(t) and _inexact(a.dtype) for t, a in zip(tangents, in_avals))
    out_avals = _out_avals(primals, fun, in_tree)
    n_out = len(out_avals)
    n_tout = sum(_inexact(a.dtype) for a in out_avals)
    tans = [t for t, z in zip(tangents, nz) if z]
    res = bind(
        jax_call_p,
        *primals,
        *tans,
        fun=_jvp_fun(fun, in_tree, nz),
        in_tree=_flat_tree(len(primals) + len(tans)),
        out_tree=_flat_out_tree(n_out + n_tout),
        name=f"jvp_{name}",
    )
    outs, rest = res[:n_out], iter(res[n_out:])
    touts = [next(rest) if _inexact(a.dtype) else Zero(a.strip_weak()) for a in out_avals]
    return outs, touts


def _vjp_fun(fun: Callable, in_tree: Any, diff: tuple[bool, ...]) -> Callable:
    """``(*primals, *cotangents of inexact outs) -> cotangents of the diff inputs``.

    Recomputes the forward pass inside the backward call (no residuals cross
    the foreign boundary besides the primal inputs).
    """

    def make() -> Callable:
        f = _flat(fun, in_tree)
        n = len(diff)
        idx = [i for i, d in enumerate(diff) if d]

        def vjp_flat(*vals: Any) -> list:
            prim, cts = list(vals[:n]), list(vals[n:])

            def g(*d: Any) -> list:
                full = list(prim)
                for i, x in zip(idx, d):
                    full[i] = x
                return [o for o in f(*full) if _inexact(o.dtype)]

            _, pullback = jax.vjp(g, *[prim[i] for i in idx])
            return list(pullback(cts))

        vjp_flat.__name__ = f"vjp_{f.__name__}"
        return vjp_flat

    return _derive(("vjp", fun, in_tree, diff), make)


def _jax_call_vjp_fwd(
    *primals: Any, fun: Callable, in_tree: Any, out_tree: Any, name: str
) -> tuple[list, list]:
    outs = bind(jax_call_p, *primals, fun=fun, in_tree=in_tree, out_tree=out_tree, name=name)
    return outs, list(primals)


def _jax_call_vjp_bwd(
    res: list, cts: list, *, fun: Callable, in_tree: Any, out_tree: Any, name: str
) -> list:
    primals = res
    diff = tuple(_inexact(to_aval(p).dtype) for p in primals)
    if not any(diff):
        return [None] * len(primals)
    out_avals = _out_avals(primals, fun, in_tree)
    ct_in = [
        rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, out_avals) if _inexact(a.dtype)
    ]
    got = iter(
        bind(
            jax_call_p,
            *primals,
            *ct_in,
            fun=_vjp_fun(fun, in_tree, diff),
            in_tree=_flat_tree(len(primals) + len(ct_in)),
            out_tree=_flat_out_tree(sum(diff)),
            name=f"vjp_{name}",
        )
    )
    return [next(got) if d else None for d in diff]


jax_call_p.vjp_fwd = _jax_call_vjp_fwd
jax_call_p.vjp_bwd = _jax_call_vjp_bwd


def _vmap_fun(fun: Callable, in_tree: Any, dims: tuple[int | None, ...]) -> Callable:
    def make() -> Callable:
        f = _flat(fun, in_tree)
        vf = jax.vmap(lambda *vals: f(*vals), in_axes=dims, out_axes=0)
        vf.__name__ = f"vmap_{f.__name__}"
        return vf

    return _derive(("vmap", fun, in_tree, dims), make)


@jax_call_p.def_batch
def _jax_call_batch(
    args: list, dims: list, *, fun: Callable, in_tree: Any, out_tree: Any, name: str
) -> tuple[list, list]:
    n_out = out_tree.num_leaves
    outs = bind(
        jax_call_p,
        *args,
        fun=_vmap_fun(fun, in_tree, tuple(dims)),
        in_tree=_flat_tree(len(args)),
        out_tree=_flat_out_tree(n_out),
        name=f"vmap_{name}",
    )
    return outs, [0] * n_out


def _example_fun(x: Any, scale: dict) -> tuple:
    return jnp.sin(x) * scale["a"], {"e": jnp.exp(x) + jnp.sum(scale["a"] ** 2)}


def _example_int_fun(x: Any, k: Any) -> list:
    return [x * k, jnp.cumsum(x, axis=0) ** 2]


@jax_call_p.def_examples
def _jax_call_examples(rng: np.random.Generator) -> list[Example]:
    x, a = rules.rand(rng, (3,)), rules.rand(rng, (3,))
    ex1_in = tree_util.tree_structure(((x, {"a": a}), {}))
    ex1_out = _eval_shape(_example_fun, ex1_in, (to_aval(x), to_aval(a)))[0]
    y, k = rules.rand(rng, (2, 3)), rules.rand(rng, (2, 3), "int32", 1, 3)
    ex2_in = tree_util.tree_structure(((y, k), {}))
    ex2_out = _eval_shape(_example_int_fun, ex2_in, (to_aval(y), to_aval(k)))[0]
    return [
        Example([x, a], {"fun": _example_fun, "in_tree": ex1_in, "out_tree": ex1_out, "name": "f"}),
        Example(
            [y, k],
            {"fun": _example_int_fun, "in_tree": ex2_in, "out_tree": ex2_out, "name": "g"},
            diff_argnums=(0,),
            smooth=True,
        ),
    ]


# --------------------------------------------------------------------------- public API


def jax_call(fun: Callable, *args: Any, name: str | None = None, **kwargs: Any) -> Any:
    """Call the JAX function ``fun(*args, **kwargs)`` as one ``jax_call`` equation."""
    fun = _hashable(fun)
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    avals = []
    for x in leaves:
        try:
            avals.append(to_aval(x))
        except TypeError:
            raise TypeError(
                f"from_jax({getattr(fun, '__name__', fun)}): argument leaf {x!r} of type "
                f"{type(x).__name__} is not an array; pass non-array arguments with "
                "static_argnums"
            ) from None
    out_tree, _ = _eval_shape(fun, in_tree, tuple(avals))
    outs = bind(
        jax_call_p,
        *leaves,
        fun=fun,
        in_tree=in_tree,
        out_tree=out_tree,
        name=name or getattr(fun, "__name__", "fun"),
    )
    return tree_util.tree_unflatten(out_tree, outs)


_BY_ID: dict[int, tuple[Any, Callable]] = {}


def _hashable(fun: Callable) -> Callable:
    """``fun`` itself, or for an unhashable callable a stable wrapper hashed by identity."""
    try:
        hash(fun)
        return fun
    except TypeError:
        hit = _BY_ID.get(id(fun))
        if hit is None or hit[0] is not fun:

            def by_id(*args: Any, **kwargs: Any) -> Any:
                return fun(*args, **kwargs)

            by_id.__name__ = getattr(fun, "__name__", type(fun).__name__)
            hit = _BY_ID[id(fun)] = (fun, by_id)  # holds ``fun``: its id stays unique
        return hit[1]


def _with_statics(fun: Callable, statics: tuple[tuple[int, Any], ...], nargs: int) -> Callable:
    """``fun`` with the static positional arguments baked in (cached: stable identity)."""

    def make() -> Callable:
        static_pos = dict(statics)

        def bound(*dyn: Any, **kwargs: Any) -> Any:
            it = iter(dyn)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(nargs)]
            return fun(*full, **kwargs)

        bound.__name__ = getattr(fun, "__name__", "fun")
        return bound

    return _derive(("static", fun, statics, nargs), make)


def from_jax(
    fun: Callable, *, static_argnums: int | Sequence[int] = (), name: str | None = None
) -> Callable:
    """Wrap the JAX-traceable ``fun`` (pytrees of arrays in and out) as a funcgrad function.

    Each call binds one opaque ``jax_call`` equation: shapes come from
    ``jax.eval_shape``; ``fg.jit`` compiles it as part of the program;
    ``fg.jvp``/``fg.grad``/``fg.vmap`` use ``jax.jvp``/``jax.vjp``/``jax.vmap`` of
    ``fun``. ``static_argnums`` name positional arguments that are not arrays
    (they must be hashable).

    Example:
        >>> import optax
        >>> opt = optax.adam(1e-3)
        >>> update = from_jax(opt.update)   # usable inside fg.jit
    """
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    label = name or getattr(fun, "__name__", "fun")
    target = _hashable(fun)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not statics:
            return jax_call(target, *args, name=label, **kwargs)
        n = len(args)
        pos = sorted({i % n for i in statics if -n <= i < n})
        static_vals = tuple((i, args[i]) for i in pos)
        try:
            hash(static_vals)
        except TypeError:
            raise ValueError(f"from_jax({label}): static arguments must be hashable") from None
        dyn = [a for i, a in enumerate(args) if i not in set(pos)]
        return jax_call(_with_statics(target, static_vals, n), *dyn, name=label, **kwargs)

    return wrapped
