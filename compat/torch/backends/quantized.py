"""``torch.backends.quantized``: compat has no quantized kernels, so no quantized engine.

Programs probe ``supported_engines`` before using one (``'fbgemm' in
torch.backends.quantized.supported_engines``): the answer here is no engine but
``"none"``, PyTorch's name for that case.
"""

from __future__ import annotations

#: the quantized engines compat can run: none
supported_engines: list[str] = ["none"]

#: the engine in use: ``"none"``
engine: str = "none"
