"""The :class:`Primitive`: one object per primitive carrying all of its rules.

Rule signatures (``params`` are the equation's keyword parameters):

* ``abstract_eval(*avals, **params) -> Aval`` (a list of avals when
  ``multiple_results``); raises ``TypeError``/``ValueError`` naming the primitive.
* ``lower(*values, **params)`` — the ``jax.lax`` implementation on jax arrays.
* ``jvp(primals, tangents, **params) -> (out, tangent_out)``; tangents may be
  :class:`~funcgrad.core.zeros.Zero`; lists for multiple results.
* ``vjp(ct, *primals, out=..., **params) -> tuple`` of cotangents, one per
  input (``Zero``/``None`` where there is none). For call-like primitives
  ``vjp_fwd(*primals, **params) -> (outs, residuals)`` and
  ``vjp_bwd(residuals, cts, **params) -> cts_in`` replace ``vjp``.
* ``batch(args, dims, **params) -> (out, out_dim)``; a dim is an int or ``None``.
* ``host(*values, **params)`` — the evaluation on host values (NumPy arrays and
  Python scalars; :mod:`funcgrad.core.host`), for eager work too cold or small for
  XLA. Optional: an equation without one runs compiled. ``host_join`` marks lax-style
  n-ary operations whose array operands are cast to one dtype first (``"weak"``: only
  the weakly typed ones, for an operation that takes two strong dtypes, ``dot_general``).
* ``jet(primals, series, **params) -> (out, series_out)`` — Taylor mode
  (:mod:`funcgrad.taylor`): each input's series is ``None`` (zero) or a list of
  coefficients. Optional: without one, the series come from the JVP rule.

Rules are written with funcgrad's own operations, so what they emit can be
transformed again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from funcgrad.core.ir import Aval

RULES = ("abstract_eval", "lower", "jvp", "vjp", "batch")


@dataclass(frozen=True)
class TorchForm:
    """How a primitive's row reads in PyTorch (``torch=`` on the row): compat builds its
    op from it; funcgrad itself never reads it.

    ``name`` is PyTorch's name where it is not the primitive's (``logistic`` is
    ``sigmoid``, ``max`` is ``maximum``), ``aliases`` its other spellings (``arcsin``),
    ``grad_fn`` the backward node's name (``None``: no node, as for comparisons) and
    ``saves`` what that node keeps (``"result"`` or the input: ``None``). ``promote`` is
    how PyTorch types the result, where NumPy's promotion differs: ``"default_float"``
    (integer and bool results become PyTorch's default float dtype, where the numpy form
    gives JAX's float), ``"keep"`` (the input's dtype kept, integers and bools as the
    numpy form treats them: ``abs``, ``floor``) or ``"result_type"`` (PyTorch's promotion
    of the operands, integers kept: ``add``, ``maximum``).

    A unary row's op is generated whole (``torch.X`` and aliases, ``Tensor.X``,
    ``Tensor.X_``, ``out=``): ``inplace_function=False`` where PyTorch has no
    ``torch.X_`` (or the spellings that have one: ``torch.abs_``, no ``torch.absolute_``), ``inplace_grad_fn`` where it has no derivative for ``Tensor.X_`` (its
    node of that name raises), ``functional``/``module`` the ``nn.functional.X``
    docstring and the ``nn`` module's (class name, docstring) of a plain activation. A
    binary row gives compat's implementation (``alpha=``, ``rounding_mode=``) its names,
    node and promotion. PyTorch's forms always name their parameters ``input`` (and
    ``other``), where the numpy forms say ``x`` (``x1``, ``x2``; positional-only).
    ``complex_error`` is PyTorch's ``NotImplementedError`` text for a complex operand
    where it is not the one compat derives from a real-only row (``{dtype}``: PyTorch's
    dtype name), or where PyTorch refuses what the primitive takes (``sign``).
    A binary row's ``grad_fn`` is the node of its all-tensor form; ``scalar_other`` that of
    its form with a Python number for ``other`` (``pow(x, 2.0)``: ``PowBackward0``), and
    ``scalar_input`` for ``input`` (``pow(2.0, x)``: ``PowBackward2``), where PyTorch's
    differ (a unary row's ``scalar_other``: its form with a number argument,
    ``round(x, decimals=1)``: ``RoundBackward1``). ``inplace=False`` where PyTorch has no ``Tensor.X_`` at all (``fmax``);
    ``bool_error`` its ``RuntimeError`` text for a bool operand where the numpy form takes
    bools (``neg``: ``negative`` of a bool is refused by funcgrad with its own text).
    Either refusal is an ``(exception type, text)`` pair where PyTorch raises another
    type (``deg2rad`` of a complex tensor: ``RuntimeError``; ``trunc`` of a bool:
    ``NotImplementedError``). ``special`` names the op's spellings in ``torch.special``
    (``logistic``: ``expit``; ``digamma``: ``digamma``, ``psi``), which compat generates
    from the same op (``torch.special.X`` of a unary row is ``torch.X`` with its node).
    ``same``: the form returns its input itself, after its refusals (``torch.positive(x)
    is x``: no node, no copy), where the numpy form returns a new array. ``tensors_only``:
    a Python number for either operand is a ``TypeError`` (``torch.gcd(x, 6)``). ``kernel``:
    the name PyTorch's kernel refusals give where it is not the op's (``lshift``).
    ``number_first``: PyTorch takes a Python number for ``input`` too (a ``Scalar self``
    overload: ``torch.add(2, x)``; a row with a ``scalar_input`` node says it), where its
    other binary ops refuse one with a ``TypeError``. ``input_derivative=False``: PyTorch
    has no derivative in ``input`` (``igamma``: its backward raises); compat keeps
    funcgrad's, so the op's samples compare values only. ``forward_ad=False``: PyTorch has
    no forward-mode derivative (``igamma``), so compat's forward AD raises as PyTorch's.
    ``promote="same"``: operands of one float dtype only, PyTorch's kernel refusing the
    rest (``complex``). ``method=False``: PyTorch has no ``Tensor.X`` (``torch.complex``).
    ``condition_error``: a ternary row's ``RuntimeError`` text for a first operand that is
    not bool, where the numpy form tests it against zero (``where``; ``{dtype}``: PyTorch's
    dtype name). ``method_self``: the operand that is ``self`` of ``Tensor.X`` where it is
    not the first (``Tensor.where(condition, other)``: 1). ``nan_value``: what PyTorch's
    kernel gives at a NaN input where the primitive gives NaN (``sign``: 0).
    ``bool_kept``: PyTorch gives a bool operand's values back where the numpy form refuses
    bools (``sign``).
    """

    grad_fn: str | None
    name: str | None = None
    aliases: tuple[str, ...] = ()
    saves: str | None = None
    promote: str = "default_float"
    inplace_function: bool | tuple[str, ...] = True
    inplace_grad_fn: str | None = None
    functional: str | None = None
    module: tuple[str, str] | None = None
    complex_error: str | tuple[type[Exception], str] | None = None
    inplace: bool = True
    bool_error: str | tuple[type[Exception], str] | None = None
    scalar_other: str | None = None
    scalar_input: str | None = None
    special: tuple[str, ...] = ()
    same: bool = False
    tensors_only: bool = False
    kernel: str | None = None
    number_first: bool = False
    input_derivative: bool = True
    forward_ad: bool = True
    condition_error: str | None = None
    method_self: int = 0
    method: bool = True
    nan_value: float | None = None
    bool_kept: bool = False

    def __post_init__(self) -> None:
        if self.scalar_input is not None and not self.number_first:
            raise ValueError(f"{self.scalar_input}: a scalar_input node needs number_first=True")


REGISTRY: dict[str, Primitive] = {}


class Primitive:
    """A primitive operation and its rules."""

    #: (a :class:`Composite` row says True)
    composite = False

    def __init__(
        self,
        name: str,
        *,
        family: str = "",
        multiple_results: bool = False,
        differentiable: bool = True,
        forward_differentiable: bool = True,
        reverse_differentiable: bool = True,
        vjp_fwd_active: bool = False,
        effectful: bool = False,
        register: bool = True,
    ) -> None:
        self.name = name
        self.family = family
        self.multiple_results = multiple_results
        #: False for primitives whose outputs carry no derivative (comparisons,
        #: argmax, iota, random bits): their JVP/VJP are symbolic zeros.
        self.differentiable = differentiable
        #: False where a differentiable primitive has no JVP by design (a ``custom_vjp``
        #: call, as in JAX): forward mode raises, the registry tests check reverse only.
        self.forward_differentiable = forward_differentiable
        #: False where it has no VJP by design (``while_loop``, as in JAX): reverse mode
        #: raises, the registry tests check forward only.
        self.reverse_differentiable = reverse_differentiable
        #: True when ``vjp_fwd`` wants to know which inputs need a cotangent (it receives
        #: them as ``active=``); call-like primitives use it to prune their residuals.
        self.vjp_fwd_active = vjp_fwd_active
        #: True for a primitive kept for what it does, not its outputs (``debug_callback``):
        #: dead-code elimination never removes it and CSE never merges two of them.
        self.effectful = effectful
        self.abstract_eval: Callable[..., Any] | None = None
        self.lower: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None
        self.vjp: Callable[..., Any] | None = None
        self.vjp_fwd: Callable[..., Any] | None = None
        self.vjp_bwd: Callable[..., Any] | None = None
        self.batch: Callable[..., Any] | None = None
        #: the Taylor-mode rule (optional, see the module docstring)
        self.jet: Callable[..., Any] | None = None
        #: how the results' shardings follow from the operands' over explicit mesh axes
        #: (optional: ``rule(in_avals, out_avals, **params) -> out_avals``; see
        #: ``core/sharding_types.py``, whose family defaults serve the rest)
        self.sharding_rule: Callable[..., Any] | None = None
        #: the host tier's rule (optional, see the module docstring)
        self.host: Callable[..., Any] | None = None
        #: the host rule wants its array operands cast to one dtype (lax's binary ops);
        #: ``"weak"``: only its weakly typed operands (it takes mixed strong dtypes)
        self.host_join: bool | str = False
        #: optional: ``host_splat(uniform, **params) -> rule | None``, a host rule
        #: specialised to operands every element of which is one constant
        #: (``uniform[i]``, a 0-d array, or ``None``: a zero broadcast to a select's
        #: shape), taking the other operands only; ``None`` where it has none for them
        self.host_splat: Callable[..., Any] | None = None
        #: optional: ``host_view(operand_shape, **params) -> shape``, the shape of a view
        #: of the operand that NumPy broadcasts to the result (``broadcast_in_dim``: the
        #: operand with size-1 dimensions), which a plan computes instead where every
        #: reader of the result broadcasts (``host_broadcasts``)
        self.host_view: Callable[..., Any] | None = None
        #: the host rule broadcasts operands of the result's rank (or 0-d) by NumPy's
        #: rules (lax's binary operations: their size-1 dimensions broadcast)
        self.host_broadcasts: bool = False
        #: optional: ``host_reshape(operand_shape, **params) -> shape``: the result holds
        #: the operand's elements in C order at that shape (``reshape``; ``stop_gradient``
        #: at the operand's own), so a plan collapses chains of such steps
        #: (:mod:`funcgrad.core.host_aliases`)
        self.host_reshape: Callable[..., Any] | None = None
        #: optional, for equations holding sub-programs: ``prune_outputs(used, **params)``
        #: gives the params of the same equation with only the ``used`` outputs (DCE)
        self.prune_outputs: Callable[..., dict[str, Any]] | None = None
        #: callable(rng) -> list of test Examples, used by the registry tests
        self.examples: Callable[..., list] | None = None
        #: the real input domain ``(lo, hi)`` the tests draw from (funcgrad's examples and
        #: value tests, compat's op-table samples): declared once, here
        self.domain: tuple[float, float] | None = None
        #: for rules that are holomorphic: the ``(lo, hi)`` of the real and imaginary
        #: parts of its complex test examples (``None``: no complex examples)
        self.complex_domain: tuple[float, float] | None = None
        #: the public forms this primitive declares, namespace -> names
        #: (``{"numpy": ("arccosh", "acosh"), "lax": ("acosh",)}``), which those
        #: namespaces generate from it; ``doc`` is their docstring's first words, ``docs``
        #: a namespace's own where it differs (lax's "arc sine", numpy's "inverse sine")
        self.public: dict[str, tuple[str, ...]] = {}
        self.doc: str | None = None
        self.docs: dict[str, str] = {}
        #: how the numpy form prepares its operands before binding: ``"inexact"`` (bool and
        #: integers promote to float), ``"keep"`` (the dtype kept; a unary form refuses
        #: bool), ``"float_or_id"`` (identity on integers and bools), ``"id_unsigned"``
        #: (identity on unsigned integers and bools), ``"intbool"`` (the dtype kept,
        #: integer or bool only) or, for a declared composite whose function looks at the
        #: dtype itself, ``"as_is"`` (any operand, unchanged: ``signbit``)
        self.numpy_promotion = "inexact"
        #: a numpy name's own preparation where it is not ``numpy_promotion`` (declared as
        #: ``"numpy:logical_and=logical"``): ``"logical"`` tests the operands against zero
        #: first, so ``logical_and`` and ``bitwise_and`` are two forms of one row
        self.numpy_modes: dict[str, str] = {}
        #: a binary numpy form's bool operands: ``None`` (the primitive takes them),
        #: ``"error"``, or the name of the primitive bound instead (``add`` -> ``"or"``)
        self.numpy_bool: str | None = None
        #: the number of operands of a row with public forms (which generator builds them)
        self.arity = 1
        #: the input domain of each operand (``domain`` is the first's)
        self.domains: tuple[tuple[float, float], ...] | None = None
        #: the row's PyTorch form (:class:`TorchForm`), which compat builds its op from
        self.torch: TorchForm | None = None
        #: the parameter names of its lax and ``scipy.special`` forms where they are not
        #: ``x`` (``x``, ``y``): ``igamma``'s ``a``, ``x`` (the numpy forms' are positional)
        self.operands: tuple[str, ...] | None = None
        if register:
            if name in REGISTRY:
                raise ValueError(f"primitive {name!r} registered twice")
            REGISTRY[name] = self

    def __repr__(self) -> str:
        return self.name

    def missing_rules(self) -> list[str]:
        """Names of rule slots this primitive has not filled."""
        out = []
        for r in RULES:
            if r == "vjp":
                no_vjp = self.vjp is None and (self.vjp_fwd is None or self.vjp_bwd is None)
                if no_vjp and self.differentiable:
                    out.append(r)
                continue
            if r == "jvp" and not self.differentiable:
                continue
            if getattr(self, r) is None:
                out.append(r)
        return out

    def abstract_eval_avals(self, avals: list[Aval], params: dict[str, Any]) -> list[Aval]:
        if self.abstract_eval is None:
            raise NotImplementedError(f"{self.name}: no abstract evaluation rule")
        out = self.abstract_eval(*avals, **params)
        return list(out) if self.multiple_results else [out]

    # decorator helpers: ``@sin_p.def_jvp`` etc.
    def def_abstract_eval(self, f: Callable) -> Callable:
        self.abstract_eval = f
        return f

    def def_lower(self, f: Callable) -> Callable:
        self.lower = f
        return f

    def def_jvp(self, f: Callable) -> Callable:
        self.jvp = f
        return f

    def def_vjp(self, f: Callable) -> Callable:
        self.vjp = f
        return f

    def def_batch(self, f: Callable) -> Callable:
        self.batch = f
        return f

    def def_host(self, f: Callable) -> Callable:
        self.host = f
        return f

    def def_examples(self, f: Callable) -> Callable:
        self.examples = f
        return f

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply this primitive under the current interpreter (``interp.bind``)."""
        return _interpreter_bind(self, *args, **params)


def public_names(name: str, public: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """A row's ``public=`` (``"numpy"``: its form named as the row; ``"numpy:radians"``:
    named otherwise) as namespace -> names, in order."""
    out: dict[str, tuple[str, ...]] = {}
    for form in public:
        ns, _, named = form.partition(":")
        out[ns] = (*out.get(ns, ()), named or name)
    return out


#: the declared composites (:class:`Composite`), name -> row
COMPOSITES: dict[str, Composite] = {}


class Composite:
    """A declared composite: a public elementwise function built from primitives, with no
    rules of its own (``exp2``, ``log2``, ``hypot``, ``fmax``), declared once as a row of
    the same shape as a primitive's (``funcgrad/primitives/composites.py``).

    ``fn`` takes the operands as the numpy form prepares them (``numpy_promotion``, as for
    a primitive's row: promoted, broadcast) and binds primitives; ``bind`` calls it, so
    the namespaces' generators build a composite's forms as they build a primitive's
    (``public``, ``doc``/``docs``, ``arity``, ``domains``), and compat builds its op from
    ``torch`` (:class:`TorchForm`), calling the row's numpy form. ``numpy_complex`` is how
    the numpy form refuses a complex operand where ``fn`` takes none: ``"type"`` (a
    ``TypeError``, as ``i0``) or ``"value"`` (a ``ValueError``, as ``hypot``); ``allowed``
    is ``"real_float"`` then (compat derives PyTorch's refusal from it, as for a primitive),
    and ``"int"`` for a row of integers only (``numpy="integer"``: ``gcd``, bools refused;
    ``"int"``: ``right_shift``, bools promoted).
    ``numpy_keywords``: the binary numpy form's parameters are ``x1``, ``x2``, passable by
    name (``jnp.fmax`` is a function, where ``jnp.hypot`` is a ufunc of ``(x, y, /)``);
    ``numpy_errors_as`` the name the numpy form's operand errors give where JAX's give
    another (``fmax``'s name ``greater``, the function JAX's calls first).

    A ternary row (``arity=3``: ``where``) says ``numpy="condition"``: its first operand is
    tested against zero (any dtype), the others promoted together, all three broadcast.
    ``alone`` names the op a call with the first operand alone is, in both libraries
    (``where(condition)`` is ``nonzero(condition)``'s tuple of indices), which the module
    defining that op passes to the generator (``declared_form(..., alone=nonzero)``).
    ``numpy="bounds"`` (``clamp``'s numpy form ``clip``): the second and third operands are
    optional bounds, applied by numpy's ``maximum`` and ``minimum``. ``operands`` names the
    lax and ``scipy.special`` forms' parameters, as a primitive's row does (``min``, ``x``,
    ``max``).
    """

    #: a composite binds no primitive of its own name (the registry tests skip it)
    composite = True

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        arity: int = 1,
        public: tuple[str, ...],
        doc: str,
        docs: dict[str, str] | None = None,
        numpy: str = "inexact",
        numpy_complex: str | None = None,
        numpy_keywords: bool = False,
        numpy_errors_as: str | None = None,
        alone: str | None = None,
        operands: tuple[str, ...] | None = None,
        domains: tuple[tuple[float, float], ...] | None,
        torch: TorchForm | None = None,
    ) -> None:
        if name in REGISTRY or name in COMPOSITES:
            raise ValueError(f"composite {name!r} declared twice (or named as a primitive)")
        self.name = name
        self.fn = fn
        self.arity = arity
        #: ``"numpy"`` (named as the row) or ``"numpy:radians"``, as a primitive's ``public=``
        self.public = public_names(name, public)
        self.doc = doc
        self.docs = docs or {}
        self.numpy_promotion = numpy
        self.numpy_modes: dict[str, str] = {}
        self.numpy_bool: str | None = None
        self.numpy_complex = numpy_complex
        self.numpy_keywords = numpy_keywords
        self.numpy_errors_as = numpy_errors_as
        self.alone = alone
        self.operands = operands
        integers = numpy in ("int", "integer")
        self.allowed = "int" if integers else "real_float" if numpy_complex else "inexact"
        self.domains = domains
        self.domain = domains[0] if domains else None  # (none for integer rows)
        self.torch = torch
        COMPOSITES[name] = self

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any) -> Any:
        """The composite of already prepared operands."""
        return self.fn(*args)


def _no_interpreter(prim: Primitive, *args: Any, **params: Any) -> Any:
    raise RuntimeError(f"{prim.name}: funcgrad.core.interp is not loaded, nothing can bind")


#: ``funcgrad.core.interp.bind``, installed by that module when it loads (it sits above
#: this one: the interpreters dispatch on primitives, so this module cannot import them)
_interpreter_bind: Callable[..., Any] = _no_interpreter


def set_interpreter_bind(fn: Callable[..., Any]) -> None:
    """Install the function :meth:`Primitive.bind` calls (``funcgrad.core.interp``)."""
    global _interpreter_bind
    _interpreter_bind = fn


class Example:
    """A test case for the registry tests: concrete args and params.

    ``diff_argnums`` are the float inputs to differentiate; ``smooth`` marks
    examples whose second derivatives are checked too; ``batchable`` says the
    batching test may add a batch axis to each arg.
    """

    def __init__(
        self,
        args: list,
        params: dict | None = None,
        diff_argnums: tuple[int, ...] | None = None,
        smooth: bool = True,
        batch_argnums: tuple[int, ...] | None = None,
        rtol: float = 1e-6,
        atol: float = 1e-6,
    ) -> None:
        self.args = list(args)
        self.params = params or {}
        self.diff_argnums = diff_argnums
        self.smooth = smooth
        self.batch_argnums = batch_argnums
        self.rtol = rtol
        self.atol = atol

    def __repr__(self) -> str:
        shapes = [getattr(a, "shape", a) for a in self.args]
        return f"Example({shapes}, {self.params})"
