"""``torch.ops.aten``: PyTorch's operator overloads, naming compat's ops.

Every row of the op table (:mod:`compat._core.optable`) gives an overload packet under
its name and aliases (``torch.ops.aten.sin``) and, for rows with an in-place form, one
under the in-place name (``sin_``). A packet's overloads (``.default``, or PyTorch's
overload names for the few ops that have no ``default``: ``mul.Tensor``,
``var_mean.correction``) call the row's function. They are what dispatch modes
(:mod:`compat._core.dispatch_mode`) are handed for each compat op, so a mode or a
selective-checkpoint policy can compare ``func == torch.ops.aten.sin.default``.

Calling an overload while a dispatch mode is entered goes through the mode, as calling
an overload in PyTorch goes through its dispatcher.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from compat._core import dispatch_mode as _dm
from compat._core import optable as _optable
from compat._core.tensor import Tensor

#: PyTorch's overload names for ops without a ``default`` overload (the first is the one
#: a call with a tensor second operand dispatches to; ``Scalar`` is taken for a number)
_OVERLOADS: dict[str, tuple[str, ...]] = {
    **{
        n: ("Tensor", "Scalar")
        for n in (
            "add",
            "sub",
            "mul",
            "div",
            "pow",
            "remainder",
            "fmod",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "rsub",
            "masked_fill",
            "where",
            "clamp",
            "clamp_min",
            "clamp_max",
            "index_fill",
            "fill",
        )
    },
    **{n: ("correction", "dim") for n in ("var", "std", "var_mean", "std_mean")},
    "slice": ("Tensor",),
    "split": ("Tensor",),
    "sum": ("dim_IntList", "default"),
    "mean": ("dim", "default"),
}


class OpOverload:
    """One overload of an aten op (``torch.ops.aten.sin.default``)."""

    def __init__(self, packet: OpOverloadPacket, overload: str, impl: Callable) -> None:
        self.overloadpacket = packet
        self._overloadname = overload
        self._impl = impl
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self.__name__
        self.namespace = "aten"

    def name(self) -> str:
        base = f"aten::{self.overloadpacket.__name__}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _dm.call_overload(self, args, kwargs, self._impl)

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"


class OpOverloadPacket:
    """All overloads of one aten op (``torch.ops.aten.sin``); calling it calls the op."""

    def __init__(self, name: str, impl: Callable, overloads: tuple[str, ...]) -> None:
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"
        self._impl = impl
        self._overload_names = overloads
        for o in overloads:
            setattr(self, o, OpOverload(self, o, impl))

    def overloads(self) -> list[str]:
        return list(self._overload_names)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        raise AttributeError(
            f"The underlying op of 'aten.{self.__name__}' has no overload name '{key}'"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self._overload_names[0])(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"


def _inplace_method(name: str) -> Callable:
    def call(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _packets() -> dict[str, OpOverloadPacket]:
    """One packet per op-table row name and alias, and per in-place form."""
    out: dict[str, OpOverloadPacket] = {}
    for d in _optable.REGISTRY.values():
        if d.module != "torch":
            continue
        names = (d.name, *d.aliases)
        for n in names:
            impl = d.fn if d.function else _inplace_method(n)
            out[n] = OpOverloadPacket(n, impl, _OVERLOADS.get(n, ("default",)))
            if d.inplace is not False:
                ip = n + "_"
                out[ip] = OpOverloadPacket(ip, _inplace_method(ip), _OVERLOADS.get(n, ("default",)))
    return out


#: aten ops that are no op-table row (``torch.ops.aten`` only), added by the modules
#: implementing them (:func:`register`)
_EXTRA: dict[str, OpOverloadPacket] = {}


def register(name: str, impl: Callable, overloads: tuple[str, ...] = ("default",)) -> None:
    """Add an aten op that has no op-table row (PyTorch exposes it as an overload only)."""
    _EXTRA[name] = OpOverloadPacket(name, impl, overloads)
    if ATEN._ops is not None:
        ATEN._ops[name] = _EXTRA[name]


class _OpNamespace:
    """``torch.ops.aten``: packets by name, generated from the op table on first use."""

    def __init__(self) -> None:
        self._ops: dict[str, OpOverloadPacket] | None = None

    def _table(self) -> dict[str, OpOverloadPacket]:
        if self._ops is None:
            self._ops = {**_packets(), **_EXTRA}
        return self._ops

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        op = self._table().get(name)
        if op is None:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}'")
        return op

    def __dir__(self) -> list[str]:
        return sorted(self._table())


ATEN = _OpNamespace()

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _op_name(node: str) -> str:
    """``SinBackward0`` -> ``sin``, ``VarMeanBackward0`` -> ``var_mean``."""
    base = re.sub(r"Backward\d*$", "", node.rsplit("::", 1)[-1])
    return _CAMEL.sub("_", base).lower()


_BY_NODE: dict[tuple[str, bool], OpOverloadPacket | None] = {}


def overload_for(node: str, args: Any, inplace: bool = False) -> OpOverload | None:
    """The overload a compat op recorded as ``node`` dispatches to (``None``: an op the
    namespace does not name)."""
    key = (node, inplace)
    packet = _BY_NODE.get(key, False)
    if packet is False:
        name = _op_name(node) + ("_" if inplace else "")
        packet = _BY_NODE[key] = ATEN._table().get(name)
    if packet is None:
        return None
    names = packet._overload_names
    if names[0] == "Tensor" and len(args) > 1 and not isinstance(args[1], Tensor):
        return getattr(packet, "Scalar", getattr(packet, names[0]))
    return getattr(packet, names[0])


_dm.OVERLOAD_FOR = overload_for
