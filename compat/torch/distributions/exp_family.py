"""``ExponentialFamily``: the base class PyTorch gives exponential-family distributions."""

from __future__ import annotations

from compat.torch.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Marker base class of exponential-family distributions (``Normal``, ``Gamma``, ...).

    Each subclass here computes its entropy in closed form; the Bregman-divergence
    route PyTorch offers for subclasses without one is not provided.
    """
