"""JAX's ``jax.custom_derivatives`` names."""

from funcgrad.custom import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp", "custom_vjp"]
