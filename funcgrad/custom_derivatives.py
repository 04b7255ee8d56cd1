"""JAX's ``jax.custom_derivatives`` names."""

from funcgrad.custom import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_gradient,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from funcgrad.toplevel import closure_convert

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
