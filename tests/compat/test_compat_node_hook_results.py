"""What a ``grad_fn`` hook (``register_hook``/``register_prehook``, and the module
backward hooks built on them) may return, against real PyTorch 2.13: a tuple of as many
gradients of the same shapes, ``None`` entries allowed; anything else is refused with
PyTorch's error when the backward runs it."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import compat.torch as torch


def _named(gi, go):
    return (*gi, gi[0])


def _unnamed(extra, gi, go):
    return ()


HOOKS = {
    "post: none returned": ("register_hook", lambda gi, go: ()),
    "post: one more": ("register_hook", _named),
    "post: partial": ("register_hook", functools.partial(_unnamed, 1)),
    "post: not a tuple": ("register_hook", lambda gi, go: 5),
    "post: a list": ("register_hook", lambda gi, go: [gi[0] * 2]),
    "post: other shape": ("register_hook", lambda gi, go: (gi[0][:2],)),
    "post: doubled": ("register_hook", lambda gi, go: (gi[0] * 2,)),
    "post: None entry": ("register_hook", lambda gi, go: (None,)),
    "pre: none returned": ("register_prehook", lambda go: ()),
    "pre: other shape": ("register_prehook", lambda go: (go[0].reshape(1, 3),)),
    "pre: a tensor": ("register_prehook", lambda go: go[0]),
    "pre: replaced": ("register_prehook", lambda go: (go[0] * 0 + 1,)),
}


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_node_hook_results_as_pytorch(real_torch, case):
    reg, hook = HOOKS[case]

    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * lib.tensor([2.0, 3.0, 4.0])
        getattr(y.grad_fn, reg)(hook)
        try:
            y.sum().backward()
        except Exception as e:
            return type(e).__name__, str(e)
        return "ok", None if x.grad is None else np.asarray(x.grad.tolist())

    mine, theirs = run(torch), run(real_torch)
    assert mine[0] == theirs[0]
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1], theirs[1])
    else:
        assert mine[1] == theirs[1]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # (PyTorch's: the legacy hook)
def test_legacy_module_backward_hook_count_refused(real_torch):
    def run(lib):
        m = lib.nn.Sigmoid()
        x = lib.ones(2, 2, requires_grad=True)
        seen = []
        for hook in (lambda mod, gi, go: gi[:-1], lambda mod, gi, go: (*gi, lib.ones(2))):
            with m.register_backward_hook(hook), pytest.raises(RuntimeError) as err:
                m(x).sum().backward()
            seen.append(str(err.value).split(" has returned ")[1])
        return seen

    assert run(torch) == run(real_torch)


@pytest.mark.filterwarnings("ignore::UserWarning")  # (both: the hook fires from the outputs)
@pytest.mark.parametrize("returned", ["none", "nones", "grad_input", "a tensor"])
def test_full_hook_with_no_input_needing_grad(real_torch, returned):
    """A full backward hook of a module whose inputs need no gradient may return only
    ``None`` (or ``None`` for each input), as PyTorch requires."""

    def run(lib):
        m = lib.nn.Linear(2, 3)
        x = lib.ones(1, 2)
        results = {"none": None, "nones": (None,), "a tensor": x}

        def hook(mod, grad_input, grad_output):
            return grad_input if returned == "grad_input" else results[returned]

        m.register_full_backward_hook(hook)
        try:
            m(x).sum().backward()
        except RuntimeError as e:
            return str(e)
        return None

    assert run(torch) == run(real_torch)


def _legacy_warnings(lib):
    """The FutureWarnings a legacy backward hook's module call raises, per module."""
    nn = lib.nn
    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)

    class Listed(nn.Module):
        def forward(self, m):
            return m[0].clone(), m[1].clone()

    class ListOut(nn.Module):
        def forward(self, a, b):
            return [a.clone(), b.clone()]

    class TwoNodes(nn.Module):
        def forward(self, a, b):
            return a.clone(), b.clone()

    class Chain(nn.Module):
        def forward(self, a):
            return a.clone().clone()

    seen = []
    for m, args in ((Listed(), ([a, b],)), (ListOut(), (a, b)), (TwoNodes(), (a, b)),
                    (Chain(), (a,)), (nn.Sigmoid(), (a,)), (nn.Sigmoid(), (a * 1,))):  # fmt: skip
        m.register_backward_hook(lambda *args: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(*args)
        seen.append([str(w.message) for w in caught if w.category is FutureWarning])
    return seen


def test_legacy_hook_warnings_as_pytorch(real_torch):
    mine = _legacy_warnings(torch)
    assert mine == _legacy_warnings(real_torch)
    assert [len(w) for w in mine] == [1, 1, 1, 1, 1, 0]


def test_full_hook_on_a_dict_output_warns_as_pytorch(real_torch):
    """A module with full backward hooks returning a dict: PyTorch's UserWarning, and no
    backward hook runs."""

    def run(lib):
        calls = {"forward": 0, "backward": 0}

        class DictOut(lib.nn.Module):
            def forward(self, d):
                return {"x": d["x"].softmax(0)}

        def count(kind):
            def hook(*args):
                calls[kind] += 1

            return hook

        m = DictOut()
        m.register_forward_hook(count("forward"))
        m.register_full_backward_pre_hook(count("backward"))
        m.register_full_backward_hook(count("backward"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m({"x": lib.ones(2, requires_grad=True)})["x"].sum().backward()
        return calls, [str(w.message).split(" but received ")[0] for w in caught]

    mine = run(torch)
    assert mine == run(real_torch)
    assert len(mine[1]) == 1


def test_full_hooks_keep_a_named_tuple_output(real_torch):
    """A module with full backward hooks returning a named tuple returns the same named
    tuple (its fields rebuilt one by one), and the hooks run on its backward."""
    from collections import namedtuple

    Out = namedtuple("Out", "content other")

    def run(lib):
        fired = []

        class M(lib.nn.Module):
            def forward(self, x):
                return Out(x * 2, x * 3)

        m = M()
        m.register_full_backward_pre_hook(lambda mod, go: fired.append("pre"))
        m.register_full_backward_hook(lambda mod, gi, go: fired.append("post"))
        x = lib.ones(2, requires_grad=True)
        out = m(x)
        out.content.sum().backward()
        return type(out).__name__, out._fields, fired, x.grad.tolist()

    assert (
        run(torch) == run(real_torch) == ("Out", ("content", "other"), ["pre", "post"], [2.0, 2.0])
    )
