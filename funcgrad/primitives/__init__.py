"""Primitive families. Importing this package registers every primitive."""

from funcgrad.primitives import (  # noqa: F401
    bits,
    callbacks,
    calls,
    conv,
    decomp,
    effects,
    elementwise,
    fft,
    indexing,
    linalg,
    reductions,
    scatter,
    shape,
    special,
    windowed,
)
