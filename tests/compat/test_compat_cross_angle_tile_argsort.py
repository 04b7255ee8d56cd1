"""compat's ``cross``/``linalg.cross``, ``angle``, ``tile`` and ``argsort`` against PyTorch 2.13
(the ``real_torch`` fixture): results' dtypes, shapes, values and nodes, warnings, and the
exceptions' types and messages; gradients of ``cross`` and ``angle``.

* cross: ``torch.cross``'s default ``dim`` (the first of size 3, with the deprecation warning)
  against ``linalg.cross``'s -1; operands of one rank and one dtype (no promotion), other
  dimensions broadcast; PyTorch's errors and their order.
* angle: a 0-d float32 stays float32, integers and bools give the default float, complex
  gives real; ``-0.0`` is 0 and NaN stays NaN; the gradient (0 for real inputs). complex64
  within 1 ulp of PyTorch's (eager and compiled; it was up to 3 ulp off, float atan2).
* tile: negative counts (an error naming the shape, unless the dimension is empty), empty
  dimensions, fewer counts than dimensions, argument types, the method's varargs.
* argsort: ``stable=True`` exactly as PyTorch (ties in index order, NaN and -0.0 too), and
  the argument types PyTorch's parser refuses. With the default ``stable=False`` PyTorch's
  CPU sort keeps ties in index order only up to 16 elements along ``dim``; compat's sort is
  always stable, so the default is compared on short rows only.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv, outcome

import compat.torch as ctorch

A = [[1.0, 2, 3], [4, 5, 6]]
B = [[0.0, 1, 2], [3, 1, 1]]

CROSS = {
    "default_dim": lambda L: L.cross(L.tensor(A), L.tensor(B)),
    "default_dim_first_of_3": lambda L: L.cross(L.arange(9.0).reshape(3, 3), L.ones(3, 3)),
    "default_dim_ranks": lambda L: L.cross(L.arange(9.0).reshape(3, 3), L.ones(3)),
    "default_dim_ranks2": lambda L: L.cross(L.ones(2, 3), L.ones(3, 1, 3)),
    "default_dim_other_not_3": lambda L: L.cross(L.ones(3, 1), L.ones(1, 4)),
    "default_dim_none_of_3": lambda L: L.cross(L.ones(2, 2), L.ones(2, 2)),
    "default_dim_broadcast": lambda L: L.cross(L.ones(3, 2), L.ones(3, 3)),
    "default_dim_0d": lambda L: L.cross(L.tensor(1.0), L.tensor(2.0)),
    "default_dim_1d": lambda L: L.cross(L.tensor([1.0, 2, 3]), L.tensor([0.0, 1, 0])),
    "dim0": lambda L: L.cross(L.ones(3, 2), L.ones(3, 2), dim=0),
    "dim_not_3": lambda L: L.cross(L.ones(2, 3), L.ones(2, 3), dim=0),
    "dim_other_not_3": lambda L: L.cross(L.ones(3, 3), L.ones(3, 2), dim=1),
    "dim_out_of_range": lambda L: L.cross(L.ones(3, 3), L.ones(3, 3), dim=2),
    "dim_float": lambda L: L.cross(L.ones(3), L.ones(3), dim=1.0),
    "ranks": lambda L: L.cross(L.ones(2, 3), L.ones(4, 1, 3), dim=-1),
    "broadcast": lambda L: L.cross(L.ones(3, 1), L.arange(12.0).reshape(3, 4), dim=0),
    "broadcast_bad": lambda L: L.cross(L.ones(2, 3), L.ones(3, 3), dim=1),
    "int": lambda L: L.cross(L.tensor([[1, 2, 3]]), L.tensor([[3, 1, 0]]), dim=1),
    "uint8": lambda L: L.cross(L.ones(2, 3, dtype=L.uint8), L.ones(2, 3, dtype=L.uint8), dim=1),
    "float16": lambda L: L.cross(L.tensor(A, dtype=L.float16), L.tensor(B, dtype=L.float16), 1),
    "int_float": lambda L: L.cross(L.tensor([[1, 2, 3]]), L.tensor([[3.0, 1, 0]]), dim=1),
    "float_bool": lambda L: L.cross(L.ones(2, 3), L.ones(2, 3, dtype=L.bool), dim=1),
    "float32_float64": lambda L: L.cross(L.tensor(A), L.tensor(B, dtype=L.float64), dim=1),
    "bool": lambda L: L.cross(L.tensor([[True, False, True]]), L.tensor([[True] * 3]), dim=1),
    "complex_float": lambda L: L.cross(L.tensor([[1j, 2, 3]]), L.tensor([[3.0, 1, 0]]), dim=1),
    "complex": lambda L: L.cross(L.tensor([[1j, 2, 3]]), L.tensor([[3.0, 1j, 0]]), dim=1),
    "ranks_before_dtypes": lambda L: L.cross(L.ones(2, 3), L.ones(4, 1, 3, dtype=L.float64), 1),
    "sizes_before_dtypes": lambda L: L.cross(L.ones(2, 3), L.ones(2, 2, dtype=L.float64), -1),
    "empty": lambda L: L.cross(L.ones(0, 3), L.ones(0, 3), dim=1),
    "node": lambda L: L.cross(L.tensor(A, requires_grad=True), L.tensor(B), dim=1),
    "method": lambda L: L.tensor(A).cross(L.tensor(B)),
    "method_dim": lambda L: L.tensor(A).cross(L.tensor(B), 1),
    "linalg": lambda L: L.linalg.cross(L.tensor(A), L.tensor(B)),
    "linalg_last_not_3": lambda L: L.linalg.cross(L.ones(3, 2), L.ones(3, 2)),
    "linalg_dim0": lambda L: L.linalg.cross(L.ones(3, 2), L.ones(3, 2), dim=0),
    "linalg_ranks": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(4, 1, 3)),
    "linalg_ranks1": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(3)),
    "linalg_broadcast": lambda L: L.linalg.cross(L.ones(4, 1, 3), L.arange(6.0).reshape(1, 2, 3)),
    "linalg_broadcast_bad": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(3, 3)),
    "linalg_other_not_3": lambda L: L.linalg.cross(L.ones(2, 1), L.ones(2, 3)),
    "linalg_int_float": lambda L: L.linalg.cross(L.tensor([1, 2, 3]), L.tensor([3.0, 1, 0])),
    "linalg_int32_int8": lambda L: L.linalg.cross(
        L.tensor([1, 2, 3], dtype=L.int32), L.tensor([3, 1, 0], dtype=L.int8)
    ),
    "linalg_bool": lambda L: L.linalg.cross(L.tensor([True, False, True]), L.tensor([True] * 3)),
    "linalg_0d": lambda L: L.linalg.cross(L.tensor(1.0), L.tensor(2.0)),
    "linalg_dim_out_of_range": lambda L: L.linalg.cross(L.ones(3), L.ones(3), dim=1),
    "linalg_dim_none": lambda L: L.linalg.cross(L.ones(3), L.ones(3), dim=None),
    "linalg_complex": lambda L: L.linalg.cross(
        L.ones(3, 1, dtype=L.complex64), L.ones(3, 4, dtype=L.complex64) * 1j, dim=0
    ),
}

ANGLE = {
    "0d_float32": lambda L: L.angle(L.tensor(-2.0)),
    "float32": lambda L: L.angle(L.tensor([-2.0, 0, 3, float("nan"), -0.0, -float("inf")])),
    "float64": lambda L: L.angle(L.tensor([-2.0, 0, 3], dtype=L.float64)),
    "float16": lambda L: L.angle(L.tensor([-2.0, 0, 3], dtype=L.float16)),
    "bfloat16": lambda L: L.angle(L.tensor([-2.0, 0, 3], dtype=L.bfloat16)),
    "int": lambda L: L.angle(L.tensor([-2, 0, 3])),
    "0d_int": lambda L: L.angle(L.tensor(-2)),
    "uint8": lambda L: L.angle(L.tensor([2, 0, 3], dtype=L.uint8)),
    "bool": lambda L: L.angle(L.tensor([True, False])),
    "complex64": lambda L: L.angle(L.tensor([1 + 1j, -1, 0, -1j, complex(-0.0, 0)])),
    "complex128": lambda L: L.angle(L.tensor([1 + 1j, -1, 0, -1j], dtype=L.complex128)),
    "0d_complex": lambda L: L.angle(L.tensor(1 + 1j)),
    "method": lambda L: L.tensor([1 + 1j, -1]).angle(),
    "node": lambda L: L.angle(L.tensor([-2.0, 0, 3], requires_grad=True)),
    "node_complex": lambda L: L.angle(L.tensor([1 + 1j, -1], requires_grad=True)),
}

TILE = {
    "negative": lambda L: L.tile(L.ones(2, 3), (-1, 2)),
    "negative_last": lambda L: L.tile(L.ones(2, 3), (2, -3)),
    "negative_of_empty": lambda L: L.tile(L.ones(0, 3), (-1, 1)),
    "negative_after_zero": lambda L: L.tile(L.ones(2, 3), (0, -1)),
    "zero": lambda L: L.tile(L.ones(2, 3), (0, 2)),
    "empty_dim": lambda L: L.tile(L.ones(0, 3), (2, 2)),
    "fewer": lambda L: L.tile(L.arange(6).reshape(2, 3), (2,)),
    "more": lambda L: L.tile(L.arange(6).reshape(2, 3), (2, 1, 2)),
    "none": lambda L: L.tile(L.arange(6).reshape(2, 3), ()),
    "0d": lambda L: L.tile(L.tensor(5), (2, 3)),
    "0d_none": lambda L: L.tile(L.tensor(5), ()),
    "list": lambda L: L.tile(L.arange(3), [2, 2]),
    "int": lambda L: L.tile(L.arange(3), 2),
    "float_element": lambda L: L.tile(L.arange(3), (2.0,)),
    "bool_element": lambda L: L.tile(L.arange(3), (True,)),
    "tensor_element": lambda L: L.tile(L.arange(3), (L.tensor(2), 1)),
    "float_tensor_element": lambda L: L.tile(L.arange(3), (L.tensor(2.0),)),
    "tensor": lambda L: L.tile(L.arange(3), L.tensor([2, 2])),
    "none_arg": lambda L: L.tile(L.arange(3), None),
    "numpy_int": lambda L: L.tile(L.arange(3), (np.int64(2),)),
    "method_varargs": lambda L: L.arange(3).tile(2, 2),
    "method_tuple": lambda L: L.arange(3).tile((2,)),
    "method_int": lambda L: L.arange(3).tile(2),
    "method_keyword": lambda L: L.arange(3).tile(dims=(2, 2)),
    "method_negative": lambda L: L.ones(2).tile(-1),
    "method_nothing": lambda L: L.ones(2).tile(),
    "node": lambda L: L.tile(L.ones(2, requires_grad=True), (2, 2)),
    "node_none": lambda L: L.tile(L.ones(2, requires_grad=True), ()),
}


def _argsort_data(dtype, n=40, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, (3, n)).astype(float)
    if dtype == "bool":
        return (data > 1).tolist()
    if dtype.startswith("float"):
        data[0, 5] = data[1, 7] = data[1, 9] = np.nan
        data[2, 3], data[2, 4] = -0.0, 0.0
    return data.tolist()


ARGSORT = {
    f"{dt}_{'dim0' if dim == 0 else 'last'}{'_descending' if desc else ''}": (
        lambda L, dt=dt, dim=dim, desc=desc: L.argsort(
            L.tensor(_argsort_data(dt), dtype=getattr(L, dt)),
            dim=dim,
            descending=desc,
            stable=True,
        )
    )
    for dt in ("float32", "float64", "float16", "int64", "int8", "bool")
    for dim in (0, -1)
    for desc in (False, True)
}
ARGSORT.update(
    {
        "default_short": lambda L: L.argsort(L.tensor(_argsort_data("float32", 16))),
        "default_short_descending": lambda L: L.argsort(
            L.tensor(_argsort_data("int64", 16)), descending=True
        ),
        "default_short_bool": lambda L: L.argsort(L.tensor(_argsort_data("bool", 12)), 1, True),
        "stable_false_short": lambda L: L.argsort(
            L.tensor(_argsort_data("float64", 9)), stable=False
        ),
        "0d": lambda L: L.argsort(L.tensor(3.0), stable=True),
        "0d_dim": lambda L: L.argsort(L.tensor(3.0), dim=1),
        "empty": lambda L: L.argsort(L.zeros(0, 3), stable=True),
        "method": lambda L: L.tensor([3, 1, 2, 1]).argsort(0, True),
        "method_stable": lambda L: L.tensor([3, 1, 2, 1]).argsort(stable=True, descending=True),
        "complex": lambda L: L.argsort(L.tensor([1 + 1j, 2])),
        "stable_none": lambda L: L.argsort(L.ones(3), stable=None),
        "stable_int": lambda L: L.argsort(L.ones(3), stable=1),
        "descending_none": lambda L: L.argsort(L.ones(3), descending=None),
        "dim_float": lambda L: L.argsort(L.ones(3), dim=1.0),
        "dim_bool": lambda L: L.argsort(L.ones(3), True),
        "method_dim_bool": lambda L: L.ones(3).argsort(True),
    }
)

#: PyTorch's parser messages list its signatures, and name positional arguments by type
#: where compat names the first wrong one as a keyword: these compare the type and the head
PARSER_ERRORS = {"dim_bool", "method_dim_bool"}
PARSER_HEAD = "argsort() received an invalid combination of arguments"


def _assert_same(real_torch, fn, name):
    ours, theirs = outcome(ctorch, fn), outcome(real_torch, fn)
    assert len(ours) == len(theirs), (ours, theirs)
    if len(ours) == 2:
        if name in PARSER_ERRORS:
            assert ours[0] == theirs[0] and ours[1].startswith(PARSER_HEAD), (ours, theirs)
            assert theirs[1].startswith(PARSER_HEAD), theirs
        else:
            assert ours == theirs
        return
    assert ours[:2] == theirs[:2] and ours[3:] == theirs[3:], (ours, theirs)
    half = ours[0] in ("torch.float16", "torch.bfloat16")
    tol = 1e-2 if half else 0 if ours[0].startswith(("torch.int", "torch.uint")) else 1e-6
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CROSS))
def test_cross_as_pytorch(real_torch, name):
    _assert_same(real_torch, CROSS[name], name)


def test_cross_default_dim_warns_once_as_pytorch(real_torch):
    """PyTorch warns once per process; compat too (whichever call came first)."""
    for lib in (ctorch, real_torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.cross(lib.ones(3), lib.ones(3))
            lib.cross(lib.ones(3), lib.ones(3))
        said = [str(w.message) for w in caught]
        assert len(said) <= 1 and all(
            s.startswith("Using torch.cross without specifying the dim arg is deprecated.")
            for s in said
        )


@pytest.mark.parametrize("name", sorted(ANGLE))
def test_angle_as_pytorch(real_torch, name):
    _assert_same(real_torch, ANGLE[name], name)


@pytest.mark.parametrize("name", sorted(TILE))
def test_tile_as_pytorch(real_torch, name):
    _assert_same(real_torch, TILE[name], name)


@pytest.mark.parametrize("name", sorted(ARGSORT))
def test_argsort_as_pytorch(real_torch, name):
    _assert_same(real_torch, ARGSORT[name], name)


def _grads(lib, name):
    rng = np.random.default_rng(3)
    if name.startswith("cross"):
        a = lib.tensor(rng.normal(size=(4, 1, 3)), requires_grad=True)
        b = lib.tensor(rng.normal(size=(4, 2, 3)), requires_grad=True)
        r = lib.linalg.cross(a, b) if name == "cross_linalg" else lib.cross(a, b, dim=2)
        ins = (a, b)
    elif name == "angle_complex":
        a = lib.tensor([1 + 1j, -1, 0, -1j, 2 - 3j], dtype=lib.complex128, requires_grad=True)
        r, ins = lib.angle(a), (a,)
    else:
        a = lib.tensor([-2.0, 0, 3, float("nan"), -0.0], dtype=lib.float64, requires_grad=True)
        r, ins = lib.angle(a), (a,)
    (r * lib.tensor(rng.normal(size=tuple(r.shape)))).sum().backward()
    return [npv(t.grad) for t in ins]


@pytest.mark.parametrize("name", ["cross", "cross_linalg", "angle_real", "angle_complex"])
def test_gradients_as_pytorch(real_torch, name):
    for p, q in zip(_grads(ctorch, name), _grads(real_torch, name)):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-15)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


@pytest.mark.parametrize("tier", ["eager", "compiled"])
def test_angle_complex64_within_an_ulp_of_pytorch(real_torch, tier):
    """PyTorch's complex64 angle is a float atan2 of about 1 ulp (vectorised); compat's is
    double's rounded once: within 1 ulp everywhere, equal for nearly all inputs."""
    rng = np.random.default_rng(7)
    z = (rng.standard_normal(4096) + 1j * rng.standard_normal(4096)).astype(np.complex64)
    z[:64] *= np.float32(1e-30)
    z[64:128] *= np.float32(1e30)
    special = [0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.0]
    z[128 : 128 + 49] = [complex(a, b) for a in special for b in special]
    want = real_torch.from_numpy(z).angle().numpy()
    f = (lambda t: t.angle()) if tier == "eager" else ctorch.compile(lambda t: t.angle())
    got = f(ctorch.from_numpy(z)).numpy()
    assert got.dtype == want.dtype == np.float32
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert _ulps(got[~nan], want[~nan]).max() <= 1
    assert np.mean(got[~nan] == want[~nan]) > 0.95  # (measured: 0.977; float atan2: 0.62)


def test_angle_complex64_gradient_as_pytorch(real_torch):
    def grad(lib):
        rng = np.random.default_rng(5)
        z = (rng.standard_normal(8) + 1j * rng.standard_normal(8)).astype(np.complex64)
        a = lib.tensor(np.append(z, 0), dtype=lib.complex64, requires_grad=True)
        lib.angle(a).mul(lib.tensor(rng.standard_normal(9), dtype=lib.float32)).sum().backward()
        return npv(a.grad)

    got, want = grad(ctorch), grad(real_torch)
    assert got.dtype == want.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
