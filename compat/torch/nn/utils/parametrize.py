"""``nn.utils.parametrize``: a module attribute computed from other tensors.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` into
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, … when
``p.right_inverse`` returns several tensors) and makes ``weight`` a property of a
per-module subclass (``Parametrized<Class>``) that evaluates ``p(original)`` on every
access, so gradients reach the originals; assigning ``module.weight = x`` stores
``p.right_inverse(x)``. The layout, names and ``state_dict`` keys are PyTorch's. Inside
``with cached():`` each parametrized tensor is computed once; a parametrized module is
saved through its ``state_dict`` only (pickling it raises PyTorch's error; ``deepcopy``
works); ``transfer_parametrizations_and_params`` moves parametrizations and originals to
another module.

Example:
    >>> import compat.torch as torch
    >>> from compat.torch.nn.utils import parametrize
    >>> class Symmetric(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(0, 1)
    >>> layer = parametrize.register_parametrization(torch.nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.T).all())
    True
"""

from __future__ import annotations

import contextlib
import copy
import copyreg
from collections.abc import Iterator, Sequence
from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.container import ModuleDict, ModuleList
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

Tensor = Any

#: ``(id(module), tensor name)`` -> the value computed inside :func:`cached`
_cache: dict[tuple[int, str], Tensor] = {}
#: how many :func:`cached` blocks are open
_cache_enabled = 0


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block (the first access), not on
    every access; the values are dropped when the outermost block ends."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest: Tensor, src: Tensor) -> None:
    """Give ``dest`` the value (and shape) of ``src`` without recording gradients."""
    with torch.no_grad():
        dest.data = src.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (applied in order) and its ``original``(s)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with torch.no_grad():
            new = original
            for module in reversed(list(self)):
                inverse = getattr(module, "right_inverse", None)
                if inverse is not None:
                    with contextlib.suppress(NotImplementedError):
                        new = inverse(new)
        if not isinstance(new, (torch.Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, torch.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            if new is not original:
                _set(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, torch.Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of the sequence with type "
                        f"{type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part.detach(), original.requires_grad)
                else:
                    part = part.detach().requires_grad_(original.requires_grad)
                _register(self, f"original{i}", part)
        if not self.unsafe:
            value = self()
            if not isinstance(value, torch.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(value).__name__}."
                )
            if value.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {dtype}\nparametrized dtype: {value.dtype}"
                )
            if tuple(value.shape) != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {torch.Size(shape)}\n"
                    f"parametrized shape: {value.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` through the parametrizations' ``right_inverse``s (last first)."""
        with torch.no_grad():
            for module in reversed(list(self)):
                inverse = getattr(module, "right_inverse", None)
                if inverse is None:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = inverse(value)
            if self.is_tensor:
                if not isinstance(value, torch.Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _set(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors of length "
                    f"{self.ntensors}. Got a sequence of length {len(value)}."
                )
            for i, part in enumerate(value):
                original = getattr(self, f"original{i}")
                if part.dtype != original.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} "
                        f"while `original{i}` has dtype {original.dtype}"
                    )
                _set(original, part)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization on the original(s), then
        each further one on the previous result."""
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


_NO_PICKLE = (
    "Serialization of parametrized modules is only supported through state_dict(). See:\n"
    "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
    "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
)


def _refuse_pickle(self: Module) -> Any:
    raise RuntimeError(_NO_PICKLE)


def _deepcopy(self: Module, memo: dict) -> Module:
    """A deep copy by the instance dictionary and slots (pickling's state is refused)."""
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(type(self)):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_class(module: Module) -> None:
    """Give ``module`` its own subclass, where the parametrized properties live; it
    refuses pickling (its class cannot be imported) but deep-copies."""
    cls = type(module)
    members: dict[str, Any] = {"__getstate__": _refuse_pickle}
    if not hasattr(cls, "__deepcopy__"):
        members["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), members)


def _inject_property(module: Module, name: str) -> None:
    if hasattr(module, name):
        raise AssertionError(f"Module already has an attribute named '{name}'")

    def get(self: Module) -> Tensor:
        if not _cache_enabled:
            return self.parametrizations[name]()
        key = (id(self), name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = self.parametrizations[name]()
        return value

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(get, set_))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter, buffer or an already
    parametrized tensor, to which ``parametrization`` is appended) by
    ``parametrization``; returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            if not isinstance(value, torch.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(value).__name__}."
                )
            if value.dtype != current.dtype or tuple(value.shape) != tuple(current.shape):
                what = "dtype" if value.dtype != current.dtype else "shape"
                raise ValueError(
                    f"Registering a parametrization may not change the {what} of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.{what}: {getattr(current, what)}\n"
                    f"parametrization(module.{tensor_name}).{what}: {getattr(value, what)}"
                )
            _check_right_inverse(parametrization, value, current, tensor_name)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
            f"element with name '{tensor_name}'"
        )
    return module


def _check_right_inverse(parametrization: Module, x: Tensor, y: Tensor, tensor_name: str) -> None:
    """PyTorch's check that a parametrization appended to others maps back: its
    ``right_inverse`` of ``x`` (its output) is one tensor of ``y``'s dtype and shape."""
    inverse = getattr(parametrization, "right_inverse", None)
    if inverse is None:
        return
    try:
        z = inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, torch.Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
        )
    for what in ("dtype", "shape"):
        if getattr(z, what) != getattr(y, what):
            raise ValueError(
                "The tensor returned by parametrization.right_inverse must have the same "
                f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {getattr(y, what)}\n"
                f"returned {what}: {getattr(z, what)}"
            )


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given)."""
    plists = getattr(module, "parametrizations", None)
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Make ``module.<tensor_name>`` a plain tensor again: its current parametrized
    value (``leave_parametrized=True``) or the single ``original``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with torch.no_grad():
                _set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value.detach()
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
            "parametrized in terms of a sequence of tensors."
        )
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` subclassed it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Give ``to_module`` the parametrizations of ``from_module`` (all, or those of
    ``tensor_name``) and the very original tensors they act on (shared, not copied); a
    tensor ``to_module`` lacks is created first. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if source.is_tensor:
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
