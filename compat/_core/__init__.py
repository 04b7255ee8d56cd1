"""The shared core of the compat flavours: Tensor, ops, graph, engine, grad mode.

Importing it enables ``jax_enable_x64`` process-wide: PyTorch code uses float64 and
int64 tensors, which JAX only keeps with x64 on. compat's own default dtype stays
float32 (``torch.tensor(1.5).dtype == float32``).
"""

import jax

import funcgrad.errors

jax.config.update("jax_enable_x64", True)
# errors raised inside compat point past its frames to the user's line, as past funcgrad's
funcgrad.errors.register_internal_package("compat")

from compat._core import methods as _methods  # noqa: E402
from compat._core import nodecall as _nodecall  # noqa: E402

_methods.install()
_nodecall.install()
