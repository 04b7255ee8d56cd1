"""``torch.linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve`` against real PyTorch.

PyTorch's CPU kernels call LAPACK's ``sytrf``/``hetrf`` and ``sytrs``/``hetrs``;
compat's are its own Bunch-Kaufman code (``compat/_core/ops/linalg_ldl.py``). Compared
here: ``LD`` to rounding, the pivots (which rows were swapped, which blocks are 2 x 2)
and ``info`` exactly, solutions to rounding, for float32/float64/complex64/complex128,
``hermitian`` True/False, batches, indefinite matrices that need 2 x 2 pivots, integer
matrices full of ties, singular ones, empty ones, PyTorch's errors and its refusal to
differentiate. The op table's rows are also checked in ``test_compat_optable.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch_oracle import npv

import compat.torch as ctorch

RNG = np.random.default_rng(15)
_FIXTURE_OK = [HealthCheck.function_scoped_fixture]
DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def _rand(shape, dtype, rng=RNG):
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _zero_diagonal(shape, dtype):
    """Indefinite, with a zero diagonal: every first pivot needs a 2 x 2 block."""
    a = _rand(shape, dtype)
    idx = np.arange(shape[-1])
    a[..., idx, idx] = 0
    return a


def _lib_tensor(lib, a):
    return lib.tensor(np.ascontiguousarray(a))


def _same(ours, theirs, tol):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(npv(ours), npv(theirs), rtol=tol, atol=tol)


def _check_factor(real_torch, a, hermitian, tol):
    ours = ctorch.linalg.ldl_factor_ex(_lib_tensor(ctorch, a), hermitian=hermitian)
    theirs = real_torch.linalg.ldl_factor_ex(_lib_tensor(real_torch, a), hermitian=hermitian)
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_ldl_factor_ex"
    assert ours._fields == ("LD", "pivots", "info")
    assert all(x is getattr(theirs, f) for x, f in zip(theirs, ours._fields))
    assert str(ours.pivots.dtype) == str(theirs.pivots.dtype) == "torch.int32"
    np.testing.assert_array_equal(npv(ours.pivots), npv(theirs.pivots))
    np.testing.assert_array_equal(npv(ours.info), npv(theirs.info))
    assert str(ours.info.dtype) == str(theirs.info.dtype)
    _same(ours.LD, theirs.LD, tol)
    return ours, theirs


def _check_solve(real_torch, a, b, hermitian, tol):
    ours = ctorch.linalg.ldl_factor(_lib_tensor(ctorch, a), hermitian=hermitian)
    theirs = real_torch.linalg.ldl_factor(_lib_tensor(real_torch, a), hermitian=hermitian)
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_ldl_factor"
    x = ctorch.linalg.ldl_solve(*ours, _lib_tensor(ctorch, b), hermitian=hermitian)
    xt = real_torch.linalg.ldl_solve(*theirs, _lib_tensor(real_torch, b), hermitian=hermitian)
    _same(x, xt, tol)
    return npv(x)


def _full(a, hermitian):
    """The symmetric (Hermitian) matrix LAPACK reads from ``a``'s lower triangle."""
    low = np.tril(a)
    up = np.swapaxes(np.tril(a, -1), -1, -2)
    if hermitian and np.iscomplexobj(a):
        d = np.arange(a.shape[-1])
        low[..., d, d] = low[..., d, d].real
        up = up.conj()
    return low + up


def _integers(dtype):
    """Small integers (exact ties in the pivot search); this seed is nonsingular and
    needs two 2 x 2 blocks."""
    a = np.random.default_rng(6).integers(-2, 3, (6, 6)).astype(dtype)
    if dtype.startswith("complex"):
        a = a + 1j * np.random.default_rng(106).integers(-2, 3, (6, 6))
    return a.astype(dtype)


KINDS = [(d, h) for d in DTYPES for h in (False, True) if h is False or d != "float32"]


@pytest.mark.parametrize("dtype,hermitian", KINDS)
def test_factor_and_solve_match_pytorch(dtype, hermitian, real_torch):
    """A batch of a random matrix (read from its lower triangle only), an indefinite one
    with a zero diagonal and an integer one."""
    a = np.stack([_rand((6, 6), dtype), _zero_diagonal((6, 6), dtype), _integers(dtype)])
    ours, _ = _check_factor(real_torch, a, hermitian, TOL[dtype])
    assert not npv(ours.info).any()
    assert (npv(ours.pivots)[1, 0] < 0).all()  # a 2 x 2 block first
    b = _rand(a.shape[:-1] + (2,), dtype)
    x = _check_solve(real_torch, a, b, hermitian, TOL[dtype])
    residual = _full(a, hermitian).astype(np.complex128) @ x - b
    assert np.abs(residual).max() < 1e3 * TOL[dtype] * (1 + np.abs(x).max())


def test_large_matrix_matches_pytorch(real_torch):
    """Above LAPACK's usual block size (64) too: the same pivots on a random matrix."""
    a = _rand((70, 70), "float64")
    _check_factor(real_torch, a, False, 1e-9)
    _check_solve(real_torch, a, _rand((70, 1), "float64"), False, 1e-8)


@settings(max_examples=15, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(
    n=st.integers(1, 5),
    batch=st.sampled_from([(), (2,), (1, 2)]),
    dtype=st.sampled_from(["float64", "complex128"]),
    hermitian=st.booleans(),
    ints=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_inputs_match_pytorch(n, batch, dtype, hermitian, ints, seed, real_torch):
    rng = np.random.default_rng(seed)
    shape = batch + (n, n)
    if ints:  # small integers: exact ties in the pivot search, zero blocks
        a = rng.integers(-2, 3, shape).astype(dtype)
        if dtype == "complex128":
            a = a + 1j * rng.integers(-2, 3, shape)
    else:
        a = _rand(shape, dtype, rng)
    _, theirs = _check_factor(real_torch, a, hermitian, 1e-10)
    if not npv(theirs.info).any():
        _check_solve(real_torch, a, _rand(batch + (n, 2), dtype, rng), hermitian, 1e-8)


def test_solve_broadcasts_b_over_the_batch(real_torch):
    a = _zero_diagonal((2, 4, 4), "float64")
    b = _rand((3, 1, 4, 2), "float64")
    ours = ctorch.linalg.ldl_factor(ctorch.tensor(a))
    theirs = real_torch.linalg.ldl_factor(real_torch.tensor(a))
    x = ctorch.linalg.ldl_solve(*ours, ctorch.tensor(b[0, 0]))
    xt = real_torch.linalg.ldl_solve(*theirs, real_torch.tensor(b[0, 0]))
    _same(x, xt, 1e-10)
    assert tuple(x.shape) == (2, 4, 2)
    # B batched, LD not (PyTorch also accepts this; it is the other direction that it
    # checks against the pivots' shape)
    ld0, p0 = ours.LD[0], ours.pivots[0]
    x = ctorch.linalg.ldl_solve(ld0, p0, ctorch.tensor(b[:, 0]))
    xt = real_torch.linalg.ldl_solve(theirs.LD[0], theirs.pivots[0], real_torch.tensor(b[:, 0]))
    _same(x, xt, 1e-10)
    # int64 pivots are accepted
    x = ctorch.linalg.ldl_solve(ld0, p0.long(), ctorch.tensor(b[0, 0]))
    xt = real_torch.linalg.ldl_solve(
        theirs.LD[0], theirs.pivots[0].long(), real_torch.tensor(b[0, 0])
    )
    _same(x, xt, 1e-10)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_inputs(shape, real_torch):
    a = np.zeros(shape)
    ours, theirs = _check_factor(real_torch, a, False, 0)
    b = np.zeros(shape[:-1] + (2,))
    x = ctorch.linalg.ldl_solve(ours.LD, ours.pivots, ctorch.tensor(b))
    xt = real_torch.linalg.ldl_solve(theirs.LD, theirs.pivots, real_torch.tensor(b))
    _same(x, xt, 0)


def test_singular_matrices_report_info_and_raise(real_torch):
    a = np.stack([_rand((3, 3), "float64"), np.zeros((3, 3)), np.diag([1.0, 2.0, 0.0])])
    _check_factor(real_torch, a, False, 1e-12)
    _check_factor(real_torch, a[1:], False, 1e-12)
    for lib in (real_torch, ctorch):
        # PyTorch has no message for ldl's info: its check fails an internal assert
        with pytest.raises(RuntimeError, match=r"torch.linalg.ldl_factor: Unknown error code: 1\."):
            lib.linalg.ldl_factor(lib.tensor(a))
        with pytest.raises(RuntimeError, match=r"ldl_factor: Unknown error code: 3\."):
            lib.linalg.ldl_factor(lib.tensor(a[[0, 2, 1]]))  # the first batch element's
        with pytest.raises(RuntimeError, match=r"ldl_factor_ex: Unknown error code: 1\."):
            lib.linalg.ldl_factor_ex(lib.tensor(a), check_errors=True)
        lib.linalg.ldl_factor_ex(lib.tensor(a[:1]), check_errors=True)


def _errors():
    def ld(lib, n=3, dtype="float64"):
        a = lib.tensor(_full(RNG.standard_normal((n, n)), False)).to(getattr(lib, dtype))
        return lib.linalg.ldl_factor(a)

    def b(lib, *shape, dtype="float64"):
        return lib.ones(*shape, dtype=getattr(lib, dtype))

    return [
        (
            lambda lib: lib.linalg.ldl_factor(b(lib, 3, 4)),
            RuntimeError,
            "^torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are "
            "3 by 4 matrices",
        ),
        (
            lambda lib: lib.linalg.ldl_factor(b(lib, 3, dtype="int64")),
            RuntimeError,
            "^torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions.",
        ),
        (
            lambda lib: lib.linalg.ldl_factor(b(lib, 3, 4, dtype="float16")),
            RuntimeError,
            "3 by 4 matrices",
        ),
        (
            lambda lib: lib.linalg.ldl_factor_ex(b(lib, 3, 3, dtype="int64")),
            RuntimeError,
            "ldl_factor_ex: Expected a floating point or complex tensor as input. Got Long",
        ),
        (
            lambda lib: lib.linalg.ldl_factor(b(lib, 3, 3, dtype="float16")),
            NotImplementedError,
            "\"ldl_factor_kernel_cpu\" not implemented for 'Half'",
        ),
        (
            lambda lib: lib.linalg.ldl_factor(b(lib, 3, 3, dtype="bfloat16")),
            NotImplementedError,
            "\"ldl_factor_kernel_cpu\" not implemented for 'BFloat16'",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(*ld(lib), b(lib, 3, 2, dtype="float32")),
            RuntimeError,
            "Expected b and A to have the same dtype, but found b of type Float and A of "
            "type Double instead.",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(*ld(lib), b(lib, 4, 2)),
            RuntimeError,
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 "
            "but each b matrix is 4 by 2",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0], ld(lib)[1][:2], b(lib, 3, 2)),
            RuntimeError,
            r"Expected LD.shape\[:-1\] and pivots.shape to be the same, but got pivots with "
            r"shape \[2\] instead",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0].expand(2, 3, 3), ld(lib)[1], b(lib, 3, 2)),
            RuntimeError,
            r"but got pivots with shape \[3\] instead",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0][:2], ld(lib)[1], b(lib, 3, 2)),
            RuntimeError,
            "ldl_solve: A must be batches of square matrices, but they are 2 by 3 matrices",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0][0], ld(lib)[1], b(lib, 3, 2)),
            RuntimeError,
            "ldl_solve: The input tensor A must have at least 2 dimensions.",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0], ld(lib)[1].float(), b(lib, 3, 2)),
            RuntimeError,
            "Expected pivots to be integers. Got Float",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(
                ld(lib)[0].int(), ld(lib)[1], b(lib, 3, 2, dtype="int32")
            ),
            RuntimeError,
            "ldl_solve: Expected a floating point or complex tensor as input. Got Int",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(
                ld(lib)[0].half(), ld(lib)[1], b(lib, 3, 2, dtype="float16")
            ),
            NotImplementedError,
            "\"ldl_solve_kernel_cpu\" not implemented for 'Half'",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(*ld(lib), b(lib, 3)),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)",
        ),
        # PyTorch's order of checks
        (
            lambda lib: lib.linalg.ldl_solve(*ld(lib, dtype="float32"), b(lib, 4, 1)),
            RuntimeError,
            "found b of type Double and A of type Float",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0], ld(lib)[1][:2].float(), b(lib, 4, 1)),
            RuntimeError,
            "Incompatible matrix sizes",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(ld(lib)[0], ld(lib)[1][:2].float(), b(lib, 3, 1)),
            RuntimeError,
            "Expected LD.shape",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(
                ld(lib)[0].int(), ld(lib)[1][:2].float(), b(lib, 3, dtype="float32")
            ),
            RuntimeError,
            "ldl_solve: Expected a floating point or complex tensor as input. Got Int",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(
                ld(lib)[0].half(), ld(lib)[1][:2], b(lib, 3, 1, dtype="float16")
            ),
            RuntimeError,
            "Expected LD.shape",
        ),
        (
            lambda lib: lib.linalg.ldl_solve(
                ld(lib)[0].half().expand(2, 3, 3),
                ld(lib)[1].expand(2, 3),
                b(lib, 3, 3, 1, dtype="float16"),
            ),
            RuntimeError,
            r"^The size of tensor a \(3\) must match the size of tensor b \(2\) at "
            "non-singleton dimension 0$",
        ),
    ]


@pytest.mark.parametrize("call,exc,match", _errors())
def test_errors_match_pytorch(call, exc, match, real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(exc, match=match):
            call(lib)


def test_not_differentiable_as_in_pytorch(real_torch):
    a = _rand((3, 3), "float64")
    b = _rand((3, 2), "float64")
    for lib in (real_torch, ctorch):
        x = lib.tensor(a, requires_grad=True)
        ld, piv = lib.linalg.ldl_factor(x)
        assert ld.requires_grad and not piv.requires_grad
        assert not lib.linalg.ldl_factor_ex(x).info.requires_grad
        with pytest.raises(
            RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"
        ):
            ld.sum().backward()
        y = lib.tensor(b, requires_grad=True)
        sol = lib.linalg.ldl_solve(ld.detach(), piv, y)
        assert sol.requires_grad
        with pytest.raises(
            RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"
        ):
            lib.autograd.grad(sol.sum(), y)
        with lib.no_grad():
            assert not lib.linalg.ldl_factor(x).LD.requires_grad
        # under torch.func.grad too
        with pytest.raises(
            RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"
        ):
            lib.func.grad(lambda t: lib.linalg.ldl_factor(t)[0].sum())(lib.tensor(a))
        with pytest.raises(
            RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"
        ):
            lib.func.grad(lambda t: lib.linalg.ldl_solve(ld.detach(), piv, t).sum())(lib.tensor(b))
    # results used as constants do not stop differentiation of the rest
    grads = []
    for lib in (real_torch, ctorch):
        c = lib.tensor(a)
        grads.append(
            lib.func.grad(lambda t, c=c, lib=lib: (t * lib.linalg.ldl_factor(c).LD).sum())(
                lib.tensor(a)
            )
        )
    _same(grads[1], grads[0], 1e-12)


def test_vmap_and_out_match_pytorch(real_torch):
    a = _zero_diagonal((3, 4, 4), "float64")
    b = _rand((3, 4, 1), "float64")
    res = []
    for lib in (ctorch, real_torch):
        ld = lib.func.vmap(lambda t: lib.linalg.ldl_factor(t).LD)(lib.tensor(a))
        piv = lib.linalg.ldl_factor(lib.tensor(a)).pivots
        with warnings.catch_warnings():  # PyTorch: no batching rule for ldl_solve
            warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
            x = lib.func.vmap(lib.linalg.ldl_solve)(ld, piv, lib.tensor(b))
        outs = (lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32))
        r = lib.linalg.ldl_factor(lib.tensor(a), out=outs)
        assert r.LD is outs[0] and r.pivots is outs[1]
        xo = lib.empty(0, dtype=lib.float64)
        assert lib.linalg.ldl_solve(ld, piv, lib.tensor(b), out=xo) is xo
        res.append((ld, x, outs[0], xo))
        with pytest.raises(
            RuntimeError, match="Expected out tensor to have dtype int, but got float instead"
        ):
            lib.linalg.ldl_factor(
                lib.tensor(a), out=(lib.empty(0, dtype=lib.float64), lib.empty(0))
            )
        with pytest.raises(RuntimeError, match="dtype double, but got c10::complex<float> inst"):
            lib.linalg.ldl_solve(ld, piv, lib.tensor(b), out=lib.empty(0, dtype=lib.complex64))
    for ours, theirs in zip(*res):
        _same(ours, theirs, 1e-10)
