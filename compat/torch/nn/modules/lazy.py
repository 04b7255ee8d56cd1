"""``nn.modules.lazy.LazyModuleMixin``: modules whose parameter shapes come from their
first input.

A lazy module starts with ``UninitializedParameter``s; a forward pre-hook calls its
``initialize_parameters(*args, **kwargs)`` on the first call (which materialises them
and runs ``reset_parameters``), then removes itself and turns the module into its
``cls_to_become`` (``LazyLinear`` becomes ``Linear``). A load pre-hook materialises the
placeholders from a checkpoint's shapes, so ``load_state_dict`` works before the first
call; ``state_dict`` keeps the placeholders as they are.

Example:
    >>> import warnings
    >>> import compat.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     layer = torch.nn.LazyLinear(3)
    >>> _ = layer(torch.ones(2, 5))
    >>> type(layer).__name__, tuple(layer.weight.shape)
    ('Linear', (3, 5))
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import compat.torch as torch
from compat.torch.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before the module class (``class LazyLinear(LazyModuleMixin, Linear)``);
    the class defines ``initialize_parameters`` and ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)
        warnings.warn(
            "Lazy modules are a new feature under heavy development so changes to the API "
            "or functionality can happen at any moment.",
            UserWarning,
            stacklevel=3,
        )

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # placeholders are saved as they are (no detach: they have no values)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (
                    param if keep_vars or is_lazy(param) else param.detach()
                )
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Materialise each placeholder the checkpoint has a real tensor for."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with torch.no_grad():
                        param.materialize(tuple(value.shape))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise the parameters from the first call's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still a placeholder."""
        return any(
            is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values())
        )

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


def _infer_parameters(module: Any, args: tuple, kwargs: dict | None = None) -> None:
    """The first call's pre-hook: initialise, then drop the hooks and become
    ``cls_to_become``."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    delattr(module, "_initialize_hook")
    delattr(module, "_load_hook")
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
