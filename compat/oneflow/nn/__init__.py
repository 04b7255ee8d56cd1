"""``flow.nn``: the modules of ``compat.torch.nn`` (one implementation, two flavours).

OneFlow's ``nn`` mirrors PyTorch's names and defaults for everything compat
implements, so the OneFlow flavour re-exports the torch one.
"""

from compat.torch.nn import *  # noqa: F403
from compat.torch.nn import __all__, functional, init  # noqa: F401
