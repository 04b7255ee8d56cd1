"""``funcgrad.debug.cost``: XLA's own cost and memory analysis of a compiled function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from funcgrad.jit import Jitted, jit

__all__ = ["Cost", "cost"]


@dataclass(frozen=True)
class Cost:
    """What XLA reports for one compiled program (``-1`` where it reports nothing)."""

    flops: float
    transcendentals: float
    bytes_accessed: float
    argument_bytes: int
    output_bytes: int
    temp_bytes: int
    alias_bytes: int
    generated_code_bytes: int
    #: the raw ``cost_analysis()`` dictionary
    analysis: dict

    @property
    def peak_bytes(self) -> int:
        """Arguments + outputs + temporaries - aliased (donated) bytes."""
        return self.argument_bytes + self.output_bytes + self.temp_bytes - self.alias_bytes

    def __str__(self) -> str:
        return (
            f"flops: {self.flops:g}\ntranscendentals: {self.transcendentals:g}\n"
            f"bytes accessed: {self.bytes_accessed:g}\n"
            f"memory: arguments {self.argument_bytes} B, outputs {self.output_bytes} B, "
            f"temporaries {self.temp_bytes} B, aliased {self.alias_bytes} B, "
            f"code {self.generated_code_bytes} B"
        )


def cost(fun: Callable, *args: Any, **kwargs: Any) -> Cost:
    """Compile ``fun`` (``jit`` it unless it already is) for these arguments and
    return XLA's analysis of the result: FLOPs, transcendentals, bytes accessed,
    and the sizes of arguments, outputs and temporaries."""
    j = fun if isinstance(fun, Jitted) else jit(fun)
    compiled = j.lower(*args, **kwargs).compile()
    ca = compiled.cost_analysis()
    ma = compiled.memory_analysis()

    def mem(name: str) -> int:
        return int(getattr(ma, name, -1)) if ma is not None else -1

    return Cost(
        flops=float(ca.get("flops", -1)),
        transcendentals=float(ca.get("transcendentals", 0)),
        bytes_accessed=float(ca.get("bytes accessed", -1)),
        argument_bytes=mem("argument_size_in_bytes"),
        output_bytes=mem("output_size_in_bytes"),
        temp_bytes=mem("temp_size_in_bytes"),
        alias_bytes=mem("alias_size_in_bytes"),
        generated_code_bytes=mem("generated_code_size_in_bytes"),
        analysis=ca,
    )
