"""Update rules of the elementwise optimizers beyond SGD/Adam, as pure functions.

Each rule maps one parameter's ``(param, grad, *state)`` to ``(param,
*state)`` (state in the order of its ``STATE`` keys) given a static config
(hashable: it selects the compiled program) and a NamedTuple of runtime
scalars (Python floats on the per-tensor path, 0-d arrays of the parameter's
dtype inside a compiled group step). Elementwise helpers come from an ``ops``
namespace (``sqrt``, ``maximum``, ``minimum``, ``abs``, ``sign``, ``where``,
``select``), so one rule serves both paths (see ``_compiled.rule_step``).

The arithmetic follows PyTorch 2.13's single-tensor CPU kernels operation by
operation, with the conventions stated in ``_functional``: ``addcmul(a, b,
value=v)`` is ``self + v * a * b``, ``addcdiv`` is ``self + v * a / b``,
``add(x, alpha=a)`` is ``self + a * x``, and ``lerp`` switches formula at
weight ``0.5``. Scalars derived in Python (bias corrections, decayed learning
rates) are computed in double precision and rounded once, as PyTorch does.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "RULES",
    "Rule",
    "adadelta",
    "adagrad",
    "adamax",
    "asgd",
    "nadam",
    "radam",
    "rmsprop",
    "rprop",
]


@dataclasses.dataclass(frozen=True)
class Rule:
    """An update rule: its name, state keys (given the config) and function."""

    name: str
    fn: Any
    state_keys: Any  # cfg -> tuple[str, ...]

    def __hash__(self) -> int:
        return hash(self.name)


def lerp_weights(w: float, dtype: Any = None) -> tuple[bool, float, float]:
    """``(high, w, 1 - w)`` for PyTorch's two-formula ``lerp`` with weight ``w``.

    The CPU kernel takes ``1 - w`` in the parameter's compute type: from ``w``
    rounded to float32 for float32 (and narrower) parameters, in double precision
    for float64 ones (``dtype`` is the parameter's; ``None`` means float32).
    """
    if dtype is not None and dtype.itemsize == 8 and dtype.is_floating_point:
        return abs(w) >= 0.5, w, 1.0 - w
    return abs(w) >= 0.5, w, 1.0 - float(np.float32(w))


def lerp(high: bool, start: Any, end: Any, w: Any, w_c: Any) -> Any:
    if high:
        return end - (end - start) * w_c
    return start + w * (end - start)


# ---------------------------------------------------------------------------
# Adadelta
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DecayConfig:
    """Static choices shared by several rules: ``maximize`` and weight decay on/off."""

    maximize: bool
    weight_decay: bool


class AdadeltaScalars(NamedTuple):
    neg_lr: Any
    rho: Any
    one_minus_rho: Any
    eps: Any
    weight_decay: Any


def _grad(cfg: Any, s: Any, param: Any, grad: Any) -> Any:
    g = -grad if cfg.maximize else grad
    if cfg.weight_decay:
        g = g + s.weight_decay * param
    return g


def _adadelta(
    cfg: DecayConfig, s: AdadeltaScalars, ops: Any, param: Any, grad: Any, sq: Any, acc: Any
) -> tuple:
    g = _grad(cfg, s, param, grad)
    sq = sq * s.rho + s.one_minus_rho * g * g
    std = ops.sqrt(sq + s.eps)
    delta = ops.sqrt(acc + s.eps) / std * g
    acc = acc * s.rho + s.one_minus_rho * delta * delta
    return param + s.neg_lr * delta, sq, acc


adadelta = Rule("adadelta", _adadelta, lambda cfg: ("square_avg", "acc_delta"))


# ---------------------------------------------------------------------------
# Adagrad
# ---------------------------------------------------------------------------


class AdagradScalars(NamedTuple):
    neg_clr: Any  # -lr / (1 + (step - 1) * lr_decay)
    eps: Any
    weight_decay: Any


def _adagrad(
    cfg: DecayConfig, s: AdagradScalars, ops: Any, param: Any, grad: Any, acc: Any
) -> tuple:
    g = _grad(cfg, s, param, grad)
    acc = acc + g * g
    std = ops.sqrt(acc) + s.eps
    return param + s.neg_clr * g / std, acc


adagrad = Rule("adagrad", _adagrad, lambda cfg: ("sum",))


# ---------------------------------------------------------------------------
# RMSprop
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RMSpropConfig:
    maximize: bool
    weight_decay: bool
    momentum: bool  # momentum > 0
    centered: bool
    lerp_high: bool  # 1 - alpha >= 0.5 (centered average's lerp formula)


class RMSpropScalars(NamedTuple):
    neg_lr: Any
    alpha: Any
    one_minus_alpha: Any
    lerp_w_c: Any
    eps: Any
    weight_decay: Any
    momentum: Any


def _rmsprop_keys(cfg: RMSpropConfig) -> tuple[str, ...]:
    keys = ("square_avg",)
    if cfg.momentum:
        keys += ("momentum_buffer",)
    if cfg.centered:
        keys += ("grad_avg",)
    return keys


def _rmsprop(
    cfg: RMSpropConfig, s: RMSpropScalars, ops: Any, param: Any, grad: Any, *state: Any
) -> tuple:
    g = _grad(cfg, s, param, grad)
    sq, rest = state[0], list(state[1:])
    buf = rest.pop(0) if cfg.momentum else None
    grad_avg = rest.pop(0) if cfg.centered else None
    sq = sq * s.alpha + s.one_minus_alpha * g * g
    if cfg.centered:
        grad_avg = lerp(cfg.lerp_high, grad_avg, g, s.one_minus_alpha, s.lerp_w_c)
        avg = ops.sqrt(sq + -1.0 * grad_avg * grad_avg)
    else:
        avg = ops.sqrt(sq)
    avg = avg + s.eps
    if cfg.momentum:
        buf = buf * s.momentum + g / avg
        param = param + s.neg_lr * buf
    else:
        param = param + s.neg_lr * g / avg
    out = (param, sq)
    if cfg.momentum:
        out += (buf,)
    if cfg.centered:
        out += (grad_avg,)
    return out


rmsprop = Rule("rmsprop", _rmsprop, _rmsprop_keys)


# ---------------------------------------------------------------------------
# Adamax
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MomentConfig:
    """Adam-family static choices: maximize, weight decay (coupled or decoupled), lerp formula."""

    maximize: bool
    weight_decay: bool
    decoupled: bool
    lerp_high: bool  # 1 - beta1 >= 0.5


class AdamaxScalars(NamedTuple):
    lerp_w: Any
    lerp_w_c: Any
    beta2: Any
    eps: Any
    weight_decay: Any
    neg_clr: Any  # -lr / (1 - beta1 ** step)


def _adamax(
    cfg: MomentConfig, s: AdamaxScalars, ops: Any, param: Any, grad: Any, m: Any, u: Any
) -> tuple:
    g = _grad(cfg, s, param, grad)
    m = lerp(cfg.lerp_high, m, g, s.lerp_w, s.lerp_w_c)
    u = ops.maximum(u * s.beta2, ops.abs(g) + s.eps)
    return param + s.neg_clr * m / u, m, u


adamax = Rule("adamax", _adamax, lambda cfg: ("exp_avg", "exp_inf"))


# ---------------------------------------------------------------------------
# NAdam / RAdam
# ---------------------------------------------------------------------------


def moment_grad(cfg: Any, s: Any, param: Any, grad: Any) -> tuple[Any, Any]:
    """The Adam family's ``(param, g)`` before the moments: ``g`` negated for ``maximize``;
    weight decay on ``g`` (``+ s.weight_decay * param``) or, ``decoupled``, on the
    parameter (``* s.decay``). ``cfg`` is a ``MomentConfig`` or ``AdamConfig``."""
    g = -grad if cfg.maximize else grad
    if cfg.weight_decay:
        if cfg.decoupled:
            param = param * s.decay
        else:
            g = g + s.weight_decay * param
    return param, g


class NAdamScalars(NamedTuple):
    lerp_w: Any
    lerp_w_c: Any
    beta2: Any
    one_minus_beta2: Any
    eps: Any
    weight_decay: Any
    decay: Any  # 1 - lr * weight_decay
    bias_correction2: Any
    grad_coef: Any  # -lr * (1 - mu) / (1 - mu_product)
    avg_coef: Any  # -lr * mu_next / (1 - mu_product * mu_next)


def _nadam(
    cfg: MomentConfig, s: NAdamScalars, ops: Any, param: Any, grad: Any, m: Any, v: Any
) -> tuple:
    param, g = moment_grad(cfg, s, param, grad)
    m = lerp(cfg.lerp_high, m, g, s.lerp_w, s.lerp_w_c)
    v = v * s.beta2 + s.one_minus_beta2 * g * g
    denom = ops.sqrt(v / s.bias_correction2) + s.eps
    param = param + s.grad_coef * g / denom
    param = param + s.avg_coef * m / denom
    return param, m, v


nadam = Rule("nadam", _nadam, lambda cfg: ("exp_avg", "exp_avg_sq"))


class RAdamScalars(NamedTuple):
    lerp_w: Any
    lerp_w_c: Any
    beta2: Any
    one_minus_beta2: Any
    eps: Any
    weight_decay: Any
    decay: Any
    bias_correction1: Any
    lr: Any
    bias_correction2_sqrt: Any
    rect: Any  # variance rectification term (used when rectified)
    rectified: Any  # 1.0 when rho_t > 5, else 0.0


def _radam(
    cfg: MomentConfig, s: RAdamScalars, ops: Any, param: Any, grad: Any, m: Any, v: Any
) -> tuple:
    param, g = moment_grad(cfg, s, param, grad)
    m = lerp(cfg.lerp_high, m, g, s.lerp_w, s.lerp_w_c)
    v = v * s.beta2 + s.one_minus_beta2 * g * g
    corrected = m / s.bias_correction1 * s.lr

    def rectified() -> Any:
        # ``scalar / tensor`` is ``reciprocal(tensor) * scalar`` in PyTorch.
        adaptive = (1.0 / (ops.sqrt(v) + s.eps)) * s.bias_correction2_sqrt
        return corrected * adaptive * s.rect

    update = ops.select(s.rectified, rectified, lambda: corrected)
    return param - update, m, v


radam = Rule("radam", _radam, lambda cfg: ("exp_avg", "exp_avg_sq"))


# ---------------------------------------------------------------------------
# ASGD
# ---------------------------------------------------------------------------


class ASGDScalars(NamedTuple):
    decay: Any  # 1 - lambd * eta
    neg_eta: Any
    weight_decay: Any
    mu: Any
    average: Any  # 1.0 when mu != 1 (running average), else 0.0 (ax = param)


def _asgd(cfg: DecayConfig, s: ASGDScalars, ops: Any, param: Any, grad: Any, ax: Any) -> tuple:
    g = _grad(cfg, s, param, grad)
    param = param * s.decay
    param = param + s.neg_eta * g
    ax = ops.select(s.average, lambda: ax + (param - ax) * s.mu, lambda: param)
    return param, ax


asgd = Rule("asgd", _asgd, lambda cfg: ("ax",))


# ---------------------------------------------------------------------------
# Rprop
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RpropConfig:
    maximize: bool


class RpropScalars(NamedTuple):
    etaminus: Any
    etaplus: Any
    step_size_min: Any
    step_size_max: Any


def _rprop(
    cfg: RpropConfig, s: RpropScalars, ops: Any, param: Any, grad: Any, prev: Any, step_size: Any
) -> tuple:
    g = -grad if cfg.maximize else grad
    sign = ops.sign(g * prev)
    # PyTorch overwrites the signs in place, so its factor is recorded (zero gradient):
    # where the sign is 0 the factor is ``sign + 1`` here (1 for a NaN sign)
    one = ops.where(sign == 0, sign + 1.0, 1.0)
    factor = ops.where(sign > 0, s.etaplus, ops.where(sign < 0, s.etaminus, one))
    step_size = ops.minimum(ops.maximum(step_size * factor, s.step_size_min), s.step_size_max)
    g = ops.where(sign < 0, 0.0, g)
    return param - ops.sign(g) * step_size, g, step_size


rprop = Rule("rprop", _rprop, lambda cfg: ("prev", "step_size"))


RULES = {r.name: r for r in (adadelta, adagrad, rmsprop, adamax, nadam, radam, asgd, rprop)}
