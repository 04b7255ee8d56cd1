"""Pictures of programs: a :class:`~funcgrad.core.ir.Program` as Graphviz DOT text.

Each equation is a box (primitive, short params, output shapes/dtypes, the user's
line), edges follow variables from the equation (or input) that defines them to those
that read them, and an equation holding sub-programs (``jit_call``, ``cond``,
``while``, ``scan``, ``custom_vjp``, ``checkpoint``, ...) is drawn as a nested
``subgraph cluster_*`` box around its own equation node and one cluster per
sub-program. :func:`to_svg` renders it when the ``graphviz`` package and the ``dot``
binary are present (``pip install funcgrad[graphviz]``), else returns ``None``.
"""

from __future__ import annotations

import itertools
import os
import shutil
from typing import TYPE_CHECKING, Any

import numpy as np

try:  # optional: rendering only (the DOT text needs nothing)
    import graphviz as _graphviz
except ImportError:  # pragma: no cover - depends on the environment
    _graphviz = None

if TYPE_CHECKING:
    from funcgrad.core.ir import Program

__all__ = ["can_render", "to_dot", "to_svg"]

#: longest rendering of one parameter's value in a node's label
_PARAM_CHARS = 32
#: most parameters shown per node
_MAX_PARAMS = 4


def _is_program(v: Any) -> bool:
    return hasattr(v, "eqns") and hasattr(v, "invars") and hasattr(v, "outvars")


def _is_literal(a: Any) -> bool:
    return hasattr(a, "val")


def _quote(text: str) -> str:
    """A DOT double-quoted string (newlines become centred line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(v: Any) -> str:
    if isinstance(v, np.dtype):
        s = v.name
    elif isinstance(v, np.ndarray):
        s = f"array{list(v.shape)}"
    elif callable(v) and not isinstance(v, type):
        s = getattr(v, "__name__", type(v).__name__)
    else:
        s = str(v)
    return s if len(s) <= _PARAM_CHARS else s[: _PARAM_CHARS - 1] + "…"


def _sub_programs(params: dict[str, Any]) -> list[tuple[str, Program]]:
    """``(name, program)`` for each sub-program among an equation's params."""
    out = []
    for k, v in sorted(params.items()):
        if _is_program(v):
            out.append((k, v))
        elif isinstance(v, (tuple, list)) and v and all(_is_program(x) for x in v):
            out.extend((f"{k}[{i}]", x) for i, x in enumerate(v))
    return out


def _plain_params(params: dict[str, Any]) -> list[str]:
    items = []
    for k, v in sorted(params.items()):
        if _is_program(v) or (isinstance(v, (tuple, list)) and v and _is_program(v[0])):
            continue
        if v is None or (isinstance(v, (tuple, list)) and not v):
            continue
        items.append(f"{k}={_short(v)}")
    if len(items) > _MAX_PARAMS:
        items = [*items[:_MAX_PARAMS], f"(+{len(items) - _MAX_PARAMS} more)"]
    return items


class _Writer:
    """Builds the DOT lines; node ids are unique across nested programs."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids = itertools.count()
        self.clusters = itertools.count()

    def node_id(self, kind: str) -> str:
        return f"{kind}{next(self.ids)}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def program(self, prog: Program, title: str, depth: int) -> None:
        """``prog`` as a cluster: its inputs, constants, equations and outputs."""
        self.emit(depth, f"subgraph cluster_{next(self.clusters)} {{")
        self.emit(depth + 1, f"label={_quote(title)};")
        self.emit(depth + 1, 'style="rounded"; color="gray40";')
        where: dict[Any, str] = {}  # variable -> the node that defines it
        for kind, vs in (("const", prog.constvars), ("in", prog.invars)):
            for i, v in enumerate(vs):
                nid = self.node_id(kind)
                where[v] = nid
                shape = "note" if kind == "const" else "ellipse"
                label = f"{kind} {i}\n{v.aval}"
                self.emit(depth + 1, f"{nid} [shape={shape}, label={_quote(label)}];")
        for e in prog.eqns:
            nid = self.equation(e, depth + 1)
            for pos, a in enumerate(e.inputs):
                if not _is_literal(a) and a in where:
                    self.edge(depth + 1, where[a], nid, a.aval, pos, len(e.inputs))
            for v in e.outvars:
                where[v] = nid
        for i, a in enumerate(prog.outvars):
            nid = self.node_id("out")
            label = f"out {i}\n{a.aval}" if not _is_literal(a) else f"out {i}\n{a}"
            self.emit(depth + 1, f"{nid} [shape=ellipse, style=bold, label={_quote(label)}];")
            if not _is_literal(a) and a in where:
                self.edge(depth + 1, where[a], nid, a.aval, 0, 1)
        self.emit(depth, "}")

    def edge(self, depth: int, src: str, dst: str, aval: Any, pos: int, n: int) -> None:
        label = str(aval) if n == 1 else f"{pos}: {aval}"
        self.emit(depth, f"{src} -> {dst} [label={_quote(label)}];")

    def equation(self, e: Any, depth: int) -> str:
        """The equation's node (inside a cluster of its sub-programs, if it has any)."""
        nid = self.node_id("eqn")
        lines = [e.prim.name, *_plain_params(e.params)]
        lits = [f"{i}: {a}" for i, a in enumerate(e.inputs) if _is_literal(a)]
        if lits:
            lines.append("literal " + ", ".join(lits))
        lines.append("→ " + " ".join(str(v.aval) for v in e.outvars))
        if e.source is not None:
            lines.append(f"{os.path.basename(e.source[0])}:{e.source[1]}")
        subs = _sub_programs(e.params)
        inner = depth
        if subs:
            self.emit(depth, f"subgraph cluster_{next(self.clusters)} {{")
            self.emit(depth + 1, f"label={_quote(e.prim.name)};")
            self.emit(depth + 1, 'style="dashed"; color="steelblue";')
            inner = depth + 1
        style = ', style="filled", fillcolor="lightsteelblue1"' if subs else ""
        self.emit(inner, f"{nid} [shape=box, label={_quote(chr(10).join(lines))}{style}];")
        for name, sub in subs:
            self.program(sub, name, inner)
        if subs:
            self.emit(depth, "}")
        return nid


def to_dot(prog: Program, name: str = "program") -> str:
    """``prog`` as Graphviz DOT text (a ``digraph``; sub-programs in nested clusters)."""
    w = _Writer()
    w.emit(0, f"digraph {_quote(name)} {{")
    w.emit(1, "rankdir=TB;")
    w.emit(1, 'node [fontname="monospace", fontsize=10];')
    w.emit(1, 'edge [fontname="monospace", fontsize=8];')
    w.program(prog, name, 1)
    w.emit(0, "}")
    return "\n".join(w.lines) + "\n"


def can_render() -> bool:
    """Whether :func:`to_svg` can render: the ``graphviz`` package and ``dot`` found."""
    return _graphviz is not None and shutil.which("dot") is not None


def to_svg(prog: Program, name: str = "program") -> str | None:
    """``prog`` rendered to SVG by Graphviz's ``dot``, or ``None`` without Graphviz."""
    if not can_render():
        return None
    return _graphviz.Source(to_dot(prog, name)).pipe(format="svg").decode()
