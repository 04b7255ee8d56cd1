"""``torch.autograd.graph``: ``Node``, ``GradientEdge``, ``get_gradient_edge``."""

from __future__ import annotations

from compat._core.graph import GradientEdge, Node, get_gradient_edge

__all__ = ["GradientEdge", "Node", "get_gradient_edge"]
