"""The optimizer hooks of PyTorch's ``Optimizer``: step pre- and post-hooks (per
optimizer and global), state-dict and load-state-dict pre- and post-hooks.

Step pre-hooks run as ``hook(optimizer, args, kwargs)`` (``args`` starting with the
optimizer, as PyTorch's) and may return new ``(args, kwargs)``; post-hooks see the same
arguments. Global pre-hooks run before the optimizer's own, global post-hooks after.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from compat.torch.nn.modules.module_hooks import RemovableHandle

__all__ = ["register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]

_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()

#: the per-optimizer hook tables (made on first use: optimizers pickled without them load)
_TABLES = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A pre-hook of every optimizer's ``step``: ``hook(optimizer, args, kwargs)``,
    returning ``None`` or new ``(args, kwargs)``."""
    return _register(_global_optimizer_pre_hooks, hook, prepend=False)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A post-hook of every optimizer's ``step``: ``hook(optimizer, args, kwargs)``."""
    return _register(_global_optimizer_post_hooks, hook, prepend=False)


def _register(table: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool) -> Any:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


class OptimizerHooks:
    """The hook registration methods and the runners ``Optimizer`` calls."""

    def _hook_table(self, name: str) -> OrderedDict[int, Any]:
        table = self.__dict__.get(name)
        if table is None:
            table = self.__dict__[name] = OrderedDict()
        return table

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before each ``step``; it may return new
        ``(args, kwargs)``."""
        return _register(self._hook_table("_optimizer_step_pre_hooks"), hook, False)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return _register(self._hook_table("_optimizer_step_post_hooks"), hook, False)

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return _register(self._hook_table("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` after; a dict it returns replaces the result."""
        return _register(self._hook_table("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before loading (on a shallow copy of the
        dict); a dict it returns is loaded instead."""
        return _register(self._hook_table("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` after loading."""
        return _register(self._hook_table("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    # -- runners -------------------------------------------------------------------
    def _run_step(self, step: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """``step(*args, **kwargs)`` (``args[0]`` is the optimizer) between the step
        hooks (a subclass's ``step`` calling ``super().step()`` runs them at both levels,
        as PyTorch's once both classes' steps are patched)."""
        pre = [*_global_optimizer_pre_hooks.values(), *self._hook_table(_TABLES[0]).values()]
        for hook in pre:
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                        f"{result}."
                    )
                args, kwargs = result
        out = step(*args, **kwargs)
        post = [*self._hook_table(_TABLES[1]).values(), *_global_optimizer_post_hooks.values()]
        for hook in post:
            hook(self, args, kwargs)
        return out

    def _state_dict_pre_hooks(self) -> None:
        for hook in list(self._hook_table(_TABLES[2]).values()):
            hook(self)

    def _state_dict_post_hooks(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        for hook in list(self._hook_table(_TABLES[3]).values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def _load_state_dict_pre_hooks(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        for hook in list(self._hook_table(_TABLES[4]).values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def _load_state_dict_post_hooks(self) -> None:
        for hook in list(self._hook_table(_TABLES[5]).values()):
            hook(self)
