"""Elementwise primitives ``jax.lax`` has and funcgrad's other families lack: ``erfc``
(accurate in the tails, unlike ``1 - erf``), the bit shifts, ``mulhi``, ``population_count``,
``clz``, ``nextafter`` and ``bitcast_convert_type``. Declared with the elementwise
family's helpers, so they share its dtype checks, weak typing and batching.

``erfc`` itself is declared in the special family and re-exported here.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from jax import lax

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive, TorchForm
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import special
from funcgrad.primitives.rules import moveaxis, rand

FAMILY = "elementwise"

# ``erfc`` is the special family's (one declaration); lax re-exports it from here too
erfc_p = special.erfc_p


def _shift(name: str, lower: Any, doc: str, **numpy: Any) -> Primitive:
    """A shift's row: its lax form is generated from it, and ``shift_left``'s numpy forms
    (``numpy="int"``: integers only; numpy's ``right_shift`` picks its primitive by
    signedness: a declared composite, ``funcgrad/primitives/composites.py``)."""
    return ew._binary(name, lower, allowed="int", differentiable=False, doc=doc, **numpy)


shift_left_p = _shift(
    "shift_left",
    lax.shift_left,
    "Elementwise ``x << y``",
    docs={"numpy": "Elementwise ``x << y`` on integers."},
    public=("lax", "numpy:left_shift", "numpy:bitwise_left_shift"),
    numpy="int",
    torch=TorchForm(
        None,
        name="bitwise_left_shift",
        promote="result_type",
        inplace_function=False,
        number_first=True,
        kernel="lshift",
    ),
)
shift_right_logical_p = _shift(
    "shift_right_logical",
    lax.shift_right_logical,
    "Elementwise logical right shift (zeros shifted in)",
    public=("lax",),
)
shift_right_arithmetic_p = _shift(
    "shift_right_arithmetic",
    lax.shift_right_arithmetic,
    "Elementwise arithmetic right shift (the sign bit shifted in)",
    public=("lax",),
)
nextafter_p = ew._binary(
    "nextafter",
    lax.nextafter,
    allowed="real_float",
    differentiable=False,
    doc="Next representable float after ``x`` toward ``y``.",
    docs={"lax": "Next representable float after ``x1`` toward ``x2``"},
    public=("numpy", "lax"),
    operands=("x1", "x2"),
    numpy="inexact",
    torch=TorchForm(None, promote="result_type", inplace_function=False, tensors_only=True),
)
mulhi_p = ew._binary(
    "mulhi",
    lax.mulhi,
    allowed="int",
    differentiable=False,
    doc="Elementwise high half of the double-width integer product ``x * y``",
    public=("lax",),
)
population_count_p = ew._unary("population_count", lax.population_count, None, allowed="int")
clz_p = ew._unary("clz", lax.clz, None, allowed="int")


def _int_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (4,), "int32", lo=-9, hi=9), rand(rng, (4,), "int32", lo=0, hi=5)]),
        Example([rand(rng, (2, 3), "uint8", lo=0, hi=255), np.asarray(3, np.uint8)]),
    ]


for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p):
    _p.examples = _int_examples
mulhi_p.examples = lambda rng: [
    Example([rand(rng, (4,), "int32", lo=-(2**31), hi=2**31 - 1)] * 2),
    Example([rand(rng, (2, 3), "uint16", lo=0, hi=65535), np.asarray(40000, np.uint16)]),
    Example([rand(rng, (3,), "int8", lo=-128, hi=127), rand(rng, (3,), "int8", lo=-128, hi=127)]),
]
nextafter_p.examples = lambda rng: [Example([rand(rng, (4,)), rand(rng, (4,))])]
for _p in (population_count_p, clz_p):
    _p.examples = lambda rng: [
        Example([rand(rng, (5,), "int32", lo=-100, hi=100)]),
        Example([rand(rng, (2, 2), "uint16", lo=0, hi=999)]),
    ]


bitcast_convert_type_p = Primitive("bitcast_convert_type", family=FAMILY, differentiable=False)


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x: Aval, *, new_dtype: np.dtype) -> Aval:
    a, b = dtypes.bit_width(x.dtype), dtypes.bit_width(new_dtype)
    if a == b:
        shape = x.shape
    elif a > b:
        shape = (*x.shape, a // b)
    else:
        if not x.shape or x.shape[-1] != b // a:
            raise TypeError(
                f"bitcast_convert_type: converting {x} to the wider {new_dtype} needs a last "
                f"dimension of size {b // a}"
            )
        shape = x.shape[:-1]
    if x.dtype == np.bool_ or new_dtype == np.bool_:
        raise TypeError(f"bitcast_convert_type: bool is not supported ({x} to {new_dtype})")
    return Aval(shape, new_dtype, False)


def _bitcast_sharding(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """The operand's splits, as JAX types them: an unsplit trailing dimension added for a
    narrower type, the (unsplit) last one dropped for a wider one."""
    x, out = avals[0], outs[0]
    if x.sharding is None:
        return outs
    spec = sharding_types.spec_of(x)
    spec = (*spec, None)[: out.ndim] if out.ndim >= x.ndim else spec[: out.ndim]
    return [sharding_types.typed(out, spec, x.sharding.mesh)]


bitcast_convert_type_p.sharding_rule = _bitcast_sharding


@bitcast_convert_type_p.def_lower
def _bitcast_lower(x: Any, *, new_dtype: np.dtype) -> Any:
    if isinstance(x, (int, float, complex)):
        x = np.asarray(x, to_aval(x).dtype)
    return lax.bitcast_convert_type(x, new_dtype)


@bitcast_convert_type_p.def_batch
def _bitcast_batch(args: list, dims: list, *, new_dtype: np.dtype) -> tuple:
    (x,), (d,) = args, dims
    if d == to_aval(x).ndim - 1 and dtypes.bit_width(to_aval(x).dtype) != dtypes.bit_width(
        new_dtype
    ):
        x, d = moveaxis(x, d, 0), 0
    return bind(bitcast_convert_type_p, x, new_dtype=new_dtype), d


@bitcast_convert_type_p.def_examples
def _bitcast_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,), "float32")], {"new_dtype": np.dtype(np.int32)}),
        Example([rand(rng, (2, 3), "int32", lo=-50, hi=50)], {"new_dtype": np.dtype(np.uint8)}),
        Example([rand(rng, (2, 2), "int32", lo=0, hi=50)], {"new_dtype": np.dtype(np.int64)}),
    ]


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (``lax.bitcast_convert_type``);
    a narrower type adds a trailing dimension, a wider one consumes it."""
    return bind(bitcast_convert_type_p, operand, new_dtype=dtypes.canonicalize(new_dtype))


# --------------------------------------------------------------------------- host rules
# (the host tier, funcgrad.core.host): XLA's results for shifts by a negative amount or
# past the bit width (0, or the sign for an arithmetic right shift), where C's and so
# NumPy's are undefined


def _host_shift_amount(x: Any, y: Any) -> tuple[Any, Any, Any]:
    x = np.asarray(x)
    bits = x.dtype.itemsize * 8
    y = np.asarray(y, x.dtype)
    unsigned = y.astype(np.dtype(f"u{x.dtype.itemsize}"))
    out_of_range = unsigned >= bits
    return x, np.where(out_of_range, 0, y), out_of_range


def _host_shift_left(x: Any, y: Any) -> Any:
    x, y, big = _host_shift_amount(x, y)
    return np.where(big, 0, np.left_shift(x, y)).astype(x.dtype)


def _host_shift_right_logical(x: Any, y: Any) -> Any:
    x, y, big = _host_shift_amount(x, y)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    out = np.right_shift(u, y.astype(u.dtype)).view(x.dtype)
    return np.where(big, 0, out).astype(x.dtype)


def _host_shift_right_arithmetic(x: Any, y: Any) -> Any:
    x, y, big = _host_shift_amount(x, y)
    s = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    sign = np.where(s < 0, -1, 0).astype(s.dtype)
    out = np.where(big, sign, np.right_shift(s, y.astype(s.dtype)))
    return out.astype(s.dtype).view(x.dtype)


def _host_mulhi(x: Any, y: Any) -> Any:
    """The high half of the double-width product (64-bit operands: Python's integers)."""
    x, y = np.asarray(x), np.asarray(y)
    bits = x.dtype.itemsize * 8
    if bits == 64:
        wide = x.astype(object) * y.astype(object)
        return np.array([int(v) >> 64 for v in wide.ravel()], x.dtype).reshape(wide.shape)
    big = np.int64 if x.dtype.kind == "i" else np.uint64
    return np.right_shift(x.astype(big) * y.astype(big), bits).astype(x.dtype)


def _host_population_count(x: Any) -> Any:
    x = np.asarray(x)  # (NumPy counts the bits of |x| for signed integers)
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


def _host_clz(x: Any) -> Any:
    x = np.asarray(x)
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    n = np.zeros(u.shape, np.int64)
    for s in range(bits):  # a leading zero for each s with u < 2**s
        n += np.right_shift(u, s) == 0
    return n.astype(x.dtype)


shift_left_p.host = _host_shift_left
shift_right_logical_p.host = _host_shift_right_logical
shift_right_arithmetic_p.host = _host_shift_right_arithmetic
nextafter_p.host = np.nextafter
nextafter_p.host_join = True
mulhi_p.host = _host_mulhi
population_count_p.host = _host_population_count
clz_p.host = _host_clz


@bitcast_convert_type_p.def_host
def _bitcast_host(x: Any, *, new_dtype: np.dtype) -> Any:
    x = np.asarray(x)
    if not x.flags.c_contiguous:  # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        x = x.copy(order="C")
    a, b = dtypes.bit_width(x.dtype), dtypes.bit_width(np.dtype(new_dtype))
    if min(a, b) < 8:  # a sub-byte type: one element per byte in NumPy, packed in XLA
        return _bitcast_packed(x, np.dtype(new_dtype), a, b)
    a, b = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    if a < b:  # the last dimension's b // a pieces become one element
        return x.view(new_dtype).reshape(x.shape[:-1])
    out = x.view(new_dtype)
    return out if a == b else out.reshape((*x.shape, a // b))


def _bitcast_packed(x: np.ndarray, dt: np.dtype, a: int, b: int) -> np.ndarray:
    """``bitcast_convert_type`` where either type is narrower than a byte (``int4``...):
    XLA packs the narrow elements little-endian into the wider one (the first element in
    the lowest bits); NumPy holds each sub-byte element in a byte of its own."""
    if a < 8:
        raw = x.view(np.uint8).astype(np.uint64) & np.uint64((1 << a) - 1)
    else:
        raw = x.view(np.dtype(f"uint{a}")).astype(np.uint64)
    if a < b:  # the last dimension's pieces, first piece lowest
        shifts = np.arange(b // a, dtype=np.uint64) * np.uint64(a)
        raw = np.bitwise_or.reduce(raw << shifts, axis=-1)
    elif a > b:
        shifts = np.arange(a // b, dtype=np.uint64) * np.uint64(b)
        raw = (raw[..., None] >> shifts) & np.uint64((1 << b) - 1)
    if b >= 8:
        return raw.astype(np.dtype(f"uint{b}")).view(dt)
    if dtypes.is_integer(dt) and ml_dtypes.iinfo(dt).min < 0:  # two's complement
        signed = raw.astype(np.int64) - ((raw >> np.uint64(b - 1)) << np.uint64(b)).astype(np.int64)
        return signed.astype(dt)
    if dtypes.is_integer(dt):
        return raw.astype(dt)
    return raw.astype(np.uint8).view(dt)  # (a sub-byte float: its code in the low bits)
