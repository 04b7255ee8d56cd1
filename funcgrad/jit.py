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

Traces and dispatchers are shared by every ``jit(f)`` of the same function with
the same static/donated arguments (a cache keyed weakly on ``f``), so a fresh
wrapper of a function already seen does not trace it again, as in JAX. The
executables of funcgrad's own dispatch come from the one compile cache
(:mod:`funcgrad.core.compile_cache`), keyed by program structure, so functions
that trace to the same program share one; the per-function tables are
registered with it, so ``funcgrad.clear_caches()`` and ``funcgrad.cache_info()``
cover them.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax import tree_util

from funcgrad import passes
from funcgrad._aot import Lowered, Signature, Traced
from funcgrad._jit_checks import (
    check_known_operands,
    check_nested_options,
    check_unconstrained,
    device_or_backend,
    dynamic_error,
    signature,
)
from funcgrad.api import check_callable
from funcgrad.api._tracing import broadcast_prefix
from funcgrad.core import compile_cache, sharding_types
from funcgrad.core.ad_util import close
from funcgrad.core.debug_hooks import hooks
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import Tracer, _state, new_builder, to_aval
from funcgrad.core.ir import SHARDING_TYPES, Program, aval_of, typed_sharding
from funcgrad.core.lowering import lower_program
from funcgrad.primitives.calls import jit_call
from funcgrad.tree_util import tree_flatten, tree_unflatten

_EMBED_LIMIT = 1 << 20  # bytes of closed-over constants jax.jit may embed in an executable


class _ConstsTooLarge(Exception):
    """Raised inside jax.jit's trace to fall back to funcgrad's dispatch."""


def _as_tuple(x: int | str | Sequence[Any] | None) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, (int, str)) else tuple(x)


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_P = inspect.Parameter


def _resolve_argnums(
    sig: inspect.Signature | None,
    argnums: int | Sequence[int] | None,
    argnames: str | Sequence[str] | None,
    what: str,
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete ``argnums`` from ``argnames`` or the reverse through the signature
    (when only one is given, as JAX), and check both against it (``ValueError``)."""
    nums, names = _as_tuple(argnums), _as_tuple(argnames)
    if sig is None:
        return nums, names
    params = list(sig.parameters.values())
    if argnums is None and argnames is not None:
        nums = tuple(
            i
            for i, p in enumerate(params)
            if p.kind is _P.POSITIONAL_OR_KEYWORD and p.name in names
        )
    elif argnames is None and argnums is not None:
        names = tuple(
            p.name for i, p in enumerate(params) if p.kind is _P.POSITIONAL_OR_KEYWORD and i in nums
        )
    kinds = {p.kind for p in params}
    if _P.VAR_POSITIONAL not in kinds:
        n_pos = sum(p.kind in _POSITIONAL for p in params)
        if [i for i in nums if not -n_pos <= i < n_pos]:
            raise ValueError(
                f"jit: {what}_argnums={nums} is out of range for a function that accepts "
                f"only {n_pos} positional arguments {[p.name for p in params][:n_pos]}"
                f"{where(user_frame())}"
            )
    not_keywords = {p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.VAR_POSITIONAL)}
    if bad := sorted(not_keywords & set(names)):
        raise ValueError(
            f"jit: {what}_argnames {bad} name positional-only (or *args) parameters, which "
            f"cannot be passed by keyword{where(user_frame())}"
        )
    if _P.VAR_KEYWORD not in kinds:
        keywords = {p.name for p in params if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)}
        if bad := sorted(set(names) - keywords):
            raise ValueError(
                f"jit: {what}_argnames {bad} are not parameters of the function "
                f"(it takes {list(sig.parameters)}){where(user_frame())}"
            )
    return nums, names


class _Shared:
    """What every ``jit(f)`` with one configuration shares: the trace cache, the
    funcgrad-dispatch cache and the ``jax.jit`` dispatcher. It holds no strong
    reference to ``f`` (the module cache is weakly keyed on it)."""

    __slots__ = ("__weakref__", "cache", "dispatch", "fast", "owners", "trace_count")

    def __init__(self) -> None:
        self.cache: dict[Any, _Entry] = {}
        self.fast: dict[Any, _Entry] = {}
        self.dispatch: Any = None
        self.trace_count = 0
        self.owners: weakref.WeakSet = weakref.WeakSet()  # the live wrappers
        _all_shared.add(self)


_shared_by_fun: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: every live ``_Shared`` (also those of unshared wrappers), for the compile cache
_all_shared: weakref.WeakSet = weakref.WeakSet()


def _traces_held() -> int:
    return sum(len(sh.cache) for sh in list(_all_shared))


def _clear_traces() -> None:
    for sh in list(_all_shared):
        sh.cache.clear()
        sh.fast.clear()


def _dispatch_executables() -> int:
    """Executables in the ``jax.jit`` dispatchers' tables (JAX's count, where it has one)."""
    n = 0
    for sh in list(_all_shared):
        size = getattr(sh.dispatch, "_cache_size", None)
        if size is not None:  # JAX's counter can go below zero after a clear_cache()
            n += max(size(), 0)
    return n


def _clear_dispatchers() -> None:
    for sh in list(_all_shared):
        if sh.dispatch is not None:
            sh.dispatch.clear_cache()


compile_cache.register("jit_traces", size=_traces_held, clear=_clear_traces)
compile_cache.register("jit_dispatch", size=_dispatch_executables, clear=_clear_dispatchers)


def _shared_for(fun: Callable, config: Any) -> _Shared:
    try:
        per_fun = _shared_by_fun.get(fun)
        if per_fun is None:
            per_fun = _shared_by_fun[fun] = {}
    except (TypeError, ValueError):  # not weakly referenceable or hashable: not shared
        return _Shared()
    st = per_fun.get(config)
    if st is None:
        st = per_fun[config] = _Shared()
    return st


class _Entry:
    __slots__ = ("_lowered", "call_prog", "consts", "jit_kw", "out_tree", "program")

    def __init__(self, program: Program, out_tree: Any) -> None:
        self.program = program
        self.out_tree = out_tree
        self.consts = list(program.consts)
        self.call_prog = close(program)[0]
        #: ``jax.jit``'s static arguments for this entry (donation, shardings), once known
        self.jit_kw: dict[str, Any] | None = None
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
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        in_shardings: Any = None,
        out_shardings: Any = None,
        donate_argnames: str | Sequence[str] | None = None,
        compiler_options: dict[str, Any] | None = None,
        device: Any = None,
        backend: str | None = None,
    ) -> None:
        check_callable(fun)
        self.fun = fun
        self.compiler_options = tuple(sorted((compiler_options or {}).items()))
        sig = signature(fun)
        self.static_argnums, self.static_argnames = _resolve_argnums(
            sig, static_argnums, static_argnames, "static"
        )
        self.donate_argnums, self.donate_argnames = _resolve_argnums(
            sig, donate_argnums, donate_argnames, "donate"
        )
        check_unconstrained(in_shardings, out_shardings)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        #: JAX's deprecated ``device=``/``backend=``: where every call runs
        self.device, self.backend = device_or_backend(device, backend, in_shardings, out_shardings)
        # updated=(): never copy a wrapped function's __dict__ (a Jitted inside grad would
        # otherwise overwrite this object's fun and cache)
        functools.update_wrapper(self, fun, updated=())
        if in_shardings is None and out_shardings is None and device is None and backend is None:
            config = (
                self.static_argnums,
                self.static_argnames,
                self.donate_argnums,
                self.donate_argnames,
                self.compiler_options,
            )
            self._shared = _shared_for(fun, config)
            if self._shared.dispatch is None:
                self._shared.dispatch = self._make_dispatch(self._shared)
        else:
            self._shared = _Shared()
        self._shared.owners.add(self)
        self._disp = self._shared.dispatch  # a plain attribute: read on every call

    def __getattr__(self, name: str) -> Any:
        # the wrapped function's own attributes (``f.some_value``), as JAX's jit copies
        # them; read through, not copied, so this object's own state stays its own
        if name.startswith("_") or name == "fun":
            raise AttributeError(f"'Jitted' object has no attribute {name!r}")
        try:
            return getattr(self.__dict__["fun"], name)
        except (KeyError, AttributeError):
            raise AttributeError(f"'Jitted' object has no attribute {name!r}") from None

    # the caches live in the state shared with the other wrappers of the same function
    @property
    def _cache(self) -> dict:
        return self._shared.cache

    @property
    def _fast(self) -> dict:  # funcgrad-dispatch cache for the no-static call
        return self._shared.fast

    @property
    def _dispatch(self) -> Any:
        return self._shared.dispatch

    @_dispatch.setter
    def _dispatch(self, value: Any) -> None:
        self._shared.dispatch = self._disp = value

    @property
    def trace_count(self) -> int:
        """How many times the function was traced (shared by its ``jit`` wrappers)."""
        return self._shared.trace_count

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method decorator: ``obj.method(...)`` calls this with ``obj`` first."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def _make_dispatch(self, shared: _Shared) -> Any:
        """``jax.jit`` of "trace with funcgrad, lower": JAX's C++ path does the dispatch.
        ``body`` runs only while JAX traces, through any live wrapper sharing ``shared``
        (it holds no reference to this wrapper or its function)."""

        def body(*args: Any, **kwargs: Any) -> Any:
            # funcgrad traces with its own tracers; JAX operations the user applies to
            # concrete (closed-over) arrays while it traces must stay concrete, not
            # become tracers of this jax.jit (they would leak into the cached program)
            with jax.ensure_compile_time_eval():
                entry, leaves = next(iter(shared.owners))._entry(args, kwargs)
            if entry.const_bytes() > _EMBED_LIMIT:
                raise _ConstsTooLarge
            return tree_unflatten(entry.out_tree, entry.lowered(*entry.consts, *leaves))

        body.__name__ = self._name()
        body.__qualname__ = getattr(self.fun, "__qualname__", body.__name__)
        sig = signature(self.fun)
        if sig is not None:  # (JAX's errors name the arguments by the user's parameters)
            body.__signature__ = sig  # type: ignore[attr-defined]
        return jax.jit(
            body,
            static_argnums=self.static_argnums,
            static_argnames=self.static_argnames,
            donate_argnums=self.donate_argnums,
            donate_argnames=self.donate_argnames,
            compiler_options=dict(self.compiler_options) or None,
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
        if kwargs and self.in_shardings is not None:
            raise ValueError("pjit does not support kwargs when in_shardings is specified.")
        statics, static_vals, static_kw, leaves, tree = self._split(args, kwargs)
        if not SHARDING_TYPES[0]:  # (a mesh with explicit axes set through JAX itself)
            sharding_types.maybe_activate(jax.sharding.get_abstract_mesh())
        try:
            avals = tuple(map(to_aval, leaves))
        except TypeError:
            # JAX's error for a non-array dynamic argument, by parameter name, if any
            err = dynamic_error(
                self._name(), set(statics), self.static_argnames, args, kwargs, self.fun
            )
            if err is not None:
                raise err from None
            raise
        key = (static_vals, static_kw, tree, avals)
        entry = self._cache.get(key)
        if entry is None:
            if hooks.recompiles and self._cache:
                hooks.explain_recompile(self, key, list(self._cache), args, kwargs)
            entry = self._trace(args, kwargs, statics, leaves, tree, avals)
            if not any(isinstance(c, Tracer) for c in entry.consts):
                self._cache[key] = entry
        return entry, leaves

    def _typed_by_in_shardings(self, args: tuple, statics: tuple, avals: tuple) -> tuple:
        """The positional arguments' avals typed by ``in_shardings`` over explicit mesh
        axes where the value itself is untyped (a NumPy array), as JAX's lowered stages
        show them (``in_avals``; the trace sees the values' own types, as JAX's), and the
        others over the context mesh, nothing split (a bare spec is over it too)."""
        dyn = tuple(a for i, a in enumerate(args) if i not in statics)
        per_leaf: list = []
        if self.in_shardings is not None and SHARDING_TYPES[0]:
            per_leaf = broadcast_prefix(self.in_shardings, dyn, "jit", "in_shardings")
        mesh = jax.sharding.get_abstract_mesh()
        out = list(avals)
        for i, s in enumerate(per_leaf[: len(out)]):
            if isinstance(s, jax.sharding.PartitionSpec) and not mesh.empty:
                s = jax.sharding.NamedSharding(mesh, s)
            typed = typed_sharding(s, out[i].ndim) if out[i].sharding is None else None
            if typed is not None:
                out[i] = out[i].update(sharding=typed)
        return tuple(a.update(sharding=sharding_types.full_sharding(a)) for a in out)

    def _trace(self, args, kwargs, statics, leaves, tree, avals) -> _Entry:
        self._shared.trace_count += 1
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

    def _executable(self, entry: _Entry, args: tuple) -> Any:
        """The entry's executable, ``fn(*consts, *leaves)``, from the one compile cache."""
        if entry.jit_kw is None:
            entry.jit_kw = self._jit_kw(entry, args)
        return compile_cache.compiled(entry.program, name=self._name(), **entry.jit_kw)

    def _jit_kw(self, entry: _Entry, args: tuple) -> dict[str, Any]:
        """``jax.jit``'s static arguments, counted over ``(*consts, *leaves)``."""
        n_consts = len(entry.consts)
        kw: dict[str, Any] = {}
        if self.donate_argnums:
            donated = []
            n = len(args)
            dyn_positions = [i for i in range(n) if i not in _positions(self.static_argnums, n)]
            offset = n_consts
            for pos in dyn_positions:
                count = len(jax.tree_util.tree_leaves(args[pos]))
                if pos in _positions(self.donate_argnums, n):
                    donated.extend(range(offset, offset + count))
                offset += count
            kw["donate_argnums"] = tuple(donated)
        if self.in_shardings is not None:
            n = len(args)
            dyn = tuple(
                a for i, a in enumerate(args) if i not in _positions(self.static_argnums, n)
            )
            per_leaf = broadcast_prefix(self.in_shardings, dyn, "jit", "in_shardings")
            kw["in_shardings"] = tuple([None] * n_consts + per_leaf)
        if self.out_shardings is not None:
            kw["out_shardings"] = self._out_shardings_flat(entry)
        if self.device is not None:
            kw["device"] = self.device
        if self.backend is not None:
            kw["backend"] = self.backend
        return kw

    def _out_shardings_flat(self, entry: _Entry) -> Any:
        dummy = tree_unflatten(entry.out_tree, [0] * entry.out_tree.num_leaves)
        return broadcast_prefix(self.out_shardings, dummy, "jit", "out_shardings")

    # ------------------------------------------------------------------ calls
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the compiled function, tracing and compiling it first for an abstract signature
        (shapes, dtypes, static values) it has not seen; inside another transform it is
        traced inline as one ``jit`` equation."""
        disp = self._disp
        if disp is not None and not _state.stack:
            if self.static_argnums or self.static_argnames:
                _check_hashable(self.static_argnums, self.static_argnames, args, kwargs)
            try:
                out = disp(*args, **kwargs)
                if hooks.nans:
                    self._check_nans(args, kwargs, out)
                return out
            except _ConstsTooLarge:
                self._dispatch = None
            except TypeError:
                # JAX rejects a non-array argument before tracing: say it as funcgrad
                n = len(args)
                statics = {i % n for i in self.static_argnums if -n <= i < n}
                err = dynamic_error(
                    self._name(), statics, self.static_argnames, args, kwargs, self.fun
                )
                if err is not None:
                    raise err from None
                raise
        out = self._call(args, kwargs)
        if hooks.nans and not _state.stack:
            self._check_nans(args, kwargs, out)
        return out

    def _check_nans(self, args: tuple, kwargs: dict, out: Any) -> None:
        """``funcgrad.debug.nans``: a non-finite output re-runs the program to locate it."""
        if hooks.check_program is not None:
            entry, leaves = self._entry(args, kwargs)
            hooks.check_program(entry.program, leaves, tree_flatten(out)[0])

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
                fn = compile_cache.compiled(entry.program, name=self._name(), **entry.jit_kw)
                return tree_unflatten(entry.out_tree, fn(*entry.consts, *leaves))
        entry, leaves = self._entry(args, kwargs)
        if _state.stack:
            check_nested_options(self._name(), self.compiler_options, _state.stack)
            placed = _named(self._jit_kw(entry, args)) if self._placed() else {}
            if placed:
                check_known_operands(entry.program, entry.consts, leaves, placed, self._name())
            outs = jit_call(
                entry.call_prog,
                *entry.consts,
                *leaves,
                name=self._name(),
                in_shardings=placed.get("in_shardings"),
                out_shardings=placed.get("out_shardings"),
            )
        else:
            fn = self._executable(entry, args)
            if fast_key is not None:
                self._fast[fast_key] = entry
            outs = fn(*entry.consts, *leaves)
        return tree_unflatten(entry.out_tree, outs)

    def _name(self) -> str:
        return getattr(self.fun, "__name__", "fun")

    def _placed(self) -> bool:
        """Whether this jit places its operands or results (shardings given)."""
        return self.in_shardings is not None or self.out_shardings is not None

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """This function traced for these arguments (arrays or ``jax.ShapeDtypeStruct`` values):
        a :class:`~funcgrad._aot.Traced`, JAX's ``Traced``: ``.jaxpr`` (the simplified
        funcgrad Program), ``.out_info``, ``.args_info``, ``.fun_name``, ``.lower()``."""
        entry, _ = self._entry(args, kwargs)
        return Traced(
            entry.program,
            self._aot_signature(args, kwargs, entry, 0),
            self._name(),
            functools.partial(self._lower, args, kwargs),
            None if self.out_shardings is None else self._out_shardings_flat(entry),
        )

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """This function lowered for these arguments: a :class:`~funcgrad._aot.Lowered`,
        which is the lowered text (StableHLO, a ``str``) and has ``compile()``, giving a
        :class:`~funcgrad._aot.Compiled` with XLA's ``cost_analysis()`` and
        ``memory_analysis()``, callable with the dynamic arguments (as JAX's AOT API)."""
        return self._lower(args, kwargs)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes for these arguments (JAX's ``jit(f).eval_shape``):
        a pytree of ``jax.ShapeDtypeStruct`` (with ``out_shardings`` where given); traces,
        never compiles."""
        return self.trace(*args, **kwargs).out_info

    def _lower(self, args: tuple, kwargs: dict, lowering_platforms: Any = None) -> Lowered:
        """``lower``; ``lowering_platforms`` (JAX's ``Traced.lower``'s) lowers for those
        platforms (``("tpu",)``) instead of this machine's."""

        def jax_lower(jitted: Any, *a: Any, **kw: Any) -> Any:
            if lowering_platforms is None:
                return jitted.lower(*a, **kw)
            return jitted.trace(*a, **kw).lower(lowering_platforms=lowering_platforms)

        if self._dispatch is not None:
            try:
                jax_lowered = jax_lower(self._dispatch, *args, **kwargs)
            except _ConstsTooLarge:
                self._dispatch = None
            else:
                entry, _ = self._entry(args, kwargs)
                sig = self._aot_signature(args, kwargs, entry, 0)
                return Lowered(jax_lowered, self._name(), sig)
        entry, leaves = self._entry(args, kwargs)
        consts = entry.consts

        def adapt(compiled: Any, c_args: tuple, c_kwargs: dict) -> Any:
            # called with the dynamic arguments only (JAX's Compiled), in this order
            flat, _ = tree_flatten((tuple(c_args), c_kwargs))
            return tree_unflatten(entry.out_tree, compiled(*consts, *flat))

        jax_lowered = jax_lower(self._executable(entry, args), *consts, *leaves)
        sig = self._aot_signature(args, kwargs, entry, len(consts))
        return Lowered(jax_lowered, self._name(), sig, adapt)

    def _aot_signature(self, args: tuple, kwargs: dict, entry: _Entry, n_consts: int) -> Signature:
        """The dynamic arguments' tree, avals, donation and names (JAX's: the parameter,
        then the path inside it) for the AOT stages."""
        statics, _, _, leaves, tree = self._split(args, kwargs)
        n = len(args)
        donated_pos = {i % n for i in self.donate_argnums if -n <= i < n}
        params = list(getattr(signature(self.fun), "parameters", {}).values())
        named = [p.name for p in params if p.kind in _POSITIONAL]
        star = next((p.name for p in params if p.kind is _P.VAR_POSITIONAL), "args")
        labels = [
            named[i] if i < len(named) else f"{star}[{i - len(named)}]"
            for i in range(n)
            if i not in statics
        ]
        dyn_pos = [i for i in range(n) if i not in statics]
        names, donated = [], []
        for path, _ in tree_util.tree_flatten_with_path(tree_unflatten(tree, leaves))[0]:
            rest = tree_util.keystr(path[2:])
            if path[0].idx == 0:
                names.append(labels[path[1].idx] + rest)
                donated.append(dyn_pos[path[1].idx] in donated_pos)
            else:
                names.append(path[1].key + rest)
                donated.append(path[1].key in self.donate_argnames)
        return Signature(
            tree,
            self._typed_by_in_shardings(args, statics, tuple(map(to_aval, leaves))),
            tuple(donated),
            tuple(names),
            entry.out_tree,
            n_consts,
        )

    def clear_cache(self) -> None:
        """Forget this function's traced programs and compiled executables (``fg.clear_caches()``
        empties every cache at once)."""
        self._cache.clear()
        self._fast.clear()
        if self._dispatch is not None:
            self._dispatch.clear_cache()


def _named(kw: dict) -> dict:
    """A nested jit's shardings with each bare ``PartitionSpec`` read over the context's
    mesh now, as JAX's jit reads it where it is traced (the call may run outside it)."""
    try:
        mesh = jax.sharding.get_mesh()
    except ValueError:  # (inside JAX's own trace: only the abstract mesh is known)
        mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty:
        mesh = jax.sharding.get_abstract_mesh()
    out = dict(kw)
    for name in ("in_shardings", "out_shardings"):
        if name not in kw:
            continue
        specs = [s for s in kw[name] if isinstance(s, jax.sharding.PartitionSpec)]
        if specs and mesh.empty:
            raise RuntimeError(
                f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s "
                f"to {name}. You can define a context mesh via `jax.set_mesh(mesh)`. "
                f"Alternatively, provide `Sharding`s to {name} and then the mesh context "
                "manager is not required."
            )
        if specs:
            out[name] = tuple(
                jax.sharding.NamedSharding(mesh, s)
                if isinstance(s, jax.sharding.PartitionSpec)
                else s
                for s in kw[name]
            )
    return out


def _positions(argnums: tuple, n: int) -> set[int]:
    """The positions among ``n`` positional arguments that ``argnums`` names (an index
    past them, e.g. a static parameter passed by keyword, names none)."""
    return {i % n for i in argnums if -n <= i < n}


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


class _NotGiven:
    """Default of ``jit``'s ``fun``: omitted means "return a decorator" (``None`` is an error)."""


def jit(
    fun: Any = _NotGiven,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    compiler_options: dict[str, Any] | None = None,
    device: Any = None,
    backend: str | None = None,
) -> Any:
    """Compile ``fun`` with XLA; usable as ``@jit`` or ``@jit(static_argnums=...)``.

    The first call with a new abstract signature (argument shapes, dtypes, weak types,
    pytree structure and the values of static arguments) traces ``fun`` into a
    program, lowers it to StableHLO and compiles it; later calls with that signature
    run the cached executable. Inside another transform a jitted function is one
    ``jit_call`` equation holding its program.

    Args:
        fun: a function, a ``functools.partial``, a callable object or a method
            (``@jit`` in a class body binds ``self``).
        static_argnums: positional arguments passed as Python values: part of the
            cache key (they must be hashable), so ``fun`` may branch on them.
        static_argnames: the same, by name. Given only one of the two, the other is
            filled in from ``fun``'s signature, so a static argument is static whether
            passed by position or by name.
        donate_argnums: arguments whose buffers XLA may reuse for the outputs; a
            donated array is deleted by the call and must not be used again.
        in_shardings: shardings of the inputs, as in JAX.
        out_shardings: shardings of the outputs, as in JAX.
        donate_argnames: ``donate_argnums`` by name.
        keep_unused: accepted for JAX's signature (funcgrad's programs keep their
            parameters; XLA may drop unused ones either way).
        inline: accepted for JAX's signature (inside a transform a jitted function is
            one ``jit_call`` equation, which funcgrad's passes may fuse).
        compiler_options: XLA compiler options for this function's executables, passed
            to ``jax.jit`` as JAX's own.
        device: deprecated in JAX, as there: the device every call runs on (its inputs
            moved there); not with ``backend`` or shardings.
        backend: deprecated in JAX, as there: the platform (``"cpu"``) to run on.

    Returns:
        A :class:`Jitted` function with ``fun``'s signature, and JAX's ahead-of-time
        stages: ``trace(*args)`` (a ``Traced``: ``.jaxpr`` is the traced funcgrad
        :class:`Program`), ``lower(*args)`` (a ``Lowered``, then ``.compile()``), and
        ``clear_cache()``.

    Raises:
        ValueError: at ``jit`` time, out-of-range ``static_argnums``/``donate_argnums``
            or unknown ``static_argnames``; at call time, an unhashable static argument.
        TypeError: at call time, a dynamic argument that is not an array (a ``str``, an
            arbitrary object: mark it static).

    Under ``jit`` values are abstract: Python ``if``/``float()`` on them raise
    ``ConcretizationError``; use :func:`cond`, :func:`while_loop` or static arguments.
    As in JAX, a closed-over array is a constant of the traced program: changing it
    later does not retrace.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> power = fg.jit(lambda x, n: x**n, static_argnums=1)
        >>> power(fnp.arange(3.0), 2)
        Array([0., 1., 4.], dtype=float32)
    """
    if fun is _NotGiven:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            inline=inline,
            compiler_options=compiler_options,
            device=device,
            backend=backend,
        )
    del keep_unused, inline
    return Jitted(
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        in_shardings,
        out_shardings,
        donate_argnames,
        compiler_options,
        device,
        backend,
    )
