"""First-order optimizers as ``(init_fun, update_fun, get_params)`` triples.

The API of ``jax.example_libraries.optimizers``, written with :mod:`funcgrad.numpy`::

    from funcgrad.example_libraries import optimizers

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, fg.grad(loss)(get_params(state)), state)

``init_fun(params)`` builds an :class:`OptimizerState` from a pytree of arrays,
``update_fun(step, grads, state)`` returns the next state and ``get_params(state)`` the
parameters. The state is a pytree, so the update runs under ``fg.jit``, ``fg.fori_loop``
or ``fg.scan``; ``step`` may be a Python int or a traced integer.

Each optimizer is written for one array (``init``/``update``/``get_params`` on a leaf)
and the :func:`optimizer` decorator lifts it to pytrees of parameters. The arithmetic
follows JAX's module operation for operation, so trajectories agree with it.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from funcgrad import numpy as fnp
from funcgrad import tree_util

__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

Array = Any
Params = Any
State = Any
Updates = Any
Step = Any
Schedule = Callable[[Step], Any]
InitFn = Callable[[Params], Any]
UpdateFn = Callable[[Step, Updates, Any], Any]
ParamsFn = Callable[[Any], Params]

#: Optimizer state over a pytree of parameters: the flattened per-leaf states, the
#: parameters' tree structure and each leaf state's own structure (as JAX's).
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])

tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple over pytrees of parameters."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays to pytrees of parameters.

    Args:
        opt_maker: returns ``(init, update, get_params)`` acting on one array: ``init(x0)``
            gives a pytree of per-array state, ``update(i, g, state)`` the next state and
            ``get_params(state)`` the array.

    Returns:
        A function with ``opt_maker``'s signature returning an :class:`Optimizer` whose
        functions act leaf by leaf on pytrees and carry an :class:`OptimizerState`.
    """

    @functools.wraps(opt_maker)
    def make(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def split_states(states: list[Any]) -> tuple[list[Any], list[Any]]:
            flat = [tree_util.tree_flatten(s) for s in states]
            return [f for f, _ in flat], [d for _, d in flat]

        def unpack(opt_state: Any) -> tuple[list[Any], Any]:
            packed, tree_def, subtree_defs = opt_state
            states = [tree_util.tree_unflatten(d, p) for d, p in zip(subtree_defs, packed)]
            return states, tree_def

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            leaves, tree_def = tree_util.tree_flatten(x0_tree)
            packed, subtree_defs = split_states([init(x0) for x0 in leaves])
            return OptimizerState(packed, tree_def, subtree_defs)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states, tree_def = unpack(opt_state)
            grads, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != tree_def:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree_def} and grad tree {grad_def}."
                )
            packed, subtree_defs = split_states([update(i, g, s) for g, s in zip(grads, states)])
            for before, after in zip(opt_state.subtree_defs, subtree_defs):
                if before != after:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {before} and output {after}."
                    )
            return OptimizerState(packed, tree_def, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states, tree_def = unpack(opt_state)
            return tree_util.tree_unflatten(tree_def, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return make


def _first(state: Any) -> Any:
    return state[0]


# ---------------------------------------------------------------------------- optimizers


@optimizer
def sgd(step_size: float | Schedule) -> Optimizer:
    """Stochastic gradient descent: ``x - step_size(i) * g``.

    Args:
        step_size: a positive scalar or a schedule mapping the step index to one.
    """
    lr = make_schedule(step_size)

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - lr(i) * g

    return Optimizer(lambda x0: x0, update, lambda x: x)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with heavy-ball momentum (``v = mass * v + g; x -= step_size(i) * v``)."""
    lr = make_schedule(step_size)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - lr(i) * velocity, velocity

    return Optimizer(lambda x0: (x0, fnp.zeros_like(x0)), update, _first)


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with Nesterov momentum (the step uses ``mass * v + g`` after updating ``v``)."""
    lr = make_schedule(step_size)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - lr(i) * (mass * velocity + g), velocity

    return Optimizer(lambda x0: (x0, fnp.zeros_like(x0)), update, _first)


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """Adagrad (Duchi et al., 2011) with momentum on the normalised gradient."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        inv_root = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        return x - lr(i) * m, g_sq, m

    return Optimizer(init, update, _first)


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> Optimizer:
    """RMSProp: divide the step by a running root mean square of the gradients."""
    lr = make_schedule(step_size)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        return x - lr(i) * g / fnp.sqrt(avg_sq + eps), avg_sq

    return Optimizer(lambda x0: (x0, fnp.zeros_like(x0)), update, _first)


@optimizer
def rmsprop_momentum(
    step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> Optimizer:
    """RMSProp whose normalised steps accumulate in a momentum buffer."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + lr(i) * g / fnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return Optimizer(init, update, _first)


def _bias_correction(beta: float, dtype: Any, i: Step) -> Any:
    return 1 - fnp.asarray(beta, dtype) ** (i + 1)


@optimizer
def adam(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> Optimizer:
    """Adam (Kingma and Ba, 2015) with bias-corrected first and second moments."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        m_hat = m / _bias_correction(b1, m.dtype, i)
        v_hat = v / _bias_correction(b2, m.dtype, i)
        return x - lr(i) * m_hat / (fnp.sqrt(v_hat) + eps), m, v

    return Optimizer(init, update, _first)


@optimizer
def adamax(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> Optimizer:
    """AdaMax: Adam with the second moment replaced by an infinity norm."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (lr(i) / _bias_correction(b1, m.dtype, i)) * m / (u + eps)
        return x, m, u

    return Optimizer(init, update, _first)


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """SM3 (Anil et al., 2019): one accumulator per axis instead of one per entry."""
    lr = make_schedule(step_size)

    def along(ndim: int, v: Array, axis: int) -> Array:
        index = tuple(slice(None) if d == axis else None for d in range(ndim))
        return v[index]

    def init(x0: Array) -> Any:
        shape = fnp.shape(x0)
        x0 = fnp.atleast_1d(x0)
        accumulators = [fnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, fnp.zeros_like(x0), accumulators, shape

    def update(i: Step, g: Array, state: Any) -> Any:
        x, m, vs, shape = state
        ndim = g.ndim
        accum = functools.reduce(fnp.minimum, [along(ndim, v, d) for d, v in enumerate(vs)])
        accum = accum + fnp.square(g)
        inv_root = fnp.where(accum > 0, 1.0 / fnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        x = x - lr(i) * m
        others = [tuple(a for a in range(x.ndim) if a != d) for d in range(x.ndim)]
        return x, m, [accum.max(axes) for axes in others], shape

    def get_params(state: Any) -> Array:
        x, _, _, shape = state
        return x.reshape(shape)

    return Optimizer(init, update, get_params)


# -------------------------------------------------------------------- learning-rate schedules


def constant(step_size: Any) -> Schedule:
    """The schedule that always returns ``step_size``."""

    def schedule(i: Step) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Step) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False
) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)``, with ``floor`` if ``staircase``."""

    def schedule(i: Step) -> Any:
        if staircase:
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
        return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0
) -> Schedule:
    """Polynomial interpolation from ``step_size`` to ``final_step_size`` over
    ``decay_steps`` steps, constant afterwards."""

    def schedule(step_num: Step) -> Any:
        step_num = fnp.minimum(step_num, decay_steps)
        fraction = (1 - step_num / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps past ``k`` of the ``boundaries`` (strictly greater).

    Raises:
        ValueError: if either is not one-dimensional or ``len(values) != len(boundaries) + 1``.
    """
    boundaries = fnp.array(boundaries)
    values = fnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Step) -> Any:
        return values[fnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A callable is a schedule already; a scalar becomes :func:`constant`.

    Raises:
        TypeError: for anything else (e.g. an array with dimensions).
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ------------------------------------------------------------------------------ utilities


def l2_norm(tree_: Any) -> Any:
    """Euclidean norm of all the leaves of a pytree taken together (for weight decay)."""
    leaves = tree_util.tree_leaves(tree_)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Scale a pytree of gradients so that its :func:`l2_norm` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree
    )


class JoinPoint:
    """Marks where an outer pytree (the parameters) meets an inner one (a leaf's state)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The parameters' pytree with each leaf a :class:`JoinPoint` holding its state.

    Useful to serialise an :class:`OptimizerState`; :func:`pack_optimizer_state` inverts it.
    """
    packed, tree_def, subtree_defs = opt_state
    states = [JoinPoint(tree_util.tree_unflatten(d, p)) for d, p in zip(subtree_defs, packed)]
    return tree_util.tree_unflatten(tree_def, states)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """Rebuild an :class:`OptimizerState` from :func:`unpack_optimizer_state`'s output.

    Raises:
        TypeError: if a leaf of ``marked_pytree`` is not a :class:`JoinPoint`.
    """
    joins, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint")
    flat = [tree_util.tree_flatten(j.subtree) for j in joins]
    return OptimizerState([f for f, _ in flat], tree_def, [d for _, d in flat])
