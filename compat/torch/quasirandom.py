"""``torch.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences, as PyTorch's.

The direction numbers are Joe and Kuo's (2008, ``new-joe-kuo-6.21201``: 21201
dimensions), read from the copy SciPy ships with ``scipy.stats.qmc.Sobol`` (SciPy is a
dependency of funcgrad and JAX); from them each dimension's 30 direction integers follow
by Bratley and Fox's recurrence. Points are generated in Gray-code order, one XOR per
point and dimension. Scrambling is PyTorch's: a random linear matrix scramble (lower
triangular bit matrices) and a random digital shift, drawn from a ``torch.Generator``
seeded with ``seed`` in PyTorch's order, so scrambled sequences equal PyTorch's.
"""

from __future__ import annotations

import functools
import pathlib
from typing import Any

import numpy as np
import scipy.stats

from compat._core import creation as _cr
from compat._core import dtypes as _dt
from compat._core import rng as _rng
from compat._core.tensor import Tensor

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201


@functools.cache
def _direction_table() -> tuple[np.ndarray, np.ndarray]:
    """Joe and Kuo's primitive polynomials and initial direction numbers."""
    path = pathlib.Path(scipy.stats.__file__).parent / "_sobol_direction_numbers.npz"
    with np.load(path) as data:
        return np.asarray(data["poly"], np.int64), np.asarray(data["vinit"], np.int64)


def _direction_integers(dimension: int) -> np.ndarray:
    """``(dimension, 30)`` direction integers, column ``j`` scaled by ``2**(29 - j)``."""
    poly, vinit = _direction_table()
    v = np.zeros((dimension, _MAXBIT), np.int64)
    v[0, :] = 1
    for d in range(1, dimension):
        p = int(poly[d])
        m = p.bit_length() - 1
        v[d, :m] = vinit[d, :m]
        for j in range(m, _MAXBIT):
            new = int(v[d, j - m])
            for k in range(m):
                if (p >> (m - 1 - k)) & 1:
                    new ^= int(v[d, j - k - 1]) << (k + 1)
            v[d, j] = new
    return v * (np.int64(1) << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64))


def _scrambled(v: np.ndarray, ltm: np.ndarray) -> np.ndarray:
    """Each direction integer multiplied by its dimension's lower triangular bit matrix
    (diagonal set to 1) over GF(2); ``ltm`` is ``(dimension, 30, 30)`` of 0/1."""
    mat = np.tril(ltm).astype(np.int64)
    idx = np.arange(_MAXBIT)
    mat[:, idx, idx] = 1
    rows = (mat << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)).sum(-1)  # (D, 30)
    out = np.zeros_like(v)
    for p in range(_MAXBIT):  # bit 29 - p of the result: parity of row p AND v
        bits = np.bitwise_count(rows[:, None, p] & v).astype(np.int64) & 1
        out |= bits << (_MAXBIT - 1 - p)
    return out


def _rightmost_zero(n: int) -> int:
    """The index of the lowest zero bit of ``n`` (the Gray-code update's column)."""
    return (~n & (n + 1)).bit_length() - 1


class SobolEngine:
    """A Sobol' sequence generator of ``dimension`` dimensions (1 to 21201), scrambled
    (Owen-type linear scramble and digital shift) when ``scramble`` is true, from a
    generator seeded with ``seed``; ``draw`` returns the next points as an ``(n,
    dimension)`` tensor, the first point being 0 unscrambled."""

    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]"
            )
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        v = _direction_integers(dimension)
        if scramble:
            g = _rng.Generator()
            if seed is not None:
                g.manual_seed(seed)
            else:
                g.seed()
            shift_bits = _cr.randint(2, (dimension, _MAXBIT), generator=g).numpy()
            shift = (shift_bits.astype(np.int64) << np.arange(_MAXBIT, dtype=np.int64)).sum(-1)
            ltm = _cr.randint(2, (dimension, _MAXBIT, _MAXBIT), generator=g).numpy()
            v = _scrambled(v, ltm)
        else:
            shift = np.zeros(dimension, np.int64)
        self._v = v
        self._shift = shift
        self._quasi = shift.copy()
        # the first point in the default dtype of construction time, as PyTorch's
        self._first = (shift * (1.0 / (1 << _MAXBIT))).astype(_dt.get_default_dtype().np)
        self.sobolstate = _cr.tensor(v)
        self.shift = _cr.tensor(shift)
        self.num_generated = 0

    @property
    def quasi(self) -> Tensor:
        """The current point's integers (before scaling by ``2**-30``)."""
        return _cr.tensor(self._quasi)

    def _advance(self, n: int, start: int, keep: bool) -> np.ndarray | None:
        """``n`` Gray-code steps from point number ``start``; the points if ``keep``."""
        out = np.empty((n, self.dimension), np.int64) if keep else None
        q = self._quasi
        for i in range(n):
            q ^= self._v[:, _rightmost_zero(start + i)]
            if out is not None:
                out[i] = q
        return out

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``n`` points, ``(n, dimension)``, of ``dtype`` (the default dtype);
        written into ``out`` (resized) if given."""
        dt = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
        scale = 1.0 / (1 << _MAXBIT)
        if self.num_generated == 0:
            first = self._first.astype(dt.np)[None, :]
            rest = self._advance(n - 1, 0, True) if n > 1 else np.zeros((0, self.dimension))
            values = np.concatenate([first, (rest * scale).astype(dt.np)], axis=0)[:n]
        else:
            values = (self._advance(n, self.num_generated - 1, True) * scale).astype(dt.np)
        self.num_generated += n
        result = _cr.tensor(values, dtype=dt)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """``2**m`` points, keeping the total drawn a power of 2 (the sequence's balance)."""
        n = 2**m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip ``n`` points."""
        if self.num_generated == 0:
            self._advance(n - 1, 0, False)
        else:
            self._advance(n, self.num_generated - 1, False)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
