"""PyTorch's refusals in ``test_unary_ufuncs.py``'s written-out tests, against PyTorch
2.13 word for word: a negative ``polygamma`` order (compat gave NaN), ``isposinf``/
``isneginf`` into a non-bool ``out`` (compat wrote 0/1 in its dtype), in-place ``abs`` of
a complex tensor (compat wrote the real result into it), and the order of an in-place
op's refusals on an expanded tensor (the overlap error comes before a kernel's refusal
of the dtype, ``bitwise_not_`` of a double; after the op's own checks, ``neg_`` of a
bool)."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _outcome(f):
    try:
        r = f()
    except Exception as e:
        return type(e).__name__, str(e)
    return "ok", (str(r.dtype), r.tolist())


def _same(make) -> None:
    assert _outcome(lambda: make(ctorch)) == _outcome(lambda: make(torch))


@pytest.mark.parametrize("n", [-1, -3, 0, 2])
@pytest.mark.parametrize(
    "form",
    [
        lambda T, n: T.polygamma(n, T.tensor([1.0, 2.5])),
        lambda T, n: T.tensor([1.0, 2.5]).polygamma(n),
        lambda T, n: T.tensor([1.0, 2.5]).polygamma_(n),
        lambda T, n: T.special.polygamma(n, T.tensor([1.0, 2.5])),
    ],
)
def test_polygamma_order(form, n):
    a = _outcome(lambda: form(ctorch, n))
    b = _outcome(lambda: form(torch, n))
    if a[0] == "ok" and b[0] == "ok":
        assert a[1][0] == b[1][0]
        assert a[1][1] == pytest.approx(b[1][1], rel=1e-5)
    else:
        assert a == b


@pytest.mark.parametrize("op", ["isposinf", "isneginf"])
@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int64", "float16", "float32", "bfloat16", "complex64"]
)
def test_isposinf_isneginf_out_dtypes(op, dtype):
    def make(T):
        t = T.tensor([float("inf"), -float("inf"), 1.2])
        out = T.empty_like(t, dtype=getattr(T, dtype))
        getattr(T, op)(t, out=out)
        return out

    _same(make)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int64"])
@pytest.mark.parametrize("form", ["method", "function"])
def test_inplace_abs(dtype, form):
    def make(T):
        t = T.tensor([1 - 1j, -2j, 3], dtype=getattr(T, dtype)) if "complex" in dtype else None
        t = t if t is not None else T.tensor([-1, 2, -3], dtype=getattr(T, dtype))
        return t.abs_() if form == "method" else T.abs_(t)

    _same(make)


@pytest.mark.parametrize(
    "op, dtype",
    [
        ("bitwise_not_", "float64"),
        ("bitwise_not_", "int64"),
        ("neg_", "bool"),
        ("sin_", "float64"),
        ("abs_", "complex64"),
        ("exp2_", "float32"),
        ("frac_", "int64"),
    ],
)
def test_inplace_on_expanded_refusal_order(op, dtype):
    def make(T):
        x = T.ones(1, dtype=getattr(T, dtype)).expand(3, 3)
        return getattr(x, op)()

    _same(make)
