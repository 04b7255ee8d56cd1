"""compat's ops generated from the array rows (``ArrayRow`` beside ``tril``, ``triu``,
``flip``, ``roll``, ``fliplr``, ``flipud``, ``rot90``, ``diff``, ``kron``, ``trace``,
``diag``, ``diagflat``, ``count_nonzero``, ``vander``, ``trapezoid``, ``tile`` and ``isin`` in
``funcgrad/numpy``; ``TorchArrayForm``), against real PyTorch: values, dtypes and shapes, or
the exception type, for the function, the method, the in-place method and ``out=`` on a
shape x dtype x argument grid; the node and the gradient. The ops are read from the rows."""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from cases import sample
from torch_oracle import random_tensor

import compat.torch as ctorch
import funcgrad.numpy as fnp
from funcgrad._compat_contract import array_rows

ROWS = [pytest.param(r, id=r.name) for r in array_rows() if not hasattr(r.torch, "layout")]
SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4), (0, 3)]
DTYPES = ["bool", "uint8", "int64", "float32", "complex64"]
#: arguments tried per PyTorch parameter kind (``TorchParam.kind``)
ARGS = {
    "int": [0, 1, -2, 5, 1.5, True],
    "dims": [0, -1, (0, 1), [1, 0], 3, (0, 0), True],
    "unique_dims": [0, -1, (0, 1), [1, 0], 3, (0, 0), ()],
    "shifts": [1, -3, (1, 2), (2,), True, (1, False)],
    "dim": [0, -1, 3, (0,), True],
    "reduce_dims": [0, -1, (0, 1), [1, 0], 3, (0, 0), ()],
    "float": [0.0, 0.5, -1.0, 2, "x"],
    "optional_float": [None, 0.5, -1e6, 3.5, True, "x"],
    "optional_int": [None, 0, 1, 3, -1, 1.5, True],
    "bool": [True, False, 1],
    "repeats": [(2,), (1, 3), [2, 1, 2], (), (0, 2), (-1, 1), 2, (1.5,), (True,), None],
}
#: the most argument tuples a row tries per input (a larger product: one parameter varied
#: at a time, then the parameters' cases side by side)
MAX_CALLS = 60
#: rows whose PyTorch kernel sums integer samples in their own dtype (uint8 sums wrap)
#: where the row's NumPy form promotes first: for uint8 inputs, dtypes and shapes compared
WRAPS = {"trapezoid"}


@dataclass(frozen=True)
class Operand:
    """A tensor argument of ``shape`` and ``dtype`` (``None``: the input's dtype)."""

    shape: tuple[int, ...]
    dtype: str | None = None


def _operands(shape):
    """Tensor arguments tried beside an input of ``shape``: its own shape, one of size 1
    along the last dimension in another dtype, a vector and a 0-d float64 tensor (which
    PyTorch's promotion, unlike NumPy's, lets a float32 input keep its dtype)."""
    edge = (*shape[:-1], 1) if shape else ()
    return [
        Operand(shape),
        Operand(edge, "float64"),
        Operand((2,), "int64"),
        Operand((), "float64"),
    ]


def test_rows_declared():
    assert {r.values[0].name for r in ROWS} >= {"tril", "triu", "flip", "roll"}


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # (compared with PyTorch's)
        return type(e)
    if isinstance(r, bool):  # (allclose: a Python bool)
        return "bool", (), np.asarray(r)
    return str(r.dtype), tuple(r.shape), np.asarray(r.tolist())


def _same(got, want, what):
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, what
        return
    assert got[:2] == want[:2], what
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6, err_msg=what)


def _calls(row, shape):
    """Argument tuples: every combination of each parameter's cases (or its default), or,
    past ``MAX_CALLS`` of them, each parameter's cases with the others' defaults and then
    all parameters' cases side by side."""
    options = []
    for p in row.torch.params:
        cases = _operands(shape) if p.kind == "tensor" else list(ARGS[p.kind])
        options.append(cases if p.required else [*cases, None, "default"])
    combos = list(itertools.product(*options))
    if len(combos) > MAX_CALLS:
        # (a parameter before the varied one passes its default value by position)
        params = row.torch.params
        defaults = ["default" if p.required else p.default for p in params]
        combos = [
            (*defaults[:i], case, *["default"] * (len(options) - i - 1))
            for i, o in enumerate(options)
            for case in o
        ]
        width = max(map(len, options))
        combos += [tuple(o[k % len(o)] for o in options) for k in range(width)]
    positional = sum(not p.keyword_only for p in row.torch.params)
    for combo in combos:
        args = combo[:positional]
        while args and args[-1] == "default":
            args = args[:-1]
        if "default" not in args:
            yield args + combo[positional:]


def _split(row, call):
    """A call's positional arguments and keyword-only ones (``"default"``: left out)."""
    positional = sum(not p.keyword_only for p in row.torch.params)
    names = [p.name for p in row.torch.params[positional:]]
    kwargs = {n: v for n, v in zip(names, call[positional:]) if v != "default"}
    return call[: min(positional, len(call))], kwargs


def _tensors(L, rng_seed, args, dtype):
    """``args`` with each :class:`Operand` a tensor of ``L`` (the same values in both
    libraries: drawn from ``rng_seed``)."""
    rng = np.random.default_rng(rng_seed)
    return tuple(
        random_tensor(L, rng, a.shape, a.dtype or dtype) if isinstance(a, Operand) else a
        for a in args
    )


@pytest.mark.parametrize("row", ROWS)
def test_forms_as_pytorch(real_torch, row):
    name = row.name
    rng = np.random.default_rng(12)
    # (CI samples the grid, every dtype kept)
    grid = sample(
        list(itertools.product(SHAPES, DTYPES)), salt=name, share=0.3, group=lambda c: c[1]
    )
    for shape, dtype in grid:
        seed = int(rng.integers(1 << 30))
        x = [
            random_tensor(L, np.random.default_rng(seed), shape, dtype)
            for L in (ctorch, real_torch)
        ]
        for call in _calls(row, shape):
            call, kw = _split(row, call)
            what = f"{name}({dtype}{list(shape)}, *{call}, **{kw})"
            a = [_tensors(L, seed + 1, call, dtype) for L in (ctorch, real_torch)]
            args = a[1]
            fn, want = (
                _outcome(lambda L=L, xi=xi, ai=ai: getattr(L, name)(xi, *ai, **kw))
                for L, xi, ai in zip((ctorch, real_torch), x, a)
            )
            if name in WRAPS and dtype == "uint8" and not isinstance(want, type):
                assert fn[:2] == want[:2], what
                continue
            _same(fn, want, what)
            for alias in row.torch.aliases:  # (torch.ger is torch.outer)
                _same(
                    _outcome(lambda: getattr(ctorch, alias)(x[0], *a[0], **kw)), want, what + alias
                )
            method, want_method = (
                _outcome(lambda xi=xi, ai=ai: getattr(xi, name)(*ai, **kw)) for xi, ai in zip(x, a)
            )
            _same(method, want_method, what + " method")
            if row.torch.method_varargs is not None and isinstance(args[0], (list, tuple)):
                star = _outcome(lambda: getattr(x[1], name)(*args[0]))  # (x.flip(0, 1))
                _same(_outcome(lambda: getattr(x[0], name)(*args[0])), star, what + " *args")
            if isinstance(want, type) or row.torch.python_bool:
                continue
            out, want_out = (
                _outcome(
                    lambda L=L, xi=xi, ai=ai: getattr(L, name)(
                        xi, *ai, **kw, out=L.empty(0, dtype=getattr(L, want[0].rpartition(".")[2]))
                    )
                )
                for L, xi, ai in zip((ctorch, real_torch), x, a)
            )
            # PyTorch's torch.X without out= (flip, roll, tile, ...) refuses it; one with
            # out= gives the result (diff's out kernel refuses a dimension of size 0 with an
            # IndexError, a quirk compat does not copy: compared with the plain result)
            _same(out, TypeError if want_out is TypeError else want, what + " out=")
            if row.torch.inplace:
                inplaced = [
                    _outcome(lambda xi=xi, ai=ai: getattr(xi.clone(), name + "_")(*ai, **kw))
                    for xi, ai in zip(x, a)
                ]
                _same(*inplaced, what + " in place")


@pytest.mark.parametrize("row", ROWS)
def test_nodes_and_gradients_as_pytorch(real_torch, row):
    """Each sample's node, and the gradients of the input and of the tensor operands (a
    sample gives their shapes), as PyTorch's."""
    kinds = [p.kind for p in row.torch.params]

    def ramp(L, shape):
        v = np.arange(1.0, 1 + np.prod(shape)).reshape(shape) / (1 + np.prod(shape))
        return L.tensor(v.tolist(), dtype=L.float64, requires_grad=True)

    for shape, args in row.torch.samples:
        got = []
        for L in (ctorch, real_torch):
            x = ramp(L, shape)
            a = [ramp(L, s) if k == "tensor" and s is not None else s for k, s in zip(kinds, args)]
            y = getattr(L, row.name)(x, *a)
            if row.torch.grad_fn is None or not row.torch.torch_grad or y.grad_fn is None:
                # (an integer or bool result, a case without a node, or PyTorch's backward
                # failing: the node and the values)
                node = getattr(getattr(y, "grad_fn", None), "name", lambda: None)()
                got.append((node, [np.asarray(_outcome(lambda: y)[2])]))
                continue
            (y * L.arange(1.0, y.numel() + 1, dtype=L.float64).reshape(y.shape)).sum().backward()
            grads = [np.asarray(t.grad.tolist()) for t in (x, *a) if isinstance(t, L.Tensor)]
            got.append((y.grad_fn.name(), grads))
        assert got[0][0] == got[1][0], (row.name, args)
        for ours, theirs in zip(got[0][1], got[1][1], strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"{row.name}{args}")


@pytest.mark.parametrize("row", ROWS)
def test_row_names_funcgrad_s_function(row):
    """The row's function is ``funcgrad.numpy``'s of that name, and every numpy
    parameter the PyTorch form passes is one of its parameters."""
    assert getattr(fnp, row.name) is row.function
    params = inspect.signature(row.function).parameters
    assert {p.numpy for p in row.torch.params} <= set(params)


@pytest.mark.parametrize("args", [(), (3,), (5, True), (3, True), (1,), (0, True)])
def test_vander_nodes_and_gradients(real_torch, args):
    """``vander``'s node as PyTorch's (none where ``N`` is 0 or 1), and its gradient as
    the derivative written out: PyTorch 2.13's own backward of ``vander`` fails ("modified
    by an inplace operation"; the row says ``torch_grad=False``), compat's is
    ``sum_j w_ij p_j x_i ** (p_j - 1)``."""
    values = np.array([0.5, -1.0, 2.0, 3.0])
    x = ctorch.tensor(values, dtype=ctorch.float64, requires_grad=True)
    y = ctorch.vander(x, *args)
    t = real_torch.tensor(values, dtype=real_torch.float64, requires_grad=True)
    want = real_torch.vander(t, *args)
    assert getattr(y.grad_fn, "name", lambda: None)() == (
        want.grad_fn.name() if want.grad_fn is not None else None
    )
    if y.grad_fn is None:
        assert not y.requires_grad
        return
    w = np.arange(1.0, 1 + y.numel()).reshape(tuple(y.shape))
    (y * ctorch.tensor(w)).sum().backward()
    n = args[0] if args else len(values)
    p = np.arange(n) if args[1:] == (True,) else np.arange(n)[::-1]
    grad = (w * p * values[:, None] ** np.maximum(p - 1, 0)).sum(1)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12)


def test_trapezoid_empty_after_remembered_calls(real_torch):
    """A call with the input alone is remembered per rank and dtype; an input empty along
    the default dimension still gets PyTorch's zeros of its own dtype, whatever came before."""
    shapes = [(3,), (0,), (0, 3), (3, 0), (0, 3), (2, 3)]
    for shape in shapes:
        got, want = (
            _outcome(lambda L=L: L.trapezoid(L.ones(shape, dtype=L.int64)))
            for L in (ctorch, real_torch)
        )
        _same(got, want, f"trapezoid(int64{list(shape)})")


#: calls in order, each compared with PyTorch's: a remembered positional call
#: (``_plain_key``) must not answer another whose argument types, values or input shape differ
_REMEMBERED = [
    ("tile", (2, 3), ((2, 1),)),
    ("tile", (2, 3), ((True, 1),)),  # (True == 1: a bool element is still refused)
    ("tile", (0, 3), ((-1, 1),)),  # (a negative count of an empty dimension: 0)
    ("tile", (2, 3), ((-1, 1),)),  # (the same arguments, another shape: refused)
    ("tile", (2, 3), ([2, 1],)),
    ("tile", (2, 3), ((2.0, 1),)),
    ("tile", (2, 3), ((1, True),)),  # (only the first element's type is checked)
    ("tile", (2, 3), ((1, 2.5),)),  # (a later float: "failed to unpack")
    ("flip", (2, 3), ((0,),)),
    ("flip", (3,), ((0,),)),
    ("flip", (3,), ((1,),)),  # (out of range for a vector)
    ("roll", (2, 3), (1, 0)),
    ("roll", (2, 3), (True, 0)),
    ("roll", (0, 3), (1, 0)),  # (an empty input: copied unchecked)
    ("roll", (2, 3), ((True,), 0)),
    ("roll", (2, 3), ((1, False), (0, 1))),
    ("roll", (2, 3), (1, True)),
    ("tril", (2, 3), (1,)),
    ("tril", (2, 3), (True,)),
    ("tril", (3,), (1,)),  # (fewer than 2 dimensions: refused)
    ("diff", (4,), (1, 0)),
    ("diff", (4,), (-1, 0)),
    ("diff", (4,), (1, True)),
    ("diff", (4,), (True,)),
]


def test_remembered_calls_answer_only_their_own(real_torch):
    for _ in range(2):  # (the second round is answered from what the first remembered)
        for name, shape, args in _REMEMBERED:
            got, want = (
                _outcome(lambda L=L: getattr(L, name)(L.ones(shape), *args))
                for L in (ctorch, real_torch)
            )
            _same(got, want, f"{name}{shape}{args}")
    x = ctorch.ones(2, 3)
    assert ctorch.tile(x, (1, 2)).tile(2, 1).shape == (4, 6)  # (the method's positional call)


#: ``isin``'s number overloads and dtype refusals (``TorchArrayForm.numbers``,
#: ``dtype_error``), each with its own tensors
_ISIN = {
    "number_test": lambda L: L.isin(L.tensor([1, 2, 3]), 2),
    "number_elements": lambda L: L.isin(2.5, L.tensor([2.5, 1.0])),
    "float_number_test": lambda L: L.isin(L.tensor([1, 2]), 2.0),
    "two_numbers": lambda L: L.isin(2, 3),
    "list": lambda L: L.isin([1], L.tensor([1])),
    "string": lambda L: L.isin(L.tensor([1]), "a"),
    "bool_test": lambda L: L.isin(L.tensor([1, 2]), L.tensor([True])),
    "bool_number": lambda L: L.isin(True, L.tensor([1])),
    "complex_test": lambda L: L.isin(L.tensor([1]), L.tensor([1j])),
    "uint8_int64": lambda L: L.isin(L.tensor([1, 2], dtype=L.uint8), L.tensor([258, 2])),
    "invert_keyword": lambda L: L.isin(
        elements=L.tensor([1, 3]), test_elements=L.tensor([1]), invert=True
    ),
    "no_node": lambda L: L.isin(L.tensor([1.0, 2.0], requires_grad=True), L.tensor([1.0])),
}


@pytest.mark.parametrize("case", list(_ISIN))
def test_isin_numbers_and_refusals_as_pytorch(real_torch, case):
    got, want = (_outcome(lambda L=L: _ISIN[case](L)) for L in (ctorch, real_torch))
    _same(got, want, case)
    if not isinstance(want, type):
        assert not _ISIN[case](ctorch).requires_grad


def test_isin_remembered_calls_answer_only_their_own(real_torch):
    """Remembered positional calls with a tensor operand (keyed by its shape and dtype) or a
    number (keyed by its value) answer only calls alike, as PyTorch's results show."""
    calls = [
        lambda L: L.isin(L.arange(6), L.tensor([1, 4])),
        lambda L: L.isin(L.arange(6), L.tensor([2, 3])),  # (same shapes, other values)
        lambda L: L.isin(L.arange(6), L.tensor([True, False])),  # (another dtype: refused)
        lambda L: L.isin(L.arange(6), 5),
        lambda L: L.isin(L.arange(6), 2),  # (another number)
        lambda L: L.isin(L.arange(6), 2.0),
        lambda L: L.isin(L.arange(6), True),  # (a bool number: refused)
        lambda L: L.isin(L.arange(6.0, requires_grad=True), 2.0),
    ]
    for _ in range(2):
        for i, call in enumerate(calls):
            got, want = (_outcome(lambda L=L: call(L)) for L in (ctorch, real_torch))
            _same(got, want, f"call {i}")
