"""Structured control flow: ``cond``, ``while`` and ``scan``, primitives whose
params hold closed sub-programs.

* ``cond(index, *operands, branches)`` runs ``branches[index]`` (an int32
  index; ``fg.cond`` turns a boolean predicate into 0/1, ``fg.switch`` clamps).
* ``while(*cond_consts, *body_consts, *init, cond_program, body_program,
  cond_nconsts, body_nconsts)`` iterates ``body_program`` while
  ``cond_program`` returns True.
* ``scan(*consts, *init, *xs, program, length, reverse, num_consts,
  num_carry)``: ``program(*consts, *carry, *x) -> (*carry, *y)`` over the
  leading axis of ``xs``; the ``y`` are stacked.

Like the call primitives (:mod:`funcgrad.primitives.calls`), every rule
transforms the sub-programs as a whole with :mod:`funcgrad.ad` and
:mod:`funcgrad.batching` and binds the same primitive again, so the loops
stay loops under ``jvp``, ``vjp`` and ``vmap``. Constants a rule's rewrite
creates are closed over into explicit leading operands (:func:`close`).

Carries and outputs of the control-flow primitives are strongly typed; the
user API (:mod:`funcgrad.control_flow`) makes carries strong before tracing.

One module per primitive (:mod:`.cond`, :mod:`.while_loop`, :mod:`.scan`) and
the helpers they share (:mod:`.common`); this package re-exports their names.
"""

from funcgrad.primitives.control_flow.common import FAMILY, join_consts, trace_program
from funcgrad.primitives.control_flow.cond import cond, cond_p
from funcgrad.primitives.control_flow.scan import scan, scan_p
from funcgrad.primitives.control_flow.while_loop import WHILE_VJP_ERROR, while_loop, while_p

__all__ = [
    "FAMILY",
    "WHILE_VJP_ERROR",
    "cond",
    "cond_p",
    "join_consts",
    "scan",
    "scan_p",
    "trace_program",
    "while_loop",
    "while_p",
]
