"""A trivial workload that exercises the harness: summing a million floats."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from benchmarks.harness import Impls, try_import_torch, workload


@workload("example.sum_1m", group="example", subject="jax")
def sum_1m() -> Impls:
    """Sum of 1e6 float32 values: jax.numpy vs numpy vs torch."""
    x_np = np.random.default_rng(0).standard_normal(1_000_000, dtype=np.float32)
    x_jax = jnp.asarray(x_np)
    impls: dict = {
        "jax": lambda: jnp.sum(x_jax),
        "numpy": lambda: np.sum(x_np),
    }
    torch = try_import_torch()
    if torch is not None:
        x_torch = torch.from_numpy(x_np.copy())
        impls["torch"] = lambda: torch.sum(x_torch)
    return impls
