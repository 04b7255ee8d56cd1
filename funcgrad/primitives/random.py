"""Random-number primitives over raw threefry keys.

A key is a ``uint32[2]`` array (JAX's raw ``PRNGKey`` layout); every random
primitive also accepts a stack of keys ``uint32[*batch, 2]`` and works per key,
which is what its batching rule binds. The lowering is the counter-based
Threefry-2x32 hash in JAX's *partitionable* layout (``jax_threefry_partitionable``,
JAX's default): element ``i`` of the output hashes the 64-bit counter ``i``
under its key. Results depend only on the key and the shape, never on the
transform (eager, ``jit``, ``vmap`` over keys), and equal ``jax.random``'s.

* ``random_seed(seed)``: integer seeds → keys (``jax.random.PRNGKey``).
* ``random_bits(keys, bit_width, shape)``: uniform unsigned bits.
* ``random_split(keys, shape)``: new keys (``jax.random.split``).
* ``random_fold_in(keys, data)``: mix an integer into a key.
* ``random_gamma(keys, a, log_space)``: Marsaglia–Tsang gamma samples (``jax.random.gamma``),
  differentiable in ``a`` through ``random_gamma_grad(a, x)`` (``lax.random_gamma_grad``).

The multi-operand ``sort`` primitive that ``funcgrad.random.permutation`` uses lives in
:mod:`funcgrad.primitives.sort` (re-exported here under its old name).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax
from jax.extend.random import threefry2x32_p

from funcgrad.core import compile_cache, dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sort import sort, sort_p  # noqa: F401  (its old home)

FAMILY = "random"

_U32 = np.dtype("uint32")
_UINT = {8: np.dtype("uint8"), 16: np.dtype("uint16"), 32: _U32, 64: np.dtype("uint64")}


# --------------------------------------------------------------------------- helpers


def _check_keys(name: str, keys: Aval) -> tuple[int, ...]:
    """The batch shape of a key array ``uint32[*batch, 2]``."""
    if keys.dtype != _U32 or not keys.shape or keys.shape[-1] != 2:
        raise TypeError(
            f"{name}: expected a PRNG key array of dtype uint32 and shape (..., 2) (as made by "
            f"funcgrad.random.key), got {keys}"
        )
    return keys.shape[:-1]


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{name}: negative dimension in shape {out}")
    return out


def _key_words(keys: Any, full: tuple[int, ...]) -> tuple[Any, Any]:
    """The two key words of ``uint32[*batch, 2]`` broadcast to ``full = (*batch, ...)``."""
    nb = keys.ndim - 1
    k1 = lax.index_in_dim(keys, 0, axis=nb, keepdims=False)
    k2 = lax.index_in_dim(keys, 1, axis=nb, keepdims=False)
    dims = tuple(range(nb))
    return lax.broadcast_in_dim(k1, full, dims), lax.broadcast_in_dim(k2, full, dims)


def _counters(shape: tuple[int, ...], full: tuple[int, ...]) -> tuple[Any, Any]:
    """(high, low) 32-bit words of the row-major index of each element of ``shape``."""
    size = math.prod(shape)
    if size >= 2**32:
        raise NotImplementedError("random arrays of 2**32 or more elements")
    lo = lax.reshape(lax.iota(_U32, size), shape) if shape else lax.full((), 0, _U32)
    hi = lax.full(full, 0, _U32)
    lo = lax.broadcast_in_dim(lo, full, tuple(range(len(full) - len(shape), len(full))))
    return hi, lo


def _threefry(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 of counter words ``(x1, x2)`` under key words ``(k1, k2)``, elementwise."""
    out = threefry2x32_p.bind(k1, k2, x1, x2)
    return out[0], out[1]


def _hash_shape(keys: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    batch = tuple(keys.shape[:-1])
    full = (*batch, *shape)
    k1, k2 = _key_words(keys, full)
    c1, c2 = _counters(shape, full)
    return _threefry(k1, k2, c1, c2)


def _batch_keys_front(args: list, dims: list) -> tuple[list, int]:
    size = rules.batch_size(args, dims)
    return [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)], size


# --------------------------------------------------------------------------- random_seed

random_seed_p = Primitive("random_seed", family=FAMILY, differentiable=False)


@random_seed_p.def_abstract_eval
def _random_seed_abstract_eval(seed: Aval) -> Aval:
    if not dtypes.is_integer(seed.dtype):
        raise TypeError(f"random_seed: PRNG key seed must be an integer, got {seed}")
    return Aval((*seed.shape, 2), _U32)


@random_seed_p.def_lower
def _random_seed_lower(seed: Any) -> Any:
    seed = np.asarray(seed) if isinstance(seed, (int, np.generic)) else seed
    dt = np.dtype(seed.dtype)
    if dt.itemsize == 8:
        hi = lax.convert_element_type(lax.shift_right_logical(seed, lax.full((), 32, dt)), _U32)
        lo = lax.convert_element_type(lax.bitwise_and(seed, lax.full((), 0xFFFFFFFF, dt)), _U32)
    else:
        hi = lax.full(seed.shape, 0, _U32)
        lo = lax.convert_element_type(seed, _U32)
    nd = len(seed.shape)
    return lax.concatenate([lax.expand_dims(hi, (nd,)), lax.expand_dims(lo, (nd,))], nd)


rules.def_vectorized_unary(random_seed_p)  # (the key axis is a new trailing one)


@random_seed_p.def_examples
def _random_seed_examples(rng: np.random.Generator) -> list[Example]:
    out = [
        Example([np.int32(42)]),
        Example([np.asarray(rng.integers(-(2**31), 2**31 - 1, (3,)), np.int32)]),
    ]
    if dtypes.x64_enabled():
        out.append(Example([np.asarray([0, 1, 2**40, -5], np.int64)]))
    return out


def random_seed(seed: Any) -> Any:
    """Threefry keys ``uint32[*seed.shape, 2]`` from integer seeds (``jax.random.PRNGKey``)."""
    return bind(random_seed_p, seed)


# --------------------------------------------------------------------------- random_bits

random_bits_p = Primitive("random_bits", family=FAMILY, differentiable=False)


@random_bits_p.def_abstract_eval
def _random_bits_abstract_eval(keys: Aval, *, bit_width: int, shape: tuple[int, ...]) -> Aval:
    batch = _check_keys("random_bits", keys)
    if bit_width not in _UINT:
        raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got {bit_width}")
    if bit_width == 64 and not dtypes.x64_enabled():
        raise TypeError("random_bits: 64-bit values need jax_enable_x64")
    return Aval((*batch, *_shape("random_bits", shape)), _UINT[bit_width])


@random_bits_p.def_lower
def _random_bits_lower(keys: Any, *, bit_width: int, shape: tuple[int, ...]) -> Any:
    b1, b2 = _hash_shape(keys, shape)
    dt = _UINT[bit_width]
    if bit_width == 64:
        hi = lax.convert_element_type(b1, dt)
        lo = lax.convert_element_type(b2, dt)
        return lax.bitwise_or(lax.shift_left(hi, lax.full((), 32, dt)), lo)
    bits = lax.bitwise_xor(b1, b2)
    return bits if bit_width == 32 else lax.convert_element_type(bits, dt)


@random_bits_p.def_batch
def _random_bits_batch(args: list, dims: list, *, bit_width: int, shape: tuple) -> tuple:
    (keys,), _ = _batch_keys_front(args, dims)
    return bind(random_bits_p, keys, bit_width=bit_width, shape=shape), 0


@random_bits_p.def_examples
def _random_bits_examples(rng: np.random.Generator) -> list[Example]:
    key = np.asarray(rng.integers(0, 2**32, (2,)), _U32)
    out = [
        Example([key], {"bit_width": 32, "shape": (3,)}),
        Example([key], {"bit_width": 8, "shape": (2, 3)}),
        Example([key], {"bit_width": 16, "shape": ()}),
        Example(
            [np.asarray(rng.integers(0, 2**32, (2, 2)), _U32)], {"bit_width": 32, "shape": (4,)}
        ),
    ]
    if dtypes.x64_enabled():
        out.append(Example([key], {"bit_width": 64, "shape": (5,)}))
    return out


def random_bits(keys: Any, bit_width: int, shape: Sequence[int]) -> Any:
    """Uniformly random ``uint{bit_width}`` values of ``shape`` for each key."""
    return bind(random_bits_p, keys, bit_width=int(bit_width), shape=_shape("random_bits", shape))


# --------------------------------------------------------------------------- random_split

random_split_p = Primitive("random_split", family=FAMILY, differentiable=False)


@random_split_p.def_abstract_eval
def _random_split_abstract_eval(keys: Aval, *, shape: tuple[int, ...]) -> Aval:
    batch = _check_keys("random_split", keys)
    return Aval((*batch, *_shape("random_split", shape), 2), _U32)


@random_split_p.def_lower
def _random_split_lower(keys: Any, *, shape: tuple[int, ...]) -> Any:
    b1, b2 = _hash_shape(keys, shape)
    nd = b1.ndim
    return lax.concatenate([lax.expand_dims(b1, (nd,)), lax.expand_dims(b2, (nd,))], nd)


@random_split_p.def_batch
def _random_split_batch(args: list, dims: list, *, shape: tuple) -> tuple:
    (keys,), _ = _batch_keys_front(args, dims)
    return bind(random_split_p, keys, shape=shape), 0


random_split_p.examples = lambda rng: [
    Example([np.asarray(rng.integers(0, 2**32, (2,)), _U32)], {"shape": (2,)}),
    Example([np.asarray(rng.integers(0, 2**32, (2,)), _U32)], {"shape": (3, 2)}),
    Example([np.asarray(rng.integers(0, 2**32, (3, 2)), _U32)], {"shape": (4,)}),
]


def random_split(keys: Any, shape: Sequence[int]) -> Any:
    """``prod(shape)`` new keys from each key: ``uint32[*batch, *shape, 2]``."""
    return bind(random_split_p, keys, shape=_shape("random_split", shape))


# --------------------------------------------------------------------------- random_fold_in

random_fold_in_p = Primitive("random_fold_in", family=FAMILY, differentiable=False)


@random_fold_in_p.def_abstract_eval
def _random_fold_in_abstract_eval(keys: Aval, data: Aval) -> Aval:
    batch = _check_keys("random_fold_in", keys)
    if not dtypes.is_integer(data.dtype):
        raise TypeError(f"random_fold_in: data must be an integer, got {data}")
    if data.shape != batch:
        raise TypeError(
            f"random_fold_in: data of shape {data.shape} does not match the keys' batch "
            f"shape {batch} (keys {keys})"
        )
    return Aval(keys.shape, _U32)


@random_fold_in_p.def_lower
def _random_fold_in_lower(keys: Any, data: Any) -> Any:
    data = np.asarray(data) if isinstance(data, (int, np.generic)) else data
    d = lax.convert_element_type(data, _U32)
    full = tuple(d.shape)
    k1, k2 = _key_words(keys, full)
    b1, b2 = _threefry(k1, k2, lax.full(full, 0, _U32), d)
    nd = len(full)
    return lax.concatenate([lax.expand_dims(b1, (nd,)), lax.expand_dims(b2, (nd,))], nd)


@random_fold_in_p.def_batch
def _random_fold_in_batch(args: list, dims: list) -> tuple:
    (keys, data), _ = _batch_keys_front(args, dims)
    return bind(random_fold_in_p, keys, data), 0


random_fold_in_p.examples = lambda rng: [
    Example([np.asarray(rng.integers(0, 2**32, (2,)), _U32), np.uint32(7)]),
    Example([np.asarray(rng.integers(0, 2**32, (3, 2)), _U32), np.arange(3, dtype=np.int32)]),
]


def random_fold_in(keys: Any, data: Any) -> Any:
    """Keys mixed with integer ``data`` (one datum per key)."""
    return bind(random_fold_in_p, keys, data)


# --------------------------------------------------------------------------- random_gamma
#
# Marsaglia–Tsang rejection sampling, one independent loop per element (JAX's recipe and
# key discipline, so samples equal ``jax.random.gamma``'s): each key of ``keys`` is split
# into one key per element of ``a``'s trailing shape; an element's loop draws its normals
# and uniforms from its own key only. The loops run vectorised: every element steps
# together and a finished element keeps its carry (as a batched ``while_loop`` does).
# The derivative in ``a`` is the implicit reparameterisation gradient
# ``dz/da = -(∂F/∂a)/(∂F/∂z)`` of the gamma CDF ``F`` (``random_gamma_grad``).


def _lax_finfo(dt: np.dtype) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(dt)


def _lax_uniform(keys: Any, dt: np.dtype, lo: float, hi: float) -> Any:
    """(lowering) one float in ``[lo, hi)`` per key of ``uint32[n, 2]`` (``jax.random.uniform``)."""
    info = _lax_finfo(dt)
    nbits, nmant = info.bits, info.nmant
    rng_bits = 8 if nmant < 8 else nbits
    bits = _random_bits_lower(keys, bit_width=rng_bits, shape=())
    udt = _UINT[nbits]
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, udt)
    fbits = lax.shift_right_logical(bits, lax.full_like(bits, rng_bits - nmant))
    one_bits = np.array(1.0, dt).view(udt)
    fbits = lax.bitwise_or(fbits, lax.full_like(fbits, one_bits))
    floats = lax.sub(lax.bitcast_convert_type(fbits, dt), lax.full_like(fbits, 1.0, dt))
    lo_, hi_ = lax.full_like(floats, lo), lax.full_like(floats, hi)
    return lax.max(lo_, lax.add(lax.mul(floats, lax.sub(hi_, lo_)), lo_))


def _lax_normal(keys: Any, dt: np.dtype) -> Any:
    lo = float(np.nextafter(np.array(-1.0, dt), np.array(0.0, dt), dtype=dt))
    u = _lax_uniform(keys, dt, lo, 1.0)
    return lax.mul(lax.full_like(u, np.sqrt(2)), lax.erf_inv(u))


def _lax_split(keys: Any, n: int) -> list:
    """(lowering) ``n`` new keys per key of ``uint32[m, 2]``: a list of ``uint32[m, 2]``."""
    out = _random_split_lower(keys, shape=(n,))
    return [lax.index_in_dim(out, i, axis=1, keepdims=False) for i in range(n)]


def _masked_while(cond: Any, body: Any, init: tuple) -> tuple:
    """(lowering) a while loop per element: run while any element's ``cond`` holds; an
    element whose ``cond`` is false keeps its carry."""

    def step(carry: tuple) -> tuple:
        active = cond(carry)
        new = body(carry)
        out = []
        for n, o in zip(new, carry):
            mask = active if n.ndim == 1 else lax.broadcast_in_dim(active, n.shape, (0,))
            out.append(lax.select(mask, n, o))
        return tuple(out)

    return lax.while_loop(lambda c: lax.reduce_or(cond(c), (0,)), step, init)


def _gamma_elements(keys: Any, alpha: Any, log_space: bool) -> Any:
    """(lowering) one Gamma(``alpha[i]``, 1) sample (or its log) per key ``keys[i]``."""
    dt = np.dtype(alpha.dtype)

    def c(v: float) -> Any:
        return lax.full_like(alpha, v)

    zero, one = c(0), c(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c(1.0 / 3.0))
    cc = lax.div(c(1.0 / 3.0), lax.sqrt(d))

    def accept_not_yet(carry: tuple) -> Any:
        _, x2, v3, u = carry
        a = lax.ge(u, lax.sub(one, lax.mul(c(0.0331), lax.mul(x2, x2))))
        rhs = lax.add(lax.mul(x2, c(0.5)), lax.mul(d, lax.add(lax.sub(one, v3), lax.log(v3))))
        return lax.bitwise_and(a, lax.ge(lax.log(u), rhs))

    def propose(carry: tuple) -> tuple:
        key, x_key, u_key = _lax_split(carry[0], 3)

        def next_x(kxv: tuple) -> tuple:
            k, sub = _lax_split(kxv[0], 2)
            x = _lax_normal(sub, dt)
            return k, x, lax.add(one, lax.mul(x, cc))

        _, x, v = _masked_while(lambda kxv: lax.le(kxv[2], zero), next_x, (x_key, zero, c(-1)))
        x2 = lax.mul(x, x)
        v3 = lax.mul(lax.mul(v, v), v)
        return key, x2, v3, _lax_uniform(u_key, dt, 0.0, 1.0)

    key, subkey = _lax_split(keys, 2)
    _, _, v3, _ = _masked_while(accept_not_yet, propose, (key, zero, one, c(2)))
    u = _lax_uniform(subkey, dt, 0.0, 1.0)
    if log_space:
        log_samples = lax.neg(lax.neg(lax.log1p(lax.neg(u))))
        skip = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = lax.select(skip, zero, lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v3)), log_boost)
    samples = lax.sub(one, u)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


random_gamma_p = Primitive("random_gamma", family=FAMILY)


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(keys: Aval, a: Aval, *, log_space: bool) -> Aval:
    batch = _check_keys("random_gamma", keys)
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma: a must be a real floating array, got {a}")
    if a.shape[: len(batch)] != batch:
        raise TypeError(
            f"random_gamma: a of shape {a.shape} must start with the keys' batch shape "
            f"{batch} (keys {keys})"
        )
    return a.strip_weak()


@random_gamma_p.def_lower
def _random_gamma_lower(keys: Any, a: Any, *, log_space: bool) -> Any:
    # a rejection loop: compiled once per shape when called eagerly
    sample = _gamma_log_samples if log_space else _gamma_samples
    return compile_cache.run_lowering("random", ("gamma", bool(log_space)), sample, (keys, a))


def _gamma_lower(keys: Any, a: Any, log_space: bool) -> Any:
    a_shape = tuple(a.shape)
    nb = keys.ndim - 1
    count = math.prod(a_shape[nb:])
    n = math.prod(a_shape)
    if n == 0:
        return lax.full(a_shape, 0, a.dtype)
    keys = lax.reshape(keys, (math.prod(keys.shape[:-1]), 2))
    keys = lax.reshape(_random_split_lower(keys, shape=(count,)), (n, 2))
    out = _gamma_elements(keys, lax.reshape(a, (n,)), log_space)
    return lax.reshape(out, a_shape)


def _gamma_samples(keys: Any, a: Any) -> Any:
    return _gamma_lower(keys, a, False)


def _gamma_log_samples(keys: Any, a: Any) -> Any:
    return _gamma_lower(keys, a, True)


def _gamma_grad(sample: Any, a: Any, log_space: bool) -> Any:
    """d sample / d a (with ``log_space``: of ``log(sample)``), by the implicit function rule."""

    if not log_space:
        return random_gamma_grad(a, sample)
    info = _lax_finfo(to_aval(sample).dtype)
    s = ew.exp(sample)
    s = ew.select_n(
        ew.eq(s, np.asarray(0, info.dtype)), s, ew.add(s, np.asarray(info.tiny, info.dtype))
    )
    return ew.div(random_gamma_grad(a, s), s)


@random_gamma_p.def_jvp
def _random_gamma_jvp(primals: list, tangents: list, *, log_space: bool) -> tuple:

    keys, a = primals
    out = bind(random_gamma_p, keys, a, log_space=log_space)
    t = tangents[1]
    if is_zero(t):
        return out, Zero(to_aval(out))
    return out, ew.mul(t, _gamma_grad(out, a, log_space))


@random_gamma_p.def_vjp
def _random_gamma_vjp(ct: Any, keys: Any, a: Any, *, out: Any, log_space: bool) -> tuple:

    if is_zero(ct):
        return None, None
    return None, ew.mul(ct, _gamma_grad(out, a, log_space))


@random_gamma_p.def_batch
def _random_gamma_batch(args: list, dims: list, *, log_space: bool) -> tuple:
    (keys, a), _ = _batch_keys_front(args, dims)
    return bind(random_gamma_p, keys, a, log_space=log_space), 0


@random_gamma_p.def_examples
def _random_gamma_examples(rng: np.random.Generator) -> list[Example]:
    # the sample's derivative in ``a`` is the implicit (CDF) gradient, not the derivative of
    # the rejection sampler's path, so finite differences do not apply: tests/
    # test_random_samplers.py checks it against the reference gradient and the CDF
    def key(*batch: int) -> np.ndarray:
        return np.asarray(rng.integers(0, 2**32, (*batch, 2)), _U32)

    return [
        Example([key(), rand(rng, (3,), lo=0.3, hi=4.0)], {"log_space": False}, diff_argnums=()),
        Example([key(), rand(rng, (2, 2), lo=0.5, hi=3.0)], {"log_space": True}, diff_argnums=()),
        Example([key(2), rand(rng, (2, 3), lo=0.5, hi=3.0)], {"log_space": False}, diff_argnums=()),
    ]


def random_gamma(keys: Any, a: Any, *, log_space: bool = False) -> Any:
    """Gamma(``a``, 1) samples (their logs with ``log_space``), one key per leading batch."""
    return bind(random_gamma_p, keys, a, log_space=bool(log_space))


# --------------------------------------------------------------------------- random_gamma_grad

random_gamma_grad_p = Primitive("random_gamma_grad", family=FAMILY)


@random_gamma_grad_p.def_abstract_eval
def _random_gamma_grad_abstract_eval(a: Aval, x: Aval) -> Aval:
    if not (dtypes.is_float(a.dtype) and dtypes.is_float(x.dtype)):
        raise TypeError(f"random_gamma_grad requires real floating operands, got {a}, {x}")
    if a.dtype != x.dtype or a.shape != x.shape:
        raise TypeError(f"random_gamma_grad requires operands of one shape and dtype, got {a}, {x}")
    return Aval(a.shape, a.dtype, a.weak_type and x.weak_type)


@random_gamma_grad_p.def_lower
def _random_gamma_grad_lower(a: Any, x: Any) -> Any:
    # a series loop, which JAX recompiles on every eager call: compiled once per shape
    return compile_cache.run_lowering("random", "gamma_grad", lax.random_gamma_grad, (a, x))


def _no_gamma_grad_derivative(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "Differentiation rule for 'random_gamma_grad' not implemented (as in JAX): "
        "second derivatives of gamma samples in `a` are not available"
    )


random_gamma_grad_p.jvp = _no_gamma_grad_derivative
random_gamma_grad_p.vjp = _no_gamma_grad_derivative


@random_gamma_grad_p.def_batch
def _random_gamma_grad_batch(args: list, dims: list) -> tuple:
    ops, _ = _batch_keys_front(args, dims)
    return bind(random_gamma_grad_p, *ops), 0


@random_gamma_grad_p.def_examples
def _random_gamma_grad_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example(
            [rand(rng, (3,), lo=0.5, hi=3.0), rand(rng, (3,), lo=0.2, hi=4.0)], diff_argnums=()
        ),
        Example(
            [rand(rng, (2, 3), lo=1.0, hi=5.0), rand(rng, (2, 3), lo=0.5, hi=6.0)], diff_argnums=()
        ),
    ]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for a Gamma(``a``, 1) sample ``x`` (implicit reparameterisation gradient)."""
    return bind(random_gamma_grad_p, a, x)


# --------------------------------------------------------------------------- rng_bit_generator

#: ``lax.rng_bit_generator``: XLA's ``RngBitGenerator`` (the platform's algorithm, or
#: Threefry or Philox) from a ``uint32[4]`` (or ``uint64[2]``) key: the next key and
#: random bits. Not the threefry primitives above: its bits are XLA's own.
rng_bit_generator_p = Primitive(
    "rng_bit_generator", family=FAMILY, multiple_results=True, differentiable=False
)
_RBG_DTYPES = tuple(np.dtype(f"uint{n}") for n in (8, 16, 32, 64))


@rng_bit_generator_p.def_abstract_eval
def _rbg_abstract_eval(key: Aval, *, shape: tuple, dtype: np.dtype, algorithm: int) -> list:
    if (key.shape, key.dtype) not in (((4,), np.dtype("uint32")), ((2,), np.dtype("uint64"))):
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got {key}")
    if dtype not in _RBG_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return [key, Aval(shape, dtype, False)]


@rng_bit_generator_p.def_lower
def _rbg_lower(key: Any, *, shape: tuple, dtype: np.dtype, algorithm: int) -> list:
    alg = lax.RandomAlgorithm(algorithm)
    return list(lax.rng_bit_generator(key, shape, dtype=dtype, algorithm=alg))


@rng_bit_generator_p.def_batch
def _rbg_batch(args: list, dims: list, *, shape: tuple, **p: Any) -> tuple:
    # JAX's rule, kept for equal values: the first key alone draws bits for the whole
    # batch (one leading axis more), and only the first key advances
    (keys,), (bd,) = args, dims
    if bd is None:
        return bind(rng_bit_generator_p, keys, shape=shape, **p), [None, None]
    keys = rules.moveaxis(keys, bd, 0)
    b, n = to_aval(keys).shape
    first = sh.reshape(sh.slice(keys, (0, 0), (1, n), (1, 1)), (n,))
    new, bits = bind(rng_bit_generator_p, first, shape=(b, *shape), **p)
    rest = sh.slice(keys, (1, 0), (b, n), (1, 1))
    return [sh.concatenate(sh.reshape(new, (1, n)), rest, dimension=0), bits], [0, 0]


@rng_bit_generator_p.def_examples
def _rbg_examples(rng: np.random.Generator) -> list[Example]:
    key = np.array([1, 2, 3, 4], np.uint32)
    u32, u8 = np.dtype("uint32"), np.dtype("uint8")
    # (batching follows JAX's rule, which is not a loop over keys: checked in its tests)
    return [
        Example([key], {"shape": (5, 7), "dtype": u32, "algorithm": 0}, batch_argnums=()),
        Example([key], {"shape": (6,), "dtype": u8, "algorithm": 1}, batch_argnums=()),
        Example([key], {"shape": (2, 3), "dtype": u32, "algorithm": 2}, batch_argnums=()),
    ]


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any, algorithm: int) -> tuple:
    """(the next key, random bits of ``shape`` and unsigned ``dtype``) from XLA's
    ``RngBitGenerator`` with ``algorithm`` (0 the platform's, 1 Threefry, 2 Philox)."""
    return tuple(
        bind(
            rng_bit_generator_p,
            key,
            shape=_shape("rng_bit_generator", shape),
            dtype=np.dtype(dtype),
            algorithm=int(algorithm),
        )
    )
