"""``nn.utils.weight_norm``: the older, hook-based weight normalisation.

``weight_norm(module, "weight", dim)`` replaces the parameter ``weight`` by two,
``weight_g`` (its norm over every axis but ``dim``, kept as size-1 axes; the whole
tensor's norm for ``dim=None``) and ``weight_v`` (its direction), and registers a
forward pre-hook that sets the plain attribute ``module.weight = weight_v * (weight_g /
||weight_v||)`` before every call, so gradients reach ``weight_g`` and ``weight_v``
through compat's autograd. ``remove_weight_norm`` makes ``weight`` a parameter again.
PyTorch deprecates it (a ``FutureWarning``) for ``parametrizations.weight_norm``.

Example:
    >>> import warnings
    >>> import compat.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    >>> tuple(m.weight_g.shape), tuple(m.weight_v.shape)
    ((3, 1), (3, 4))
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter, UninitializedParameter
from compat.torch.nn.utils.parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

T = TypeVar("T", bound=Module)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        """``v * (g / ||v||)``, the norm over every axis but ``dim``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and register the hook."""
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization"
            )
        if name not in module._parameters or weight is None:
            raise ValueError(f"Module '{type(module).__name__}' has no parameter named '{name}'")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight.detach(), fn.dim)))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Make ``module.<name>`` a parameter again (its current value)."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T, name: str = "weight", dim: int | None = 0) -> T:
    """Reparametrize ``module.<name>`` as ``<name>_g * <name>_v / ||<name>_v||`` by a
    forward pre-hook; returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T, name: str = "weight") -> T:
    """Undo ``weight_norm``: ``module.<name>`` a parameter again; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
