"""``torch.linalg.eig``/``eigvals``, ``torch.cholesky`` and ``torch.triangular_solve``
against real PyTorch.

The op table's rows (``compat/_core/ops/linalg_eig.py``) are also compared value by
value and gradient by gradient in ``test_compat_optable.py`` (``eig`` through its
``gauge``). Here: eigenvalues directly (PyTorch's CPU kernel and funcgrad's both call
LAPACK's ``geev``, so the order agrees), eigenvectors up to their phase, gradients of
gauge-invariant losses (float64 and complex128), PyTorch's rejection of phase-dependent
losses, errors, deprecation warnings and ``Tensor`` methods.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch
from compat._core import warn_once as _common

RNG = np.random.default_rng(22)
REAL = RNG.uniform(-1, 1, (3, 3))  # a random real matrix: a complex-conjugate pair or not
PAIR = np.array([[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.0, 0.3, 1.0]])  # one conjugate pair
CPLX = RNG.uniform(-1, 1, (2, 3, 3)) + 1j * RNG.uniform(-1, 1, (2, 3, 3))
BATCH = RNG.uniform(-1, 1, (2, 4, 4))
MATRICES = [REAL, PAIR, CPLX, BATCH]
IDS = ["real", "pair", "complex128", "batch"]


def _close(ours, theirs, rtol=1e-9, atol=1e-10):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(npv(ours), npv(theirs.resolve_conj()), rtol=rtol, atol=atol)


@pytest.mark.parametrize("a", MATRICES, ids=IDS)
def test_eig_values_and_vectors_match_pytorch(a, real_torch):
    ours, theirs = ctorch.linalg.eig(ctorch.tensor(a)), real_torch.linalg.eig(real_torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_eig"
    assert ours._fields == ("eigenvalues", "eigenvectors")
    _close(ours.eigenvalues, theirs.eigenvalues)
    assert str(ours.eigenvectors.dtype) == str(theirs.eigenvectors.dtype)
    v, vt = npv(ours.eigenvectors), npv(theirs.eigenvectors)
    # columns of unit norm, equal up to a phase each: |v_j^H vt_j| = 1
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-12)
    overlap = np.abs(np.sum(np.conj(v) * vt, axis=-2))
    np.testing.assert_allclose(overlap, 1.0, rtol=1e-9)
    w = npv(ours.eigenvalues)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-12)
    _close(ctorch.linalg.eigvals(ctorch.tensor(a)), real_torch.linalg.eigvals(real_torch.tensor(a)))


def test_eig_float32_gives_complex64(real_torch):
    a = REAL.astype(np.float32)
    ours, theirs = ctorch.linalg.eig(ctorch.tensor(a)), real_torch.linalg.eig(real_torch.tensor(a))
    _close(ours.eigenvalues, theirs.eigenvalues, rtol=1e-5, atol=1e-6)
    assert str(ours.eigenvectors.dtype) == str(theirs.eigenvectors.dtype) == "torch.complex64"


def _grad(lib, a, loss):
    x = lib.tensor(a, requires_grad=True)
    (g,) = lib.autograd.grad(loss(lib, x), x)
    return g


def _eigvals_loss(lib, x):
    w = lib.linalg.eigvals(x)
    c = lib.arange(1.0, w.shape[-1] + 1, dtype=lib.float64)
    return (w.real * c).sum() + (w.imag**2).sum()


def _eig_loss(lib, x):
    """Invariant under each eigenvector's phase: its squared moduli, and the
    eigenvalue-weighted projector ``V diag(w) V^+`` through ``A``'s own product."""
    w, v = lib.linalg.eig(x)
    p = v.abs() ** 2
    c = lib.arange(1.0, w.shape[-1] + 1, dtype=lib.float64)
    return (p * c).sum() + ((w.real + w.imag) ** 2).sum() + (v * v.conj()).real.mean()


@pytest.mark.parametrize("a", MATRICES, ids=IDS)
@pytest.mark.parametrize("loss", [_eigvals_loss, _eig_loss], ids=["eigvals", "eig"])
def test_gradients_of_gauge_invariant_losses_match_pytorch(a, loss, real_torch):
    _close(_grad(ctorch, a, loss), _grad(real_torch, a, loss), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("a", [REAL, CPLX[0]], ids=["float64", "complex128"])
def test_phase_dependent_losses_are_rejected_like_pytorch(a, real_torch):
    def loss(lib, x):
        return lib.linalg.eig(x).eigenvectors.real.sum()

    for lib in (real_torch, ctorch):
        with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
            _grad(lib, a, loss)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda lib: lib.linalg.eig(lib.ones(2, 3)), RuntimeError, "square matrices"),
        (lambda lib: lib.linalg.eigvals(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda lib: lib.linalg.eig(lib.eye(3, dtype=lib.int64)), RuntimeError, "Unknown Complex"),
        (lambda lib: lib.linalg.eig(lib.eye(3, dtype=lib.half)), NotImplementedError, "'Half'"),
        (lambda lib: lib.linalg.eigvals(lib.eye(3, dtype=lib.bfloat16)), NotImplementedError, ""),
        (lambda lib: lib.cholesky(-lib.eye(3)), RuntimeError, "cholesky: .*not positive-def"),
        (lambda lib: lib.cholesky(lib.ones(3)), RuntimeError, "^cholesky: .*2 dimensions"),
        (lambda lib: lib.cholesky(lib.ones(2, 3)), RuntimeError, "^cholesky: .*square"),
        (lambda lib: lib.cholesky(lib.eye(3, dtype=lib.int64)), NotImplementedError, "'Long'"),
        (lambda lib: lib.triangular_solve(lib.ones(3), lib.eye(3)), RuntimeError, "b to have"),
        (lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.ones(3)), RuntimeError, "A to have"),
        (
            lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.eye(3, dtype=lib.float64)),
            RuntimeError,
            "same dtype",
        ),
        (lambda lib: lib.triangular_solve(lib.ones(4, 1), lib.eye(3)), RuntimeError, "Incompat"),
        (lambda lib: lib.triangular_solve(lib.ones(2, 1), lib.ones(2, 3)), RuntimeError, "square"),
    ],
)
def test_errors_match_pytorch(call, exc, match, real_torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecations, tested below
        for lib in (real_torch, ctorch):
            with pytest.raises(exc, match=match):
                call(lib)
    if match == "cholesky: .*not positive-def":
        with pytest.raises(ctorch.linalg.LinAlgError):
            call(ctorch)


SPD = BATCH @ BATCH.transpose(0, 2, 1) + 4 * np.eye(4)
HPD = CPLX @ CPLX.conj().transpose(0, 2, 1) + 3 * np.eye(3)


@pytest.mark.parametrize("a", [SPD, HPD], ids=["float64", "complex128"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_pytorch(a, upper, real_torch):
    def loss(lib, x):
        lo = lib.cholesky(x, upper)
        return (lo.abs() ** 2 * lib.arange(1.0, lo.shape[-1] + 1, dtype=lib.float64)).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(
            ctorch.cholesky(ctorch.tensor(a), upper),
            real_torch.cholesky(real_torch.tensor(a), upper),
        )
        _close(ctorch.tensor(a).cholesky(upper=upper), real_torch.tensor(a).cholesky(upper=upper))
        _close(_grad(ctorch, a, loss), _grad(real_torch, a, loss), rtol=1e-8)


TRI = (
    np.triu(RNG.uniform(0.5, 2, (2, 3, 3)))
    + 2 * np.eye(3)
    + np.tril(RNG.uniform(-1, 1, (3, 3)), -1)
)
CTRI = TRI + 1j * RNG.uniform(-1, 1, (2, 3, 3))


@pytest.mark.parametrize("a", [TRI, CTRI], ids=["float64", "complex128"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"upper": False}, {"transpose": True}, {"upper": False, "unitriangular": True}],
    ids=["upper", "lower", "transpose", "unit-lower"],
)
def test_triangular_solve_matches_pytorch(a, kw, real_torch):
    b = RNG.uniform(-1, 1, (3, 2)).astype(a.dtype)  # broadcast against A's batch

    def run(lib):
        bt, at = lib.tensor(b, requires_grad=True), lib.tensor(a, requires_grad=True)
        out = lib.triangular_solve(bt, at, **kw)
        w = lib.tensor(np.arange(24.0).reshape(2, 3, 4)[..., :2] / 10)
        loss = (out.solution.abs() ** 2 * w).sum() + (out.cloned_coefficient.abs() ** 2).sum()
        return out, lib.autograd.grad(loss, (bt, at))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = run(ctorch), run(real_torch)
    assert type(ours[0]).__name__ == type(theirs[0]).__name__ == "triangular_solve"
    assert ours[0]._fields == ("solution", "cloned_coefficient")
    for o, t in zip((*ours[0], *ours[1]), (*theirs[0], *theirs[1])):
        _close(o, t, rtol=1e-8)


def test_deprecation_warnings_and_methods(real_torch, monkeypatch):
    """Both warn once per process (PyTorch: TORCH_WARN_ONCE); compat's once-set is reset
    so its warning is seen, and PyTorch's text is compared where this process has not
    shown it yet."""
    monkeypatch.setattr(_common, "_WARNED", set())
    msgs = {}
    for lib in (real_torch, ctorch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.tensor(SPD[0]).cholesky()
            lib.tensor(np.eye(3)).triangular_solve(lib.tensor(TRI[0]))
        msgs[lib] = [str(w.message).split(" (Triggered")[0] for w in seen]
    ours = msgs[ctorch]
    assert len(ours) == 2
    assert ours[0].startswith("torch.cholesky is deprecated in favor of torch.linalg.cholesky")
    assert ours[1].startswith("torch.triangular_solve is deprecated in favor of")
    for theirs in msgs[real_torch]:
        assert theirs in ours
    _close(
        ctorch.tensor(np.eye(3)).triangular_solve(ctorch.tensor(TRI[0])).solution,
        real_torch.tensor(np.eye(3)).triangular_solve(real_torch.tensor(TRI[0])).solution,
    )


# ------------------------------------------------------------------ tolerances

LOWRANK = np.stack(
    [np.diag([3.0, 1.0, 1e-3]), RNG.uniform(-1, 1, (3, 2)) @ RNG.uniform(-1, 1, (2, 3))]
)
LOWRANK_C = LOWRANK + 1j * RNG.uniform(-0.1, 0.1, (2, 3, 3)) * np.array([1.0, 0.0])[:, None, None]


def _tols(lib):
    """Keyword/positional tolerance combinations, floats and batch-shaped tensors."""
    return [
        ((), {}),
        ((), {"atol": 0.5}),
        ((), {"rtol": 0.4}),
        ((), {"atol": 0.1, "rtol": 0.4}),
        ((), {"atol": -1.0}),
        ((), {"atol": lib.tensor([0.5, 2.0], dtype=lib.float64)}),
        ((), {"atol": lib.tensor([0.0, 2.0]), "rtol": lib.tensor([0.5, 0.0])}),
        ((0.5,), {}),
        ((), {"atol": lib.tensor(0.5, dtype=lib.float64), "rtol": 0.1}),  # 0-d: a float
    ]


@pytest.mark.parametrize("a", [LOWRANK, LOWRANK_C], ids=["float64", "complex128"])
def test_pinv_and_matrix_rank_tolerances_match_pytorch(a, real_torch):
    for i in range(len(_tols(ctorch))):
        (args_o, kw_o), (args_t, kw_t) = _tols(ctorch)[i], _tols(real_torch)[i]
        x_o, x_t = ctorch.tensor(a), real_torch.tensor(a)
        _close(
            ctorch.linalg.pinv(x_o, *args_o, **kw_o), real_torch.linalg.pinv(x_t, *args_t, **kw_t)
        )
        _close(
            ctorch.linalg.matrix_rank(x_o, *args_o, **kw_o),
            real_torch.linalg.matrix_rank(x_t, *args_t, **kw_t),
        )


@pytest.mark.parametrize("kw", [{"atol": 0.5}, {"rtol": 0.4}, {}], ids=["atol", "rtol", "default"])
def test_pinv_gradients_with_tolerances_match_pytorch(kw, real_torch):
    a = np.diag([3.0, 1.0, 1e-3]) + 0.01 * RNG.uniform(-1, 1, (3, 3))
    c = np.arange(9.0).reshape(3, 3)

    def loss(lib, x):
        return (lib.linalg.pinv(x, **kw) * lib.tensor(c)).sum()

    _close(_grad(ctorch, a, loss), _grad(real_torch, a, loss), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("rcond", [None, 1e-2])
def test_lstsq_rcond_matches_pytorch(driver, rcond, real_torch):
    a, b = LOWRANK[0], np.ones((3, 2))
    ours = ctorch.linalg.lstsq(ctorch.tensor(a), ctorch.tensor(b), rcond, driver=driver)

    def oracle():
        return real_torch.linalg.lstsq(
            real_torch.tensor(a), real_torch.tensor(b), rcond, driver=driver
        )

    theirs = oracle()
    if driver == "gelsy":
        # PyTorch hands LAPACK's gelsy an uninitialised pivot array, which can fix columns
        # at random: an occasional call on this rank-deficient matrix returns rank 1 or
        # another basic solution. The oracle is the answer most of 25 calls give.
        runs = [oracle() for _ in range(25)]
        key = lambda r: (int(r.rank), tuple(np.round(r.solution.numpy().ravel(), 9)))
        keys = [key(r) for r in runs]
        theirs = runs[max(range(len(runs)), key=lambda i: keys.count(keys[i]))]
    for o, t in zip(ours, theirs):
        _close(o, t, rtol=1e-8)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda lib: lib.linalg.pinv(lib.eye(3), atol=lib.tensor([0.5]), rtol=0.1),
            TypeError,
            "invalid combination of arguments",
        ),
        (lambda lib: lib.linalg.pinv(lib.eye(3), 0.1, atol=0.2), TypeError, "invalid combination"),
        (lambda lib: lib.linalg.pinv(lib.ones(3)), RuntimeError, r"pinv\(Float\{\[3\]\}\)"),
        (lambda lib: lib.linalg.pinv(lib.eye(3, dtype=lib.int64)), RuntimeError, "Long"),
        (lambda lib: lib.linalg.matrix_rank(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda lib: lib.linalg.matrix_rank(lib.eye(3).half()), RuntimeError, "float and double"),
    ],
)
def test_tolerance_errors_match_pytorch(call, exc, match, real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(exc, match=match):
            call(lib)


# ------------------------------------------------------------------ Householder


@pytest.mark.parametrize(
    "a",
    [RNG.uniform(-1, 1, (2, 4, 3)), CPLX[0], RNG.uniform(-1, 1, (3, 5))],
    ids=["tall-batch", "complex128", "wide"],
)
def test_geqrf_orgqr_ormqr_match_pytorch(a, real_torch):
    ours, theirs = ctorch.geqrf(ctorch.tensor(a)), real_torch.geqrf(real_torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__ == "geqrf"
    assert ours._fields == ("a", "tau")
    _close(ours.a, theirs.a)
    _close(ours.tau, theirs.tau)
    m, n = a.shape[-2:]
    if m >= n:
        _close(ctorch.orgqr(*ours), real_torch.orgqr(*theirs))
        _close(ours.a.orgqr(ours.tau), theirs.a.orgqr(theirs.tau))
    c = RNG.uniform(-1, 1, (*a.shape[:-2], m, 2)).astype(a.dtype)
    for left in (True, False):
        cc = c if left else np.swapaxes(c, -1, -2).copy()
        for transpose in (False, True):
            _close(
                ctorch.ormqr(*ours, ctorch.tensor(cc), left, transpose),
                real_torch.ormqr(*theirs, real_torch.tensor(cc), left, transpose),
            )


def test_geqrf_backward_raises_like_pytorch(real_torch):
    for lib in (real_torch, ctorch):
        out = lib.geqrf(lib.tensor(REAL, requires_grad=True))
        with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not"):
            out.a.sum().backward()
        with pytest.raises(RuntimeError, match="geqrf does not support automatic diff"):
            lib.geqrf(lib.tensor(CPLX[0], requires_grad=True))
        with lib.no_grad():
            lib.geqrf(lib.tensor(CPLX[0], requires_grad=True))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_householder_product_gradients_match_pytorch(dtype, real_torch):
    a = RNG.uniform(-1, 1, (4, 3)).astype(dtype)
    tau = RNG.uniform(0.5, 1.5, (3,)).astype(dtype)
    res = []
    for lib in (ctorch, real_torch):
        x, t = lib.tensor(a, requires_grad=True), lib.tensor(tau, requires_grad=True)
        q = lib.linalg.householder_product(x, t)
        loss = (q.abs() ** 2 * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum()
        res.append((q, *lib.autograd.grad(loss, (x, t))))
    for o, t in zip(*res):
        _close(o, t, rtol=1e-8)


def _f64(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda lib: lib.linalg.householder_product(_f64(lib, 2, 3), _f64(lib, 2)), RuntimeError, r"shape\[-2\] must be greater"),
        (lambda lib: lib.linalg.householder_product(_f64(lib, 3, 2), _f64(lib, 3)), RuntimeError, r"shape\[-1\] must be greater"),
        (lambda lib: lib.linalg.householder_product(_f64(lib, 3), _f64(lib, 1)), RuntimeError, "at least 2 dimensions"),
        (lambda lib: lib.linalg.householder_product(_f64(lib, 3, 2), lib.ones(2)), RuntimeError, "tau dtype Float does not match input dtype Double"),
        (lambda lib: lib.orgqr(lib.ones(3, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)), NotImplementedError, "orgqr_cpu"),
        (lambda lib: lib.linalg.householder_product(_f64(lib, 2, 3, 2), _f64(lib, 3, 2)), RuntimeError, "batch dimensions of tau"),
        (lambda lib: lib.geqrf(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda lib: lib.geqrf(lib.ones(3, 3, dtype=lib.int64)), NotImplementedError, "geqrf_cpu"),
        (lambda lib: lib.ormqr(_f64(lib, 3, 2), _f64(lib, 2), _f64(lib, 2, 2)), RuntimeError, r"other.shape\[-2\] must be equal"),
        (lambda lib: lib.ormqr(_f64(lib, 3, 2), _f64(lib, 1), _f64(lib, 3, 2)), RuntimeError, r"tau.shape\[-1\] must be equal"),
        (lambda lib: lib.ormqr(_f64(lib, 3, 2), _f64(lib, 2), lib.ones(3, 2)), RuntimeError, "same dtype"),
    ],
)  # fmt: skip
def test_householder_errors_match_pytorch(call, exc, match, real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(exc, match=match):
            call(lib)
