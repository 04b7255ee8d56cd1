"""Gradients against finite differences through the compat API (float64): every row of
the op table from its own samples (shapes and input domain written once, in the row),
and the operator and indexing forms that are no row; values and gradients of those forms
against real PyTorch where it is installed (the rows are in test_compat_optable.py).

Also: PyTorch's subgradient and tie conventions, and hypothesis-driven shape checks.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import sample as _sample
from cases import stable_seed
from hypothesis import given, settings
from hypothesis import strategies as st
from optable_cases import arrays, call, flat, gauged
from torch_oracle import fd_jacobian, npv

import compat.torch as ctorch
from compat._core.optable import REGISTRY

# the forms that are no op-table row (operators, indexing, ``Tensor.T``); the rows'
# samples cover their functions and methods with other arguments (``sum(dim=)``,
# ``matmul`` of a vector, ``clamp`` with tensor bounds, ``pow``):
# name -> (function of (lib, *tensors), input shapes, (low, high) input domain)
OPS = {
    "rsub_scalar": (lambda t, a: 2.5 - a, [(3,)], (-2, 2)),
    "rdiv_scalar": (lambda t, a: 1.5 / a, [(3,)], (0.5, 2)),
    "pow_tensor": (lambda t, a, b: a**b, [(3,), (3,)], (0.5, 2)),
    "pow_int": (lambda t, a: a**3, [(3,)], (-2, 2)),
    "pow_float": (lambda t, a: a**2.5, [(3,)], (0.5, 2)),
    "rpow": (lambda t, a: 2.0**a, [(3,)], (-1, 1)),
    "T": (lambda t, a: a.T.exp(), [(2, 3)], (-1, 1)),
    "getitem_int": (lambda t, a: a[1], [(3, 2)], (-2, 2)),
    "getitem_slice": (lambda t, a: a[:, 1:3], [(2, 4)], (-2, 2)),
    "getitem_step_none": (lambda t, a: a[::2, None], [(5,)], (-2, 2)),
    "getitem_ellipsis": (lambda t, a: a[..., 0], [(2, 3, 2)], (-2, 2)),
    "getitem_index_tensor": (lambda t, a: a[t.tensor([2, 0, 2])], [(4,)], (-2, 2)),
    "getitem_mask": (lambda t, a: a[a > 0], [(6,)], (-2, 2)),
}


def _inputs(shapes, domain, seed):
    rng = np.random.default_rng(seed)
    lo, hi = domain
    return [rng.uniform(lo, hi, s) for s in shapes]


def _run(lib, name, arrays, requires_grad=True):
    f, _, _ = OPS[name]
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrays]
    return ts, f(lib, *ts)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradient_matches_finite_differences(name):
    _, shapes, domain = OPS[name]
    arrays = _inputs(shapes, domain, seed=stable_seed(name) % 2**31)

    def value(*xs):
        with ctorch.no_grad():
            _, out = _run(ctorch, name, xs, requires_grad=False)
        return npv(out)

    out, jacs = fd_jacobian(value, arrays)
    ts, y = _run(ctorch, name, arrays)
    rng = np.random.default_rng(1)
    ct = rng.standard_normal(out.shape)
    grads = ctorch.autograd.grad(y, ts, ctorch.tensor(ct, dtype=ctorch.float64), allow_unused=True)
    for g, jac, x in zip(grads, jacs, arrays):
        expected = np.tensordot(ct, jac, axes=out.ndim)
        got = np.zeros(x.shape) if g is None else npv(g)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_value_and_gradient_match_pytorch(name, real_torch):
    _, shapes, domain = OPS[name]
    arrays = _inputs(shapes, domain, seed=7)
    outs, grads = [], []
    for lib in (ctorch, real_torch):
        ts, y = _run(lib, name, arrays)
        ct = np.random.default_rng(3).standard_normal(tuple(y.shape))
        gs = lib.autograd.grad(y, ts, lib.tensor(ct, dtype=lib.float64), allow_unused=True)
        outs.append(npv(y))
        grads.append([None if g is None else npv(g) for g in gs])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)
    for a, b in zip(*grads):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)


def _float_positions(data):
    """Paths of the float arrays in a row sample's ``(tensors, args, kwargs)``."""
    tensors, args, kwargs = data
    out = []

    def walk(v, path):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out.append(path)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, (*path, i))

    for i, v in enumerate(tensors):
        walk(v, (0, i))
    for i, v in enumerate(args):
        walk(v, (1, i))
    for k, v in kwargs.items():
        walk(v, (2, k))
    return out


def _with(data, paths, values):
    """``data`` with the arrays at ``paths`` replaced by ``values``."""
    tensors, args, kwargs = data
    new = [list(tensors), list(args), dict(kwargs)]
    for path, value in zip(paths, values):
        holder = new[path[0]]
        for key in path[1:-1]:
            holder[key] = list(holder[key])
            holder = holder[key]
        holder[path[-1]] = value
    return tuple(new)


#: every float64 sample of a differentiable row (the row's shapes and domain), but those
#: whose gradient is PyTorch's convention rather than the derivative (``fd=False``)
ROW_CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, d in sorted(REGISTRY.items())
    for i, s in enumerate(d.samples)
    if s.grad and s.fd and s.dtype == "float64" and not d.random
]


@pytest.mark.parametrize(
    ("name", "i"),
    # a sampled run (CI) keeps a stable sixth of the rows' samples: every row's gradient
    # is compared with PyTorch's in test_compat_optable.py, finite differences add the
    # independent oracle
    _sample(ROW_CASES, salt="test_row_gradient_matches_finite_differences", share=1 / 6),
)
def test_row_gradient_matches_finite_differences(name, i):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = arrays(sample, seed=i)
    form = "function" if d.function else "method"
    paths = _float_positions(data)

    def outputs(lib_out):
        return [o for o in flat(gauged(d, lib_out)) if o.dtype.is_floating_point]

    def value(*xs):
        with ctorch.no_grad():
            out, _ = call(ctorch, d, sample, _with(data, paths, xs), form)
        return np.concatenate([npv(o).ravel() for o in outputs(out)])

    xs = [_get(data, p) for p in paths]
    with warnings.catch_warnings():  # deprecations and betas: tested on their own
        warnings.simplefilter("ignore", UserWarning)
        out, jacs = fd_jacobian(value, xs)
        y, leaves = call(ctorch, d, sample, data, form, requires_grad=True)
    ct = np.random.default_rng(1).standard_normal(out.shape)
    ys, offset = outputs(y), 0
    loss = 0
    for o in ys:
        n = int(np.prod(o.shape))
        w = ctorch.tensor(ct[offset : offset + n].reshape(tuple(o.shape)), dtype=o.dtype)
        loss = loss + (o * w).sum()
        offset += n
    grads = ctorch.autograd.grad(loss, leaves, allow_unused=True)
    for g, jac, x in zip(grads, jacs, xs):
        expected = np.tensordot(ct, jac, axes=1)
        got = np.zeros(x.shape) if g is None else npv(g)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=name)


def _get(data, path):
    v = data[path[0]]
    for key in path[1:]:
        v = v[key]
    return v


def test_every_api_md_op_has_a_gradient_test():
    listed = [
        "sum",
        "mean",
        "max",
        "min",
        "amax",
        "prod",
        "exp",
        "log",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "relu",
        "sqrt",
        "abs",
        "pow",
        "clamp",
        "matmul",
        "mm",
        "t",
        "T",
        "transpose",
        "permute",
        "reshape",
        "view",
        "flatten",
        "unsqueeze",
        "squeeze",
        "expand",
        "softmax",
        "log_softmax",
        "cat",
        "stack",
        "where",
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "getitem",
    ]
    rows = {c.values[0] for c in ROW_CASES}
    for op in listed:
        assert op in rows or any(k == op or k.startswith(op + "_") for k in OPS), op


# --------------------------------------------------------------------------- conventions

CONVENTIONS = {
    "relu_at_zero": (lambda t, x: x.relu(), [0.0, -1.0, 2.0]),
    "abs_at_zero": (lambda t, x: x.abs(), [0.0, -1.0, 2.0]),
    "clamp_at_bounds": (lambda t, x: x.clamp(-1.0, 1.0), [-1.0, 1.0, 0.0, 2.0]),
    "clamp_min_greater_than_max": (lambda t, x: x.clamp(1.0, -1.0), [-2.0, 0.0, 2.0]),
    "pow_zero_exponent_at_zero": (lambda t, x: x**0.0, [0.0, 1.0]),
    "max_dim_ties_first_index": (lambda t, x: x.reshape(2, 3).max(dim=1)[0], [1, 3, 3, 2, 2, 0]),
    "min_dim_ties_first_index": (lambda t, x: x.reshape(2, 3).min(dim=1)[0], [1, 0, 0, 2, 2, 5]),
    "full_max_ties_split_evenly": (lambda t, x: x.max(), [1.0, 3.0, 3.0, 3.0]),
    "full_min_ties_split_evenly": (lambda t, x: x.min(), [1.0, 1.0, 3.0]),
    "amax_ties_split_evenly": (lambda t, x: x.reshape(2, 2).amax(dim=1), [2.0, 2.0, 1.0, 0.0]),
    "maximum_ties_halves": (lambda t, x: t.maximum(x, t.ones(3, dtype=t.float64)), [1.0, 0.0, 2.0]),
    "sqrt_at_zero_is_inf": (lambda t, x: x.sqrt(), [0.0, 4.0]),
    "sign_zero_gradient": (lambda t, x: x.sign(), [0.0, -2.0]),
}


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_subgradient_and_tie_conventions_are_pytorchs(name, lib):
    f, vals = CONVENTIONS[name]
    x = lib.tensor(vals, dtype=lib.float64, requires_grad=True)
    y = f(lib, x)
    (g,) = lib.autograd.grad(y.sum(), x)
    expected = {
        "relu_at_zero": [0.0, 0.0, 1.0],
        "abs_at_zero": [0.0, -1.0, 1.0],
        "clamp_at_bounds": [1.0, 1.0, 1.0, 0.0],
        "clamp_min_greater_than_max": [0.0, 0.0, 0.0],
        "pow_zero_exponent_at_zero": [0.0, 0.0],
        "max_dim_ties_first_index": [0, 1, 0, 1, 0, 0],
        "min_dim_ties_first_index": [0, 1, 0, 1, 0, 0],
        "full_max_ties_split_evenly": [0.0, 1 / 3, 1 / 3, 1 / 3],
        "full_min_ties_split_evenly": [0.5, 0.5, 0.0],
        "amax_ties_split_evenly": [0.5, 0.5, 1.0, 0.0],
        "maximum_ties_halves": [0.5, 0.0, 1.0],
        "sqrt_at_zero_is_inf": [np.inf, 0.25],
        "sign_zero_gradient": [0.0, 0.0],
    }[name]
    np.testing.assert_allclose(npv(g), expected)


def test_pow_exponent_gradient_at_zero_base_is_zero(lib):
    base = lib.tensor([0.0, 2.0], dtype=lib.float64)
    e = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad((base**e).sum(), e)
    np.testing.assert_allclose(npv(g), [0.0, 8.0 * np.log(2.0)])


# --------------------------------------------------------------------------- hypothesis

_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=10, deadline=None)
@given(shape=_shapes, seed=st.integers(0, 2**16))
def test_elementwise_chain_gradient_random_shapes(shape, seed):
    x0 = np.random.default_rng(seed).uniform(0.5, 2.0, shape)

    def f(t, x):
        return (t.tanh(x) * x.exp() + x.sqrt() / (1.0 + x * x)).sum()

    x = ctorch.tensor(x0, dtype=ctorch.float64, requires_grad=True)
    (g,) = ctorch.autograd.grad(f(ctorch, x), x)
    expected = (
        (1 - np.tanh(x0) ** 2) * np.exp(x0)
        + np.tanh(x0) * np.exp(x0)
        + (0.5 / np.sqrt(x0)) / (1 + x0**2)
        - np.sqrt(x0) * 2 * x0 / (1 + x0**2) ** 2
    )
    np.testing.assert_allclose(npv(g), expected, rtol=1e-10)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_matmul_reduction_gradient_random_shapes(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a0, b0 = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    a = ctorch.tensor(a0, dtype=ctorch.float64, requires_grad=True)
    b = ctorch.tensor(b0, dtype=ctorch.float64, requires_grad=True)
    y = (a @ b).softmax(dim=-1).max(dim=-1)[0].sum()
    ga, gb = ctorch.autograd.grad(y, [a, b])

    def value(a_, b_):
        z = a_ @ b_
        e = np.exp(z - z.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).max(-1).sum()

    _, (ja, jb) = fd_jacobian(value, [a0, b0])
    np.testing.assert_allclose(npv(ga), ja, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(npv(gb), jb, rtol=1e-5, atol=1e-7)
