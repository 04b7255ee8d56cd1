"""compat.torch vs PyTorch eager: the cost of one op, and wide graphs.

* ``compat.op_recorded_x100``: 100 scalar ops recorded for autograd (``y = y * c``
  on a tensor that requires grad); divide by 100 for the per-op cost.
* ``compat.op_unrecorded_x100``: the same 100 ops on a tensor that does not
  require grad (dispatch only).
* ``compat.stack_1000_backward``: ``stack`` of 1,000 scalar leaves, ``sum``,
  ``backward`` (one node with 1,000 inputs and 1,000 gradient sinks).
* ``compat.wide_1000_backward``: 1,000 leaves summed one ``+`` at a time, then
  ``backward`` (1,000 nodes, 1,000 sinks).

The 20,000-op chain (forward + backward) is in ``wl_compat.py``.
"""

from __future__ import annotations

from benchmarks.harness import Impls, compat_and_torch, workload

N_OPS = 100
N_WIDE = 1000


def _ops(x):
    y = x
    for _ in range(N_OPS):
        y = y * 1.0001
    return y


@workload("compat.op_recorded_x100", group="compat")
def op_recorded() -> Impls:
    """100 recorded scalar multiplications (forward only)."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        x = lib.tensor(1.0, requires_grad=True)
        impls[name] = lambda x=x, raw=raw: raw(_ops(x))
    return impls


@workload("compat.op_unrecorded_x100", group="compat")
def op_unrecorded() -> Impls:
    """100 scalar multiplications on a tensor that needs no gradient."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        x = lib.tensor(1.0)
        impls[name] = lambda x=x, raw=raw: raw(_ops(x))
    return impls


def _leaves(lib) -> list:
    return [lib.tensor(float(i), requires_grad=True) for i in range(N_WIDE)]


@workload("compat.stack_1000_backward", group="compat")
def stack_backward() -> Impls:
    """stack 1,000 scalar leaves, sum, backward."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        xs = _leaves(lib)

        def run(lib=lib, xs=xs, raw=raw):
            for x in xs:
                x.grad = None
            lib.stack(xs).sum().backward()
            return raw(xs[-1].grad)

        impls[name] = run
    return impls


@workload("compat.wide_1000_backward", group="compat")
def wide_backward() -> Impls:
    """1,000 scalar leaves summed one add at a time, backward."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        xs = _leaves(lib)

        def run(xs=xs, raw=raw):
            for x in xs:
                x.grad = None
            s = xs[0]
            for x in xs[1:]:
                s = s + x
            s.backward()
            return raw(xs[-1].grad)

        impls[name] = run
    return impls
