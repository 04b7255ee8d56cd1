"""Real PyTorch as the compat tests' oracle: the helpers every compat test file shares.

Imported as a plain module (``from torch_oracle import npv``; pytest puts ``tests/compat``
on ``sys.path`` for the files and the ``conftest.py`` in it), as ``tests/jax_oracle.py`` is
for funcgrad's tests. The fixtures built on it (``real_torch``, ``lib``, ``torch``) are in
``tests/compat/conftest.py``.

* ``import_real_torch()``: PyTorch, or a skip (a failure under ``COMPAT_REQUIRE_TORCH=1``).
* ``npv(value)``: a tensor of either library (or a list, scalar, array) as a NumPy array.
* ``check_scenario(scenario, compat, real)`` / ``check(scenario)``: a scenario recording
  values on both libraries; the records must agree. ``error_of(fn)``: what ``fn`` raised.
* ``compare(real_torch, fn, arrays)`` / ``same_error(real_torch, fn, arrays)``: one
  ``nn.functional`` call on both libraries: values, dtypes and gradients, or the error type.
* ``assert_close_tree(a, b, tol)``: two nested results (tuples, lists, dicts of tensors)
  with the same structure, dtypes and shapes, and values within ``tol``.
* ``fd_jacobian``: central-difference Jacobians; ``square(lib)``: an ``autograd.Function``.
"""

from __future__ import annotations

import importlib
import os
import warnings

import numpy as np
import pytest

import compat.torch as ctorch
import compat.torch.nn.functional as CF

# ------------------------------------------------------------------------- the oracle


def import_real_torch():
    """Real PyTorch, the oracle; the test is skipped where it is not installed.

    ``COMPAT_REQUIRE_TORCH=1`` (CI, where it could install torch) turns the skip into a
    failure, so a broken install cannot pass the suite with every oracle skipped. Usable in
    a test, a fixture, or at a module's top level (``real = import_real_torch()``).
    """
    try:
        return importlib.import_module("torch")
    except ImportError:
        if os.environ.get("COMPAT_REQUIRE_TORCH") == "1":
            pytest.fail("COMPAT_REQUIRE_TORCH=1 but PyTorch is not importable")
        # (at a module's top level it skips the whole module, as pytest.importorskip does)
        pytest.skip(
            "PyTorch is not installed: the oracle half of this test is skipped",
            allow_module_level=True,
        )


def is_compat(lib) -> bool:
    """Whether ``lib`` is ``compat.torch`` (or a module of it) rather than real PyTorch."""
    return lib.__name__.startswith("compat")


def npv(value, dtype=None) -> np.ndarray | None:
    """``value`` as a NumPy array: a tensor of either library detached (``.detach().numpy()``),
    anything else (arrays, lists, Python scalars) through ``np.asarray``; ``dtype`` casts.
    ``None`` (an absent gradient or tangent) stays ``None``."""
    if value is None:
        return None
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.asarray(value, dtype=dtype)


# ------------------------------------------------------------------------- scenarios


def norm_value(v):
    """A comparable form of a recorded value (tensors of either library, containers)."""
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [norm_value(x) for x in v]
    if hasattr(v, "detach") and hasattr(v, "requires_grad"):
        return ("tensor", str(v.dtype).replace("torch.", ""), np.array(v.detach().numpy()))
    return v


def assert_same(x, y) -> None:
    """Two normalized records agree (tensors: dtype and values to 1e-6)."""
    if isinstance(x, tuple) and x and x[0] == "tensor":
        assert isinstance(y, tuple) and y[0] == "tensor", (x, y)
        assert x[1] == y[1], (x, y)
        np.testing.assert_allclose(x[2], y[2], rtol=1e-6, atol=1e-6)
    elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], list):
        assert isinstance(y, tuple) and x[0] == y[0] and len(x[1]) == len(y[1]), (x, y)
        for p, q in zip(x[1], y[1]):
            assert_same(p, q)
    else:
        assert x == y, (x, y)


def check_scenario(scenario, compat_lib, real_lib):
    """Run ``scenario(torch, rec)`` on both libraries; their records must agree.

    ``real_lib`` may be a callable returning the library: it is called after the compat
    half ran (so compat runs even where the oracle is skipped)."""
    logs = {}
    for name, lib in (("compat", compat_lib), ("torch", real_lib)):
        if callable(lib):
            lib = lib()
        log = []

        def rec(*vals, log=log):
            log.extend(norm_value(v) for v in vals)

        scenario(lib, rec)
        logs[name] = log
    a, b = logs["compat"], logs["torch"]
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        assert_same(x, y)
    return a


def check(scenario):
    """``check_scenario`` on ``compat.torch`` and real PyTorch (imported after compat ran)."""
    return check_scenario(scenario, ctorch, import_real_torch)


def assert_close_tree(a, b, tol: float) -> None:
    """Nested results ``a`` and ``b`` (tuples/lists/dicts of tensors of either library) have
    the same structure, the same dtype names and shapes leaf by leaf, and values within
    ``tol`` (relative and absolute)."""
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_close_tree(x, y, tol)
        return
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            assert_close_tree(a[k], b[k], tol)
        return
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def random_tensor(lib, rng, shape, dtype: str):
    """A tensor of ``lib`` (compat or PyTorch) drawn from ``rng``: bools, small integers
    (0 to 3), or floats (and complex parts) in (-2, 2); ``dtype`` a name (``"int64"``)."""
    if dtype == "bool":
        v = rng.random(shape) < 0.5
    elif np.dtype(dtype).kind in "iu":
        v = rng.integers(0, 4, shape)
    else:
        v = rng.uniform(-2, 2, shape)
        if np.dtype(dtype).kind == "c":
            v = v + 1j * rng.uniform(-2, 2, shape)
    return lib.tensor(np.asarray(v).tolist(), dtype=getattr(lib, dtype))


def error_of(fn):
    """``(exception type name, message)`` of ``fn()``, or ``"no error"``."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "no error"


def outcome(lib, fn):
    """What ``fn(lib)`` gives, to compare compat with PyTorch: the error's type and text (less
    the user-code location compat appends), or the result's dtype, shape, values (widened to
    float64 or complex128), ``grad_fn`` name and the warnings raised (less PyTorch's C++
    origin suffix)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
        except Exception as e:  # (compared with PyTorch's)
            return type(e).__name__, str(e).split("\n  (in your code at")[0]
    said = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    node = r.grad_fn.name() if r.grad_fn is not None else None
    wide = lib.complex128 if r.dtype.is_complex else lib.float64
    return str(r.dtype), tuple(r.shape), npv(r.detach().to(wide)), node, said


def square(lib):
    """An ``autograd.Function`` of ``lib`` computing ``x * x`` (saves ``x`` for backward)."""

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    return Square


# ------------------------------------------------------------------------- nn.functional

#: ``compare``'s tolerances by the output's dtype
F64 = dict(rtol=1e-9, atol=1e-10)
F32 = dict(rtol=2e-5, atol=2e-6)


def _run(lib, F, fn, arrays, grads, ct_seed):
    ts = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        req = (grads is None and a.dtype.kind == "f") or (grads is not None and i in grads)
        ts.append(lib.tensor(a, requires_grad=bool(req)))
    out = fn(F, lib, *ts)
    extra = None
    if isinstance(out, tuple):
        out, extra = out
    if out.requires_grad:
        rng = np.random.default_rng(ct_seed)
        ct = rng.standard_normal(tuple(out.shape)).astype(npv(out).dtype)
        (out * lib.tensor(ct)).sum().backward()
    return out, extra, [t.grad for t in ts]


def compare(real_torch, fn, arrays, grads=None, tol=None, ct_seed=0):
    """Compare ``fn(F, torch, *tensors)`` on compat and PyTorch; returns compat's output.

    Both run on the same inputs and back-propagate the same random cotangent through the
    (first) output; shapes, dtypes, values and the gradient of every input that requires
    one must agree (a second output, e.g. indices, exactly). ``grads`` lists the indices
    of the inputs that require grad (default: the floating ones).
    """
    TF = real_torch.nn.functional
    y, yi, gs = _run(ctorch, CF, fn, arrays, grads, ct_seed)
    yt, yti, gts = _run(real_torch, TF, fn, arrays, grads, ct_seed)
    if tol is None:
        tol = F64 if str(yt.dtype) == "torch.float64" else F32
    assert tuple(y.shape) == tuple(yt.shape)
    assert str(y.dtype) == str(yt.dtype)
    np.testing.assert_allclose(npv(y), npv(yt), **tol)
    if yti is not None:
        assert str(yi.dtype) == str(yti.dtype)
        np.testing.assert_array_equal(npv(yi), npv(yti))
    for g, gt in zip(gs, gts):
        assert (g is None) == (gt is None)
        if g is not None:
            np.testing.assert_allclose(npv(g), npv(gt), **tol)
    return y


def same_error(real_torch, fn, arrays):
    """Both libraries raise the same exception type; returns (compat's, torch's) exception."""
    TF = real_torch.nn.functional
    errs = []
    for lib, F in ((ctorch, CF), (real_torch, TF)):
        ts = [lib.tensor(np.asarray(a)) for a in arrays]
        try:
            fn(F, lib, *ts)
        except Exception as e:
            errs.append(e)
        else:
            errs.append(None)
    assert errs[1] is not None, "PyTorch accepted the input"
    assert type(errs[0]) is type(errs[1]), (errs[0], errs[1])
    return errs


# ------------------------------------------------------------------------- derivatives


def fd_jacobian(f, xs, eps=1e-6):
    """Central-difference Jacobians of ``f(*xs) -> ndarray`` w.r.t. each float64 array."""
    out = np.asarray(f(*xs), np.float64)
    jacs = []
    for i, x in enumerate(xs):
        x = np.asarray(x, np.float64)
        jac = np.zeros(out.shape + x.shape)
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            args_p = list(xs)
            args_m = list(xs)
            args_p[i], args_m[i] = xp, xm
            d = (np.asarray(f(*args_p), np.float64) - np.asarray(f(*args_m), np.float64)) / (
                2 * eps
            )
            jac[(...,) + idx] = d
        jacs.append(jac)
    return out, jacs
