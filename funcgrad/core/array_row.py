"""An array function's row: a ``funcgrad.numpy`` function of one array and static arguments
(``tril``, ``triu``, ``flip``, ``roll``) that PyTorch has as the same operation.

Such a function has nothing to promote and no axes to reduce: what differs between the
libraries is the spelling of its arguments (``k`` against ``diagonal``, ``axis`` against
``dims``, ``shift`` against ``shifts``), PyTorch's checks of them and its node. An
:class:`ArrayRow` is declared beside the function (``ArrayRow(tril, torch=...)``): the
function is the numpy form, and the row's :class:`TorchArrayForm` says PyTorch's
parameters, each with the numpy parameter it passes, so compat builds ``torch.X``,
``Tensor.X``, ``Tensor.X_`` and ``out=`` from it at import. funcgrad never reads ``torch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the kinds of PyTorch parameter a row may declare (see :class:`TorchParam`)
PARAM_KINDS = ("int", "dims", "unique_dims", "shifts")
#: a parameter without a default
REQUIRED = object()


@dataclass(frozen=True)
class TorchParam:
    """One PyTorch parameter of an array row's op: its ``name``, the numpy form's parameter
    it passes (``numpy``), its ``kind`` and its ``default`` (:data:`REQUIRED`: none).

    Kinds: ``"int"`` (an integer, ``operator.index``: ``diagonal``), ``"dims"`` (a dimension
    or a sequence of them, wrapped to a tuple; ``None`` passes ``None``: ``roll``'s
    ``dims``), ``"unique_dims"`` (the same, a repeated dimension refused as PyTorch:
    ``flip``'s ``dims``), ``"shifts"`` (an integer or a sequence of them, passed as given:
    ``roll``'s ``shifts``).
    """

    name: str
    numpy: str
    kind: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        """Whether the parameter has no default."""
        return self.default is REQUIRED

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(f"{self.name}: kind={self.kind!r} is not one of {PARAM_KINDS}")


@dataclass(frozen=True)
class TorchArrayForm:
    """How an array row reads in PyTorch (``torch=`` on the row): its node (``grad_fn``),
    its parameters after ``input`` (:class:`TorchParam`), whether ``Tensor.X_`` exists
    (``inplace``), and ``aligned``: two parameters whose sequences must have one length
    (``roll``'s ``shifts`` and ``dims``: PyTorch's "shifts and dimensions must align").
    ``min_ndim``: the fewest dimensions PyTorch takes and its ``RuntimeError``'s text
    (``tril``: 2, where NumPy's form raises a ``ValueError``). ``empty_unchecked``: PyTorch
    returns an empty input's copy before checking the dimensions (``roll``). ``samples``:
    compat's test cases, ``(input shape, arguments)``. ``method_varargs``: the parameter
    ``Tensor.X`` also takes as separate arguments (``x.flip(0, 1)``, where ``torch.flip``
    wants a sequence)."""

    grad_fn: str
    params: tuple[TorchParam, ...]
    inplace: bool = False
    aligned: tuple[str, str] | None = None
    min_ndim: tuple[int, str] | None = None
    empty_unchecked: bool = False
    method_varargs: str | None = None
    samples: tuple[tuple[tuple[int, ...], tuple[Any, ...]], ...] = ()


#: the declared array rows, name -> row, in declaration order
ARRAY_ROWS: dict[str, ArrayRow] = {}


class ArrayRow:
    """One array function declared for both libraries (see the module docstring): the
    ``funcgrad.numpy`` ``function`` (its name is the row's) and PyTorch's form."""

    def __init__(self, function: Callable[..., Any], *, torch: TorchArrayForm) -> None:
        name = function.__name__
        if name in ARRAY_ROWS:
            raise ValueError(f"array row {name!r} declared twice")
        self.name = name
        self.function = function
        self.torch = torch
        ARRAY_ROWS[name] = self

    def __repr__(self) -> str:
        return f"ArrayRow({self.name})"
