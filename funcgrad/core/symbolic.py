"""Symbolic dimensions with guards: one trace of an op reused at other shapes.

An eager op met at a new shape is traced again (~150 us of Python for a small op),
which a sequence growing token by token pays at every op of every token. A
:class:`SymDim` stands for one input dimension during a trace: it carries the value
of the shape being traced, so the trace takes exactly the path the concrete trace
would, and it records what the trace learned about it:

* arithmetic (``+ - * // %``, ``min``/``max`` through comparisons) gives a new
  :class:`SymDim` whose expression says how its value follows from the inputs';
* every comparison, ``bool()`` and ``==`` records a *guard*: the comparison and its
  outcome, which must hold again for the trace to be reused;
* anything that reads the value directly (``int()``, ``operator.index`` — which C
  code such as NumPy and ``range`` calls —, ``hash``, ``str``) records a guard that
  pins the dimension to its value: the trace is then reused only at that value.

:class:`SymDim` is deliberately *not* an ``int`` subclass: C code reads an ``int``
subclass's value without calling any of its methods, so a value could escape into
the program without a guard. Code that insists on a real ``int`` (``isinstance``)
fails instead, and the caller falls back to a concrete trace.

A :class:`Guards` context collects the guards of one trace; :func:`holds` checks them
at other input dimensions, and :func:`substitute` computes a param (a nested
tuple/list/dict possibly holding :class:`SymDim`) at given input dimensions;
:func:`param_maker` generates one function computing many such params at once.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "Guards",
    "SymDim",
    "has_sym",
    "holds",
    "param_maker",
    "same_shape",
    "substitute",
]

#: expression node kinds: ``("in", k)`` the k-th symbolic input dimension,
#: ``(op, a, b)`` a binary operation of expressions or ints
_BINOPS: dict[str, Callable[[int, int], int]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
}
_CMPS: dict[str, Callable[[int, int], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


class Guards:
    """The guards recorded while tracing with symbolic dimensions: a list of
    ``(cmp, lhs expr, rhs expr, outcome)``."""

    __slots__ = ("closed", "items", "pinned", "pinned_exprs")

    def __init__(self) -> None:
        #: (comparison, lhs, rhs, outcome) -> None: an ordered set (a trace repeats them)
        self.items: dict[tuple[str, Any, Any, bool], None] = {}
        #: how many guards pin a dimension to its value (a read through ``int()``...)
        self.pinned = 0
        #: the expressions pinned so
        self.pinned_exprs: set = set()
        #: set when the trace is over: later uses (printing a program) decide nothing
        self.closed = False

    def add(self, cmp: str, a: Any, b: Any, outcome: bool, pin: bool = False) -> None:
        if not self.closed:
            self.items[(cmp, a, b, outcome)] = None
            if pin:
                self.pinned += 1
                self.pinned_exprs.add(a)


def _as_int(x: Any) -> int | None:
    """A Python or NumPy integer (not a bool) as an ``int``, else ``None``."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    return None


def _expr(x: Any) -> Any:
    return x.expr if type(x) is SymDim else x


def _value(x: Any) -> Any:
    return x.value if type(x) is SymDim else x


def evaluate(expr: Any, dims: tuple[int, ...]) -> int:
    """The value of ``expr`` at input dimensions ``dims``."""
    if type(expr) is not tuple:
        return expr
    if expr[0] == "in":
        return dims[expr[1]]
    return _BINOPS[expr[0]](evaluate(expr[1], dims), evaluate(expr[2], dims))


def holds(guards: Guards, dims: tuple[int, ...]) -> bool:
    """Whether every guard of a trace has the same outcome at input dimensions ``dims``."""
    for cmp, a, b, outcome in guards.items:
        if _CMPS[cmp](evaluate(a, dims), evaluate(b, dims)) is not outcome:
            return False
    return True


class SymDim:
    """A dimension traced symbolically: its value at the traced shape, its expression
    in the input dimensions, and the :class:`Guards` its uses record."""

    __slots__ = ("expr", "guards", "value")

    def __init__(self, value: int, expr: Any, guards: Guards) -> None:
        self.value = value
        self.expr = expr
        self.guards = guards

    # -- reading the value pins it -------------------------------------------------
    def _pin(self) -> int:
        self.guards.add("eq", self.expr, self.value, True, pin=True)
        return self.value

    def __index__(self) -> int:
        return self._pin()

    __int__ = __index__

    def __hash__(self) -> int:
        return hash(self._pin())

    def __str__(self) -> str:
        return str(self._pin())

    def __format__(self, spec: str) -> str:
        return format(self._pin(), spec)

    def __repr__(self) -> str:
        return f"SymDim({self.value}, {self.expr!r})"

    def __float__(self) -> float:
        return float(self._pin())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self._pin(), dtype=dtype)

    def __truediv__(self, o: Any) -> Any:
        return self._pin() / o

    def __rtruediv__(self, o: Any) -> Any:
        return o / self._pin()

    # -- comparisons record their outcome ------------------------------------------
    def _cmp(self, other: Any, cmp: str) -> Any:
        if type(other) is not SymDim and type(other) is not int:
            other = _as_int(other)
            if other is None:
                return NotImplemented
        outcome = _CMPS[cmp](self.value, _value(other))
        self.guards.add(cmp, self.expr, _expr(other), outcome)
        return outcome

    def __eq__(self, other: object) -> Any:
        if other is self:
            return True
        return self._cmp(other, "eq")

    def __ne__(self, other: object) -> Any:
        if other is self:
            return False
        return self._cmp(other, "ne")

    def __lt__(self, other: Any) -> Any:
        return self._cmp(other, "lt")

    def __le__(self, other: Any) -> Any:
        return self._cmp(other, "le")

    def __gt__(self, other: Any) -> Any:
        return self._cmp(other, "gt")

    def __ge__(self, other: Any) -> Any:
        return self._cmp(other, "ge")

    def __bool__(self) -> bool:
        outcome = self.value != 0
        self.guards.add("ne", self.expr, 0, outcome)
        return outcome

    # -- arithmetic gives expressions ----------------------------------------------
    def _bin(self, other: Any, op: str, reflected: bool = False) -> Any:
        if type(other) is not SymDim and type(other) is not int:
            other = _as_int(other)
            if other is None:
                return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        if type(b) is int and (
            (b == 0 and op in ("add", "sub")) or (b == 1 and op in ("mul", "floordiv"))
        ):
            return a  # (x + 0, x * 1...: the expression stays short)
        if type(a) is int and ((a == 0 and op == "add") or (a == 1 and op == "mul")):
            return b
        value = _BINOPS[op](_value(a), _value(b))
        return SymDim(value, (op, _expr(a), _expr(b)), self.guards)

    def __add__(self, o: Any) -> Any:
        return self._bin(o, "add")

    def __radd__(self, o: Any) -> Any:
        return self._bin(o, "add", True)

    def __sub__(self, o: Any) -> Any:
        return self._bin(o, "sub")

    def __rsub__(self, o: Any) -> Any:
        return self._bin(o, "sub", True)

    def __mul__(self, o: Any) -> Any:
        return self._bin(o, "mul")

    def __rmul__(self, o: Any) -> Any:
        return self._bin(o, "mul", True)

    def __floordiv__(self, o: Any) -> Any:
        return self._bin(o, "floordiv")

    def __rfloordiv__(self, o: Any) -> Any:
        return self._bin(o, "floordiv", True)

    def __mod__(self, o: Any) -> Any:
        return self._bin(o, "mod")

    def __rmod__(self, o: Any) -> Any:
        return self._bin(o, "mod", True)

    def __neg__(self) -> Any:
        return SymDim(-self.value, ("sub", 0, self.expr), self.guards)

    def __pos__(self) -> Any:
        return self


def same_shape(a: tuple, b: tuple) -> bool:
    """``a == b`` for two shapes, comparing no dimension where their ranks differ: Python's
    tuple equality compares items before lengths, so ``(t, 64) == (1, t, 64)`` would
    record the guard ``t == 1`` (false), and the template would not apply, or be
    validated, at a length of 1 where nothing in the op depends on it."""
    return len(a) == len(b) and a == b


def has_sym(x: Any) -> bool:
    """Whether a param (nested tuples, lists, dicts) holds a :class:`SymDim`."""
    t = type(x)
    if t is SymDim:
        return True
    if t is tuple or t is list:
        return any(has_sym(y) for y in x)
    if t is dict:
        return any(has_sym(y) for y in x.values())
    return False


def substitute(x: Any, dims: tuple[int, ...]) -> Any:
    """``x`` with each :class:`SymDim` replaced by its value at input dimensions ``dims``."""
    t = type(x)
    if t is SymDim:
        return evaluate(x.expr, dims)
    if t is tuple:
        return tuple(substitute(y, dims) for y in x)
    if t is list:
        return [substitute(y, dims) for y in x]
    if t is dict:
        return {k: substitute(y, dims) for k, y in x.items()}
    return x


_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


def _expr_code(expr: Any) -> str:
    if type(expr) is not tuple:
        return repr(int(expr))
    if expr[0] == "in":
        return f"d[{expr[1]}]"
    return f"({_expr_code(expr[1])} {_OPS[expr[0]]} {_expr_code(expr[2])})"


def param_maker(params: dict[Any, Any]) -> Callable[[tuple[int, ...]], dict[Any, Any]]:
    """A function of input dimensions ``d`` returning ``params`` (keys kept, values
    nested tuples/lists/dicts possibly holding :class:`SymDim`) computed at ``d``, as
    :func:`substitute` would, in one generated expression: parts without a
    :class:`SymDim` are shared as they are, each :class:`SymDim` is its arithmetic."""
    ns: dict[str, Any] = {}

    def const(x: Any) -> str:
        name = f"c{len(ns)}"
        ns[name] = x
        return name

    def code(x: Any) -> str:
        t = type(x)
        if t is SymDim:
            return _expr_code(x.expr)
        if not has_sym(x):
            return const(x)
        if t is tuple:
            return "(" + "".join(f"{code(y)}, " for y in x) + ")"
        if t is list:
            return "[" + ", ".join(code(y) for y in x) + "]"
        return "{" + ", ".join(f"{const(k)}: {code(y)}" for k, y in x.items()) + "}"

    body = ", ".join(f"{const(k)}: {code(v)}" for k, v in params.items())
    source = f"def make(d):\n    return {{{body}}}\n"
    compiled = _MAKER_CODE.get(source)
    if compiled is None:  # (ops of one structure at other constants share the source)
        if len(_MAKER_CODE) >= 4096:
            _MAKER_CODE.clear()
        compiled = _MAKER_CODE[source] = compile(source, "<template params>", "exec")
    exec(compiled, ns)  # (source generated above)
    return ns["make"]


#: generated :func:`param_maker` source -> its compiled code
_MAKER_CODE: dict[str, Any] = {}
