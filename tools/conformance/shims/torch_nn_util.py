"""Stand-in for ``torch.testing._internal.common_nn``, as far as ``test/test_nn.py`` uses it.

Provided: ``NNTestCase`` (the base of ``TestNN``), the small fixtures the file's own
tests call (``_create_basic_net``: the same module tree, parameter and buffer names
and shapes as PyTorch's fixture; ``_test_module_empty_input``, ``_test_bfloat16_ops``,
``single_batch_reference_fn``) and reference formulas for the losses the file checks
against (``loss_reference_fns``: cosine-embedding, margin-ranking, triplet-margin).

Not provided: PyTorch's tables of module and criterion configurations and the
harness that turns them into tests (``module_tests``, ``criterion_tests``,
``get_new_module_tests``: empty here; ``NewModuleTest``/``CriterionTest`` only name
their tests, which skip as out of scope, and ``run_torch.py`` lists the tests
upstream generates from them as out of scope). Any other name resolves to the swap's
placeholder for an upstream internal, so a test that uses it is out of scope.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch  # swapped: the library under test
from torch import nn

from tools.conformance.shims.swap import Missing

# ``freeze_rng_state``: common_nn re-exports it from common_utils (nn/test_dropout.py)
from tools.conformance.shims.torch_test_util import TestCase, freeze_rng_state  # noqa: F401

_HERE = "torch.testing._internal.common_nn"
_HARNESS = "out of scope: PyTorch's module/criterion test harness (common_nn.NewModuleTest)"


class NNTestCase(TestCase):
    """The base class of ``TestNN``: PyTorch's test case (its extra methods serve the
    module-table harness, which is not provided)."""


def _create_basic_net() -> tuple[Any, Any, Any]:
    """``(layer, net, sequential)``: a layer with one parameter and one buffer, a net
    holding that layer plus a parameter and a buffer of its own, and a ``Sequential``
    holding the net twice (the fixture of PyTorch's parameter/buffer naming tests)."""

    class Layer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer_dummy_param = nn.Parameter(torch.empty(3, 5))
            self.layer_dummy_buf = nn.Buffer(torch.zeros(1, 3, 3, 7))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l1 = Layer()
            self.dummy_param = nn.Parameter(torch.empty(3, 5))
            self.dummy_buf = nn.Buffer(torch.zeros(7, 3, 3, 1))

    net = Net()
    return Layer(), net, nn.Sequential(net, net)


def _test_module_empty_input(
    test_case: Any, module: Any, inp: Any, check_size: bool = True, inference: bool = False
) -> None:
    """Run ``module`` on an empty input (and backward unless ``inference``): the output
    keeps the input's size, and every gradient is an empty zero."""
    if not inference:
        inp.requires_grad_(True)
    out = module(inp)
    if not inference:
        out.backward(torch.rand_like(out))
    if check_size:
        test_case.assertEqual(out.size(), inp.size())
    if inference:
        return
    for p in module.parameters():
        if p.requires_grad:
            test_case.assertEqual(p.grad, torch.zeros_like(p.grad))
    test_case.assertEqual(inp.grad, torch.zeros_like(inp))


def _test_bfloat16_ops(
    test_case: Any, op: Any, device: Any, inp_dims: Any = (), prec: float = 1e-2,
    scale_factor: float | None = None,
) -> None:  # fmt: skip
    """``op`` in bfloat16 agrees with ``op`` in float32 (output and input gradient)."""
    x = torch.randn(inp_dims, dtype=torch.float32, device=device, requires_grad=True)
    if scale_factor is not None:
        x = (torch.rand(inp_dims, dtype=torch.bfloat16, device=device) * scale_factor).float()
        x.requires_grad_()
    out = op(x)
    g = torch.randn_like(out, device=device)
    out.backward(g)
    x16 = x.detach().bfloat16().requires_grad_()
    out16 = op.bfloat16()(x16)
    out16.backward(g.bfloat16())
    test_case.assertEqual(out, out16, atol=prec, rtol=prec, exact_dtype=False)
    test_case.assertEqual(x.grad.data, x16.grad.data, atol=prec, rtol=prec, exact_dtype=False)


def single_batch_reference_fn(input: Any, parameters: Any, module: Any) -> Any:
    """The module on the input with a batch dimension of one added, then removed."""
    batched = [t.unsqueeze(0) for t in input] if isinstance(input, (list, tuple)) else [
        input.unsqueeze(0)]  # fmt: skip
    state = torch.get_rng_state()
    try:
        return module(*batched).squeeze(0)
    finally:
        torch.set_rng_state(state)


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _cosine_embedding(
    a: Any, b: Any, target: Any, margin: float = 0, reduction: str = "mean"
) -> Any:
    eps = 1e-12
    cos = (a * b).sum(-1) / ((a * a).sum(-1) + eps).sqrt() / ((b * b).sum(-1) + eps).sqrt()
    loss = torch.where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction)


def _margin_ranking(a: Any, b: Any, target: Any, margin: float = 0, reduction: str = "mean") -> Any:
    return _reduce((-target * (a - b) + margin).clamp(min=0), reduction)


def _triplet_margin(
    anchor: Any, pos: Any, neg: Any, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
    swap: bool = False, reduction: str = "mean",
) -> Any:  # fmt: skip
    d_pos = torch.pairwise_distance(anchor, pos, p, eps)
    d_neg = torch.pairwise_distance(anchor, neg, p, eps)
    if swap:
        d_neg = torch.min(d_neg, torch.pairwise_distance(pos, neg, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


class _References(dict):
    """Loss name -> reference function; the others are upstream internals."""

    def __missing__(self, key: str) -> Any:
        return Missing(f"{_HERE}.loss_reference_fns[{key!r}]", "internal")


loss_reference_fns: dict[str, Callable[..., Any]] = _References(
    CosineEmbeddingLoss=_cosine_embedding,
    MarginRankingLoss=_margin_ranking,
    TripletMarginLoss=_triplet_margin,
)

module_tests: list[dict[str, Any]] = []
criterion_tests: list[dict[str, Any]] = []


def get_new_module_tests() -> list[dict[str, Any]]:
    return []


class NewModuleTest:
    """Names a module test as PyTorch's harness does (``test_<fullname>``, or
    ``test_<Module>_<desc>``); running it skips as out of scope."""

    def __init__(
        self, constructor: Any = None, desc: str = "", reference_fn: Any = None,
        fullname: str | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        self.constructor, self.desc, self.fullname = constructor, desc, fullname
        self.test_cpu = kwargs.get("test_cpu", True)
        self.with_tf32 = kwargs.get("with_tf32", False)
        self.tf32_precision = kwargs.get("tf32_precision", 0.001)
        self.check_half = kwargs.get("check_half", True)
        self.check_bfloat16 = kwargs.get("check_bfloat16", False)
        self.check_complex = kwargs.get("check_complex", False)
        self.extra_args = kwargs.get("extra_args")

    def get_name(self) -> str:
        if self.fullname is not None:
            return "test_" + self.fullname
        name = "test_" + getattr(self.constructor, "__name__", str(self.constructor))
        return name + ("_" + self.desc if self.desc else "")

    def __call__(self, test_case: Any) -> None:
        test_case.skipTest(_HARNESS)

    def test_cuda(self, test_case: Any) -> None:
        test_case.skipTest(_HARNESS)


class CriterionTest(NewModuleTest):
    """A criterion test of PyTorch's harness: named, skipped as out of scope."""


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return Missing(f"{_HERE}.{name}", "internal")
