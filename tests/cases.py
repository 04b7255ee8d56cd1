"""Which cases of a large parametrised table a run executes.

The registry's rule tests and the op tables multiply primitives (or ops) by examples by
rules: thousands of cases, each compiling a few small XLA programs. Under ``CI`` (set by
``.ci/run``, which must stay within 30 minutes on 2 cores) a table runs a stable sample of
its cases: the first case of every group (every primitive, every op) always, and a
fraction of the others chosen by a hash of the case's id salted with the test's name, so
different tests of the same table keep different cases and together cover all of them.
This is what JAX's own suite does with ``JAX_NUM_GENERATED_CASES``, and what the
hypothesis ``ci`` profile (tests/conftest.py) does for generated inputs.

Without ``CI`` every case runs. ``FUNCGRAD_TEST_CASES=all`` or ``=sample`` overrides the
choice either way (``FUNCGRAD_TEST_CASES=all CI=1 python -m pytest`` is the full run).

The registry's table itself is here too: ``PRIMS`` (every registered primitive, the
optional families included) and ``examples(prim)`` (its examples, drawn with a seed of its
own), which test_registry.py and test_host_tier.py run; ``family_cases(families)`` and
``family_example(prim, i)``: the examples of some families' primitives drawn with seed 0,
one ``pytest.param`` each, as the ``tests/primitives`` smoke tests run them.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from funcgrad.core.primitive import REGISTRY

try:  # optional families register on import
    import funcgrad.control_flow
    import funcgrad.random  # noqa: F401
except ImportError:  # pragma: no cover
    pass

MODE = os.environ.get("FUNCGRAD_TEST_CASES") or ("sample" if os.environ.get("CI") else "all")
if MODE not in ("all", "sample"):
    raise ValueError(f"FUNCGRAD_TEST_CASES must be 'all' or 'sample', not {MODE!r}")


def stable_seed(text: str) -> int:
    """A seed for ``text`` that is the same in every process (Python's ``hash`` of a
    string is salted per process, so a seed drawn from it changes from run to run)."""
    return zlib.crc32(text.encode())


def _unit(text: str) -> float:
    """A stable number in [0, 1) for ``text``."""
    return stable_seed(text) / 2**32


def sample(
    cases: Sequence[Any],
    *,
    salt: str,
    share: float = 0.5,
    group: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """The cases of ``cases`` this run executes (all of them unless sampling).

    Args:
        cases: ``pytest.param`` objects (their ``id`` is hashed) or plain values (their
            ``str``).
        salt: the test's name, so two tests sample the same table differently.
        share: the fraction of the other cases to keep.
        group: a case's group (its primitive, its op): the first case of each group is
            kept whatever the hash, so every group is tested.

    Returns:
        The kept cases, in their original order.
    """
    if MODE == "all":
        return list(cases)
    kept, groups = [], set()
    for c in cases:
        name = getattr(c, "id", None) or str(c)
        first = group is not None and group(c) not in groups
        if group is not None:
            groups.add(group(c))
        if first or _unit(f"{salt}:{name}") < share:
            kept.append(c)
    return kept


#: every registered primitive, by name
PRIMS = sorted(REGISTRY.values(), key=lambda p: p.name)


def examples(prim: Any) -> list:
    """The registry examples of ``prim`` (none when it has no example generator)."""
    if prim.examples is None:
        return []
    return prim.examples(np.random.default_rng(stable_seed(prim.name)))


def family_example(prim: Any, i: int) -> Any:
    """Example ``i`` of ``prim``, its examples drawn with seed 0."""
    return prim.examples(np.random.default_rng(0))[i]


def family_cases(families: Sequence[str]) -> list[Any]:
    """``pytest.param(prim, i)`` (id ``name-i``) for each seed-0 example of each registered
    primitive of ``families``, in registration order."""
    prims = [p for p in REGISTRY.values() if p.family in families]
    return [
        pytest.param(p, i, id=f"{p.name}-{i}")
        for p in prims
        for i in range(len(p.examples(np.random.default_rng(0))))
    ]
