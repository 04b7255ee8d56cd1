"""``funcgrad.ad_checkpoint``, as ``jax.ad_checkpoint``: ``checkpoint`` (``remat``),
``checkpoint_name`` and ``checkpoint_policies``."""

from funcgrad import checkpoint_policies
from funcgrad.custom import checkpoint, remat
from funcgrad.primitives.calls import checkpoint_name

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
