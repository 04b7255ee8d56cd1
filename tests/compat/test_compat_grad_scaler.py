"""``torch.amp.GradScaler`` and its two fused updates against PyTorch 2.13's: the lazy
scale and tracker tensors, the state dict, the per-optimizer stages and their errors, the
protocol of optimizers that handle the scale themselves, pickling."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _model(lib: Any) -> tuple[Any, Any]:
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.5, -0.25, 1.0], [0.1, 0.2, -0.3]]))
        m.bias.copy_(lib.tensor([0.1, -0.2]))
    return m, lib.optim.SGD(m.parameters(), lr=0.1)


def _training(lib: Any) -> list[Any]:
    m, opt = _model(lib)
    s = lib.amp.GradScaler("cpu", init_scale=8.0, growth_factor=4.0, growth_interval=2)
    seen = [s.get_scale(), s._scale]
    for step in range(5):
        opt.zero_grad()
        loss = m(lib.ones(1, 3)).sum()
        if step == 1:
            loss = loss * float("inf")
        scaled = s.scale(loss)
        scaled.backward()
        if step == 3:
            s.unscale_(opt)
            seen.append([p.grad.tolist() for p in m.parameters()])
        out = s.step(opt)
        s.update()
        seen += [out, s.get_scale(), s._get_growth_tracker(), str(s._scale.dtype)]
        seen.append(str(s._growth_tracker.dtype))
    seen.append([p.tolist() for p in m.parameters()])
    seen.append(s.state_dict())
    return seen


def test_training_loop_as_pytorch() -> None:
    assert _training(ctorch) == _training(torch)


def _state_dicts(lib: Any) -> list[Any]:
    out = []
    for lazy in (True, False):
        s0 = lib.amp.GradScaler("cpu", init_scale=3.0, growth_factor=4.0, backoff_factor=0.5,
                                growth_interval=2)  # fmt: skip
        s1 = lib.amp.GradScaler("cpu", init_scale=6.0, growth_factor=7.0, backoff_factor=0.8,
                                growth_interval=1)  # fmt: skip
        s1._init_growth_tracker = 7
        if lazy:
            s1.scale(lib.full((1,), 4.0))
        s1.load_state_dict(s0.state_dict())
        out.append((s1.get_scale(), s1.get_growth_factor(), s1.get_backoff_factor()))
        out.append((s1.get_growth_interval(), s1._init_growth_tracker, s1._get_growth_tracker()))
    out.append(lib.amp.GradScaler("cpu").state_dict())
    return out


def test_state_dict_round_trip() -> None:
    assert _state_dicts(ctorch) == _state_dicts(torch)


def _errors(lib: Any) -> list[str]:
    m, opt = _model(lib)
    s = lib.amp.GradScaler("cpu")
    msgs = []
    for call in (lambda: s.unscale_(opt), lambda: s.step(opt), lambda: s.update()):
        with pytest.raises(AssertionError) as e:
            call()
        msgs.append(str(e.value))
    s.scale(m(lib.ones(1, 3)).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError) as e:
        s.unscale_(opt)
    msgs.append(str(e.value))
    s.step(opt)
    for call in (lambda: s.step(opt), lambda: s.unscale_(opt)):
        with pytest.raises(RuntimeError) as e:
            call()
        msgs.append(str(e.value))
    with pytest.raises(RuntimeError) as e:
        s.step(opt, closure=lambda: None)
    msgs.append(str(e.value))
    with pytest.raises(ValueError) as e:
        s.scale(3.0)
    msgs.append(str(e.value))
    return msgs


def test_out_of_order_calls_raise_pytorchs_errors() -> None:
    assert _errors(ctorch) == _errors(torch)


def _protocol(lib: Any) -> list[Any]:
    seen: list[Any] = []

    class Own(lib.optim.SGD):
        def __init__(self, params: Any) -> None:
            super().__init__(params, lr=0.1)
            self._step_supports_amp_scaling = True

        def step(self, closure: Any = None) -> Any:
            seen.append((float(self.grad_scale), float(self.found_inf)))
            return "stepped"

    class Takes(Own):
        def step(self, closure: Any = None, *, grad_scaler: Any = None) -> Any:
            seen.append((type(grad_scaler).__name__, hasattr(self, "grad_scale")))
            return "took"

    for cls in (Own, Takes):
        m, _ = _model(lib)
        opt = cls(m.parameters())
        s = lib.amp.GradScaler("cpu", init_scale=4.0)
        (s.scale(m(lib.ones(1, 3)).sum()) * float("nan")).backward()
        with pytest.warns(FutureWarning) if cls is Takes else _nothing():
            seen.append(s.step(opt))
        seen.append(hasattr(opt, "grad_scale") or hasattr(opt, "found_inf"))
    return seen


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def test_optimizers_handling_the_scale() -> None:
    assert _protocol(ctorch) == _protocol(torch)


def _fused(lib: Any) -> list[Any]:
    out = []
    for found, tracker in ((0.0, 0), (0.0, 2), (1.0, 2)):
        scale = lib.full((), 8.0)
        growth = lib.full((), tracker, dtype=lib.int32)
        lib._amp_update_scale_(scale, growth, lib.full((), found), 2.0, 0.25, 3)
        out.append((scale.item(), growth.item()))
    grads = [lib.tensor([2.0, 4.0]), lib.tensor([1.0, float("inf")])]
    found_inf = lib.full((1,), 0.0)
    lib._amp_foreach_non_finite_check_and_unscale_(grads[:1], found_inf, lib.full((1,), 0.5))
    out.append((grads[0].tolist(), found_inf.item()))
    lib._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, lib.full((1,), 0.5))
    out.append(([g.tolist() for g in grads], found_inf.item()))
    return out


def test_fused_updates() -> None:
    assert _fused(ctorch) == _fused(torch)


def _pickled(lib: Any) -> list[Any]:
    m, opt = _model(lib)
    s = lib.amp.GradScaler("cpu", init_scale=16.0, growth_interval=1)
    s.scale(m(lib.ones(1, 3)).sum()).backward()
    s.step(opt)
    s.update()
    back = pickle.loads(pickle.dumps(s))
    return [back.get_scale(), back._scale, back._get_growth_tracker(), back.state_dict()]


def test_pickling_between_iterations() -> None:
    assert _pickled(ctorch) == _pickled(torch)
