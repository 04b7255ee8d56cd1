"""``flow.nn.init``: re-exports ``compat.torch.nn.init``."""

from compat.torch.nn.init import *  # noqa: F403
from compat.torch.nn.init import __all__, _calculate_fan_in_and_fan_out  # noqa: F401
