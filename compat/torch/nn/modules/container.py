"""Containers: ``Sequential``, ``ModuleList`` and ``ModuleDict`` (``torch/nn/modules/container.py``)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

from compat.torch.nn.modules.module import Module

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


def _index(idx: int, size: int, what: str) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Sequential(Module):
    """Modules applied in order: ``Sequential(a, b)(x) == b(a(x))``.

    Built from modules (named ``"0"``, ``"1"``, ...) or from one ``OrderedDict``
    of named modules; supports indexing, slicing (a new ``Sequential``),
    ``len``, iteration and ``append``.

    Example:
        >>> from compat.torch import nn
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> len(model), type(model[1]).__name__
        (3, 'ReLU')
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        i = _index(idx, len(self), "Sequential")
        return next(islice(self._modules.values(), i, None))

    def __setitem__(self, idx: int, module: Module) -> None:
        i = _index(idx, len(self), "Sequential")
        key = list(self._modules)[i]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "")]]
        for key in targets:
            delattr(self, key)
        # Keep the numbering dense, as PyTorch does.
        items = list(self._modules.items())
        self._modules.clear()
        for i, (_, module) in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects "
                f"of Sequential class, but {type(other)} is given."
            )
        return self.extend(list(other))

    def _factor(self, other: Any) -> int:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return other

    def __mul__(self, other: int) -> Sequential:
        """A new ``Sequential`` of this one's modules repeated ``other`` times (the same
        module objects, as PyTorch's)."""
        return Sequential(*(list(self) * self._factor(other)))

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        return self.extend(list(self) * (self._factor(other) - 1))

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module (or ``Sequential`` of modules) at ``key``."""
        value = self[key]
        del self[key]
        return value

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:  # -1 is before the last module, as in PyTorch (list.insert)
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for module in sequential:
            self.append(module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered so their parameters are found."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "")]]
        for key in targets:
            delattr(self, key)
        modules = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """A new ``ModuleList`` of this list's modules then ``other``'s."""
        return ModuleList([*self, *other])

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module at ``key``."""
        value = self[key]
        del self[key]
        return value

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)


class ModuleDict(Module):
    """A dict of named submodules, registered so their parameters are found."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        mapping = isinstance(modules, (Mapping, ModuleDict))  # a ModuleDict: by key too
        items = modules.items() if mapping else modules
        for key, module in items:
            self[key] = module
