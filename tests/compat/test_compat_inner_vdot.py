"""compat's ``inner`` and ``vdot`` against PyTorch 2.13 (the ``real_torch`` fixture): on 0- to
2-d operands of one dtype, of two dtypes, of mismatched sizes, bools and complex numbers,
the result's dtype, shape, values and node, or the exception's type and message; and the
gradients of a float64 case."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

#: (input shape, other shape, input dtype, other dtype)
CASES = [
    ((2, 3), (4, 3), "float32", "float32"),
    ((3,), (3,), "float64", "float64"),
    ((), (3,), "float32", "float32"),
    ((2, 2), (3,), "float32", "float32"),
    ((2,), (2,), "float32", "int64"),
    ((2,), (2,), "float32", "float64"),
    ((3,), (2,), "float32", "float32"),
    ((2,), (2,), "int64", "int64"),
    ((2,), (2,), "bool", "bool"),
    ((2, 2), (3, 2), "bool", "bool"),
    ((), (2,), "bool", "bool"),
    ((3,), (3,), "complex64", "complex64"),
]


def _tensor(lib, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, shape) + (1j * rng.integers(-3, 4, shape) if "complex" in dtype else 0)
    t = lib.tensor(np.asarray(v).tolist(), dtype=getattr(lib, dtype))
    return t.requires_grad_() if dtype.startswith(("float", "complex")) else t


def _outcome(lib, name, case):
    a, b = (_tensor(lib, s, d, i) for i, (s, d) in enumerate(zip(case[:2], case[2:])))
    try:
        r = getattr(lib, name)(a, b)
    except Exception as e:  # (compared with PyTorch's)
        return type(e).__name__, str(e)
    node = r.grad_fn.name() if r.grad_fn is not None else None
    return str(r.dtype), tuple(r.shape), np.asarray(r.detach().tolist()).tolist(), node


@pytest.mark.parametrize("name", ["inner", "vdot"])
def test_as_pytorch(real_torch, name):
    for case in CASES:
        assert _outcome(ctorch, name, case) == _outcome(real_torch, name, case), (name, case)


@pytest.mark.parametrize("name,shapes", [("inner", ((2, 3), (4, 3))), ("inner", ((), (3,))),
                                         ("vdot", ((3,), (3,)))])  # fmt: skip
def test_gradients_as_pytorch(real_torch, name, shapes):
    grads = []
    for lib in (ctorch, real_torch):
        a, b = (_tensor(lib, s, "float64", i) for i, s in enumerate(shapes))
        getattr(lib, name)(a, b).sum().backward()
        grads.append([a.grad.tolist(), b.grad.tolist()])
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
