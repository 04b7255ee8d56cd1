"""JAX's top-level utilities that are not transforms of derivatives: ``eval_shape``,
``linear_transpose``, ``closure_convert``, devices (``device_put``, ``devices``, ...),
``block_until_ready``, ``clear_caches`` and ``cache_info``.

Devices and placement are JAX's: funcgrad's concrete values are ``jax.Array``s.
Inside a transform ``device_put`` is the identity on traced values (placement is
decided when the program is compiled), as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from funcgrad import ad, config, passes
from funcgrad.api import TreeFunction, make_ir, trace_pytree
from funcgrad.api._tracing import broadcast_prefix
from funcgrad.core import compile_cache, dtypes, sharding_types, tiers
from funcgrad.core.ad_util import close
from funcgrad.core.interp import Tracer, compile_time_eval, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, ShapedArray, Var
from funcgrad.debug import _nans  # noqa: F401  (registers the debug_nans option)
from funcgrad.primitives.elementwise import convert_element_type as ew_convert
from funcgrad.primitives.sharding import device_put as put_traced
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = [
    "Device",
    "ShapeDtypeStruct",
    "block_until_ready",
    "cache_info",
    "clear_caches",
    "closure_convert",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "effects_barrier",
    "enable_checks",
    "ensure_compile_time_eval",
    "eval_shape",
    "float0",
    "linear_transpose",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "process_count",
    "process_index",
]

ShapeDtypeStruct = jax.ShapeDtypeStruct


def _abstract(x: Any, name: str) -> Aval:
    """The aval of an array, a Python scalar, a tracer or anything with
    ``shape``/``dtype`` (``ShapeDtypeStruct``)."""
    try:
        return to_aval(x)
    except TypeError:
        pass
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        dt = dtypes.canonicalize(np.dtype(x.dtype))
        return Aval(tuple(x.shape), dt, bool(getattr(x, "weak_type", False)))
    raise TypeError(
        f"{name}: argument {x!r} of type {type(x).__name__} is not a valid JAX type "
        "(an array, a scalar or a ShapeDtypeStruct)"
    )


def _trace_abstract(fun: Callable, args: tuple, kwargs: dict, name: str) -> tuple:
    leaves, in_tree = tree_flatten((args, kwargs))
    avals = [_abstract(x, name) for x in leaves]
    with new_builder(name) as b:
        a2, k2 = tree_unflatten(in_tree, [b.new_arg(a) for a in avals])
        out = fun(*a2, **k2)
        out_leaves, out_tree = tree_flatten(out)
        prog = b.build(out_leaves)
    return prog, in_tree, out_tree, avals


class _OptionBlock:
    """One configuration option set for a block: a context manager, and a decorator
    setting it around each call (as JAX's configuration context managers)."""

    def __init__(self, name: str, value: Any) -> None:
        self._name, self._value = name, value
        self._saved: list = []

    def __enter__(self) -> None:
        self._saved.append(config.read(self._name))
        config.update(self._name, self._value)

    def __exit__(self, *exc: Any) -> None:
        config.update(self._name, self._saved.pop())

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped


def enable_checks(value: bool = True) -> _OptionBlock:
    """Turn JAX's internal checks (the ``jax_enable_checks`` option, which funcgrad
    passes to the JAX it runs on) on or off for a block or a decorated function, as
    ``jax.enable_checks``."""
    return _OptionBlock("jax_enable_checks", bool(value))


def debug_nans(value: bool = True) -> _OptionBlock:
    """Raise ``FloatingPointError`` where a NaN or Inf is made, for a block or a decorated
    function, as ``jax.debug_nans``: JAX's option ``jax_debug_nans``, which turns on
    funcgrad's check (:func:`funcgrad.debug.nans`) and JAX's own (for the operators of
    ``jax.Array`` values, which run outside funcgrad)."""
    return _OptionBlock("jax_debug_nans", bool(value))


def debug_infs(value: bool = True) -> _OptionBlock:
    """Raise ``FloatingPointError`` where an Inf is made (a NaN passes), for a block or a
    decorated function, as ``jax.debug_infs``: JAX's option ``jax_debug_infs``, which turns
    on funcgrad's check for Inf and JAX's own (for the operators of ``jax.Array`` values)."""
    return _OptionBlock("jax_debug_infs", bool(value))


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, as a pytree of
    ``jax.ShapeDtypeStruct``, found by tracing only (nothing is computed).
    Arguments may be arrays, scalars or ``ShapeDtypeStruct``s."""
    prog, _, out_tree, _ = _trace_abstract(fun, args, kwargs, "eval_shape")
    outs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in prog.out_avals]
    return tree_unflatten(out_tree, outs)


def _depends_on_inputs(prog: Any) -> set:
    dep: set = set(prog.invars)
    for e in prog.eqns:
        if any(type(a) is Var and a in dep for a in e.inputs):
            dep.update(e.outvars)
    return dep


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """The transpose of the linear function ``fun`` at the shapes of ``primals``
    (arrays or ``ShapeDtypeStruct``s): ``f_t(ct)`` returns a tuple shaped like
    ``primals``. Raises if ``fun`` is not linear in its inputs."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    prog, in_tree, out_tree, in_avals = _trace_abstract(fun, primals, {}, "linear_transpose")
    in_dt = [a.dtype for a in in_avals]
    out_avals = prog.out_avals
    out_dt = [a.dtype for a in out_avals]
    if not (
        all(dtypes.is_inexact(d) for d in in_dt + out_dt)
        or all(dtypes.is_integer(d) for d in in_dt + out_dt)
    ):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {in_dt} -> {out_dt}."
        )
    if in_dt and all(dtypes.is_integer(d) for d in in_dt + out_dt):
        return _integer_transpose(fun, primals, in_avals, out_avals, out_tree)
    prog = passes.dce(prog)
    on_path = _depends_on_inputs(prog)
    if any(
        e.prim.name == "io_callback" and any(type(a) is Var and a in on_path for a in e.inputs)
        for e in prog.eqns
    ):
        raise ValueError("IO callbacks do not support transpose.")
    vp = ad.vjp_program(prog)
    n_out = len(prog.outvars)
    dep = _depends_on_inputs(vp.fwd)
    for v in vp.fwd.outvars[n_out:]:
        if type(v) is Var and v in dep:
            made_by = next((e.prim.name for e in vp.fwd.eqns if v in e.outvars), None)
            what = "an input" if made_by is None else f"the result of {made_by}"
            raise TypeError(
                "linear_transpose: the function is not linear in its inputs: its transpose "
                f"needs the value of {what} ({v.aval}), which depends on them"
            )
    # the residuals do not depend on the inputs: compute them once, at zeros
    zeros = [np.zeros(a.shape, a.dtype) for a in in_avals]
    residuals = tiers.run(vp.fwd, *zeros)[n_out:]
    bwd, bconsts = close(vp.bwd)
    n_b = len(bconsts)

    def transposed(saved: list, out_cotangent: Any) -> tuple:
        cts, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError(
                f"cotangent tree does not match function output, expected {out_tree} but got {tree}"
            )
        for c, a in zip(cts, out_avals):
            ca = to_aval(c)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise TypeError(
                    "cotangent type does not match function output, "
                    f"expected {[str(x) for x in out_avals]} but got {ca}"
                )
        in_cts = tiers.run(bwd, *saved[:n_b], *saved[n_b:], *cts)
        args, _ = tree_unflatten(in_tree, list(in_cts))
        return tuple(args)

    return TreeFunction(transposed, [*bconsts, *residuals])


def _integer_transpose(
    fun: Callable, primals: tuple, in_avals: list, out_avals: list, out_tree: Any
) -> Callable:
    """The transpose of an integer-to-integer linear function: transposed over the
    default float dtype (integers do not carry cotangents), its results converted back
    to the inputs' integer dtypes (exact for the integer-valued results a linear map of
    integers gives)."""
    fdt = dtypes.default_dtype(2)
    _, in_tree = tree_flatten(primals)
    floats = tree_unflatten(in_tree, [jax.ShapeDtypeStruct(a.shape, fdt) for a in in_avals])
    ft = linear_transpose(lambda *xs: tree_map(lambda o: ew_convert(o, fdt), fun(*xs)), *floats)

    def transposed(out_cotangent: Any) -> tuple:
        cts, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError(
                f"cotangent tree does not match function output, expected {out_tree} but got {tree}"
            )
        res = ft(tree_unflatten(tree, [ew_convert(c, fdt) for c in cts]))
        flat, _ = tree_flatten(res)
        return tuple(
            tree_unflatten(in_tree, [ew_convert(r, a.dtype) for r, a in zip(flat, in_avals)])
        )

    del out_avals
    return transposed


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``
    with the traced values ``fun`` closes over (of enclosing transforms) passed
    explicitly, so ``fun`` can be given to ``custom_vjp``/``custom_jvp`` rules."""
    prog, out_tree = trace_pytree(fun, example_args, None, "closure_convert")
    closed, consts = close(prog)
    # hoisted: the traced values that may carry a derivative (JAX's "maybe perturbed":
    # inexact ones); integer tracers stay closed over, as in JAX
    hoist = [
        i for i, c in enumerate(consts) if isinstance(c, Tracer) and dtypes.is_inexact(c.aval.dtype)
    ]
    hoisted = [consts[i] for i in hoist]
    # the converted function holds only the concrete constants: the traced ones are
    # its explicit arguments (a custom rule given it must not see them as closed over)
    kept = {i: c for i, c in enumerate(consts) if i not in set(hoist)}
    n_consts, n_hoisted, n_args = len(consts), len(hoisted), len(example_args)
    in_tree = tree_flatten(tuple(example_args))[1]
    del consts

    def converted(*args: Any) -> Any:
        if len(args) < n_hoisted:
            raise TypeError(
                f"closure_convert: the converted function takes {n_args} arguments "
                f"and {n_hoisted} closed-over values, got {len(args)} values"
            )
        user, extra = args[: len(args) - n_hoisted], args[len(args) - n_hoisted :]
        leaves, tree = tree_flatten(tuple(user))
        if tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same "
                "Pytree structure as the example arguments passed when closure_convert was "
                f"called. Expected {in_tree}, but got {tree}"
            )
        it = iter(extra)
        cvals = [kept[i] if i in kept else next(it) for i in range(n_consts)]
        return tree_unflatten(out_tree, eval_program(closed, *cvals, *leaves))

    return converted, hoisted


# --------------------------------------------------------------------------- devices


def device_put(
    x: Any,
    device: Any = None,
    *,
    src: Any = None,
    donate: bool | Any = False,
    may_alias: bool | Any | None = None,
) -> Any:
    """Place the arrays of the pytree ``x`` on ``device`` (a device or a sharding, or a
    pytree prefix of ``x`` of them), as ``jax.device_put``; inside a transform a traced
    array gets one ``device_put`` equation (its cotangent put back on ``src``)."""
    for d in jax.tree_util.tree_leaves(device):
        if isinstance(d, jax.sharding.Sharding):
            sharding_types.maybe_activate(d)
        elif isinstance(d, jax.sharding.PartitionSpec):
            sharding_types.maybe_activate(jax.sharding.get_abstract_mesh())
    leaves, tree = tree_flatten(x)
    if not any(isinstance(v, Tracer) for v in leaves):
        return jax.device_put(x, device, src=src, donate=donate, may_alias=may_alias)
    devices = broadcast_prefix(device, x, "device_put", "device")
    srcs = broadcast_prefix(src, x, "device_put", "src")
    out = [
        put_traced(v, d, s)
        if isinstance(v, Tracer)
        else jax.device_put(v, d, src=s, donate=donate, may_alias=may_alias)
        for v, d, s in zip(leaves, devices, srcs, strict=True)
    ]
    return tree_unflatten(tree, out)


def typeof(x: Any) -> ShapedArray:
    """The type of ``x`` (an array or a traced value) as JAX's ``jax.typeof`` gives it:
    shape, dtype, weak type and, over a mesh's explicit axes, its sharding
    (``float32[8@X,4@Y]``)."""
    sharding_types.maybe_activate(jax.sharding.get_abstract_mesh())
    a = sharding_types.typeof(x, to_aval(x))
    return ShapedArray(a.shape, a.dtype, a.weak_type, sharding_types.full_sharding(a))


def devices(backend: Any = None) -> list:
    """All devices of ``backend`` (the default backend's by default)."""
    return jax.devices(backend)


def local_devices(process_index: int | None = None, backend: Any = None, host_id: Any = None):
    """The devices attached to this process."""
    return jax.local_devices(process_index, backend, host_id)


def device_count(backend: Any = None) -> int:
    """Number of devices."""
    return jax.device_count(backend)


def local_device_count(backend: Any = None) -> int:
    """Number of devices attached to this process."""
    return jax.local_device_count(backend)


def default_backend() -> str:
    """The platform name of the default backend (``"cpu"``, ``"gpu"``, ``"tpu"``)."""
    return jax.default_backend()


def block_until_ready(x: Any) -> Any:
    """Wait until every array of the pytree ``x`` is computed; returns ``x``."""

    def wait(v: Any) -> Any:
        if isinstance(v, Tracer):
            return v
        f = getattr(v, "block_until_ready", None)
        if f is not None:
            f()
        return v

    tree_map(wait, x)
    return x


def clear_caches() -> None:
    """Drop every compiled executable and cached trace funcgrad holds (and JAX's).

    Empties the one compile cache (:mod:`funcgrad.core.compile_cache`: executables
    of jitted and eagerly evaluated programs, control-flow bodies, and the
    per-function trace and dispatch tables registered with it) and resets its
    counters, then calls ``jax.clear_caches()``. Functions called afterwards are
    traced and compiled again.
    """
    compile_cache.clear()
    jax.clear_caches()


def cache_info() -> compile_cache.CacheInfo:
    """What funcgrad's compile cache holds and how it has been used since it was cleared.

    Returns:
        A ``CacheInfo`` named tuple: ``entries`` (executables and other compiled
        values in the cache), ``hits``, ``misses``, ``compiles`` (executables
        created), ``evictions`` (dropped to stay within the bound), ``seen``
        (program structures evaluated once eagerly, not compiled yet), ``traces``
        (entries of the per-function tables: ``jit``'s traces and dispatch
        executables, ``checkpoint``'s traces) and ``kinds`` (entries per kind).

    Example:
        >>> import funcgrad as fg
        >>> fg.clear_caches()
        >>> f = fg.jit(lambda x: x * 2.0)
        >>> _ = f(1.0)
        >>> fg.cache_info().traces >= 1
        True
    """
    return compile_cache.info()


# --------------------------------------------------------------------------- more of jax.*

#: the dtype of tangents and cotangents of integer and boolean values (JAX's ``float0``)
float0 = jax.dtypes.float0

#: a device (funcgrad runs on JAX's devices)
Device = jax.Device


def make_jaxpr(
    fun: Callable,
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    return_shape: bool = False,
    abstracted_axes: Any = None,
) -> Callable:
    """``make_jaxpr(f)(*args)``: funcgrad's traced :class:`~funcgrad.Program` for ``f``
    (funcgrad's counterpart of a jaxpr; print it to read it), with ``return_shape=True``
    also the outputs' ``ShapeDtypeStruct`` pytree. Named axes (``axis_env``) and shape
    polymorphism (``abstracted_axes``) are not part of funcgrad."""
    if axis_env is not None:
        raise NotImplementedError("make_jaxpr: axis_env (named axes) is not supported by funcgrad")
    if abstracted_axes is not None:
        raise NotImplementedError(
            "make_jaxpr: abstracted_axes (shape polymorphism) is not supported by funcgrad"
        )
    traced = make_ir(fun, static_argnums)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        prog = traced(*args, **kwargs)
        if not return_shape:
            return prog
        statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        dyn = [i for i in range(len(args)) if i not in statics]

        def f(*d: Any) -> Any:
            full = list(args)
            for i, v in zip(dyn, d):
                full[i] = v
            return fun(*full, **kwargs)

        return prog, eval_shape(f, *[args[i] for i in dyn])

    return wrapped


def device_get(x: Any) -> Any:
    """The pytree ``x`` with its arrays copied to the host as NumPy arrays (other leaves
    unchanged), as ``jax.device_get``."""

    def get(v: Any) -> Any:
        if isinstance(v, (jax.Array, Tracer)):
            return np.asarray(v)
        return v

    return tree_map(get, x)


def process_index(backend: Any = None) -> int:
    """This process's index among the processes of a multi-process run (0 here)."""
    return jax.process_index(backend)


def process_count(backend: Any = None) -> int:
    """How many processes take part in the computation."""
    return jax.process_count(backend)


def effects_barrier() -> None:
    """Wait until every ``funcgrad.debug.print``/``callback`` issued so far has run."""
    jax.effects_barrier()


def ensure_compile_time_eval() -> Any:
    """A context manager within which operations on concrete values run immediately, even
    inside ``jit`` (so Python can branch on their results); operations on traced values are
    still recorded. As ``jax.ensure_compile_time_eval``."""
    return compile_time_eval()
