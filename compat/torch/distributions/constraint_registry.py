"""``biject_to`` and ``transform_to``: the transforms from unconstrained space onto a
constraint's set (``torch.distributions.constraint_registry``), for optimising constrained
parameters by unconstrained ones.

``biject_to(c)`` is a bijection (usable in ``TransformedDistribution`` for densities);
``transform_to(c)`` need only map onto the set (e.g. softmax onto the simplex). Both look
the constraint's class up; ``register`` adds or replaces a factory.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from compat.torch.distributions import constraints
from compat.torch.distributions.transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StickBreakingTransform,
    Transform,
    identity_transform,
)
from compat.torch.distributions.transforms_pd_cdf_slices import (
    CatTransform,
    PositiveDefiniteTransform,
    StackTransform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A map from constraint classes to factories ``constraint -> Transform``."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], Transform]] = {}

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Register ``factory`` for a constraint class (or the class of an instance);
        without ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, but got "
                f"{constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> Transform:
        """The registered transform for ``constraint``; ``NotImplementedError`` if none."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint: Any) -> Transform:
    return identity_transform


def _independent(registry: ConstraintRegistry) -> Callable[[Any], Transform]:
    def factory(constraint: Any) -> Transform:
        base = registry(constraint.base_constraint)
        return IndependentTransform(base, constraint.reinterpreted_batch_ndims)

    return factory


def _positive(constraint: Any) -> Transform:
    return ExpTransform()


def _greater_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


def _is(bound: Any, value: float) -> bool:
    """Whether ``bound`` is the number ``value`` (a tensor bound never is, as in PyTorch)."""
    return isinstance(bound, numbers.Number) and bound == value


def _interval(constraint: Any) -> Transform:
    lo, hi = constraint.lower_bound, constraint.upper_bound
    if _is(lo, 0) and _is(hi, 1):
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lo, hi - lo)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _real)
    _registry.register(constraints.independent, _independent(_registry))
    for _c in (constraints.positive, constraints.nonnegative):
        _registry.register(_c, _positive)
    for _c in (constraints.greater_than, constraints.greater_than_eq):
        _registry.register(_c, _greater_than)
    _registry.register(constraints.less_than, _less_than)
    for _c in (constraints.interval, constraints.half_open_interval):
        _registry.register(_c, _interval)
biject_to.register(constraints.simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: LowerCholeskyTransform())
for _c in (constraints.positive_definite, constraints.positive_semidefinite):
    transform_to.register(_c, lambda c: PositiveDefiniteTransform())


def _cat(registry: ConstraintRegistry) -> Callable[[Any], Transform]:
    def factory(constraint: Any) -> Transform:
        return CatTransform(
            [registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths
        )

    return factory


def _stack(registry: ConstraintRegistry) -> Callable[[Any], Transform]:
    def factory(constraint: Any) -> Transform:
        return StackTransform([registry(c) for c in constraint.cseq], constraint.dim)

    return factory


for _registry in (biject_to, transform_to):
    _registry.register(constraints.cat, _cat(_registry))
    _registry.register(constraints.stack, _stack(_registry))
