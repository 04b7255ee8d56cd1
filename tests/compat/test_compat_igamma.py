"""``torch.igamma``/``igammac`` and ``torch.special.gammainc``/``gammaincc`` against PyTorch.

The op table's rows compare values, dtypes, methods, in-place forms and ``out=``; here:
the gradient in ``other`` (PyTorch has none in ``input``), the errors, and promotion.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

A = np.array([[0.5, 1.5, 4.0], [2.0, 0.8, 7.0]])
X = np.array([0.7, 3.0, 5.5])


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
def test_value_and_gradient_in_other(name, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        fn = lib.special if name.startswith("special.") else lib
        a = lib.tensor(A)
        x = lib.tensor(X, requires_grad=True)
        y = getattr(fn, name.split(".")[-1])(a, x)
        (g,) = lib.autograd.grad((y * lib.tensor(A + 1.0)).sum(), x)
        results.append((y.detach().numpy(), g.numpy(), y.grad_fn.name()))
    (yt, gt, nt), (yc, gc, nc) = results
    np.testing.assert_allclose(yc, yt, rtol=1e-10)
    np.testing.assert_allclose(gc, gt, rtol=1e-8)
    assert nc == nt


@pytest.mark.parametrize(
    "a,b",
    [
        (np.array([1, 2]), np.array([1.0, 2.0], np.float32)),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0], np.float32)),
        (np.array([1, 2]), np.array([1, 2])),
    ],
)
def test_promotion_and_integer_error(a, b, real_torch):
    def run(lib):
        try:
            return lib.igamma(lib.tensor(a), lib.tensor(b)).dtype
        except NotImplementedError as e:
            return str(e)

    got, want = run(ctorch), run(real_torch)
    assert str(got).split(".")[-1] == str(want).split(".")[-1]


def test_python_number_is_a_type_error(real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(TypeError, match=r"igamma\(\): argument 'other' \(position 2\)"):
            lib.igamma(lib.tensor([1.0]), 2.0)
