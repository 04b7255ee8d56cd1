"""Recurrent kernels: a whole ``nn.RNN``/``nn.LSTM``/``nn.GRU`` stack as one compat op.

A layer-direction is a pure function of arrays (``_layer_f``): the input projection
of every time step is one matmul, then one ``funcgrad.lax.scan`` runs the
recurrence. ``_stack_f`` chains the layer-directions (concatenating directions,
dropping between layers), and ``apply`` traces it once per input avals and static
configuration into one funcgrad program: a forward call is one compiled program,
one recorded node, and its gradient is funcgrad's VJP of the scans (no Python loop
over time steps, no per-step graph nodes). With ``lengths`` (packed sequences) a step past a
sequence's end keeps the previous state and emits zeros, so the final state is the
state at each sequence's true length; a reverse scan starts each sequence at its
own last step for the same reason.

Gate layouts are PyTorch's: LSTM ``(i, f, g, o)``, GRU ``(r, z, n)`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``; LSTM with ``proj_size``
projects ``h`` with ``weight_hr``.
"""

from __future__ import annotations

from typing import Any

import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from compat._core.tensor import apply

__all__ = ["GRAD_NAMES", "cell", "stack"]

#: recorded node names per mode (PyTorch's CPU kernels have no single node to mirror)
GRAD_NAMES = {
    "RNN_TANH": "RnnTanhBackward0",
    "RNN_RELU": "RnnReluBackward0",
    "LSTM": "LstmBackward0",
    "GRU": "GruBackward0",
}


def _t(w: Any) -> Any:
    return fnp.transpose(w)


def _step(mode: str, xw: Any, h: Any, c: Any, w_hh: Any, b_hh: Any, w_hr: Any) -> tuple[Any, Any]:
    """One time step from the projected input ``xw``: the new ``(h, c)`` (``c`` is
    ``None`` except for LSTM)."""
    hw = fnp.matmul(h, _t(w_hh))
    if b_hh is not None:
        hw = hw + b_hh
    if mode == "RNN_TANH":
        return fnp.tanh(xw + hw), None
    if mode == "RNN_RELU":
        return fnn.relu(xw + hw), None
    if mode == "GRU":
        xr, xz, xn = fnp.split(xw, 3, axis=-1)
        hr, hz, hn = fnp.split(hw, 3, axis=-1)
        r = fnn.sigmoid(xr + hr)
        z = fnn.sigmoid(xz + hz)
        n = fnp.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    gi, gf, gg, go = fnp.split(xw + hw, 4, axis=-1)
    c = fnn.sigmoid(gf) * c + fnn.sigmoid(gi) * fnp.tanh(gg)
    h = fnn.sigmoid(go) * fnp.tanh(c)
    if w_hr is not None:
        h = fnp.matmul(h, _t(w_hr))
    return h, c


def _project(x: Any, w_ih: Any, b_ih: Any) -> Any:
    xw = fnp.matmul(x, _t(w_ih))
    return xw + b_ih if b_ih is not None else xw


def _layer_f(
    mode: str, x: Any, h0: Any, c0: Any, weights: tuple[Any, ...], keep: Any, reverse: bool
) -> tuple[Any, Any, Any]:
    """One layer-direction over time-major ``x``: ``(ys, h_n, c_n)``, one ``scan``.

    ``keep`` (``(T, B, 1)`` booleans or ``None``) marks the steps inside each sequence.
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xw = _project(x, w_ih, b_ih)
    lstm = mode == "LSTM"

    def body(carry: Any, inp: Any) -> Any:
        h, c = carry
        xt, m = inp
        h2, c2 = _step(mode, xt, h, c, w_hh, b_hh, w_hr)
        if m is not None:
            h2 = fnp.where(m, h2, h)
            c2 = fnp.where(m, c2, c) if lstm else None
            return (h2, c2), fnp.where(m, h2, fnp.zeros_like(h2))
        return (h2, c2), h2

    (hn, cn), ys = flax.scan(body, (h0, c0 if lstm else None), (xw, keep), reverse=reverse)
    return ys, hn, cn


def _stack_f(
    x: Any,
    h0: Any,
    *rest: Any,
    mode: str,
    layers: int,
    directions: int,
    bias: bool,
    proj: bool,
    batch_first: bool,
    packed: bool,
    keep_prob: float | None,
) -> Any:
    """The whole stack: ``x``, ``h0`` [, ``c0``], the weights of every layer-direction
    [, packing maps ``lengths, rows, steps, cols``] [, dropout draws]
    -> ``(output, h_n [, c_n])``."""
    lstm = mode == "LSTM"
    i = 0
    c0 = None
    if lstm:
        c0, i = rest[0], 1
    per = 2 + 2 * bias + proj
    groups = []
    for _ in range(layers * directions):
        w = list(rest[i : i + 2])
        w += list(rest[i + 2 : i + 4]) if bias else [None, None]
        w.append(rest[i + per - 1] if proj else None)
        groups.append(tuple(w))
        i += per
    keep = None
    if packed:
        lengths, rows, steps, cols = rest[i : i + 4]
        i += 4
        pad = fnp.zeros((1, *x.shape[1:]), x.dtype)
        x = fnp.concatenate([x, pad])[rows]
        keep = fnp.arange(x.shape[0]).reshape(-1, 1, 1) < fnp.reshape(lengths, (1, -1, 1))
    elif batch_first:
        x = fnp.swapaxes(x, 0, 1)
    draws = rest[i] if keep_prob is not None else None
    hs, cs = [], []
    for layer in range(layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            c = c0[k] if lstm else None
            ys, hn, cn = _layer_f(mode, x, h0[k], c, groups[k], keep, d == 1)
            outs.append(ys)
            hs.append(hn)
            cs.append(cn)
        x = outs[0] if directions == 1 else fnp.concatenate(outs, axis=-1)
        if draws is not None and layer < layers - 1:
            drop = draws[layer]
            if packed:  # drawn over the packed output: into the padded layout, as x was
                drop = fnp.concatenate([drop, fnp.ones((1, drop.shape[-1]), drop.dtype)])[rows]
            if keep_prob > 0:
                x = fnp.where(drop < keep_prob, x / keep_prob, fnp.zeros_like(x))
            else:
                x = fnp.zeros_like(x)
    if packed:
        x = x[steps, cols]
    elif batch_first:
        x = fnp.swapaxes(x, 0, 1)
    h_n = fnp.stack(hs)
    return (x, h_n, fnp.stack(cs)) if lstm else (x, h_n)


def stack(
    mode: str,
    x: Any,
    hx: Any,
    weights: list[Any],
    config: dict[str, Any],
    packing: tuple[Any, ...] = (),
    draws: Any = None,
    keep_prob: float | None = None,
) -> tuple[Any, ...]:
    """Run the whole recurrent stack as one op (one ``scan`` per layer-direction).

    ``hx`` is ``h0`` or ``(h0, c0)`` (``(layers * directions, B, *)``); ``weights`` the
    module's flat weights in PyTorch's order; ``config`` holds ``layers``,
    ``directions``, ``bias``, ``proj`` and ``batch_first``. ``packing`` —
    ``(lengths, rows, steps, cols)`` — makes ``x`` packed data: ``rows`` gathers it into
    a padded batch (index ``len(x)`` is the zero row), the scans mask steps past
    ``lengths`` and ``(steps, cols)`` packs the output again. ``draws`` (``(layers - 1, T, B,
    features)``, or ``(layers - 1, len(x), features)`` when packed; 0 where an element is
    kept, at least ``keep_prob`` where dropped) drop the inputs of layers after the first,
    the kept ones scaled by ``1 / keep_prob``. Returns ``(output, h_n)`` or ``(output, h_n, c_n)``.
    """
    states = list(hx) if mode == "LSTM" else [hx]
    args = [x, *states, *weights, *packing]
    if draws is not None:
        args.append(draws)
    static = (
        ("mode", mode),
        ("layers", int(config["layers"])),
        ("directions", int(config["directions"])),
        ("bias", bool(config["bias"])),
        ("proj", bool(config["proj"])),
        ("batch_first", bool(config["batch_first"])),
        ("packed", bool(packing)),
        ("keep_prob", None if draws is None else float(keep_prob)),
    )
    return apply(_stack_f, GRAD_NAMES[mode], tuple(args), static)


def _cell_f(x: Any, h: Any, *rest: Any, mode: str, bias: bool) -> Any:
    c = rest[0] if mode == "LSTM" else None
    w = rest[1:] if mode == "LSTM" else rest
    b_ih, b_hh = (w[2], w[3]) if bias else (None, None)
    h2, c2 = _step(mode, _project(x, w[0], b_ih), h, c, w[1], b_hh, None)
    return (h2, c2) if mode == "LSTM" else h2


def cell(mode: str, x: Any, h: Any, c: Any, weights: tuple[Any, ...], bias: bool) -> Any:
    """One step of ``RNNCell``/``LSTMCell``/``GRUCell`` on ``(B, I)`` input as one op."""
    args = [x, h] + ([c] if mode == "LSTM" else []) + list(weights)
    static = (("mode", mode), ("bias", bool(bias)))
    return apply(
        _cell_f, GRAD_NAMES[mode].replace("Backward0", "CellBackward0"), tuple(args), static
    )
