"""The computed creation rows' PyTorch forms (``funcgrad.core.creation_row``: ``torch.arange``,
``linspace``, ``logspace``, ``eye``, generated in ``compat/_core/creation_rows.py``) against
PyTorch 2.13: values bit for bit (PyTorch's CPU kernels' rounding: fused multiply-adds,
256-bit vector chunks, halves counted from both ends), dtypes, ``out=``, signatures, the
parser's errors and the kernels' refusals. Complex ``logspace`` is compared to a relative
2e-5 (PyTorch's complex ``pow`` is not NumPy's ``exp(e * log(base))`` in the last bits,
which the exponent magnifies: 1e-6 at 10**12 in complex64)."""

from __future__ import annotations

import inspect
import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch
import funcgrad.numpy as fnp
from funcgrad._compat_contract import COMPUTED, creation_rows

ROWS = {r.name: r for r in creation_rows() if r.fill == COMPUTED}
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8")
DTYPES += ("complex64", "complex128", "bool")


def outcome(lib: Any, call: Any) -> tuple:
    """What ``call(lib)`` gives: the result's dtype, shape, values (an array) and
    ``requires_grad``, or the exception's type and first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(lib)
    except Exception as e:  # (the exception is the outcome compared)
        return type(e).__name__, str(e).splitlines()[0]
    return str(r.dtype), tuple(r.shape), np.asarray(r.tolist()), r.requires_grad


def both(real_torch: Any, call: Any, rtol: float = 0.0) -> None:
    ours, theirs = outcome(ctorch, call), outcome(real_torch, call)
    if len(ours) == 4 and len(theirs) == 4:
        assert ours[:2] + ours[3:] == theirs[:2] + theirs[3:]
        if rtol:
            np.testing.assert_allclose(ours[2], theirs[2], rtol=rtol)
        else:
            np.testing.assert_array_equal(ours[2], theirs[2])
    else:
        assert ours == theirs


def kw(t: Any, dtype: str | None) -> dict:
    return {} if dtype is None else {"dtype": getattr(t, dtype)}


def test_rows_are_declared_on_numpys_functions() -> None:
    assert sorted(ROWS) == ["arange", "eye", "linspace", "logspace"]
    for name, row in ROWS.items():
        assert row.function is getattr(fnp, name) and getattr(ctorch, name).__name__ == name


@pytest.mark.parametrize("name", sorted(ROWS))
def test_signature_is_pytorchs(real_torch: Any, name: str) -> None:
    """PyTorch's parameters in its order (``arange(start=0, end, step=1, ...)``), every
    keyword after them keyword-only, as its documented signature says."""
    sig = str(inspect.signature(getattr(ctorch, name)))
    doc = getattr(real_torch, name).__doc__.splitlines()[1]
    theirs = doc[doc.index("(") : doc.index(")") + 1].replace("layout=torch.strided", "layout=None")
    theirs = " ".join(theirs.split())
    assert sig.replace(", pin_memory=False", "") == theirs


ARANGES = [
    (10,),
    (0,),
    (2.5,),
    (1, 4, 0.5),
    (0, 1, 0.1),
    (10, 1, -2),
    (0.5, 3.7),
    (-3.7, 4.2, 0.9),
    (0, 1, 0.1),
    (-3.7, 9.1, 0.1),  # (more than two vectors: PyTorch's vectorised loop)
    (0.5, 300, 1.3),
]


@pytest.mark.parametrize("dtype", (None, *DTYPES))
def test_arange(real_torch: Any, dtype: str | None) -> None:
    for args in ARANGES:
        both(real_torch, lambda t: t.arange(*args, **kw(t, dtype)))


SPACES = [(0, 1), (-2.5, 10), (3, -3), (0.3, 0.7), (-7, 300)]


@pytest.mark.parametrize("dtype", (None, *DTYPES))
def test_linspace_and_logspace(real_torch: Any, dtype: str | None) -> None:
    rtol = 2e-5 if dtype and dtype.startswith("complex") else 0.0
    for (s, e), n in itertools.product(SPACES, (0, 1, 2, 5, 15, 40)):
        both(real_torch, lambda t: t.linspace(s, e, n, **kw(t, dtype)))
        both(real_torch, lambda t: t.logspace(s / 3, e / 3, n, **kw(t, dtype)), rtol)
        both(real_torch, lambda t: t.logspace(s / 3, e / 3, n, 2, **kw(t, dtype)), rtol)


@pytest.mark.parametrize("dtype", (None, *DTYPES))
def test_eye(real_torch: Any, dtype: str | None) -> None:
    for n, m in itertools.product((0, 1, 3), (None, 0, 2, 4)):
        both(real_torch, lambda t: t.eye(n, *(() if m is None else (m,)), **kw(t, dtype)))


def test_out(real_torch: Any) -> None:
    """``out=``: written into ``out`` (resized) and returned, in its dtype unless ``dtype=``
    says another, which is refused."""
    for out in ("int64", "float32", "int32", "bool"):
        both(real_torch, lambda t: t.arange(2.5, out=t.empty(5, dtype=getattr(t, out))))
        both(real_torch, lambda t: t.linspace(0, 3, 4, out=t.empty(1, dtype=getattr(t, out))))
        both(real_torch, lambda t: t.logspace(0, 2, 3, out=t.empty(0, dtype=getattr(t, out))))
        both(real_torch, lambda t: t.eye(2, 3, out=t.empty(0, dtype=getattr(t, out))))
    both(real_torch, lambda t: t.eye(2, out=t.empty(5), dtype=t.float64))
    both(real_torch, lambda t: t.arange(3, out=t.empty(5), dtype=t.int64))
    for t in (ctorch, real_torch):
        o = t.empty(7)
        assert t.linspace(0, 1, 3, out=o) is o and tuple(o.shape) == (3,)


def test_out_keeps_its_shape_and_arange_warns(real_torch: Any) -> None:
    """``out`` keeps its shape where it has the result's number of elements (PyTorch resizes
    it only otherwise, ``arange`` with a warning unless ``out`` is empty)."""
    calls = (
        lambda t, o: t.arange(3, out=o),
        lambda t, o: t.linspace(0, 1, 3, out=o),
        lambda t, o: t.logspace(0, 1, 3, out=o),
        lambda t, o: t.eye(2, out=o),
    )

    def run(t: Any, call: Any, shape: tuple) -> tuple:
        o = t.empty(shape)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call(t, o)
        texts = [str(w.message).split(" (Triggered")[0] for w in seen]
        return tuple(o.shape), o.tolist(), texts

    for shape in ((1, 3), (3, 1), (2, 3), (0,), (5,), (2, 2)):
        for call in calls:
            assert run(ctorch, call, shape) == run(real_torch, call, shape)


CALLS = [
    lambda t: t.arange(0, 5, 0),
    lambda t: t.arange(0, 1, 0.1, dtype=t.int64),
    lambda t: t.arange(0, 1, 0.1, dtype=t.int32),
    lambda t: t.arange(0, 1, -0.1, dtype=t.int32),
    lambda t: t.arange(5, 0),
    lambda t: t.arange(-3),
    lambda t: t.arange(5, t.float32),
    lambda t: t.arange(end=5),
    lambda t: t.arange(start=1, end=5),
    lambda t: t.arange(start=2),
    lambda t: t.arange(0, 5, step=2.0),
    lambda t: t.arange(None),
    lambda t: t.arange(1, None),
    lambda t: t.arange(1j),
    lambda t: t.arange(3, dtype=t.bool),
    lambda t: t.arange(3, dtype=t.complex64),
    lambda t: t.arange(float("inf")),
    lambda t: t.arange(4, requires_grad=True),
    lambda t: t.arange(4.0, requires_grad=True),
    lambda t: t.arange("a"),
    lambda t: t.arange(t.tensor([1, 2])),
    lambda t: t.arange(t.tensor(3)),
    lambda t: t.arange(t.tensor(3.0)),
    lambda t: t.arange(t.tensor(3.0, requires_grad=True)),
    lambda t: t.arange(np.int32(4)),
    lambda t: t.arange(np.float32(2.5)),
    lambda t: t.arange(3, layout=t.strided, pin_memory=False),
    lambda t: t.arange(2, memory_format=t.contiguous_format),
    lambda t: t.arange(2, foo=1),
    lambda t: t.arange(0, 2**62, 1),
    lambda t: t.arange(200, dtype=t.int8),
    lambda t: t.linspace(0, 1, -1),
    lambda t: t.linspace(0, 1),
    lambda t: t.linspace(0, 1, 2.0),
    lambda t: t.linspace(0, 1, steps=2.0),
    lambda t: t.linspace(0, 1, t.tensor(3)),
    lambda t: t.linspace(t.tensor(0.0), t.tensor(1.0), 3),
    lambda t: t.linspace(t.tensor(0.0, dtype=t.float64), t.tensor(1.0), 3),
    lambda t: t.linspace(t.tensor(0.0, requires_grad=True), 1, 3),
    lambda t: t.linspace(t.tensor([0.0]), t.tensor(1.0), 3),
    lambda t: t.linspace(0, 1j, 3),
    lambda t: t.linspace(0, 1, 3, t.float64),
    lambda t: t.linspace(0, 1, 3, dtype=t.bool),
    lambda t: t.linspace(0, 1, 1, dtype=t.bool),
    lambda t: t.linspace(0, 300, 3, dtype=t.int8),
    lambda t: t.linspace(-2.5, 10, 0, dtype=t.uint8),
    lambda t: t.linspace(0, float("inf"), 3),
    lambda t: t.linspace("a", 1, 3),
    lambda t: t.linspace(0, None, 3),
    lambda t: t.logspace(0, 2),
    lambda t: t.logspace(0, 1, 3, t.tensor(2.0)),
    lambda t: t.logspace(0, 1, 3, "a"),
    lambda t: t.logspace(0, 2, 3, -2),
    lambda t: t.logspace(0, 3, 4, dtype=t.int8),
    lambda t: t.logspace(0, 3, 4, dtype=t.bool),
    lambda t: t.logspace(2, 3, 1, dtype=t.bool),
    lambda t: t.logspace(0, 3, -1),
    lambda t: t.logspace(0, 1j, 3),
    lambda t: t.eye(-1),
    lambda t: t.eye(2, -1),
    lambda t: t.eye(2.0),
    lambda t: t.eye(None),
    lambda t: t.eye(True),
    lambda t: t.eye(2, m=None),
    lambda t: t.eye(2, None),
    lambda t: t.eye(2, 3, t.float64),
    lambda t: t.eye(2, 3, 4),
    lambda t: t.eye(n=2, m=3),
    lambda t: t.eye(np.int64(2)),
    lambda t: t.eye(t.tensor(2)),
    lambda t: t.eye(2, requires_grad=True),
    lambda t: t.eye(3, dtype=t.int64, requires_grad=True),
    lambda t: t.eye(2, foo=1),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_arguments_and_refusals(real_torch: Any, i: int) -> None:
    both(real_torch, CALLS[i])
