"""The shared core of the compat flavours: Tensor, ops, graph, engine, grad mode.

PyTorch code uses float64 and int64 tensors, which JAX only keeps with x64 on:
compat switches ``jax_enable_x64`` on thread-locally around its own entry points
(``funcgrad._compat_contract.x64``), so importing it leaves a funcgrad or JAX program's
dtypes unchanged. compat's own default dtype stays float32
(``torch.tensor(1.5).dtype == float32``).
"""

import funcgrad.errors

# errors raised inside compat point past its frames to the user's line, as past funcgrad's
funcgrad.errors.register_internal_package("compat")

from compat._core import methods as _methods  # noqa: E402
from compat._core import nodecall as _nodecall  # noqa: E402

_methods.install()
_nodecall.install()
