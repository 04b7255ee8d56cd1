"""``flow.nn.functional``: re-exports ``compat.torch.nn.functional``."""

from compat.torch.nn.functional import *  # noqa: F403
from compat.torch.nn.functional import __all__  # noqa: F401
