"""Complex tensors assembled from real parts, against PyTorch 2.13: ``view_as_complex``,
``polar`` and ``linspace`` of complex ends keep each part as it is (an infinite or NaN
imaginary part left the real part NaN: ``re + 1j * im``; ``-0.0`` lost its sign), and
``log1p`` of complex numbers near 0 (the host tier's rule was NumPy's ``log(1 + z)``:
the real part of ``log1p(1e-19 + 1e-18j)`` was 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_EDGES = [0.0, -0.0, 1.0, -2.5, float("inf"), -float("inf"), float("nan"), 1e-30, 1e300]


def _same(got, want) -> None:
    """Equal bit for bit, part by part (NaN equal to NaN, the signs of zeros compared)."""
    g, w = np.asarray(got.tolist(), complex), np.asarray(want.tolist(), complex)
    assert g.shape == w.shape
    for part in (np.real, np.imag):
        a, b = part(g), part(w)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["float32", "float64"]),
    st.lists(st.sampled_from(_EDGES) | st.floats(width=32), min_size=2, max_size=8),
)
def test_view_as_complex_keeps_the_parts(dtype, values):
    values = values[: len(values) // 2 * 2]
    with np.errstate(over="ignore"):  # (1e300 in float32: inf)
        x = np.array(values, dtype).reshape(-1, 2)
    got = ctorch.view_as_complex(ctorch.tensor(x))
    want = torch.view_as_complex(torch.tensor(x))
    assert str(got.dtype) == str(want.dtype)
    _same(got, want)


def test_nan_to_num_of_a_viewed_complex_tensor():
    # PyTorch's test_nan_to_num_complex: each part replaced on its own
    for dtype in ("complex64", "complex128"):
        part = "float32" if dtype == "complex64" else "float64"
        for extremal, kw in (("nan", "nan"), ("inf", "posinf"), ("-inf", "neginf")):
            for pair in ([123, float(extremal)], [float(extremal), 456]):
                got, want = (
                    lib.nan_to_num(
                        lib.view_as_complex(lib.tensor(pair, dtype=getattr(lib, part))), **{kw: 12}
                    )
                    for lib in (ctorch, torch)
                )
                _same(got, want)


def test_polar_keeps_the_parts():
    r = [float("inf"), 1.0, 2.0, 0.0, -0.0, float("nan"), 3.0]
    t = [0.0, float("inf"), float("nan"), 1.0, math.pi, 0.5, -0.0]
    for dtype in ("float32", "float64"):
        got, want = (
            lib.polar(
                lib.tensor(r, dtype=getattr(lib, dtype)), lib.tensor(t, dtype=getattr(lib, dtype))
            )
            for lib in (ctorch, torch)
        )
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(
            np.asarray(got.tolist(), complex), np.asarray(want.tolist(), complex), rtol=1e-6
        )


def test_linspace_of_complex_ends_keeps_the_parts():
    for start, end, steps in [
        (complex(0, 0), complex(1, float("inf")), 3),
        (complex(1, 2), complex(3, -4), 5),
        (0, complex(float("nan"), 1), 3),
    ]:
        for dtype in ("complex64", "complex128"):
            got = ctorch.linspace(start, end, steps, dtype=getattr(ctorch, dtype))
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
            _same(got, want)


_LOG1P = [
    0.2 + 0.3j, 1e-19 + 1e-18j, 1e-18 + 0.1j, 0.1 + 1e-18j, 0.5 + 0j, 0.5j, 2 + 1j,
    -1 + 2j, 2j, -2j, -1 + 1e250j, 1e250 + 1j, 1e-250 + 2e-250j, -1 + 0j, -0.5 + 0.4j,
    -1 + 1e-10j, complex(float("inf"), 1), complex(float("nan"), 0), 1e-30 - 1e-31j,
]  # fmt: skip


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_log1p_of_complex_numbers_near_zero(dtype):
    got = ctorch.log1p(ctorch.tensor(_LOG1P, dtype=getattr(ctorch, dtype)))
    want = torch.log1p(torch.tensor(_LOG1P, dtype=getattr(torch, dtype)))
    np.testing.assert_allclose(
        np.asarray(got.tolist(), complex), np.asarray(want.tolist(), complex), rtol=2e-6, atol=0
    )


#: parts near 0 (no subnormals: PyTorch's ``log1p(7e-267 + 2e-311j)`` is NaN)
_SMALL = st.floats(-1e-3, 1e-3).filter(lambda v: v == 0 or abs(v) > 1e-300)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.builds(complex, _SMALL, _SMALL), min_size=1, max_size=6))
def test_log1p_of_small_complex_numbers(values):
    got = ctorch.log1p(ctorch.tensor(values, dtype=ctorch.complex128))
    want = torch.log1p(torch.tensor(values, dtype=torch.complex128))
    np.testing.assert_allclose(
        np.asarray(got.tolist(), complex), np.asarray(want.tolist(), complex), rtol=1e-12, atol=0
    )


def _write_cases(lib):
    """Writes through views of a complex tensor's parts (``.real``, ``.imag``,
    ``view_as_real``), each returning the complex tensor written."""

    def imag_fill():
        z = lib.tensor([1 + 2j, 3 + 4j])
        z.imag.fill_(float("inf"))
        return z

    def real_fill():
        z = lib.tensor([1 + 2j, 3 - 0j])
        z.real.fill_(float("nan"))
        return z

    def imag_neg_zero():
        z = lib.tensor([1 + 2j, 3 + 4j], dtype=lib.complex128)
        z.imag.fill_(-0.0)
        return z

    def real_pairs():
        z = lib.tensor([1 + 2j, 3 + 4j])
        lib.view_as_real(z)[0, 1] = float("inf")
        return z

    return [imag_fill, real_fill, imag_neg_zero, real_pairs]


def test_writes_through_part_views_keep_the_other_part():
    for got, want in zip(_write_cases(ctorch), _write_cases(torch)):
        _same(got(), want())


def _outcome(f):
    try:
        r = f()
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    return "ok", str(r.dtype)


@pytest.mark.parametrize("op", ["polar", "complex"])
@pytest.mark.parametrize("a", ["float32", "float64", "int64", "complex64", "bool"])
@pytest.mark.parametrize("b", ["float32", "float64", "int64", "number"])
def test_polar_and_complex_refuse_parts_as_pytorch(op, a, b):
    # (compat's polar took any two operands, of any dtypes: torch.complex's checks)
    def make(T):
        x = T.ones(2, dtype=getattr(T, a))
        y = 1.0 if b == "number" else T.ones(2, dtype=getattr(T, b))
        return getattr(T, op)(x, y)

    assert _outcome(lambda: make(ctorch)) == _outcome(lambda: make(torch))
