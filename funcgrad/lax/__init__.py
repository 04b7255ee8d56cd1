"""``funcgrad.lax``: lax-level operations with ``jax.lax``'s names, signatures and
defaults, for code ported from JAX. Each binds funcgrad primitives (so ``grad``,
``vmap``, ``jit`` and higher derivatives apply): elementwise math, shapes and slicing,
gather/scatter, reductions and sorting, ``reduce_window`` pooling, convolutions,
``map``/``associative_scan`` and the structured control flow.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.conv(np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), (1, 1), "SAME").shape
    (1, 2, 5, 5)
"""

from __future__ import annotations

# (control flow and stop_gradient are top-level names too; jax.lax has them here)
from funcgrad.control_flow import cond, fori_loop, scan, switch, while_loop
from funcgrad.lax import (
    _composite,
    _control,
    _conv,
    _conv_patches,
    _elementwise,
    _fft,
    _gather,
    _linear_solve,
    _parallel,
    _ragged,
    _reductions,
    _rng,
    _special,
    _structural,
    _windowed,
)
from funcgrad.lax._composite import *  # noqa: F403
from funcgrad.lax._control import *  # noqa: F403
from funcgrad.lax._conv import *  # noqa: F403
from funcgrad.lax._conv_patches import *  # noqa: F403
from funcgrad.lax._elementwise import *  # noqa: F403
from funcgrad.lax._fft import *  # noqa: F403
from funcgrad.lax._gather import *  # noqa: F403
from funcgrad.lax._linear_solve import *  # noqa: F403
from funcgrad.lax._parallel import *  # noqa: F403
from funcgrad.lax._ragged import *  # noqa: F403
from funcgrad.lax._reductions import *  # noqa: F403
from funcgrad.lax._rng import *  # noqa: F403
from funcgrad.lax._special import *  # noqa: F403
from funcgrad.lax._structural import *  # noqa: F403
from funcgrad.lax._windowed import *  # noqa: F403
from funcgrad.primitives.calls import stop_gradient
from funcgrad.sharding import with_sharding_constraint

__all__ = [
    *_composite.__all__,
    *_control.__all__,
    *_conv.__all__,
    *_conv_patches.__all__,
    *_elementwise.__all__,
    *_fft.__all__,
    *_gather.__all__,
    *_linear_solve.__all__,
    *_parallel.__all__,
    *_ragged.__all__,
    *_reductions.__all__,
    *_rng.__all__,
    *_special.__all__,
    *_structural.__all__,
    *_windowed.__all__,
    "cond",
    "fori_loop",
    "scan",
    "stop_gradient",
    "switch",
    "while_loop",
    "with_sharding_constraint",
]
