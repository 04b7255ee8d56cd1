"""``torch.linalg`` decompositions and solvers (issue 15) against real PyTorch.

The op table's rows (``compat/_core/ops/linalg_decomp.py``) are compared value by value
and gradient by gradient in ``test_compat_optable.py`` (SVD and ``eigh`` through their
``gauge``). Here: complex inputs and batches compared up to the sign/phase gauge,
gradients of gauge-invariant losses, ``lu_solve`` (which needs ``lu_factor``'s pivots),
the ``info`` outputs and ``check_errors``, errors, ``Tensor`` methods and the functions
compat has no kernel for.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch
from compat._core import warn_once as ops_common
from compat._core.ops.linalg_decomp import eigh_gauge, svd_gauge

RNG = np.random.default_rng(15)
SQ = RNG.uniform(-2, 2, (2, 3, 3))
TALL = RNG.uniform(-2, 2, (2, 4, 3))
WIDE = RNG.uniform(-2, 2, (3, 5))
CPLX = RNG.uniform(-1, 1, (2, 3, 3)) + 1j * RNG.uniform(-1, 1, (2, 3, 3))
SPD = SQ @ SQ.transpose(0, 2, 1) + 3 * np.eye(3)
HERM = CPLX @ CPLX.conj().transpose(0, 2, 1) + 3 * np.eye(3)


def _close(ours, theirs, rtol=1e-9, atol=1e-10):
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype) and tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(npv(o), npv(t.resolve_conj()), rtol=rtol, atol=atol)


def _same_fields(ours, theirs):
    """compat's named tuple has PyTorch's type name and fields, in PyTorch's order."""
    assert type(ours).__name__ == type(theirs).__name__
    assert len(ours) == len(theirs)
    assert all(getattr(theirs, f) is theirs[i] for i, f in enumerate(ours._fields))


def _both(real_torch, f):
    return f(ctorch), f(real_torch)


# ------------------------------------------------------------------ values up to gauge


@pytest.mark.parametrize("x", [TALL, WIDE, CPLX], ids=["tall", "wide", "complex"])
@pytest.mark.parametrize("full", [True, False])
def test_svd_up_to_gauge(x, full, real_torch):
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.svd(lib.tensor(x), full))
    assert [tuple(o.shape) for o in ours] == [tuple(t.shape) for t in theirs]
    _close(svd_gauge(ours), svd_gauge(theirs))
    u = npv(ours.U)  # the full_matrices completion is orthonormal too
    eye = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
    np.testing.assert_allclose(u.conj().swapaxes(-1, -2) @ u, eye, atol=1e-12)
    _close(ours.S, ctorch.linalg.svdvals(ctorch.tensor(x)))


@pytest.mark.parametrize("x", [SPD, HERM], ids=["real", "complex"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_up_to_gauge_reads_one_triangle(x, uplo, real_torch):
    junk = x + np.triu(RNG.uniform(-5, 5, x.shape), 1) * (1 if uplo == "L" else 0)
    junk = junk + np.tril(RNG.uniform(-5, 5, x.shape), -1) * (1 if uplo == "U" else 0)
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.eigh(lib.tensor(junk), UPLO=uplo))
    _close(eigh_gauge(ours), eigh_gauge(theirs))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_eigh"
    _same_fields(ours, theirs)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("x", [TALL, WIDE, CPLX], ids=["tall", "wide", "complex"])
def test_qr_matches(x, mode, real_torch):
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.qr(lib.tensor(x), mode=mode))
    assert ours._fields == ("Q", "R")
    _same_fields(ours, theirs)
    _close(ours, theirs)


def _warns_once(lib, match, fn, monkeypatch):
    """compat warns (its once-per-process record reset first); PyTorch warns only the
    first time in a process (TORCH_WARN_ONCE), so another test may have had its warning:
    when it warns, the message matches."""
    if lib is ctorch:
        monkeypatch.setattr(ops_common, "_WARNED", set())
        with pytest.warns(UserWarning, match=match):
            return fn()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    assert all(re.search(match, str(w.message)) for w in seen if w.category is UserWarning)
    return out


def test_old_svd_and_qr_return_v_and_warn(real_torch, monkeypatch):
    ours, theirs = _both(real_torch, lambda lib: lib.svd(lib.tensor(TALL)))
    _close(svd_gauge((ours.U, ours.S, ours.V.mT)), svd_gauge((theirs.U, theirs.S, theirs.V.mT)))
    ours, theirs = _both(real_torch, lambda lib: lib.svd(lib.tensor(TALL), compute_uv=False))
    _close(ours, theirs)
    _close(ctorch.tensor(TALL).svd(some=False).S, real_torch.tensor(TALL).svd(some=False).S)
    for lib in (ctorch, real_torch):
        _warns_once(lib, "torch.qr is deprecated", lambda: lib.qr(lib.tensor(SQ)), monkeypatch)
    _close(ctorch.tensor(WIDE).qr(), real_torch.tensor(WIDE).qr())


# ------------------------------------------------------------------ gradients


def _grads(real_torch, make, loss, x):
    out = []
    for lib in (ctorch, real_torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(loss(lib, make(lib, t)), t)
        out.append(g)
    return out


GRADS = {
    "svd_sum_s": (lambda lib, t: lib.linalg.svd(t, full_matrices=False), lambda lib, o: o.S.sum()),
    "svd_full_square": (
        lambda lib, t: lib.linalg.svd(t),
        lambda lib, o: sum(x.abs().sum() for x in svd_gauge(o)),
    ),
    "svd_old": (
        lambda lib, t: lib.svd(t),
        lambda lib, o: (o.U.abs() ** 2 * o.S.unsqueeze(-2)).sum() + (o.V.abs() ** 3).sum(),
    ),
    "eigh_values": (lambda lib, t: lib.linalg.eigh(t), lambda lib, o: (o.eigenvalues**2).sum()),
    "eigh_vectors": (
        lambda lib, t: lib.linalg.eigh(t),
        lambda lib, o: (o.eigenvectors.abs() ** 3).sum(),
    ),
    "qr": (
        lambda lib, t: lib.linalg.qr(t),
        lambda lib, o: (o.Q @ o.R).abs().sum() + (o.R.abs() ** 2).sum(),
    ),
    "matrix_exp": (lambda lib, t: lib.linalg.matrix_exp(t), lambda lib, o: (o.abs() ** 2).sum()),
}


@pytest.mark.parametrize("name", sorted(GRADS))
@pytest.mark.parametrize("x", [SQ, CPLX], ids=["real", "complex"])
def test_gradients_of_gauge_invariant_losses(name, x, real_torch):
    make, loss = GRADS[name]
    if name.startswith("eigh"):
        x = SPD if x is SQ else HERM
    ours, theirs = _grads(real_torch, make, loss, x)
    _close(ours, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("x", [TALL[0], WIDE], ids=["tall", "wide"])
def test_qr_gradient_of_rectangular_inputs(x, real_torch):
    ours, theirs = _grads(
        real_torch,
        lambda lib, t: lib.linalg.qr(t),
        lambda lib, o: (o.Q.sum(-1) ** 2).sum() + o.R.sin().sum(),
        x,
    )
    _close(ours, theirs, rtol=1e-7, atol=1e-9)


def test_qr_complete_of_a_tall_matrix_records_and_differentiates(real_torch):
    """PyTorch records it and refuses only in backward; compat differentiates through
    the reduced factors (the completion of Q carries no gradient)."""
    outs = []
    for lib in (ctorch, real_torch):
        x = lib.tensor(TALL[0], requires_grad=True)
        outs.append(lib.linalg.qr(x, mode="complete"))
    _close(tuple(o.detach() for o in outs[0]), tuple(o.detach() for o in outs[1]))
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        outs[1].R.sum().backward()
    x = ctorch.tensor(TALL[0], requires_grad=True)
    (g,) = ctorch.autograd.grad(ctorch.linalg.qr(x, mode="complete").R.sum(), x)
    y = real_torch.tensor(TALL[0], requires_grad=True)
    (g_ref,) = real_torch.autograd.grad(real_torch.linalg.qr(y).R.sum(), y)
    _close(g, g_ref, rtol=1e-7)


def test_full_svd_of_a_rectangular_matrix_differentiates(real_torch):
    grads = []
    for lib in (ctorch, real_torch):
        x = lib.tensor(TALL, requires_grad=True)
        u, s, vh = lib.linalg.svd(x)  # full_matrices=True
        assert tuple(u.shape) == (2, 4, 4)
        loss = s.sum() + (u[..., :3].abs() ** 3).sum() + (vh.abs() ** 3).sum()
        grads.append(lib.autograd.grad(loss, x)[0])
    _close(grads[0], grads[1], rtol=1e-7)


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
def test_lstsq_solution_and_gradient(driver, real_torch):
    b = RNG.uniform(-1, 1, (2, 4, 2))
    results = []
    for lib in (ctorch, real_torch):
        a, bb = lib.tensor(TALL, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.linalg.lstsq(a, bb, driver=driver)
        loss = (out.solution**2).sum() + (out.residuals.sum() if out.residuals.numel() else 0)
        results.append((out, lib.autograd.grad(loss, (a, bb))))
    (ours, g_ours), (theirs, g_theirs) = results
    _same_fields(ours, theirs)
    _close(tuple(o.detach() for o in ours), tuple(t.detach() for t in theirs))
    _close(g_ours, g_theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("p", [1, "fro", float("inf")])
def test_cond_gradient_where_pytorchs_own_backward_fails(p, real_torch):
    """PyTorch 2.13's backward of ``linalg.cond`` for these ``p`` trips over its own
    in-place ``inv_ex``: compare with the same quantity spelled out in PyTorch."""
    x = real_torch.tensor(SQ, requires_grad=True)
    ref = real_torch.linalg.matrix_norm(x, p) * real_torch.linalg.matrix_norm(
        real_torch.linalg.inv(x), p
    )
    (g_ref,) = real_torch.autograd.grad(ref.sum(), x)
    c = ctorch.tensor(SQ, requires_grad=True)
    ours = ctorch.linalg.cond(c, p)
    (g_ours,) = ctorch.autograd.grad(ours.sum(), c)
    _close(ours.detach(), ref.detach())
    _close(g_ours, g_ref, rtol=1e-7)


# ------------------------------------------------------------------ LU


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
@pytest.mark.parametrize("x", [SQ, CPLX], ids=["real", "complex"])
def test_lu_solve_values_and_gradients(left, adjoint, x, real_torch):
    b = RNG.uniform(-1, 1, (2, 3, 2) if left else (2, 2, 3)).astype(x.dtype)
    results = []
    for lib in (ctorch, real_torch):
        lu, piv = lib.linalg.lu_factor(lib.tensor(x))
        assert str(piv.dtype) == "torch.int32"
        lu = lu.detach().requires_grad_(True)
        bb = lib.tensor(b, requires_grad=True)
        y = lib.linalg.lu_solve(lu, piv, bb, left=left, adjoint=adjoint)
        grads = lib.autograd.grad((y * y.conj()).real.sum() + y.real.sum(), (lu, bb))
        results.append((y.detach(), piv, *grads))
    _close(results[0], results[1], rtol=1e-7, atol=1e-9)


def test_lu_factor_ex_and_lu_unpack_consistency(real_torch):
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.lu_factor_ex(lib.tensor(SQ)))
    _close(ours, theirs)
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.lu_factor_ex(lib.tensor(sing)).info)
    _close(ours, theirs)
    with pytest.raises(RuntimeError, match="not implemented on the CPU"):
        ctorch.linalg.lu_factor(ctorch.tensor(SQ), pivot=False)
    with pytest.raises(RuntimeError, match="not implemented on the CPU"):
        real_torch.linalg.lu_factor(real_torch.tensor(SQ), pivot=False)


# ------------------------------------------------------------------ info / check_errors

NOT_PD = np.stack([SPD[0], np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]])])
SINGULAR = np.stack([SQ[0], np.array([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])])


@pytest.mark.parametrize(
    ("op", "x"),
    [("cholesky_ex", NOT_PD), ("inv_ex", SINGULAR)],
)
def test_info_and_check_errors(op, x, real_torch):
    ours, theirs = _both(real_torch, lambda lib: getattr(lib.linalg, op)(lib.tensor(x)))
    _close(ours.info, theirs.info)
    _close(ours[0][0], theirs[0][0])  # the good batch element
    messages = []
    for lib in (ctorch, real_torch):
        with pytest.raises(lib.linalg.LinAlgError) as e:
            getattr(lib.linalg, op)(lib.tensor(x), check_errors=True)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert issubclass(ctorch.linalg.LinAlgError, RuntimeError)


def test_solve_ex_info(real_torch):
    b = RNG.uniform(-1, 1, (2, 3, 2))
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.solve_ex(lib.tensor(SQ), lib.tensor(b)))
    _close(ours, theirs)
    ours, theirs = _both(
        real_torch, lambda lib: lib.linalg.solve_ex(lib.tensor(SINGULAR), lib.tensor(b)).info
    )
    _close(ours, theirs)
    sing = np.stack([np.eye(2), np.zeros((2, 2))])
    for op in ("solve_ex", "lu_factor_ex"):
        messages = []
        for lib in (ctorch, real_torch):
            args = (lib.tensor(sing), lib.ones(2, 2, dtype=lib.float64))[
                : 2 if op == "solve_ex" else 1
            ]
            with pytest.raises(RuntimeError) as e:
                getattr(lib.linalg, op)(*args, check_errors=True)
            messages.append((type(e.value).__name__.lstrip("_"), str(e.value)))
        assert messages[0] == messages[1]


# ------------------------------------------------------------------ errors


def _same_error(real_torch, f, match):
    for lib in (real_torch, ctorch):
        with pytest.raises(RuntimeError, match=match):
            f(lib)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda lib: lib.linalg.qr(lib.ones(3, 3, dtype=lib.int64)), "floating point or complex"),
        (lambda lib: lib.linalg.svd(lib.ones(3, dtype=lib.float64)), "at least 2 dimensions"),
        (lambda lib: lib.linalg.eigh(lib.ones(3, 4, dtype=lib.float64)), "square matrices"),
        (lambda lib: lib.linalg.eigh(lib.eye(3), UPLO="X"), "'L' or 'U'"),
        (lambda lib: lib.linalg.qr(lib.eye(3), mode="full"), "unrecognized mode"),
        (lambda lib: lib.linalg.lstsq(lib.eye(3), lib.eye(3), driver="x"), "driver"),
        (lambda lib: lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4)), "must have length 3"),
        (lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)), "same number of dim"),
        (lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3)), "square matrices"),
        (lambda lib: lib.linalg.lu(lib.eye(3), pivot=False), "without pivoting"),
        (lambda lib: lib.linalg.tensorinv(lib.eye(4), ind=0), "strictly positive"),
        (lambda lib: lib.linalg.vander(lib.tensor(2.0)), "N must be greater than 1"),
        (lambda lib: lib.linalg.vander(lib.ones(3), N=1), "N must be greater than 1"),
    ],
)
def test_errors_match_pytorch(call, match, real_torch):
    _same_error(real_torch, call, match)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_function"):
        ctorch.linalg.no_such_function  # noqa: B018


# ------------------------------------------------------------------ the rest


def test_tensor_methods(real_torch):
    b = RNG.uniform(-1, 1, (3, 2))
    for name, args in [
        ("matrix_exp", ()),
        ("cholesky_solve", (np.linalg.cholesky(SPD[0]),)),
        ("cholesky_inverse", ()),
    ]:
        x = b if name == "cholesky_solve" else np.linalg.cholesky(SPD[0])
        ours, theirs = _both(
            real_torch,
            lambda lib: getattr(lib.tensor(x), name)(*[lib.tensor(a) for a in args]),
        )
        _close(ours, theirs)


def test_cholesky_solve_and_inverse_batched(real_torch):
    lo = np.linalg.cholesky(SPD)
    b = RNG.uniform(-1, 1, (2, 3, 2))
    for upper in (False, True):
        f = lo.swapaxes(-1, -2) if upper else lo
        ours, theirs = _both(
            real_torch,
            lambda lib: (
                lib.cholesky_solve(lib.tensor(b), lib.tensor(f), upper),
                lib.cholesky_inverse(lib.tensor(f[0]), upper),
            ),
        )
        _close(ours, theirs)
    np.testing.assert_allclose(npv(ours[1]), np.linalg.inv(SPD[0]), rtol=1e-10)


def test_matrix_exp_bfloat16(real_torch):
    """PyTorch 2.13's CPU bfloat16 ``matrix_exp`` returns garbage (about 1e30, inf or
    nan; checked here, so a fixed PyTorch shows up); compat computes in float32 and
    rounds."""
    x = SQ[0] / 4
    ref = real_torch.linalg.matrix_exp(real_torch.tensor(x).float()).bfloat16()
    broken = real_torch.linalg.matrix_exp(real_torch.tensor(x).bfloat16())
    assert not ((broken.double() - ref.double()).abs() < 1).all()
    ours = ctorch.linalg.matrix_exp(ctorch.tensor(x).bfloat16())
    assert str(ours.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(npv(ours.double()), npv(ref.double()), rtol=2**-7, atol=2**-7)


def test_diagonal_vander_cross_tensorsolve(real_torch):
    xs = RNG.uniform(-1, 1, (2, 3))
    ts = RNG.uniform(-1, 1, (2, 3, 6))
    for f in [
        lambda lib: lib.linalg.diagonal(lib.tensor(SQ), offset=-1, dim1=0, dim2=2),
        lambda lib: lib.linalg.vander(lib.tensor(xs), N=5),
        lambda lib: lib.linalg.vander(lib.tensor([1, 2, 3])),
        lambda lib: lib.linalg.cross(lib.tensor(TALL), lib.tensor(TALL[::-1].copy()), dim=-1),
        lambda lib: lib.linalg.tensorsolve(lib.tensor(ts), lib.tensor(xs)),
        lambda lib: lib.linalg.tensorinv(lib.tensor(ts), ind=2),
        lambda lib: lib.linalg.cond(lib.tensor(CPLX)),
    ]:
        _close(*_both(real_torch, f))


# ------------------------------------------------------------------ old top-level LU API


@pytest.mark.parametrize("x", [SQ, TALL, WIDE[None]], ids=["square", "tall", "wide"])
@pytest.mark.parametrize(("data", "pivots"), [(True, True), (True, False), (False, True)])
def test_lu_unpack(x, data, pivots, real_torch):
    results = []
    for lib in (ctorch, real_torch):
        lu, piv = lib.linalg.lu_factor(lib.tensor(x))
        lu = lu.detach().requires_grad_(True)
        out = lib.lu_unpack(lu, piv, unpack_data=data, unpack_pivots=pivots)
        grads = ()
        if data:
            grads = lib.autograd.grad((out.L**2).sum() + out.U.sin().sum(), lu)
        results.append((out, *(o.detach() for o in out), *grads))
    _same_fields(results[0][0], results[1][0])
    _close(results[0][1:], results[1][1:])


def test_old_lu_and_lu_solve_warn_and_match(real_torch, monkeypatch):
    b = RNG.uniform(-1, 1, (2, 3, 2))
    results = []
    for lib in (ctorch, real_torch):
        lu, piv = _warns_once(
            lib, "torch.lu is deprecated", lambda: lib.lu(lib.tensor(SQ)), monkeypatch
        )
        x = _warns_once(
            lib,
            "torch.lu_solve is deprecated",
            lambda: lib.lu_solve(lib.tensor(b), lu, piv),
            monkeypatch,
        )
        results.append((lu, piv, x, lib.tensor(b).lu_solve(lu, piv)))
    _close(results[0], results[1])
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError, match="int32"):
            lib.lu_unpack(lib.tensor(SQ), lib.tensor(SQ[..., 0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.linalg.cholesky(lib.tensor(NOT_PD)),
        lambda lib: lib.linalg.cholesky(lib.tensor(NOT_PD[1]), upper=True),
        lambda lib: lib.linalg.inv(lib.tensor(SINGULAR[1])),
        lambda lib: lib.inverse(lib.tensor(SINGULAR)),
        lambda lib: lib.linalg.solve(lib.tensor(SINGULAR), lib.ones(2, 3, dtype=lib.float64)),
    ],
)
def test_failed_factorizations_raise_linalg_error(call, real_torch):
    """A program can catch ``torch.linalg.LinAlgError`` (e.g. to add jitter and retry)."""
    messages = []
    for lib in (ctorch, real_torch):
        with pytest.raises(lib.linalg.LinAlgError) as e:
            call(lib)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_cholesky_upper_of_a_complex_matrix_is_the_conjugate_transpose(real_torch):
    ours, theirs = _both(real_torch, lambda lib: lib.linalg.cholesky(lib.tensor(HERM), upper=True))
    _close(ours, theirs)
