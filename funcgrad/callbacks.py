"""``pure_callback`` and ``io_callback``: call back into Python (NumPy, SciPy, any host
code) from a traced program, as ``jax.pure_callback`` and ``jax.experimental.io_callback``.

The callback is declared pure: it may be removed when its results are unused, run
more than once, and is not differentiable (as in JAX: wrap it in ``custom_jvp`` /
``custom_vjp`` to give it derivatives). Under ``vmap`` it runs per example
(``"sequential"``), once on the batch with unbatched arguments given a leading axis
of size 1 (``"expand_dims"``), broadcast (``"broadcast_all"``) or as they are
(``"legacy_vectorized"``, JAX's former ``vectorized=True``); with no
``vmap_method`` batching raises, as JAX does.

``io_callback`` is for callbacks with side effects (printing, host random state, I/O):
its primitive is effectful, so it runs once per call, is never removed (even with its
results unused) nor merged; ``ordered=True`` keeps the calls in program order and
refuses ``vmap``; unordered ones run once per example under ``vmap``. Neither is
differentiable: a derivative through one is JAX's ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.experimental import io_callback as jax_io_callback

from funcgrad.control_flow import scan
from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.numpy._core import prep
from funcgrad.primitives.rules import bdim_to_front, rand
from funcgrad.primitives.shape import reshape

FAMILY = "callbacks"

VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
)

pure_callback_p = Primitive("pure_callback", family=FAMILY, multiple_results=True)


class FlatCallback:
    """The user's callback on flat NumPy arguments, returning flat NumPy results checked
    against the declared shapes and dtypes. Hashable by the user's function, so a
    program calling the same function twice is cached once."""

    def __init__(
        self,
        fun: Callable,
        in_tree: Any,
        out_tree: Any,
        result_avals: tuple,
        api: str = "pure_callback",
    ) -> None:
        self.fun, self.in_tree, self.out_tree, self.result_avals = (
            fun,
            in_tree,
            out_tree,
            result_avals,
        )
        self.api = api  # the public function, for errors

    def _key(self) -> tuple:
        return (self.fun, self.in_tree, self.out_tree, self.result_avals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FlatCallback) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self, *flat: Any) -> tuple:
        """Run the user's callback on host arrays; its flat results, checked against the
        declared shapes and dtypes."""
        args, kwargs = jax.tree_util.tree_unflatten(self.in_tree, [np.asarray(a) for a in flat])
        res = self.fun(*args, **kwargs)
        leaves, tree = jax.tree_util.tree_flatten(res)
        if tree != self.out_tree:
            raise TypeError(
                f"{self.api}: the callback {_name(self.fun)} returned a value with structure "
                f"{tree}, but result_shape_dtypes declares {self.out_tree}"
            )
        out = []
        for i, (leaf, want) in enumerate(zip(leaves, self.result_avals)):
            a = np.asarray(leaf)
            if a.shape != want.shape or a.dtype != want.dtype:
                raise TypeError(
                    f"{self.api}: result {i} of the callback {_name(self.fun)} is "
                    f"{a.dtype}{list(a.shape)}, but result_shape_dtypes declares "
                    f"{want.dtype}{list(want.shape)}"
                )
            out.append(a)
        return tuple(out)


def _name(fun: Callable) -> str:
    return getattr(fun, "__qualname__", None) or repr(fun)


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(*avals: Aval, callback: FlatCallback, vmap_method: Any) -> list:
    return list(callback.result_avals)


@pure_callback_p.def_lower
def _pure_callback_lower(*vals: Any, callback: FlatCallback, vmap_method: Any) -> list:
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in callback.result_avals]
    # the batching rule below decides how batches reach the callback; JAX sees one call
    return list(jax.pure_callback(callback, shapes, *vals, vmap_method="sequential"))


_SCALARS = (bool, int, float, complex)


def _host_arg(v: Any) -> np.ndarray:
    """A host value as the compiled tier hands it to a callback: an array (a weakly typed
    Python scalar in its canonical dtype), read-only, as the views of XLA's buffers are
    (a callback writing to it would change a value the program still holds)."""
    if type(v) in _SCALARS:
        v = np.asarray(v, dtypes.python_scalar_dtype(v))
    elif type(v) is not np.ndarray:  # a NumPy scalar
        v = np.asarray(v)
    if v.flags.writeable:
        v = v.view()
        v.flags.writeable = False
    return v


@pure_callback_p.def_host
def _pure_callback_host(*vals: Any, callback: FlatCallback, vmap_method: Any) -> list:
    # the user's function on the values directly (no device round trip); FlatCallback
    # checks the results' structure, shapes and dtypes as on the compiled tier
    return list(callback(*[_host_arg(v) for v in vals]))


@pure_callback_p.def_jvp
def _pure_callback_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `funcgrad.custom_jvp` (or "
        "`custom_vjp`) to use callbacks while taking gradients."
    )


@pure_callback_p.def_vjp
def _pure_callback_vjp(cts: list, *args: Any, out: Any, **params: Any) -> tuple:
    # reverse mode differentiates through the JVP in JAX; its message is the one users see
    _pure_callback_jvp([], [])


@pure_callback_p.def_batch
def _pure_callback_batch(args: list, dims: list, *, callback: FlatCallback, vmap_method: Any):
    size = next(to_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for pure_callback when vmap_method is set: pass "
            "vmap_method='sequential', 'expand_dims' or 'broadcast_all' to "
            f"funcgrad.pure_callback (callback {_name(callback.fun)})"
        )
    if vmap_method in ("sequential", "sequential_unrolled"):
        front = [bdim_to_front(a, d, size) if d is not None else a for a, d in zip(args, dims)]
        batched = [d is not None for d in dims]

        def body(carry: Any, xs: list) -> tuple:
            it = iter(xs)
            call = [next(it) if b else a for a, b in zip(front, batched)]
            return carry, tuple(bind(pure_callback_p, *call, callback=callback, vmap_method=None))

        _, outs = scan(body, 0, [a for a, b in zip(front, batched) if b], length=size)
        return list(outs), [0] * len(outs)

    front = []
    for a, d in zip(args, dims):
        if d is not None:
            front.append(bdim_to_front(a, d, size))
        elif vmap_method == "expand_dims":
            front.append(reshape(a, (1, *to_aval(a).shape)))
        elif vmap_method == "legacy_vectorized":  # (JAX's old vectorized=True)
            front.append(a)
        else:
            front.append(bdim_to_front(a, None, size))
    batched_avals = tuple(Aval((size, *a.shape), a.dtype) for a in callback.result_avals)
    inner = FlatCallback(callback.fun, callback.in_tree, None, batched_avals)
    inner.out_tree = jax.tree_util.tree_structure(
        jax.tree_util.tree_unflatten(callback.out_tree, [0] * len(batched_avals))
    )
    outs = bind(pure_callback_p, *front, callback=inner, vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


def _example_fun(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.sin(x) * y


def _examples(rng: np.random.Generator) -> list[Example]:
    x, y = rand(rng, (3,)), rand(rng, (3,))
    tree = jax.tree_util.tree_structure(((0, 0), {}))
    cb = FlatCallback(
        _example_fun,
        tree,
        jax.tree_util.tree_structure(0),
        (Aval((3,), x.dtype),),
    )
    return [Example([x, y], {"callback": cb, "vmap_method": "sequential"}, diff_argnums=())]


pure_callback_p.examples = _examples


def pure_callback(
    callback: Callable,
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call ``callback(*args, **kwargs)`` on NumPy arrays from inside a traced program.

    ``result_shape_dtypes`` is a pytree of objects with ``shape`` and ``dtype`` (e.g.
    ``jax.ShapeDtypeStruct``) declaring what the callback returns. ``sharding`` is
    accepted for JAX's signature (funcgrad runs callbacks on the host, as JAX does
    for single-device programs).

        >>> import numpy as np, jax, funcgrad as fg
        >>> f = lambda x: fg.pure_callback(np.sin, jax.ShapeDtypeStruct((), np.float32), x)
        >>> float(fg.jit(f)(np.float32(0.0)))
        0.0
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be one of the allowed methods {list(VMAP_METHODS)}, but "
            f"got: {vmap_method!r}"
        )

    cb, flat = _flat_callback("pure_callback", callback, result_shape_dtypes, args, kwargs)
    outs = bind(pure_callback_p, *flat, callback=cb, vmap_method=vmap_method)
    return jax.tree_util.tree_unflatten(cb.out_tree, list(outs))


def _flat_callback(
    api: str, callback: Callable, result_shape_dtypes: Any, args: tuple, kwargs: dict
) -> tuple[FlatCallback, list]:
    """The user's callback on flat arguments, and those arguments as operands."""

    def to_result_aval(s: Any) -> Aval:
        if not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise TypeError(
                f"{api}: result_shape_dtypes must be a pytree of values with .shape "
                f"and .dtype (e.g. jax.ShapeDtypeStruct), got {s!r}"
            )
        return Aval(tuple(s.shape), dtypes.canonicalize(np.dtype(s.dtype)))

    result_avals, out_tree = jax.tree_util.tree_flatten(
        jax.tree_util.tree_map(to_result_aval, result_shape_dtypes)
    )
    flat, in_tree = jax.tree_util.tree_flatten((args, kwargs))
    flat = [prep(a, api) for a in flat]
    return FlatCallback(callback, in_tree, out_tree, tuple(result_avals), api), flat


# -- io_callback ------------------------------------------------------------------------

#: effectful (``funcgrad.passes``: never removed or merged); runs in program order
io_callback_p = Primitive("io_callback", family=FAMILY, multiple_results=True, effectful=True)


@io_callback_p.def_abstract_eval
def _io_callback_abstract_eval(*avals: Aval, callback: FlatCallback, ordered: bool) -> list:
    return list(callback.result_avals)


@io_callback_p.def_lower
def _io_callback_lower(*vals: Any, callback: FlatCallback, ordered: bool) -> list:
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in callback.result_avals]
    return list(jax_io_callback(callback, shapes, *vals, ordered=ordered))


@io_callback_p.def_host
def _io_callback_host(*vals: Any, callback: FlatCallback, ordered: bool) -> list:
    # once, now: a host plan runs its equations once each, in program order
    return list(callback(*[_host_arg(v) for v in vals]))


@io_callback_p.def_jvp
def _io_callback_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    raise ValueError("IO callbacks do not support JVP.")


@io_callback_p.def_vjp
def _io_callback_vjp(cts: list, *args: Any, out: Any, **params: Any) -> tuple:
    _io_callback_jvp([], [])


@io_callback_p.def_batch
def _io_callback_batch(args: list, dims: list, *, callback: FlatCallback, ordered: bool):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = next(to_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    front = [bdim_to_front(a, d, size) if d is not None else a for a, d in zip(args, dims)]
    batched = [d is not None for d in dims]

    def body(carry: Any, xs: list) -> tuple:  # one call per example, in order
        it = iter(xs)
        call = [next(it) if b else a for a, b in zip(front, batched)]
        return carry, tuple(bind(io_callback_p, *call, callback=callback, ordered=False))

    _, outs = scan(body, 0, [a for a, b in zip(front, batched) if b], length=size)
    return list(outs), [0] * len(outs)


def _io_examples(rng: np.random.Generator) -> list[Example]:
    x = rand(rng, (3,))
    tree = jax.tree_util.tree_structure(((0, 0), {}))
    out = jax.tree_util.tree_structure(0)
    cb = FlatCallback(_example_fun, tree, out, (Aval((3,), x.dtype),), "io_callback")
    return [Example([x, x * 2.0], {"callback": cb, "ordered": False}, diff_argnums=())]


io_callback_p.examples = _io_examples


def io_callback(
    callback: Callable,
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Call ``callback(*args, **kwargs)``, a function with side effects, on NumPy arrays
    from inside a traced program (``jax.experimental.io_callback``).

    ``result_shape_dtypes`` declares what it returns, as for :func:`pure_callback`.
    Every call runs, once, even if its results are unused; ``ordered=True`` runs the
    calls in program order (and cannot be ``vmap``-ed); not differentiable.
    ``sharding`` is accepted for JAX's signature.

        >>> import numpy as np, jax, funcgrad as fg
        >>> from funcgrad.experimental import io_callback
        >>> seen = []
        >>> f = lambda x: io_callback(seen.append, None, x)
        >>> _ = fg.jit(f)(np.float32(2.0)); [float(v) for v in seen]
        [2.0]
    """
    cb, flat = _flat_callback("io_callback", callback, result_shape_dtypes, args, kwargs)
    outs = bind(io_callback_p, *flat, callback=cb, ordered=bool(ordered))
    return jax.tree_util.tree_unflatten(cb.out_tree, list(outs))
