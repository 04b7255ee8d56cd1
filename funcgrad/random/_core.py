"""Keys, bits, uniform/normal and the samplers built directly on them (``jax.random``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax.numpy as _jnp_dtypes  # dtype metadata (finfo/iinfo) only
import numpy as np

from funcgrad import config
from funcgrad import numpy as fnp
from funcgrad.core import dtypes
from funcgrad.core.axes import normalize_axis
from funcgrad.core.errors import ConcretizationTypeError, user_frame, where
from funcgrad.core.interp import Tracer, bind, to_aval
from funcgrad.jit import jit
from funcgrad.primitives import bits as bits_ops
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import random as rp
from funcgrad.primitives import shape as sh
from funcgrad.primitives import sort as srt
from funcgrad.sharding import reshard, takes_out_sharding

_U32 = np.dtype("uint32")


# --------------------------------------------------------------------------- helpers


def _check_key(name: str, key: Any) -> Any:
    if hasattr(key, "dtype") and "key<" in str(key.dtype):
        raise TypeError(
            f"{name}: typed JAX keys are not supported; pass raw uint32[2] keys "
            "(funcgrad.random.key, jax.random.PRNGKey or jax.random.key_data(k))"
        )
    if isinstance(key, (list, tuple)):
        key = np.asarray(key, _U32)
    aval = to_aval(key)
    if aval.dtype == _U32 and aval.ndim > 1 and aval.shape[-1] == 2:
        # a batch of keys: JAX's ValueError and phrase
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape {aval.shape} "
            f"!= (). Use vmap for batching (funcgrad.vmap over the keys)."
            f"{where(user_frame())}"
        )
    if aval.shape != (2,) or aval.dtype != _U32:
        raise TypeError(
            f"{name}: expected a single PRNG key, a uint32 array of shape (2,) "
            f"(funcgrad.random.key(seed)), got {aval}; use vmap for batches of keys."
            f"{where(user_frame())}"
        )
    return key


def static_shape(name: str, shape: Any) -> tuple[int, ...]:
    """A sampler's or initializer's ``shape`` argument (an int or a sequence of ints) as a
    tuple of ints; a ``TypeError`` naming ``name`` otherwise."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:  # (a traced size too: shapes are static); JAX's phrase
        raise TypeError(
            "Shapes must be 1D sequences of concrete values of integer type, got "
            f"{shape!r} ({name}: shape){where(user_frame())}"
        ) from None


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dt = dtypes.canonicalize(np.float64 if dtype is None else dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    dt = dtypes.canonicalize(np.int64 if dtype is None else dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"{name} only accepts integer dtypes, got {dt}")
    return dt


def _check_broadcast(name: str, shape: tuple[int, ...], *params: Any) -> None:
    for p in params:
        ps = to_aval(p).shape
        if np.broadcast_shapes(shape, ps) != shape:
            raise ValueError(
                f"{name}: parameter shape {ps} is not broadcast-compatible with shape {shape}"
            )


def _full(x: Any, dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    """``x`` as ``dtype`` broadcast to ``shape``."""
    x = fnp.asarray(x)
    x = ew.convert_element_type(x, dtype)
    return fnp.broadcast_to(x, shape) if to_aval(x).shape != shape else x


def _key_row(keys: Any, i: int) -> Any:
    """``keys[i]`` of a ``uint32[n, 2]`` key array."""
    return sh.reshape(sh.slice(keys, (i, 0), (i + 1, 2)), (2,))


# --------------------------------------------------------------------------- keys


#: the PRNG implementation funcgrad's raw keys use (the one ``jax_default_prng_impl`` names
#: by default); JAX's other implementations come with its typed keys
_IMPL = "threefry2x32"
_JAX_IMPLS = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32")


def _check_impl(name: str, impl: Any) -> None:
    if impl is None or impl == _IMPL:
        return
    if isinstance(impl, str) and impl not in _JAX_IMPLS:
        names = ", ".join(f'"{n}"' for n in _JAX_IMPLS)
        raise ValueError(
            f'unrecognized PRNG implementation "{impl}". Did you mean one of: {names}?'
        )
    if not isinstance(impl, str):
        raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")
    raise NotImplementedError(
        f"{name}: funcgrad's keys are raw {_IMPL} keys; impl={impl!r} needs JAX's typed keys"
    )


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """A PRNG key from an integer seed; the same as ``jax.random.PRNGKey``.

    Args:
        seed: a Python int or an integer scalar array.
        impl: the PRNG implementation's name; only ``"threefry2x32"`` (the default).
        dtype: the same as ``impl`` (JAX's newer spelling); not both.

    Returns:
        A raw key, a ``uint32[2]`` array. Unlike ``jax.random.key``, which returns a
        typed key array, funcgrad's keys are always raw ``uint32`` arrays; the numbers
        drawn from them are those of ``jax.random`` with the same key (threefry). The
        ``jax_random_seed_offset`` option is added to the seed, as in JAX.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A PRNG key from an integer seed (``jax.random.PRNGKey``): the same as :func:`key`."""
    return _key("PRNGKey", seed, impl)


def _key(name: str, seed: Any, impl: Any) -> Any:
    _check_impl(name, impl)
    if isinstance(seed, bool) or (hasattr(seed, "dtype") and "key<" in str(seed.dtype)):
        raise TypeError(f"{name}: PRNG key seed must be an integer, got {seed!r}")
    offset = config.read("jax_random_seed_offset")
    if isinstance(seed, int):
        seed += offset
        dt = dtypes.default_dtype(1)
        info = np.iinfo(dt)
        if not info.min <= seed <= info.max:
            raise OverflowError(f"{name}: seed {seed} does not fit in {dt.name}")
        seed = np.asarray(seed, dt)
        offset = 0
    aval = to_aval(seed)
    if aval.shape != ():
        raise TypeError(
            f"{name} accepts a scalar seed, but was given an array of shape {aval.shape}; "
            "use vmap for batching"
        )
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"{name}: PRNG key seed must be an integer, got {aval}")
    if offset:
        seed = fnp.add(seed, np.asarray(offset, aval.dtype))
    return rp.random_seed(seed)


def key_data(keys: Any) -> Any:
    """The ``uint32[..., 2]`` data of a key array (funcgrad keys are their data already)."""
    if hasattr(keys, "dtype") and "key<" in str(keys.dtype):
        import jax.random as _jr  # a typed JAX key handed in: unwrap it (data, no transform)

        return _jr.key_data(keys)
    aval = to_aval(keys)
    if aval.dtype != _U32 or not aval.shape or aval.shape[-1] != 2:
        raise TypeError(f"key_data: expected a PRNG key array uint32[..., 2], got {aval}")
    return keys


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """A key array from ``uint32[..., 2]`` key data (threefry2x32, the only implementation)."""
    if impl is not None and dtype is not None:
        raise ValueError(
            "Cannot specify both `impl` and `dtype` arguments to funcgrad.random.wrap_key_data"
        )
    spec = impl if impl is not None else dtype
    if spec is not None and str(spec) not in ("threefry2x32", "key<fry>"):
        raise ValueError(f"wrap_key_data: only the threefry2x32 implementation exists, got {spec}")
    aval = to_aval(key_bits_array)
    if aval.dtype != _U32 or not aval.shape or aval.shape[-1] != 2:
        raise TypeError(f"wrap_key_data: expected uint32 key data of shape (..., 2), got {aval}")
    return key_bits_array


def key_impl(keys: Any) -> str:
    """The name of the PRNG implementation of ``keys``: always ``"threefry2x32"``."""
    key_data(keys)
    return "threefry2x32"


def clone(key: Any) -> Any:
    """``key`` itself (keys are immutable values; JAX's ``clone`` matters for key reuse checks)."""
    return key


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """Split ``key`` into new, independent keys.

    Args:
        key: a key from :func:`key` or an earlier split.
        num: the number of keys, or a shape of keys.

    Returns:
        ``uint32[num, 2]`` (or ``uint32[*num, 2]`` for a shape): one key per row, as
        ``jax.random.split``. Draw with the new keys and do not reuse ``key``.
    """
    key = _check_key("split", key)
    return rp.random_split(key, static_shape("split", num))


def fold_in(key: Any, data: Any) -> Any:
    """A new key mixing an integer ``data`` (converted to uint32) into ``key``."""
    key = _check_key("fold_in", key)
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        data = np.asarray(int(data) & 0xFFFFFFFF, _U32)
    aval = to_aval(data)
    if aval.shape != ():
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array of shape {aval.shape}; "
            "use vmap for batching"
        )
    return rp.random_fold_in(key, data)


def _placed(x: Any, out_sharding: Any) -> Any:
    """A sampler's result placed by its ``out_sharding`` (a ``NamedSharding`` or a
    ``PartitionSpec`` over the current mesh with explicit axes), as JAX's samplers take
    it: the same numbers (the keys' counters do not depend on the placement)."""
    return x if out_sharding is None else reshard(x, out_sharding)


#: a sampler taking JAX's keyword ``out_sharding`` too (the numbers do not depend on it)
placed_sampler = takes_out_sharding


def bits(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Uniform random bits of an unsigned ``dtype`` (default uint64 with x64, else uint32)."""
    key = _check_key("bits", key)
    dt = dtypes.canonicalize(np.uint64 if dtype is None else dtype)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    out = rp.random_bits(key, dt.itemsize * 8, static_shape("bits", shape))
    return _placed(out, out_sharding)


# --------------------------------------------------------------------------- continuous


def _unit(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    """Uniform floats in [0, 1): ``nmant`` random bits as the mantissa of a float in [1, 2),
    minus one -- JAX's recipe op for op, so XLA compiles the same program (and rounds what
    follows the same way) at every optimisation level."""
    info = _jnp_dtypes.finfo(dt)
    nbits, nmant = info.bits, info.nmant
    rng_bits = 8 if nmant < 8 else nbits
    udt = np.dtype(f"uint{nbits}")
    b = rp.random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        b = ew.convert_element_type(b, udt)
    m = bind(bits_ops.shift_right_logical_p, b, np.asarray(rng_bits - nmant, udt))
    one = np.asarray(1.0, dt).view(udt)
    f = bits_ops.bitcast_convert_type(ew.bitwise_or(m, one), dt)
    return ew.sub(f, np.asarray(1.0, dt))


def _uniform(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    lo, hi = _full(minval, dt, shape), _full(maxval, dt, shape)
    u = _unit(key, shape, dt)
    return ew.max(lo, ew.add(ew.mul(u, ew.sub(hi, lo)), lo))


# One compiled unit (a ``jit_call`` inside other transforms), as JAX jits its samplers: XLA
# contracts ``u * (hi - lo) + lo`` into a fused multiply-add, and compiling the sampler as a
# whole makes eager, jit and vmap results agree bit for bit.
_uniform_unit = jit(_uniform, static_argnums=(3, 4))


def uniform(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
    *,
    out_sharding: Any = None,
) -> Any:
    """Uniform samples in ``[minval, maxval)``, as ``jax.random.uniform``.

    Args:
        key: the key to draw with.
        shape: the shape of the result.
        dtype: a float dtype (the default float dtype when ``None``).
        minval: the lower bound (inclusive), broadcast to ``shape``.
        maxval: the upper bound (exclusive), broadcast to ``shape``.
        out_sharding: where the result is placed over a mesh's explicit axes.

    Returns:
        An array of ``shape`` and ``dtype``: the same numbers as ``jax.random.uniform``
        with the same key.
    """
    key = _check_key("uniform", key)
    shape = static_shape("uniform", shape)
    dt = _float_dtype("uniform", dtype)
    _check_broadcast("uniform", shape, minval, maxval)
    return _placed(_uniform_unit(key, minval, maxval, shape, dt), out_sharding)


def normal(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard normal samples, as ``jax.random.normal``.

    Args:
        key: the key to draw with.
        shape: the shape of the result.
        dtype: a float dtype (the default float dtype when ``None``), or a complex one,
            whose real and imaginary parts then have variance 1/2.
        out_sharding: where the result is placed over a mesh's explicit axes.

    Returns:
        An array of ``shape`` and ``dtype``, computed by the inverse CDF of uniform
        samples: the same numbers as ``jax.random.normal`` with the same key.

    Raises:
        ValueError: ``dtype`` is not a float or complex dtype.
    """
    key = _check_key("normal", key)
    shape = static_shape("normal", shape)
    dt = dtypes.canonicalize(np.float64 if dtype is None else dtype)
    if dt.kind == "c":
        return _placed(_complex_normal_unit(key, shape, dt), out_sharding)
    dt = _float_dtype("normal", dt)
    lo = np.asarray(np.nextafter(np.array(-1.0, dt), np.array(0.0, dt), dtype=dt))
    u = uniform(key, shape, dt, lo, 1.0)
    return _placed(ew.mul(np.asarray(np.sqrt(2), dt), ew.erf_inv(u)), out_sharding)


def _complex_normal(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    real = np.dtype(np.array(0, dt).real.dtype)
    keys = split(key)
    re = ew.convert_element_type(normal(_key_row(keys, 0), shape, real), dt)
    im = ew.convert_element_type(normal(_key_row(keys, 1), shape, real), dt)
    z = ew.add(re, ew.mul(np.asarray(1j, dt), im))
    return ew.div(z, np.asarray(np.sqrt(2), dt))


_complex_normal_unit = jit(_complex_normal, static_argnums=(1, 2))


def _gumbel(key: Any, shape: tuple[int, ...], dt: np.dtype, mode: str) -> Any:
    info = _jnp_dtypes.finfo(dt)
    if mode in ("high", "highest"):
        # "highest" uses JAX's float32 bit trick; it is sampled like "high" here
        u = uniform(key, (2, *shape), dt)
        high = fnp.reshape(sh.slice(u, (0,) + (0,) * len(shape), (1, *shape)), shape)
        low = fnp.reshape(sh.slice(u, (1,) + (0,) * len(shape), (2, *shape)), shape)
        fine = ew.add(ew.add(high, ew.mul(np.asarray(2.0**-info.nmant, dt), low)), info.tiny)
        x = ew.select_n(ew.ge(high, np.asarray(0.5, dt)), fine, high)
        return ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x)))))
    u = uniform(key, shape, dt, float(info.tiny), 1.0)
    return ew.neg(ew.log(ew.neg(ew.log(u))))


_gumbel_unit = jit(_gumbel, static_argnums=(1, 2, 3))


@placed_sampler
def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel floats: ``-log(-log(u))``; ``mode="high"`` resolves the far tail with
    two uniforms per sample."""
    key = _check_key("gumbel", key)
    shape = static_shape("gumbel", shape)
    dt = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel_unit(key, shape, dt, mode)


@placed_sampler
def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard exponential floats: ``-log1p(-u)``."""
    key = _check_key("exponential", key)
    shape = static_shape("exponential", shape)
    dt = _float_dtype("exponential", dtype)
    u = uniform(key, shape, dt)
    return ew.neg(ew.log1p(ew.neg(u)))


# --------------------------------------------------------------------------- discrete


def bernoulli(
    key: Any,
    p: Any = 0.5,
    shape: Sequence[int] | None = None,
    mode: str = "low",
    *,
    out_sharding: Any = None,
) -> Any:
    """Booleans that are True with probability ``p``; ``mode="high"`` compares with two
    uniforms' worth of bits (for tiny ``p``); ``out_sharding`` places the result over a
    mesh's explicit axes."""
    return _placed(_bernoulli(key, p, shape, mode), out_sharding)


def _bernoulli(key: Any, p: Any, shape: Sequence[int] | None, mode: str) -> Any:
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key = _check_key("bernoulli", key)
    pa = to_aval(p)
    if not dtypes.is_float(pa.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {pa.dtype}.")
    shape = pa.shape if shape is None else static_shape("bernoulli", shape)
    _check_broadcast("bernoulli", shape, p)
    dt = dtypes.canonicalize(pa.dtype)
    if mode == "high":
        return _bernoulli_high_unit(key, p, shape, dt)
    return ew.lt(uniform(key, shape, dt), _full(p, dt, shape))


def _bernoulli_high(key: Any, p: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = uniform(key, (2, *shape), dt)
    u1 = fnp.reshape(sh.slice(u, (0,) * (len(shape) + 1), (1, *shape)), shape)
    u2 = fnp.reshape(sh.slice(u, (1,) + (0,) * len(shape), (2, *shape)), shape)
    u2 = ew.mul(u2, np.asarray(2.0 ** -_jnp_dtypes.finfo(dt).nmant, dt))
    return ew.lt(u2, ew.sub(_full(p, dt, shape), u1))


_bernoulli_high_unit = jit(_bernoulli_high, static_argnums=(2, 3))


def _top_k_indices(x: Any, k: int) -> Any:
    """Indices of the ``k`` largest entries along the last axis, largest first; ties by
    index (``lax.top_k``'s order)."""
    xa = to_aval(x)
    idx = fnp.broadcast_to(fnp.arange(xa.shape[-1], dtype=np.int32), xa.shape)
    order = srt.sort(ew.neg(x), idx, dimension=xa.ndim - 1, num_keys=1)[1]
    return sh.slice(order, (0,) * xa.ndim, (*xa.shape[:-1], k))


@placed_sampler
def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
) -> Any:
    """Samples from categorical distributions given unnormalised ``logits`` (Gumbel-max);
    ``replace=False`` draws distinct categories (Gumbel-top-k)."""
    key = _check_key("categorical", key)
    logits = fnp.asarray(logits)
    la = to_aval(logits)
    if not dtypes.is_float(la.dtype):
        raise TypeError(f"categorical: logits must be floating point, got {la.dtype}")
    nd = la.ndim
    axis = normalize_axis(axis, nd, "categorical") - nd  # (counted from the end)
    batch_shape = tuple(np.delete(la.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = static_shape("categorical", shape)
        if np.broadcast_shapes(shape, batch_shape) != shape:
            raise ValueError(
                f"categorical: shape {shape} is not broadcast-compatible with the logits' "
                f"batch shape {batch_shape}"
            )
    prefix = shape[: len(shape) - len(batch_shape)]
    if not replace:
        g = ew.add(logits, gumbel(key, la.shape, la.dtype, mode=mode))
        k = math.prod(prefix)
        if k > la.shape[axis]:
            raise ValueError(
                f"Number of samples without replacement ({k}) cannot exceed number of "
                f"categories ({la.shape[axis]})."
            )
        ind = _top_k_indices(fnp.moveaxis(g, axis, -1), k)  # batch_shape + (k,)
        ind = fnp.moveaxis(ind, -1, 0)
        return fnp.reshape(ind, shape)
    logits_shape = list(shape[len(shape) - len(batch_shape) :])
    logits_shape.insert(axis % nd, la.shape[axis])
    g = gumbel(key, (*prefix, *logits_shape), la.dtype, mode=mode)
    expanded = fnp.expand_dims(logits, tuple(range(len(prefix)))) if prefix else logits
    return fnp.argmax(ew.add(g, fnp.broadcast_to(expanded, to_aval(g).shape)), axis=axis)


def _convert_and_clip(x: Any, dt: np.dtype) -> Any:
    """Integer ``x`` converted to ``dt``, clipping to its range instead of wrapping."""
    src = to_aval(x).dtype
    lo = max(int(np.iinfo(dt).min), int(np.iinfo(src).min))
    hi = min(int(np.iinfo(dt).max), int(np.iinfo(src).max))
    x = ew.min(ew.max(x, np.asarray(lo, src)), np.asarray(hi, src))
    return ew.convert_element_type(x, dt)


def randint(
    key: Any,
    shape: Sequence[int],
    minval: Any,
    maxval: Any,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Integers uniform in ``[minval, maxval)`` (JAX's double-width modulus method);
    ``out_sharding`` places the result over a mesh's explicit axes."""
    return _placed(_randint(key, shape, minval, maxval, dtype), out_sharding)


def _randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any) -> Any:
    key = _check_key("randint", key)
    shape = static_shape("randint", shape)
    dt = _int_dtype("randint", dtype)
    info = np.iinfo(dt)
    if info.bits < 32:  # sample in 32 bits to keep the bias small
        lo = fnp.clip(fnp.asarray(minval).astype("int32"), int(info.min), int(info.max))
        hi = fnp.clip(fnp.asarray(maxval).astype("int32"), int(info.min), int(info.max) + 1)
        return ew.convert_element_type(randint(key, shape, lo, hi, np.int32), dt)
    _check_broadcast("randint", shape, minval, maxval)
    lo, hi = fnp.asarray(minval), fnp.asarray(maxval)
    if not dtypes.is_integer(to_aval(lo).dtype):
        lo = lo.astype(dtypes.default_dtype(1))
    if not dtypes.is_integer(to_aval(hi).dtype):
        hi = hi.astype(dtypes.default_dtype(1))
    hdt = to_aval(hi).dtype
    top = _convert_and_clip(np.asarray(info.max, dt), hdt)
    out_of_range = ew.gt(hi, top)
    lo, hi = _convert_and_clip(lo, dt), _convert_and_clip(hi, dt)
    lo, hi = fnp.broadcast_to(lo, shape), fnp.broadcast_to(hi, shape)
    out_of_range = fnp.broadcast_to(out_of_range, shape)
    nbits = info.bits
    keys = split(key)
    higher = rp.random_bits(_key_row(keys, 0), nbits, shape)
    lower = rp.random_bits(_key_row(keys, 1), nbits, shape)
    udt = np.dtype(f"uint{nbits}")
    span = ew.convert_element_type(ew.sub(hi, lo), udt)
    one = np.asarray(1, udt)
    span = ew.select_n(ew.le(hi, lo), span, fnp.broadcast_to(one, shape))
    span = ew.select_n(ew.bitwise_and(out_of_range, ew.gt(hi, lo)), span, ew.add(span, one))
    mult = ew.rem(np.asarray(2 ** (nbits // 2), udt), span)
    mult = ew.rem(ew.mul(mult, mult), span)
    offset = ew.add(ew.mul(ew.rem(higher, span), mult), ew.rem(lower, span))
    offset = ew.rem(offset, span)
    return ew.add(lo, ew.convert_element_type(offset, dt))


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """Shuffle ``x`` along ``axis`` by sorting on fresh random 32-bit keys (JAX's recipe)."""
    size = to_aval(x).size
    rounds = math.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max))
    for _ in range(rounds):
        keys = split(key)
        key, sub = _key_row(keys, 0), _key_row(keys, 1)
        sort_keys = rp.random_bits(sub, 32, to_aval(x).shape)
        x = srt.sort(sort_keys, x, dimension=axis, num_keys=1)[1]
    return x


@placed_sampler
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``."""
    key = _check_key("permutation", key)
    if isinstance(x, Tracer) and not to_aval(x).shape:
        raise ConcretizationTypeError(
            "permutation: an integer x must be concrete (a Python int), got a traced "
            f"{to_aval(x)}{where(user_frame())}"
        )
    if not to_aval(x).shape:
        if not dtypes.is_integer(to_aval(x).dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        normalize_axis(axis, 1, "permutation")  # arange(x)'s axis: 0 or -1, as JAX checks
        return _shuffle(key, fnp.arange(int(np.asarray(x))), 0)
    x = fnp.asarray(x)
    nd = to_aval(x).ndim
    axis = normalize_axis(axis, nd, "permutation")
    if independent or nd == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, fnp.arange(to_aval(x).shape[axis]), 0)
    return fnp.take(x, ind, axis=axis)


def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Any:
    """Random samples from ``a`` (or ``arange(a)`` for an int), as ``jax.random.choice``."""
    key = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape}")
    shape = static_shape("choice", shape)
    arr = fnp.asarray(a)
    aa = to_aval(arr)
    if aa.ndim == 0:
        if isinstance(a, Tracer):
            raise TypeError("choice: an integer `a` must be concrete (a Python int)")
        n = int(np.asarray(a))
    else:
        axis = normalize_axis(axis, aa.ndim, "choice")
        n = aa.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, dtype=aa.dtype)
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n}) "
            "when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n)
            result = ind if aa.ndim == 0 else fnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n if aa.ndim == 0 else arr, axis)
            limit = list(to_aval(perm).shape)
            limit[0 if aa.ndim == 0 else axis] = n_draws
            result = sh.slice(perm, (0,) * len(limit), tuple(limit))
    else:
        p = fnp.asarray(p)
        if not dtypes.is_inexact(to_aval(p).dtype):
            p = p.astype(dtypes.to_inexact(to_aval(p).dtype))
        if to_aval(p).shape != (n,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {to_aval(p).shape} and a.shape[axis] is {n}."
            )
        if replace:
            p_cuml = fnp.cumsum(p)
            total = fnp.reshape(sh.slice(p_cuml, (n - 1,), (n,)), ())
            pdt = to_aval(p_cuml).dtype
            r = ew.mul(total, ew.sub(np.asarray(1, pdt), uniform(key, shape, pdt)))
            # searchsorted(p_cuml, r, side="left"): how many cumulative sums lie below r
            below = fnp.less(fnp.expand_dims(p_cuml, tuple(range(len(shape)))), r[..., None])
            ind = fnp.sum(below.astype(np.int32), axis=-1).astype(dtypes.default_dtype(1))
        else:
            g = ew.add(gumbel(key, (n,), to_aval(p).dtype, mode=mode), fnp.log(p))
            ind = _top_k_indices(g, n_draws).astype(dtypes.default_dtype(1))
        result = ind if aa.ndim == 0 else fnp.take(arr, ind, axis=axis)
    final = shape if aa.ndim == 0 else (*aa.shape[:axis], *shape, *aa.shape[axis + 1 :])
    return fnp.reshape(result, final)
