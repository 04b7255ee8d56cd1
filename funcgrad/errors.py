"""funcgrad's exceptions under JAX's names (``jax.errors``), so ported code's
``except`` clauses and ``assertRaises`` keep working."""

from funcgrad.core.errors import (
    ConcretizationError,
    ConcretizationTypeError,
    LeakedTracerError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
)

#: JAX's name for a tracer used after its transform finished
UnexpectedTracerError = LeakedTracerError

__all__ = [
    "ConcretizationError",
    "ConcretizationTypeError",
    "LeakedTracerError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
