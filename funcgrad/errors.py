"""funcgrad's exceptions under JAX's names (``jax.errors``), so ported code's
``except`` clauses and ``assertRaises`` keep working."""

from jax import errors as _jax_errors

from funcgrad.core.errors import (
    BroadcastError,
    ConcretizationError,
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    LeakedTracerError,
    NonConcreteBooleanIndexError,
    ShardingTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    register_internal_package,
)

#: JAX's name for a tracer used after its transform finished
UnexpectedTracerError = LeakedTracerError

#: the error XLA raises while running a compiled program (funcgrad runs through XLA too)
JaxRuntimeError = _jax_errors.JaxRuntimeError

__all__ = [
    "BroadcastError",
    "ConcretizationError",
    "ConcretizationTypeError",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "LeakedTracerError",
    "NonConcreteBooleanIndexError",
    "ShardingTypeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "register_internal_package",
]
