"""Conformance runners: JAX's and PyTorch's own test files against funcgrad and compat."""
