"""compat's ``nn.RNN``/``LSTM``/``GRU``, their cells and packed sequences against PyTorch.

Each test builds the module in compat, copies its ``state_dict`` into the same module of
real PyTorch (the ``real_torch`` fixture, ``conftest.py``), runs the same float64
inputs through both and compares outputs, final states, and the gradients of a
random projection of all of them with respect to the input, the initial states and
every parameter. Errors are compared by type and message on both libraries.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch
import compat.torch.nn as nn

TOL = dict(rtol=1e-9, atol=1e-10)

# real PyTorch's CPU kernels warn once that LSTM projections bypass oneDNN
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")


def _twin(real_torch, cls: str, *args, **kwargs):
    """The compat module (float64) and a real one holding the same weights."""
    torch.manual_seed(0)
    ours = getattr(nn, cls)(*args, **kwargs).double()
    theirs = getattr(real_torch.nn, cls)(*args, **kwargs).double()
    sd = {k: real_torch.from_numpy(npv(v).copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(sd, strict=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    return ours, theirs


def _flat(out) -> list:
    """The tensors of an RNN result (output or PackedSequence data, states) in order."""
    if isinstance(out, tuple) and hasattr(out, "batch_sizes"):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(lib, module, arrays, call):
    """``call(lib, module, *tensors)``; backward of ``sum(out_i * ct_i)`` over all outputs."""
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = call(lib, module, *ts)
    flat = _flat(out)
    rng = np.random.default_rng(1)
    loss = sum((t * lib.tensor(rng.standard_normal(tuple(t.shape)))).sum() for t in flat)
    loss.backward()
    grads = [t.grad for t in ts] + [p.grad for _, p in module.named_parameters()]
    return out, flat, grads


def _compare(real_torch, pair, arrays, call):
    ours, theirs = pair
    out, flat, grads = _run(torch, ours, arrays, call)
    tout, tflat, tgrads = _run(real_torch, theirs, arrays, call)
    assert len(flat) == len(tflat)
    for a, b in zip(flat, tflat):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(npv(a), npv(b), **TOL)
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in theirs.named_parameters()]
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        assert (g is None) == (tg is None), i
        if g is not None:
            np.testing.assert_allclose(npv(g), npv(tg), **TOL, err_msg=str(i))
    return out, tout


def _rand(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


def _plain(lib, m, x):
    return m(x)


def _with_h(lib, m, x, h):
    return m(x, h)


def _with_hc(lib, m, x, h, c):
    return m(x, (h, c))


# (module, args, kwargs, input arrays, call)
CASES = {
    "lstm-2l-bidir-batch_first": (
        "LSTM",
        (3, 4),
        dict(num_layers=2, bidirectional=True, batch_first=True),
        [_rand(2, 5, 3)],
        _plain,
    ),
    "gru-h0": ("GRU", (3, 5), {}, [_rand(4, 2, 3), _rand(1, 2, 5)], _with_h),
    "rnn-relu-nobias-h0": (
        "RNN",
        (3, 4),
        dict(nonlinearity="relu", bias=False),
        [_rand(6, 3, 3), _rand(1, 3, 4)],
        _with_h,
    ),
    "rnn-tanh-bidir-unbatched": (
        "RNN",
        (3, 4),
        dict(bidirectional=True),
        [_rand(5, 3), _rand(2, 4)],
        _with_h,
    ),
    "lstm-proj-2l-bidir-h0c0": (
        "LSTM",
        (3, 5),
        dict(num_layers=2, bidirectional=True, proj_size=2),
        [_rand(4, 2, 3), _rand(4, 2, 2), _rand(4, 2, 5)],
        _with_hc,
    ),
    "lstm-unbatched-batch_first-h0c0": (
        "LSTM",
        (2, 3),
        dict(batch_first=True),
        [_rand(4, 2), _rand(1, 3), _rand(1, 3, seed=1)],
        _with_hc,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_layers_match_torch(real_torch, case):
    cls, args, kwargs, arrays, call = CASES[case]
    _compare(real_torch, _twin(real_torch, cls, *args, **kwargs), arrays, call)


def test_dropout_between_layers(real_torch):
    """``dropout=1`` zeroes the input of every layer but the first in training mode (the
    same in both libraries whatever the random stream); eval mode ignores it."""
    ours, theirs = _twin(real_torch, "RNN", 2, 3, num_layers=2, dropout=1.0)
    _compare(real_torch, (ours, theirs), [_rand(4, 2, 2)], _plain)
    ours.eval()
    theirs.eval()
    _compare(real_torch, (ours, theirs), [_rand(4, 2, 2)], _plain)


def test_one_op_per_forward():
    """A whole stack over a whole sequence is one recorded node, whatever its length:
    its inputs are the parameters' accumulators (no per-step or per-layer nodes)."""
    m = nn.GRU(2, 3, bidirectional=True).double()
    for steps in (2, 40):
        out, h = m(torch.randn(steps, 1, 2, dtype=torch.float64))
        assert out.grad_fn.name() == h.grad_fn.name() == "GruBackward0"
        inputs = [f for f, _ in out.grad_fn.next_functions if f is not None]
        assert len(inputs) == 8 and all(f.name().endswith("AccumulateGrad") for f in inputs)


def test_double_backward_matches_torch(real_torch):
    """``create_graph=True`` through the scan: the gradient of a gradient norm."""
    pair = _twin(real_torch, "GRU", 3, 5)

    def call(lib, m, x, h):
        out, hn = m(x, h)
        (gx,) = lib.autograd.grad((out**2).sum() + hn.sum(), x, create_graph=True)
        return gx

    _compare(real_torch, pair, [_rand(4, 2, 3), _rand(1, 2, 5)], call)


def _packed_call(enforce_sorted, lengths):
    def call(lib, m, x, *state):
        packed = lib.nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=m.batch_first, enforce_sorted=enforce_sorted
        )
        out, hidden = m(packed, (state[0], state[1]) if len(state) == 2 else (state or [None])[0])
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=m.batch_first)
        assert lens.tolist() == list(lengths)
        return out, padded, hidden

    return call


DROPOUT = {
    "rnn-tanh-3l": ("RNN", (3, 4), dict(num_layers=3), [_rand(5, 2, 3)], _plain),
    "lstm-bidir-batch_first": (
        "LSTM",
        (3, 4),
        dict(num_layers=2, bidirectional=True, batch_first=True),
        [_rand(2, 5, 3)],
        _plain,
    ),
    "gru-packed": (
        "GRU",
        (2, 3),
        dict(num_layers=2),
        [_rand(4, 3, 2)],
        _packed_call(False, [2, 4, 3]),
    ),
}


@pytest.mark.parametrize("p", [0.2, 0.5])
@pytest.mark.parametrize("case", list(DROPOUT))
def test_seeded_dropout_between_layers_matches_torch(real_torch, case, p):
    """With the same seed, the stack drops the elements PyTorch drops: one
    ``bernoulli_(1 - p)`` over each layer's output (packed output when packed), in
    layer order, after nothing else drew."""
    cls, args, kwargs, arrays, call = DROPOUT[case]
    ours, theirs = _twin(real_torch, cls, *args, dropout=p, **kwargs)
    for seed in (0, 7):
        torch.manual_seed(seed)
        real_torch.manual_seed(seed)
        _compare(real_torch, (ours, theirs), arrays, call)
    # the stream afterwards: the same number of draws were taken
    assert torch.rand(3).tolist() == real_torch.rand(3).tolist()


PACKED = {
    "lstm-proj-bidir-unsorted-h0c0": (
        "LSTM",
        (2, 4),
        dict(bidirectional=True, proj_size=3),
        False,
        [2, 4, 1, 4],
        [_rand(4, 4, 2), _rand(2, 4, 3), _rand(2, 4, 4, seed=1)],
    ),
    "gru-2l-sorted-batch_first": (
        "GRU",
        (2, 3),
        dict(batch_first=True, num_layers=2),
        True,
        [5, 3, 3, 1],
        [_rand(4, 5, 2)],
    ),
    "rnn-unsorted-h0": ("RNN", (2, 3), {}, False, [1, 3, 2], [_rand(3, 3, 2), _rand(1, 3, 3)]),
}


@pytest.mark.parametrize("case", list(PACKED))
def test_packed_sequences_match_torch(real_torch, case):
    cls, args, kwargs, enforce_sorted, lengths, arrays = PACKED[case]
    pair = _twin(real_torch, cls, *args, **kwargs)
    out, tout = _compare(real_torch, pair, arrays, _packed_call(enforce_sorted, lengths))
    packed, tpacked = out[0], tout[0]
    assert type(packed).__name__ == "PackedSequence"
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    for a, b in (
        (packed.sorted_indices, tpacked.sorted_indices),
        (packed.unsorted_indices, tpacked.unsorted_indices),
    ):
        assert (a is None and b is None) or a.tolist() == b.tolist()


CELLS = {
    "rnncell-tanh": ("RNNCell", (3, 4), {}, 2),
    "rnncell-relu-nobias": ("RNNCell", (3, 4), dict(nonlinearity="relu", bias=False), 2),
    "lstmcell": ("LSTMCell", (3, 4), {}, 2),
    "grucell": ("GRUCell", (3, 4), {}, 2),
    "lstmcell-unbatched": ("LSTMCell", (3, 4), {}, None),
    "grucell-unbatched": ("GRUCell", (3, 4), {}, None),
}


@pytest.mark.parametrize("case", list(CELLS))
@pytest.mark.parametrize("with_state", [False, True])
def test_cells_match_torch(real_torch, case, with_state):
    """Three steps of a cell (the state fed back), with and without an initial state."""
    cls, args, kwargs, batch = CELLS[case]
    lead = (batch,) if batch else ()
    arrays = [_rand(3, *lead, 3)]
    lstm = cls == "LSTMCell"
    if with_state:
        arrays += [_rand(*lead, 4)] + ([_rand(*lead, 4, seed=2)] if lstm else [])

    def call(lib, m, x, *state):
        hx = (tuple(state) if lstm else state[0]) if state else None
        outs = []
        for t in range(3):
            hx = m(x[t], hx)
            outs.append(hx)
        return outs

    _compare(real_torch, _twin(real_torch, cls, *args, **kwargs), arrays, call)


def test_state_dict_from_torch_and_attributes(real_torch):
    """A real LSTM's state_dict loads into compat's; both compute the same; metadata."""
    real_torch.manual_seed(3)
    theirs = real_torch.nn.LSTM(2, 4, num_layers=2, proj_size=3, bidirectional=True)
    ours = nn.LSTM(2, 4, num_layers=2, proj_size=3, bidirectional=True)
    ours.load_state_dict(
        {k: torch.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn and tuple(p.shape) == tuple(tp.shape) and str(p.dtype) == str(tp.dtype)
    x = _rand(3, 2, 2).astype(np.float32)
    out, (h, c) = ours(torch.tensor(x))
    tout, (th, tc) = theirs(real_torch.tensor(x))
    for a, b in ((out, tout), (h, th), (c, tc)):
        assert str(a.dtype) == str(b.dtype) == "torch.float32"
        np.testing.assert_allclose(npv(a), npv(b), rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [len(w) for w in ours.all_weights] == [len(w) for w in theirs.all_weights]
    ours.flatten_parameters()
    assert repr(nn.RNN(2, 3, 1, "relu", False)) == repr(real_torch.nn.RNN(2, 3, 1, "relu", False))
    assert repr(nn.GRUCell(2, 3, bias=False)) == repr(real_torch.nn.GRUCell(2, 3, bias=False))


def test_default_init_bounds():
    """Every parameter is drawn uniformly on +-1/sqrt(hidden_size)."""
    torch.manual_seed(0)
    for m in (nn.LSTM(5, 16, proj_size=4), nn.GRUCell(5, 16)):
        for p in m.parameters():
            v = npv(p)
            assert np.abs(v).max() <= 0.25 and np.abs(v).max() > 0.2 and v.std() > 0.1


def _error(lib, scenario):
    try:
        scenario(lib)
    except Exception as e:
        return type(e), str(e)
    return None


ERRORS = {
    "dropout-range": lambda t: t.nn.LSTM(2, 3, dropout=1.5),
    "hidden-zero": lambda t: t.nn.GRU(2, 0),
    "hidden-type": lambda t: t.nn.GRU(2, 3.0),
    "proj-too-big": lambda t: t.nn.LSTM(2, 3, proj_size=3),
    "proj-gru": lambda t: t.nn.GRU(2, 3, proj_size=1),
    "nonlinearity": lambda t: t.nn.RNN(2, 3, nonlinearity="gelu"),
    "input-4d": lambda t: t.nn.LSTM(2, 3)(t.zeros(1, 2, 3, 2)),
    "input-4d-gru": lambda t: t.nn.GRU(2, 3)(t.zeros(1, 2, 3, 2)),
    "input-size": lambda t: t.nn.GRU(2, 3)(t.zeros(4, 1, 5)),
    "input-dtype": lambda t: t.nn.RNN(2, 3)(t.zeros(4, 1, 2, dtype=t.float64)),
    "hidden-shape": lambda t: t.nn.RNN(2, 3)(t.zeros(4, 2, 2), t.zeros(1, 1, 3)),
    "hidden-dims": lambda t: t.nn.RNN(2, 3)(t.zeros(4, 2, 2), t.zeros(2, 3)),
    "lstm-cell-state-shape": lambda t: t.nn.LSTM(2, 3)(
        t.zeros(4, 2, 2), (t.zeros(1, 2, 3), t.zeros(1, 2, 4))
    ),
    "lstm-unbatched-dims": lambda t: t.nn.LSTM(2, 3)(t.zeros(4, 2), (t.zeros(1, 1, 3),) * 2),
    "cell-input-size": lambda t: t.nn.GRUCell(2, 3)(t.zeros(4, 5)),
    "cell-batch": lambda t: t.nn.LSTMCell(2, 3)(t.zeros(4, 2), (t.zeros(3, 3), t.zeros(4, 3))),
    "cell-hidden-size": lambda t: t.nn.RNNCell(2, 3)(t.zeros(4, 2), t.zeros(4, 2)),
    "cell-3d": lambda t: t.nn.RNNCell(2, 3)(t.zeros(1, 4, 2)),
    "cell-hx-3d": lambda t: t.nn.LSTMCell(2, 3)(t.zeros(4, 2), (t.zeros(4, 3), t.zeros(1, 4, 3))),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(real_torch, case):
    ours = _error(torch, ERRORS[case])
    theirs = _error(real_torch, ERRORS[case])
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0].__name__ == theirs[0].__name__
    assert ours[1] == theirs[1]


def test_single_layer_dropout_warns(real_torch):
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(2, 3, dropout=0.5)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        real_torch.nn.GRU(2, 3, dropout=0.5)


def _train(lib, state, xs, ys, opt_name):
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(3, 5, batch_first=True)
    head = lib.nn.Linear(5, 2)
    model = lib.nn.ModuleDict({"lstm": lstm, "head": head}).double()
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    if opt_name == "adam":
        opt = lib.optim.Adam(model.parameters(), lr=0.05)
    else:
        opt = lib.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        out, _ = lstm(lib.tensor(xs))
        loss = lib.nn.functional.mse_loss(head(out[:, -1]), lib.tensor(ys))
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("opt_name", ["adam"])
def test_tiny_lstm_training_matches_torch(real_torch, opt_name):
    """A few optimiser steps of an LSTM regressor (with gradient clipping): same losses."""
    torch.manual_seed(0)
    init = nn.ModuleDict({"lstm": nn.LSTM(3, 5, batch_first=True), "head": nn.Linear(5, 2)})
    state = {k: npv(v).astype(np.float64) for k, v in init.state_dict().items()}
    xs, ys = _rand(4, 6, 3), _rand(4, 2)
    ours = _train(torch, state, xs, ys, opt_name)
    theirs = _train(real_torch, state, xs, ys, opt_name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    assert ours[-1] < ours[0]
