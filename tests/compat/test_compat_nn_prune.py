"""``torch.nn.utils.prune`` against real PyTorch 2.13: the same scenario runs on both
libraries with the same seed and the masks, pruned weights, forward values, gradients,
parameter/buffer names and errors are compared (the random methods draw as PyTorch's
do, so their masks agree entry for entry)."""

from __future__ import annotations

import importlib
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch, npv

import compat.torch as torch
from compat.torch.nn.utils import prune


def _weights(lib, module, seed):
    """Deterministic weights (NumPy's generator) copied into ``module``'s parameters."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return module


def _state(module):
    """Names and values of parameters and buffers, and the pruned attributes."""
    out = {n: npv(p) for n, p in module.named_parameters()}
    out.update({"buffer " + n: npv(b) for n, b in module.named_buffers()})
    return out


def _assert_same_state(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _both(real_torch, scenario):
    """``scenario(lib)`` on compat and PyTorch; the two results."""
    importlib.import_module("torch.nn.utils.prune")  # (PyTorch's is not imported with nn)
    return scenario(torch), scenario(real_torch)


def _random_methods(lib):
    conv = _weights(lib, lib.nn.Conv2d(3, 6, 3), 0)
    lin = _weights(lib, lib.nn.Linear(5, 7), 1)
    lib.manual_seed(7)
    lib.nn.utils.prune.random_unstructured(lin, "weight", amount=0.3)
    lib.nn.utils.prune.random_unstructured(lin, "bias", amount=2)
    lib.nn.utils.prune.random_structured(conv, "weight", amount=0.5, dim=0)
    lib.nn.utils.prune.random_structured(conv, "weight", amount=1, dim=1)  # a container
    lib.nn.utils.prune.random_unstructured(conv, "weight", amount=0.25)
    return _state(conv), _state(lin), npv(conv.weight), npv(lin.weight)


def test_random_methods_draw_as_pytorch(real_torch):
    mine, theirs = _both(real_torch, _random_methods)
    for a, b in zip(mine[:2], theirs[:2], strict=True):
        _assert_same_state(a, b)
    np.testing.assert_array_equal(mine[2], theirs[2])
    np.testing.assert_array_equal(mine[3], theirs[3])
    # the structural facts, whatever the draws: whole channels gone, counts exact
    mask = mine[0]["buffer weight_mask"]
    assert mask.shape == (6, 3, 3, 3)
    assert sorted((mask == 0).all(axis=(1, 2, 3)).tolist()).count(True) >= 3


@pytest.mark.parametrize("n", [1, 2, 3, 0.5, math.inf, -math.inf, "fro", "nuc"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_as_pytorch(real_torch, n, dim):
    def run(lib):
        m = _weights(lib, lib.nn.Conv1d(4, 5, 3), 3)  # weight (5, 4, 3)
        lib.nn.utils.prune.ln_structured(m, "weight", amount=0.4, n=n, dim=dim)
        return _state(m), npv(m.weight)

    (a, wa), (b, wb) = _both(real_torch, run)
    _assert_same_state(a, b)
    np.testing.assert_array_equal(wa, wb)


def _iterative(lib):
    m = _weights(lib, lib.nn.Conv2d(2, 4, 3), 5)
    scores = lib.tensor(np.random.default_rng(9).standard_normal((4, 2, 3, 3)), dtype=lib.float32)
    P = lib.nn.utils.prune
    P.l1_unstructured(m, "weight", amount=0.2)
    P.ln_structured(m, "weight", amount=1, n=2, dim=0, importance_scores=scores)
    P.l1_unstructured(m, "weight", amount=5, importance_scores=scores)
    P.ln_structured(m, "weight", amount=0.5, n=1, dim=-1)
    hook = next(iter(m._forward_pre_hooks.values()))
    kinds = [type(h).__name__ for h in hook]
    return _state(m), npv(m.weight), kinds, hook._tensor_name


def test_iterative_pruning_combines_as_pytorch(real_torch):
    (a, wa, ka, na), (b, wb, kb, nb) = _both(real_torch, _iterative)
    _assert_same_state(a, b)
    np.testing.assert_array_equal(wa, wb)
    assert ka == kb == ["L1Unstructured", "LnStructured", "L1Unstructured", "LnStructured"]
    assert na == nb == "weight"


def _global(lib):
    P = lib.nn.utils.prune
    a = _weights(lib, lib.nn.Linear(4, 3), 11)
    b = _weights(lib, lib.nn.Linear(3, 2), 12)
    P.l1_unstructured(a, "weight", amount=2)  # pruned before: its mask is respected
    scores = {(b, "weight"): lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32)}
    lib.manual_seed(3)
    P.global_unstructured(
        [(a, "weight"), (b, "weight"), (a, "bias")],
        pruning_method=P.L1Unstructured,
        importance_scores=scores,
        amount=0.4,
    )
    P.global_unstructured([(b, "bias")], pruning_method=P.RandomUnstructured, amount=1)
    return _state(a), _state(b)


def test_global_unstructured_as_pytorch(real_torch):
    mine, theirs = _both(real_torch, _global)
    for x, y in zip(mine, theirs, strict=True):
        _assert_same_state(x, y)


def _train(lib):
    P = lib.nn.utils.prune
    m = _weights(lib, lib.nn.Linear(4, 3), 21)
    x = lib.tensor(np.random.default_rng(22).standard_normal((2, 4)), dtype=lib.float32)
    pid = id(m.weight)
    P.l1_unstructured(m, "weight", amount=0.5)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (m(x) ** 2).sum().backward()
        opt.step()
    out = [npv(m(x)), npv(m.weight_orig.grad), npv(m.weight_mask), P.is_pruned(m)]
    P.remove(m, "weight")
    out += [npv(m.weight), id(m.weight) == pid, P.is_pruned(m), sorted(_state(m))]
    return out


def test_forward_backward_and_remove_as_pytorch(real_torch):
    mine, theirs = _both(real_torch, _train)
    for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=str(i))
        else:
            assert a == b, i
    assert mine[-1] == ["bias", "weight"]
    grad, mask = mine[1], mine[2]
    assert (grad[mask == 0] == 0).all() and (grad[mask == 1] != 0).all()


def test_prune_method_prune_and_container_compute_mask(real_torch):
    def run(lib):
        P = lib.nn.utils.prune
        t = lib.tensor([[1.0, -2.0, 3.0, 4.0], [5.0, -6.0, 0.5, 8.0]])
        prior = lib.tensor([[1, 1, 1, 0], [1, 1, 0, 1]])
        pruned = P.L1Unstructured(amount=2).prune(t, prior)
        c = P.PruningContainer()
        c._tensor_name = "w"
        for meth in (P.L1Unstructured(amount=2), P.LnStructured(amount=1, n=2, dim=1)):
            meth._tensor_name = "w"
            c.add_pruning_method(meth)
        custom = P.CustomFromMask(lib.tensor([[0, 1, 1, 0], [1, 0, 1, 1]]))
        return [
            npv(pruned),
            npv(c.compute_mask(t, prior)),
            str(c.compute_mask(t, prior).dtype),
            npv(custom.compute_mask(t, prior)),
            str(custom.compute_mask(t, prior).dtype),
            len(c),
            npv(prior),  # not written into
        ]

    mine, theirs = _both(real_torch, run)
    for a, b in zip(mine, theirs, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


def _error(fn):
    try:
        fn()
    except Exception as e:
        text = str(e).replace("compat.torch.", "torch.")
        return type(e).__name__, text.split(" of module ")[0].split(" to PruningContainer")[0]
    return None


def _named(method, name):
    method._tensor_name = name
    return method


ERRORS = {
    "amount type": lambda P, lib, m: P.L1Unstructured(amount="a"),
    "amount float": lambda P, lib, m: P.RandomUnstructured(amount=1.5),
    "amount negative": lambda P, lib, m: P.l1_unstructured(m, "weight", amount=-1),
    "amount too large": lambda P, lib, m: P.l1_unstructured(m, "weight", amount=13),
    "structured 1-D": lambda P, lib, m: P.ln_structured(m, "bias", amount=1, n=2, dim=0),
    "structured dim": lambda P, lib, m: P.random_structured(m, "weight", amount=1, dim=2),
    "scores shape": lambda P, lib, m: P.l1_unstructured(
        m, "weight", amount=1, importance_scores=lib.ones(3)
    ),
    "remove unpruned": lambda P, lib, m: P.remove(m, "weight"),
    "container type": lambda P, lib, m: _named(P.PruningContainer(), "w").add_pruning_method(3),
    "custom shape": lambda P, lib, m: P.custom_from_mask(m, "weight", mask=lib.ones(2, 2)),
    "global structured": lambda P, lib, m: P.global_unstructured(
        [(m, "weight")], pruning_method=P.RandomStructured, amount=1
    ),
    "global scores": lambda P, lib, m: P.global_unstructured(
        [(m, "weight")], pruning_method=P.L1Unstructured, importance_scores=[], amount=1
    ),
    "global iterable": lambda P, lib, m: P.global_unstructured(
        3, pruning_method=P.L1Unstructured, amount=1
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_pytorch(real_torch, case):
    def run(lib):
        m = lib.nn.Linear(4, 3)
        if case == "container type":
            return _error(lambda: ERRORS[case](lib.nn.utils.prune, lib, m))
        err = _error(lambda: ERRORS[case](lib.nn.utils.prune, lib, m))
        return err, sorted(n for n, _ in m.named_parameters()), len(m._forward_pre_hooks)

    mine, theirs = _both(real_torch, run)
    assert mine == theirs
    assert (mine[0] if case != "container type" else mine) is not None


def test_container_name_mismatch_error(real_torch):
    def run(lib):
        P = lib.nn.utils.prune
        c = P.PruningContainer()
        c._tensor_name = "a"
        q = P.L1Unstructured(amount=1)
        q._tensor_name = "b"
        return _error(lambda: c.add_pruning_method(q))

    mine, theirs = _both(real_torch, run)
    assert (
        mine
        == theirs
        == ("ValueError", "Can only add pruning methods acting on the parameter named 'a'")
    )


def test_global_unstructured_takes_a_one_shot_iterable():
    """A generator of ``(module, name)`` pairs prunes as the list does (PyTorch's reads
    it twice and fails on the second, empty, pass)."""
    pairs = [(_weights(torch, torch.nn.Linear(3, 3), s), "weight") for s in (1, 2)]
    prune.global_unstructured((p for p in pairs), pruning_method=prune.L1Unstructured, amount=5)
    masks = np.concatenate([npv(m.weight_mask).ravel() for m, _ in pairs])
    scores = np.concatenate([np.abs(npv(m.weight_orig)).ravel() for m, _ in pairs])
    np.testing.assert_array_equal(masks, (scores > np.sort(scores)[4]).astype(np.float32))


def test_failed_mask_leaves_the_module_as_it_was():
    """A mask that cannot be computed changes nothing: a first pruning's parameter stays
    where it was (as PyTorch rolls it back), and a later pruning leaves the hooked
    container as it was (PyTorch drops the hook and keeps the failed method in it)."""
    m = torch.nn.Linear(4, 3)
    with pytest.raises(ValueError):
        prune.l1_unstructured(m, "weight", amount=20)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    assert not prune.is_pruned(m) and "weight_mask" not in dict(m.named_buffers())
    prune.l1_unstructured(m, "weight", amount=2)
    prune.l1_unstructured(m, "weight", amount=1)
    hook = next(iter(m._forward_pre_hooks.values()))
    mask = m.weight_mask.clone()
    with pytest.raises(ValueError):
        prune.l1_unstructured(m, "weight", amount=20)
    assert list(m._forward_pre_hooks.values()) == [hook] and len(hook) == 2
    np.testing.assert_array_equal(npv(m.weight_mask), npv(mask))


def test_pickle_state_dict_and_lstm(real_torch):
    def run(lib):
        P = lib.nn.utils.prune
        m = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU())
        P.random_unstructured(m[0], "weight", amount=0.5)
        again = pickle.loads(pickle.dumps(m))
        lstm = lib.nn.LSTM(3, 3)
        P.l1_unstructured(lstm, "weight_ih_l0", 0.5)
        n_params = sum(isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights)
        P.remove(lstm, "weight_ih_l0")
        n_after = sum(isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights)
        return (
            sorted(m.state_dict()),
            npv(again[0].weight),
            npv(m[0].weight),
            type(next(iter(again[0]._forward_pre_hooks.values()))).__name__,
            n_params,
            n_after,
        )

    mine, theirs = _both(real_torch, run)
    assert mine[0] == theirs[0] == ["0.bias", "0.weight_mask", "0.weight_orig"]
    np.testing.assert_array_equal(mine[1], mine[2])
    assert mine[3:] == theirs[3:] == ("RandomUnstructured", 3, 4)


def test_private_helpers_as_pytorch(real_torch):
    cases = [(0, 15), (10, 15), (1, 15), (1.0, 15), (0.4, 17), (0.5, 3), (0.5, 5), (True, 4)]
    for amount, size in cases:
        assert prune._compute_nparams_toprune(amount, size) == (
            real_torch.nn.utils.prune._compute_nparams_toprune(amount, size)
        )


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    amount=st.one_of(st.floats(0.0, 1.0), st.integers(0, 6)),
    seed=st.integers(0, 2**16),
)
def test_l1_and_random_unstructured_match_pytorch(shape, amount, seed):
    real_torch = import_real_torch()
    size = int(np.prod(shape))
    if isinstance(amount, int) and amount > size:
        amount = size
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    def run(lib):
        lib.manual_seed(seed)
        t = lib.tensor(data)
        ones = lib.ones_like(t)
        return (
            npv(lib.nn.utils.prune.L1Unstructured(amount).compute_mask(t, ones)),
            npv(lib.nn.utils.prune.RandomUnstructured(amount).compute_mask(t, ones)),
        )

    mine, theirs = _both(real_torch, run)
    k = prune._compute_nparams_toprune(amount, size)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
        assert int((a == 0).sum()) == k
