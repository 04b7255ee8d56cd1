"""The hand-written funcgrad steps of ``benchmarks.fg_models`` compute compat's steps.

For each benchmark model (small sizes), training steps of the jitted funcgrad
step (forward, loss, gradient, optimizer update) starting from a copy of the compat
model's parameters give the same losses and updated parameters as compat eager's
``train_step`` on the same batches.

One exception: the attention's key bias (the middle third of ``qkv.bias``) gets a
gradient that is zero in exact arithmetic (softmax ignores a constant added to all
logits of a row), so both sides hold rounding noise there, which Adam scales up to
steps of up to ``lr``; that slice is checked to within two such steps.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.lazy
import compat.torch as ctorch
from benchmarks import fg_models, models


def _noise_only(kind: str, name: str, width: int) -> slice | None:
    """The slice of parameter ``name`` whose exact gradient is zero (see the docstring)."""
    if kind == "gpt" and name.endswith(".qkv.bias"):
        return slice(width, 2 * width)
    return None


# (a second step also checks the optimizer state carried over; one for gpt, whose
# eager compat step is the slow part of this file, while mlp checks Adam's state)
@pytest.mark.parametrize(("kind", "steps"), [("mlp", 2), ("cnn", 2), ("gpt", 1), ("lstm", 2)])
def test_funcgrad_step_matches_compat_eager(kind: str, steps: int) -> None:
    model, opt, data = models.build(ctorch, kind, small=True)
    ref = fg_models.from_compat(kind, model, opt)
    params, state = ref.params, ref.state
    lr = opt.param_groups[0]["lr"]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        batch = data(rng)
        params, state, loss = ref.step(params, state, *ref.batch(batch))
        with compat.lazy.enabled(False):
            want = models.train_step(ctorch, model, opt, *(ctorch.tensor(a) for a in batch))
        np.testing.assert_allclose(float(loss), want.item(), rtol=1e-4)
        expected = dict(model.named_parameters())
        assert sorted(params) == sorted(expected)
        for name, value in params.items():
            got, want_p = np.array(value), expected[name].detach().numpy().copy()
            noise = _noise_only(kind, name, got.shape[0] // 3)
            if noise is not None:
                np.testing.assert_allclose(got[noise], want_p[noise], rtol=0, atol=2 * steps * lr)
                got[noise] = want_p[noise] = 0.0
            # float32 rounding differs between the jitted step and compat's eager one (the
            # host tier's NumPy summation order); Adam's m / sqrt(v) turns that noise into
            # a step of up to lr for a weight whose gradient is near zero (one of 200,704
            # moved 2.8e-6 in a full run): all but a few in 10,000 agree to float32
            # rounding, and none is further off than that bound
            off = ~np.isclose(got, want_p, rtol=1e-4, atol=1e-6)
            assert off.mean() <= 1e-4, f"{kind}: parameter {name}: {off.sum()} differ"
            np.testing.assert_array_less(
                np.abs(got - want_p)[off], steps * lr, err_msg=f"{kind}: parameter {name}"
            )


def test_unsupported_optimizer_setting_is_refused() -> None:
    model, _, _ = models.build(ctorch, "mlp", small=True)
    opt = ctorch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True)
    with pytest.raises(NotImplementedError, match="Adam"):
        fg_models.from_compat("mlp", model, opt)
