"""The op table: one row per torch op, from which the API surface and its tests come.

A row (:class:`OpDef`, declared with :func:`defop` next to the op's implementation)
says everything PyTorch has under one op name, in the spirit of PyTorch's
``native_functions.yaml`` and OpInfo:

* the ``torch.X`` function (``function=``) and its aliases (``torch.clip`` for
  ``clamp``),
* the ``Tensor.X`` method (``method=``; a different callable when the method's
  signature differs, as ``Tensor.where(condition, other)``),
* the in-place ``Tensor.X_`` (``inplace=True`` derives it from the out-of-place op:
  the result replaces ``self``'s value and graph node, with PyTorch's checks; or an
  explicit callable), and whether PyTorch also exposes it as ``torch.X_(input, ...)``
  (``inplace_function=``),
* the ``nn.functional.X(input)`` function (``functional=``, its docstring) and the
  ``nn.X`` module that calls it (``nn_module=``, its class name and docstring), for the
  plain elementwise activations,
* the backward node's name (``grad_fn``),
* the test cases (``samples``: input shapes, domain, dtypes and extra arguments),
  which ``tests/compat/test_compat_optable.py`` runs against real PyTorch for values,
  dtypes, gradients, methods and in-place variants.

``compat._core.namespace`` exports every row's functions, ``compat._core.methods``
installs every row's methods, ``compat._core.ops`` re-exports every row's
implementation, ``compat.torch`` its ``torch.X_`` and ``nn.functional``/``nn.modules``
its activation forms, so adding an op is writing its implementation and one row. Rows
are read once, at import: nothing here runs per call.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import TYPE_CHECKING, Any

from compat._core import dtypes as _dt
from compat._core import numpy_names as _np_names

if TYPE_CHECKING:
    from compat._core.tensor import Tensor


@dataclass(frozen=True)
class T:
    """A float tensor argument of ``shape`` placed among a sample's ``args``/``kwargs``."""

    shape: tuple[int, ...]


@dataclass(frozen=True)
class SPD:
    """A symmetric positive-definite ``n x n`` float matrix argument."""

    n: int


@dataclass(frozen=True)
class Idx:
    """An int64 index tensor argument of ``shape`` with values in ``[0, high)``."""

    shape: tuple[int, ...]
    high: int


@dataclass(frozen=True)
class Mask:
    """A bool tensor argument of ``shape``."""

    shape: tuple[int, ...]


@dataclass(frozen=True)
class Sample:
    """One test call: ``prefix``, then the tensor arguments (shapes, :class:`Idx` or
    :class:`Mask`), then ``args`` and ``kwargs`` (which may hold :class:`T`, :class:`Idx`
    and :class:`Mask` too); float tensors are drawn from ``domain``.

    ``domain`` may name a funcgrad primitive instead (``"acosh"``): the samples draw from
    the input domain that primitive declares, written once for both libraries' tests.
    ``dtype`` is the float tensors' dtype (``"int64"`` draws integers from the domain);
    ``grad=False`` skips the gradient comparison (integer outputs, piecewise-constant
    ops); ``method=False`` skips the method form (PyTorch has no such overload);
    ``fd=False``: the gradient is PyTorch's convention, not the derivative finite
    differences see (the op reads one triangle of its input, truncates small singular
    values, or has outputs PyTorch does not differentiate), so it is compared with
    PyTorch's only (``tests/compat/test_compat_op_grads.py`` checks the others against
    finite differences too).
    """

    tensors: tuple[Any, ...] = ((3,),)
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    domain: tuple[float, float] | str = (-2.0, 2.0)
    dtype: str = "float64"
    grad: bool = True
    method: bool = True
    prefix: tuple[Any, ...] = ()
    fd: bool = True


@dataclass
class OpDef:
    """One torch op's row (see the module docstring)."""

    name: str
    fn: Callable[..., Any]
    function: bool = True
    method: bool | Callable[..., Any] = True
    inplace: bool | Callable[..., Any] = False
    aliases: tuple[str, ...] = ()
    method_aliases: tuple[str, ...] = ()
    grad_fn: str | None = None
    samples: tuple[Sample, ...] = ()
    random: bool = False
    #: whether the backward node's name is PyTorch's (not for composites such as einsum,
    #: whose node PyTorch names after the last view or product it happened to use)
    node_name: bool = True
    #: the namespace of the function: ``"torch"`` or a submodule (``"linalg"``, ``"special"``)
    module: str = "torch"
    #: PyTorch has no bfloat16 kernel for this op: the exception type and message it
    #: raises (``{shape}`` is the bfloat16 argument's shape), raised the same way here
    bf16_error: tuple[type, str] | None = None
    #: outputs unique only up to signs/phases (SVD, eigenvectors): maps either library's
    #: result to gauge-invariant tensors, which the generic tests compare instead
    gauge: Callable[[Any], Any] | None = None
    #: PyTorch also has the in-place method as a function, ``torch.X_(input, ...)``:
    #: ``True`` for the row's name and aliases, or the spellings that have it
    #: (``torch.abs_`` but no ``torch.absolute_``)
    inplace_function: bool | tuple[str, ...] = False
    #: ``nn.functional`` has the op as ``X(input)``: that function's docstring; or the
    #: ``nn.functional`` form itself where PyTorch's takes more (``softmax``'s ``dim=None``)
    functional: str | Callable[..., Any] | None = None
    #: ``nn`` has a module calling ``nn.functional.X``: its class name and docstring
    nn_module: tuple[str, str] | None = None
    #: PyTorch takes a Python number for the first argument too (a ``Scalar self``
    #: overload: ``torch.add(2, x)``), where it requires a Tensor of its other ops
    number_first: bool = False
    #: PyTorch's ``out=`` wants the result's exact dtype (it casts to a wider one for most
    #: ops): its refusal's text, ``{want}``/``{got}`` the dtypes' ScalarType names
    #: (``Float``), ``{want_c}``/``{got_c}`` their C++ names (``float``, ``long int``)
    exact_out: str | None = None
    #: with ``out=``, PyTorch takes tensors only (its ``out`` overload has no ``Scalar``
    #: operand: ``torch.where(c, x, 2.0, out=o)`` is a ``TypeError``)
    out_tensors: bool = False
    #: the forms (``"function"``, ``"method"``) that take NumPy's keyword names
    #: (``axis=``, ``keepdims=``; :mod:`compat._core.numpy_names`): PyTorch's C++-bound
    #: forms do, those it writes in Python (``torch.norm``, ``Tensor.split``) do not
    numpy_names: tuple[str, ...] = ("function", "method")
    #: PyTorch's ``torch.X`` takes ``out=`` (not ``tile``, views, the split family,
    #: ``isnan``: then ``out=`` is the ``TypeError`` "X() got an unexpected keyword
    #: argument 'out'", naming PyTorch's op as PyTorch's parser does)
    out: bool = True
    #: PyTorch's ``out=`` overload takes only some of the op's forms (``sum`` with a
    #: ``dim``) or ``out`` tensors (``heaviside``: no complex one): called with the call's
    #: positional and keyword arguments (NumPy names renamed) and ``out`` when ``out=`` is
    #: given, it raises PyTorch's error for the others
    out_check: Callable[[tuple, dict[str, Any], Any], None] | None = None
    #: PyTorch's parser has several signatures for ``torch.X``: a call none takes (``out=``
    #: of a row without it) is its "received an invalid combination of arguments"
    overloads: bool = False
    #: PyTorch's refusal of an ``out=`` whose dtype is not the ``dtype=`` given, for a row
    #: whose op has a ``dtype`` parameter (``{want}``/``{got}``, ``{want_c}``/``{got_c}``
    #: as ``exact_out``'s): :data:`DTYPE_OUT` unless the row says otherwise (``nansum``)
    dtype_out: str | None = None

    def method_impl(self) -> Callable[..., Any] | None:
        if self.method is False:
            return None
        return self.fn if self.method is True else self.method  # type: ignore[return-value]

    def forms(self) -> list[tuple[str, str]]:
        """(namespace, name) of every public form the row declares: ``torch.X`` (or
        ``torch.<module>.X``) and aliases, ``Tensor.X``, ``Tensor.X_``, ``torch.X_``,
        ``nn.functional.X`` and the ``nn`` module (what the tests and the coverage page
        read)."""
        module, _, name = self.name.rpartition(".")
        names = (name, *self.aliases, *self.method_aliases)
        out = [(f"torch.{module}" if module else "torch", n) for n in (name, *self.aliases)]
        out = out if self.function else []
        if self.method_impl() is not None:
            out += [("torch.Tensor", n) for n in names]
        if self.inplace is not False:
            out += [("torch.Tensor", n + "_") for n in names]
        if self.inplace_function is True:
            out += [("torch", n + "_") for n in names]
        elif self.inplace_function:
            out += [("torch", n + "_") for n in self.inplace_function]
        if self.functional is not None:
            out.append(("torch.nn.functional", name))
        if self.nn_module is not None:
            out.append(("torch.nn", self.nn_module[0]))
        return out


REGISTRY: dict[str, OpDef] = {}

#: PyTorch's refusal of ``torch.X(..., dtype=d, out=o)`` with ``o`` not of dtype ``d``
#: (``sum``, ``cumsum``, ``mean``, ``norm``: ``OpDef.dtype_out``)
DTYPE_OUT = "Expected out tensor to have dtype {want_c}, but got {got_c} instead"


def defop(
    name: str | None = None,
    *,
    function: bool = True,
    method: bool | Callable[..., Any] = True,
    inplace: bool | Callable[..., Any] = False,
    aliases: tuple[str, ...] = (),
    method_aliases: tuple[str, ...] = (),
    grad_fn: str | None = None,
    samples: tuple[Sample, ...] | Sample = (),
    random: bool = False,
    node_name: bool = True,
    module: str = "torch",
    bf16_error: tuple[type, str] | None = None,
    gauge: Callable[[Any], Any] | None = None,
    inplace_function: bool | tuple[str, ...] = False,
    functional: str | Callable[..., Any] | None = None,
    nn_module: tuple[str, str] | None = None,
    number_first: bool = False,
    exact_out: str | None = None,
    out_tensors: bool = False,
    numpy_names: tuple[str, ...] = ("function", "method"),
    out: bool = True,
    out_check: Callable[[tuple, dict[str, Any], Any], None] | None = None,
    overloads: bool = False,
    dtype_out: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the row of the op implemented by the decorated function (returned as is)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        n = name or fn.__name__
        if module != "torch":
            n = f"{module}.{n}"
            if method is not False:
                raise ValueError(f"{n}: functions of torch.{module} have no Tensor method")
        if n in REGISTRY:
            raise ValueError(f"op {n!r} is declared twice in the op table")
        if inplace_function and inplace is False:
            raise ValueError(f"{n}: inplace_function= needs an in-place form (inplace=)")
        if nn_module is not None and functional is None:
            raise ValueError(f"{n}: nn_module= calls the nn.functional form (functional=)")
        REGISTRY[n] = OpDef(
            n,
            fn,
            function,
            method,
            inplace,
            tuple(aliases),
            tuple(method_aliases),
            grad_fn,
            (samples,) if isinstance(samples, Sample) else tuple(samples),
            random,
            node_name,
            module,
            bf16_error,
            gauge,
            inplace_function,
            functional,
            nn_module,
            number_first,
            exact_out,
            out_tensors,
            tuple(numpy_names),
            out,
            out_check,
            overloads,
            dtype_out,
        )
        return fn

    return register


#: the row options of a ``torch.linalg`` function, shared by the linalg op modules: in that
#: module, no Tensor method, and a backward node not named as PyTorch's (``node_name``)
LINALG_ROW: dict[str, Any] = {"module": "linalg", "method": False, "node_name": False}


def no_bf16_kernel(kernel: str) -> tuple[type, str]:
    """The ``bf16_error`` of a row whose PyTorch CPU kernel ``kernel`` has no bfloat16 version."""
    return (NotImplementedError, f"\"{kernel}\" not implemented for 'BFloat16'")


def _guarded(d: OpDef, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, raising the row's ``bf16_error`` for a bfloat16 tensor argument."""
    if d.bf16_error is None:
        return fn
    exc, message = d.bf16_error
    bf16 = _dt.bfloat16.np

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        for a in itertools.chain(args, kwargs.values()):
            if getattr(a, "_npdtype", None) == bf16:
                raise exc(message.format(shape=list(a.shape)))
        return fn(*args, **kwargs)

    return guarded


def _takes_dtype(fn: Callable[..., Any]) -> bool:
    try:
        return "dtype" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def functions(
    with_out: Callable[..., Callable[..., Any]] | None = None,
    module: str = "torch",
) -> dict[str, Callable[..., Any]]:
    """``torch.X`` (or ``torch.<module>.X``) for every row with a function, aliases
    included (``with_out(fn, number_first=..., name=...)`` wraps each to take PyTorch's
    ``out=`` argument, or refuse it as PyTorch does (``takes_out=False``), and check its
    first argument as the row says; its errors name the op as PyTorch's do: ``linalg_inv``
    for ``torch.linalg.inv``)."""
    out: dict[str, Callable[..., Any]] = {}
    for d in REGISTRY.values():
        if d.function and d.module == module:
            f = _guarded(d, d.fn)
            for n in (d.name.rpartition(".")[2], *d.aliases):
                public = n if module == "torch" else f"{module}_{n}"
                kw: dict[str, Any] = {"exact_out": d.exact_out} if d.exact_out else {}
                if d.out_tensors:
                    kw["out_tensors"] = True
                if d.out_check is not None:
                    kw["out_check"] = d.out_check
                if d.out and _takes_dtype(d.fn):
                    kw["dtype_out"] = d.dtype_out or DTYPE_OUT
                names = _np_names.table(d.fn) if "function" in d.numpy_names else {}
                if with_out is None:
                    out[n] = _np_names.accepting(f, names, public)
                    continue
                if not d.out:
                    kw.update(takes_out=False, overloads=d.overloads)
                if names:
                    kw["numpy_names"] = names
                out[n] = with_out(f, number_first=d.number_first, name=public, **kw)
    name_as_public(out, "compat.torch" if module == "torch" else f"compat.torch.{module}")
    return out


def name_as_public(funcs: dict[str, Callable[..., Any]], module: str) -> None:
    """Name each function of ``funcs`` (the public ``module.<key>``) by its public form, so
    that pickle writes it by that name and finds the same object when loading, as PyTorch
    pickles ``torch.tanh``."""
    for name, f in funcs.items():
        home = sys.modules.get(getattr(f, "__module__", None) or "")
        if not isinstance(f, FunctionType) or getattr(home, f.__qualname__, None) is f:
            continue  # (pickled by its own name already)
        f.__module__, f.__qualname__ = module, name


def methods(make_inplace: Callable[[Callable[..., Any]], Callable[..., Any]]) -> dict:
    """``Tensor.X`` and ``Tensor.X_`` for every row; ``make_inplace`` derives an in-place
    method from an out-of-place function."""
    out: dict[str, Callable[..., Any]] = {}
    for d in REGISTRY.values():
        m = d.method_impl()
        m = m if m is None else _guarded(d, m)
        if m is not None and "method" in d.numpy_names:
            m = _np_names.accepting(m, _np_names.table(d.method_impl(), method=True), d.name)
        if m is not None:
            for n in (d.name, *d.aliases, *d.method_aliases):
                out[n] = m
        if d.inplace is not False:
            ip = make_inplace(m or _guarded(d, d.fn)) if d.inplace is True else d.inplace
            for n in (d.name, *d.aliases, *d.method_aliases):
                out[n + "_"] = ip
    return out


def inplace_function_names() -> list[str]:
    """The in-place methods PyTorch also exposes as ``torch.X_(input, ...)``, by name."""
    out = []
    for d in REGISTRY.values():
        if d.inplace_function is True:
            out += [n + "_" for n in (d.name, *d.aliases, *d.method_aliases)]
        elif d.inplace_function:
            out += [n + "_" for n in d.inplace_function]
    return sorted(out)


def implementations(module: str = "torch") -> dict[str, Callable[..., Any]]:
    """Every row's implementation by name and alias, unwrapped (no ``out=``, no bfloat16
    guard): what ``compat._core.ops`` re-exports for compat's own modules."""
    out: dict[str, Callable[..., Any]] = {}
    for d in REGISTRY.values():
        if d.module == module:
            for n in (d.name.rpartition(".")[2], *d.aliases):
                out[n] = d.fn
    return out


def _functional(d: OpDef) -> Callable[..., Any]:
    if callable(d.functional):  # (the form itself)
        return _guarded(d, d.functional)
    fn = _guarded(d, d.fn)

    def functional(input: Tensor) -> Tensor:
        return fn(input)

    functional.__name__ = functional.__qualname__ = d.name
    functional.__doc__ = d.functional
    return functional


def functional_forms() -> dict[str, Callable[..., Any]]:
    """``nn.functional.X(input)`` for every row declared with ``functional=``."""
    return {d.name: _functional(d) for d in REGISTRY.values() if d.functional is not None}


def module_forms(base: type, functional: Any, module: str) -> dict[str, type]:
    """The ``nn`` module class of every row declared with ``nn_module=``: a subclass of
    ``base`` (defined in ``module``) whose ``forward`` calls the row's function of the
    ``functional`` namespace."""
    out: dict[str, type] = {}
    for d in REGISTRY.values():
        if d.nn_module is not None:
            name, doc = d.nn_module
            out[name] = _module_class(base, name, doc, getattr(functional, d.name), module)
    return out


def _module_class(base: type, name: str, doc: str, fn: Callable[..., Any], module: str) -> type:
    def forward(self: Any, input: Any) -> Any:
        return fn(input)

    forward.__qualname__ = f"{name}.forward"
    forward.__module__ = module
    namespace = {"__doc__": doc, "__module__": module, "__qualname__": name, "forward": forward}
    return type(name, (base,), namespace)
