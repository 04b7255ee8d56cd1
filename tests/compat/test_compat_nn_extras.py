"""``F.triplet_margin_with_distance_loss``/``nn.TripletMarginWithDistanceLoss``,
``F.channel_shuffle``/``nn.ChannelShuffle``, ``nn.utils.fusion`` and
``nn.utils.skip_init`` against PyTorch 2.13: values and gradients from the same inputs and
weights, the errors; and ``cross_entropy`` of zero classes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _cosine_distance(lib: Any) -> Any:
    return lambda x, y: 1.0 - lib.nn.functional.cosine_similarity(x, y)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"margin": 0.5, "swap": True, "reduction": "none"}, {"margin": 1.5, "reduction": "sum"},
     {"distance": True, "swap": True}, {"distance": True, "reduction": "none", "module": True}],
)  # fmt: skip
def test_triplet_margin_with_distance_loss(kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 6)) for _ in range(3)]
    results = []
    for lib in LIBS:
        kw = {k: v for k, v in kwargs.items() if k not in ("distance", "module")}
        if kwargs.get("distance"):
            kw["distance_function"] = _cosine_distance(lib)
        tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
        if kwargs.get("module"):
            out = lib.nn.TripletMarginWithDistanceLoss(**kw)(*tensors)
        else:
            out = lib.nn.functional.triplet_margin_with_distance_loss(*tensors, **kw)
        out.sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_triplet_margin_with_distance_loss_errors() -> None:
    msgs = []
    for lib in LIBS:
        f = lib.nn.functional.triplet_margin_with_distance_loss
        with pytest.raises(ValueError) as margin:
            f(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0)
        with pytest.raises(RuntimeError) as dims:
            f(lib.ones(2, 3), lib.ones(3), lib.ones(2, 3))
        with pytest.raises(ValueError):
            lib.nn.TripletMarginWithDistanceLoss(margin=-1.0)
        msgs.append((str(margin.value), str(dims.value)))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize(
    "shape,groups", [((2, 6, 3), 3), ((1, 8, 2, 2), 2), ((0, 9, 4, 4), 3), ((2, 4, 1, 1, 1), 4)]
)
def test_channel_shuffle(shape: tuple, groups: int) -> None:
    x = np.random.default_rng(1).standard_normal(shape)
    results = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.channel_shuffle(t, groups)
        module_out = lib.nn.ChannelShuffle(groups)(t)
        g = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
        out.backward(g)
        results.append((out.detach().numpy(), module_out.detach().numpy(), t.grad.numpy()))
        assert repr(lib.nn.ChannelShuffle(groups)) == f"ChannelShuffle(groups={groups})"
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(
    "shape,groups", [((2, 4), 2), ((2, 4, 3), 0), ((2, 3, 3), 2), ((2, 4, 3), -1)]
)
def test_channel_shuffle_errors(shape: tuple, groups: int) -> None:
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.channel_shuffle(lib.ones(shape), groups)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def _conv_bn(lib: Any, arrays: list, transpose: bool, bias: bool) -> tuple:
    conv_cls = lib.nn.ConvTranspose2d if transpose else lib.nn.Conv2d
    conv = conv_cls(2, 3, 2, bias=bias).double().eval()
    bn = lib.nn.BatchNorm2d(3).double().eval()
    with lib.no_grad():
        conv.weight.copy_(
            lib.tensor(arrays[0] if not transpose else arrays[0].transpose(1, 0, 2, 3))
        )
        if bias:
            conv.bias.copy_(lib.tensor(arrays[1]))
        for name, a in zip(("running_mean", "running_var", "weight", "bias"), arrays[2:]):
            getattr(bn, name).copy_(lib.tensor(a))
    return conv, bn


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn(transpose: bool, bias: bool) -> None:
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 2, 2, 2)), rng.standard_normal(3), rng.standard_normal(3),
              rng.uniform(0.5, 2.0, 3), rng.standard_normal(3), rng.standard_normal(3)]  # fmt: skip
    x = rng.standard_normal((2, 2, 5, 5))
    results = []
    for lib in LIBS:
        conv, bn = _conv_bn(lib, arrays, transpose, bias)
        fused = lib.nn.utils.fusion.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        assert type(fused) is type(conv) and fused is not conv
        results.append((fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                        fused(lib.tensor(x)).detach().numpy(), bn(conv(lib.tensor(x))).detach().numpy()))  # fmt: skip
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][2], results[0][3], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("w_rg,b_rg", [(True, True), (True, False), (False, True), (False, False)])
def test_fused_weights_keep_requires_grad(w_rg: bool, b_rg: bool) -> None:
    for lib in LIBS:
        fusion = lib.nn.utils.fusion
        for layer, bn, fuse in (
            (lib.nn.Conv2d(3, 3, 3), lib.nn.BatchNorm2d(3), fusion.fuse_conv_bn_weights),
            (lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3), fusion.fuse_linear_bn_weights),
        ):
            layer.weight.requires_grad_(w_rg)
            layer.bias.requires_grad_(b_rg)
            w, b = fuse(
                layer.weight,
                layer.bias,
                bn.running_mean,
                bn.running_var,
                bn.eps,
                bn.weight,
                bn.bias,
            )
            assert (w.requires_grad, b.requires_grad) == (w_rg, b_rg)
            assert isinstance(w, lib.nn.Parameter)


def test_fuse_linear_bn() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(4),
              rng.uniform(0.5, 2.0, 4), rng.standard_normal(4), rng.standard_normal(4)]  # fmt: skip
    x = rng.standard_normal((5, 3))
    results = []
    for lib in LIBS:
        linear = lib.nn.Linear(3, 4).double().eval()
        bn = lib.nn.BatchNorm1d(4).double().eval()
        with lib.no_grad():
            for obj, name, a in zip((linear, linear, bn, bn, bn, bn),
                                    ("weight", "bias", "running_mean", "running_var", "weight", "bias"), arrays):  # fmt: skip
                getattr(obj, name).copy_(lib.tensor(a))
        fused = lib.nn.utils.fusion.fuse_linear_bn_eval(linear, bn)
        results.append(fused(lib.tensor(x)).detach().numpy())
        with pytest.raises(AssertionError):
            lib.nn.utils.fusion.fuse_linear_bn_eval(linear.train(), bn)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


def test_skip_init() -> None:
    ctorch.manual_seed(1)
    expected_next = ctorch.rand(3)
    ctorch.manual_seed(1)
    m = ctorch.nn.utils.skip_init(ctorch.nn.Linear, 5, 2, device="cpu")
    # no draw consumed (PyTorch builds on the meta device), shapes and types as usual
    np.testing.assert_array_equal(ctorch.rand(3).numpy(), expected_next.numpy())
    assert type(m) is ctorch.nn.Linear and isinstance(m.weight, ctorch.nn.Parameter)
    assert tuple(m.weight.shape) == (2, 5) and m.weight.requires_grad
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int, 1)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)


def test_cross_entropy_of_zero_classes() -> None:
    outs = []
    for lib in LIBS:
        loss = lib.nn.CrossEntropyLoss()
        outs.append(
            [
                float(loss(lib.rand(5, 0), lib.rand(5, 0))),
                float(loss(lib.rand(0, 3), lib.rand(0, 3))),
            ]
        )
    np.testing.assert_array_equal(outs[0], outs[1])  # NaN, as PyTorch's 0 / 0


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("size", [3, 4, 7])
def test_interpolate_uint8_nearest(mode: str, size: int) -> None:
    x = np.array([[[1, 200, 3], [0, 255, 17]]], dtype=np.uint8)
    outs = [lib.nn.functional.interpolate(lib.tensor(x), size=size, mode=mode) for lib in LIBS]
    assert str(outs[0].dtype) == str(outs[1].dtype) == "torch.uint8"
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


@pytest.mark.parametrize(
    "call",
    [lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=(4.0,)),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=(4.0, 4.0)),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2, dtype=lib.int32), scale_factor=2),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2, dtype=lib.int64), scale_factor=2, mode="bicubic")],
)  # fmt: skip
def test_interpolate_errors(call: Any) -> None:
    seen = []
    for lib in LIBS:
        with pytest.raises((TypeError, NotImplementedError)) as info:
            call(lib)
        seen.append((type(info.value).__name__, str(info.value).split(" not implemented")[-1]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 7, 3, 4), (1, 4, 2, 2, 3), (0, 3, 2)])
@pytest.mark.parametrize("size,kw", [(2, {}), (5, {"alpha": 0.1, "beta": 0.5, "k": 2.0}), (1, {})])
def test_local_response_norm(shape: tuple, size: int, kw: dict) -> None:
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    results = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        module = lib.nn.LocalResponseNorm(size, **kw)
        out = module(t)
        if out.numel():
            out.backward(lib.tensor(g))
        results.append(
            (out.detach().numpy(), t.grad.numpy() if out.numel() else None, repr(module))
        )
    assert results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    if results[1][1] is not None:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)
    msgs = []
    for lib in LIBS:
        with pytest.raises(ValueError) as info:
            lib.nn.functional.local_response_norm(lib.ones(3, 4), 2)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_sync_batch_norm_in_one_process() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2, 2))
    results = []
    for lib in LIBS:
        model = lib.nn.Sequential(lib.nn.BatchNorm2d(3), lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
        synced = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        assert [type(m).__name__ for m in synced.modules()] == [
            "Sequential", "SyncBatchNorm", "Sequential", "SyncBatchNorm"
        ]  # fmt: skip
        assert (
            synced[0].weight is model[0].weight and synced[0].running_mean is model[0].running_mean
        )
        t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        bn = synced[0].double()
        out = bn(t)
        out.backward(lib.tensor(x[::-1].copy()))
        bn.eval()
        results.append([out.detach().numpy(), t.grad.numpy(), bn.running_mean.numpy(),
                        bn.running_var.numpy(), bn(t).detach().numpy(), repr(bn)])  # fmt: skip
        for bad in (lib.ones(3), lib.ones(2, 0, 3)):
            with pytest.raises(ValueError):
                lib.nn.SyncBatchNorm(3)(bad)
    assert results[0][-1] == results[1][-1]
    for ours, theirs in zip(results[0][:-1], results[1][:-1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
