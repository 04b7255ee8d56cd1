"""funcgrad's IR: avals, variables, literals, equations and programs.

A :class:`Program` is a closed, first-order listing of primitive applications,
like a jaxpr. Every transform reads a program and writes a new one.
"""

from __future__ import annotations

import html
import itertools
import math
import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from jax.core import Tracer as _JaxTracer
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from funcgrad.core import dot, dtypes
from funcgrad.core.symbolic import SymDim

if TYPE_CHECKING:
    from funcgrad.core.primitive import Primitive

_SHORT = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
}


@dataclass(frozen=True, init=False)
class Aval:
    """Abstract value: a shape, a dtype and whether the dtype is weak (Python scalar).

    ``sharding`` is the value's split over a mesh's explicit axes, as JAX's types hold it
    (a ``NamedSharding`` over the ``AbstractMesh``, one spec entry per dimension naming
    explicit axes only), or ``None``: untyped, which is every value unless a mesh with
    explicit axes is in use (``funcgrad.core.sharding_types``)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False
    sharding: Any = field(default=None, repr=False)

    def __init__(
        self, shape: Any, dtype: Any, weak_type: bool = False, sharding: Any = None
    ) -> None:
        # (one dict update: a frozen dataclass's own __init__ sets each field through
        # object.__setattr__, and avals are made for every traced equation)
        self.__dict__.update(
            shape=shape if type(shape) is tuple else tuple(shape),
            dtype=dtype if isinstance(dtype, np.dtype) else np.dtype(dtype),
            weak_type=weak_type,
            sharding=sharding,
        )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, **kw: Any) -> Aval:
        """A copy with fields replaced; the sharding is kept unless the shape changes."""
        shape = kw.get("shape", self.shape)
        keep = self.sharding if shape == self.shape else None
        return Aval(
            shape,
            kw.get("dtype", self.dtype),
            kw.get("weak_type", self.weak_type),
            kw.get("sharding", keep),
        )

    def strip_weak(self) -> Aval:
        return self if not self.weak_type else Aval(self.shape, self.dtype, False, self.sharding)

    def dims_str(self) -> str:
        """The shape, each split dimension followed by ``@`` and its mesh axes (JAX's
        spelling: ``8@X``, ``8@(X,Y)``)."""
        if self.sharding is None:
            return ",".join(map(str, self.shape))
        return ",".join(
            str(d) + _at(e) for d, e in zip(self.shape, self.sharding.spec.partitions, strict=True)
        )

    def str_short(self) -> str:
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{self.dims_str()}]{partial_sum_suffix(self)}"

    def __str__(self) -> str:
        return self.str_short()


class ShapedArray(Aval):
    """An aval as ``fg.typeof`` shows it, in JAX's words: ``float32[8@X,4@Y]``, and its
    ``sharding`` always a ``NamedSharding`` (over the current abstract mesh, nothing split,
    for a value that is not split over explicit axes)."""

    def __init__(
        self, shape: Any, dtype: Any, weak_type: bool = False, sharding: Any = None
    ) -> None:
        # (a sharding given here is read as JAX's type reads it: its explicit axes only,
        # one spec entry per dimension)
        if type(sharding) is NamedSharding:
            ndim = len(tuple(shape))
            sharding = NamedSharding(
                getattr(sharding.mesh, "abstract_mesh", sharding.mesh),
                sharding.spec.update(partitions=tuple(_explicit_entries(sharding, ndim))),
            )
        super().__init__(shape, dtype, weak_type, sharding)

    def update(self, **kw: Any) -> ShapedArray:
        a = super().update(**kw)
        return ShapedArray(a.shape, a.dtype, a.weak_type, a.sharding)

    def str_short(self) -> str:
        return f"{self.dtype.name}[{self.dims_str()}]{partial_sum_suffix(self)}"

    def __str__(self) -> str:
        return self.str_short()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self}{weak})"


def partial_sum_suffix(aval: Aval) -> str:
    """JAX's suffix for the axes a value is unreduced (a partial sum) or reduced (a
    replicated value whose cotangent is a partial sum) over: ``{U:x}``, ``{U:(x,y), R:z}``."""
    s = aval.sharding
    if s is None or not (s.spec.unreduced or s.spec.reduced):
        return ""
    parts = []
    for tag, axes in (("U", s.spec.unreduced), ("R", s.spec.reduced)):
        names = [a for a in s.mesh.axis_names if a in axes]
        if names:
            parts.append(f"{tag}:{names[0] if len(names) == 1 else '(' + ','.join(names) + ')'}")
    return "{" + ", ".join(parts) + "}"


def _at(entry: Any) -> str:
    if entry is None:
        return ""
    if isinstance(entry, tuple):
        return "@(" + ",".join(entry) + ")"
    return f"@{entry}"


#: whether values are typed with their shardings: off until a mesh with explicit axes
#: is in use (``sharding_types.activate``), so ``aval_of`` never reads an array's
#: sharding before then
SHARDING_TYPES = [False]


def typed_sharding(s: Any, ndim: int) -> Any:
    """The sharding an aval holds for an array placed by ``s``: a ``NamedSharding`` over
    ``s``'s abstract mesh naming its explicit axes only, ``ndim`` entries, with its
    unreduced and reduced axes; ``None`` when no dimension is split over an explicit axis
    and none is unreduced or reduced (or ``s`` names no mesh)."""
    if type(s) is not NamedSharding:
        return None
    mesh = s.mesh
    explicit = {
        a for a, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t == AxisType.Explicit
    }
    if not explicit:
        return None
    out = _explicit_entries(s, ndim)
    u, r = s.spec.unreduced & explicit, s.spec.reduced & explicit
    if all(e is None for e in out) and not u and not r:
        return None
    spec = PartitionSpec(*out, unreduced=u, reduced=r)
    return NamedSharding(getattr(mesh, "abstract_mesh", mesh), spec)


def _explicit_entries(s: NamedSharding, ndim: int) -> list:
    """``s``'s spec padded to ``ndim`` entries, each naming the explicit axes only."""
    mesh = s.mesh
    explicit = {
        a for a, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t == AxisType.Explicit
    }
    parts = s.spec.partitions
    spec = tuple(parts) + (None,) * (ndim - len(parts))
    out = []
    for e in spec:
        names = e if isinstance(e, tuple) else (e,) if isinstance(e, str) else ()
        kept = tuple(a for a in names if a in explicit)
        out.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    return out


#: avals of concrete values met before, by (type, shape, dtype, weak type, x64 mode):
#: a trace asks for the aval of the same Python scalars and closed-over arrays many
#: times (every operand of every ``funcgrad.numpy`` call), and building one costs
#: several microseconds of ``canonicalize`` and a frozen dataclass
_AVALS: dict[tuple, tuple[Any, Aval]] = {}
_MAX_AVALS = 4096
_PY_SCALARS = frozenset({bool, int, float, complex})


#: avals of NumPy arrays whose dtype no x64 mode changes, by (shape, dtype identity): the
#: host tier's values, whose aval every jitted call asks for per argument (an optimizer
#: step's parameters, gradients and buffers) without reading the x64 mode
_ND_AVALS: dict[tuple, tuple[Any, Aval]] = {}


def aval_of(x: Any) -> Aval:
    """The aval of a concrete value (Python scalar, NumPy or JAX array)."""
    t = type(x)
    if t is np.ndarray:
        dtype = x.dtype
        hit = _ND_AVALS.get((x.shape, id(dtype)))
        if hit is not None and hit[0] is dtype:
            return hit[1]
        a = _aval_of(x)
        if dtypes.x64_invariant(dtype):
            if len(_ND_AVALS) >= _MAX_AVALS:
                _ND_AVALS.clear()
            _ND_AVALS[(x.shape, id(dtype))] = (dtype, a)
        return a
    if t in _PY_SCALARS:
        dtype: Any = None
        key: tuple = (t, dtypes.x64_enabled())
    else:
        shape = getattr(x, "shape", None)
        dtype = getattr(x, "dtype", None)
        if type(shape) is not tuple or dtype is None or not all(type(d) is int for d in shape):
            return _aval_of(x)  # (a symbolic dimension's comparisons are guards: no key)
        if SHARDING_TYPES[0] and t is not np.ndarray:
            placed = x.aval.sharding if isinstance(x, _JaxTracer) else getattr(x, "sharding", None)
            typed = typed_sharding(placed, len(shape))
            if typed is not None:
                return _aval_of(x).update(sharding=typed)
        # (the dtype by identity, checked below: hashing a NumPy dtype costs more)
        key = (t, shape, id(dtype), getattr(x, "weak_type", False), dtypes.x64_enabled())
    hit = _AVALS.get(key)
    if hit is not None and hit[0] is dtype:
        return hit[1]
    a = _aval_of(x)
    if len(_AVALS) >= _MAX_AVALS:
        _AVALS.clear()
    _AVALS[key] = (dtype, a)
    return a


def _aval_of(x: Any) -> Aval:
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return Aval((), dtypes.python_scalar_dtype(x), not isinstance(x, bool))
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(
            f"Value {x!r} of type {type(x).__name__} is not a valid funcgrad array type"
        )
    return Aval(tuple(shape), dtypes.canonicalize(dtype), bool(getattr(x, "weak_type", False)))


_ids = itertools.count()


class Var:
    """A variable of the IR; compared by identity."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: Aval) -> None:
        self.aval = aval
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"Var({self.id}:{self.aval})"


class Literal:
    """A constant scalar written inline in the IR."""

    __slots__ = ("aval", "val")

    def __init__(self, val: Any, aval: Aval) -> None:
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"

    def __str__(self) -> str:
        v = self.val
        if isinstance(v, np.ndarray):
            v = v.item()
        return f"{v}:{self.aval}" if not self.aval.weak_type else repr(v)


Atom = Var | Literal


def literal_key(a: Literal) -> tuple:
    """A hashable key of a literal, by its bits: ``0.0`` and ``-0.0`` differ, a NaN
    equals itself (``repr`` of a NumPy scalar is ~100x slower than this)."""
    v = a.val
    if isinstance(v, (np.ndarray, np.generic)):
        return ("lit", a.aval, v.tobytes())
    return ("lit", a.aval, type(v), repr(v))


def _aval_key(a: Aval) -> Any:
    """An aval's part of a program key: a plain tuple for an :class:`Aval` (hashed and
    compared in C, where the dataclass's ``__hash__``/``__eq__`` are Python calls, one per
    variable of every new program), the aval itself for a subclass (which a dataclass's
    equality tells from an ``Aval``)."""
    if type(a) is Aval:
        return (a.shape, a.dtype, a.weak_type, a.sharding)
    return a


@dataclass(frozen=True, eq=False, init=False)
class Eqn:
    """``outvars = prim[params](*inputs)``; ``source`` is the user's (file, line)."""

    prim: Primitive
    inputs: tuple[Atom, ...]
    outvars: tuple[Var, ...]
    params: dict[str, Any]
    source: tuple[str, int] | None = None

    def __init__(
        self,
        prim: Primitive,
        inputs: tuple[Atom, ...],
        outvars: tuple[Var, ...],
        params: dict[str, Any],
        source: tuple[str, int] | None = None,
    ) -> None:
        # (one dict update, as ``Aval``'s: a frozen dataclass's own __init__ sets each
        # field through object.__setattr__, ~1 us an equation, and every traced equation
        # and every pass that rewrites one makes an Eqn)
        self.__dict__.update(
            prim=prim, inputs=inputs, outvars=outvars, params=params, source=source
        )


#: param types that are their own key (the common case, checked first: every traced
#: equation's params are keyed when its program is looked up in the compile cache)
_PLAIN = frozenset({int, str, bool, float, type(None)})
_FIRST = operator.itemgetter(0)


def _hashable_param(v: Any) -> Any:
    # (loops, not ``all()`` over generators: every new program keys each equation's
    # params, about half of :meth:`Program.key`'s time)
    t = type(v)
    if t in _PLAIN:
        return v
    if t is dict:  # an equation's params: mostly plain values and tuples of them
        items = []
        for k, x in v.items():
            if type(x) not in _PLAIN:
                x = _hashable_param(x)
            items.append((k, x))
        if len(items) > 1:
            items.sort(key=_FIRST)  # (param names are distinct strings)
        return tuple(items)
    if t is tuple or t is list:
        for x in v:
            if type(x) not in _PLAIN:
                return tuple([_hashable_param(x) for x in v])
        return v if t is tuple else tuple(v)
    if isinstance(v, np.dtype):
        return v
    if t is SymDim:  # keyed by its expression: never by the value it was traced at
        return ("sym", v.expr)
    if isinstance(v, Program):
        return ("program", v.hashed_key())
    if isinstance(v, (list, tuple)):
        return tuple(_hashable_param(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable_param(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("nd", v.shape, v.dtype.str, v.tobytes())
    try:
        hash(v)
    except TypeError:
        return _ByIdentity(v)
    return v


class _ByIdentity:
    """The key of an unhashable param: equal only for the same object, which it holds,
    so the object's id cannot be reused by another while a cache keeps the key."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return type(other) is _ByIdentity and other.obj is self.obj


class StructKey:
    """A structural key (a deep tuple) whose hash is computed once.

    Program keys are nested tuples as large as the program, and Python does not
    cache a tuple's hash; caches looking a program up on every call use this
    instead (equality still compares the whole structure, but only on a hash
    match with a different key object).
    """

    __slots__ = ("_hash", "parts")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(other) is StructKey and self._hash == other._hash and self.parts == other.parts

    def __repr__(self) -> str:
        return f"StructKey({self._hash:#x})"


@dataclass(frozen=True, eq=False)
class Program:
    """A closed program: ``{ lambda constvars ; invars . let eqns in outvars }``.

    ``consts`` holds the values bound to ``constvars`` (arrays, or tracers of an
    enclosing trace); they are not part of the program's structure.
    """

    invars: tuple[Var, ...]
    constvars: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    outvars: tuple[Atom, ...]
    consts: tuple[Any, ...] = ()
    _key: list = field(default_factory=list, repr=False, compare=False)

    @property
    def jaxpr(self) -> Program:
        """The program itself: what JAX's closed jaxpr (``make_jaxpr(f)(x)``) gives
        as its open one (``.jaxpr.eqns``, ``.jaxpr.invars``); a Program is both."""
        return self

    @property
    def in_avals(self) -> list[Aval]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[Aval]:
        return [v.aval for v in self.outvars]

    def key(self) -> tuple:
        """A hashable key equal for structurally identical programs (consts excluded)."""
        if self._key:
            return self._key[0]
        names: dict[Var, int] = {}
        for v in (*self.constvars, *self.invars):
            names[v] = len(names)
        eqn_keys = []
        for e in self.eqns:  # (this loop runs for every new program: no helper calls)
            ins = tuple([literal_key(a) if type(a) is Literal else names[a] for a in e.inputs])
            outs = e.outvars
            for v in outs:
                names[v] = len(names)
            if len(outs) == 1:
                a = outs[0].aval
                avals = ((a.shape, a.dtype, a.weak_type, a.sharding),) if type(a) is Aval else (a,)
            else:
                avals = tuple([_aval_key(v.aval) for v in outs])
            eqn_keys.append((e.prim.name, ins, avals, _hashable_param(e.params)))
        k = (
            tuple([_aval_key(v.aval) for v in self.constvars]),
            tuple([_aval_key(v.aval) for v in self.invars]),
            tuple(eqn_keys),
            tuple([literal_key(a) if type(a) is Literal else names[a] for a in self.outvars]),
        )
        self._key.append(k)
        return k

    def hashed_key(self) -> StructKey:
        """:meth:`key` with its hash computed once: a cheap dictionary key."""
        memo = self._key
        if len(memo) < 2:
            memo.append(StructKey(self.key()))
        return memo[1]

    def replace(self, **kw: Any) -> Program:
        d = dict(
            invars=self.invars,
            constvars=self.constvars,
            eqns=self.eqns,
            outvars=self.outvars,
            consts=self.consts,
        )
        d.update(kw)
        return Program(**d)

    def check(self) -> None:
        """Validate the program: single assignment, defined before use, avals agree."""
        defined: set[Var] = set()

        def define(v: Var) -> None:
            if not isinstance(v, Var):
                raise ValueError(f"binder {v!r} is not a Var")
            if v in defined:
                raise ValueError(f"variable {v} defined twice")
            defined.add(v)

        def use(a: Atom, where: str) -> None:
            if isinstance(a, Var) and a not in defined:
                raise ValueError(f"variable {a} used before definition in {where}")

        if len(self.consts) not in (0, len(self.constvars)):
            raise ValueError("consts and constvars differ in length")
        for v in (*self.constvars, *self.invars):
            define(v)
        for e in self.eqns:
            for a in e.inputs:
                use(a, e.prim.name)
            expected = e.prim.abstract_eval_avals([a.aval for a in e.inputs], e.params)
            got = [v.aval for v in e.outvars]
            if [a.strip_weak() for a in expected] != [a.strip_weak() for a in got]:
                raise ValueError(
                    f"{e.prim.name}: output avals {[str(a) for a in got]} disagree with "
                    f"abstract evaluation {[str(a) for a in expected]}"
                )
            for v in e.outvars:
                define(v)
            for p in e.params.values():
                for sub in p if isinstance(p, (tuple, list)) else (p,):
                    if isinstance(sub, Program):
                        sub.check()
        for a in self.outvars:
            use(a, "outputs")

    def __str__(self) -> str:
        return pp_program(self)

    def to_dot(self, name: str = "program") -> str:
        """Graphviz DOT text of the program: equations as boxes, edges by variables,
        calls and loops as nested clusters (see :mod:`funcgrad.core.dot`)."""
        return dot.to_dot(self, name)

    def _repr_svg_(self) -> str | None:
        """Notebooks: the rendered graph, or ``None`` (text) without Graphviz."""
        return dot.to_svg(self)

    def _repr_html_(self) -> str | None:
        """Notebooks: the rendered graph above the text listing, or ``None`` (text)
        without Graphviz."""
        svg = dot.to_svg(self)
        if svg is None:
            return None
        svg = svg[svg.find("<svg") :]  # no XML prolog inside HTML
        text = html.escape(pp_program(self))
        return f"<div>{svg}<details><summary>listing</summary><pre>{text}</pre></details></div>"


def _var_names() -> Any:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


def pp_program(p: Program, indent: int = 0) -> str:
    """Pretty-print in the style of a jaxpr: ``{ lambda consts ; args . let ... in (outs) }``."""
    gen = _var_names()
    names: dict[Var, str] = {}

    def name(a: Atom) -> str:
        if isinstance(a, Literal):
            return str(a)
        if a not in names:
            names[a] = next(gen)
        return names[a]

    def binder(v: Var) -> str:
        return f"{name(v)}:{v.aval}"

    def param_str(k: str, v: Any) -> str:
        if isinstance(v, Program):
            body = pp_program(v, indent + 6)
            return f"{k}={body}"
        if isinstance(v, (tuple, list)) and v and all(isinstance(x, Program) for x in v):
            return f"{k}=(" + ", ".join(pp_program(x, indent + 6) for x in v) + ")"
        if isinstance(v, np.dtype):
            return f"{k}={v.name}"
        return f"{k}={v}"

    pad = " " * indent
    head = (
        "{ lambda "
        + " ".join(binder(v) for v in p.constvars)
        + ("; " if p.constvars else "")
        + " ".join(binder(v) for v in p.invars)
        + ". let"
    )
    lines = [head]
    for e in p.eqns:
        outs = " ".join(binder(v) for v in e.outvars)
        params = ""
        if e.params:
            params = "[" + " ".join(param_str(k, v) for k, v in sorted(e.params.items())) + "]"
        ins = " ".join(name(a) for a in e.inputs)
        lines.append(f"{pad}    {outs} = {e.prim.name}{params} {ins}")
    outs = " ".join(name(a) for a in p.outvars)
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)
