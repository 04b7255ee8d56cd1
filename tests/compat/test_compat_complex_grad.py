"""Gradients of complex tensors follow PyTorch's convention (the conjugate of funcgrad's
cotangent): leaf ``.grad``, seeds, ``autograd.grad``, hooks, ``autograd.Function``,
``create_graph`` and ``torch.func``. Oracle: the same code on real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch
from funcgrad._compat_contract import torch_rows

DTYPES = ["complex64", "complex128"]
Z0 = [[1 + 2j, 3 - 1j, 0.5], [-0.5j, 2 + 0.25j, -1 - 1j]]
X0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]]


def _v(t) -> np.ndarray:
    return np.array(t.detach().resolve_conj().numpy())


def _check(got: dict, want: dict, dtype: str) -> None:
    assert got.keys() == want.keys()
    tol = 1e-5 if dtype == "complex64" else 1e-10
    for k in want:
        assert np.asarray(got[k]).dtype == np.asarray(want[k]).dtype, k
        np.testing.assert_allclose(got[k], want[k], rtol=tol, atol=tol, err_msg=k)


def _both(scenario, real, dtype: str, *args) -> None:
    _check(scenario(ctorch, dtype, *args), scenario(real, dtype, *args), dtype)


def _leaf(lib, dtype: str, data=Z0):
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)


# ------------------------------------------------------------------ elementwise ops
ELEMENTWISE = {
    "mul_const": lambda lib, z: lib.view_as_real(z * (2 - 3j)).sum(),
    "abs": lambda lib, z: (z.abs() * lib.arange(6.0).reshape(2, 3)).sum(),
    "angle": lambda lib, z: (z.angle() * 1.5).sum(),
    "exp": lambda lib, z: (z.exp() * (0.5 + 1j)).real.sum() + z.exp().imag.sum(),
    "conj": lambda lib, z: (z.conj() * (1 + 2j)).imag.sum(),
    "real_imag": lambda lib, z: (z.real**2 * 3).sum() - (z.imag * z.real).sum(),
    "view_as_real": lambda lib, z: (lib.view_as_real(z * z) * lib.tensor([1.0, -2.0])).sum(),
    "abs_sq": lambda lib, z: (z.abs() ** 2).sum(),
}


def _elementwise(lib, dtype: str, name: str) -> dict:
    z = _leaf(lib, dtype)
    loss = ELEMENTWISE[name](lib, z)
    loss.backward()
    first = _v(z.grad)
    ELEMENTWISE[name](lib, z).backward()  # accumulates into the existing .grad
    return {"loss": _v(loss), "grad": first, "grad2": _v(z.grad)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_leaf_grad(real_torch, dtype, name):
    _both(_elementwise, real_torch, dtype, name)


def _repeated(lib, dtype: str) -> dict:
    # the same graph structure again and again: the assembled (compiled) backward too
    out = {}
    for i in range(4):
        z = _leaf(lib, dtype)
        w = z * (1 - 2j)
        loss = (w.abs() ** 2).sum() + lib.view_as_real(w).sum()
        (gz, gw) = lib.autograd.grad(loss, (z, w), retain_graph=True)
        loss.backward()
        out[f"z{i}"], out[f"gz{i}"], out[f"gw{i}"] = _v(z.grad), _v(gz), _v(gw)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_backward_assembled(real_torch, dtype):
    _both(_repeated, real_torch, dtype)


# ------------------------------------------------------------------ matmul, mixed leaves
def _matmul(lib, dtype: str) -> dict:
    a = _leaf(lib, dtype)
    b = _leaf(lib, dtype, [[1j, 2.0], [0.5 - 1j, -1.0], [3.0, 1 + 1j]])
    loss = ((a @ b).abs() ** 2).sum() + (a @ b).real.sum()
    loss.backward()
    return {"a": _v(a.grad), "b": _v(b.grad)}


def _mixed(lib, dtype: str) -> dict:
    z = _leaf(lib, dtype)
    real = lib.float32 if dtype == "complex64" else lib.float64
    x = lib.tensor(X0, dtype=real, requires_grad=True)
    y = x * z + z * z
    loss = y.abs().sum() + (x * (1 + 1j)).angle().sum() + y.imag.sum()
    loss.backward()
    return {"z": _v(z.grad), "x": _v(x.grad)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scenario", [_matmul, _mixed], ids=["matmul", "mixed"])
def test_matmul_and_mixed_leaves(real_torch, dtype, scenario):
    _both(scenario, real_torch, dtype)


# ------------------------------------------------------------------ seeds
def _holomorphic(lib, z):
    return z * z * (0.5 + 2j) + z.exp() - 3j * z


def _seeded(lib, dtype: str) -> dict:
    z = _leaf(lib, dtype)
    seed = lib.tensor([[1 - 1j, 2j, 0.5], [1.0, -1 + 0.5j, 2 - 2j]], dtype=getattr(lib, dtype))
    y = _holomorphic(lib, z)
    y.backward(gradient=seed)
    out = {"backward": _v(z.grad)}
    z.grad = None
    lib.autograd.backward([_holomorphic(lib, z)], grad_tensors=[seed])
    out["autograd_backward"] = _v(z.grad)
    mid = z * (2 + 1j)
    y = _holomorphic(lib, mid)
    gz, gmid = lib.autograd.grad(y, (z, mid), grad_outputs=seed)
    out["grad_z"], out["grad_mid"] = _v(gz), _v(gmid)
    (batched,) = lib.autograd.grad(
        _holomorphic(lib, z), z, lib.stack([seed, seed * 1j]), is_grads_batched=True
    )
    out["batched"] = _v(batched)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_seeds_and_autograd_grad(real_torch, dtype):
    _both(_seeded, real_torch, dtype)


# ------------------------------------------------------------------ hooks
def _hooks(lib, dtype: str) -> dict:
    seen: dict = {}

    def rec(key: str, *values) -> None:
        seen[key] = [_v(v) for v in values]

    z = _leaf(lib, dtype)
    z.register_hook(lambda g: rec("leaf_hook", g))
    mid = z * (1 + 2j)
    mid.retain_grad()
    mid.register_hook(lambda g: rec("mid_hook", g))
    mid.register_hook(lambda g: g * (2 - 1j))  # modifies the gradient flowing on
    out = mid.exp()
    out.grad_fn.register_prehook(lambda go: rec("pre", go[0]))
    out.grad_fn.register_hook(lambda gi, go: rec("post", gi[0], go[0]))
    loss = (out.abs() ** 2).sum() + out.real.sum()
    loss.backward()
    return {**{k: np.stack(v) for k, v in seen.items()}, "mid": _v(mid.grad), "z": _v(z.grad)}


def _node_hooks_modify(lib, dtype: str) -> dict:
    z = _leaf(lib, dtype)
    y = z.exp()
    y.grad_fn.register_prehook(lambda go: (go[0] * 1j,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + go[0] * (1 - 1j),))
    (y.abs() ** 2).sum().backward()
    return {"z": _v(z.grad)}


def _grad_fn_call(lib, dtype: str) -> dict:
    z = _leaf(lib, dtype)
    y = (z * (2 + 3j)).exp()
    g = lib.tensor(Z0, dtype=getattr(lib, dtype))
    return {"called": _v(y.grad_fn(g))}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "scenario", [_hooks, _node_hooks_modify, _grad_fn_call], ids=["record", "modify", "call"]
)
def test_hooks_see_pytorch_convention(real_torch, dtype, scenario):
    _both(scenario, real_torch, dtype)


# ------------------------------------------------------------------ autograd.Function
def _function(lib, dtype: str) -> dict:
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, z, c):
            ctx.save_for_backward(c)
            return z * c

        @staticmethod
        def backward(ctx, g):
            (c,) = ctx.saved_tensors
            seen["g"] = _v(g)
            return g * c.conj(), None  # PyTorch's convention: grad * conj(dy/dz)

    z = _leaf(lib, dtype)
    c = lib.tensor([1 - 2j, 0.5j, 3.0], dtype=getattr(lib, dtype))
    y = Scale.apply(z, c)
    loss = (y.abs() ** 2).sum() + (y * 1j).real.sum()
    loss.backward()
    return {"g": seen["g"], "z": _v(z.grad)}


@pytest.mark.parametrize("dtype", DTYPES)
def test_autograd_function_backward(real_torch, dtype):
    _both(_function, real_torch, dtype)


# ------------------------------------------------------------------ create_graph
def _double(lib, dtype: str) -> dict:
    z = _leaf(lib, dtype)
    loss = (z.abs() ** 3).sum() + (z * z * (1 - 1j)).real.sum()
    (g,) = lib.autograd.grad(loss, z, create_graph=True)
    (g.abs() ** 2).sum().backward()
    out = {"g": _v(g), "z": _v(z.grad)}
    z.grad = None
    seed = lib.tensor(Z0, dtype=getattr(lib, dtype), requires_grad=True)
    (h,) = lib.autograd.grad(_holomorphic(lib, z), z, grad_outputs=seed, create_graph=True)
    lib.view_as_real(h * (1 + 1j)).sum().backward()
    out.update(h=_v(h), z2=_v(z.grad), seed=_v(seed.grad))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_create_graph_double_backward(real_torch, dtype):
    _both(_double, real_torch, dtype)


# ------------------------------------------------------------------ torch.func
class _ScaleFn:
    """An ``autograd.Function`` usable under ``torch.func`` (``setup_context``)."""

    @staticmethod
    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(z, c):
                return z * c

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[1])

            @staticmethod
            def backward(ctx, g):
                (c,) = ctx.saved_tensors
                return g * c.conj() + 0.5j * g, None  # not the true derivative: visible

        return Scale


def _func(lib, dtype: str) -> dict:
    z = lib.tensor(Z0, dtype=getattr(lib, dtype))
    seed = lib.tensor(Z0[::-1], dtype=getattr(lib, dtype))
    c = lib.tensor([1 - 2j, 0.5j, 3.0], dtype=getattr(lib, dtype))
    scale = _ScaleFn.make(lib)

    def loss(z):
        return (z.abs() ** 2).sum() + (z * (2 - 1j)).exp().real.sum()

    def loss_fn(z):
        return (scale.apply(z, c).abs() ** 2).sum()

    out, vjp_fn = lib.func.vjp(lambda z: _holomorphic(lib, z), z)
    (v,) = vjp_fn(seed)
    g, value = lib.func.grad_and_value(loss)(z)
    return {
        "grad": _v(lib.func.grad(loss)(z)),
        "grad_and_value": _v(g),
        "value": _v(value),
        "vjp_out": _v(out),
        "vjp": _v(v),
        "vmap_grad": _v(lib.func.vmap(lib.func.grad(loss))(z)),
        "function": _v(lib.func.grad(loss_fn)(z)),
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_func_grad_and_vjp(real_torch, dtype):
    _both(_func, real_torch, dtype)


def _jac_errors(lib, dtype: str) -> dict:
    z = lib.tensor(Z0[0], dtype=getattr(lib, dtype))
    x = lib.tensor(X0[0], dtype=lib.float64)
    got = {}
    cases = {
        "jacrev_in": (lib.func.jacrev, lambda z: z * 2, z),
        "jacfwd_in": (lib.func.jacfwd, lambda z: z * 2, z),
        "jacrev_out": (lib.func.jacrev, lambda x: x * (1 + 1j), x),
        "jacfwd_out": (lib.func.jacfwd, lambda x: x * (1 + 1j), x),
        "hessian": (lib.func.hessian, lambda z: (z.abs() ** 2).sum(), z),
    }
    for name, (transform, f, arg) in cases.items():
        with pytest.raises(RuntimeError) as info:
            transform(f)(arg)
        got[name] = str(info.value)
    return got


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # real torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_func_jacobians_refuse_complex(real_torch, dtype):
    assert _jac_errors(ctorch, dtype) == _jac_errors(real_torch, dtype)


# ------------------------------------------------------------------ more entry points
def _more(lib, dtype: str) -> dict:
    out: dict = {}
    seen: dict = {}
    z, w = _leaf(lib, dtype), _leaf(lib, dtype, Z0[::-1])

    def multi(gs) -> None:
        seen["multi"] = [_v(g) for g in gs if g is not None]

    def post_acc(p) -> None:
        seen["post_acc"] = _v(p.grad)

    handle = lib.autograd.graph.register_multi_grad_hook((z, w), multi)
    z.register_post_accumulate_grad_hook(post_acc)
    mid = z * w
    y = (mid.exp() * (1 - 1j)).abs().sum()
    y.backward(inputs=[mid, w], retain_graph=True)  # a non-leaf input: retain_grad
    out["mid"], out["w"] = _v(mid.grad), _v(w.grad)
    y.backward()
    out["z"] = _v(z.grad)
    out["multi"], out["post_acc"] = np.stack(seen["multi"]), seen["post_acc"]
    handle.remove()
    # backward through a torch.func.grad, to a complex tensor it reads from outside
    c = _leaf(lib, dtype, Z0[0])
    x = lib.tensor(Z0[1], dtype=getattr(lib, dtype))
    g = lib.func.grad(lambda x: ((x * c).abs() ** 2).sum())(x)
    (g.real.sum() + 2 * g.imag.sum()).backward()
    out["func_outer"] = _v(c.grad)
    # a GradientEdge as the root, seeded with a complex gradient
    z3 = _leaf(lib, dtype)
    y = (z3 * (1 + 1j)).exp()
    edge = lib.autograd.graph.get_gradient_edge(y)
    (gz,) = lib.autograd.grad(edge, z3, grad_outputs=lib.ones_like(y) * (1 - 2j))
    out["edge"] = _v(gz)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_grad_hook_inputs_func_outer_and_edges(real_torch, dtype):
    _both(_more, real_torch, dtype)


# ------------------------------------------------------------------ many ops, complex leaves
Z3 = [
    [1 + 2j, 0.3 - 1j, 0.5 + 0.1j],
    [0.2 - 0.5j, 0.7 + 0.25j, -1 - 1j],
    [0.4 + 0.4j, -0.3 + 0.9j, 1.1 - 0.2j],
]


def _method(name: str):
    return lambda L, z: getattr(z, name)()


#: a row checked on other points than the leaf's: PyTorch's ``AcoshBackward0`` of a complex
#: tensor is ``rsqrt(z**2 - 1)``, which is minus the derivative of the principal ``acosh``
#: (funcgrad's, ``1 / (sqrt(z - 1) * sqrt(z + 1))``) where ``Re z < 0``: the points are
#: moved to the right half-plane (``sign`` has no gradient), where both agree
_ON = {"acosh": lambda L, z: (z * z.real.sign()).acosh()}


def _complex_rows() -> dict:
    """Every unary op-table row whose PyTorch form takes complex tensors and has a node
    (``exp``, ``asin``, ``sigmoid``, ``reciprocal``, ``sinc``, ...): a new row is covered
    without an entry here. A row that refuses complex says so (``complex_error``, or a
    real-only primitive: ``allowed="real_float"``); ``test_compat_row_forms`` checks those
    refusals."""
    return {
        p.torch.name or p.name: _ON.get(p.name, _method(p.torch.name or p.name))
        for p in torch_rows()
        if p.arity == 1
        and p.torch.grad_fn is not None
        and p.torch.complex_error is None
        and getattr(p, "allowed", "") != "real_float"
    }


#: the row ops, then what no unary row declares
OPS = {
    **_complex_rows(),
    "sgn": _method("sgn"),
    "pow_complex": lambda L, z: z ** (0.5 + 1j),
    "div": lambda L, z: (1 + 2j) / z,
    "prod": lambda L, z: z.prod(1),
    "cumprod": lambda L, z: z.cumprod(1),
    "mean": lambda L, z: z.mean(0),
    "index": lambda L, z: z[1:, ::2] * 1,
    "cat_where": lambda L, z: L.where(z.real > 0, z, L.cat([z[1:], z[:1]]) * 2j),
    "einsum": lambda L, z: L.einsum("ij,jk->ik", z, z),
    "vdot": lambda L, z: L.vdot(z[0], z[1]).reshape(1),
    "linear": lambda L, z: L.nn.functional.linear(z, z),
    "polar": lambda L, z: L.polar(z.abs(), z.angle()),
    "inv": lambda L, z: L.linalg.inv(z),
    "det": lambda L, z: L.linalg.det(z).reshape(1),
    "slogdet": lambda L, z: L.linalg.slogdet(z)[1].reshape(1),
    "solve": lambda L, z: L.linalg.solve(z, z.T.conj()),
    "pinv": lambda L, z: L.linalg.pinv(z),
    "svdvals": lambda L, z: L.linalg.svdvals(z),
    "vector_norm": lambda L, z: L.linalg.vector_norm(z, dim=1),
    "fft": lambda L, z: L.fft.fft(z),
    "fft2": lambda L, z: L.fft.fft2(z),
    "ifft": lambda L, z: L.fft.ifft(z, dim=0),
}


def test_row_ops_keep_the_hand_cases():
    """The rows still give every op the hand table named before it was built from them."""
    assert {"log", "sin", "tanh", "sqrt", "rsqrt", "reciprocal", "sigmoid", "asin", "log1p"} <= (
        _complex_rows().keys()
    )


def _op_grad(lib, dtype: str, name: str) -> dict:
    z = _leaf(lib, dtype, Z3)
    out = OPS[name](lib, z)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(tuple(out.shape))
    if out.is_complex():
        w = w + 1j * rng.standard_normal(tuple(out.shape))
        loss = lib.view_as_real(out * lib.tensor(w, dtype=out.dtype)).sum()
    else:
        loss = (out * lib.tensor(w, dtype=out.dtype)).sum()
    (g,) = lib.autograd.grad(loss, z)
    return {"out": _v(out), "grad": _v(g)}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradients_complex_leaf(real_torch, name):
    _both(_op_grad, real_torch, "complex128", name)
