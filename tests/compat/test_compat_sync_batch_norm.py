"""``nn.SyncBatchNorm`` in one process against PyTorch 2.13 (the ``real_torch`` fixture):
``convert_sync_batchnorm``'s module tree and shared parameters, training and eval
outputs, gradients, running statistics, ``repr`` and the refusals of bad input shapes."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


def test_sync_batch_norm_in_one_process(real_torch) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2, 2))
    results = []
    for lib in (ctorch, real_torch):
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
