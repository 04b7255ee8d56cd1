"""``nn.Module``'s hooks: forward (pre-)hooks, full backward (pre-)hooks, global hooks.

``Module.__call__`` runs, as PyTorch's ``_call_impl`` does: global then module
forward pre-hooks (``hook(module, args)`` or, ``with_kwargs``,
``hook(module, args, kwargs)``); ``forward``; global then module forward hooks
(``hook(module, args, output)`` / ``hook(module, args, kwargs, output)``;
``always_call`` ones also when ``forward`` raised). A non-``None`` result
replaces the arguments or the output.

Full backward hooks wrap the module's tensor inputs and outputs in one identity
op each (``BackwardHookFunctionBackward``, as PyTorch): the outputs' node's
pre-hook sees ``grad_output`` (backward pre-hooks may replace it), the inputs'
node's pre-hook sees ``grad_input`` and calls ``hook(module, grad_input,
grad_output)``, whose non-``None`` result replaces ``grad_input``. Entries are
``None`` for tensors that get no gradient.

Global registration hooks (``register_module_{buffer,parameter,module}_registration_hook``)
see every buffer, parameter and submodule a module registers, ``hook(module, name,
value)``; a non-``None`` result is registered instead.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sys
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import compat.torch as torch
from compat._core.tensor import apply
from funcgrad._compat_contract import lazy as _lazy

__all__ = [
    "RemovableHandle",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]


class RemovableHandle:
    """Handle returned by ``register_*_hook``; ``remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict[int, Any], *, extra_dict: Any = None) -> None:
        self._hooks = hooks
        self.id = next(RemovableHandle._next_id)
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self._extra = tuple(extra_dict)

    @property
    def hooks_dict_ref(self) -> Callable[[], Any]:
        """A weak reference to the registry the hook sits in (call it for the registry)."""
        return weakref.ref(self._hooks)

    @property
    def extra_dict_ref(self) -> tuple:
        """Weak references to the side registries (``with_kwargs``, ``always_call``)."""
        return tuple(weakref.ref(d) for d in self._extra)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)
        for d in self._extra:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


_global_forward_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = {}
_global_forward_hooks_always_called: dict[int, bool] = {}
_global_backward_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_backward_hooks: OrderedDict[int, Callable] = OrderedDict()
#: whether the global backward hooks are full ones (``None``: none registered yet); as
#: PyTorch's, it stays set once a first global backward hook was registered
_global_is_full_backward_hook: bool | None = None
_global_buffer_registration_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_parameter_registration_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_module_registration_hooks: OrderedDict[int, Callable] = OrderedDict()

#: the module whose globals are the registries above: ``torch.nn.modules.module`` once it
#: is imported (PyTorch's home for them), read on each use so that rebinding one there (a
#: test's tear-down: ``module._global_forward_hooks = OrderedDict()``) takes effect
_HOME: list[Any] = [sys.modules[__name__]]


def _g() -> Any:
    return _HOME[0]


_MIXED_GLOBAL_BACKWARD_HOOKS = (
    "Cannot use both regular backward hooks and full backward hooks as a global Module "
    "hook. Please use only one of them."
)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A forward pre-hook ``hook(module, args)`` for every module, before their own."""
    handle = RemovableHandle(_g()._global_forward_pre_hooks)
    _g()._global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """A forward hook for every module, run before the module's own forward hooks."""
    handle = RemovableHandle(
        _g()._global_forward_hooks,
        extra_dict=(
            _g()._global_forward_hooks_with_kwargs,
            _g()._global_forward_hooks_always_called,
        ),
    )
    _g()._global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _g()._global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _g()._global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A backward pre-hook ``hook(module, grad_output)`` for every module."""
    handle = RemovableHandle(_g()._global_backward_pre_hooks)
    _g()._global_backward_pre_hooks[handle.id] = hook
    return handle


def _register_global_backward_hook(hook: Callable[..., Any], full: bool) -> RemovableHandle:
    if _g()._global_is_full_backward_hook is (not full):
        raise RuntimeError(_MIXED_GLOBAL_BACKWARD_HOOKS)
    _g()._global_is_full_backward_hook = full
    handle = RemovableHandle(_g()._global_backward_hooks)
    _g()._global_backward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A full backward hook ``hook(module, grad_input, grad_output)`` for every module."""
    return _register_global_backward_hook(hook, True)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The deprecated (non-full) backward hook for every module: ``hook(module, grad_input,
    grad_output)`` on the last node of each module's output, as ``Module.register_backward_hook``.
    Global full and non-full hooks do not mix."""
    return _register_global_backward_hook(hook, False)


def _registration_hook(registry: OrderedDict, hook: Callable[..., Any]) -> RemovableHandle:
    handle = RemovableHandle(registry)
    registry[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` on every buffer a module registers; a non-``None``
    result is registered in its place."""
    return _registration_hook(_g()._global_buffer_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` on every parameter a module registers; a non-``None``
    result is registered in its place."""
    return _registration_hook(_g()._global_parameter_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` on every submodule a module registers; a
    non-``None`` result is registered in its place."""
    return _registration_hook(_g()._global_module_registration_hooks, hook)


def _registered(hooks: OrderedDict, module: Any, name: str, value: Any) -> Any:
    """``value`` passed through the global registration ``hooks`` (in registration order)."""
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


def registered_buffer(module: Any, name: str, value: Any) -> Any:
    """A buffer about to be registered, after the global buffer registration hooks."""
    return _registered(_g()._global_buffer_registration_hooks, module, name, value)


def registered_parameter(module: Any, name: str, value: Any) -> Any:
    """A parameter about to be registered, after the global parameter registration hooks."""
    return _registered(_g()._global_parameter_registration_hooks, module, name, value)


def registered_module(module: Any, name: str, value: Any) -> Any:
    """A submodule about to be registered, after the global module registration hooks."""
    return _registered(_g()._global_module_registration_hooks, module, name, value)


def _identity(*xs: Any) -> tuple:
    return tuple(x + 0 if x.dtype != bool else x for x in xs)


def _add(hooks: OrderedDict, handle: RemovableHandle, hook: Callable, prepend: bool) -> None:
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)


def _grad_tensors(items: Any) -> list[int]:
    return [
        i
        for i, t in enumerate(items)
        if isinstance(t, torch.Tensor) and t.requires_grad and torch.is_grad_enabled()
    ]


def _wrap(items: list, idx: list[int]) -> Any:
    """Pass ``items[i]`` (``i`` in ``idx``) through one identity op; returns its node."""
    outs = apply(_identity, "BackwardHookFunctionBackward", [items[i] for i in idx])
    if not isinstance(outs, tuple):
        outs = (outs,)
    for i, o in zip(idx, outs, strict=True):
        items[i] = o
    return outs[0].grad_fn


class _BackwardHook:
    """One call's full backward hooks: wraps inputs, then outputs, in identity nodes."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_idx: list[int] = []
        self.zero_like: list = []
        self.grad_output: tuple | None = None

    def setup_input(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        items = list(args)
        self.input_idx = _grad_tensors(items)
        # with some input needing a gradient, PyTorch reports zeros for the other tensors
        self.zero_like = (
            [(i, a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
            if self.input_idx
            else []
        )
        if self.input_idx and self.hooks:
            _wrap(items, self.input_idx).register_prehook(self._on_grad_input)
        return tuple(items)

    def setup_output(self, result: Any) -> Any:
        single = isinstance(result, torch.Tensor)
        items = [result] if single else list(result) if isinstance(result, tuple | list) else None
        if items is None:
            return result
        idx = _grad_tensors(items)
        if not idx:
            return result
        n_out = sum(isinstance(t, torch.Tensor) for t in items)
        tensor_pos = [i for i, t in enumerate(items) if isinstance(t, torch.Tensor)]
        slots = [tensor_pos.index(i) for i in idx]

        def on_grad_output(grads: tuple) -> tuple:
            full: list = [None] * n_out
            for s, g in zip(slots, grads, strict=True):
                full[s] = g
            grad_output = tuple(full)
            for hook in self.pre_hooks:
                r = hook(self.module, grad_output)
                if r is not None:
                    grad_output = _check_len(r, n_out, "backward pre hook")
            self.grad_output = grad_output
            if not self.input_idx and self.hooks:  # no input needs a gradient
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    UserWarning,
                    stacklevel=2,
                )
                for hook in self.hooks:
                    r = hook(self.module, (None,) * self.n_inputs, self.grad_output)
                    if r is not None and not (isinstance(r, tuple) and all(g is None for g in r)):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
            return tuple(grad_output[s] for s in slots)

        _wrap(items, idx).register_prehook(on_grad_output)
        if single:
            return items[0]
        if hasattr(result, "_fields"):  # a named tuple takes its fields one by one
            return type(result)(*items)
        return type(result)(items)

    def _call_hooks(self, grad_input: tuple) -> tuple:
        for hook in self.hooks:
            r = hook(self.module, grad_input, self.grad_output)
            if r is not None:
                grad_input = _check_len(r, len(grad_input), "backward hook")
        return grad_input

    def _on_grad_input(self, grads: tuple) -> tuple:
        full: list = [None] * self.n_inputs
        for i, a in self.zero_like:
            full[i] = torch.zeros_like(a)
        for s, g in zip(self.input_idx, grads, strict=True):
            if g is not None:
                full[s] = g
        if self.grad_output is None:
            # the gradient reached the inputs without passing through the outputs (a double
            # backward through the first one's graph): PyTorch calls no hook
            return grads
        out = self._call_hooks(tuple(full))
        self.grad_output = None  # (one call per backward through the outputs)
        return tuple(out[s] for s in self.input_idx)


def _check_len(r: Any, n: int, what: str) -> tuple:
    r = tuple(r) if isinstance(r, tuple | list) else (r,)
    if len(r) != n:
        raise RuntimeError(
            f"Backward hook returned an invalid number of grad_input, got {len(r)}, but "
            f"expected {n}"
            if what == "backward hook"
            else f"{what} returned an invalid number of gradients, got {len(r)}, but expected {n}"
        )
    return r


class ModuleHooksMixin:
    """The hook registries and ``__call__`` of ``nn.Module`` (see the module docstring)."""

    def _init_hooks(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_non_full_backward_hooks", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)

    def _fill_hooks(self) -> None:
        """Give a module unpickled from before the legacy backward hooks existed them."""
        if "_non_full_backward_hooks" not in self.__dict__:
            object.__setattr__(self, "_non_full_backward_hooks", OrderedDict())
            object.__setattr__(self, "_is_full_backward_hook", None)

    # ------------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_compat_compiled") and not _lazy.is_on():
            with _lazy.enabled(True):  # torch.compile(module): the call as one program
                return self._call_plain(args, kwargs)
        return self._call_plain(args, kwargs)

    def _call_plain(self, args: tuple, kwargs: dict) -> Any:
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or self._non_full_backward_hooks
            or (g := _HOME[0])._global_forward_pre_hooks
            or g._global_forward_hooks
            or g._global_backward_hooks
            or g._global_backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_impl(args, kwargs)

    def _call_impl(self, args: tuple, kwargs: dict) -> Any:
        for hook_id, hook in [
            *_g()._global_forward_pre_hooks.items(),
            *self._forward_pre_hooks.items(),
        ]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {r}."
                        )
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        global_full = _g()._global_is_full_backward_hook is True
        hooks = [*(_g()._global_backward_hooks.values() if global_full else ()),
                 *self._backward_hooks.values()]  # fmt: skip
        non_full = [*(() if global_full else _g()._global_backward_hooks.values()),
                    *self._non_full_backward_hooks.values()]  # fmt: skip
        pre = [*_g()._global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if hooks or pre:
            bw = _BackwardHook(self, hooks, pre)
            args = bw.setup_input(args)
        fwd_hooks = [*_g()._global_forward_hooks.items(), *self._forward_hooks.items()]
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in fwd_hooks:
                if (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _g()._global_forward_hooks_always_called
                ):
                    with contextlib.suppress(Exception):  # PyTorch silences these too
                        self._run_forward_hook(hook_id, hook, args, kwargs, None)
            raise
        for hook_id, hook in fwd_hooks:
            r = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if r is not None:
                result = r
        if bw is not None:
            if not isinstance(result, torch.Tensor | tuple):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=2,
                )
            result = bw.setup_output(result)
        if non_full:
            _attach_non_full_hooks(self, args, result, non_full)
        return result

    def _run_forward_hook(
        self, hook_id: int, hook: Callable, args: tuple, kwargs: dict, result: Any
    ) -> Any:
        if hook_id in self._forward_hooks_with_kwargs or (
            hook_id in _g()._global_forward_hooks_with_kwargs
        ):
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    # ------------------------------------------------------------------ registration
    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` (or ``(module, args, kwargs)``) before ``forward``.

        A non-``None`` result replaces ``args`` (a non-tuple is wrapped in one), or
        with ``with_kwargs`` must be ``(args, kwargs)``.
        """
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        _add(self._forward_pre_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``(module, args, kwargs, output)``) after ``forward``.

        A non-``None`` result replaces the output; ``always_call`` hooks run even
        when ``forward`` raises.
        """
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=(self._forward_hooks_with_kwargs, self._forward_hooks_always_called),
        )
        _add(self._forward_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output)`` when the output's gradients are known; may replace them."""
        handle = RemovableHandle(self._backward_pre_hooks)
        _add(self._backward_pre_hooks, handle, hook, prepend)
        return handle

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the inputs' gradients are known.

        A non-``None`` result (a tuple as long as ``grad_input``) replaces ``grad_input``.
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", True)
        handle = RemovableHandle(self._backward_hooks)
        _add(self._backward_hooks, handle, hook, prepend)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The deprecated (non-full) backward hook: ``hook(module, grad_input,
        grad_output)`` with the gradients of the *last* autograd node of ``forward``'s
        output (its first tensor), as PyTorch's; prefer ``register_full_backward_hook``."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", False)
        handle = RemovableHandle(self._non_full_backward_hooks)
        self._non_full_backward_hooks[handle.id] = hook
        return handle


_MIXED_BACKWARD_HOOKS = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. "
    "Please use only one of them."
)


def _attach_non_full_hooks(module: Any, args: tuple, result: Any, hooks: list) -> None:
    """Register the legacy backward ``hooks`` (global, then ``module``'s) on the node that
    made the first tensor of ``result`` (walking dicts by value and sequences by first item,
    as PyTorch), with PyTorch's warnings where that node cannot see every gradient."""
    var = result
    while not isinstance(var, torch.Tensor):
        if isinstance(var, dict):
            var = next((v for v in var.values() if isinstance(v, torch.Tensor)), None)
        elif isinstance(var, (list, tuple)) and var:
            var = var[0]
        else:
            return
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(functools.partial(hook, module))
    why = _non_full_hook_gap(args, result, grad_fn)
    if why:
        warnings.warn(
            f"Using {why} is deprecated and will be removed in future versions. This hook "
            f"will be missing some {_NON_FULL_MISSING[why]}",
            FutureWarning,
            stacklevel=3,
        )


_NON_FULL_USE = "Please use register_full_backward_hook to get the documented behavior."
#: PyTorch's warnings of a legacy backward hook, by what the hook misses
_NON_FULL_MISSING = {
    "non-full backward hooks on a Module that does not return a single Tensor or a tuple "
    "of Tensors": f"of the grad_output. {_NON_FULL_USE}",
    "non-full backward hooks on a Module that does not take as input a single Tensor or a "
    "tuple of Tensors": f"of the grad_input. {_NON_FULL_USE}",
    "a non-full backward hook when outputs are nested in python data structure": "grad_output.",
    "a non-full backward hook when outputs are generated by different autograd Nodes": (
        f"grad_output. {_NON_FULL_USE}"
    ),
    "a non-full backward hook when the forward contains multiple autograd Nodes": (
        f"grad_input. {_NON_FULL_USE}"
    ),
}


def _non_full_hook_gap(args: tuple, result: Any, grad_fn: Any) -> str:
    """Why the legacy hook on ``grad_fn`` misses gradients (a key of
    :data:`_NON_FULL_MISSING`), or ``""``: PyTorch's checks, in its order."""
    keys = list(_NON_FULL_MISSING)

    def tensors(x: Any) -> bool:
        return isinstance(x, tuple) and all(isinstance(t, torch.Tensor) for t in x)

    outs = (result,) if isinstance(result, torch.Tensor) else result
    if not tensors(outs):
        return keys[0]
    if not tensors(args):
        return keys[1]
    out_fns = {id(r.grad_fn): r.grad_fn for r in outs if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and id(grad_fn) not in out_fns):
        return keys[2]
    if len(out_fns) > 1:
        return keys[3]
    in_fns = {id(a.grad_fn) for a in args if a.grad_fn is not None}
    if in_fns != {id(n) for n, _ in grad_fn.next_functions if n is not None}:
        return keys[4]
    return ""
