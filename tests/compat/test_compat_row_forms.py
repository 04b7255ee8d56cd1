"""Every form an op-table row declares exists on compat as on real PyTorch, of the same
kind; nothing is listed by hand (the rows and PyTorch's namespaces are the lists).

A row yields ``torch.X`` (or ``torch.<module>.X``) and its aliases, ``Tensor.X``,
``Tensor.X_``, ``torch.X_``, and for the plain activations ``nn.functional.X`` and the
``nn`` module; each must be exported (``__all__`` where the namespace has one) and be a
callable where PyTorch's is, a class where PyTorch's is. The generated activation forms
also keep their row's docstring, PyTorch's parameter names, and compute PyTorch's values.
That every name compat exported before is still there is the coverage page's check
(test_compat_coverage.py renders docs/compat_coverage.md again).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch
import compat.torch.nn as cnn
import compat.torch.nn.functional as cF
from compat._core.optable import REGISTRY
from funcgrad._compat_contract import torch_rows

ROWS = sorted(REGISTRY)


def _kind(v):
    return "class" if inspect.isclass(v) else "callable" if callable(v) else "value"


def _resolve(lib, path, name):
    obj = lib
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return getattr(obj, name)


@pytest.mark.parametrize("row", ROWS)
def test_row_forms_exist_as_in_pytorch(row, real_torch):
    for path, name in REGISTRY[row].forms():
        ours, theirs = _resolve(ctorch, path, name), _resolve(real_torch, path, name)
        assert _kind(ours) == _kind(theirs), (path, name)
        if path == "torch.nn":
            assert issubclass(ours, cnn.Module) and name in cnn.__all__
        if path == "torch.nn.functional":
            assert name in cF.__all__


# (the plain ``X(input)`` forms; a row's own ``nn.functional`` form, ``softmax``'s, is
# tested with its row: ``test_compat_softmax_rows.py``)
ACTIVATIONS = [n for n in ROWS if isinstance(REGISTRY[n].functional, str)]


def test_rows_declare_activation_forms():
    assert ACTIVATIONS  # or the test below passes vacuously


@pytest.mark.parametrize("row", ACTIVATIONS)
def test_generated_activation_forms_match_pytorch(row, real_torch):
    d = REGISTRY[row]
    f, rf = getattr(cF, row), getattr(real_torch.nn.functional, row)
    assert f.__doc__ == d.functional
    assert list(inspect.signature(f).parameters) == list(inspect.signature(rf).parameters)
    x = np.random.default_rng(0).uniform(-2, 2, (2, 3))
    want = rf(real_torch.tensor(x)).numpy()
    np.testing.assert_allclose(npv(f(ctorch.tensor(x))), want, rtol=1e-12)
    if d.nn_module is not None:
        name, doc = d.nn_module
        m, rm = getattr(cnn, name)(), getattr(real_torch.nn, name)()
        assert type(m).__doc__ == doc and repr(m) == repr(rm)
        np.testing.assert_allclose(npv(m(ctorch.tensor(x))), want, rtol=1e-12)


@pytest.mark.parametrize("prim", torch_rows(), ids=lambda p: p.name)
def test_primitive_torch_form_is_its_compat_row(prim):
    """A funcgrad primitive row's PyTorch form (``torch=``) is the op-table row compat
    builds: PyTorch's name, every alias, the node, and for a unary row the in-place and
    nn forms, so none is declared twice."""
    t = prim.torch
    d = REGISTRY[t.name or prim.name]
    assert d.grad_fn == t.grad_fn
    assert d.aliases == t.aliases
    if prim.arity == 1:
        if callable(d.inplace):  # written by hand (abs_: PyTorch's refusal of a complex self)
            assert t.inplace and d.inplace.__name__ == f"{d.name}_"
        else:
            assert d.inplace is t.inplace
        assert d.inplace_function == (t.inplace and t.inplace_function)
        assert d.functional == t.functional and d.nn_module == t.module
        domains = {s.domain for s in d.samples if s.dtype == "float64"}
        assert domains == {prim.name}  # the samples draw from the row's declared domain
    if t.special:  # torch.special's spellings are the same op (its node, its samples)
        s = REGISTRY[f"special.{t.special[0]}"]
        # (a tensors-only op's spelling words its refusals with its own name: a wrapper)
        assert getattr(s.fn, "__wrapped__", s.fn) is d.fn
        assert s.aliases == t.special[1:] and s.grad_fn == t.grad_fn


def test_special_spellings_are_declared_on_rows(real_torch):
    """No ``torch.special`` row repeats an op a funcgrad row declares: every unary special
    op whose PyTorch node is a row's node is that row's spelling (``expit``: ``sigmoid``)."""
    spelled = {n for p in torch_rows() for n in p.torch.special}
    assert spelled  # (or the check below passes vacuously)
    nodes = {p.torch.grad_fn for p in torch_rows() if p.arity == 1}
    x = real_torch.tensor([0.25, 0.5], dtype=real_torch.float64, requires_grad=True)
    for n, d in REGISTRY.items():
        # (elementwise ops: one tensor, no other argument, as the reduction rows' ``dim``)
        s0 = d.samples[0]
        one = len(s0.tensors) == 1 and not s0.args and not s0.kwargs
        if d.module == "special" and "xlog" not in n and one:
            node = getattr(real_torch.special, n.partition(".")[2])(x).grad_fn.name()
            assert (node in nodes) == (n.partition(".")[2] in spelled), (n, node)


REAL_ONLY = sorted(
    (p.torch.name or p.name)
    for p in torch_rows()
    if p.arity == 1
    and (getattr(p, "allowed", "") == "real_float" or p.torch.complex_error is not None)
)


@pytest.mark.parametrize("op", REAL_ONLY)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_real_only_rows_refuse_complex_as_pytorch(real_torch, op, dtype):
    """A row whose primitive takes real floats only (or whose PyTorch form refuses complex
    operands: ``sign``, ``deg2rad``) raises PyTorch's exception with PyTorch's text on a
    complex tensor (function, method and in-place form), not funcgrad's dtype check."""
    assert REAL_ONLY, "no real-only row declares a PyTorch form"
    _refuses_as_pytorch(real_torch, op, dtype)


def _refuses_as_pytorch(real_torch, op, dtype):
    with pytest.raises((NotImplementedError, RuntimeError)) as want:
        getattr(real_torch, op)(real_torch.ones(2, dtype=getattr(real_torch, dtype)))
    x = ctorch.ones(2, dtype=getattr(ctorch, dtype))
    calls = [lambda: getattr(ctorch, op)(x), lambda: getattr(x, op)()]
    if hasattr(real_torch.Tensor, op + "_"):  # (signbit has no Tensor.signbit_)
        calls.append(lambda: getattr(x, op + "_")())
    for call in calls:
        with pytest.raises(Exception) as got:
            call()
        assert type(got.value) is type(want.value), (op, got.value, want.value)
        assert str(got.value) == str(want.value)


def _raises_as_pytorch(real_torch, form, op):
    """``form(lib)`` raises on PyTorch and on compat the same exception type and text."""
    with pytest.raises((NotImplementedError, RuntimeError, TypeError)) as want:
        form(real_torch)
    with pytest.raises(Exception) as got:
        form(ctorch)
    assert type(got.value) is type(want.value), (op, got.value, want.value)
    assert str(got.value) == str(want.value)


BINARY_REAL_ONLY = sorted(
    (p.torch.name or p.name)
    for p in torch_rows()
    if p.arity == 2
    and (getattr(p, "allowed", "") == "real_float" or p.torch.complex_error is not None)
)


@pytest.mark.parametrize("op", BINARY_REAL_ONLY)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_binary_rows_refuse_complex_as_pytorch(real_torch, op, dtype):
    """A binary op that PyTorch computes for real operands only (the generated ``hypot``,
    ``fmax``, ``copysign``, ``xlogy``; compat's own ``maximum``, ``atan2``, ``fmod``, from
    their primitives' rows) raises PyTorch's exception and text for a complex tensor in
    either place (function, method and in-place form)."""
    assert {"hypot", "fmax", "copysign", "remainder", "xlogy"} <= set(BINARY_REAL_ONLY)
    assert {"maximum", "minimum", "atan2", "fmod"} <= set(BINARY_REAL_ONLY)
    z = {lib: lib.ones(2, dtype=getattr(lib, dtype)) for lib in (ctorch, real_torch)}
    real = "float32" if dtype == "complex64" else "float64"  # (of the complex's width)
    r = {lib: lib.ones(2, dtype=getattr(lib, real)) for lib in (ctorch, real_torch)}
    for first, second in ((z, z), (r, z), (z, r)):
        forms = [lambda lib: getattr(lib, op)(first[lib], second[lib])]
        forms.append(lambda lib: getattr(first[lib], op)(second[lib]))
        if hasattr(real_torch.Tensor, op + "_") and first is z:
            forms.append(lambda lib: getattr(first[lib].clone(), op + "_")(second[lib]))
        for form in forms:
            _raises_as_pytorch(real_torch, form, op)


BOOL_REFUSED = sorted(
    name
    for p in torch_rows()
    if p.arity == 1 and p.torch.bool_error is not None
    for name in ((p.torch.name or p.name), *p.torch.aliases)
)


@pytest.mark.parametrize("op", BOOL_REFUSED)
def test_rows_refuse_bool_as_pytorch(real_torch, op):
    """A row whose PyTorch form refuses bool tensors (``neg``, ``trunc``) raises PyTorch's
    exception type and text for function, method and in-place form."""
    assert {"neg", "trunc"} <= set(BOOL_REFUSED)
    _refuses_as_pytorch(real_torch, op, "bool")


NUMBER_NODES = [
    p
    for p in torch_rows()
    if p.arity == 2 and p.composite and (p.torch.scalar_other or p.torch.scalar_input)
]


@pytest.mark.parametrize("prim", NUMBER_NODES, ids=lambda p: p.name)
def test_number_operand_nodes_match_pytorch(real_torch, prim):
    """A generated binary op with a number for ``other`` or ``input`` names the node its
    row declares for that form, as PyTorch (``xlogy(x, 2.0)``: ``XlogyBackward2``), in
    ``torch`` and in ``torch.special`` where the row spells it there."""
    t = prim.torch
    paths = [("", t.name or prim.name)] + [("special", n) for n in t.special]
    for path, name in paths:
        for number_first in (False, True)[: 2 if t.scalar_input else 1]:
            got = []
            for lib in (ctorch, real_torch):
                x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
                f = getattr(getattr(lib, path) if path else lib, name)
                y = f(2.0, x) if number_first else f(x, 2.0)
                got.append((y.grad_fn.name(), np.asarray(y.detach().tolist())))
            assert got[0][0] == got[1][0], (path, name, number_first)
            np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logaddexp_of_complex_tensors_as_pytorch(real_torch, dtype):
    """``torch.logaddexp`` computes complex tensors (PyTorch's kernel: the imaginary part not
    wrapped, where NumPy's is; NaN, and two infinite real parts of one sign, as PyTorch's),
    with a real tensor in either place, and its gradient (``LogaddexpBackward0``)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, 16) + 1j * rng.uniform(-6, 6, 16)
    y = rng.uniform(-3, 3, 16) + 1j * rng.uniform(-6, 6, 16)
    x[:5] = [complex(-np.inf, 1), complex(np.inf, 1), complex(np.nan, 0), 2 + 1j, 1 + 4j]
    y[:5] = [complex(-np.inf, 2), complex(np.inf, 0.5), 1, 2 + 5j, complex(1, np.nan)]
    real = "float32" if dtype == "complex64" else "float64"
    for a, b, kinds in ((x, y, (dtype, dtype)), (y, x, (dtype, dtype)), (x, y.real, (dtype, real))):
        want, got = (
            lib.logaddexp(
                lib.tensor(a, dtype=getattr(lib, kinds[0])),
                lib.tensor(b, dtype=getattr(lib, kinds[1])),
            )
            for lib in (real_torch, ctorch)
        )
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(npv(got), want.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)
    grads = []
    for lib in (real_torch, ctorch):
        a = lib.tensor(x[5:], dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor(y[5:], dtype=getattr(lib, dtype), requires_grad=True)
        out = a.logaddexp(b)
        assert out.grad_fn.name() == "LogaddexpBackward0"
        (2 * out.real + 3 * out.imag).sum().backward()
        grads.append([npv(a.grad), npv(b.grad)])
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


INTEGER_ONLY = sorted(
    (p.torch.name or p.name)
    for p in torch_rows()
    if p.arity == 2 and getattr(p, "allowed", "") == "int"
)


#: float results' tolerance where a test asks for no exact values (a few ulps)
_ULPS = {"torch.float16": 2e-3, "torch.float32": 1e-6, "torch.float64": 1e-13}


def _same_outcome(real_torch, form, op, approx=False):
    """``form(lib)`` gives on compat what it gives on PyTorch: the same dtype and values
    (exactly, or to a few ulps where ``approx``), or the same exception type and text."""
    try:
        want = form(real_torch)
    except (NotImplementedError, RuntimeError, TypeError):
        _raises_as_pytorch(real_torch, form, op)
        return
    got = form(ctorch)
    assert str(got.dtype) == str(want.dtype), op
    if approx and want.is_floating_point():
        rtol = _ULPS[str(want.dtype)]
        np.testing.assert_allclose(npv(got), want.double().numpy(), rtol=rtol, err_msg=op)
    else:
        assert npv(got).tolist() == want.tolist(), op


@pytest.mark.parametrize("op", INTEGER_ONLY)
def test_integer_rows_as_pytorch(real_torch, op):
    """A binary row of integers only (``gcd``, ``lcm``: ``numpy="integer"``; the shifts)
    computes PyTorch's values and dtype (function, method, in-place forms), refuses bool,
    float and complex tensors with PyTorch's ``NotImplementedError`` (its kernel's name:
    ``"lshift_cpu"``), and takes a number where PyTorch does (``TypeError`` elsewhere)."""
    assert {"gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"} <= set(INTEGER_ONLY)
    a = {lib: lib.tensor([-4, 0, 0, 12, 7, -9]) for lib in (ctorch, real_torch)}
    b = {lib: lib.tensor([6, 0, 3, 18, 0, 6]) for lib in (ctorch, real_torch)}
    forms = [
        lambda lib: getattr(lib, op)(a[lib], b[lib]),
        lambda lib: getattr(lib, op)(a[lib].to(lib.int8), b[lib]),
        lambda lib: getattr(lib, op)(a[lib].to(lib.uint8), b[lib].to(lib.uint8)),
        lambda lib: getattr(a[lib], op)(b[lib]),
        lambda lib: getattr(a[lib].clone(), op + "_")(b[lib]),
        lambda lib: getattr(lib, op)(a[lib].float(), b[lib]),
        lambda lib: getattr(lib, op)(a[lib].bool(), b[lib].bool()),
        lambda lib: getattr(lib, op)(a[lib].to(lib.complex64), b[lib]),
        lambda lib: getattr(a[lib], op)(b[lib].double()),
        lambda lib: getattr(lib, op)(a[lib], 6),
        lambda lib: getattr(lib, op)(3, a[lib]),
    ]
    if hasattr(real_torch, op + "_"):
        forms.append(lambda lib: getattr(lib, op + "_")(a[lib].clone(), b[lib]))
    for form in forms:
        _same_outcome(real_torch, form, op)


FLOAT_KEPT = {
    (p.torch.name or p.name): p
    for p in torch_rows()
    if p.arity == 2
    and getattr(p, "allowed", "") == "real_float"
    and p.torch.promote == "result_type"
}


@pytest.mark.parametrize("op", sorted(FLOAT_KEPT))
def test_real_rows_keeping_integers_refuse_them_as_pytorch(real_torch, op):
    """A real-only binary row whose PyTorch form keeps PyTorch's promotion (``nextafter``,
    ``igamma``, ``igammac``, generated from their primitive rows; compat computed
    integers, bools and numbers) gives PyTorch's values and dtypes for floats and refuses
    the rest with PyTorch's errors (values exact for ``nextafter``; the incomplete gamma
    functions to a few ulps: JAX's and PyTorch's series differ in the ulps)."""
    assert {"nextafter", "igamma", "igammac"} <= set(FLOAT_KEPT)
    approx = FLOAT_KEPT[op].differentiable
    a = {lib: lib.tensor([1.0, 2.0, -0.0, 3.5]) for lib in (ctorch, real_torch)}
    b = {lib: lib.tensor([2.0, 0.0, 1.0, 3.5]) for lib in (ctorch, real_torch)}
    forms = [
        lambda lib: getattr(lib, op)(a[lib], b[lib]),
        lambda lib: getattr(lib, op)(a[lib], b[lib].double()),
        lambda lib: getattr(lib, op)(a[lib].half(), b[lib].half()),
        lambda lib: getattr(a[lib], op)(b[lib]),
        lambda lib: getattr(a[lib].clone(), op + "_")(b[lib]),
        lambda lib: getattr(lib, op)(a[lib].long(), b[lib].long()),
        lambda lib: getattr(lib, op)(a[lib].bool(), b[lib].bool()),
        lambda lib: getattr(lib, op)(a[lib].to(lib.complex64), b[lib]),
        lambda lib: getattr(lib, op)(a[lib], 3.0),
    ]
    for form in forms:
        _same_outcome(real_torch, form, op, approx)


#: every binary row's op and every op-table row that says PyTorch takes a number first
NUMBER_FIRST_CANDIDATES = sorted(
    {f"torch.{p.torch.name or p.name}" for p in torch_rows() if p.arity == 2}
    | {f"torch.{n}" for n, d in REGISTRY.items() if d.number_first}
)


def _outcome(f, *args):
    try:
        return f(*args)
    except Exception as e:  # (the kind is compared: TypeError, AttributeError, ...)
        return type(e)


@pytest.mark.parametrize("op", NUMBER_FIRST_CANDIDATES)
def test_number_first_as_pytorch(real_torch, op):
    """``torch.X(2, tensor)`` is taken where PyTorch takes it (``add``, ``remainder``,
    ``bitwise_and``, ``special.xlog1py``: ``number_first`` on the rows; the same values
    and dtype) and refused with PyTorch's exception type elsewhere (``atan2``, ``gcd``)."""
    assert {"torch.add", "torch.bitwise_and", "torch.special.xlog1py"} <= {
        n for n in NUMBER_FIRST_CANDIDATES if REGISTRY[n[6:]].number_first
    }
    path, _, name = op.rpartition(".")
    integer = name in INTEGER_ONLY or name.startswith("bitwise")
    got = []
    for lib in (ctorch, real_torch):
        t = lib.tensor([1, 3, 4]) if integer else lib.tensor([0.5, 2.0])
        args = (2,) if integer else (2.0,)
        # (``torch.norm(2.0)``: PyTorch's Python function fails on the number's ``layout``)
        args += () if name == "norm" else (t,)
        got.append(_outcome(_resolve(lib, path, name), *args))
    ours, theirs = got
    if isinstance(theirs, type):
        assert ours is theirs, (op, ours, theirs)
    else:
        assert not isinstance(ours, type), (op, ours)
        assert str(ours.dtype) == str(theirs.dtype), op
        np.testing.assert_allclose(npv(ours), theirs.numpy(), rtol=1e-6)


BITWISE = sorted(
    (p.torch.name or p.name)
    for p in torch_rows()
    if p.arity == 2 and getattr(p, "allowed", "") == "intbool"
)


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_rows_as_pytorch(real_torch, op):
    """``bitwise_and``/``or``/``xor`` (rows of ``allowed="intbool"``) compute integers and
    bools as PyTorch, a number first included, and refuse floats and complex numbers with
    PyTorch's ``NotImplementedError`` (``"bitwise_and_cpu" not implemented for 'Float'``),
    as the function, the method and the operator."""
    assert {"bitwise_and", "bitwise_or", "bitwise_xor"} <= set(BITWISE)
    sign = {"bitwise_and": "__and__", "bitwise_or": "__or__", "bitwise_xor": "__xor__"}[op]
    t = {lib: lib.tensor([1, 6, -3]) for lib in (ctorch, real_torch)}
    b = {lib: lib.tensor([True, False, True]) for lib in (ctorch, real_torch)}
    forms = [
        lambda lib: getattr(lib, op)(t[lib], t[lib].flip(0)),
        lambda lib: getattr(lib, op)(b[lib], b[lib].flip(0)),
        lambda lib: getattr(lib, op)(b[lib], t[lib]),
        lambda lib: getattr(lib, op)(5, t[lib]),
        lambda lib: getattr(lib, op)(True, b[lib]),
        lambda lib: getattr(lib, op)(t[lib].float(), t[lib]),
        lambda lib: getattr(lib, op)(t[lib], t[lib].to(lib.complex64)),
        lambda lib: getattr(lib, op)(t[lib], 2.5),
        lambda lib: getattr(t[lib], op)(t[lib].double()),
        lambda lib: getattr(t[lib], sign)(2.5),
        lambda lib: getattr(t[lib].float(), sign)(t[lib]),
    ]
    for form in forms:
        _same_outcome(real_torch, form, op)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "bfloat16", "int16", "bool"])
def test_bitwise_not_as_pytorch(real_torch, dtype):
    """``bitwise_not`` (function, method, in-place) and ``~`` of integers and bools compute
    as PyTorch; of floats and complex numbers they raise PyTorch's exception and text
    (``NotImplementedError`` from the kernel; ``TypeError`` from the operator)."""
    t = {lib: lib.tensor([1, 0, 3]).to(getattr(lib, dtype)) for lib in (ctorch, real_torch)}
    forms = [
        lambda lib: lib.bitwise_not(t[lib]),
        lambda lib: t[lib].bitwise_not(),
        lambda lib: t[lib].clone().bitwise_not_(),
        lambda lib: ~t[lib],
    ]
    for form in forms:
        _same_outcome(real_torch, form, "bitwise_not")


@pytest.mark.parametrize("op", ["float_power", "special.xlog1py"])
def test_number_operand_nodes_of_compat_rows(real_torch, op):
    """compat's own ``number_first`` rows name PyTorch's node for a number in either place
    (``float_power(2.0, x)``: ``PowBackward2``; ``special.xlog1py(x, 2.0)``:
    ``SpecialXlog1PyBackward2``) and give its values and gradients."""
    path, _, name = f"torch.{op}".rpartition(".")
    for form in ("tensors", "number other", "number input"):
        got = []
        for lib in (ctorch, real_torch):
            x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
            f = _resolve(lib, path, name)
            y = {"tensors": lambda: f(x, x), "number other": lambda: f(x, 2.0)}.get(
                form, lambda: f(2.0, x)
            )()
            (g,) = lib.autograd.grad(y.sum(), x)
            got.append((y.grad_fn.name(), npv(y.detach()), npv(g)))
        assert got[0][0] == got[1][0], (op, form)
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
        np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12)


TERNARY = sorted(
    (p.torch.name or p.name)
    for p in torch_rows()
    if p.arity == 3 and p.numpy_promotion == "condition"
)
_CASE_DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64"]


def test_rows_declare_ternary_forms():
    assert "where" in TERNARY  # or the tests below pass vacuously


@pytest.mark.parametrize("op", TERNARY)
@pytest.mark.parametrize("dtype", _CASE_DTYPES)
def test_ternary_rows_as_pytorch(real_torch, op, dtype):
    """A ternary row's op (``where``, generated from its funcgrad row) against PyTorch: the
    refusal of a condition that is not bool (compat said ``torch.float32`` where PyTorch
    says ``Float``), PyTorch's promotion of the cases (tensors of every pair of dtypes,
    numbers), the method form (``self`` is the row's ``method_self`` operand), ``out=``,
    and the condition alone (``nonzero``'s tuple of indices)."""
    rng = np.random.default_rng(0)
    vals = {d: rng.uniform(-3, 3, (2, 3)).astype(d) for d in _CASE_DTYPES}
    cond = rng.uniform(-1, 1, (2, 3)) > 0
    t = {
        lib: {d: lib.tensor(v) for d, v in vals.items()} | {"c": lib.tensor(cond)}
        for lib in (ctorch, real_torch)
    }
    forms = [
        lambda lib: getattr(lib, op)(t[lib]["c"], t[lib][dtype], t[lib]["float32"]),
        lambda lib: getattr(lib, op)(t[lib]["c"], t[lib]["int64"], t[lib][dtype]),
        lambda lib: getattr(lib, op)(t[lib]["c"], t[lib][dtype][0], t[lib]["bool"]),
        lambda lib: getattr(lib, op)(t[lib]["c"], t[lib][dtype], 2),
        lambda lib: getattr(lib, op)(t[lib]["c"], 2.5, t[lib][dtype]),
        lambda lib: getattr(lib, op)(t[lib]["c"], True, 0),
        lambda lib: getattr(lib, op)(t[lib][dtype], t[lib]["float64"], t[lib]["float64"]),
        lambda lib: getattr(t[lib][dtype], op)(t[lib]["c"], t[lib]["int32"]),
        lambda lib: getattr(t[lib][dtype], op)(t[lib]["c"], other=1.5),
        lambda lib: getattr(lib, op)(
            t[lib]["c"],
            t[lib][dtype],
            t[lib]["int64"],
            out=lib.empty(0, dtype=lib.result_type(t[lib][dtype], t[lib]["int64"])),
        ),
    ]
    for form in forms:
        _same_outcome(real_torch, form, op)
    alone = {lib: getattr(lib, op)(t[lib][dtype]) for lib in (ctorch, real_torch)}
    assert [npv(i).tolist() for i in alone[ctorch]] == [i.tolist() for i in alone[real_torch]]


@pytest.mark.parametrize("op", TERNARY)
def test_ternary_row_gradients_as_pytorch(real_torch, op):
    """The node of a ternary row's op and its gradient in both cases (broadcast: the
    cotangent summed back to each case's shape), with one case a number."""
    rng = np.random.default_rng(1)
    cond, x, y = rng.uniform(-1, 1, (2, 3)) > 0, rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, 3)
    grads = {}
    for lib in (ctorch, real_torch):
        xs = lib.tensor(x, requires_grad=True)
        ys = lib.tensor(y, requires_grad=True)
        r = getattr(lib, op)(lib.tensor(cond), xs, ys)
        s = getattr(lib, op)(lib.tensor(cond), 0.5, ys)
        assert r.grad_fn.name() == s.grad_fn.name() == REGISTRY[op].grad_fn
        (r * r + s).sum().backward()
        grads[lib] = (npv(xs.grad), npv(ys.grad)) if lib is ctorch else (xs.grad, ys.grad)
    for got, want in zip(grads[ctorch], grads[real_torch]):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)


def test_clamp_row_nodes_and_bounds_as_pytorch(real_torch):
    """``clamp``'s op reads its nodes from funcgrad's ``clamp`` row and keeps PyTorch's
    derivative (bounds included, none where ``min > max``): nodes of tensor and number
    bounds, of ``clamp_``/``clip_`` with a tensor bound (compat named ``ClampBackward1``),
    and every gradient on a grid where the operand ties each bound and bounds cross."""
    vals = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    x, lo, hi = np.meshgrid(vals, vals, vals, indexing="ij")
    results = {}
    for lib in (ctorch, real_torch):
        xs, los, his = (lib.tensor(v.ravel(), requires_grad=True) for v in (x, lo, hi))
        outs = [
            lib.clamp(xs, los, his),
            lib.clip(xs, min=los),
            xs.clamp(0.0, 1.0),
            xs.clamp(max=his),
            (xs * 1).clamp_(los, his),
            (xs * 1).clip_(0.0),
            (xs * 1).clamp_(max=his),
        ]
        sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
        nodes = [o.grad_fn.name() for o in outs]
        grads = [npv(t.grad) if lib is ctorch else t.grad.numpy() for t in (xs, los, his)]
        results[lib] = nodes, grads, [npv(o) if lib is ctorch else o.detach().numpy() for o in outs]
    (nodes, grads, values), (want_nodes, want_grads, want_values) = (
        results[ctorch],
        results[real_torch],
    )
    assert nodes == want_nodes
    for got, want in zip(grads + values, want_grads + want_values):
        np.testing.assert_array_equal(got, want)


_COMPLEX_PARTS = ["bool", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("first", _COMPLEX_PARTS)
def test_complex_row_as_pytorch(real_torch, first):
    """``torch.complex`` (the ``complex`` row's PyTorch form; ``lax.complex`` is its lax
    form) against PyTorch for every pair of part dtypes: values of one float dtype (not
    half: compat has no complex32), PyTorch's refusal texts otherwise (compat named the
    wrong one for integers, bools and complex parts), a number refused with PyTorch's
    ``TypeError`` (compat raised ``AttributeError``), and no ``Tensor.complex``."""
    vals = np.array([0.5, -1.0, 2.0])
    for second in _COMPLEX_PARTS:
        if first == second == "float16":
            continue
        form = lambda lib: lib.complex(
            lib.tensor(vals).to(getattr(lib, first)), lib.tensor(vals).to(getattr(lib, second))
        )
        _same_outcome(real_torch, form, "complex")
    t = {lib: lib.tensor(vals).to(getattr(lib, first)) for lib in (ctorch, real_torch)}
    _raises_as_pytorch(real_torch, lambda lib: lib.complex(t[lib], 2.0), "complex")
    _raises_as_pytorch(real_torch, lambda lib: lib.complex(2.0, t[lib]), "complex")
    assert not hasattr(ctorch.Tensor, "complex") and not hasattr(real_torch.Tensor, "complex")


@pytest.mark.parametrize("op", TERNARY)
def test_ternary_out_argument_as_pytorch(real_torch, op):
    """``out=`` of a ternary row's op (``where``): PyTorch's exact dtype (no cast to a wider
    ``out``), tensors only (a number operand, or none, is its ``TypeError``), a resized
    empty ``out``."""
    cases = {
        "same": lambda L, c, x, y: (c, x, y, L.empty(3)),
        "wider": lambda L, c, x, y: (c, x, y, L.empty(3, dtype=L.float64)),
        "narrower": lambda L, c, x, y: (c, x.double(), y, L.empty(3)),
        "int": lambda L, c, x, y: (c, x, y, L.empty(3, dtype=L.int64)),
        "mixed": lambda L, c, x, y: (c, x, L.tensor([1, 2, 3]), L.empty(3)),
        "number other": lambda L, c, x, y: (c, x, 2.0, L.empty(3)),
        "number input": lambda L, c, x, y: (c, 2, y, L.empty(3)),
        "empty out": lambda L, c, x, y: (c, x, y, L.empty(0)),
        "0-d": lambda L, c, x, y: (c, x, L.tensor(2.0), L.empty(3)),
    }
    for what, make in cases.items():
        got = []
        for L in (ctorch, real_torch):
            c, x, y = L.tensor([True, False, True]), L.tensor([1.0, 2, 3]), L.tensor([4.0, 5, 6])
            *args, out = make(L, c, x, y)
            try:
                r = getattr(L, op)(*args, out=out)
                assert r is out
                got.append((str(r.dtype), r.tolist()))
            except (TypeError, RuntimeError) as e:
                got.append((type(e), str(e) if isinstance(e, RuntimeError) else ""))
        assert got[0] == got[1], what
