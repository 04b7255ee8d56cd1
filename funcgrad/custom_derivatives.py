"""JAX's ``jax.custom_derivatives`` names."""

from funcgrad.custom import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_vjp",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
