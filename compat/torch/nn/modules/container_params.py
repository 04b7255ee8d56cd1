"""``ParameterList`` and ``ParameterDict``: list- and dict-like modules of parameters.

As in ``torch/nn/modules/container.py``, each entry is an attribute of the
container (named ``"0"``, ``"1"``, ... or by its key), so Tensors become
registered ``Parameter``s (``named_parameters``, ``state_dict``, ``.to()`` and
optimizers see them), Modules become submodules and any other object is a
plain attribute. Adding a plain Tensor wraps it in a new ``Parameter``
(``requires_grad=True``); a ``Parameter`` is kept as given.

Example:
    >>> import compat.torch as torch
    >>> from compat.torch import nn
    >>> params = nn.ParameterList([torch.zeros(2), torch.ones(3)])
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, KeysView, Mapping
from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = ["ParameterDict", "ParameterList"]


def _as_entry(value: Any) -> Any:
    """A plain Tensor becomes a new ``Parameter``; anything else is kept."""
    if isinstance(value, torch.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_line(key: Any, value: Any, type_name: str) -> str:
    """One line of the containers' ``extra_repr``: tensors by kind, type and size."""
    if not isinstance(value, torch.Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    sizes = "x".join(str(s) for s in value.size())
    device = f" ({value.device})" if value.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name} of size {sizes}{device}]"


class ParameterList(Module):
    """A list whose Tensor entries are registered parameters of the module.

    Supports ``len``, iteration, integer indexing (negative too), slicing (a
    new ``ParameterList`` sharing the entries), item assignment, ``append``,
    ``extend`` and ``+=``, like PyTorch's (which has no ``insert`` or ``del``).
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _attr(self, idx: Any) -> str:
        """The attribute name of entry ``idx`` (PyTorch's ``IndexError`` when out of range)."""
        idx = operator.index(idx)
        size = len(self)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % size)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._attr(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._attr(idx), _as_entry(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a plain Tensor becomes a ``Parameter``)."""
        self._size += 1
        try:
            self[self._size - 1] = value
        except BaseException:
            self._size -= 1
            raise
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every element of ``values`` (an iterable, not a Tensor)."""
        if not isinstance(values, Iterable) or isinstance(values, torch.Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            _entry_line(i, p, str(p.dtype) if isinstance(p, torch.Tensor) else "")
            for i, p in enumerate(self)
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict (string keys) whose Tensor values are registered parameters.

    Has the dict API: indexing, assignment, ``del``, ``in``, ``len``, iteration
    over keys, ``keys``/``values``/``items``, ``get``, ``pop``, ``popitem``,
    ``setdefault``, ``update``, ``clear``, ``copy``, ``fromkeys``, ``reversed``
    and ``|``/``|=``. As in PyTorch, ``update`` (and so the constructor) takes a
    plain ``dict``'s items in sorted key order, an ``OrderedDict``'s,
    ``ParameterDict``'s or sequence of pairs' in their own order.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, self._attr(key), _as_entry(value))
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> KeysView[str]:
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self[k] for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._keys:
            return self[key]
        return default

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, after storing ``default`` there if ``key`` is new."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)``."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ``ParameterDict`` holding the same entries, in the same order."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ``ParameterDict`` with ``keys``, each set to ``default`` (a plain Tensor
        becomes a separate ``Parameter`` per key)."""
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters: Any) -> None:
        """Set each ``(key, value)`` of a mapping or an iterable of pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs: Iterable[Any] = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items(), key=lambda kv: kv[0])
        else:
            pairs = list(parameters)
            for j, pair in enumerate(pairs):
                if not isinstance(pair, Iterable):
                    raise TypeError(
                        f"ParameterDict update sequence element #{j} should be Iterable; "
                        f"is{type(pair).__name__}"
                    )
                if len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(pair)}; "
                        "2 is required"
                    )
        for key, value in pairs:
            self[key] = value

    def __or__(self, other: Any) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: Any) -> Any:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: Any) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            _entry_line(k, p, p.type() if isinstance(p, torch.Tensor) else "")
            for k, p in self.items()
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
