"""``torch.testing`` (``make_tensor``, ``assert_close``) and the CPU build's backend probes
(``backends.quantized``, ``backends.cudnn.flags``, ``cuda.is_tf32_supported``), against
PyTorch 2.13.

``make_tensor``'s draws are random in both libraries, so what is compared is what PyTorch
fixes: dtype, shape, the interval the values fall in (defaults per dtype, clamping to the
dtype's range), contiguity, ``exclude_zero``, ``requires_grad`` and the errors, word for
word. ``assert_close`` is compared on its outcome and message, word for word.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]  # fmt: skip


def _values(t: object) -> np.ndarray:
    t = t.detach()  # type: ignore[attr-defined]
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    a = np.asarray(t.numpy())
    return np.concatenate([a.real.ravel(), a.imag.ravel()]) if a.dtype.kind == "c" else a.ravel()


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("bounds", [(None, None), (-3, 4), (2, None), (None, 1), (-1e30, 1e30)])
def test_values_fall_in_pytorchs_interval(name: str, bounds: tuple) -> None:
    low, high = bounds
    if name == "bool" and bounds != (None, None):
        low, high = (0, 1) if high == 1 else (None, None)
    ours = ctorch.testing.make_tensor(400, dtype=getattr(ctorch, name), device="cpu",
                                      low=low, high=high)  # fmt: skip
    ref = torch.testing.make_tensor(400, dtype=getattr(torch, name), device="cpu",
                                    low=low, high=high)  # fmt: skip
    assert str(ours.dtype) == str(ref.dtype)
    assert tuple(ours.shape) == tuple(ref.shape) == (400,)
    a, b = _values(ours).astype(np.float64), _values(ref).astype(np.float64)
    # 400 uniform draws come within a few percent of both ends of the interval
    slack = 0.05 * max(np.ptp(b), 1.0)
    assert abs(a.min() - b.min()) <= slack and abs(a.max() - b.max()) <= slack


@pytest.mark.parametrize("name", ["int8", "float32", "complex64"])
def test_shape_forms_noncontiguous_exclude_zero_requires_grad(name: str) -> None:
    for shape in [(2, 3), ((2, 3),), ([4],), ()]:
        ours = ctorch.testing.make_tensor(*shape, dtype=getattr(ctorch, name), device="cpu")
        ref = torch.testing.make_tensor(*shape, dtype=getattr(torch, name), device="cpu")
        assert tuple(ours.shape) == tuple(ref.shape)
    ours = ctorch.testing.make_tensor(3, 4, dtype=getattr(ctorch, name), noncontiguous=True)
    ref = torch.testing.make_tensor(3, 4, dtype=getattr(torch, name), noncontiguous=True,
                                    device="cpu")  # fmt: skip
    assert ours.is_contiguous() == ref.is_contiguous() is False
    assert tuple(ours.stride()) == tuple(ref.stride())
    one = ctorch.testing.make_tensor(1, dtype=getattr(ctorch, name), noncontiguous=True)
    assert one.is_contiguous()  # fewer than two elements: ignored, as PyTorch's
    z = ctorch.testing.make_tensor(2000, dtype=getattr(ctorch, name), low=-1, high=1,
                                   exclude_zero=True)  # fmt: skip
    assert bool((z != 0).all())
    if name != "int8":
        g = ctorch.testing.make_tensor(2, dtype=getattr(ctorch, name), requires_grad=True)
        assert g.requires_grad and g.is_leaf


def _message(fn: object, lib: object, *args: object, **kwargs: object) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)  # type: ignore[operator]
    return type(info.value), str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": "float32", "low": 3, "high": 1},
        {"dtype": "int64", "low": 5, "high": 5},
        {"dtype": "float32", "low": float("nan")},
        {"dtype": "int32", "requires_grad": True},
        {"dtype": "bool", "requires_grad": True},
        {"dtype": "uint8", "low": -20, "high": -10},
    ],
)
def test_errors_as_pytorchs(kwargs: dict) -> None:
    name = kwargs.pop("dtype")
    ours = _message(ctorch.testing.make_tensor, ctorch, 3, dtype=getattr(ctorch, name),
                    device="cpu", **kwargs)  # fmt: skip
    ref = _message(torch.testing.make_tensor, torch, 3, dtype=getattr(torch, name),
                   device="cpu", **kwargs)  # fmt: skip
    assert ours[0] is ref[0]
    assert ours[1] == ref[1]


def test_low_equal_high_warns_and_fills() -> None:
    with pytest.warns(FutureWarning, match="deprecated since 2.1"):
        ours = ctorch.testing.make_tensor(3, dtype=ctorch.float32, low=2, high=2)
    with pytest.warns(FutureWarning, match="deprecated since 2.1"):
        ref = torch.testing.make_tensor(3, dtype=torch.float32, device="cpu", low=2, high=2)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_backend_probes_of_a_cpu_build() -> None:
    # compat has no quantized engine (PyTorch's CPU build has fbgemm and others): a program
    # probing for one sees a list of names holding the engine in use, as in PyTorch
    for lib in (ctorch, torch):
        engines = lib.backends.quantized.supported_engines
        assert isinstance(engines, list) and all(isinstance(e, str) for e in engines)
        assert lib.backends.quantized.engine in engines
    assert "fbgemm" not in ctorch.backends.quantized.supported_engines
    assert ctorch.cuda.is_tf32_supported() is torch.cuda.is_tf32_supported() is False


@pytest.mark.parametrize(
    "kw", [{}, {"enabled": True, "benchmark": True}, {"deterministic": True, "allow_tf32": False}]
)
def test_cudnn_flags_block(kw: dict) -> None:
    # (benchmark_limit left out: PyTorch's CPU build reads it as None, compat as 10)
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")

    def seen(lib: object) -> list[tuple]:
        cudnn = lib.backends.cudnn  # type: ignore[attr-defined]
        out = [tuple(getattr(cudnn, n) for n in names)]
        with pytest.raises(KeyError), cudnn.flags(**kw):
            out.append(tuple(getattr(cudnn, n) for n in names))
            with cudnn.flags(benchmark_limit=3):
                out.append(tuple(getattr(cudnn, n) for n in names))
            out.append(tuple(getattr(cudnn, n) for n in names))
            raise KeyError  # the flags come back after an error too
        out.append(tuple(getattr(cudnn, n) for n in names))
        return out

    assert seen(ctorch) == seen(torch)


CLOSE_CASES = [
    ("t", [1.0, 2.0, 3.0], "t", [1.0, 2.1, 3.0], {}),
    ("t", [1.0, 2.0, 3.0], "t", [1.0, 2.0000001, 3.0], {}),
    ("t", [[1.0, 2.0], [3.0, 4.0]], "t", [[1.0, 2.0], [3.0, 5.0]], {}),
    ("t", [1, 2, 3], "t", [1, 3, 3], {}),
    ("t", [True], "t", [False], {}),
    ("t", [1.0, 2.0], "t", [1.0, 2.0, 3.0], {}),
    ("t64", [1.0, 2.0], "t", [1.0, 2.0], {}),
    ("t64", [1.0, 2.0], "t", [1.0, 2.0], {"check_dtype": False}),
    ("t", [float("nan")], "t", [float("nan")], {}),
    ("t", [float("nan")], "t", [float("nan")], {"equal_nan": True}),
    ("t", [float("inf"), 1.0], "t", [float("inf"), 1.0], {}),
    ("t", 1.5, "t", 2.5, {}),
    ("t", [1.0, 2.0], "t", [1.1, 2.0], {"rtol": 0.2, "atol": 0.0}),
    ("t", [1.0, 2.0], "t", [1.1, 2.0], {"rtol": 1e-3}),
    ("t", [[1.0, 2.0], [3.0, 4.0]], "t", [[1.0, 2.0], [3.0, 5.0]], {"msg": "custom"}),
    ("n", 1.0, "n", 1.1, {}),
    ("n", 1, "n", 2, {}),
    ("n", 1, "n", 1, {}),
    ("n", 1.0, "n", 1.0 + 1e-9, {}),
]


def _make(lib: object, kind: str, value: object) -> object:
    if kind == "n":
        return value
    dtype = None
    if kind == "t64":
        dtype = lib.float64  # type: ignore[attr-defined]
    return lib.tensor(value, dtype=dtype)  # type: ignore[attr-defined]


def _closeness(lib: object, a: tuple, b: tuple, kw: dict) -> tuple[str, str]:
    try:
        lib.testing.assert_close(_make(lib, *a), _make(lib, *b), **kw)  # type: ignore[attr-defined]
    except Exception as e:  # the error is what is compared
        return type(e).__name__, str(e).replace("compat._core.tensor.Tensor", "torch.Tensor")
    return "ok", ""


@pytest.mark.parametrize("case", CLOSE_CASES)
def test_assert_close_as_pytorchs(case: tuple) -> None:
    ka, va, kb, vb, kw = case
    ours = _closeness(ctorch, (ka, va), (kb, vb), kw)
    assert ours == _closeness(torch, (ka, va), (kb, vb), kw)


def test_assert_close_containers() -> None:
    def run(lib: object) -> list[tuple[str, str]]:
        t = lib.tensor  # type: ignore[attr-defined]
        pairs = [
            ([t([1.0]), t([2.0])], [t([1.0]), t([2.5])]),
            ((t([1.0]),), [t([1.0])]),
            ([1, 2], [1, 2, 3]),
            ({"a": t([1.0])}, {"b": t([1.0])}),
            ({"a": [t([1.0]), 2.0]}, {"a": [t([1.0]), 2.5]}),
            (t([1.0]), 1.0),
            (None, None),
        ]
        out = []
        for x, y in pairs:
            try:
                lib.testing.assert_close(x, y)  # type: ignore[attr-defined]
                out.append(("ok", ""))
            except Exception as e:  # the error is what is compared
                out.append((type(e).__name__, str(e).replace("compat._core.tensor.", "torch.")))
        return out

    assert run(ctorch) == run(torch)


def test_assert_close_of_numpy_arrays() -> None:
    """Two NumPy arrays compare as the tensors they make (values and dtypes), as PyTorch's."""
    real = pytest.importorskip("torch")
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.1])
    for lib in (real, ctorch):
        lib.testing.assert_close(a, a.copy())
        with pytest.raises(AssertionError, match="Tensor-likes are not close"):
            lib.testing.assert_close(a, b)
        with pytest.raises(AssertionError, match="'dtype' do not match"):
            lib.testing.assert_close(a, a.astype(np.float32))
        with pytest.raises(TypeError, match="No comparison pair"):
            lib.testing.assert_close(lib.tensor([1.0, 2.0], dtype=lib.float64), a)
