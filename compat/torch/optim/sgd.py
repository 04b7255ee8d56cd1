"""``optim.SGD``: stochastic gradient descent with momentum, dampening, Nesterov and decay."""

from __future__ import annotations

from typing import Any

from compat.torch.optim import _compiled
from compat.torch.optim._elementwise import (
    GroupStepOptimizer,
    check_flags,
    densified,
    differentiable_update,
)
from compat.torch.optim._functional import SGDConfig, sgd_scalars, sgd_update

__all__ = ["SGD"]


class SGD(GroupStepOptimizer):
    """PyTorch's SGD (``torch/optim/sgd.py``), same defaults and update order.

    Per parameter with a gradient ``g`` (parameters whose ``.grad`` is ``None``
    are skipped): ``g = -g`` if ``maximize``; ``g += weight_decay * p``; with
    momentum, ``buf = g`` on the first step and ``buf = momentum * buf + (1 -
    dampening) * g`` after, then ``g = g + momentum * buf`` (Nesterov) or ``g =
    buf``; finally ``p -= lr * g``.

    ``fused=None`` (default) or ``True`` updates each group with one compiled
    funcgrad program when the compat core allows it; ``fused=False`` forces
    the per-tensor path. ``foreach`` is accepted for compatibility;
    ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_flags(differentiable, fused)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = {
        "nesterov": False,
        "maximize": False,
        "foreach": None,
        "differentiable": False,
        "fused": False,  # PyTorch's: an old pickle runs the per-parameter update
    }

    def _sparse_grads(self, group: dict[str, Any], grads: list[Any]) -> list[Any]:
        """Sparse gradients are taken: the update of their rows is the dense one's (the
        momentum buffer is dense, PyTorch's sparse); weight decay refuses, as PyTorch's
        ``grad.add(param)`` of a sparse gradient does."""
        if group["weight_decay"] != 0:
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
            )
        return densified(grads)

    def _step_group(self, group: dict[str, Any], params: list[Any], grads: list[Any]) -> None:
        cfg = SGDConfig(
            momentum=group["momentum"] != 0,
            weight_decay=group["weight_decay"] != 0,
            nesterov=bool(group["nesterov"]),
            maximize=bool(group["maximize"]),
            dampening=group["dampening"] != 0,
        )
        s = sgd_scalars(group)
        state = self.state
        bufs = [state[p].get("momentum_buffer") for p in params] if cfg.momentum else None
        access = _compiled.array_access() if group["fused"] is not False else None
        if group["differentiable"]:
            self._recorded_step(group, cfg, params, grads, bufs)
            return
        if access is not None:
            new_bufs = _compiled.sgd_step(
                access, cfg, s, params, grads, bufs or [None] * len(params)
            )
        else:
            new_bufs = []
            for i, (p, g) in enumerate(zip(params, grads)):
                buf = bufs[i] if bufs else None
                new_p, new_b = sgd_update(cfg, s, p, g, buf)
                p.copy_(new_p)
                if buf is not None:
                    buf.copy_(new_b)  # in place, as PyTorch's buf.mul_().add_()
                    new_b = buf
                elif new_b is g:  # first momentum step: the buffer is a copy of the gradient
                    new_b = _clone(g)
                new_bufs.append(new_b)
        if cfg.momentum:
            for p, b in zip(params, new_bufs):
                state[p]["momentum_buffer"] = b

    def _recorded_step(
        self,
        group: dict[str, Any],
        cfg: SGDConfig,
        params: list[Any],
        grads: list[Any],
        bufs: list[Any] | None,
    ) -> None:
        """The differentiable step: recorded for autograd, Tensor ``lr``/``weight_decay``
        that require grad kept. As PyTorch's, a first momentum step starts the buffer from
        a detached copy of the gradient, so no gradient flows through that step's update."""
        s = sgd_scalars(group)
        for i, (p, g) in enumerate(zip(params, grads)):
            buf = bufs[i] if bufs else None
            if cfg.momentum and buf is None:
                new_p, new_b = sgd_update(cfg, s, p, g, None, first=lambda t: t.detach().clone())
                p.copy_(new_p)
                self.state[p]["momentum_buffer"] = new_b
                continue
            if buf is None:
                differentiable_update(lambda q: (sgd_update(cfg, s, q, g, None)[0],), p, [])
            else:
                differentiable_update(lambda q, b: sgd_update(cfg, s, q, g, b), p, [buf])


def _clone(t: Any) -> Any:
    clone = getattr(t, "clone", None)
    return clone() if clone is not None else t * 1.0
