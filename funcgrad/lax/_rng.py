"""``lax.rng_bit_generator`` and ``lax.RandomAlgorithm``: XLA's stateless bit generator,
below ``funcgrad.random`` (whose threefry bits equal ``jax.random``'s)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import prep
from funcgrad.primitives import random as rnd
from funcgrad.sharding import reshard

__all__ = ["RandomAlgorithm", "rng_bit_generator"]


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of :func:`rng_bit_generator` (``jax.lax.RandomAlgorithm``)."""

    RNG_DEFAULT = 0
    "The platform's default algorithm."

    RNG_THREE_FRY = 1
    "The Threefry-2x32 PRNG algorithm."

    RNG_PHILOX = 2
    "The Philox-4x32 PRNG algorithm."

    def __str__(self) -> str:
        return self.name


def rng_bit_generator(
    key: Any,
    shape: Sequence[int],
    dtype: Any = np.uint32,
    algorithm: Any = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding: Any = None,
) -> tuple[Any, Any]:
    """(the next key, uniformly random bits of ``shape`` and unsigned ``dtype``) from a
    ``uint32[4]`` key, with XLA's ``RngBitGenerator`` (``jax.lax.rng_bit_generator``; its
    bits are XLA's, not ``jax.random``'s); ``out_sharding`` places the bits."""
    dt = dtypes.canonicalize(np.dtype(dtype))
    if dt not in (np.dtype(f"uint{n}") for n in (8, 16, 32, 64)):
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt}")
    new_key, bits = rnd.rng_bit_generator(
        prep(key, "rng_bit_generator"), shape, dt, int(RandomAlgorithm(int(algorithm)))
    )
    return new_key, bits if out_sharding is None else reshard(bits, out_sharding)
