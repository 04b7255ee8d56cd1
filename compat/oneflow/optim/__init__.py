"""``flow.optim``: re-exports ``compat.torch.optim`` (SGD, Adam, AdamW, Optimizer, lr_scheduler)."""

from compat.torch.optim import *  # noqa: F403
from compat.torch.optim import __all__  # noqa: F401
