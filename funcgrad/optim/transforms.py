"""Gradient transformations in the style of optax: ``init(params)`` / ``update(grads, state, params)``.

A :class:`GradientTransformation` is a pair of pure functions. States are
pytrees (NamedTuples of arrays; every stateful transformation counts its
steps in an int32 scalar ``count``), so an optimizer step can live inside
``fg.jit``, ``fg.scan`` or ``fg.fori_loop``. Leaves are updated with
:mod:`funcgrad.numpy`; trees are mapped with ``jax.tree_util``. The formulas
(bias correction, decoupled weight decay, Nesterov momentum, clipping) match
optax's.

Example:
    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad import optim
    >>> params = {"w": fnp.ones(3)}
    >>> opt = optim.adam(1e-2)
    >>> state = opt.init(params)
    >>> grads = fg.grad(lambda p: fnp.sum(p["w"] ** 2))(params)
    >>> updates, state = opt.update(grads, state, params)
    >>> params = optim.apply_updates(params, updates)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from jax import tree_util

from funcgrad import numpy as fnp
from funcgrad.optim.schedules import Schedule

PyTree = Any
ScalarOrSchedule = float | Schedule

_INT32_MAX = int(np.iinfo(np.int32).max)


class GradientTransformation(NamedTuple):
    """``init(params) -> state`` and ``update(updates, state, params=None) -> (updates, state)``."""

    init: Callable[[PyTree], PyTree]
    update: Callable[..., tuple[PyTree, PyTree]]


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


class ScaleByScheduleState(NamedTuple):
    """Step count for a scheduled scale."""

    count: Any


class TraceState(NamedTuple):
    """Step count and momentum buffer (one leaf per parameter)."""

    count: Any
    trace: PyTree


class ScaleByAdamState(NamedTuple):
    """Step count and Adam's first (``mu``) and second (``nu``) moment estimates."""

    count: Any
    mu: PyTree
    nu: PyTree


# --------------------------------------------------------------------------- helpers


def _tree_map(f: Callable, tree: PyTree, *rest: PyTree) -> PyTree:
    return tree_util.tree_map(f, tree, *rest)


def _zeros_count() -> Any:
    return fnp.zeros((), fnp.int32)


def safe_increment(count: Any) -> Any:
    """``count + 1``, saturating at the int32 maximum instead of wrapping."""
    count = fnp.asarray(count)
    return fnp.where(count < _INT32_MAX, count + 1, _INT32_MAX)


def global_norm(tree: PyTree) -> Any:
    """The L2 norm of all leaves of ``tree`` taken together."""
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        return fnp.zeros(())
    total = fnp.sum(fnp.square(leaves[0]))
    for x in leaves[1:]:
        total = total + fnp.sum(fnp.square(x))
    return fnp.sqrt(total)


def apply_updates(params: PyTree, updates: PyTree) -> PyTree:
    """Add ``updates`` to ``params`` leaf by leaf, keeping each parameter's dtype.

    Args:
        params: a pytree of arrays.
        updates: a pytree of the same structure, as returned by an optimiser's
            ``update``.

    Returns:
        The new parameters (``params`` is not modified: arrays are immutable).
    """

    def add(p: Any, u: Any) -> Any:
        p = fnp.asarray(p)
        return fnp.asarray(fnp.add(p, u), p.dtype)

    return _tree_map(add, params, updates)


def _bias_correction(moment: PyTree, decay: float, count: Any) -> PyTree:
    # computed at the default float precision, then divided in the moment's own dtype
    correction = 1 - fnp.power(decay, count)
    return _tree_map(lambda t: t / fnp.asarray(correction, fnp.asarray(t).dtype), moment)


# --------------------------------------------------------------------------- combinators


def identity() -> GradientTransformation:
    """Pass updates through unchanged."""
    return GradientTransformation(lambda params: EmptyState(), lambda u, s, p=None: (u, s))


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply ``transforms`` in order; the state is the tuple of their states."""

    def init(params: PyTree) -> tuple:
        return tuple(t.init(params) for t in transforms)

    def update(updates: PyTree, state: tuple, params: PyTree = None) -> tuple[PyTree, tuple]:
        if len(state) != len(transforms):
            raise ValueError(
                f"chain: expected a state of {len(transforms)} entries, got {len(state)}"
            )
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init, update)


# --------------------------------------------------------------------------- building blocks


def scale(step_size: float) -> GradientTransformation:
    """Multiply updates by a fixed ``step_size``."""

    def update(updates: PyTree, state: EmptyState, params: PyTree = None) -> tuple:
        return _tree_map(lambda g: g * step_size, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """Multiply updates by ``step_size_fn(count)``; ``count`` starts at 0."""

    def init(params: PyTree) -> ScaleByScheduleState:
        return ScaleByScheduleState(count=_zeros_count())

    def update(updates: PyTree, state: ScaleByScheduleState, params: PyTree = None) -> tuple:
        step_size = step_size_fn(state.count)
        updates = _tree_map(lambda g: fnp.asarray(step_size, fnp.asarray(g).dtype) * g, updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))

    return GradientTransformation(init, update)


def scale_by_learning_rate(
    learning_rate: ScalarOrSchedule, *, flip_sign: bool = True
) -> GradientTransformation:
    """Scale by ``-learning_rate`` (a float or a schedule of the step count)."""
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    lr = float(learning_rate)
    return scale_by_schedule(lambda count: sign * lr)


def trace(decay: float, nesterov: bool = False) -> GradientTransformation:
    """Momentum: ``t <- g + decay * t``; updates are ``t`` (or ``g + decay * t`` with Nesterov)."""

    def init(params: PyTree) -> TraceState:
        return TraceState(count=_zeros_count(), trace=_tree_map(fnp.zeros_like, params))

    def update(updates: PyTree, state: TraceState, params: PyTree = None) -> tuple:
        f = lambda g, t: g + decay * t
        new_trace = _tree_map(f, updates, state.trace)
        updates = _tree_map(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(count=safe_increment(state.count), trace=new_trace)

    return GradientTransformation(init, update)


def scale_by_adam(
    b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0
) -> GradientTransformation:
    """Adam's rescaling ``mu_hat / (sqrt(nu_hat + eps_root) + eps)`` with bias correction."""

    def init(params: PyTree) -> ScaleByAdamState:
        zeros = lambda: _tree_map(fnp.zeros_like, params)
        return ScaleByAdamState(count=_zeros_count(), mu=zeros(), nu=zeros())

    def update(updates: PyTree, state: ScaleByAdamState, params: PyTree = None) -> tuple:
        mu = _tree_map(lambda g, m: (1 - b1) * g + b1 * m, updates, state.mu)
        nu = _tree_map(lambda g, v: (1 - b2) * fnp.square(g) + b2 * v, updates, state.nu)
        count = safe_increment(state.count)
        mu_hat = _bias_correction(mu, b1, count)
        nu_hat = _bias_correction(nu, b2, count)
        updates = _tree_map(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count, mu=mu, nu=nu)

    return GradientTransformation(init, update)


def add_decayed_weights(weight_decay: float = 0.0) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (decoupled weight decay)."""

    def update(updates: PyTree, state: EmptyState, params: PyTree = None) -> tuple:
        if params is None:
            raise ValueError("add_decayed_weights (used by adamw) needs `params` in update()")
        return _tree_map(lambda g, p: g + weight_decay * p, updates, params), state

    return GradientTransformation(lambda params: EmptyState(), update)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Rescale all updates together so that their global L2 norm is at most ``max_norm``."""

    def update(updates: PyTree, state: EmptyState, params: PyTree = None) -> tuple:
        g_norm = global_norm(updates)
        trigger = g_norm < max_norm

        def clip(t: Any) -> Any:
            scaled = (t / fnp.asarray(g_norm, fnp.asarray(t).dtype)) * max_norm
            return fnp.where(trigger, t, scaled)

        return _tree_map(clip, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


# --------------------------------------------------------------------------- optimizers


def sgd(
    learning_rate: ScalarOrSchedule, momentum: float | None = None, nesterov: bool = False
) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum, as optax's ``sgd``.

    Args:
        learning_rate: a float, or a schedule ``step -> rate``.
        momentum: the decay of the velocity; ``None`` for plain SGD.
        nesterov: use Nesterov's momentum.

    Returns:
        A :class:`GradientTransformation` whose updates are ``-learning_rate`` times
        the (momentum-accumulated) gradients; apply them with :func:`apply_updates`.

    Example:
        >>> from funcgrad import optim
        >>> opt = optim.sgd(0.1, momentum=0.9)
    """
    return chain(
        trace(momentum, nesterov) if momentum is not None else identity(),
        scale_by_learning_rate(learning_rate),
    )


def momentum(
    learning_rate: ScalarOrSchedule, beta: float = 0.9, nesterov: bool = False
) -> GradientTransformation:
    """SGD with heavy-ball (or Nesterov) momentum ``beta``: ``sgd(lr, beta, nesterov)``."""
    return sgd(learning_rate, beta, nesterov)


def adam(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
) -> GradientTransformation:
    """Adam (Kingma & Ba, 2015) as a gradient transformation, with optax's conventions.

    Args:
        learning_rate: a float, or a schedule ``step -> rate`` (see the schedules of
            this module).
        b1: decay rate of the first-moment (mean) estimate.
        b2: decay rate of the second-moment (uncentred variance) estimate.
        eps: added to the denominator's square root, as optax places it.
        eps_root: added inside the square root.

    Returns:
        A :class:`GradientTransformation`: ``init(params)`` makes the state (moments and
        step count); ``update(grads, state, params)`` returns ``(updates, state)``, the
        updates already scaled by ``-learning_rate`` and bias-corrected. Apply them with
        :func:`apply_updates`. Pure functions, so a whole training step compiles under
        ``fg.jit``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad import optim
        >>> opt = optim.adam(0.1)
        >>> params = {"w": fnp.ones(2)}
        >>> state = opt.init(params)
        >>> updates, state = opt.update({"w": fnp.ones(2)}, state, params)
        >>> new_params = optim.apply_updates(params, updates)  # a first step of 0.1
        >>> bool(fnp.allclose(new_params["w"], 0.9))
        True
    """
    return chain(scale_by_adam(b1, b2, eps, eps_root), scale_by_learning_rate(learning_rate))


def adamw(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 1e-4,
    eps_root: float = 0.0,
) -> GradientTransformation:
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019), as ``optax.adamw``.

    The update is ``-lr * (adam_update + weight_decay * params)``; ``update``
    needs ``params``.
    """
    return chain(
        scale_by_adam(b1, b2, eps, eps_root),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )
