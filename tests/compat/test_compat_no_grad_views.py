"""A view made under ``no_grad`` (or ``inference_mode``, ``set_grad_enabled(False)``) of
a tensor requiring grad: PyTorch 2.13 reports ``requires_grad=True``, no ``grad_fn``,
``is_leaf``; ``requires_grad_(False)`` leaves it so; ``detach_`` and in-place writes with
grad mode on are refused in PyTorch's words, in-place under ``no_grad`` writes the base.
compat matches each (checked against real PyTorch, the oracle)."""

from __future__ import annotations

import pytest
from torch_oracle import error_of, import_real_torch

import compat.torch as ct

real = import_real_torch()

MODES = {
    "no_grad": lambda lib: lib.no_grad(),
    "inference_mode": lambda lib: lib.inference_mode(),
    "set_grad_enabled": lambda lib: lib.set_grad_enabled(False),
}
VIEWS = {
    "select": lambda x: x[0],
    "slice": lambda x: x[:, 1:],
    "view": lambda x: x.view(6),
    "t": lambda x: x.t(),
    "expand": lambda x: x.unsqueeze(0).expand(2, 2, 3),
    "diagonal": lambda x: x.diagonal(),
    "unbind": lambda x: x.unbind(1)[0],
}


def _scenario(lib, mode: str, view: str, leaf: bool) -> list:
    w = lib.ones(2, 3, requires_grad=True)
    x = w if leaf else w * 2
    with MODES[mode](lib):
        v = VIEWS[view](x)
        plain = x * 1
    rec = [v.requires_grad, v.grad_fn is None, v.is_leaf, plain.requires_grad]
    rec.append(error_of(lambda: v.requires_grad_(False)))
    rec.append(v.requires_grad)
    rec.append(error_of(lambda: v.detach_()))
    rec.append(error_of(lambda: v.mul_(2)))
    with MODES[mode](lib):
        rec.append(error_of(lambda: VIEWS[view](x).add_(1)))
    rec.append(x.tolist())
    return rec


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("mode", list(MODES))
def test_view_made_without_grad(mode, view, leaf):
    assert _scenario(ct, mode, view, leaf) == _scenario(real, mode, view, leaf)


def _unbind_cases(lib) -> list:
    """Multi-output views (``unbind``/``split``): made without grad they are PyTorch's
    no_grad (or inference-mode) views; made with grad on from a base not requiring grad,
    they keep the multi-output message. An expanded no_grad view: autograd's error first."""

    def made_in(mode, base_req, op, write_mode=None):
        x = lib.ones(2, 3, requires_grad=True) * 1 if base_req else lib.ones(2, 3)
        w = lib.ones(3, requires_grad=True)
        with mode():
            v = op(x)
        with write_mode() if write_mode else lib.enable_grad():
            v.add_(w)
        return x.tolist()

    grad = lib.enable_grad
    cases = [
        (lib.no_grad, True, lambda x: x.unbind(0)[0]),
        (lib.no_grad, False, lambda x: x.unbind(0)[0]),
        (lib.inference_mode, True, lambda x: x.unbind(0)[0]),
        (grad, False, lambda x: x.unbind(0)[0]),
        (lib.no_grad, True, lambda x: x.split(1)[0][0]),
        (lib.no_grad, True, lambda x: x.unbind(0)[0][1:]),
        (lib.no_grad, True, lambda x: x.expand(2, 2, 3)[0]),
    ]
    out = [error_of(lambda c=c: made_in(*c)) for c in cases]
    out.append(error_of(lambda: made_in(lib.no_grad, True, cases[0][2], lib.no_grad)))
    return out


def test_multi_output_views_made_without_grad():
    assert _unbind_cases(ct) == _unbind_cases(real)
