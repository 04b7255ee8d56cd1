"""A reduction's row: its public forms in funcgrad and compat declared once.

The elementwise rows (:class:`~funcgrad.core.primitive.Primitive` and ``Composite`` with a
``TorchForm``) say how one or two operands are prepared; a reduction also takes the axes it
reduces, and NumPy's and PyTorch's conventions around them differ (``axis``/``keepdims``
against ``dim``/``keepdim``, the result's dtype, ``initial=``/``where=``, empty
reductions). A :class:`Reduction` row, declared beside its primitive
(``funcgrad/primitives/reductions.py``), names the forms that namespaces generate from it
(``public=``: ``numpy``'s function and aliases, ``lax``'s ``reduce_X``) and says each
difference as a field, for NumPy (``numpy=``, ``identity``, ``combine``, ``on_bool``) and
for PyTorch (``torch=``, a :class:`TorchReduction`), rather than two copies of the
function. funcgrad never reads ``torch``; compat builds ``torch.X``, ``Tensor.X`` and
``out=`` from it at import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from funcgrad.core.primitive import public_names

#: the kinds of numpy form a row may declare (see :class:`Reduction`)
NUMPY_KINDS = (
    "fold",
    "average",
    "extremum",
    "logical",
    "index",
    "moment",
    "cumulative",
    "logsumexp",
    "normalize",
)
#: how PyTorch may type a reduction's result (see :class:`TorchReduction`)
TORCH_PROMOTIONS = ("int64", "float", "keep", "bool", "index", "real", "inexact")


@dataclass(frozen=True)
class TorchReduction:
    """How a reduction row reads in PyTorch (``torch=`` on the row).

    ``grad_fn`` is the node of the form given no ``dim`` (``SumBackward0``; ``None``: no
    node, as ``any``), ``dim_grad_fn`` the node where a ``dim`` is given, where PyTorch
    names another (``SumBackward1``). ``name`` is PyTorch's name where it is not the
    row's: the ``max`` row is ``torch.amax`` (PyTorch's ``max`` with a ``dim`` returns
    values and indices, another op). ``dim`` is the default of ``dim`` (``None``; ``()``
    for ``amax``, where no dimension means every one); ``dtype``: the form takes
    ``dtype=``. ``promote`` is how PyTorch types the result where NumPy differs:
    ``"int64"`` (bool and integer inputs reduce as int64, where NumPy takes JAX's default
    integer and keeps unsigned ones unsigned), ``"float"`` (bool and integer inputs are
    refused, where NumPy's result is their inexact type), ``"keep"`` (the input's dtype),
    ``"bool"`` (a bool result, uint8 kept as uint8, where NumPy's is bool), ``"index"``
    (int64 indices, where NumPy's are JAX's default integer; one ``dim`` or none, the
    input flattened, ``keepdim`` kept then too) or ``"real"`` (floats and complex numbers
    only, refused with ``int_error``'s ``RuntimeError`` text; a complex input gives its real
    dtype, as NumPy's; ``var``, ``std``) or ``"inexact"`` (bools and integers computed in
    PyTorch's default float, floats and complex numbers kept: ``logsumexp``). ``kernel``
    names the kernel whose ``NotImplementedError`` refuses a bool, integer or complex input
    of a ``"float"`` row (``softmax``: ``"softmax_lastdim_kernel_impl" not implemented for
    'Long'``, ``softmax_kernel_impl`` where ``dim`` is not the last; a ``dtype=`` is applied
    first, and an empty input runs no kernel), where the ``"float"`` default is ``mean``'s
    ``RuntimeError``.

    ``correction``: the form is PyTorch's ``X(input, dim=None, unbiased=None,
    keepdim=False, *, correction=None)`` (``var``, ``std``): the divisor is ``N - correction``
    with ``correction`` 1 by default (``unbiased=False``: 0; a bool second argument is
    ``unbiased``; both given are refused), where NumPy's ``ddof`` is 0 by default; a
    divisor at or below 0 divides by 0 (``inf``, or NaN for a zero sum), where NumPy's form
    gives NaN. ``inplace``: PyTorch has ``Tensor.X_`` (``cumsum_``).

    ``empty_dim_all=False``: ``dim=[]`` reduces no dimension (``any``, ``all``), where
    PyTorch's other reductions reduce every one (and NumPy's ``axis=()`` none).
    ``one_dim``: PyTorch's form takes one ``int`` dimension (``prod``, ``argmax``), where
    NumPy's ``prod`` takes a tuple (compat's ``prod`` takes either; its ``argmax`` refuses
    a tuple as PyTorch). ``no_identity``: the exception type of PyTorch's refusal to reduce
    every element of an empty tensor (``RuntimeError`` for ``amax``, ``IndexError`` for
    ``argmax``; an empty ``dim`` is an ``IndexError``; NumPy's forms raise a
    ``ValueError``). ``complex_error``: PyTorch's refusal of a complex input where the
    row's primitive raises a ``TypeError`` (its ``NotImplementedError`` text, or an
    ``(exception type, text)`` pair); ``bool_error``: its ``RuntimeError`` for a bool
    input, where NumPy's form takes bools (``argmax``). ``domain``: the ``(lo, hi)``
    compat's test samples draw from, where not (-2, 2) (``prod``). ``special``: the
    names the op also has in ``torch.special`` (``logsumexp``, ``softmax``).
    ``functional``: ``nn.functional`` has the form as ``X(input, dim=None, _stacklevel=3,
    dtype=None)``, where no ``dim`` warns and picks PyTorch's legacy one (0 for 0-, 1- and
    3-d inputs, else 1: ``softmax``, ``log_softmax``).
    """

    grad_fn: str | None
    dim_grad_fn: str | None = None
    name: str | None = None
    dim: tuple[int, ...] | None = None
    dtype: bool = True
    promote: str = "int64"
    one_dim: bool = False
    empty_dim_all: bool = True
    no_identity: type[Exception] | None = None
    complex_error: str | tuple[type[Exception], str] | None = None
    bool_error: str | None = None
    domain: tuple[float, float] = (-2.0, 2.0)
    correction: bool = False
    int_error: str | None = None
    inplace: bool = False
    dim_required: bool = False
    kernel: str | None = None
    special: tuple[str, ...] = ()
    functional: bool = False

    def __post_init__(self) -> None:
        if self.promote not in TORCH_PROMOTIONS:
            raise ValueError(f"promote={self.promote!r}: not one of {TORCH_PROMOTIONS}")


#: the declared reductions, name -> row, in declaration order
REDUCTIONS: dict[str, Reduction] = {}


class Reduction:
    """One reduction declared for both libraries (see the module docstring).

    ``primitive`` is the row's primitive (``None`` for a composite's row) and ``reduce`` its
    lax-level wrapper
    (``reduce_sum(x, axes)``, which binds nothing for no axes), which the forms bind. ``public`` lists the forms (``"numpy"``, ``"numpy:amax"``,
    ``"lax:reduce_max"``); ``doc`` their docstring's first words. ``numpy`` is the kind of
    its numpy form, each a signature and a convention of ``jax.numpy``:

    * ``"fold"`` (``sum``, ``prod``: a fold from ``identity``): ``dtype=``, ``initial=`` (joined by ``combine``),
      ``where=`` (masked elements become ``identity``), ``promote_integers=`` (bools and
      small integers reduce as the default integer);
    * ``"average"`` (``mean``): ``dtype=``, ``where=``; the result is the input's inexact
      type;
    * ``"extremum"`` (``max``, ``min``): ``initial=`` (joined by ``combine``), ``where=``
      only with ``initial=``; no identity, so an empty reduction is refused (``identity``
      is the masked elements' fill: ``"lowest"``/``"highest"`` of the dtype); bools reduce
      by ``on_bool`` (the ``(primitive, combine)`` of ``or`` for ``max``, as NumPy);
    * ``"logical"`` (``any``, ``all``): the operand tested against zero first, where the
      lax form reduces it bitwise as it is; ``where=`` fills ``identity``;
    * ``"index"`` (``argmax``, ``argmin``): one ``axis`` or none (the array flattened),
      ``keepdims``; indices of JAX's default integer type, bools compared as integers.
      Its lax form is ``(operand, axis, index_dtype)``, as ``jax.lax``'s;
    * ``"moment"`` (``var``, ``std``): the mean square deviation, ``ddof=``/``correction=``
      (not both), ``dtype=``, ``where=``, ``mean=`` (a given mean); the result's dtype is
      the input's inexact real one; NaN where the divisor ``N - ddof`` is not positive.
      ``finish`` is applied to it (``std``'s square root; such a row wants an inexact
      ``dtype=``);
    * ``"cumulative"`` (``cumsum``, ``cumprod``; ``cummax``, ``cummin`` have lax forms
      only): a scan along one ``axis`` (the flattened array when ``None``), ``dtype=``,
      bools as the default integer; ``reduce`` is ``(x, axis, reverse)``, and the lax form
      ``(operand, axis=0, reverse=False)``, as ``jax.lax``'s;
    * ``"logsumexp"`` and ``"normalize"`` (``logsumexp``; ``softmax``, ``log_softmax``): rows
      of a composite, with no primitive: ``reduce`` is the function, with ``jax.nn``'s
      conventions (``(x, axis, ..., where=)``: integers promoted to floats; ``where=``'s
      masked elements left out), and the forms are ``funcgrad.nn``'s and
      ``funcgrad.scipy.special``'s (``funcgrad/nn/_axis_forms.py``): ``logsumexp``'s
      ``(a, axis=None, b=None, keepdims=False, return_sign=False, where=None)`` in both (one
      function, as JAX's), a softmax's ``(x, axis=-1, where=None)`` in ``nn`` and
      ``(x, /, *, axis=None)`` in ``scipy.special``.

    The lax form (``reduce_X(operand, axes)``) binds ``primitive`` on the operand as given
    (axes a sequence, none of NumPy's promotions; ``on_bool``'s for bools, as JAX's
    ``reduce_max`` of bools is ``reduce_or``). ``docs`` holds a namespace's own
    docstring where it differs (lax's ``reduce_or`` is bitwise). ``torch`` is the
    :class:`TorchReduction`. ``nan``: the numpy form leaves NaNs out (``nansum``: a ``"fold"``
    taking them as its identity; ``nanmean``: an ``"average"`` not counting them).
    ``method``: the numpy form is also an array method (``x.sum()``; ``jax.Array`` has no
    ``nansum``).
    """

    def __init__(
        self,
        name: str,
        primitive: Any,
        reduce: Callable[..., Any],
        *,
        public: tuple[str, ...],
        doc: str,
        docs: dict[str, str] | None = None,
        numpy: str,
        identity: Any,
        combine: Callable[..., Any] | None = None,
        on_bool: tuple[Any, Callable[..., Any]] | None = None,
        finish: Callable[..., Any] | None = None,
        nan: bool = False,
        method: bool = True,
        torch: TorchReduction | None = None,
    ) -> None:
        if name in REDUCTIONS:
            raise ValueError(f"reduction {name!r} declared twice")
        if numpy not in NUMPY_KINDS:
            raise ValueError(f"{name}: numpy={numpy!r} is not one of {NUMPY_KINDS}")
        self.name = name
        self.primitive = primitive
        self.reduce = reduce
        self.public = public_names(name, public)
        self.doc = doc
        self.docs = docs or {}
        self.numpy = numpy
        self.identity = identity
        self.combine = combine
        self.on_bool = on_bool
        self.finish = finish
        self.nan = nan
        self.method = method
        self.torch = torch
        REDUCTIONS[name] = self

    def __repr__(self) -> str:
        return f"Reduction({self.name})"


def form_doc(row: Reduction, namespace: str) -> str:
    """The docstring of ``row``'s forms in ``namespace``: its own there, else ``doc``."""
    return row.docs.get(namespace, row.doc)


def reduction_forms(namespace: str) -> dict[str, Reduction]:
    """The forms the reduction rows declare in ``namespace`` (``"numpy"``, ``"lax"``),
    name -> row; that namespace generates them."""
    return {n: r for r in REDUCTIONS.values() for n in r.public.get(namespace, ())}
