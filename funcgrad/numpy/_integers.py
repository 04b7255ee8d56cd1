"""Integer functions: ``bitwise_count`` and ``gcd``/``lcm`` (``left_shift`` is declared on
the ``shift_left`` row, ``right_shift`` is a declared composite).

Composites of the ``bits`` primitives and other funcgrad.numpy functions (``gcd`` runs
Euclid's algorithm in a ``lax.while_loop``), so they trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad.core.primitive import Composite, TorchForm
from funcgrad.numpy import _creation, _reductions, _shape, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    aval,
    check_arraylike,
    check_kind,
    out,
    promote_broadcast,
)
from funcgrad.primitives import bits
from funcgrad.primitives import elementwise as ew


def bitwise_count(x: ArrayLike, /) -> Any:
    """Number of set bits of ``abs(x)``, as ``uint8`` (NumPy's ``bitwise_count``)."""
    (x,) = promote_broadcast("bitwise_count", x)
    check_kind("bitwise_count", "intbool", x)
    if aval(x).dtype == np.bool_:
        return _creation.astype(x, np.uint8)
    a = ew.abs(x) if np.issubdtype(aval(x).dtype, np.signedinteger) else x
    return _creation.astype(bits.population_count_p.bind(a), np.uint8)


def _gcd(a: Any, b: Any) -> Any:
    """The greatest common divisor of integers of one dtype (Euclid's algorithm in a loop,
    whose carry has the broadcast shape)."""
    a, b = _shape.broadcast_arrays(_ufuncs.abs(a), _ufuncs.abs(b))

    def step(ab: tuple) -> tuple:
        p, q = ab
        zero = q == 0
        safe = _ufuncs.where(zero, _creation.ones_like(q), q)
        return _ufuncs.where(zero, p, q), _ufuncs.where(zero, q, _ufuncs.remainder(p, safe))

    g, _ = lax.while_loop(lambda ab: _reductions.any(ab[1] != 0), step, (a, b))
    # (JAX's result is weakly typed for weak 0-d operands only, where its body's zero is a
    # weak Python scalar; funcgrad's loop keeps any carry weak that its body keeps weak)
    weak = aval(a).weak_type and aval(b).weak_type and aval(a).shape == ()
    return g if aval(g).weak_type == weak else ew.convert_element_type(g, aval(g).dtype, weak)


def _lcm(a: Any, b: Any) -> Any:
    d = _gcd(a, b)
    safe = _ufuncs.where(d == 0, _creation.ones_like(d), d)
    return _ufuncs.where(d == 0, _creation.zeros_like(d), _ufuncs.abs(a * (b // safe)))


#: ``gcd``'s and ``lcm``'s rows, beside their functions (which call numpy's functions and
#: ``lax.while_loop``, so they load after ``_ufuncs`` has generated its forms): this
#: module's ``gcd``/``lcm`` and compat's ``torch.gcd(_)``, ``Tensor.gcd(_)`` come from them
#: (integers only: bools and floats refused; PyTorch's take tensors only, no node)
_ROWS = tuple(
    Composite(
        name,
        fn,
        arity=2,
        public=("numpy",),
        doc=doc,
        numpy="integer",
        numpy_keywords=True,
        domains=None,
        torch=TorchForm(None, promote="result_type", tensors_only=True),
    )
    for name, fn, doc in (
        ("gcd", _gcd, "Elementwise greatest common divisor of integers"),
        ("lcm", _lcm, "Elementwise least common multiple of integers (0 where either is 0)"),
    )
)
DECLARED = {row.name: _ufuncs.declared_form(row.name, row) for row in _ROWS}
globals().update(DECLARED)


def _bitorder(name: str, bitorder: str) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: 'order' must be either 'little' or 'big', got {bitorder!r}")


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Any:
    """The truth values of ``a`` packed eight to a ``uint8`` along ``axis`` (the
    flattened array if ``None``), the last byte padded with zeros (``np.packbits``)."""
    check_arraylike("packbits", a)
    _bitorder("packbits", bitorder)
    x = _creation.asarray(a)
    if aval(x).dtype.kind not in "biu":
        raise TypeError(f"Expected an input array of integer or boolean data type, got {aval(x)}")
    if axis is None:
        x, axis = _shape.ravel(x), 0
    ax = axis % max(aval(x).ndim, 1)
    x = _shape.moveaxis(ew.convert_element_type(_ufuncs.not_equal(x, 0), np.uint8), ax, -1)
    n = aval(x).shape[-1]
    x = _shape.pad(x, [(0, 0)] * (aval(x).ndim - 1) + [(0, -n % 8)])
    x = _shape.reshape(x, (*aval(x).shape[:-1], -1, 8))
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    packed = _reductions.sum(
        _ufuncs.DECLARED["left_shift"](x, shifts.astype(np.uint8)), axis=-1, dtype=np.uint8
    )
    return out(_shape.moveaxis(packed, -1, ax))


def unpackbits(
    a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Any:
    """The bits of the ``uint8`` array ``a`` as 0/1 ``uint8`` values along ``axis`` (the
    flattened array if ``None``), the first ``count`` of them if given
    (``np.unpackbits``)."""
    _bitorder("unpackbits", bitorder)
    x = _creation.asarray(a)
    if aval(x).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x, axis = _shape.ravel(x), 0
    ax = axis % max(aval(x).ndim, 1)
    x = _shape.moveaxis(x, ax, -1)
    shifts = (np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)).astype(np.uint8)
    bits_ = _ufuncs.bitwise_and(
        _ufuncs.DECLARED["right_shift"](_shape.expand_dims(x, -1), shifts), np.uint8(1)
    )
    bits_ = _shape.reshape(bits_, (*aval(x).shape[:-1], -1))
    if count is not None:
        n = aval(bits_).shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits_ = bits_[..., :keep]
        else:
            bits_ = _shape.pad(bits_, [(0, 0)] * (aval(bits_).ndim - 1) + [(0, keep - n)])
    return out(_shape.moveaxis(bits_, -1, ax))
