"""``torch.special``'s Bessel and Airy functions, orthogonal polynomials, ``erfcx``, ``zeta``
and the spellings of top-level ops, against PyTorch 2.13 (values, dtypes, which results
require grad, gradients where PyTorch has them, errors) and SciPy.

PyTorch's float64 Bessel and Airy kernels are off by up to ~3e-6 (absolute) from the
true values (SciPy's agree with each other to 1e-12): compat is compared with PyTorch at
that tolerance and with SciPy tightly.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import compat.torch as ctorch

X = np.concatenate(
    [
        np.linspace(-40, 40, 801),
        np.geomspace(1e-8, 700, 300),
        -np.geomspace(1e-8, 300, 100),
        [0.0, -0.0, np.inf, -np.inf, np.nan],
    ]
)

SCIPY = {
    "bessel_j0": ss.j0,
    "bessel_j1": ss.j1,
    "bessel_y0": ss.y0,
    "bessel_y1": ss.y1,
    "modified_bessel_i0": ss.i0,
    "modified_bessel_i1": ss.i1,
    "modified_bessel_k0": ss.k0,
    "modified_bessel_k1": ss.k1,
    "scaled_modified_bessel_k0": ss.k0e,
    "scaled_modified_bessel_k1": ss.k1e,
    "spherical_bessel_j0": lambda x: ss.spherical_jn(0, x),
    "airy_ai": lambda x: ss.airy(x)[0],
}

POLYNOMIALS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


def _close(ours, want, rtol, atol):
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(want))
    ok = np.isfinite(want)
    np.testing.assert_allclose(ours[ok], want[ok], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", list(SCIPY))
def test_bessel_airy_float64(name, real_torch):
    x = X[np.abs(X) <= 700] if "i0" in name or "i1" in name else X
    if name == "spherical_bessel_j0":
        x = x[np.isfinite(x)]  # (PyTorch: 0 at +-inf, SciPy: 0, compat: sin(inf)/inf NaN)
    ours = getattr(ctorch.special, name)(ctorch.tensor(x)).numpy()
    theirs = getattr(real_torch.special, name)(real_torch.tensor(x)).numpy()
    _close(ours, theirs, rtol=1e-6, atol=3e-6)
    want = SCIPY[name](x)
    ok = np.isfinite(want) & np.isfinite(theirs)
    # relative where large (K near 0, I), absolute near zeros of the oscillating ones
    np.testing.assert_allclose(ours[ok], want[ok], rtol=1e-10, atol=2e-11)


@pytest.mark.parametrize("name", list(SCIPY))
def test_bessel_airy_float32_int_and_no_grad(name, real_torch):
    x = np.linspace(0.25, 9.75, 39)
    results = []
    for lib in (real_torch, ctorch):
        t = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        y = getattr(lib.special, name)(t)
        yi = getattr(lib.special, name)(lib.tensor([1, 2, 3]))
        results.append(
            (y.detach().numpy(), y.dtype, y.requires_grad, y.grad_fn, yi.numpy(), yi.dtype)
        )
    (yt, dt, rt, gt, it, idt), (yc, dc, rc, gc, ic, idc) = results
    assert str(dc) == str(dt) == "torch.float32" and str(idc) == str(idt)
    assert rc is rt is False and gc is gt is None
    np.testing.assert_allclose(yc, yt, rtol=2e-6, atol=3e-6)
    np.testing.assert_allclose(ic, it, rtol=2e-6, atol=3e-6)


@pytest.mark.parametrize("name", [*SCIPY, "erfcx"])
def test_no_half_or_complex_kernels(name, real_torch):
    for dtype in ("float16", "bfloat16", "complex64", "complex128"):
        msgs = []
        for lib in (real_torch, ctorch):
            with pytest.raises(NotImplementedError) as e:
                getattr(lib.special, name)(lib.ones(2, dtype=getattr(lib, dtype)))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_number_input_refused(real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises(TypeError) as e:
            lib.special.bessel_j0(2.0)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials(name, real_torch):
    x = np.linspace(-1.5, 1.5, 13)[:, None]
    n = np.array([-2, -1, 0, 1, 2, 3, 4, 7, 9, 12, 20.7])
    forms = [
        lambda lib: (lib.tensor(x), lib.tensor(n)),
        lambda lib: (lib.tensor(x, dtype=lib.float32), 5),
        lambda lib: (lib.tensor(x), 2.5),
        lambda lib: (0.75, lib.tensor([0, 1, 2, 6])),
        lambda lib: (lib.tensor([[1, 2], [0, -1]]), lib.tensor([3, 4])),
        lambda lib: (lib.tensor(x, requires_grad=True), lib.tensor(n, dtype=lib.float32)),
    ]
    for form in forms:
        results = []
        for lib in (real_torch, ctorch):
            y = getattr(lib.special, name)(*form(lib))
            results.append((y.detach().numpy(), str(y.dtype), y.requires_grad))
        (yt, dt, rt), (yc, dc, rc) = results
        assert dc == dt and rc is rt is False
        tol = 1e-5 if dt == "torch.float32" else 1e-12
        np.testing.assert_allclose(yc, yt, rtol=tol, atol=tol * np.abs(yt).max())


def test_polynomial_out_and_errors(real_torch):
    out = ctorch.empty(3, dtype=ctorch.float64)
    ctorch.special.legendre_polynomial_p(ctorch.tensor([0.1, 0.5, 0.9]), 4, out=out)
    want = real_torch.special.legendre_polynomial_p(real_torch.tensor([0.1, 0.5, 0.9]), 4)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="special_chebyshev_polynomial_t"):
        ctorch.special.chebyshev_polynomial_t(2.0, 3)
    with pytest.raises(TypeError, match="special_chebyshev_polynomial_t"):
        real_torch.special.chebyshev_polynomial_t(2.0, 3)
    with pytest.raises(NotImplementedError, match="hermite_polynomial_h_cpu"):
        ctorch.special.hermite_polynomial_h(ctorch.ones(2, dtype=ctorch.float16), 2)
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises(NotImplementedError) as e:
            lib.special.zeta(lib.ones(2, dtype=lib.complex64), lib.ones(2))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_erfcx_values_and_gradient(real_torch):
    x = np.array([-30.0, -26.0, -5.0, -1.0, 0.0, 0.3, 1.9, 2.0, 2.1, 5.0, 30.0, 1e10, 1e300])
    x = np.concatenate([x, np.linspace(-10, 50, 241), [np.inf, -np.inf, np.nan]])
    ours = ctorch.special.erfcx(ctorch.tensor(x)).numpy()
    theirs = real_torch.special.erfcx(real_torch.tensor(x)).numpy()
    _close(ours, theirs, rtol=1e-13, atol=0)
    _close(ours, ss.erfcx(x), rtol=1e-13, atol=0)
    xs = np.array([-3.0, -0.5, 0.5, 1.99, 2.01, 8.0])
    results = []
    for lib in (real_torch, ctorch):
        for dtype in (lib.float64, lib.float32):
            t = lib.tensor(xs, dtype=dtype, requires_grad=True)
            y = lib.special.erfcx(t)
            (g,) = lib.autograd.grad((y * lib.arange(6.0, dtype=dtype)).sum(), t)
            results.append((y.detach().numpy(), g.numpy(), y.grad_fn.name(), str(y.dtype)))
    for (yt, gt, nt, dt), (yc, gc, nc, dc) in zip(results[:2], results[2:]):
        assert (nc, dc) == (nt, dt)
        tol = 1e-13 if dt == "torch.float64" else 2e-6
        np.testing.assert_allclose(yc, yt, rtol=tol)
        np.testing.assert_allclose(gc, gt, rtol=tol, atol=tol)
    assert str(ctorch.special.erfcx(ctorch.tensor([1, 2])).dtype) == "torch.float32"


def test_zeta(real_torch):
    x = np.array([[1.5, 2.0, 3.0, 7.5], [1.1, 4.0, 10.0, 2.5]])
    q = np.array([0.5, 1.0, 2.0, 7.0])
    results = []
    for lib in (real_torch, ctorch):
        xt = lib.tensor(x)
        qt = lib.tensor(q, requires_grad=True)
        y = lib.special.zeta(xt, qt)
        (g,) = lib.autograd.grad((y * lib.tensor(x)).sum(), qt)
        ints = lib.special.zeta(lib.tensor([2, 3]), 1)
        num = lib.special.zeta(2.0, lib.tensor([1.0, 2.0]))
        results.append((y.detach().numpy(), g.numpy(), y.grad_fn.name(), ints, num))
    (yt, gt, nt, it, mt), (yc, gc, nc, ic, mc) = results
    assert nc == nt
    np.testing.assert_allclose(yc, yt, rtol=1e-12)
    np.testing.assert_allclose(gc, gt, rtol=1e-10)
    assert str(ic.dtype) == str(it.dtype) == "torch.float32"
    np.testing.assert_allclose(ic.numpy(), it.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mc.numpy(), mt.numpy(), rtol=1e-6)
    for lib in (real_torch, ctorch):
        xt = lib.tensor(x[0], requires_grad=True)
        with pytest.raises(
            NotImplementedError, match="the derivative for 'zeta' is not implemented"
        ):
            lib.special.zeta(xt, lib.tensor(q)).sum().backward()


def test_spellings_of_top_level_ops(real_torch):
    results = []
    for lib in (real_torch, ctorch):
        a = lib.tensor([2.5, 3.0, 4.25], requires_grad=True)
        ys = [
            lib.special.multigammaln(a, 2),
            lib.special.polygamma(1, a),
            lib.special.round(a * 1.37, decimals=1),
            lib.special.round(a * 1.37),
        ]
        grads = lib.autograd.grad(sum(y.sum() for y in ys[:2]), a)
        results.append(([y.detach().numpy() for y in ys], grads[0].numpy()))
    (yt, gt), (yc, gc) = results
    for c, t in zip(yc, yt):
        np.testing.assert_allclose(c, t, rtol=1e-6)
    np.testing.assert_allclose(gc, gt, rtol=1e-6)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ctorch.special.multigammaln(ctorch.tensor([2.5]), 0)


# PyTorch warns that it has no batching rule (it loops)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_under_vmap_with_batched_degrees(real_torch):
    x = np.linspace(-1.2, 1.9, 12).reshape(3, 4)
    n = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [-1, 9, 2, 12]])
    ours = ctorch.func.vmap(ctorch.special.legendre_polynomial_p)(
        ctorch.tensor(x), ctorch.tensor(n)
    )
    theirs = real_torch.func.vmap(real_torch.special.legendre_polynomial_p)(
        real_torch.tensor(x), real_torch.tensor(n)
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    j = ctorch.func.vmap(ctorch.special.bessel_j1)(ctorch.tensor(x))
    np.testing.assert_allclose(j.numpy(), ss.j1(x), rtol=1e-12, atol=1e-14)
