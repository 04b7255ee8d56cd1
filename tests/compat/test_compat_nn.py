"""compat.torch.nn: module bookkeeping, layers, losses, init and state dicts.

Expectations are computed by hand with NumPy; where PyTorch is installed it
also serves as an oracle (``real_torch`` fixture, skipped otherwise), and
weights move between the two through NumPy state dicts.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.nn.functional as F


@pytest.fixture(params=["fused", "composite"])
def nn_path(request):
    """Run a test on both paths: ops fused into one compat op each, and public-API composites."""
    from compat.torch.nn import _fused

    previous = _fused.set_enabled(request.param == "fused")
    yield request.param
    _fused.set_enabled(previous)


both_paths = pytest.mark.usefixtures("nn_path")


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


class TwoLayer(nn.Module):
    def __init__(self, n_in: int = 4, hidden: int = 5, n_out: int = 3) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ---------------------------------------------------------------------------
# Parameter
# ---------------------------------------------------------------------------


def test_parameter_is_a_leaf_tensor_requiring_grad():
    p = nn.Parameter(torch.zeros(2, 3))
    assert isinstance(p, torch.Tensor)
    assert isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert tuple(p.shape) == (2, 3)
    assert repr(p).startswith("Parameter containing:")
    frozen = nn.Parameter(torch.ones(2), requires_grad=False)
    assert not frozen.requires_grad


def test_parameter_ops_return_plain_tensors_with_grad():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    y = p * 3.0
    assert not isinstance(y, nn.Parameter)
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(npv(p.grad), [3.0, 3.0])


def test_parameter_from_non_leaf_is_detached():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    p = nn.Parameter(x * 2.0)
    assert p.is_leaf and p.requires_grad
    np.testing.assert_allclose(npv(p), [2.0, 4.0])


# ---------------------------------------------------------------------------
# Module bookkeeping
# ---------------------------------------------------------------------------


def test_named_parameters_in_registration_order():
    net = TwoLayer()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == []
    assert [n for n, _ in net.fc1.named_parameters(prefix="a")] == ["a.weight", "a.bias"]
    assert len(list(net.parameters())) == 4
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())


def test_shared_modules_and_parameters_listed_once():
    shared = nn.Linear(3, 3)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.modules())) == 3  # seq, shared, relu
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.children())) == 2

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

    assert [n for n, _ in Tied().named_parameters()] == ["a.weight"]


def test_attribute_registration_and_reassignment():
    m = nn.Module()
    m.w = nn.Parameter(torch.ones(2))
    m.sub = nn.Linear(2, 2)
    m.plain = 3
    assert "w" in m._parameters and "sub" in m._modules and m.plain == 3
    assert m.w is m._parameters["w"] and m.sub is m._modules["sub"]
    with pytest.raises(TypeError, match=r"cannot assign .* as parameter 'w'"):
        m.w = torch.ones(2)
    m.w = None
    assert m.w is None and list(m.named_parameters(recurse=False)) == []
    with pytest.raises(TypeError, match=r"as child module 'sub'"):
        m.sub = 1
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'sub'"):
        _ = m.sub
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("plain", torch.zeros(1))


def test_setattr_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)
            super().__init__()

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Bad()


def test_non_leaf_parameter_rejected_by_register_parameter():
    m = nn.Module()
    with pytest.raises(TypeError, match=r"torch\.nn\.Parameter or None required"):
        m.register_parameter("w", torch.ones(2))


def test_buffers_persistent_and_not():
    m = nn.Module()
    m.register_buffer("running", torch.zeros(3))
    m.register_buffer("scratch", torch.ones(2), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert list(m.state_dict()) == ["running"]
    m.running = torch.full((3,), 2.0)
    np.testing.assert_allclose(npv(m.running), 2.0)
    with pytest.raises(TypeError, match="as buffer 'running'"):
        m.running = 5
    assert list(m.parameters()) == []


def test_train_eval_propagate():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.ReLU()))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    model.train(False)
    assert not model[2][0].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("yes")


def test_zero_grad_set_to_none_and_zeros():
    net = TwoLayer()
    net(torch.randn(2, 4)).sum().backward()
    grads = [p.grad for p in net.parameters()]
    assert all(g is not None for g in grads)
    net.zero_grad(set_to_none=False)
    for p in net.parameters():
        assert p.grad is not None
        np.testing.assert_array_equal(npv(p.grad), 0.0)
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_call_runs_forward_and_hooks():
    lin = nn.Linear(3, 2)
    seen = []
    h = lin.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    pre = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 0.0,))
    out = lin(torch.ones(4, 3))
    np.testing.assert_allclose(npv(out), np.broadcast_to(npv(lin.bias), (4, 2)), rtol=1e-6)
    assert seen == [(4, 2)]
    h.remove()
    pre.remove()
    lin(torch.ones(1, 3))
    assert seen == [(4, 2)]


def test_missing_forward_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(torch.ones(1))


def test_repr_matches_pytorch_layout():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Dropout(p=0.1, inplace=False)\n"
        ")"
    )


def test_deepcopy_is_independent():
    net = TwoLayer()
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight
    assert isinstance(clone.fc1.weight, nn.Parameter)
    np.testing.assert_array_equal(npv(clone.fc1.weight), npv(net.fc1.weight))
    with torch.no_grad():
        clone.fc1.weight.fill_(0.0)
    assert np.abs(npv(net.fc1.weight)).sum() > 0


def test_pickle_round_trip_keeps_parameters():
    import pickle

    net = TwoLayer()
    net.fc2.bias.requires_grad_(False)
    clone = pickle.loads(pickle.dumps(net))
    assert isinstance(clone.fc1.weight, nn.Parameter)
    assert clone.fc1.weight.requires_grad and not clone.fc2.bias.requires_grad
    x = torch.randn(2, 4)
    np.testing.assert_array_equal(npv(clone(x)), npv(net(x)))


def test_get_submodule_and_parameter():
    net = nn.Sequential(OrderedDict(block=TwoLayer()))
    assert net.get_submodule("block.fc2") is net.block.fc2
    assert net.get_parameter("block.fc1.bias") is net.block.fc1.bias
    with pytest.raises(AttributeError):
        net.get_submodule("block.nope")


def test_apply_and_requires_grad_():
    net = TwoLayer()
    visited = []
    net.apply(lambda m: visited.append(type(m).__name__))
    assert visited == ["Linear", "ReLU", "Linear", "TwoLayer"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


# ---------------------------------------------------------------------------
# Containers
# ---------------------------------------------------------------------------


def test_sequential_indexing_len_iteration():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3
    assert seq[0] is a and seq[-1] is c
    assert list(seq) == [a, b, c]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    with pytest.raises(IndexError):
        seq[3]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Linear", "Linear", "Sigmoid"]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    x = torch.randn(5, 2)
    np.testing.assert_allclose(npv(seq(x)), npv(torch.sigmoid(c(a(x)))), rtol=1e-6)


def test_sequential_from_ordered_dict():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]
    assert isinstance(seq.act, nn.Tanh)


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    assert isinstance(layers[-1], nn.ReLU)
    d = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
    assert list(d) == ["a", "b"] and "a" in d
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias"]


# ---------------------------------------------------------------------------
# Linear and init
# ---------------------------------------------------------------------------


@both_paths
def test_linear_forward_and_grads_match_hand_formulas():
    lin = nn.Linear(3, 2)
    x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])
    y = lin(x)
    w, b = npv(lin.weight), npv(lin.bias)
    np.testing.assert_allclose(npv(y), npv(x) @ w.T + b, rtol=1e-6, atol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(npv(lin.weight.grad), np.tile(npv(x).sum(0), (2, 1)), rtol=1e-6)
    np.testing.assert_allclose(npv(lin.bias.grad), [2.0, 2.0])
    assert lin.extra_repr() == "in_features=3, out_features=2, bias=True"
    no_bias = nn.Linear(3, 2, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]


def test_linear_default_init_is_pytorchs():
    torch.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) → gain·sqrt(3/fan_in) = 1/sqrt(fan_in)
    w, b = npv(lin.weight), npv(lin.bias)
    assert w.dtype == np.float32 and w.shape == (300, 400)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # Uniform on ±bound: mean 0, std bound/sqrt(3).
    assert abs(w.mean()) < 0.02 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(w).max() > 0.99 * bound


def test_manual_seed_makes_init_reproducible():
    torch.manual_seed(123)
    a = nn.Linear(5, 4)
    torch.manual_seed(123)
    b = nn.Linear(5, 4)
    torch.manual_seed(124)
    c = nn.Linear(5, 4)
    np.testing.assert_array_equal(npv(a.weight), npv(b.weight))
    np.testing.assert_array_equal(npv(a.bias), npv(b.bias))
    assert not np.array_equal(npv(a.weight), npv(c.weight))


def test_calculate_fan_and_gain():
    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(torch.empty(6, 4, 3, 3))
    assert (fan_in, fan_out) == (36, 54)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init._calculate_fan_in_and_fan_out(torch.empty(5))
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert nn.init.calculate_gain("linear") == 1


def test_init_functions_in_place():
    w = nn.Parameter(torch.empty(200, 100))
    assert nn.init.zeros_(w) is w and not w.grad_fn
    np.testing.assert_array_equal(npv(w), 0.0)
    nn.init.ones_(w)
    np.testing.assert_array_equal(npv(w), 1.0)
    nn.init.constant_(w, 0.25)
    np.testing.assert_array_equal(npv(w), 0.25)
    nn.init.uniform_(w, -2.0, 3.0)
    v = npv(w)
    assert v.min() >= -2.0 and v.max() <= 3.0 and abs(v.mean() - 0.5) < 0.05
    nn.init.normal_(w, mean=1.0, std=0.5)
    v = npv(w)
    assert abs(v.mean() - 1.0) < 0.02 and abs(v.std() - 0.5) < 0.02
    nn.init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * math.sqrt(6.0 / 300)
    assert np.abs(npv(w)).max() <= a and np.abs(npv(w)).max() > 0.98 * a
    nn.init.xavier_normal_(w)
    assert abs(npv(w).std() - math.sqrt(2.0 / 300)) < 0.03 * math.sqrt(2.0 / 300)
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 100)
    assert np.abs(npv(w)).max() <= bound and np.abs(npv(w)).max() > 0.98 * bound
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(npv(w).std() - math.sqrt(2.0 / 200)) < 0.03 * math.sqrt(2.0 / 200)
    assert w.requires_grad and w.is_leaf
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_uniform_(w, mode="fan_avg")


def test_init_with_explicit_generator():
    if not hasattr(torch, "Generator"):
        pytest.skip("compat.torch has no public Generator")
    a, b = torch.empty(4, 5), torch.empty(4, 5)
    nn.init.kaiming_uniform_(a, generator=torch.Generator().manual_seed(3))
    nn.init.kaiming_uniform_(b, generator=torch.Generator().manual_seed(3))
    np.testing.assert_array_equal(npv(a), npv(b))


# ---------------------------------------------------------------------------
# Activations, Flatten, Identity
# ---------------------------------------------------------------------------


def test_activation_modules_match_formulas():
    xv = np.array([[-2.0, -0.5, 0.0, 0.5, 3.0]], dtype=np.float32)
    x = torch.tensor(xv)
    cases = [
        (nn.ReLU(), np.maximum(xv, 0)),
        (nn.Tanh(), np.tanh(xv)),
        (nn.Sigmoid(), 1 / (1 + np.exp(-xv))),
        (nn.LeakyReLU(0.1), np.where(xv > 0, xv, 0.1 * xv)),
        (nn.SiLU(), xv / (1 + np.exp(-xv))),
        (nn.Softmax(dim=1), np.exp(_log_softmax(xv, 1))),
        (nn.LogSoftmax(dim=1), _log_softmax(xv, 1)),
        (nn.Identity(54, unused="ok"), xv),
    ]
    for module, expected in cases:
        np.testing.assert_allclose(npv(module(x)), expected, rtol=1e-5, atol=1e-6)


def test_relu_gradient_is_zero_at_zero():
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    F.relu(x).sum().backward()
    np.testing.assert_array_equal(npv(x.grad), [0.0, 0.0, 1.0])


def test_flatten():
    x = torch.zeros(2, 3, 4, 5)
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 2)(x).shape) == (24, 5)


def test_softmax_without_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(torch.zeros(2, 3))
    np.testing.assert_allclose(npv(out), 1 / 3, rtol=1e-6)


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------


@both_paths
def test_dropout_train_masks_and_scales():
    torch.manual_seed(0)
    drop = nn.Dropout(p=0.25)
    x = torch.ones(400, 500)
    y = npv(drop(x))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert abs(1 - kept.mean() - 0.25) < 0.005  # 200k Bernoulli draws
    # A fresh mask each call.
    assert not np.array_equal(kept, npv(drop(x)) != 0)


def test_dropout_eval_is_identity():
    drop = nn.Dropout(p=0.5)
    drop.eval()
    x = torch.randn(10, 10)
    np.testing.assert_array_equal(npv(drop(x)), npv(x))
    assert F.dropout(x, 0.5, training=False) is x


@both_paths
def test_dropout_reproducible_with_manual_seed():
    x = torch.ones(64, 64)
    torch.manual_seed(7)
    a = npv(F.dropout(x, 0.5))
    torch.manual_seed(7)
    b = npv(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)


@both_paths
def test_dropout_gradient_is_the_mask():
    torch.manual_seed(1)
    x = torch.ones(50, 40, requires_grad=True)
    y = F.dropout(x, 0.4)
    y.sum().backward()
    np.testing.assert_allclose(npv(x.grad), npv(y), rtol=1e-6)


def test_dropout_edge_probabilities():
    x = torch.randn(4, 4)
    np.testing.assert_array_equal(npv(F.dropout(x, 0.0)), npv(x))
    np.testing.assert_array_equal(npv(F.dropout(x, 1.0)), 0.0)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, -0.1)


# channel (1-D/2-D/3-D) and alpha dropout


@pytest.mark.parametrize(
    "name, shape, channel_shape",
    [
        ("dropout1d", (8, 16, 5), (8, 16, 1)),
        ("dropout1d", (16, 5), (16, 1)),
        ("dropout2d", (8, 16, 3, 2), (8, 16, 1, 1)),
        ("dropout3d", (4, 16, 2, 2, 2), (4, 16, 1, 1, 1)),
        ("dropout3d", (16, 2, 2, 2), (16, 1, 1, 1)),
    ],
)
def test_channel_dropout_drops_whole_channels(name, shape, channel_shape):
    torch.manual_seed(0)
    x = torch.ones(shape, requires_grad=True)
    y = getattr(F, name)(x, p=0.25)
    vals = npv(y)
    flat = vals.reshape(int(np.prod([s for s, c in zip(shape, channel_shape) if c != 1])), -1)
    assert np.isclose(flat, 0.0).sum() + np.isclose(flat, 1.0 / 0.75).sum() == flat.size
    assert (flat.min(axis=1) == flat.max(axis=1)).all()  # a channel is kept or dropped whole
    assert 0 < (flat[:, 0] == 0).sum() < flat.shape[0]
    y.sum().backward()
    np.testing.assert_array_equal(npv(x.grad), vals)
    np.testing.assert_array_equal(npv(getattr(F, name)(x, p=0.25, training=False)), npv(x))


def test_alpha_dropout_statistics_and_values():
    torch.manual_seed(0)
    p = 0.2
    alpha = 1.7580993408473766
    a = 1.0 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    x = torch.tensor(np.random.default_rng(0).standard_normal(20000), requires_grad=True)
    y = F.alpha_dropout(x, p, training=True)
    xs, ys = npv(x), npv(y)
    kept = np.isclose(ys, a * xs + alpha * a * p)
    dropped = np.isclose(ys, -alpha * a * (1 - p))
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.02
    assert abs(ys.mean()) < 0.05 and abs(ys.std() - 1) < 0.05  # self-normalising
    y.sum().backward()
    np.testing.assert_allclose(npv(x.grad), np.where(kept, a, 0.0))
    assert F.alpha_dropout(x, p) is x  # training=False by default
    z = npv(F.feature_alpha_dropout(torch.ones(6, 50, 4), 0.5, training=True))
    assert (z.min(axis=2) == z.max(axis=2)).all()


def test_dropout_modules_and_errors(real_torch):
    for name in ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]:
        m, mt = getattr(nn, name)(0.3), getattr(real_torch.nn, name)(0.3)
        assert repr(m) == repr(mt)
        m.eval()
        dims = {"Dropout1d": 3, "Dropout2d": 4}.get(name, 5)
        x = torch.ones((2, 3, 4, 5, 2)[:dims])
        assert m(x) is x
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))
        with pytest.raises(ValueError):
            lib.nn.functional.alpha_dropout(lib.ones(3), 1.5)
        with pytest.warns(UserWarning, match="dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4))
    x = torch.ones(4, 8, 3) * 1.0
    h = x * 1.0
    assert F.dropout1d(h, 0.5, inplace=True) is h


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------


@both_paths
def test_mse_loss_reductions():
    a = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
    b = np.array([[0.5, 2.0], [1.0, 1.0]], dtype=np.float32)
    sq = (a - b) ** 2
    for reduction, expected in (("mean", sq.mean()), ("sum", sq.sum()), ("none", sq)):
        out = nn.MSELoss(reduction=reduction)(torch.tensor(a), torch.tensor(b))
        np.testing.assert_allclose(npv(out), expected, rtol=1e-6)
    x = torch.tensor(a, requires_grad=True)
    F.mse_loss(x, torch.tensor(b)).backward()
    np.testing.assert_allclose(npv(x.grad), 2 * (a - b) / a.size, rtol=1e-6)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(x, torch.tensor(b), reduction="avg")


def test_mse_loss_warns_on_broadcast():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(torch.zeros(3, 1), torch.zeros(3))


def _ce_reference(logits, target, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    logp = _log_softmax(logits, 1)
    n, c = logits.shape
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    nll = -logp[np.arange(n), safe] * w[safe] * valid
    smooth = -(logp * w).sum(1) * valid
    if reduction == "none":
        return (1 - ls) * nll + ls / c * smooth
    if reduction == "sum":
        return (1 - ls) * nll.sum() + ls / c * smooth.sum()
    denom = (w[safe] * valid).sum()
    return (1 - ls) * nll.sum() / denom + ls / c * smooth.sum() / denom


@both_paths
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_matches_reference(reduction, use_weight, ls):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    target = np.array([0, 3, 1, -100, 2, 3])
    weight = np.array([0.5, 1.0, 2.0, 1.5], dtype=np.float32) if use_weight else None
    loss_fn = nn.CrossEntropyLoss(
        weight=None if weight is None else torch.tensor(weight),
        reduction=reduction,
        label_smoothing=ls,
    )
    out = loss_fn(torch.tensor(logits), torch.tensor(target))
    expected = _ce_reference(logits, target, weight, reduction=reduction, ls=ls)
    np.testing.assert_allclose(npv(out), expected, rtol=1e-5, atol=1e-6)


@both_paths
def test_cross_entropy_gradient_is_softmax_minus_onehot():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((5, 3)).astype(np.float32)
    target = np.array([0, 2, 1, 1, 0])
    x = torch.tensor(logits, requires_grad=True)
    F.cross_entropy(x, torch.tensor(target)).backward()
    expected = (np.exp(_log_softmax(logits, 1)) - np.eye(3)[target]) / 5
    np.testing.assert_allclose(npv(x.grad), expected, rtol=1e-5, atol=1e-7)


@both_paths
def test_cross_entropy_probability_targets_and_kdim():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 3)).astype(np.float32)
    probs = rng.dirichlet(np.ones(3), size=4).astype(np.float32)
    out = F.cross_entropy(torch.tensor(logits), torch.tensor(probs))
    expected = -(probs * _log_softmax(logits, 1)).sum(1).mean()
    np.testing.assert_allclose(npv(out), expected, rtol=1e-5)
    # (N, C, d) logits with (N, d) targets: the class dimension is 1.
    logits3 = rng.standard_normal((2, 3, 5)).astype(np.float32)
    target3 = rng.integers(0, 3, size=(2, 5))
    out3 = F.cross_entropy(torch.tensor(logits3), torch.tensor(target3), reduction="none")
    flat = np.moveaxis(logits3, 1, -1).reshape(-1, 3)
    expected3 = _ce_reference(flat, target3.reshape(-1), reduction="none").reshape(2, 5)
    np.testing.assert_allclose(npv(out3), expected3, rtol=1e-5, atol=1e-6)


@both_paths
def test_cross_entropy_errors():
    with pytest.raises(IndexError, match=r"Target 3 is out of bounds\."):
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target"):
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 1, 2]))


@both_paths
def test_nll_loss_and_one_hot():
    logp = _log_softmax(np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], dtype=np.float32), 1)
    out = F.nll_loss(torch.tensor(logp.astype(np.float32)), torch.tensor([1, 2]))
    np.testing.assert_allclose(npv(out), -(logp[0, 1] + logp[1, 2]) / 2, rtol=1e-6)
    oh = F.one_hot(torch.tensor([0, 2, 1]))
    assert oh.dtype == torch.int64
    np.testing.assert_array_equal(npv(oh), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert tuple(F.one_hot(torch.tensor([1]), num_classes=5).shape) == (1, 5)
    with pytest.raises(RuntimeError, match=r"Class values must be smaller than num_classes\."):
        F.one_hot(torch.tensor([4]), num_classes=3)


@both_paths
def test_losses_against_pytorch(real_torch):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((8, 5)).astype(np.float32)
    target = rng.integers(0, 5, size=8)
    target[2] = 1
    weight = rng.uniform(0.5, 2.0, size=5).astype(np.float32)
    for kwargs in (
        {},
        {"label_smoothing": 0.1},
        {"reduction": "sum", "ignore_index": 1},
        {"reduction": "none"},
    ):
        for w in (None, weight):
            ours = nn.CrossEntropyLoss(weight=None if w is None else torch.tensor(w), **kwargs)(
                torch.tensor(logits), torch.tensor(target)
            )
            theirs = real_torch.nn.CrossEntropyLoss(
                weight=None if w is None else real_torch.tensor(w), **kwargs
            )(real_torch.tensor(logits), real_torch.tensor(target))
            np.testing.assert_allclose(npv(ours), theirs.numpy(), rtol=1e-5, atol=1e-6)
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        npv(F.mse_loss(torch.tensor(a), torch.tensor(b))),
        real_torch.nn.functional.mse_loss(real_torch.tensor(a), real_torch.tensor(b)).numpy(),
        rtol=1e-6,
    )


# ---------------------------------------------------------------------------
# state_dict
# ---------------------------------------------------------------------------


def test_state_dict_keys_values_and_numpy():
    net = TwoLayer()
    net.register_buffer("steps", torch.zeros(1))
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    for key, value in sd.items():
        assert isinstance(value, torch.Tensor) and not value.requires_grad
        assert isinstance(value.numpy(), np.ndarray), key
    np.testing.assert_array_equal(sd["fc1.weight"].numpy(), npv(net.fc1.weight))
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


@pytest.mark.parametrize("source", ["compat", "numpy"])
def test_state_dict_round_trip(source):
    torch.manual_seed(0)
    a = TwoLayer()
    torch.manual_seed(1)
    b = TwoLayer()
    sd = a.state_dict()
    if source == "numpy":
        sd = {k: v.numpy() for k, v in sd.items()}
    weight_obj = b.fc1.weight
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc1.weight is weight_obj  # copied in place, identity kept
    x = torch.randn(3, 4)
    np.testing.assert_array_equal(npv(a(x)), npv(b(x)))


def test_load_state_dict_casts_float64_numpy():
    lin = nn.Linear(2, 2)
    lin.load_state_dict({"weight": np.eye(2), "bias": np.array([1.0, 2.0])})
    assert lin.weight.dtype == torch.float32
    np.testing.assert_array_equal(npv(lin.weight), np.eye(2))


def test_load_state_dict_strict_errors():
    net = TwoLayer()
    sd = {k: v.numpy() for k, v in net.state_dict().items()}
    del sd["fc2.bias"]
    sd["fc3.weight"] = np.zeros((1, 1), np.float32)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for TwoLayer:")
    assert 'Missing key(s) in state_dict: "fc2.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "fc3.weight".' in msg
    result = net.load_state_dict(sd, strict=False)  # reported, not raised
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["fc3.weight"]
    sd["fc1.bias"] = np.zeros(7, np.float32)
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for fc1.bias: copying a param with "
        r"shape torch.Size\(\[7\]\) from checkpoint, the shape in current model "
        r"is torch.Size\(\[5\]\).",
    ):
        net.load_state_dict(sd, strict=False)


@both_paths
def test_state_dict_to_and_from_real_pytorch(real_torch):
    """Weights move through NumPy both ways; both frameworks then compute the same outputs."""
    rnn = real_torch.nn
    torch.manual_seed(0)
    ours = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    theirs = rnn.Sequential(rnn.Linear(6, 16), rnn.Tanh(), rnn.Linear(16, 3))
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)

    theirs.load_state_dict(
        {k: real_torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    with real_torch.no_grad():
        expected = theirs(real_torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(npv(ours(torch.tensor(x))), expected, rtol=1e-5, atol=1e-6)

    real_torch.manual_seed(5)
    theirs2 = rnn.Sequential(rnn.Linear(6, 16), rnn.Tanh(), rnn.Linear(16, 3))
    ours.load_state_dict(theirs2.state_dict())  # real torch tensors, via np.asarray
    with real_torch.no_grad():
        expected2 = theirs2(real_torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(npv(ours(torch.tensor(x))), expected2, rtol=1e-5, atol=1e-6)


@both_paths
def test_same_model_same_gradients_as_pytorch(real_torch):
    rng = np.random.default_rng(4)
    ours = TwoLayer()
    theirs = real_torch.nn.Sequential(
        real_torch.nn.Linear(4, 5), real_torch.nn.ReLU(), real_torch.nn.Linear(5, 3)
    )
    theirs.load_state_dict(
        {
            k.replace("fc1", "0").replace("fc2", "2"): real_torch.from_numpy(v.numpy().copy())
            for k, v in ours.state_dict().items()
        }
    )
    x = rng.standard_normal((7, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=7)
    nn.CrossEntropyLoss()(ours(torch.tensor(x)), torch.tensor(y)).backward()
    real_torch.nn.CrossEntropyLoss()(theirs(real_torch.tensor(x)), real_torch.tensor(y)).backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(npv(p.grad), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_module_double_and_float():
    lin = nn.Linear(2, 3)
    w_before = npv(lin.weight)
    lin.double()
    assert lin.weight.dtype == torch.float64 and isinstance(lin.weight, nn.Parameter)
    assert lin.weight.requires_grad
    np.testing.assert_array_equal(npv(lin.weight), w_before.astype(np.float64))
    out = lin(torch.ones(1, 2, dtype=torch.float64))
    assert out.dtype == torch.float64
    lin.to(torch.float32)
    assert lin.bias.dtype == torch.float32
    assert lin.to("cpu") is lin


def test_oneflow_flavour_reexports_the_same_modules():
    import compat.oneflow.nn as flow_nn
    import compat.oneflow.nn.functional as flow_F
    import compat.oneflow.optim as flow_optim

    assert flow_nn.Linear is nn.Linear and flow_nn.Module is nn.Module
    assert flow_nn.Parameter is nn.Parameter and flow_F.cross_entropy is F.cross_entropy
    assert flow_nn.init.kaiming_uniform_ is nn.init.kaiming_uniform_
    assert flow_optim.Adam is torch.optim.Adam


@pytest.mark.parametrize("name", ["leaky_relu", "silu", "relu"])
def test_functional_inplace_activations_write_through(name, real_torch):
    """``F.X(t, inplace=True)`` changes ``t`` and returns it; gradients through the
    in-place result and the leaf error are PyTorch's."""
    results = []
    for lib in (torch, real_torch):
        fn = getattr(lib.nn.functional, name)
        w = lib.tensor([-1.5, -0.2, 0.3, 2.0], dtype=lib.float64, requires_grad=True)
        h = w * 1.0
        out = fn(h, inplace=True)
        assert out is h
        (h * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        with pytest.raises(RuntimeError, match="leaf Variable"):
            fn(lib.ones(2, requires_grad=True), inplace=True)
        results.append((h.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


@both_paths
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "name, kwargs", [("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {})]
)
def test_fused_activations_are_pytorchs_single_nodes(nn_path, real_torch, name, kwargs, dtype):
    """``gelu`` and ``silu`` are one op named as PyTorch's kernel on the fused path; both
    paths give PyTorch's values and gradients."""
    x = np.linspace(-6.0, 6.0, 25)
    results = []
    for lib in (torch, real_torch):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = getattr(lib.nn.functional, name)(t, **kwargs)
        (g,) = lib.autograd.grad((y * lib.arange(25.0, dtype=t.dtype)).sum(), t)
        results.append((y.grad_fn.name(), y.detach().numpy(), g.numpy()))
    (cname, cy, cg), (rname, ry, rg) = results
    if nn_path == "fused":
        assert cname == rname
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(cy, ry, **tol)
    if dtype == "float32":
        # float32 gradients for x <= -4 are rounding noise in both libraries (1 + tanh(u)
        # cancels; PyTorch's kernel rounds differently), here scaled by weights up to 24
        tol = {"rtol": 1e-5, "atol": 2e-4}
    np.testing.assert_allclose(cg, rg, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_pytorch(real_torch, dtype, weighted, eps):
    """``F.rms_norm`` / ``nn.RMSNorm``: values, gradients of input and weight, the default
    eps (the computation dtype's epsilon: float32's for bfloat16), the top node's name."""
    g = np.random.default_rng(5)
    x = g.standard_normal((3, 2, 4)) * 0.1  # small values: eps matters
    w = g.standard_normal((2, 4))
    results = []
    for lib in (torch, real_torch):
        dt = getattr(lib, dtype)
        t = lib.tensor(x, dtype=dt, requires_grad=True)
        m = lib.nn.RMSNorm([2, 4], eps=eps, elementwise_affine=weighted, dtype=dt)
        if weighted:
            with lib.no_grad():
                m.weight.copy_(lib.tensor(w, dtype=dt))
        y = m(t)
        y.float().mul(lib.arange(24.0).reshape(3, 2, 4)).sum().backward()
        grads = [t.grad] + ([m.weight.grad] if weighted else [])
        results.append(
            (
                y.grad_fn.name(),
                y.float().detach().numpy(),
                [gr.float().numpy() for gr in grads],
                repr(m),
            )
        )
    (cname, cy, cg, crepr), (rname, ry, rg, rrepr) = results
    assert cname == rname and crepr == rrepr
    tol = {"bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(cy, ry, rtol=tol, atol=tol)
    for a, b in zip(cg, rg, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * 10)


def test_rms_norm_errors_match_pytorch(real_torch):
    for lib in (torch, real_torch):
        F = lib.nn.functional
        x = lib.ones(2, 4)
        with pytest.raises(RuntimeError, match=r"expected input with shape \[\*3\]"):
            F.rms_norm(x, (3,))
        with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
            F.rms_norm(x, (4,), lib.ones(3))
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            F.rms_norm(lib.ones(2, 4, dtype=lib.int64), (4,))
