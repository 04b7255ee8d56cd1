"""A creation function's row: ``zeros``, ``ones``, ``empty``, ``full`` and their ``*_like``
forms, and ``arange``, ``linspace``, ``logspace`` and ``eye``, declared once for both
libraries.

A creation function has no operand to promote and reduces nothing: it makes an array of a
shape (given, or a template's) filled with one value. What differs between NumPy and
PyTorch is how the shape is spelled (one ``shape`` argument against ``*size`` or one
``size`` sequence), the default dtype (the default float or the fill value's type in
NumPy; PyTorch's default dtype, or the fill value's kind for ``full``), the template (any
array or shape-and-dtype object against a Tensor, whose device is kept too) and the
arguments only PyTorch has (``out=``, ``requires_grad``, ``layout``, ``memory_format``,
``pin_memory``, ``Tensor.new_X``). A :class:`Creation` row, declared in
``funcgrad/numpy/_creation.py`` beside the generator of its numpy form, says the fill
value, whether the row is a ``*_like`` form, the numpy form's differences and PyTorch's
form (:class:`TorchCreation`); compat builds ``torch.X``, ``Tensor.new_X`` and ``out=``
from it at import. funcgrad never reads ``torch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: the fill of a row whose value is an argument (``full``, ``full_like``: ``fill_value``)
FILL_VALUE = "fill_value"
#: the fill of a row whose contents are unspecified (``empty``: zeros here, as arrays are
#: immutable and PyTorch's uninitialised memory has no value to match)
UNSPECIFIED = "unspecified"
#: the fill of a row whose values its function computes from its arguments (``arange``)
COMPUTED = "computed"
#: a :class:`TorchArg` without a default
REQUIRED = "required"


@dataclass(frozen=True)
class TorchArg:
    """One positional parameter of a computed row's PyTorch form (``TorchCreation.args``).

    ``kind``: ``"number"`` (a Python or NumPy number, or a 0-d tensor that requires no
    grad: PyTorch's ``Number``), ``"scalar"`` (a number or any 0-d tensor: linspace's
    ``Tensor start`` overloads), ``"int"`` (an integer, not a bool) or ``"float"`` (a real
    number or a 0-d tensor). ``default``: :data:`REQUIRED` or the value an omitted argument
    takes (``None`` passed explicitly is still refused, as PyTorch's parser)."""

    name: str
    kind: str
    default: object = REQUIRED


@dataclass(frozen=True)
class TorchCreation:
    """How a creation row reads in PyTorch (``torch=`` on the row).

    ``varargs``: the size is ``*size`` (``torch.zeros(2, 3)``, ``torch.zeros((2, 3))`` or
    ``size=``), where ``full`` takes one ``size`` sequence and refuses an int. ``out``:
    ``torch.X`` takes ``out=`` (the result in ``out``'s dtype unless ``dtype=`` is given,
    which must then be ``out``'s). ``new``: ``Tensor.new_X(size, ...)`` exists (the input's
    dtype and device unless given). ``memory_format``: the form takes ``memory_format=``
    besides ``dtype``, ``layout``, ``device``, ``requires_grad`` and ``pin_memory`` (every
    form takes those; accepted: compat has one layout and no pinned memory). ``negative``:
    PyTorch's ``RuntimeError`` text refusing a negative size where it is not the general
    "Trying to create tensor with negative dimension" (``zeros``' own kernel). Every keyword after the size (and
    ``fill_value``) is keyword-only, as PyTorch's. A ``*_like`` row's input must be a
    Tensor (PyTorch's ``TypeError``)."""

    varargs: bool = True
    out: bool = True
    new: bool = True
    memory_format: bool = False
    negative: str | None = None
    #: a computed row's positional parameters, in order (see :class:`TorchArg`)
    args: tuple[TorchArg, ...] = ()
    #: a computed row's host computation: ``"ramp"`` (``start + i * step``), ``"spaced"``
    #: (``steps`` values from ``start`` to ``end``, the second half counted back from
    #: ``end``, as PyTorch's kernel), ``"log_spaced"`` (``base`` to the power of those) or
    #: ``"diagonal"`` (ones on the main diagonal)
    values: str | None = None
    #: with one positional argument it is the second parameter (``arange(end)``)
    leading_default: bool = False
    #: the dtype without ``dtype=``/``out=``: ``"default"`` (PyTorch's default dtype, its
    #: complex counterpart for a complex argument) or ``"arguments"`` (``int64`` unless an
    #: argument is a float: ``arange``)
    inferred: str = "default"
    #: the dtype kinds the kernel refuses (``NotImplementedError`` naming ``<name>_cpu``)
    refused: str = ""


#: the declared creation rows, name -> row, in declaration order
CREATION_ROWS: dict[str, Creation] = {}


class Creation:
    """One creation function declared for both libraries (see the module docstring).

    ``name``: the row's name, or for a computed row (:data:`COMPUTED`, the default fill)
    its numpy function, whose name and docstring the row takes. ``fill``: every element's
    value (``0``, ``1``), :data:`FILL_VALUE` (an argument) or :data:`UNSPECIFIED`. ``like``: the shape and dtype come from a template (``*_like``).
    ``doc``: the numpy form's docstring. For the numpy form: ``template``, the template
    parameter's name (``empty_like``'s ``prototype``); ``errors_as``, the name its
    template errors say (JAX's ``empty_like`` checks as ``ones_like``); ``float0``: the
    form takes ``dtype=float0`` (the tangent type of integers) and gives a NumPy ``float0``
    array, as JAX's ``zeros``, ``ones`` and ``empty``; ``out_sharding``: the form takes
    JAX's ``out_sharding=`` (a split over explicit mesh axes; all but ``empty_like``)."""

    def __init__(
        self,
        name: str | Callable[..., object],
        *,
        torch: TorchCreation,
        fill: object = COMPUTED,
        doc: str = "",
        like: bool = False,
        template: str = "a",
        errors_as: str | None = None,
        float0: bool = False,
        out_sharding: bool = True,
    ) -> None:
        function = None
        if not isinstance(name, str):
            function, name, doc = name, name.__name__, name.__doc__ or ""
        if (function is not None) != (fill == COMPUTED):
            raise ValueError(f"{name}: a computed row is declared on its function, others by name")
        if function is not None and (torch.values is None or torch.varargs or torch.new):
            raise ValueError(f"{name}: a computed row says its values, takes no *size, no new_X")
        if name in CREATION_ROWS:
            raise ValueError(f"creation row {name!r} declared twice")
        if torch.varargs and (like or fill == FILL_VALUE):
            raise ValueError(f"{name}: a *_like form or fill_value leaves no place for *size")
        if like and (torch.out or torch.new):
            raise ValueError(f"{name}: PyTorch's *_like forms have no out= and no new_X")
        self.name = name
        #: a computed row's numpy form (its function); ``None`` for a generated one
        self.function = function
        self.fill = fill
        self.doc = doc
        self.torch = torch
        self.like = like
        self.template = template
        self.errors_as = errors_as or name
        self.float0 = float0
        self.out_sharding = out_sharding
        CREATION_ROWS[name] = self

    @property
    def value(self) -> object:
        """The fill of a row without a ``fill_value`` argument (``UNSPECIFIED`` as 0)."""
        return 0 if self.fill == UNSPECIFIED else self.fill

    def __repr__(self) -> str:
        return f"Creation({self.name})"
