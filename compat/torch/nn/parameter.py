"""``nn.Parameter``: a Tensor subclass that modules register as a learnable weight.

Mirrors ``torch/nn/parameter.py``: a Parameter is a leaf Tensor with
``requires_grad=True`` by default; assigning one as a module attribute
registers it in the module's ``_parameters``. Operations on a Parameter return
plain Tensors.

Example:
    >>> import compat.torch as torch
    >>> w = torch.nn.Parameter(torch.zeros(2, 3))
    >>> w.requires_grad, w.is_leaf
    (True, True)
"""

from __future__ import annotations

import copy
from typing import Any

import compat.torch as torch

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "is_lazy",
    "is_parameter",
]


def _new_subclass_instance(cls: type, data: Any, requires_grad: bool) -> Any:
    """A ``cls`` instance holding ``data``'s values, detached from its graph.

    Uses ``Tensor._make_subclass`` where the Tensor type provides it (as
    PyTorch does); otherwise re-classes a fresh detached alias, which works
    for a pure-Python Tensor whose layout the subclass shares.
    """
    make_subclass = getattr(torch.Tensor, "_make_subclass", None)
    if make_subclass is not None:
        return make_subclass(cls, data, requires_grad)
    alias = data.detach()
    alias.__class__ = cls
    alias.requires_grad_(requires_grad)
    return alias


class Parameter(torch.Tensor):
    """A Tensor that is a module parameter.

    Args:
        data: the initial values (a Tensor); an empty tensor when ``None``.
        requires_grad: whether the parameter requires gradient (default ``True``).
    """

    # No instance dict of our own: keeps the layout of the Tensor base so that
    # a detached alias can be re-classed into a Parameter.
    __slots__ = ()

    # Where the Tensor type dispatches ``__torch_function__`` to subclasses,
    # ops on a Parameter return plain Tensors (as ``torch.nn.Parameter`` does).
    _disabled = getattr(getattr(torch, "_C", None), "_disabled_torch_function_impl", None)
    if _disabled is not None:
        __torch_function__ = _disabled
    del _disabled

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = torch.empty(0)
        if not isinstance(data, torch.Tensor):
            raise TypeError(f"Parameter(data) expects a Tensor, but got {type(data).__name__}")
        return _new_subclass_instance(cls, data, requires_grad)

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        # Everything happened in __new__; do not re-run the Tensor constructor.
        pass

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_clone(self.detach()), self.requires_grad)
        memo[id(self)] = result
        if self.grad is not None:
            result.grad = _clone(self.grad.detach())
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach().numpy(), self.requires_grad))


def _clone(t: Any) -> Any:
    clone = getattr(t, "clone", None)
    if clone is not None:
        return clone()
    return torch.tensor(copy.deepcopy(t.numpy()), dtype=t.dtype)


def _rebuild_parameter(values: Any, requires_grad: bool) -> Parameter:
    return Parameter(torch.tensor(values), requires_grad)


class _BufferMeta(type(torch.Tensor)):
    """Makes ``isinstance(t, Buffer)`` true for any Tensor that ``Buffer`` marked."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer and getattr(instance, "_is_buffer", False):
            return isinstance(instance, torch.Tensor)
        return super().__instancecheck__(instance)


class Buffer(torch.Tensor, metaclass=_BufferMeta):
    """A Tensor that registers itself as a buffer when assigned as a module attribute.

    As in PyTorch 2.5+, ``Buffer(data, persistent=True)`` returns a plain
    Tensor (a detached alias of ``data``, same ``requires_grad``) marked so that
    ``module.name = Buffer(...)`` calls ``register_buffer(name, ..., persistent)``;
    ``persistent=False`` keeps it out of ``state_dict``.
    """

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = torch.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


#: PyTorch's error for the shape of an uninitialised parameter, which ``load_state_dict``
#: meets when loading a lazy module's state into an initialised module
UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. "
    "This error usually happens in `load_state_dict` when trying to load "
    "an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes."
)


class UninitializedTensorMixin:
    """A placeholder without a shape yet (a lazy module's), until ``materialize``."""

    __slots__ = ()
    cls_to_become: type = torch.Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the placeholder ``shape`` (uninitialised values) and make it a plain
        ``cls_to_become`` (``Parameter`` or ``Tensor``)."""
        if isinstance(shape, int):
            shape = (shape,)
        self.data = torch.empty(tuple(shape), dtype=self.dtype if dtype is None else dtype)
        self.__class__ = self.cls_to_become

    def share_memory_(self) -> Any:
        """Refused, as PyTorch refuses it (nothing to share yet)."""
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad, None, self.dtype))

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` whose shape a lazy module infers at its first call
    (``materialize`` makes it a ``Parameter``)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> Any:
        data = torch.empty(0) if dtype is None else torch.empty(0, dtype=dtype)
        return _new_subclass_instance(cls, data, requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, torch.Tensor):
    """A buffer whose shape a lazy module infers at its first call (``materialize``
    makes it a plain ``Tensor``)."""

    __slots__ = ()
    cls_to_become = torch.Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> Any:
        data = torch.empty(0) if dtype is None else torch.empty(0, dtype=dtype)
        return _new_subclass_instance(cls, data, requires_grad)

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        pass


def is_lazy(obj: Any) -> bool:
    """Whether ``obj`` is an uninitialised (lazy) parameter or buffer."""
    return isinstance(obj, UninitializedTensorMixin)


def is_parameter(obj: Any) -> bool:
    """Whether ``obj`` is an ``nn.Parameter``."""
    return isinstance(obj, Parameter)
