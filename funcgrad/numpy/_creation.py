"""Array creation and conversion: ``asarray``/``array``/``astype``, ``zeros``/``ones``/
``full`` (and ``*_like``), ``arange``, ``linspace``/``logspace``/``geomspace``, ``eye``,
``tri``, ``meshgrid``, ``diag``. ``zeros`` & co are generated from their creation rows here; ``arange``,
``linspace``, ``logspace`` and ``eye`` are rows declared on their functions, whose PyTorch
forms compat generates.

Dtype defaults follow ``jax.numpy``: ``zeros``/``ones``/``eye``/``linspace``
default to the default float, ``full`` and the ``*_like`` functions keep a
Python scalar's (or the template's) weak type, ``arange`` takes the dtype of
its arguments.
"""

from __future__ import annotations

import array as pyarray
import builtins
import inspect
import warnings
from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.core.creation_row import (
    FILL_VALUE,
    UNSPECIFIED,
    Creation,
    TorchArg,
    TorchCreation,
)
from funcgrad.core.errors import ConcretizationTypeError
from funcgrad.core.interp import Tracer, bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.sharding_types import check_committed_to, like_sharding
from funcgrad.numpy import _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_to_shape,
    check_arraylike,
    convert,
    fmt,
    here,
    index,
    is_array,
    normalize_axis,
    out,
    out_array,
    prep,
    result_dtype,
    user_dtype,
)
from funcgrad.numpy._shape import diagonal, moveaxis, pad
from funcgrad.numpy._ufuncs import power, where
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh
from funcgrad.primitives.sharding import placed
from funcgrad.sharding import reshard


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    """A static shape from an int or a sequence of ints, with JAX's errors (a
    ``TypeError`` for a non-integer, traced or negative dimension)."""
    if isinstance(shape, (int, np.integer, Tracer)) or (
        isinstance(shape, (np.ndarray, jax.Array)) and np.ndim(shape) == 0
    ):
        shape = (shape,)
    try:
        items = tuple(shape)
    except TypeError:
        items = (shape,)
    if any(isinstance(s, Tracer) for s in items):
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {items}.\n"
            "If using `jit`, try using `static_argnums` or applying `jit` to smaller "
            f"subfunctions. ({name}: the shape is traced){here()}"
        )
    try:
        dims = tuple(index(s, "shape", name) for s in items)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {items}. "
            f"({name}: the shape is an int or a sequence of ints){here()}"
        ) from None
    if any(d < 0 for d in dims):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {dims}{here()}")
    return dims


def _shape_dtype(name: str, shape: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    """``(shape, dtype)`` of ``zeros(shape, dtype)``-style calls, with JAX's hint for
    ``zeros(2, 3)`` (a dimension where the dtype goes)."""
    try:
        dt = _dtype(name, dtype)
    except TypeError as e:
        if isinstance(shape, (int, np.integer)) and isinstance(dtype, (int, np.integer)):
            raise TypeError(
                f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally write "
                f"`jax.numpy.{name}({shape}, {dtype})` when you meant "
                f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple argument "
                f"for the shape?{here()}"
            ) from None
        raise e from None
    return _shape(name, shape), dt


def _on(x: Any, device: Any, out_sharding: Any = None, traced: bool = False) -> Any:
    """``x`` placed on ``device`` (a device or sharding) outside transforms; inside, the
    placement is the compiled program's, or with ``traced`` (``array``/``asarray``, whose
    conversion JAX gives the sharding) a sharding constraint's. ``out_sharding`` (JAX's
    keyword for a split over explicit mesh axes) reshards it, traced or not."""
    if out_sharding is not None:
        if device is not None:
            raise ValueError("pass only one of device= and out_sharding=")
        return reshard(x, out_sharding)
    if device is None:
        return x
    if isinstance(x, tuple):
        return tuple(_on(v, device) for v in x)
    if isinstance(x, Tracer):
        return placed(x, device) if traced else x
    return jax.device_put(check_committed_to(x, device) if traced else x, device)


def _dtype(name: str, dtype: Any, default_kind: int = 2) -> np.dtype:
    return user_dtype(dtype, name) if dtype is not None else dtypes.default_dtype(default_kind)


def _leaves(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [e for s in x for e in _leaves(s)]
    return [x]


def _check_int_range(a: Any, dtype: Any) -> None:
    """Python ints that do not fit the integer dtype they become are an ``OverflowError``,
    as in ``jnp.asarray`` (NumPy values wrap, as there): a bare int in the default int
    dtype in JAX's words, one given a dtype or in a list in NumPy's."""
    if type(a) is int:
        ints = [a]
    elif isinstance(a, (list, tuple)):
        leaves = _leaves(a)
        ints = [e for e in leaves if type(e) is int]
        if dtype is None:
            if not ints or any(type(e) not in (bool, int) for e in leaves):
                return  # floats or NumPy values decide the dtype: no int conversion
            if any(not -(2**63) <= v < 2**63 for v in ints):
                raise OverflowError("Python int too large to convert to C long")
    else:
        return
    target = dtypes.default_dtype(1) if dtype is None else user_dtype(dtype, "asarray")
    if target.kind not in "iu":
        return
    info = np.iinfo(target)
    for v in ints:
        if not info.min <= v <= info.max:
            if type(a) is int and dtype is None:
                raise OverflowError(f"Python int {v} too large to convert to {target.name}")
            raise OverflowError(f"Python integer {v} out of bounds for {target.name}")


def asarray(
    a: ArrayLike,
    dtype: Any = None,
    order: str | None = None,
    copy: bool | None = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Convert to an array (a ``jax.Array`` outside transforms; tracers pass through).

    Python scalars become weakly typed 0-d arrays, as in ``jax.numpy``.
    """
    del order, copy
    if isinstance(a, (bytearray, memoryview, pyarray.array)) or (
        hasattr(a, "__array__") and not isinstance(a, (Tracer, jax.Array, np.ndarray, np.generic))
    ):
        # NumPy's array protocol and Python's buffers (``array.array``, ``bytearray``)
        a = np.asarray(a, getattr(a, "dtype", None))
    _check_int_range(a, dtype)
    x = prep(a, "asarray", sequences=True)
    if dtype is not None:
        x = convert(x, user_dtype(dtype, "asarray"))
    if isinstance(x, (np.ndarray, np.generic)) and out_sharding is None:
        # a jax.Array even while tracing (as jnp.asarray), so that ``table[i]`` with a
        # traced ``i`` indexes through funcgrad rather than NumPy
        return jax.device_put(x, device)
    return _on(out(x), device, out_sharding, traced=True)


def array(
    object: ArrayLike,
    dtype: Any = None,
    *args: Any,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Like :func:`asarray`; ``ndmin`` pads the shape with leading ones, and ``copy=True``
    (the default) gives a new array object even for an array of the right dtype, as
    ``jnp.array``. Passing ``copy``, ``order`` and ``ndmin`` positionally is deprecated
    (a ``DeprecationWarning``, as JAX's)."""
    if args:
        names = ("copy", "order", "ndmin")
        if len(args) > len(names):
            raise TypeError(
                f"array() takes at most 5 positional arguments but {len(args) + 2} were given"
            )
        warnings.warn(
            "Passing the copy, order, and ndmin arguments to jnp.array positionally is "
            "deprecated. Use keyword arguments instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        given = dict(zip(names, args))
        defaults = {"copy": True, "order": "K", "ndmin": 0}
        passed = {"copy": copy, "order": order, "ndmin": ndmin}
        for name in given:
            if passed[name] != defaults[name]:
                raise TypeError(f"array() got multiple values for argument '{name}'")
        copy = given.get("copy", copy)
        ndmin = given.get("ndmin", ndmin)
    x = asarray(object, dtype)
    nd = aval(x).ndim
    if ndmin > nd:
        x = sh.reshape(x, (1,) * (ndmin - nd) + aval(x).shape)
    res = _on(out(x), device, out_sharding, traced=True)
    if copy and res is object and isinstance(res, jax.Array):
        res = jax.device_put(res, may_alias=False)
    elif copy and res is object and isinstance(res, Tracer):
        # a traced copy is an equation of its own (a conversion to the same type, JAX's
        # ``copy_p``), so what a transform returns is a new array, not its input
        a = aval(res)
        res = bind(ew.convert_element_type_p, res, new_dtype=a.dtype, weak_type=a.weak_type)
    return res


def copy(a: ArrayLike, order: str | None = None) -> Any:
    """A copy of ``a`` (the same value: arrays are immutable)."""
    return out(as_array(a, "copy"))


def _is_float0(dtype: Any) -> bool:
    try:
        return dtype is not None and np.dtype(dtype) == jax.dtypes.float0
    except TypeError:
        return False


def _filled(row: Creation, shape: Any, fill_value: Any, dtype: Any) -> Any:
    """The array of a row without a template: ``fill_value`` (a row's own fill when it
    has no such argument) broadcast to ``shape``, in ``dtype`` (the default float for a
    fill of its own, the value's type, weak for a Python number, for ``fill_value``)."""
    name = row.name
    if row.fill != FILL_VALUE:
        dims, dt = _shape_dtype(name, shape, dtype)
        return sh.full(dims, row.value, dt)
    dims = _shape(name, shape)
    v = prep(fill_value, name)
    if dtype is not None:
        v = convert(v, user_dtype(dtype, name))
    return broadcast_to_shape(as_array(v, name), dims, name)


def _template(a: Any, name: str) -> Aval:
    """The aval of a ``*_like`` template: an array, or anything with ``shape`` and
    ``dtype`` (``ShapeDtypeStruct``, duck-typed arrays), as JAX."""
    if not is_array(a) and hasattr(a, "shape") and hasattr(a, "dtype"):
        return Aval(tuple(a.shape), dtypes.canonicalize(np.dtype(a.dtype)), False)
    return aval(prep(a, name))


def _like(row: Creation, a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    """The array of a ``*_like`` row: ``fill_value`` (or the row's fill) in ``a``'s shape
    and dtype (and weak type) unless ``shape``/``dtype`` say otherwise."""
    name = row.name
    fill = fill_value if row.fill == FILL_VALUE else row.value
    check_arraylike(row.errors_as, a, *((fill,) if row.fill == FILL_VALUE else ()))
    av = _template(a, name)
    s = _shape(name, shape) if shape is not None else av.shape
    if dtype is not None and row.fill != FILL_VALUE:
        return sh.full(s, fill, user_dtype(dtype, name))
    v = prep(fill, name)
    v = (
        convert(v, user_dtype(dtype, name))
        if dtype is not None
        else convert(v, av.dtype, av.weak_type)
    )
    return broadcast_to_shape(as_array(v, name), s, name)


def _numpy_form(row: Creation) -> Any:
    """The ``funcgrad.numpy`` function of a creation row: ``X(shape, [fill_value,]
    dtype=None, *, device=None)`` or ``X(a, [fill_value,] dtype=None, shape=None, *,
    device=None)``, as ``jax.numpy``'s."""
    names = _names(row)
    least = 2 if row.fill == FILL_VALUE else 1  # (positional arguments a call needs)

    def form(*args: Any, device: Any = None, out_sharding: Any = None, **kwargs: Any) -> Any:
        if out_sharding is not None and not row.out_sharding:
            raise TypeError(f"{row.name}() got an unexpected keyword argument 'out_sharding'")
        if kwargs or not least <= len(args) <= len(names):
            args = _bind(row, names, least, args, kwargs)
        if row.fill == FILL_VALUE:
            first, fill, *rest = args
        else:
            (first, *rest), fill = args, None
        dtype = rest[0] if rest else None
        if row.like:
            shape = rest[1] if len(rest) > 1 else None
            if device is None and out_sharding is None and isinstance(first, Tracer):
                out_sharding = to_aval(first).sharding if shape is None else None  # (JAX's)
            elif device is None and out_sharding is None:  # (the prototype's placement)
                weak = dtype is None and getattr(first, "weak_type", False)
                device = like_sharding(first, shape, weak)
            return _on(out(_like(row, first, fill, dtype, shape)), device, out_sharding)
        if row.float0 and _is_float0(dtype):
            return np.zeros(_shape(row.name, first), jax.dtypes.float0)
        return _on(out(_filled(row, first, fill, dtype)), device, out_sharding)

    P = inspect.Parameter
    params = [
        P(n, P.POSITIONAL_OR_KEYWORD, default=P.empty if i < least else None)
        for i, n in enumerate(names)
    ]
    form.__name__ = form.__qualname__ = row.name
    form.__doc__ = row.doc
    form.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            *params,
            P("device", P.KEYWORD_ONLY, default=None),
            *([P("out_sharding", P.KEYWORD_ONLY, default=None)] if row.out_sharding else []),
        ]
    )
    form.__module__ = __name__
    return form


def _names(row: Creation) -> tuple[str, ...]:
    """A numpy form's positional-or-keyword parameters, in order."""
    fill = ("fill_value",) if row.fill == FILL_VALUE else ()
    first = row.template if row.like else "shape"
    return (first, *fill, "dtype", *(("shape",) if row.like else ()))


def _bind(
    row: Creation, names: tuple[str, ...], least: int, args: tuple, kwargs: dict
) -> tuple[Any, ...]:
    """A numpy form's arguments in ``names``' order (``None`` for an optional one not
    given), with Python's errors for a wrong call."""
    if len(args) > len(names):
        raise TypeError(
            f"{row.name}() takes from {least} to {len(names)} positional arguments but "
            f"{len(args)} were given"
        )
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{row.name}() got an unexpected keyword argument '{k}'")
        if k in given:
            raise TypeError(f"{row.name}() got multiple values for argument '{k}'")
        given[k] = v
    missing = [n for n in names[:least] if n not in given]
    if missing:
        raise TypeError(f"{row.name}() missing required argument: '{missing[0]}'")
    return tuple(given.get(n) for n in names)


# the creation functions: each row's numpy form is generated here; PyTorch's torch.X,
# Tensor.new_X and out= come from the same rows (compat/_core/creation_rows.py)
_ALONE = TorchCreation()
_LIKE = TorchCreation(varargs=False, out=False, new=False, memory_format=True)
CREATION = (
    Creation(
        "zeros",
        fill=0,
        float0=True,
        doc="An array of zeros (the default float dtype unless ``dtype`` is given); with "
        "``dtype=float0`` (the tangent type of integers) a NumPy ``float0`` array, as JAX.",
        torch=TorchCreation(negative="zeros: Dimension size must be non-negative."),
    ),
    Creation(
        "ones",
        fill=1,
        float0=True,
        doc="An array of ones (the default float dtype unless ``dtype`` is given).",
        torch=_ALONE,
    ),
    Creation(
        "empty",
        fill=UNSPECIFIED,
        float0=True,
        doc="Same as :func:`zeros` (arrays are immutable, so there is nothing to leave "
        "uninitialised).",
        torch=TorchCreation(memory_format=True),
    ),
    Creation(
        "full",
        fill=FILL_VALUE,
        doc="An array of ``shape`` filled with ``fill_value`` (which may be an array to "
        "broadcast).",
        torch=TorchCreation(varargs=False),
    ),
    Creation(
        "zeros_like",
        fill=0,
        like=True,
        doc="Zeros with the shape and dtype (and weak type) of ``a``.",
        torch=_LIKE,
    ),
    Creation(
        "ones_like",
        fill=1,
        like=True,
        doc="Ones with the shape and dtype (and weak type) of ``a``.",
        torch=_LIKE,
    ),
    Creation(
        "empty_like",
        fill=UNSPECIFIED,
        like=True,
        template="prototype",
        errors_as="ones_like",
        doc="Same as :func:`zeros_like`.",
        torch=_LIKE,
        out_sharding=False,
    ),
    Creation(
        "full_like",
        fill=FILL_VALUE,
        like=True,
        doc="``fill_value`` broadcast to the shape of ``a``, in ``a``'s dtype unless ``dtype``.",
        torch=_LIKE,
    ),
)
#: the rows' numpy forms, by name (``funcgrad.numpy`` exports them)
DECLARED = {row.name: _numpy_form(row) for row in CREATION}
globals().update(DECLARED)


def _static(name: str, v: Any, what: str) -> Any:
    if isinstance(v, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: traced "
            f"array with shape {v.aval}. It arose in the jnp.{name} argument '{what}': it must "
            f"be concrete (static); mark it static with jit(static_argnums=...){here()}"
        )
    if hasattr(v, "shape") and not isinstance(v, np.ndarray):
        v = np.asarray(v)
    return v


def arange(
    start: Any,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Evenly spaced values in ``[start, stop)`` (static bounds); the dtype is that of the
    arguments (default int for Python ints, default float for Python floats);
    ``out_sharding`` places them over explicit mesh axes."""
    return _on(_arange(start, stop, step, dtype), device, out_sharding)


def _arange(start: Any, stop: Any, step: Any, dtype: Any) -> Any:
    if stop is None:
        start, stop = None, start  # one bound: the stop (named so in errors)
    for v in (start, stop, step):
        if isinstance(v, complex) or (np.iscomplexobj(v) and not isinstance(v, Tracer)):
            raise ValueError(
                f"Passing complex start/stop/step to jnp.arange is no longer supported, got "
                f"{v!r}{here()}"
            )
    start = _static("arange", start, "start")
    stop = _static("arange", stop, "stop")
    step = _static("arange", step, "step")
    for v in (start, stop, step):
        if v is not None and np.ndim(v) != 0:
            raise ValueError(f"arange: arguments must be scalars, got {v!r}{here()}")
    given = [prep(v, "arange") for v in (start, stop, step) if v is not None]
    if dtype is None:
        dt, _ = result_dtype(*given)
        if dt == np.dtype("bool"):
            dt = dtypes.default_dtype(1)
    else:
        dt = user_dtype(dtype, "arange")
    if start is None:
        start = 0
    step = 1 if step is None else step
    if step == 0:
        raise ValueError(f"arange: step must not be zero{here()}")
    if dt.kind in "iu" and all(float(v) == int(v) for v in (start, step)):
        n = np.arange(start, stop, step).shape[0]
        idx = sh.iota(dt, (n,), 0)
        if start == 0 and step == 1:
            return out(idx)
        return out(ew.add(ew.mul(idx, np.asarray(step, dt)), np.asarray(start, dt)))
    return out_array(np.arange(start, stop, step, dtype=dt))


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """``num`` evenly spaced samples from ``start`` to ``stop`` (``start``/``stop`` may be
    arrays; the samples run along ``axis``)."""
    check_arraylike("linspace", start, stop)
    return _on(_linspace(start, stop, num, endpoint, retstep, dtype, axis), device)


def _linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int,
    endpoint: bool,
    retstep: bool,
    dtype: Any,
    axis: int,
) -> Any:
    num = index(num, "num", "linspace")
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative{here()}")
    s0, s1 = prep(start, "linspace"), prep(stop, "linspace")
    if dtype is None:
        dt = dtypes.to_inexact(result_dtype(s0, s1, 1.0)[0])
        dt = dtypes.default_dtype(2) if not dtypes.is_inexact(dt) else dt
    else:
        dt = user_dtype(dtype, "linspace")
    ct = dtypes.to_inexact(dt)
    s0, s1 = convert(s0, ct), convert(s1, ct)
    bshape = np.broadcast_shapes(aval(s0).shape, aval(s1).shape)
    s0, s1 = as_array(s0, "linspace"), as_array(s1, "linspace")
    s0 = broadcast_to_shape(s0, bshape, "linspace")
    s1 = broadcast_to_shape(s1, bshape, "linspace")
    nd = len(bshape) + 1

    ax = normalize_axis(axis, nd, "linspace")
    div = (num - 1) if endpoint else num
    out_shape = bshape[:ax] + (num,) + bshape[ax:]
    bdims = tuple(i for i in range(nd) if i != ax)

    def along(n: int) -> Any:
        shape = bshape[:ax] + (n,) + bshape[ax:]
        return sh.iota(ct, shape, ax)

    def bounds(v: Any, n: int) -> Any:
        return sh.broadcast_in_dim(v, bshape[:ax] + (n,) + bshape[ax:], bdims)

    if num == 0:
        res = sh.full(out_shape, 0, ct)
    elif num == 1:
        res = bounds(s0, 1)
    else:
        n = div
        t = ew.div(along(n), np.asarray(div, ct))
        res = ew.add(ew.mul(bounds(s0, n), ew.sub(np.asarray(1, ct), t)), ew.mul(bounds(s1, n), t))
        if endpoint:
            res = sh.concatenate(res, bounds(s1, 1), dimension=ax)
    if dtypes.kind(dt) == 1:
        res = ew.floor(res)
    res = out(convert(res, dt))
    if retstep:
        step = ew.div(ew.sub(s1, s0), np.asarray(div, ct)) if div > 0 else np.asarray(np.nan, ct)
        return res, out(convert(step, dt) if dtypes.kind(dt) >= 2 else step)
    return res


def logspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    base: ArrayLike = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``base ** linspace(start, stop, num)``."""

    if dtype is None:
        dt = dtypes.to_inexact(result_dtype(prep(start, "logspace"), prep(stop, "logspace"))[0])
    else:
        dt = user_dtype(dtype, "logspace")
    ct = dtypes.to_inexact(dt)
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=ct, axis=axis)
    return out(convert(power(convert(prep(base, "logspace"), ct), lin), dt))


def _diagonal_offset(k: Any, name: str, bound: int | None = None) -> Any:
    """``eye``/``tri``'s diagonal ``k`` as an int32 scalar: a Python or NumPy int
    clamped to ``bound`` (a size past which every ``k`` gives the same matrix: JAX's
    ``eye`` takes any ``k``, its ``tri`` too with x64, without it an ``OverflowError``
    past int32), or a 0-d integer array, traced too (JAX's dynamic ``k``)."""
    if isinstance(k, (Tracer, jax.Array)):
        ka = aval(k)
        if ka.ndim != 0 or not dtypes.is_integer(ka.dtype):
            raise TypeError(f"{name}: k must be an integer scalar, got {fmt(k)}{here()}")
        return convert(k, np.dtype("int32"))
    k = index(k, "k", name)
    if bound is not None and (name == "eye" or dtypes.x64_enabled()):
        k = builtins.max(-bound, builtins.min(bound, k))
    return np.asarray(k, np.int32)


def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *, device: Any = None) -> Any:
    """An ``N x M`` matrix with ones on the ``k``-th diagonal (``k`` may be traced)."""
    n = index(N, "N", "eye")
    m = n if M is None else index(M, "M", "eye")
    k = _diagonal_offset(k, "eye", bound=n + m + 1)
    if n < 0 or m < 0:
        raise ValueError(f"eye: negative dimensions are not allowed, got ({n}, {m}){here()}")
    dt = _dtype("eye", dtype)
    i = sh.iota(np.dtype("int32"), (n, m), 0)
    j = sh.iota(np.dtype("int32"), (n, m), 1)
    return _on(out(ew.convert_element_type(ew.eq(ew.sub(j, i), k), dt)), device)


# the computed creation rows: each numpy function above is its row's numpy form; PyTorch's
# torch.X and out= are generated from the TorchCreation (compat/_core/creation_rows.py)
_START_END = (TorchArg("start", "scalar"), TorchArg("end", "scalar"), TorchArg("steps", "int"))
Creation(
    arange,
    torch=TorchCreation(
        varargs=False,
        new=False,
        args=(
            TorchArg("start", "number", 0),
            TorchArg("end", "number"),
            TorchArg("step", "number", 1),
        ),
        values="ramp",
        leading_default=True,
        inferred="arguments",
        refused="bc",
    ),
)
Creation(
    linspace,
    torch=TorchCreation(varargs=False, new=False, args=_START_END, values="spaced", refused="b"),
)
Creation(
    logspace,
    torch=TorchCreation(
        varargs=False,
        new=False,
        args=(*_START_END, TorchArg("base", "float", 10.0)),
        values="log_spaced",
        refused="b",
    ),
)
Creation(
    eye,
    torch=TorchCreation(
        varargs=False,
        new=False,
        args=(TorchArg("n", "int"), TorchArg("m", "int", None)),
        values="diagonal",
    ),
)


def identity(n: int, dtype: Any = None) -> Any:
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: Any = 0, dtype: Any = None) -> Any:
    """Ones at and below the ``k``-th diagonal (``float32`` by default, as in ``jax.numpy``;
    ``k`` may be traced)."""
    _shape("tri", (N, N if M is None else M))  # JAX's error for traced sizes
    n = index(N, "N", "tri")
    m = n if M is None else index(M, "M", "tri")
    k = _diagonal_offset(k, "tri", bound=n + m + 1)
    dt = user_dtype(dtype, "tri") if dtype is not None else np.dtype("float32")
    i = sh.iota(np.dtype("int32"), (n, m), 0)
    j = sh.iota(np.dtype("int32"), (n, m), 1)
    return out(ew.convert_element_type(ew.le(ew.sub(j, i), k), dt))


def meshgrid(
    *xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[Any]:
    """Coordinate arrays from coordinate vectors (``indexing`` ``"xy"`` or ``"ij"``)."""
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}{here()}")
    arrs = [as_array(x, "meshgrid") for x in xi]
    arrs = [sh.reshape(a, (aval(a).size,)) for a in arrs]
    nd = len(arrs)
    sizes = [aval(a).shape[0] for a in arrs]
    if indexing == "xy" and nd >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    res = []
    for i, a in enumerate(arrs):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and nd >= 2 else i
        s = [1] * nd
        s[pos] = aval(a).shape[0]
        r = sh.reshape(a, tuple(s))
        res.append(out(r if sparse else broadcast_to_shape(r, tuple(sizes), "meshgrid")))
    return res


def diag(v: ArrayLike, k: int = 0) -> Any:
    """The ``k``-th diagonal of a matrix, or a matrix with vector ``v`` on that diagonal."""

    v = as_array(v, "diag")
    av = aval(v)
    k = index(k, "k", "diag")
    if av.ndim == 2:
        return diagonal(v, k)
    if av.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got {fmt(v)}{here()}")
    n = av.shape[0] + abs(k)
    vv = pad(v, (0, abs(k)))
    vv = sh.reshape(vv, (n, 1) if k >= 0 else (1, n))
    mask = eye(n, k=k, dtype=bool)
    return where(mask, broadcast_to_shape(vv, (n, n)), convert(0, av.dtype, av.weak_type))


def diagflat(v: ArrayLike, k: int = 0) -> Any:
    """A matrix with the flattened ``v`` on its ``k``-th diagonal."""
    v = as_array(v, "diagflat")
    return diag(sh.reshape(v, (aval(v).size,)), k)


# PyTorch's diag takes a vector or a matrix (the node says which); diagflat any tensor
ArrayRow(
    diag,
    torch=TorchArrayForm(
        "DiagEmbedBackward0",
        (TorchParam("diagonal", "k", "int", 0),),
        ndim=(1, 2, "diag(): Supports 1D or 2D tensors. Got {ndim}D"),
        nodes=(("ndim", 2, "DiagonalBackward0_copy"),),
        samples=(((3,), ()), ((3, 4), (1,)), ((4,), (-2,))),
    ),
)
_OFFSET, _FLATS = (TorchParam("offset", "k", "int", 0),), (((2, 2), (1,)), ((3,), (-1,)))
_FLAT = TorchArrayForm("DiagEmbedBackward0", _OFFSET, samples=_FLATS, out=False)  # (no out=)
ArrayRow(diagflat, torch=_FLAT)


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (the array API function form of ``x.astype``)."""

    x = as_array(x, "astype")
    if dtype is None:
        dtype = dtypes.default_dtype(2)
    return _on(out(convert(x, user_dtype(dtype, "astype"))), device)


def geomspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop``."""
    check_arraylike("geomspace", start, stop)
    s, e = asarray(start), asarray(stop)
    dt = dtypes.to_inexact(dtypes.result_type((aval(s).dtype, False), (aval(e).dtype, False))[0])
    s, e = convert(s, dt), convert(e, dt)
    sign = _ufuncs.sign(s)
    res = sign * logspace(
        _ufuncs.log10(s * sign),
        _ufuncs.log10(e * sign),
        num,
        endpoint=endpoint,
        base=10.0,
        dtype=dt,
        axis=axis,
    )
    if num > 0:
        res = moveaxis(res, axis, 0)
        res = res.at[0].set(s)
        if endpoint and num > 1:
            res = res.at[-1].set(e)
        res = moveaxis(res, 0, axis)
    return out(res if dtype is None else asarray(res, dtype=dtype))
