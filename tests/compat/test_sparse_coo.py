"""Sparse COO tensors in compat against PyTorch 2.13: construction and its checks,
coalescing (indices, values, flags), conversions, printing, the products
(``torch.mm``/``matmul``/``@``/``spmm``/``sparse.mm``/``addmm``, sparse on either side)
with their gradients to the dense operand and to the sparse operand's values,
``sparse.sum``/``softmax``/``log_softmax``, sparse and dense sums, and the refusals of
ops with no sparse kernel."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) twice: uncoalesced
VALS = [1.0, -2.0, 3.0, 4.0, 0.5]


@pytest.fixture
def rt(real_torch):
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    return real_torch


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(npv(a), npv(b), rtol=tol, atol=tol)


def _pair(lib, idx=IDX, vals=VALS, size=(3, 3), **kw):
    return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), size, **kw)


def test_construction_and_metadata(rt):
    for kw in ({}, {"is_coalesced": False}):
        s, r = _pair(ctorch, **kw), _pair(rt, **kw)
        assert isinstance(s, ctorch.Tensor) and s.is_sparse and not ctorch.ones(1).is_sparse
        assert s.layout is ctorch.sparse_coo and repr(s.layout) == repr(r.layout)
        assert tuple(s.shape) == tuple(r.shape) and s.dtype == ctorch.float32
        assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (
            r.sparse_dim(),
            r.dense_dim(),
            r._nnz(),
        )
        assert s.is_coalesced() == r.is_coalesced() and s.numel() == r.numel()
        _close(s._indices(), r._indices())
        _close(s._values(), r._values())
        _close(s.to_dense(), r.to_dense())
    # size inferred from the indices; dtype/numpy int32 indices, as the gcn example builds
    e = np.array([[0, 1], [1, 3]], dtype=np.int32)
    for lib in (ctorch, rt):
        t = lib.sparse_coo_tensor(e, lib.ones(2), dtype=lib.int64)
        assert tuple(t.shape) == (2, 4) and str(t.dtype).endswith("int64")
    # a hybrid tensor: 1 sparse dim, values of shape (nnz, 2)
    h, hr = (
        lib.sparse_coo_tensor([[2, 0]], [[1.0, 2.0], [3.0, 4.0]], (3, 2)) for lib in (ctorch, rt)
    )
    assert (h.sparse_dim(), h.dense_dim()) == (hr.sparse_dim(), hr.dense_dim())
    _close(h.to_dense(), hr.to_dense())


@pytest.mark.parametrize(
    "args",
    [
        ([[0, 5]], [1.0, 2.0], (3,)),
        ([[0, -1]], [1.0, 2.0], (3,)),
        ([[0, 1]], [1.0, 2.0, 3.0], (3,)),
        ([[0, 1]], [1.0, 2.0], (3, 3)),
        ([[0, 1]], [[1.0, 2.0], [3.0, 4.0]], (3, 3)),
    ],
)
def test_construction_errors(rt, args):
    idx, vals, size = args
    with pytest.raises(RuntimeError) as want:
        rt.sparse_coo_tensor(rt.tensor(idx), rt.tensor(vals), size, check_invariants=True)
    with pytest.raises(RuntimeError) as got:
        ctorch.sparse_coo_tensor(ctorch.tensor(idx), ctorch.tensor(vals), size)
    first = str(want.value).split(":")[0].split(",")[0]
    assert first in str(got.value)


def test_coalesce(rt):
    s, r = _pair(ctorch), _pair(rt)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        r.indices()
    c, cr = s.coalesce(), r.coalesce()
    assert c.is_coalesced() and c.coalesce() is c and cr.coalesce() is cr
    _close(c.indices(), cr.indices())
    _close(c.values(), cr.values())
    assert c._nnz() == cr._nnz() == 4
    # coalescing is differentiable in the values: repeats' gradients are the sum's
    v, vr = ctorch.tensor(VALS, requires_grad=True), rt.tensor(VALS, requires_grad=True)
    w = [1.0, 2.0, 3.0, 4.0]
    ctorch.sparse_coo_tensor(ctorch.tensor(IDX), v, (3, 3)).coalesce().values().mul(
        ctorch.tensor(w)
    ).sum().backward()
    rt.sparse_coo_tensor(rt.tensor(IDX), vr, (3, 3)).coalesce().values().mul(
        rt.tensor(w)
    ).sum().backward()
    _close(v.grad, vr.grad)


def test_to_sparse_and_back(rt):
    a = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -1.0]], dtype=np.float32)
    x, xr = ctorch.tensor(a, requires_grad=True), rt.tensor(a, requires_grad=True)
    s, sr = x.to_sparse(), xr.to_sparse()
    assert s.is_coalesced() and sr.is_coalesced()
    _close(s.indices(), sr.indices())
    _close(s.values(), sr.values())
    assert s.to("cpu") is s and s.to_sparse() is s
    assert x.detach().to_dense() is not None
    assert s.grad_fn.name() == sr.grad_fn.name() == "ToSparseBackward1"
    # to_dense(to_sparse(x)) * w: the gradient to x is w on the nonzeros (PyTorch's too)
    w = np.arange(9, dtype=np.float32).reshape(3, 3)
    (s.to_dense() * ctorch.tensor(w)).sum().backward()
    (sr.to_dense() * rt.tensor(w)).sum().backward()
    _close(x.grad, xr.grad)
    # the sparse part of a 3-d tensor (sparse_dim=1: whole slices kept)
    b = np.zeros((3, 2, 2), np.float32)
    b[1, 0, 1] = 2.0
    h, hr = ctorch.tensor(b).to_sparse(1), rt.tensor(b).to_sparse(1)
    assert (h.sparse_dim(), h._nnz()) == (hr.sparse_dim(), hr._nnz())
    _close(h.values(), hr.values())
    d = s.double()
    assert d.dtype == ctorch.float64 and d.is_sparse and d.to_dense().dtype == ctorch.float64


def test_repr(rt):
    for make in (
        lambda lib: _pair(lib),
        lambda lib: lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(),
        lambda lib: lib.sparse_coo_tensor(
            [[0, 1]], lib.tensor([1.0, 2.0]), (2,), requires_grad=True
        ),
        lambda lib: lib.sparse_coo_tensor([[0, 1]], lib.tensor([1, 2]), (2,)),
        lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), [], (2, 3)),
        lambda lib: lib.sparse_coo_tensor(
            lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0, dtype=lib.float64), (2, 3)
        ),
        lambda lib: lib.sparse_coo_tensor([[0, 1]], lib.tensor([1, 2], dtype=lib.int32), (2,)),
        lambda lib: lib.sparse_coo_tensor(
            [[0, 1]], lib.tensor([1.0, 2.0], dtype=lib.float64), (2,), requires_grad=True
        ),
        lambda lib: lib.sparse_coo_tensor(
            [[0, 1]], lib.tensor([1.0, 2.0], dtype=lib.float64), (2,)
        ),
    ):
        assert repr(make(ctorch)) == repr(make(rt)) == f"{make(ctorch)}" == str(make(rt))


def _mm_case(lib, form, sparse_left=True):
    rng = np.random.default_rng(0)
    v = lib.tensor(VALS, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3))
    shape = (3, 4) if sparse_left else (2, 3)
    d = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    a, b = (s, d) if sparse_left else (d, s)
    out = form(lib, a, b)
    w = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
    (out * w).sum().backward()
    return out, v.grad, d.grad


FORMS = {
    "mm": lambda lib, a, b: lib.mm(a, b),
    "matmul": lambda lib, a, b: lib.matmul(a, b),
    "@": lambda lib, a, b: a @ b,
    "method": lambda lib, a, b: a.mm(b),
    "spmm": lambda lib, a, b: lib.spmm(a, b),
    "sparse.mm": lambda lib, a, b: lib.sparse.mm(a, b),
    "addmm": lambda lib, a, b: lib.addmm(
        lib.ones(a.shape[0], b.shape[1]), a, b, beta=0.5, alpha=2.0
    ),
    "sparse.addmm": lambda lib, a, b: lib.sparse.addmm(lib.ones(a.shape[0], b.shape[1]), a, b),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_sparse_dense_products(rt, form):
    got, want = _mm_case(ctorch, FORMS[form]), _mm_case(rt, FORMS[form])
    for g, w in zip(got, want):
        _close(g, w)


@pytest.mark.parametrize("form", ["mm", "@", "matmul"])
def test_dense_sparse_products(rt, form):
    got, want = _mm_case(ctorch, FORMS[form], False), _mm_case(rt, FORMS[form], False)
    for g, w in zip(got, want):
        _close(g, w)


def test_leaf_sparse_grad(rt):
    """A leaf sparse tensor's gradient through ``torch.sparse.mm``: sparse, on its pattern."""
    d = np.arange(12, dtype=np.float32).reshape(3, 4)
    grads = []
    for lib in (ctorch, rt):
        s = lib.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]).to_sparse()
        s.requires_grad_(True)
        assert s.is_leaf and s.requires_grad
        lib.sparse.mm(s, lib.tensor(d)).pow(2).sum().backward()
        assert s.grad.is_sparse
        grads.append(s.grad)
    _close(grads[0].coalesce().indices(), grads[1].coalesce().indices())
    _close(grads[0].coalesce().values(), grads[1].coalesce().values())


def test_product_errors(rt):
    for lib in (ctorch, rt):
        s = _pair(lib)
        with pytest.raises(RuntimeError, match="Expected dim 0 size 3, got 4"):
            lib.mm(s, lib.ones(4, 2))
        with pytest.raises(RuntimeError, match="Expected dim 0 size 3, got 4"):
            lib.ones(2, 4) @ s
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            lib.ones(2, 3, dtype=lib.float64) @ s
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            lib.mm(s, lib.ones(3, 2, dtype=lib.float64))


def test_sums_and_arithmetic(rt):
    s, r = _pair(ctorch), _pair(rt)
    _close(ctorch.sparse.sum(s), rt.sparse.sum(r))
    _close(s.sum(), r.sum())
    for dim in (0, 1, (0, 1)):
        got, want = ctorch.sparse.sum(s, dim), rt.sparse.sum(r, dim)
        assert got.is_sparse == want.is_sparse
        _close(
            got.to_dense() if got.is_sparse else got, want.to_dense() if want.is_sparse else want
        )
    for f in (lambda x: x * 2.5, lambda x: 2.5 * x, lambda x: -x, lambda x: x / 2, lambda x: x.t()):
        got, want = f(s), f(r)
        assert got.is_sparse and want.is_sparse
        _close(got.to_dense(), want.to_dense())
    t, tr = s.t(), r.t()
    assert t.is_coalesced() == tr.is_coalesced()
    other = [[1, 2], [1, 0]]
    o, orr = _pair(ctorch, other, [5.0, 6.0]), _pair(rt, other, [5.0, 6.0])
    for f in (lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a.coalesce() + b.coalesce()):
        got, want = f(s, o), f(r, orr)
        assert got.is_sparse and got.is_coalesced() == want.is_coalesced()
        _close(got.to_dense(), want.to_dense())
    # times a dense tensor (broadcast): the sparse pattern kept, gradients to both
    out = []
    for lib in (ctorch, rt):
        v = lib.tensor(VALS, requires_grad=True)
        d = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
        sp = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3))
        y = d * sp
        assert y.is_sparse and y._nnz() == 5
        (y.to_dense() * lib.tensor([1.0, 2.0, -1.0])).sum().backward()
        z = sp.detach() * lib.tensor([0.5, -1.0, 2.0])  # (PyTorch has no backward of this)
        assert z.is_sparse
        out.append((y.to_dense(), z.to_dense(), v.grad, d.grad))
    assert out[1][3].is_sparse and not out[0][3].is_sparse  # (PyTorch's: a sparse gradient)
    for g, w in zip(*out):
        _close(g, w.to_dense())
    _close(
        (ctorch.tensor([1.0, 2.0, 3.0]) * s).to_dense(), (rt.tensor([1.0, 2.0, 3.0]) * r).to_dense()
    )
    with pytest.warns(UserWarning, match="deprecated"):
        leg = ctorch.sparse.FloatTensor(
            ctorch.tensor(IDX), ctorch.tensor(VALS), ctorch.Size([3, 3])
        )
    with pytest.warns(UserWarning, match="deprecated"):
        legr = rt.sparse.FloatTensor(rt.tensor(IDX), rt.tensor(VALS), rt.Size([3, 3]))
    assert leg.dtype == ctorch.float32
    _close(leg.to_dense(), legr.to_dense())
    # dense + sparse is dense; an int64 sparse added to a float32 dense promotes
    e = ctorch.eye(3) + _pair(ctorch, vals=[1, 1, 1, 1, 1]).to(ctorch.int64)
    er = rt.eye(3) + _pair(rt, vals=[1, 1, 1, 1, 1]).to(rt.int64)
    assert not e.is_sparse and str(e.dtype) == str(er.dtype)
    _close(e, er)
    _close(ctorch.add(ctorch.ones(3, 3), s, alpha=2), rt.add(rt.ones(3, 3), r, alpha=2))
    for lib, x in ((ctorch, s), (rt, r)):
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            x + lib.ones(3, 3)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_sparse_softmax(rt, log, dim):
    out = []
    for lib in (ctorch, rt):
        v = lib.tensor(VALS, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3))
        f = lib.sparse.log_softmax if log else lib.sparse.softmax
        y = f(s, dim)
        y.coalesce().values().mul(lib.tensor([1.0, -2.0, 0.5, 3.0])).sum().backward()
        out.append((y.to_dense(), v.grad))
    for g, w in zip(*out):
        _close(g, w)


def test_refusals(rt):
    s, r = _pair(ctorch), _pair(rt)
    for f in (lambda lib, x: lib.exp(x), lambda lib, x: x.view(9), lambda lib, x: x.exp()):
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            f(rt, r)
        with pytest.raises(NotImplementedError, match="sparse_coo") as got:
            f(ctorch, s)
        assert "'aten::exp'" in str(got.value) or "'aten::view'" in str(got.value)
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        ctorch.cat([s, s])
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        s.numpy()


def test_to_device_and_grad_state(rt):
    s = _pair(ctorch)
    assert s.to(ctorch.device("cpu")) is s and s.cpu() is s
    assert not s.requires_grad and s.grad is None and s.is_leaf
    s.requires_grad_()
    assert s.requires_grad and s.detach().requires_grad is False
    c = s.clone()
    assert c is not s and c.requires_grad
    v = ctorch.tensor(VALS, requires_grad=True)
    n = ctorch.sparse_coo_tensor(ctorch.tensor(IDX), v, (3, 3))
    nr = rt.sparse_coo_tensor(rt.tensor(IDX), rt.tensor(VALS, requires_grad=True), (3, 3))
    assert not n.is_leaf and n.grad_fn.name() == nr.grad_fn.name()
    for x in (s, _pair(rt).requires_grad_()):
        y = copy.deepcopy(x)
        assert y is not x and y.is_sparse and y.requires_grad and y.is_leaf
        _close(y.to_dense(), x.to_dense())
        with pytest.raises(RuntimeError, match="graph leaves"):
            copy.deepcopy(x * 2)


def test_empty_and_hybrid_sums(rt):
    for lib in (ctorch, rt):
        e = lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (3, 4))
        assert e.is_coalesced() and e._nnz() == 0
        assert float((e @ lib.ones(4, 2)).abs().sum()) == 0.0
    h, hr = (
        lib.sparse_coo_tensor([[0, 2]], lib.tensor([[1.0, 2.0], [3.0, 4.0]]), (3, 2))
        for lib in (ctorch, rt)
    )
    for dim in (0, 1):
        got, want = ctorch.sparse.sum(h, dim), rt.sparse.sum(hr, dim)
        assert got.is_sparse == want.is_sparse
        _close(
            got.to_dense() if got.is_sparse else got, want.to_dense() if want.is_sparse else want
        )
