"""``ElementwiseOptimizer``: the shared step of optimizers whose update is one ``_rules`` rule.

A subclass says how to start a parameter's state (``_init_state``), how one
step advances the per-parameter scalar state and which runtime scalars the
rule then needs (``_advance``), and the group's static configuration
(``_config``). ``step()`` collects the parameters that have a gradient and
updates each group with one compiled program (``_compiled.rule_step``), or
tensor by tensor where the core offers no array access or a group says
``fused=False``.

Scalar state (``step``, NAdam's ``mu_product``, ASGD's ``eta``/``mu``) is kept
as Python floats rounded as PyTorch's float32 tensors are, and exported as
float32 0-d tensors by ``state_dict()`` (``_scalar_state``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.optim import _cold, _compiled, _rules
from compat.torch.optim._functional import hyper
from compat.torch.optim.optimizer import Optimizer, params_with_grad

__all__ = [
    "FLAGS",
    "ElementwiseOptimizer",
    "GroupStepOptimizer",
    "check_flags",
    "check_lr",
    "check_nonnegative",
    "densified",
    "differentiable_update",
    "f32",
    "flags",
    "hyper",
]


def f32(x: float) -> float:
    """``x`` rounded to float32 (the precision of PyTorch's scalar state tensors)."""
    return float(np.float32(x))


def scalar_state(x: float) -> float:
    """``x`` in the dtype of PyTorch's scalar optimizer state: float32, or float64 where
    the default dtype is float64 (``torch.optim.optimizer._get_scalar_dtype``)."""
    return float(x) if torch.get_default_dtype() == torch.float64 else f32(x)


def check_lr(lr: Any) -> None:
    """PyTorch's learning-rate checks: a Tensor must have one element, the value be >= 0."""
    if isinstance(lr, torch.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_nonnegative(**values: Any) -> None:
    """PyTorch's ``Invalid <name> value: <v>`` check for each ``name=value`` in order:
    the value must be >= 0 (a NaN fails too)."""
    for name, value in values.items():
        if not value >= 0.0:
            raise ValueError(f"Invalid {name} value: {value}")


def check_flags(differentiable: bool, fused: bool | None = None) -> None:
    """PyTorch's refusal of ``fused=True`` with ``differentiable=True`` (a fused kernel is
    not recorded for autograd; a differentiable step runs tensor by tensor)."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")


def differentiable_update(fn: Callable[..., Any], p: Any, state: list[Any]) -> None:
    """One recorded update of parameter ``p`` and its state tensors (in place, as PyTorch's):
    ``fn(p, *state)`` computes the new values from copies, so the in-place writes do not
    change what autograd saved for them."""
    out = fn(p.clone(), *(v.clone() for v in state))
    p.copy_(out[0])
    for old, new in zip(state, out[1:]):
        old.copy_(new)


#: the flags PyTorch's elementwise optimizers take beside their hyperparameters, with
#: their defaults: also the group options a pickled optimizer may lack
#: (``Optimizer.__setstate__`` fills them in from ``_state_defaults``)
FLAGS: dict[str, Any] = {
    "foreach": None,
    "maximize": False,
    "differentiable": False,
    "capturable": False,
}


def flags(
    *, foreach: bool | None, maximize: bool, differentiable: bool, capturable: bool
) -> dict[str, Any]:
    """The group options of :data:`FLAGS`."""
    return {
        "foreach": foreach,
        "maximize": maximize,
        "differentiable": differentiable,
        "capturable": capturable,
    }


class _TensorOps:
    """The rules' elementwise helpers on compat Tensors (the per-tensor path)."""

    sqrt = staticmethod(lambda x: torch.sqrt(x))
    maximum = staticmethod(lambda a, b: torch.maximum(a, _as_tensor(b, a)))
    minimum = staticmethod(lambda a, b: torch.minimum(a, _as_tensor(b, a)))
    abs = staticmethod(lambda x: torch.abs(x))
    sign = staticmethod(lambda x: torch.sign(x))
    where = staticmethod(lambda c, a, b: torch.where(c, a, b))

    @staticmethod
    def select(flag: float, then: Callable[[], Any], otherwise: Callable[[], Any]) -> Any:
        return then() if flag else otherwise()


def _as_tensor(value: Any, like: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value
    return torch.full_like(like, value)


class GroupStepOptimizer(Optimizer):
    """Base of the optimizers whose step updates each group on its own.

    ``step`` evaluates the closure, then hands each group's parameters that have a
    gradient (and those gradients) to ``_step_group`` (a group with none is skipped):
    without recording for autograd, or, where the optimizer was built with
    ``differentiable=True``, recorded (grad mode on, as PyTorch's), so gradients flow
    through the step into the previous parameters, gradients, state and Tensor
    hyperparameters.
    """

    #: PyTorch's refusal of a sparse gradient (``None``: "<Name> does not support ...")
    _sparse_refusal: str | None = None

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One step over every group; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with torch.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            for group in self.param_groups:
                params, grads = params_with_grad(group)
                if params:
                    if any(g.is_sparse for g in grads):
                        grads = self._sparse_grads(group, grads)
                    self._step_group(group, params, grads)
        return loss

    def _sparse_grads(self, group: dict[str, Any], grads: list[Any]) -> list[Any]:
        """Gradients for a group where some are sparse (``nn.Embedding(sparse=True)``):
        refused, with PyTorch's message, unless the optimizer takes them (SGD, Adagrad)."""
        raise RuntimeError(
            self._sparse_refusal or f"{type(self).__name__} does not support sparse gradients"
        )

    def _step_group(self, group: dict[str, Any], params: list[Any], grads: list[Any]) -> None:
        raise NotImplementedError


def densified(grads: list[Any]) -> list[Any]:
    """The gradients with the sparse ones made dense: for the optimizers whose update of a
    sparse gradient's rows is their dense update (zero elsewhere changes nothing there)."""
    return [g.to_dense() if g.is_sparse else g for g in grads]


class ElementwiseOptimizer(GroupStepOptimizer):
    """Base of the optimizers driven by one update rule (see the module docstring)."""

    _rule: Any = None
    _scalar_state: tuple[str, ...] = ("step",)

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = FLAGS

    def _config(self, group: dict[str, Any]) -> Any:
        """The rule's static configuration; by default the rules that take only
        ``maximize`` and whether there is weight decay (Adadelta, Adagrad, ASGD)."""
        return _rules.DecayConfig(
            maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0
        )

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _advance(self, group: dict[str, Any], state: dict[str, Any], p: Any) -> Any:
        """Advance the scalar state one step; return the rule's scalars for this step."""
        raise NotImplementedError

    def _step_group(self, group: dict[str, Any], params: list[Any], grads: list[Any]) -> None:
        for g in grads:
            if getattr(g, "is_sparse", False):
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
        cfg = self._config(group)
        states, scalars = [], []
        for p in params:
            st = self.state[p]
            if len(st) == 0:
                self._init_state(group, p, st)
            for key in self._scalar_state:
                value = st.get(key)
                # (a differentiable group keeps a scalar state that requires grad a Tensor)
                if key in st and not isinstance(value, float) and not _tracked(value, group):
                    st[key] = _float(value)
            scalars.append(self._advance(group, st, p))
            states.append(st)
        keys = self._rule.state_keys(cfg)
        state_lists = [[st[k] for st in states] for k in keys]
        differentiable = bool(group.get("differentiable"))
        access = _compiled.array_access() if group.get("fused") is not False else None
        if differentiable:
            access = None  # recorded tensor by tensor
        if any(p.is_complex() for p in params):
            # complex parameters are updated as pairs of reals, as PyTorch's: the rule runs
            # on real views of each one, of its gradient and of its state (written through)
            params, grads = [_real(p) for p in params], [_real(g) for g in grads]
            state_lists = [[_real(v) for v in lst] for lst in state_lists]
            access = None
        if access is not None:
            args = (access, self._rule, cfg, scalars, params, grads, state_lists)
            # a first step runs on NumPy, no program traced (see ``_cold``)
            first = all(st.get("step", _cold.COLD_STEPS + 1) <= _cold.COLD_STEPS for st in states)
            if not (first and _cold.rule_host_step(*args)):
                _compiled.rule_step(*args)
            return
        for i, p in enumerate(params):
            if differentiable:
                s, g = scalars[i], grads[i]

                def update(p: Any, *st: Any, s: Any = s, g: Any = g) -> tuple:
                    return self._rule.fn(cfg, s, _TensorOps, p, g, *st)

                differentiable_update(update, p, [lst[i] for lst in state_lists])
                continue
            out = self._rule.fn(
                cfg, scalars[i], _TensorOps, p, grads[i], *(lst[i] for lst in state_lists)
            )
            p.copy_(out[0])
            for lst, value in zip(state_lists, out[1:]):
                lst[i].copy_(value)

    def _export_param_state(self, state: dict[str, Any]) -> dict[str, Any]:
        out = dict(state)
        for key in self._scalar_state:
            if key in out and not isinstance(out[key], torch.Tensor):
                out[key] = torch.tensor(float(out[key]), dtype=torch.float32)
        return out

    def _import_state_value(self, param: Any, key: str, value: Any) -> Any:
        if key in self._scalar_state:
            return _float(value)
        return super()._import_state_value(param, key, value)


def _tracked(value: Any, group: dict[str, Any]) -> bool:
    """Whether ``value`` is a Tensor that requires grad in a differentiable group."""
    return bool(
        group.get("differentiable") and isinstance(value, torch.Tensor) and value.requires_grad
    )


def _real(t: Any) -> Any:
    """A complex tensor's real view (``view_as_real``: its last axis holds the real and
    imaginary parts); any other value itself."""
    return torch.view_as_real(t) if isinstance(t, torch.Tensor) and t.is_complex() else t


def _float(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if hasattr(value, "detach"):
        value = value.detach()
        value = value.cpu() if hasattr(value, "cpu") else value
        value = value.numpy()
    return float(np.asarray(value))
