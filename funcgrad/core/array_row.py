"""An array function's row: a ``funcgrad.numpy`` function of one array, static arguments
and perhaps further arrays (``tril``, ``flip``, ``roll``, ``diff``, ``kron``, ``trace``,
``diag``) that PyTorch has as the same operation.

Such a function reduces no axes and has no elementwise preparation: what differs between
the libraries is the spelling of its arguments (``k`` against ``diagonal``, ``axis``
against ``dims``, ``shift`` against ``shifts``), PyTorch's checks of them, its result's
dtype and its node. An :class:`ArrayRow` is declared beside the function
(``ArrayRow(tril, torch=...)``): the function is the numpy form (and, with ``method=True``,
the array method of that name), and the row's :class:`TorchArrayForm` says PyTorch's
parameters, each with the numpy parameter it passes, so compat builds ``torch.X``,
``Tensor.X``, ``Tensor.X_`` and ``out=`` from it at import. funcgrad never reads ``torch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the kinds of PyTorch parameter a row may declare (see :class:`TorchParam`)
PARAM_KINDS = (
    "int",
    "dims",
    "unique_dims",
    "shifts",
    "dim",
    "tensor",
    "reduce_dims",
    "float",
    "bool",
    "optional_float",
    "optional_int",
    "repeats",
)
#: how PyTorch may type an array row's result (see :class:`TorchArrayForm`)
PROMOTIONS = ("int64", "default_float")
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
    ``roll``'s ``shifts``), ``"dim"`` (one dimension, wrapped; a sequence refused with
    PyTorch's ``TypeError``: ``diff``'s ``dim``), ``"reduce_dims"`` (a dimension or a
    sequence of them as a reduction's: a repeated one refused, none meaning all, a 0-d
    tensor's 0 or -1 taken: ``count_nonzero``'s ``dim``), ``"tensor"`` (a further array operand,
    ``None`` where the default is ``None``: ``kron``'s ``other``, ``diff``'s ``prepend``;
    a test sample gives its shape), ``"float"`` (a real number: ``isclose``'s ``rtol``),
    ``"optional_float"`` (a real number, or ``None`` for the parameter's default:
    ``nan_to_num``'s ``nan``, ``posinf``; ``trapezoid``'s ``dx``, whose ``None`` leaves the
    numpy form's default), ``"optional_int"`` (an integer or ``None``, PyTorch's
    ``TypeError`` naming no position: ``vander``'s ``N``), ``"bool"`` (a bool:
    ``equal_nan``), ``"repeats"`` (counts per dimension as PyTorch's list of ints: a
    sequence, not a bare int, of ints or 0-d integer tensors, each refused with its
    ``TypeError``; aligned with the input's trailing dimensions, a negative size of the
    result is its ``RuntimeError`` naming that shape, and a negative count of an empty
    dimension counts 0: ``tile``'s ``dims``, where NumPy's form takes an int and refuses
    negative counts). ``keyword_only``: PyTorch takes it by keyword only (``trapezoid``'s
    ``dx`` and ``dim``). ``at_least``: the smallest value PyTorch takes and its
    ``RuntimeError``'s text, ``{value}`` the value given (``diff``'s order, where NumPy's
    form raises a ``ValueError``; ``None`` is not checked). ``count``: the number of dimensions a ``"dims"``
    parameter names and PyTorch's ``RuntimeError`` text where it differs, ``{count}`` the
    number given (``rot90``'s two); ``distinct``: the dimensions must differ, PyTorch's
    ``RuntimeError`` text where they do not, ``{0}``, ``{1}``... the dimensions given.
    ``bool_error``: PyTorch's ``RuntimeError`` text refusing a bool value (``trapezoid``'s
    ``dx``). ``length``: a 1-d tensor operand must have the input's size along the named
    dimension parameter, PyTorch's ``RuntimeError`` text where it has not (``trapezoid``'s
    ``x``).
    ``ndim``: a tensor parameter's fewest and most dimensions and PyTorch's text, as
    :class:`TorchArrayForm`'s (``outer``'s ``vec2``).
    """

    name: str
    numpy: str
    kind: str
    default: Any = REQUIRED
    at_least: tuple[int, str] | None = None
    count: tuple[int, str] | None = None
    distinct: str | None = None
    ndim: tuple[int, int | None, str] | None = None
    keyword_only: bool = False
    bool_error: str | None = None
    length: tuple[str, str] | None = None

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
    ``ndim``: the fewest and most dimensions PyTorch takes (``None``: no most) and its
    ``RuntimeError``'s text, ``{ndim}`` the input's (``tril``: at least 2, ``trace``: 2,
    ``diag``: 1 or 2, where NumPy's forms raise a ``ValueError`` or take more), checked
    after the arguments' types and counts and before the dimensions they name are.
    ``empty_unchecked``: PyTorch returns an empty input's copy before checking the
    dimensions (``roll``). ``samples``: compat's test cases, ``(input shape, arguments)``.
    ``method_varargs``: the parameter ``Tensor.X`` also takes as separate arguments
    (``x.flip(0, 1)``, where ``torch.flip`` wants a sequence). ``inplace_function``: PyTorch
    also has ``torch.X_(input, ...)`` (``torch.nan_to_num_``).

    ``grad_fn`` is ``None`` for an op whose result has no node (an integer count).
    ``nodes``: ``(parameter, value, node)`` cases where PyTorch's node is not ``grad_fn``,
    the first that holds winning; the parameter ``"ndim"`` is the input's number of
    dimensions (``diag`` of a matrix: ``DiagonalBackward0_copy``, of a vector
    ``DiagEmbedBackward0``; ``diff`` of order 0: ``CopyBackwards``). ``promote``: how
    PyTorch types the result where NumPy's form differs: ``"int64"`` (integer inputs
    computed as int64, as PyTorch's ``sum``, where NumPy keeps unsigned ones unsigned:
    ``trace``; bools too, as ``vander``'s), ``"default_float"`` (integer and bool inputs
    in PyTorch's default float, where NumPy's form gives JAX's: ``trapezoid``). Tensor operands promote with the input as NumPy's (``kron`` reshapes both
    to one number of dimensions, ``diff``'s ``prepend`` has the input's, so PyTorch's
    lower rank for a 0-d tensor never applies). ``bool_error``: PyTorch's
    ``NotImplementedError`` text refusing a bool input (``trace``), or ``(exception type,
    text, text where a tensor operand is given, which is refused too)`` (``trapezoid``'s
    ``RuntimeError``). ``concat``: the tensor
    operands are joined to the input along a dimension parameter, PyTorch's checks before
    NumPy's: ``(dimension parameter, text where the number of dimensions differs, text
    where another dimension's size does)`` (``diff``'s ``prepend``/``append``).
    ``same_dtype``: the tensor operands must have the input's dtype, PyTorch's
    ``RuntimeError`` text where one has not, ``{0}``/``{1}`` their ScalarType names
    (``isclose``: "Float did not match Long", where NumPy's form promotes). ``python_bool``:
    the result is a Python bool (``allclose``, where NumPy's is a 0-d array).
    ``aliases``: PyTorch's other names of the op (``outer``'s ``ger``). ``input``: the
    input parameter's name (``vander``'s ``x``, ``trapezoid``'s ``y``). ``method``: PyTorch
    has ``Tensor.X`` (not ``vander``, ``trapezoid``). ``exclusive``: two parameters a call
    may not both give (``trapezoid``'s ``x`` and ``dx``: PyTorch's overloads, its
    ``TypeError``). A node of ``None`` in ``nodes``: that case's result has none (``vander``
    with ``N`` 0 or 1: PyTorch fills it). ``scalar_error``: PyTorch's ``IndexError`` text
    refusing a 0-d input, ``{dim}`` the ``dim`` argument (``trapezoid``'s "Dimension
    specified as -1 but tensor has no dimensions"). ``empty_along``: the dimension parameter
    along which an empty input gives zeros of its dtype without that dimension, before any
    other check but the dimension's (``trapezoid``: PyTorch returns before its checks, no
    node). ``torch_grad=False``: PyTorch's backward of the op fails (``vander``'s, "modified
    by an inplace operation", in 2.13), so the samples compare values and nodes, not
    gradients; compat differentiates it. ``numbers``: the input or one tensor operand may
    be a Python number (not both: PyTorch's "invalid combination of arguments"
    ``TypeError``), taken as a 0-d tensor (``isin``'s Scalar overloads; NumPy's form takes
    any array-likes). ``dtype_error``: ``(kinds, text)``, PyTorch's ``RuntimeError``
    refusing an input or tensor operand of those dtype kinds (``"b"`` bool, ``"c"``
    complex), ``{dtype}`` the first such operand's ScalarType name (``isin``'s "Unsupported
    input type encountered for isin(): Bool", where NumPy's form compares any dtypes).
    ``out=False``: PyTorch's ``torch.X`` takes no ``out=`` (``tile``, a Python-level
    composite there: its ``TypeError``). ``exact_out``: PyTorch's ``out=`` must have the
    result's dtype, the text of its ``RuntimeError`` (compat's ``OpDef.exact_out``:
    ``isin``'s "Expected out tensor to have dtype bool, ..."). ``overloads``: PyTorch's
    parser has several signatures for ``torch.X`` (compat's ``OpDef.overloads``: its
    refusals say "received an invalid combination of arguments")."""

    grad_fn: str | None
    params: tuple[TorchParam, ...]
    inplace: bool = False
    aligned: tuple[str, str] | None = None
    ndim: tuple[int, int | None, str] | None = None
    empty_unchecked: bool = False
    method_varargs: str | None = None
    samples: tuple[tuple[tuple[int, ...], tuple[Any, ...]], ...] = ()
    nodes: tuple[tuple[str, Any, str | None], ...] = ()
    promote: str | None = None
    bool_error: str | tuple[type, str, str] | None = None
    concat: tuple[str, str, str] | None = None
    same_dtype: str | None = None
    python_bool: bool = False
    aliases: tuple[str, ...] = ()
    inplace_function: bool = False
    input: str = "input"
    method: bool = True
    exclusive: tuple[str, str] | None = None
    scalar_error: str | None = None
    empty_along: str | None = None
    torch_grad: bool = True
    numbers: bool = False
    dtype_error: tuple[str, str] | None = None
    out: bool = True
    exact_out: str | None = None
    overloads: bool = False

    def __post_init__(self) -> None:
        if self.promote is not None and self.promote not in PROMOTIONS:
            raise ValueError(f"promote={self.promote!r} is not one of {PROMOTIONS}")


#: how a joining row prepares each tensor's shape before PyTorch's ``cat`` checks (see
#: :class:`TorchJoinForm`)
LAYOUTS = ("h", "v", "d", "column")


@dataclass(frozen=True)
class TorchJoinForm:
    """How a joining row reads in PyTorch (``torch=`` on an :class:`ArrayRow` whose function
    joins a sequence of arrays: ``concatenate``, ``stack``, ``hstack``, ...).

    ``grad_fn``: the node (``CatBackward0``: PyTorch runs ``hstack`` and its kin as ``cat``
    of the prepared tensors). ``name``: PyTorch's name where it is not the function's
    (``cat`` for ``concatenate``), ``aliases`` its other names. ``dim``: the dimension
    parameter's name (``None``: the layout fixes the dimension); ``axis``: the form also
    takes it as ``axis=`` (``torch.cat``, ``torch.concatenate``). ``new_dim``: the tensors
    join along a new dimension and must have one shape (``stack``: PyTorch's "stack expects
    each tensor to be equal size"); otherwise PyTorch's ``cat`` checks apply (same number
    of dimensions, sizes equal except along the dimension, a 1-d empty tensor skipped).
    ``layout``: how each tensor's shape is prepared first (``"h"``: at least 1-d, joined
    along 0 when the first is 1-d, else 1; ``"v"``: at least 2-d, along 0; ``"d"``: at least
    3-d, along 2; ``"column"``: a tensor of fewer than 2 dimensions as a column, along 1).
    ``samples``: compat's test cases, the shapes of the tensors joined (and the dimension,
    where the row has one)."""

    grad_fn: str
    name: str | None = None
    aliases: tuple[str, ...] = ()
    dim: str | None = "dim"
    axis: bool = False
    new_dim: bool = False
    layout: str | None = None
    samples: tuple[tuple[tuple[tuple[int, ...], ...], tuple[Any, ...]], ...] = ()

    def __post_init__(self) -> None:
        if self.layout is not None and self.layout not in LAYOUTS:
            raise ValueError(f"layout={self.layout!r} is not one of {LAYOUTS}")
        if self.layout is not None and (self.dim is not None or self.new_dim):
            raise ValueError("a layout fixes the dimension: no dim and no new dimension")


#: the declared array rows, name -> row, in declaration order
ARRAY_ROWS: dict[str, ArrayRow] = {}


class ArrayRow:
    """One array function declared for both libraries (see the module docstring): the
    ``funcgrad.numpy`` ``function`` (its name is the row's) and PyTorch's form (a
    :class:`TorchJoinForm` for a function joining a sequence of arrays).
    ``method``: the function is also the array method of its name (``x.trace()``)."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        torch: TorchArrayForm | TorchJoinForm,
        method: bool = False,
    ) -> None:
        name = function.__name__
        if name in ARRAY_ROWS:
            raise ValueError(f"array row {name!r} declared twice")
        self.name = name
        self.function = function
        self.torch = torch
        self.method = method
        ARRAY_ROWS[name] = self

    def __repr__(self) -> str:
        return f"ArrayRow({self.name})"


def array_methods() -> dict[str, Callable[..., Any]]:
    """The array methods the rows declare (``method=True``), name -> function: the tracer's
    method table reads them."""
    return {n: r.function for n, r in ARRAY_ROWS.items() if r.method}
