"""The user-facing transforms: grad, vjp, jvp, linearize, vmap, jacobians, make_ir.

Each traces the user function into a :class:`~funcgrad.core.ir.Program`,
rewrites it with :mod:`funcgrad.ad` or :mod:`funcgrad.batching`, and
evaluates the result under the current interpreter, so transforms nest.
One module per job: :mod:`._tracing` (tracing, argument checks, ``make_ir``),
:mod:`._reverse`, :mod:`._forward`, :mod:`._vmap`, :mod:`._jacobians`,
:mod:`._shard_map`.
"""

from funcgrad.api._forward import jvp, linearize
from funcgrad.api._jacobians import hessian, jacfwd, jacrev
from funcgrad.api._reverse import grad, value_and_grad, vjp
from funcgrad.api._shard_map import shard_map
from funcgrad.api._tracing import TreeFunction, check_callable, float0, make_ir, trace_pytree
from funcgrad.api._vmap import vmap

__all__ = [
    "TreeFunction",
    "check_callable",
    "float0",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "make_ir",
    "shard_map",
    "trace_pytree",
    "value_and_grad",
    "vjp",
    "vmap",
]
