"""compat's ``nn.utils`` (gradient clipping, parameter vectors, ``skip_init``) and ``nn.utils.rnn``
(padding and packing) against real PyTorch: the same scenario runs on both libraries
(the ``lib`` / ``real_torch`` fixtures, ``conftest.py``) and values, dtypes, index
tensors, gradients and error types/messages are compared."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

TOL = dict(rtol=1e-12, atol=1e-12)


def _both(real_torch, scenario):
    """``scenario(lib)`` on compat and on PyTorch."""
    return scenario(torch), scenario(real_torch)


def _assert_same(a, b, tol=TOL):
    if isinstance(a, (list, tuple)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y, tol)
        return
    if a is None or b is None:
        assert a is None and b is None
        return
    if isinstance(a, (int, float)):
        np.testing.assert_allclose(a, b, **tol)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(npv(a), npv(b), **tol)


GRADS = [
    np.array([[3.0, -4.0], [1.0, 0.5]]),
    np.array([0.25, -2.0, 6.0]),
    None,  # a parameter without a gradient is skipped
]


def _params(lib, grads=GRADS):
    ps = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(2 if g is None else g.shape, dtype=lib.float64))
        if g is not None:
            p.grad = lib.tensor(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(real_torch, norm_type, max_norm):
    def scenario(lib):
        ps = _params(lib)
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type, foreach=True)
        return total, [p.grad for p in ps]

    _assert_same(*_both(real_torch, scenario))


def test_clip_grad_norm_single_tensor_generator_and_empty(real_torch):
    def scenario(lib):
        p = _params(lib)[1]
        total = lib.nn.utils.clip_grad_norm_(p, 1.0)
        gen = _params(lib)
        total2 = lib.nn.utils.clip_grad_norm_((q for q in gen), 2.0, 2)
        empty = lib.nn.utils.clip_grad_norm_([lib.nn.Parameter(lib.ones(2))], 1.0)
        return total, p.grad, total2, [q.grad for q in gen], empty

    _assert_same(*_both(real_torch, scenario))


def test_clip_grad_norm_nonfinite(real_torch):
    bad = [np.array([1.0, np.nan]), np.array([2.0])]

    def raises(lib):
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_(_params(lib, bad), 1.0, error_if_nonfinite=True)
        return str(info.value)

    ours, theirs = _both(real_torch, raises)
    assert ours == theirs

    def scales(lib):
        ps = _params(lib, bad)
        return lib.nn.utils.clip_grad_norm_(ps, 1.0), [p.grad for p in ps]

    ours, theirs = _both(real_torch, scales)
    assert np.isnan(npv(ours[0])) and np.isnan(npv(theirs[0]))
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(np.isnan(npv(a)), np.isnan(npv(b)))


def test_clip_grad_value(real_torch):
    def scenario(lib):
        ps = _params(lib)
        assert lib.nn.utils.clip_grad_value_(ps, 1.5, foreach=None) is None
        return [p.grad for p in ps]

    _assert_same(*_both(real_torch, scenario))


def test_parameters_vector_round_trip(real_torch):
    def scenario(lib):
        model = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            model.weight.copy_(lib.arange(6, dtype=lib.float64).reshape(2, 3))
            model.bias.copy_(lib.tensor([-1.0, -2.0], dtype=lib.float64))
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(8, dtype=lib.float64)).sum().backward()
        grads = [p.grad for p in model.parameters()]
        lib.nn.utils.vector_to_parameters(
            lib.arange(8, dtype=lib.float64) * 0.5, model.parameters()
        )
        return vec, grads, [p.detach().clone() for p in model.parameters()]

    _assert_same(*_both(real_torch, scenario))

    def bad(lib):
        with pytest.raises(TypeError) as info:
            lib.nn.utils.vector_to_parameters(np.zeros(3), [])
        return str(info.value)

    ours, theirs = _both(real_torch, bad)
    assert ours == theirs


SEQS = [np.arange(6.0).reshape(3, 2), np.arange(2.0).reshape(1, 2) + 10, np.ones((4, 2))]


@pytest.mark.parametrize(
    "kwargs",
    [{}, dict(batch_first=True, padding_value=-1.0), dict(padding_side="left")],
)
def test_pad_sequence(real_torch, kwargs):
    def scenario(lib):
        seqs = [lib.tensor(s, requires_grad=True) for s in SEQS]
        out = lib.nn.utils.rnn.pad_sequence(seqs, **kwargs)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        return out, [s.grad for s in seqs]

    _assert_same(*_both(real_torch, scenario))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip(real_torch, batch_first, enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [3, 1, 4, 3]
    x = np.random.default_rng(0).standard_normal((4, 4, 2))

    def scenario(lib):
        xt = lib.tensor(x, requires_grad=True)
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_padded_sequence(xt, lengths, batch_first, enforce_sorted)
        padded, lens = rnn.pad_packed_sequence(
            packed, batch_first=batch_first, padding_value=0.5, total_length=5
        )
        (
            padded * lib.arange(padded.numel(), dtype=lib.float64).reshape(padded.shape)
        ).sum().backward()
        seqs = rnn.unpack_sequence(packed)
        return (
            packed.data,
            packed.batch_sizes,
            packed.sorted_indices,
            packed.unsorted_indices,
            padded,
            lens,
            xt.grad,
            seqs,
        )

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)
    assert str(ours[1].dtype) == "torch.int64"


def test_pack_sequence_and_unpad(real_torch):
    def scenario(lib):
        seqs = [lib.tensor(s) for s in SEQS]
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        padded = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
        unpadded = lib.nn.utils.rnn.unpad_sequence(padded, lib.tensor([3, 1, 4]), batch_first=True)
        return packed.data, packed.batch_sizes, packed.sorted_indices, unpadded

    _assert_same(*_both(real_torch, scenario))


ERRORS = {
    "unsorted": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3), [1, 3, 2]),
    "zero-length": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3), [3, 1, 0]),
    "batch-mismatch": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3), [3, 1]),
    "total-length": lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3)]), total_length=2
    ),
    "one-dim": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3), [3]),
    "padding-side": lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="mid"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(real_torch, case):
    def scenario(lib):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        return type(info.value).__name__, str(info.value)

    ours, theirs = _both(real_torch, scenario)
    assert ours == theirs


@pytest.mark.parametrize(
    ("layer", "dim"), [("linear", 0), ("linear", None), ("conv", 1), ("conv", -1)]
)
def test_weight_norm_matches_torch(real_torch, layer, dim):
    """``parametrizations.weight_norm``: state_dict keys and shapes, forward, gradients of
    ``g`` and ``v``, assignment through ``right_inverse``, removal."""
    w = np.random.default_rng(2).standard_normal((3, 2, 2) if layer == "conv" else (3, 4))
    x = np.random.default_rng(3).standard_normal((2, 2, 5) if layer == "conv" else (2, 4))

    def scenario(lib):
        m = lib.nn.Conv1d(2, 3, 2) if layer == "conv" else lib.nn.Linear(4, 3)
        m = m.double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.zero_()
        m = lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        keys = list(m.state_dict())
        out = m(lib.tensor(x))
        (out * out).sum().backward()
        plist = m.parametrizations.weight
        grads = [plist.original0.grad, plist.original1.grad]
        m.weight = lib.tensor(w * 2.0)
        after = [plist.original0.detach().clone(), plist.original1.detach().clone()]
        name = type(m).__name__
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        return keys, name, type(m).__name__, out, grads, after, m.weight

    ours, theirs = _both(real_torch, scenario)
    assert ours[:3] == theirs[:3]
    _assert_same(ours[3:], theirs[3:])


def test_register_parametrization_custom(real_torch):
    """A user parametrization (symmetric matrix) chained with a second one; a tensor
    ``right_inverse`` keeps ``original``; ``leave_parametrized=False`` restores it."""
    w = np.random.default_rng(4).standard_normal((3, 3))

    def scenario(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(0, 1)

        class Scale(lib.nn.Module):
            def forward(self, x):
                return x * 3.0

            def right_inverse(self, x):
                return x / 3.0

        m = lib.nn.Linear(3, 3, bias=False).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", Symmetric())
        P.register_parametrization(m, "weight", Scale())
        flags = (P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias"))
        out = m(lib.eye(3, dtype=lib.float64))
        out.sum().backward()
        grad = m.parametrizations.weight.original.grad
        with pytest.raises(ValueError) as info:
            P.register_parametrization(m, "missing", Scale())
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        return flags, list(m.state_dict()), info.type.__name__, out, grad, m.weight

    ours, theirs = _both(real_torch, scenario)
    assert ours[:3] == theirs[:3]
    _assert_same(ours[3:], theirs[3:])


@pytest.mark.parametrize("layer", ["linear", "conv"])
def test_spectral_norm_matches_torch(real_torch, layer):
    """``parametrizations.spectral_norm`` from the same ``_u``/``_v`` (copied from
    compat's state_dict): two training-mode forwards (one power iteration each, buffers
    updated in place), gradients, then eval mode (no iteration)."""
    w = np.random.default_rng(5).standard_normal((3, 2, 2) if layer == "conv" else (3, 4))
    x = np.random.default_rng(6).standard_normal((2, 2, 5) if layer == "conv" else (2, 4))
    torch.manual_seed(0)
    state: dict = {}

    def scenario(lib):
        m = lib.nn.Conv1d(2, 3, 2) if layer == "conv" else lib.nn.Linear(4, 3)
        m = m.double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        m = lib.nn.utils.parametrizations.spectral_norm(m)
        if not state:
            state.update({k: npv(v).copy() for k, v in m.state_dict().items()})
        m.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        outs = [m(lib.tensor(x)) for _ in range(2)]
        (outs[0].sum() + (outs[1] ** 2).sum()).backward()
        grad = m.parametrizations.weight.original.grad
        m.eval()
        outs.append(m(lib.tensor(x)))
        sn = m.parametrizations.weight[0]
        return list(m.state_dict()), outs, grad, sn._u, sn._v

    ours, theirs = _both(real_torch, scenario)
    assert ours[0] == theirs[0]
    _assert_same(ours[1:], theirs[1:], dict(rtol=1e-10, atol=1e-12))


def test_skip_init(real_torch) -> None:
    torch.manual_seed(1)
    expected_next = torch.rand(3)
    torch.manual_seed(1)
    m = torch.nn.utils.skip_init(torch.nn.Linear, 5, 2, device="cpu")
    # no draw consumed (PyTorch builds on the meta device), shapes and types as usual
    np.testing.assert_array_equal(torch.rand(3).numpy(), expected_next.numpy())
    assert type(m) is torch.nn.Linear and isinstance(m.weight, torch.nn.Parameter)
    assert tuple(m.weight.shape) == (2, 5) and m.weight.requires_grad
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int, 1)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)
