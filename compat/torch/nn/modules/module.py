"""``nn.Module``: the stateful container of parameters, buffers and submodules.

Follows ``torch/nn/modules/module.py``: attributes that are ``Parameter``s,
``Module``s or registered buffers live in the ordered dicts ``_parameters``,
``_modules`` and ``_buffers`` and are found again by ``__getattr__``;
``named_parameters``/``named_modules`` walk the tree in registration order and
drop duplicates; ``state_dict``/``load_state_dict`` use PyTorch's key names
and error messages, so weights move between compat and real PyTorch through
NumPy arrays.

Example:
    >>> import compat.torch as torch
    >>> from compat.torch import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(4, 2)
    ...
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import compat.torch as torch
from compat._core import transfer as _transfer
from compat._core.tensor_swap import swap_tensors
from compat.torch import __future__ as _future
from compat.torch.nn.modules import module_hooks as _hooks
from compat.torch.nn.modules.module_hooks import (
    _HOME,
    ModuleHooksMixin,
    RemovableHandle,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
    registered_buffer,
    registered_module,
    registered_parameter,
)
from compat.torch.nn.modules.module_state import ModuleStateMixin
from compat.torch.nn.parameter import Buffer, Parameter

# the global hook registries live here, as in PyTorch's ``torch.nn.modules.module``: the
# hooks read them from this module on each use (rebinding one here takes effect)
_global_backward_hooks = _hooks._global_backward_hooks
_global_backward_pre_hooks = _hooks._global_backward_pre_hooks
_global_buffer_registration_hooks = _hooks._global_buffer_registration_hooks
_global_forward_hooks = _hooks._global_forward_hooks
_global_forward_hooks_always_called = _hooks._global_forward_hooks_always_called
_global_forward_hooks_with_kwargs = _hooks._global_forward_hooks_with_kwargs
_global_forward_pre_hooks = _hooks._global_forward_pre_hooks
_global_is_full_backward_hook = _hooks._global_is_full_backward_hook
_global_module_registration_hooks = _hooks._global_module_registration_hooks
_global_parameter_registration_hooks = _hooks._global_parameter_registration_hooks
_HOME[0] = sys.modules[__name__]

__all__ = [
    "Module",
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


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _on_device(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` run with its ``device`` argument as the default device, when given."""
    sig = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        d = kwargs.get("device")
        if d is None and args:
            try:
                d = sig.bind_partial(self, *args, **kwargs).arguments.get("device")
            except TypeError:
                d = None  # (``init`` itself raises its own error)
        if d is None:
            return init(self, *args, **kwargs)
        with torch.device(d):
            return init(self, *args, **kwargs)

    return __init__


class Module(ModuleHooksMixin, ModuleStateMixin):
    """Base class for all neural network modules.

    Subclasses call ``super().__init__()`` first, assign submodules and
    ``Parameter``s as attributes, and define ``forward``; calling the module
    runs ``forward`` (and any registered hooks).
    """

    training: bool
    call_super_init: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass whose ``__init__`` takes ``device=`` builds its parameters and buffers
        on that device: its ``__init__`` runs inside ``with torch.device(device):`` (how
        PyTorch's layers pass it to their factories; ``meta`` makes shape-only layers)."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and "device" in inspect.signature(init).parameters:
            cls.__init__ = _on_device(init)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        self._init_hooks()
        self._init_state_hooks()
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Add a non-learnable tensor (e.g. running statistics) saved in ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {torch.typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"cannot assign '{torch.typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = registered_buffer(self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter; ``None`` registers the name with no parameter (e.g. no bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {torch.typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None  # (PyTorch's registration hooks skip a None)
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{torch.typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                "must be created explicitly. To express '{name}' as a function of another "
                "Tensor, compute the value in the forward() method."
            )
        self._parameters[name] = registered_parameter(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{torch.typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {torch.typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = registered_module(self, name, module)

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is ``self``)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Any:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__,
                self._buffers,
                self._modules,
                self._non_persistent_buffers_set,
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{torch.typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__,
                    self._parameters,
                    self._buffers,
                    self._non_persistent_buffers_set,
                )
                modules[name] = registered_module(self, name, value)
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{torch.typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = registered_module(self, name, value)
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer):  # nn.Buffer registers itself
                    self.register_buffer(name, value, value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, torch.Tensor):
                        raise TypeError(
                            f"cannot assign '{torch.typename(value)}' as buffer '{name}' "
                            "(torch.Tensor or None expected)"
                        )
                    buffers[name] = registered_buffer(self, name, value)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fill_hooks()
        self._fill_state_hooks()

    # ------------------------------------------------------------------ traversal
    def _named_members(
        self,
        get_members: Callable[[Module], Any],
        prefix: str = "",
        recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs in registration order, shared parameters once."""
        return self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The module's parameters (its submodules' too with ``recurse``)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        """``(name, buffer)`` pairs in registration order."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Immediate submodules as ``(name, module)``, each module once."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Every module in the tree, ``self`` first (name ``prefix``), depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and on ``self``; returns ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every submodule; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: dropout becomes the identity."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to ``None`` by default, else to zeros)."""
        for p in self.parameters():
            _zero_grad(p, set_to_none)

    # ------------------------------------------------------------------ dtype / device
    def _apply(self, fn: Callable[[Any], Any], recurse: bool = True) -> Module:
        """Convert every parameter, gradient and buffer with ``fn``: by default the same
        Parameter objects get the new values (``.data``), under ``torch.__future__``'s
        switches they are replaced by new objects or the new values swapped in."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = _future.get_swap_module_params_on_conversion()
        overwrite = _future.get_overwrite_module_params_on_conversion()
        for name, param in self._parameters.items():
            if param is None:
                continue
            # as PyTorch's, fn runs without recording (an in-place fn is allowed on a leaf)
            with torch.no_grad():
                new = fn(param)
            grad = param.grad
            if new is param and not overwrite:
                if grad is not None:
                    with torch.no_grad():
                        new_grad = fn(grad)
                    if new_grad is not grad:
                        param.grad = new_grad
                continue
            if swap:
                _swap_in(self, name, param, Parameter(new, requires_grad=param.requires_grad))
                out = param
            elif _settable_data(param) and not overwrite:
                # Same object, new values: optimizers holding it keep working.
                param.data = new.detach()
                out = param
            else:
                out = Parameter(new.detach(), requires_grad=param.requires_grad)
                self._parameters[name] = out
            if grad is not None:
                with torch.no_grad():
                    new_grad = fn(grad)
                if swap:
                    new_grad.requires_grad_(grad.requires_grad)
                    _swap_in(self, name + ".grad", grad, new_grad)
                    out.grad = grad
                elif out is param and _settable_data(grad):
                    if new_grad is not grad:
                        grad.data = new_grad
                else:
                    out.grad = new_grad.requires_grad_(grad.requires_grad)
        for name, buf in self._buffers.items():
            if buf is not None:
                self._buffers[name] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``.

        A device moves every parameter and buffer (parameters keep their objects); a
        floating ``dtype`` converts floating parameters and buffers (as new Parameter
        objects: build optimizers after converting, as PyTorch recommends).
        """
        device, dtype, copy, _ = _transfer.parse_to(args, dict(kwargs))
        if copy:
            raise RuntimeError(".to() does not accept copy argument")
        if dtype is not None and not (_is_floating_dtype(dtype) or _is_complex_dtype(dtype)):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={dtype}"
            )
        if dtype is not None and _is_complex_dtype(dtype):
            warnings.warn(
                "Complex modules are a new feature under active development whose design may "
                "change, and some modules might not work as expected when using complex "
                "tensors as parameters or buffers.",
                UserWarning,
                stacklevel=2,
            )
        if device is not None:
            with torch.no_grad():
                self._apply(lambda t: _transfer.move(t, device))
        if dtype is None:
            return self

        def convert(t: Any) -> Any:
            inexact = _is_floating_dtype(t.dtype) or _is_complex_dtype(t.dtype)
            return _cast(t, dtype) if inexact else t

        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Parameters and buffers replaced by uninitialised ones of the same shapes and
        dtypes on ``device``: how a model built on the ``meta`` device gets memory (then
        ``reset_parameters()`` or ``load_state_dict`` gives it values)."""
        with torch.no_grad():
            return self._apply(lambda t: torch.empty_like(t, device=device), recurse=recurse)

    def cuda(self, device: Any = None) -> Module:
        """Move parameters and buffers to a CUDA device (jax's GPU); PyTorch's error if none."""
        with torch.no_grad():
            return self._apply(lambda t: _transfer.cuda(t, device))

    def float(self) -> Module:
        """Cast floating parameters and buffers to ``float32``."""
        return self._apply(lambda t: _cast(t, torch.float32) if _is_floating_dtype(t.dtype) else t)

    def double(self) -> Module:
        """Cast floating parameters and buffers to ``float64``."""
        return self._apply(lambda t: _cast(t, torch.float64) if _is_floating_dtype(t.dtype) else t)

    def half(self) -> Module:
        """Cast floating parameters and buffers to ``float16``."""
        return self._apply(lambda t: _cast(t, torch.float16) if _is_floating_dtype(t.dtype) else t)

    def bfloat16(self) -> Module:
        """Cast floating parameters and buffers to ``bfloat16``."""
        return self._apply(lambda t: _cast(t, torch.bfloat16) if _is_floating_dtype(t.dtype) else t)

    def cpu(self) -> Module:
        """Move parameters and buffers to the CPU."""
        with torch.no_grad():
            return self._apply(_transfer.cpu)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: _cast(t, dst_type))

    def share_memory(self) -> Module:
        """PyTorch's ``share_memory`` (Hogwild training across processes): refused with
        ``Tensor.share_memory_``'s error, never a silent copy per process."""
        for t in (*self.parameters(), *self.buffers()):
            t.share_memory_()
        return self

    # ------------------------------------------------------------------ printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text shown inside this module's ``repr`` parentheses."""
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _zero_grad(p: Any, set_to_none: bool) -> None:
    grad = p.grad
    if grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def _swap_in(module: Module, name: str, old: Any, new: Any) -> None:
    """``swap_tensors(old, new)``, its failure reported as PyTorch's ``_apply`` does."""
    try:
        swap_tensors(old, new)
    except Exception as e:
        raise RuntimeError(f"_apply(): Couldn't swap {module._get_name()}.{name}") from e


def _settable_data(t: Any) -> bool:
    prop = getattr(type(t), "data", None)
    return getattr(prop, "fset", None) is not None or type(prop).__name__ == "getset_descriptor"


def _is_dtype(obj: Any) -> bool:
    dtype_type = getattr(torch, "dtype", None)
    if isinstance(dtype_type, type) and isinstance(obj, dtype_type):
        return True
    return obj in (torch.float32, torch.float64, torch.int64, torch.bool)


def _is_floating_dtype(dtype: Any) -> bool:
    is_fp = getattr(dtype, "is_floating_point", None)
    if isinstance(is_fp, bool):
        return is_fp
    return dtype in (torch.float32, torch.float64) or "float" in str(dtype)


def _is_complex_dtype(dtype: Any) -> bool:
    return getattr(dtype, "is_complex", False) is True


def _cast(t: Any, dtype: Any) -> Any:
    if t.dtype == dtype:
        return t
    to = getattr(t, "to", None)
    if to is not None:
        return to(dtype)
    return torch.tensor(t.detach().numpy(), dtype=dtype)
