"""``torch.igamma``/``igammac`` (and ``torch.special.gammainc``/``gammaincc``) at the edges
of their domain, against PyTorch 2.13: ``a == 0``, infinite ``a`` and a NaN ``a`` with an
edge ``x`` were JAX's values (NaN where PyTorch's are 0 or 1, 1 where PyTorch's is NaN);
the derivative in ``x`` is unchanged (regular points, ``a == 0`` lanes)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as ctorch

torch = pytest.importorskip("torch")

inf, nan = float("inf"), float("nan")
# (no tiny positive ``a``: PyTorch's float32 ``igammac`` there is 1e-4 off SciPy's, which
# funcgrad's values follow)
_EDGES = [-inf, -2.0, -1e-3, -0.0, 0.0, 0.5, 1.0, 2.5, 1e3, inf, nan]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_every_pair_of_edges(name, dtype):
    a, x = (np.array(v) for v in zip(*itertools.product(_EDGES, _EDGES)))
    got = getattr(ctorch, name)(
        ctorch.tensor(a, dtype=getattr(ctorch, dtype)),
        ctorch.tensor(x, dtype=getattr(ctorch, dtype)),
    )
    want = getattr(torch, name)(
        torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(x, dtype=getattr(torch, dtype))
    )
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(
        got.float().numpy(), want.float().numpy(), rtol=1e-2 if "16" in dtype else 1e-5
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from(_EDGES) | st.floats(0, 50), min_size=1, max_size=6),
    st.lists(st.sampled_from(_EDGES) | st.floats(0, 50), min_size=1, max_size=6),
)
def test_special_spellings_and_broadcasting(a, x):
    a, x = np.array(a)[:, None], np.array(x)[None, :]
    for name in ("gammainc", "gammaincc"):
        got = getattr(ctorch.special, name)(ctorch.tensor(a), ctorch.tensor(x))
        want = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-12)


def test_gradient_in_x_as_pytorch():
    a = [0.5, 1.0, 2.5, 0.0, 0.0, 3.0]
    x = [0.3, 1.0, 4.0, 0.5, 2.0, 1e3]
    for name in ("igamma", "igammac"):
        grads = []
        for lib in (ctorch, torch):
            xt = lib.tensor(x, dtype=lib.float64, requires_grad=True)
            getattr(lib, name)(lib.tensor(a, dtype=lib.float64), xt).sum().backward()
            grads.append(xt.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-300)
