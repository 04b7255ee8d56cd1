"""``fg.jit``: trace once per abstract signature, lower to ``jax.lax``, compile with XLA.

Called eagerly, a jitted function is one ``jax.jit`` call: the function
``jax.jit`` traces is "trace with funcgrad, then lower the funcgrad program", so
argument flattening, the signature check and the executable cache all run in
JAX's C++ dispatch path and funcgrad adds no Python per call. Closed-over arrays
larger than ``_EMBED_LIMIT`` bytes would be embedded in the executable that way;
such functions use funcgrad's own dispatch, which passes them as arguments.
Called inside another transform (``grad(jit(f))``), it binds one ``jit_call``
equation holding its program, so the inner function stays one unit: it is
transformed as a whole and lowered once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax

from funcgrad import passes
from funcgrad.core.interp import Tracer, _state, new_builder, to_aval
from funcgrad.core.ir import Program, aval_of
from funcgrad.lowering import lower_program
from funcgrad.primitives.calls import close
from funcgrad.tree import broadcast_prefix, tree_flatten, tree_unflatten

_EMBED_LIMIT = 1 << 20  # bytes of closed-over constants jax.jit may embed in an executable


class _ConstsTooLarge(Exception):
    """Raised inside jax.jit's trace to fall back to funcgrad's dispatch."""


def _as_tuple(x: int | Sequence[int] | None) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, (int, str)) else tuple(x)


class _Entry:
    __slots__ = ("_lowered", "call_prog", "compiled", "consts", "out_tree", "program")

    def __init__(self, program: Program, out_tree: Any) -> None:
        self.program = program
        self.out_tree = out_tree
        self.consts = list(program.consts)
        self.call_prog = close(program)[0]
        self.compiled: Any = None
        self._lowered: Any = None

    @property
    def lowered(self) -> Any:
        """The program as a function over ``jax.lax``, built on first use (binding a
        ``jit_call`` under another transform never needs it)."""
        if self._lowered is None:
            self._lowered = lower_program(self.program)
        return self._lowered

    def const_bytes(self) -> int:
        return sum(int(getattr(c, "nbytes", 0)) for c in self.consts)


class Jitted:
    """A function compiled through XLA, cached per abstract signature and static values."""

    def __init__(
        self,
        fun: Callable,
        static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (),
        donate_argnums: int | Sequence[int] = (),
        in_shardings: Any = None,
        out_shardings: Any = None,
    ) -> None:
        self.fun = fun
        self.static_argnums = _as_tuple(static_argnums)
        self.static_argnames = _as_tuple(static_argnames)
        self.donate_argnums = _as_tuple(donate_argnums)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self._cache: dict[Any, _Entry] = {}
        self._fast: dict[Any, _Entry] = {}  # funcgrad-dispatch cache for the no-static call
        self.trace_count = 0
        # updated=(): never copy a wrapped function's __dict__ (a Jitted inside grad would
        # otherwise overwrite this object's fun and cache)
        functools.update_wrapper(self, fun, updated=())
        self._dispatch: Any = None
        if in_shardings is None and out_shardings is None:
            self._dispatch = self._make_dispatch()

    def _make_dispatch(self) -> Any:
        """``jax.jit`` of "trace with funcgrad, lower": JAX's C++ path does the dispatch."""

        def body(*args: Any, **kwargs: Any) -> Any:
            # funcgrad traces with its own tracers; JAX operations the user applies to
            # concrete (closed-over) arrays while it traces must stay concrete, not
            # become tracers of this jax.jit (they would leak into the cached program)
            with jax.ensure_compile_time_eval():
                entry, leaves = self._entry(args, kwargs)
            if entry.const_bytes() > _EMBED_LIMIT:
                raise _ConstsTooLarge
            return tree_unflatten(entry.out_tree, entry.lowered(*entry.consts, *leaves))

        body.__name__ = body.__qualname__ = self._name()
        return jax.jit(
            body,
            static_argnums=self.static_argnums,
            static_argnames=self.static_argnames,
            donate_argnums=self.donate_argnums,
        )

    # ------------------------------------------------------------------ signature
    def _split(self, args: tuple, kwargs: dict) -> tuple:
        n = len(args)
        statics = tuple(i % n for i in self.static_argnums if -n <= i < n)
        static_vals = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in statics:
                try:
                    hash(a)
                except TypeError:
                    raise ValueError(
                        f"jit: static argument {i} of type {type(a).__name__} is not hashable"
                    ) from None
                static_vals.append((i, a))
            else:
                dyn_args.append(a)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, tree = tree_flatten((tuple(dyn_args), dyn_kw))
        return statics, tuple(static_vals), static_kw, leaves, tree

    def _entry(self, args: tuple, kwargs: dict) -> tuple[_Entry, list]:
        statics, static_vals, static_kw, leaves, tree = self._split(args, kwargs)
        avals = tuple(to_aval(x) for x in leaves)
        key = (static_vals, static_kw, tree, avals)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, statics, leaves, tree, avals)
            if not any(isinstance(c, Tracer) for c in entry.consts):
                self._cache[key] = entry
        return entry, leaves

    def _trace(self, args, kwargs, statics, leaves, tree, avals) -> _Entry:
        self.trace_count += 1
        with new_builder("jit") as b:
            tracers = [b.new_arg(a) for a in avals]
            dyn_args, dyn_kw = tree_unflatten(tree, tracers)
            it = iter(dyn_args)
            full = [a if i in statics else next(it) for i, a in enumerate(args)]
            kw = {**kwargs, **dyn_kw}
            out = self.fun(*full, **kw)
            out_leaves, out_tree = tree_flatten(out)
            for o in out_leaves:
                if not isinstance(o, Tracer):
                    aval_of(o)  # raises a clear TypeError for non-arrays
            prog = b.build(out_leaves)
        prog = passes.prune_constvars(passes.simplify(prog))
        return _Entry(prog, out_tree)

    def _compile(self, entry: _Entry, args: tuple, leaves: list) -> Any:
        n_consts = len(entry.consts)
        kw: dict[str, Any] = {}
        if self.donate_argnums:
            donated = []
            n = len(args)
            dyn_positions = [i for i in range(n) if i not in {j % n for j in self.static_argnums}]
            offset = n_consts
            for pos in dyn_positions:
                count = len(jax.tree_util.tree_leaves(args[pos]))
                if pos in {d % n for d in self.donate_argnums}:
                    donated.extend(range(offset, offset + count))
                offset += count
            kw["donate_argnums"] = tuple(donated)
        if self.in_shardings is not None:
            n = len(args)
            dyn = tuple(
                a for i, a in enumerate(args) if i not in {j % n for j in self.static_argnums}
            )
            per_leaf = broadcast_prefix(self.in_shardings, dyn, "jit", "in_shardings")
            kw["in_shardings"] = tuple([None] * n_consts + per_leaf)
        if self.out_shardings is not None:
            kw["out_shardings"] = self._out_shardings_flat(entry)
        return jax.jit(entry.lowered, **kw)

    def _out_shardings_flat(self, entry: _Entry) -> Any:
        dummy = tree_unflatten(entry.out_tree, [0] * entry.out_tree.num_leaves)
        return broadcast_prefix(self.out_shardings, dummy, "jit", "out_shardings")

    # ------------------------------------------------------------------ calls
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._dispatch is not None and not _state.stack:
            if self.static_argnums or self.static_argnames:
                _check_hashable(self.static_argnums, self.static_argnames, args, kwargs)
            try:
                return self._dispatch(*args, **kwargs)
            except _ConstsTooLarge:
                self._dispatch = None
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        """funcgrad's own dispatch: binds ``jit_call`` under a trace, else runs the
        executable compiled with the closed-over constants as arguments."""
        fast_key = None
        if not kwargs and not self.static_argnums and not _state.stack:
            leaves, tree = tree_flatten(args)
            try:
                fast_key = (tree, *map(_leaf_key, leaves))
                entry = self._fast.get(fast_key)
            except TypeError:
                fast_key, entry = None, None
            if entry is not None:
                return tree_unflatten(entry.out_tree, entry.compiled(*entry.consts, *leaves))
        entry, leaves = self._entry(args, kwargs)
        if _state.stack:
            from funcgrad.primitives.calls import jit_call

            outs = jit_call(entry.call_prog, *entry.consts, *leaves, name=self._name())
        else:
            if entry.compiled is None:
                entry.compiled = self._compile(entry, args, leaves)
            if fast_key is not None and entry.consts is not None:
                self._fast[fast_key] = entry
            outs = entry.compiled(*entry.consts, *leaves)
        return tree_unflatten(entry.out_tree, outs)

    def _name(self) -> str:
        return getattr(self.fun, "__name__", "fun")

    def trace(self, *args: Any, **kwargs: Any) -> Program:
        """The (simplified) Program this function compiles for these arguments."""
        entry, _ = self._entry(args, kwargs)
        return entry.program

    def lower(self, *args: Any, **kwargs: Any) -> str:
        """The lowered text (StableHLO) XLA compiles for these arguments."""
        if self._dispatch is not None:
            try:
                return self._dispatch.lower(*args, **kwargs).as_text()
            except _ConstsTooLarge:
                self._dispatch = None
        entry, leaves = self._entry(args, kwargs)
        if entry.compiled is None:
            entry.compiled = self._compile(entry, args, leaves)
        return entry.compiled.lower(*entry.consts, *leaves).as_text()

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()
        if self._dispatch is not None:
            self._dispatch.clear_cache()


def _check_hashable(argnums: tuple, argnames: tuple, args: tuple, kwargs: dict) -> None:
    """funcgrad's error (naming the argument) for an unhashable static value."""
    n = len(args)
    named = [(f"argument {i % n}", args[i]) for i in argnums if -n <= i < n]
    named += [(f"argument '{k}'", kwargs[k]) for k in argnames if k in kwargs]
    for what, value in named:
        try:
            hash(value)
        except TypeError:
            raise ValueError(
                f"jit: static {what} of type {type(value).__name__} is not hashable"
            ) from None


def _leaf_key(x: Any) -> Any:
    """A cheap hashable summary of a leaf's abstract value for the dispatch cache."""
    t = type(x)
    if t in (bool, int, float, complex):
        return t
    return (x.shape, x.dtype, getattr(x, "weak_type", False))


def jit(
    fun: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Any:
    """Compile ``fun`` through XLA; usable as ``@jit`` or ``@jit(static_argnums=...)``."""
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
        )
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, in_shardings, out_shardings)
