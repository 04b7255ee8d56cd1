"""The training steps of :mod:`benchmarks.models`, hand-written with funcgrad.

Each model's forward pass is a function of a parameter dict (the compat model's
``named_parameters`` names, so a tied weight appears once) written with
``funcgrad.numpy`` / ``funcgrad.nn`` / ``funcgrad.lax``; the loss is the mean
cross-entropy of :func:`benchmarks.models.train_step`, and the optimizer is the
``funcgrad.optim`` equivalent of the compat optimizer that
:func:`benchmarks.models.build` made (its hyperparameters are read from it).
Gradient and update run as one ``funcgrad.jit`` with the parameters and the
optimizer state donated. :func:`from_compat` copies the compat model's
parameters, so both compute the same step (``tests/test_benchmark_models.py``).

    model, opt, data = models.build(compat.torch, "mlp")
    ref = from_compat("mlp", model, opt)
    params, state, loss = ref.step(ref.params, ref.state, *ref.batch(data(rng)))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax, nn, optim

__all__ = ["FgStep", "adadelta", "forward", "from_compat", "loss_fn"]

Params = dict[str, Any]


# --------------------------------------------------------------------------- layers


def _linear(p: Params, name: str, x: Any) -> Any:
    y = x @ p[f"{name}.weight"].T
    bias = p.get(f"{name}.bias")
    return y if bias is None else y + bias


def _layer_norm(p: Params, name: str, x: Any, eps: float = 1e-5) -> Any:
    mean = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean(fnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / fnp.sqrt(var + eps) * p[f"{name}.weight"] + p[f"{name}.bias"]


def _conv(p: Params, name: str, x: Any) -> Any:
    y = lax.conv(x, p[f"{name}.weight"], (1, 1), "VALID")
    return y + p[f"{name}.bias"][None, :, None, None]


def _max_pool2(x: Any) -> Any:
    return lax.reduce_window(x, -fnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _lstm_layer(p: Params, layer: int, xs: Any) -> Any:
    """One ``nn.LSTM`` layer (gates i, f, g, o; zero initial state) as a scan over time."""
    w_hh = p[f"rnn.weight_hh_l{layer}"].T
    width = w_hh.shape[0]
    # the input projection of every step at once; the scan carries only the recurrence
    xw = xs @ p[f"rnn.weight_ih_l{layer}"].T + p[f"rnn.bias_ih_l{layer}"]
    xw = fnp.swapaxes(xw + p[f"rnn.bias_hh_l{layer}"], 0, 1)  # (time, batch, 4 width)

    def cell(carry: tuple, xt: Any) -> tuple:
        h, c = carry
        gates = xt + h @ w_hh
        i, f, g, o = (gates[:, k * width : (k + 1) * width] for k in range(4))
        c = nn.sigmoid(f) * c + nn.sigmoid(i) * fnp.tanh(g)
        h = nn.sigmoid(o) * fnp.tanh(c)
        return (h, c), h

    zeros = fnp.zeros((xs.shape[0], width), xs.dtype)
    _, hs = fg.scan(cell, (zeros, zeros), xw)
    return fnp.swapaxes(hs, 0, 1)


# --------------------------------------------------------------------------- models


def _mlp(p: Params, x: Any, cfg: dict) -> Any:
    return _linear(p, "2", nn.relu(_linear(p, "0", x)))


def _cnn(p: Params, x: Any, cfg: dict) -> Any:
    h = _max_pool2(nn.relu(_conv(p, "2", nn.relu(_conv(p, "0", x)))))
    h = nn.relu(_linear(p, "6", h.reshape(h.shape[0], -1)))
    return _linear(p, "8", h)


def _gpt(p: Params, idx: Any, cfg: dict) -> Any:
    b, t = idx.shape
    heads = cfg["heads"]
    x = p["tok.weight"][idx] + p["pos.weight"][:t]
    width = x.shape[-1]
    for k in range(cfg["layers"]):
        blk = f"blocks.{k}."
        qkv = _linear(p, blk + "qkv", _layer_norm(p, blk + "ln1", x))
        q, k_, v = (
            qkv[..., j * width : (j + 1) * width].reshape(b, t, heads, -1) for j in range(3)
        )
        y = nn.dot_product_attention(q, k_, v, is_causal=True)  # (b, t, heads, head width)
        x = x + _linear(p, blk + "proj", y.reshape(b, t, width))
        h = nn.gelu(_linear(p, blk + "fc", _layer_norm(p, blk + "ln2", x)), approximate=False)
        x = x + _linear(p, blk + "out", h)
    return _layer_norm(p, "ln", x) @ p["tok.weight"].T  # the head is tied to the embedding


def _lstm(p: Params, idx: Any, cfg: dict) -> Any:
    h = p["emb.weight"][idx]
    for layer in range(cfg["layers"]):
        h = _lstm_layer(p, layer, h)
    return _linear(p, "out", h)


_FORWARD: dict[str, Callable[[Params, Any, dict], Any]] = {
    "mlp": _mlp,
    "cnn": _cnn,
    "gpt": _gpt,
    "lstm": _lstm,
}


def forward(kind: str, params: Params, x: Any, cfg: dict) -> Any:
    """The logits of model ``kind`` (``cfg``: its static sizes, see :func:`from_compat`)."""
    return _FORWARD[kind](params, x, cfg)


def loss_fn(kind: str, params: Params, x: Any, y: Any, cfg: dict) -> Any:
    """Mean cross-entropy of the flattened logits, as :func:`benchmarks.models.train_step`."""
    logits = forward(kind, params, x, cfg)
    logp = nn.log_softmax(logits.reshape(-1, logits.shape[-1]), axis=-1)
    picked = fnp.take_along_axis(logp, y.reshape(-1, 1), axis=1)
    return -fnp.mean(picked)


# --------------------------------------------------------------------------- optimizers


class AdadeltaState(NamedTuple):
    """Running averages of squared gradients and of squared updates."""

    square_avg: Any
    acc_delta: Any


def adadelta(learning_rate: float = 1.0, rho: float = 0.9, eps: float = 1e-6) -> Any:
    """``torch.optim.Adadelta``'s update (no weight decay) as a ``funcgrad.optim`` transformation."""
    tree_map = fg.tree_util.tree_map

    def init(params: Params) -> AdadeltaState:
        return AdadeltaState(tree_map(fnp.zeros_like, params), tree_map(fnp.zeros_like, params))

    def update(grads: Params, state: AdadeltaState, params: Params = None) -> tuple:
        sq = tree_map(lambda s, g: s * rho + (1 - rho) * g * g, state.square_avg, grads)
        delta = tree_map(
            lambda s, a, g: fnp.sqrt(a + eps) / fnp.sqrt(s + eps) * g, sq, state.acc_delta, grads
        )
        acc = tree_map(lambda a, d: a * rho + (1 - rho) * d * d, state.acc_delta, delta)
        updates = tree_map(lambda d: -learning_rate * d, delta)
        return updates, AdadeltaState(sq, acc)

    return optim.GradientTransformation(init, update)


def _optimizer(opt: Any) -> Any:
    """The ``funcgrad.optim`` transformation doing what compat optimizer ``opt`` does."""
    g = opt.param_groups[0]
    name = type(opt).__name__
    wd = g.get("weight_decay", 0.0)
    if name == "Adam" and not wd and not g.get("amsgrad"):
        return optim.adam(g["lr"], *g["betas"], eps=g["eps"])
    if name == "AdamW" and not g.get("amsgrad"):
        return optim.adamw(g["lr"], *g["betas"], eps=g["eps"], weight_decay=wd)
    if name == "SGD" and not wd and not g["dampening"] and not g["nesterov"]:
        return optim.sgd(g["lr"], momentum=g["momentum"] or None)
    if name == "Adadelta" and not wd:
        return adadelta(g["lr"], g["rho"], g["eps"])
    raise NotImplementedError(f"no funcgrad equivalent written for {name} with {g}")


# --------------------------------------------------------------------------- the step


@dataclasses.dataclass
class FgStep:
    """A jitted step ``step(params, state, x, y) -> (params, state, loss)`` and its inputs.

    ``params`` and ``state`` are donated: pass each value to ``step`` once.
    """

    kind: str
    step: Callable[..., tuple]
    params: Params
    state: Any
    cfg: dict

    def batch(self, data: tuple) -> tuple:
        """A NumPy batch ``(x, y)`` as device arrays (integer inputs as int32)."""
        return tuple(
            fnp.asarray(a.astype(np.int32) if np.issubdtype(a.dtype, np.integer) else a)
            for a in data
        )


def _config(kind: str, model: Any, params: Params) -> dict:
    if kind == "gpt":
        return {"heads": model.heads, "layers": len(model.blocks)}
    if kind == "lstm":
        return {"layers": model.rnn.num_layers}
    return {}


def from_compat(kind: str, model: Any, opt: Any) -> FgStep:
    """The funcgrad step of ``kind``, starting from a copy of ``model``'s parameters."""
    params = {n: fnp.asarray(np.array(t.detach().numpy())) for n, t in model.named_parameters()}
    cfg = _config(kind, model, params)
    tx = _optimizer(opt)
    grad_fn = fg.value_and_grad(lambda p, x, y: loss_fn(kind, p, x, y, cfg))

    def step(params: Params, state: Any, x: Any, y: Any) -> tuple:
        loss, grads = grad_fn(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    return FgStep(kind, fg.jit(step, donate_argnums=(0, 1)), params, tx.init(params), cfg)
