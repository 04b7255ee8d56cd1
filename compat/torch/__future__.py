"""``torch.__future__``: switches for behaviour PyTorch will make the default, read by
``nn.Module`` when it converts its parameters (``_apply``: ``.to()``, ``.double()``,
``.cuda()``...) and when it loads a state dict.

* ``set_overwrite_module_params_on_conversion(True)``: a conversion gives the module new
  Parameter objects (and new gradients) instead of setting ``.data`` on the old ones.
* ``set_swap_module_params_on_conversion(True)`` (it takes precedence): a conversion
  swaps the new values into the old Parameter objects with ``torch.utils.swap_tensors``,
  and ``load_state_dict`` swaps in ``param.module_load(value)`` instead of copying
  ``value`` into the parameter.

Example:
    >>> import compat.torch as torch
    >>> torch.__future__.get_overwrite_module_params_on_conversion()
    False
"""

from __future__ import annotations

__all__ = [
    "get_overwrite_module_params_on_conversion",
    "get_swap_module_params_on_conversion",
    "set_overwrite_module_params_on_conversion",
    "set_swap_module_params_on_conversion",
]

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether converting a module assigns new Parameters instead of setting ``.data``."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """See :func:`set_overwrite_module_params_on_conversion` (default ``False``)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether converting a module and loading a state dict swap the new values into the
    existing Parameter objects (``torch.utils.swap_tensors``)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """See :func:`set_swap_module_params_on_conversion` (default ``False``)."""
    return _swap_module_params_on_conversion
