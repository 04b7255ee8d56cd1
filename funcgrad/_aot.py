"""Ahead-of-time objects of ``fg.jit``, as JAX's ``jax.stages``: ``Jitted.trace(*args)``
gives a :class:`Traced`, ``Jitted.lower(*args)`` (or ``Traced.lower()``) a
:class:`Lowered`, whose ``compile()`` gives a :class:`Compiled`.

``Lowered`` and ``Compiled`` wrap JAX's own stages (funcgrad compiles through
``jax.jit``), so the numbers ``cost_analysis()`` and ``memory_analysis()`` report and
the shardings and formats are XLA's. ``str(lowered)`` is the lowered text, as
``Jitted.lower`` returned before these objects existed. Where funcgrad compiled the
function with its closed-over constants as leading arguments (its own dispatch), a
:class:`Signature` says how many there are and what the user's arguments look like,
so every attribute is about the user's arguments only, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax import tree_util
from jax._src.tree_util import equality_errors_pytreedef
from jax.experimental.layout import Format

from funcgrad.core.interp import Tracer, to_aval
from funcgrad.core.ir import Aval, Program

#: how a :class:`Compiled` is called: ``adapt(jax_compiled, args, kwargs) -> outputs``
Adapter = Callable[[Any, tuple, dict], Any]


def _direct(compiled: Any, args: tuple, kwargs: dict) -> Any:
    return compiled(*args, **kwargs)


@dataclass(frozen=True)
class Signature:
    """The user's side of a compiled function: the dynamic arguments' tree (JAX's
    ``(args, kwargs)`` pair) and avals, which of them are donated, their names in errors
    (JAX's: ``'p['w']'``), the outputs' tree and how many constants lead the flat
    arguments of the JAX stage it describes."""

    in_tree: Any
    avals: tuple[Aval, ...]
    donated: tuple[bool, ...]
    names: tuple[str, ...]
    out_tree: Any
    n_consts: int = 0

    @property
    def args_info(self) -> Any:
        """JAX's pytree of ``jax.stages.ArgInfo`` (the aval, whether donated)."""
        return self.in_tree.unflatten(
            [
                jax.stages.ArgInfo(
                    jax.core.ShapedArray(a.shape, a.dtype, a.weak_type, sharding=a.sharding), d
                )
                for a, d in zip(self.avals, self.donated)
            ]
        )


def _user_flat(stage: Any, tree_value: Any, sig: Signature) -> Any:
    """``tree_value`` (a pytree over JAX's stage's inputs) over the user's arguments."""
    return sig.in_tree.unflatten(stage.in_tree.flatten_up_to(tree_value)[sig.n_consts :])


def _user_out(stage: Any, tree_value: Any, sig: Signature) -> Any:
    return sig.out_tree.unflatten(stage.out_tree.flatten_up_to(tree_value))


class _Stage:
    """JAX's ``Stage`` attributes, from the :class:`Signature`."""

    _sig: Signature

    @property
    def args_info(self) -> Any:
        """The dynamic arguments' ``jax.stages.ArgInfo`` as ``(args, kwargs)``."""
        return self._sig.args_info

    @property
    def in_tree(self) -> Any:
        """Tree structure of the pair (positional arguments, keyword arguments)."""
        return self._sig.in_tree

    @property
    def out_tree(self) -> Any:
        """Tree structure of the outputs."""
        return self._sig.out_tree

    @property
    def in_avals(self) -> Any:
        """The dynamic arguments' avals (JAX's ``ShapedArray``) as ``(args, kwargs)``."""
        return tree_util.tree_map(lambda i: i._aval, self._sig.args_info)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat indices of the donated arguments."""
        return tuple(i for i, d in enumerate(self._sig.donated) if d)


class Traced(_Stage):
    """A jitted function traced for one signature, not yet lowered: JAX's ``Traced``.
    Its :attr:`jaxpr` is funcgrad's :class:`~funcgrad.core.ir.Program` under JAX's
    name (it prints as funcgrad's IR, not as a jaxpr)."""

    def __init__(
        self,
        program: Program,
        sig: Signature,
        fun_name: str,
        lower: Callable[..., Any],
        out_shardings: Sequence[Any] | None = None,
    ) -> None:
        self._program, self._sig, self._lower = program, sig, lower
        self._out_shardings = out_shardings  # ``jit``'s, one per output leaf, if given
        self.fun_name = fun_name

    @property
    def jaxpr(self) -> Program:
        """The traced (simplified) program: funcgrad's IR in place of JAX's jaxpr."""
        return self._program

    @property
    def out_avals(self) -> Any:
        """The outputs' avals (JAX's ``ShapedArray``) in the outputs' tree."""
        return self.out_tree.unflatten(
            [jax.core.ShapedArray(a.shape, a.dtype, a.weak_type) for a in self._program.out_avals]
        )

    @property
    def out_info(self) -> Any:
        """The outputs as ``jax.ShapeDtypeStruct`` (shape, dtype, weak type, ``jit``'s
        ``out_shardings`` where given), in their tree."""
        avals = self._program.out_avals
        given = self._out_shardings or [None] * len(avals)
        return self.out_tree.unflatten(
            [
                jax.ShapeDtypeStruct(
                    a.shape,
                    a.dtype,
                    sharding=Format(None, a.sharding if s is None else s),
                    weak_type=a.weak_type,
                )
                for a, s in zip(avals, given)
            ]
        )

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
        """Lower for XLA: the same :class:`Lowered` as ``jit(f).lower(*args)``, or, with
        ``lowering_platforms`` (``("tpu",)``), for those platforms instead of this one."""
        return self._lower(lowering_platforms)

    def __repr__(self) -> str:
        return f"<Traced {self.fun_name}>"


class Lowered(_Stage, str):
    """A jitted function lowered for one signature, not yet compiled. It is the lowered
    text (StableHLO) as a ``str`` (what ``Jitted.lower`` returned before), with JAX's
    ``Lowered`` methods: :meth:`as_text`, :meth:`compiler_ir`, :meth:`compile`,
    :meth:`cost_analysis`, and attributes ``args_info``, ``out_info``, ``in_tree``,
    ``out_tree``."""

    _lowered: Any
    _adapt: Adapter
    name: str

    def __new__(
        cls, jax_lowered: Any, name: str, sig: Signature, adapt: Adapter = _direct
    ) -> Lowered:
        self = super().__new__(cls, jax_lowered.as_text())
        self._lowered, self._adapt, self.name, self._sig = jax_lowered, adapt, name, sig
        return self

    @property
    def out_info(self) -> Any:
        """The outputs as ``jax.ShapeDtypeStruct`` (with their sharding), in their tree."""
        return _user_out(self._lowered, self._lowered.out_info, self._sig)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The lowered module's text (StableHLO; ``dialect="hlo"`` for HLO)."""
        if dialect is None and not debug_info:
            return str.__str__(self)
        return self._lowered.as_text(dialect, debug_info=debug_info)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The lowered module as XLA's compiler takes it: an MLIR module (StableHLO, the
        default) or, with ``dialect="hlo"``, an HLO module (``.as_hlo_text()``)."""
        return self._lowered.compiler_ir(dialect) if dialect else self._lowered.compiler_ir()

    def compile(
        self, compiler_options: dict[str, Any] | None = None, *, device_assignment: Any = None
    ) -> Compiled:
        """Compile with XLA (``compiler_options``: XLA's options; ``device_assignment``: the
        devices of a program lowered for an abstract mesh; as JAX's)."""
        jc = self._lowered.compile(compiler_options, device_assignment=device_assignment)
        return Compiled(jc, self.name, self._sig, self._adapt)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate of the unoptimised module (``Compiled``'s is the final one)."""
        return _one_dict(self._lowered.cost_analysis())


def _one_dict(c: Any) -> dict[str, float]:
    if isinstance(c, list):  # older JAX: one dict per device
        c = c[0] if c else {}
    return dict(c or {})


class Compiled(_Stage):
    """A jitted function compiled for one signature: callable with the dynamic
    arguments (static ones are fixed), with XLA's cost and memory analyses and JAX's
    ``Compiled`` attributes (``input_shardings``, ``output_formats``, ...)."""

    def __init__(
        self, jax_compiled: Any, name: str, sig: Signature, adapt: Adapter = _direct
    ) -> None:
        self._compiled = jax_compiled
        self._adapt = adapt
        self._sig = sig
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

    def runtime_executable(self) -> Any:
        """XLA's loaded executable (for debugging, as JAX's)."""
        return self._compiled.runtime_executable()

    @property
    def out_info(self) -> Any:
        """The outputs as ``jax.ShapeDtypeStruct`` (with sharding and layout), in their tree."""
        return _user_out(self._compiled, self._compiled.out_info, self._sig)

    @property
    def input_shardings(self) -> Any:
        """The dynamic arguments' shardings as ``(args, kwargs)``."""
        return _user_flat(self._compiled, self._compiled.input_shardings, self._sig)

    @property
    def output_shardings(self) -> Any:
        """The outputs' shardings, in the outputs' tree."""
        return _user_out(self._compiled, self._compiled.output_shardings, self._sig)

    @property
    def input_formats(self) -> Any:
        """The dynamic arguments' formats (layout and sharding) as ``(args, kwargs)``."""
        return _user_flat(self._compiled, self._compiled.input_formats, self._sig)

    @property
    def output_formats(self) -> Any:
        """The outputs' formats (layout and sharding), in the outputs' tree."""
        return _user_out(self._compiled, self._compiled.output_formats, self._sig)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._adapt is not _direct:  # the executable's arguments lead with constants
            check_call(self._sig, args, kwargs)
            return self._adapt(self._compiled, args, kwargs)
        try:  # JAX's C++ call checks; its errors would name funcgrad's parameters
            return self._compiled(*args, **kwargs)
        except Exception:
            check_call(self._sig, args, kwargs)  # the same error, naming the user's
            raise

    def __repr__(self) -> str:
        return f"<Compiled {self.name}>"


def check_call(sig: Signature, args: tuple, kwargs: dict) -> None:
    """JAX's ``TypeError`` (in its words) for a compiled function called with another
    tree of arguments, or other shapes or dtypes, than it was compiled for, or under a
    transform (with tracers)."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    if tree != sig.in_tree:
        errs = list(equality_errors_pytreedef(tree, sig.in_tree))
        msg = [
            "Function compiled with input pytree does not match the input pytree it was "
            f"called with. There are {len(errs)} mismatches, including:"
        ]
        for path, now, seen, why in errs:
            base = ("args", "kwargs")[path[0].idx]
            msg.append(
                f"    * at {base}{tree_util.keystr(tuple(path[1:]))}, seen {seen} but now "
                f"given {now}, so {why}"
            )
        raise TypeError("\n".join(msg))
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            raise TypeError(
                "Cannot apply JAX transformations to a function lowered and compiled for a "
                f"particular signature. Detected argument of Tracer type {type(leaf)}."
            )
    errors = []
    for ref, leaf, name in zip(sig.avals, leaves, sig.names):
        got = to_aval(leaf)
        if (ref.shape, ref.dtype) != (got.shape, got.dtype):
            errors.append(
                f"Argument '{name}' compiled with {_short(ref)} and called with {_short(got)}"
            )
    if errors:
        count = f"The first 5 of {len(errors)}" if len(errors) >= 5 else "The"
        raise TypeError(
            "Argument types differ from the types for which this computation was compiled. "
            "Perhaps you are calling the compiled executable with a different enable_x64 "
            f"mode than when it was AOT compiled? {count} mismatches are:\n" + "\n".join(errors[:5])
        )


def _short(a: Aval) -> str:
    return jax.core.ShapedArray(a.shape, a.dtype).str_short()
