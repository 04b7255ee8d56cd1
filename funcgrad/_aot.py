"""Ahead-of-time objects of ``fg.jit``: ``Jitted.lower(*args)`` gives a :class:`Lowered`,
whose ``compile()`` gives a :class:`Compiled`, as JAX's ``jax.stages`` do.

They wrap JAX's own stages (funcgrad compiles through ``jax.jit``), so the numbers
``cost_analysis()`` and ``memory_analysis()`` report are XLA's. ``str(lowered)`` is
the lowered text, as ``Jitted.lower`` returned before these objects existed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: how a :class:`Compiled` is called: ``adapt(jax_compiled, args, kwargs) -> outputs``
Adapter = Callable[[Any, tuple, dict], Any]


def _direct(compiled: Any, args: tuple, kwargs: dict) -> Any:
    return compiled(*args, **kwargs)


class Lowered(str):
    """A jitted function lowered for one signature, not yet compiled. It is the lowered
    text (StableHLO) as a ``str`` (what ``Jitted.lower`` returned before), with JAX's
    ``Lowered`` methods: :meth:`as_text`, :meth:`compiler_ir`, :meth:`compile`,
    :meth:`cost_analysis`."""

    _lowered: Any
    _adapt: Adapter
    name: str

    def __new__(cls, jax_lowered: Any, name: str, adapt: Adapter = _direct) -> Lowered:
        self = super().__new__(cls, jax_lowered.as_text())
        self._lowered, self._adapt, self.name = jax_lowered, adapt, name
        return self

    def as_text(self, dialect: str | None = None) -> str:
        """The lowered module's text (StableHLO; ``dialect="hlo"`` for HLO)."""
        return self._lowered.as_text(dialect) if dialect else str.__str__(self)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The lowered module as XLA's compiler takes it: an MLIR module (StableHLO, the
        default) or, with ``dialect="hlo"``, an HLO module (``.as_hlo_text()``)."""
        return self._lowered.compiler_ir(dialect) if dialect else self._lowered.compiler_ir()

    def compile(self) -> Compiled:
        """Compile with XLA."""
        return Compiled(self._lowered.compile(), self.name, self._adapt)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate of the unoptimised module (``Compiled``'s is the final one)."""
        return _one_dict(self._lowered.cost_analysis())


def _one_dict(c: Any) -> dict[str, float]:
    if isinstance(c, list):  # older JAX: one dict per device
        c = c[0] if c else {}
    return dict(c or {})


class Compiled:
    """A jitted function compiled for one signature: callable with the dynamic
    arguments (static ones are fixed), with XLA's cost and memory analyses."""

    def __init__(self, jax_compiled: Any, name: str, adapt: Adapter = _direct) -> None:
        self._compiled = jax_compiled
        self._adapt = adapt
        self.name = name

    def as_text(self) -> str:
        """The optimised HLO XLA compiled."""
        return self._compiled.as_text()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost analysis: ``flops``, ``bytes accessed``, ``transcendentals``, ..."""
        return _one_dict(self._compiled.cost_analysis())

    def memory_analysis(self) -> Any:
        """XLA's memory analysis: ``argument_size_in_bytes``, ``output_size_in_bytes``,
        ``temp_size_in_bytes``, ``alias_size_in_bytes``, ``generated_code_size_in_bytes``."""
        return self._compiled.memory_analysis()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._adapt(self._compiled, args, kwargs)

    def __repr__(self) -> str:
        return f"<Compiled {self.name}>"
