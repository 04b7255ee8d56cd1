"""The shared core of the compat flavours: Tensor, ops, graph, engine, grad mode.

Importing it enables ``jax_enable_x64`` process-wide: PyTorch code uses float64 and
int64 tensors, which JAX only keeps with x64 on. compat's own default dtype stays
float32 (``torch.tensor(1.5).dtype == float32``).
"""

import jax

jax.config.update("jax_enable_x64", True)

from compat._core import methods as _methods  # noqa: E402

_methods.install()
