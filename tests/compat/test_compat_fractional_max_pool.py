"""``nn.functional.fractional_max_pool2d``/``3d`` (``_with_indices``) and
``nn.FractionalMaxPool2d``/``3d`` against PyTorch 2.13 with the same random samples:
values, indices and gradients bit for bit; output ratios, unbatched inputs, the
drawn samples' shape, and the checks."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

CASES = [
    (2, (2, 3, 9, 11), (2, 3), {"output_size": (5, 4)}),
    (2, (3, 9, 11), 2, {"output_size": (8, 10)}),
    (2, (1, 2, 10, 10), 3, {"output_size": 4}),
    (2, (2, 2, 10, 7), 2, {"output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 7, 8, 9), (2, 2, 3), {"output_size": (4, 5, 3)}),
    (3, (2, 6, 6, 6), 2, {"output_ratio": 0.5}),
]


@pytest.mark.parametrize(("nd", "shape", "kernel", "kwargs"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_indices_gradients(nd, shape, kernel, kwargs, dtype, real_torch):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype(dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    u = rng.random((n, shape[-nd - 1], nd)).astype(dtype)
    results = []
    for lib in (real_torch, ctorch):
        f = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        xt = lib.tensor(x, requires_grad=True)
        v, i = f(xt, kernel, return_indices=True, _random_samples=lib.tensor(u), **kwargs)
        w = lib.arange(v.numel(), dtype=getattr(lib, dtype)).reshape(v.shape)
        (g,) = lib.autograd.grad((v * w).sum(), xt)
        vi = getattr(lib.nn.functional, f"fractional_max_pool{nd}d_with_indices")(
            lib.tensor(x), kernel, _random_samples=lib.tensor(u), **kwargs
        )
        results.append((v.detach().numpy(), i.numpy(), g.numpy(), vi[0].numpy(), str(i.dtype)))
    (vt, it, gt, wt, dt), (vc, ic, gc, wc, dc) = results
    assert dc == dt
    np.testing.assert_array_equal(vc, vt)
    np.testing.assert_array_equal(ic, it)
    np.testing.assert_array_equal(gc, gt)
    np.testing.assert_array_equal(wc, wt)


def test_modules_and_drawn_samples(real_torch):
    u = np.random.default_rng(1).random((2, 3, 2)).astype(np.float32)
    x = np.random.default_rng(2).normal(size=(2, 3, 8, 8)).astype(np.float32)
    outs = []
    for lib in (real_torch, ctorch):
        m = lib.nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=lib.tensor(u))
        outs.append(m(lib.tensor(x)).numpy())
        assert "_random_samples" in dict(m.named_buffers())
        lib.manual_seed(0)
        drawn = lib.nn.FractionalMaxPool3d(2, output_size=2, return_indices=True)(
            lib.ones(2, 4, 4, 4)
        )
        assert tuple(drawn[0].shape) == (2, 2, 2, 2) and tuple(drawn[1].shape) == (2, 2, 2, 2)
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 5, 5), 4, output_size=3),
        lambda lib: lib.nn.functional.fractional_max_pool2d(
            lib.ones(1, 1, 5, 5), (2, 4), output_size=3
        ),
        lambda lib: lib.nn.functional.fractional_max_pool3d(
            lib.ones(1, 1, 5, 5, 5), (4, 2, 2), output_size=3
        ),
        lambda lib: lib.nn.functional.fractional_max_pool2d(
            lib.ones(1, 1, 5, 5), 2, output_size=3, _random_samples=lib.rand(1, 2, 2)
        ),
        lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 5, 5), 2),
        lambda lib: lib.nn.FractionalMaxPool2d(2),
        lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
        lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=1.5),
    ],
)
def test_checks(call, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises((RuntimeError, ValueError)) as e:
            call(lib)
        msgs.append((type(e.value), str(e.value)))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("shape", [(0, 2, 6, 6), (2, 0, 6, 6), (0, 6, 6)])
@pytest.mark.parametrize("nd", [2, 3])
def test_empty_batch_and_empty_channels_as_pytorch(real_torch, shape, nd):
    shape = shape + (5,) * (nd - 2)
    out = (3, 3) if nd == 2 else (3, 3, 2)

    def run(lib):
        pool = getattr(lib.nn, f"FractionalMaxPool{nd}d")(2, output_size=out, return_indices=True)
        try:
            y, i = pool(lib.zeros(shape))
        except RuntimeError as e:
            return str(e)
        return tuple(y.shape), tuple(i.shape), str(i.dtype)

    assert run(ctorch) == run(real_torch)


def _sample_cases(lib):
    """Calls of PyTorch's ``test_FractionalMaxPool*_zero_samples`` and the kernel, output
    and sample checks of its ``test_fractional_max_pool*``, on ``lib``."""
    F = lib.nn.functional
    x2, x3 = lib.zeros(2, 7, 7), lib.zeros(2, 7, 7, 7)
    s2, s3 = lib.full((1, 2, 2), 0.3), lib.full((1, 2, 3), 0.3)
    many = lib.linspace(0, 1, 64).reshape(2, 16, 2)
    calls = [
        lambda: F.fractional_max_pool2d(lib.zeros(0, 16, 32, 32), 2, 1, None, False,
                                        lib.zeros(0, 16, 2)),
        lambda: F.fractional_max_pool2d(lib.zeros(1, 16, 32, 32), 2, 1, None, False,
                                        lib.zeros(0, 16, 2)),
        lambda: F.fractional_max_pool2d(lib.arange(16 * 64.0).reshape(1, 16, 8, 8), 2, 3,
                                        None, False, many),
        lambda: F.fractional_max_pool2d(lib.zeros(1, 16, 8, 8), 2, 1, None, False,
                                        lib.zeros(1, 16, 3)),
        lambda: F.fractional_max_pool2d(lib.zeros(1, 16, 8, 8), 2, 1, None, False,
                                        lib.zeros(16, 2)),
        lambda: F.fractional_max_pool3d(lib.zeros(0, 16, 5, 4, 4), (3, 2, 2), 1, None, False,
                                        lib.zeros(0, 16, 3)),
        lambda: F.fractional_max_pool3d(lib.zeros(1, 16, 5, 4, 4), (3, 2, 2), 1, None, False,
                                        lib.zeros(0, 16, 3)),
    ]  # fmt: skip
    for k in [(), (1,), (1, 2, 3)]:
        calls.append(lambda k=k: F.fractional_max_pool2d(x2, k, (3, 3), _random_samples=s2))
    for o in [(9, 3), (3, 9), (3,), (), (3, 3, 3)]:
        calls.append(lambda o=o: F.fractional_max_pool2d(x2, 2, o, _random_samples=s2))
    for k in [(), (1,), (1, 2)]:
        calls.append(lambda k=k: F.fractional_max_pool3d(x3, k, (3, 3, 3), _random_samples=s3))
    for o in [(9, 3, 3), (3, 9, 3), (3, 3, 9), (3,), (), (3, 3)]:
        calls.append(lambda o=o: F.fractional_max_pool3d(x3, 2, o, _random_samples=s3))
    return calls


def _outcome(call):
    try:
        out = call()
    except Exception as e:  # (the outcome compared is the error's type and words)
        return type(e).__name__, str(e)
    return "ok", tuple(out.shape), out.numpy().ravel().tolist()


def test_sample_and_size_checks(real_torch):
    ours = [_outcome(c) for c in _sample_cases(ctorch)]
    ref = [_outcome(c) for c in _sample_cases(real_torch)]
    assert ours == ref
