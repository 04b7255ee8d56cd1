"""Primitive families. Importing this package registers every primitive."""

from funcgrad.primitives import (  # noqa: F401
    calls,
    conv,
    decomp,
    elementwise,
    fft,
    linalg,
    reductions,
    scatter,
    shape,
    special,
    windowed,
)
