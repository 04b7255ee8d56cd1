"""The scalar types of ``funcgrad.numpy`` (``float32``, ``int8``, ``bool_``...), as JAX's.

Each is a class standing for one NumPy scalar type: usable wherever a dtype is
(``dtype=fnp.float32``, ``np.dtype(fnp.int8)``, ``np.issubdtype``), equal to and hashed
like the NumPy type, ``isinstance(np.float32(1), fnp.float32)`` holds, and calling it
makes an *array* of that dtype (``fnp.int8(0)`` is a 0-d ``int8`` array, traceable),
where NumPy's returns a NumPy scalar.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.numpy._creation import asarray


class _ScalarMeta(type):
    """Metaclass of the scalar types: compares, hashes and checks instances as the
    NumPy type it stands for; calling converts to an array."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        # as NumPy's type compares (and JAX's scalar types): equal to the NumPy type and
        # to its dtype (``fnp.float32 == np.dtype("float32")``), not to a name
        return cls is other or bool(cls.dtype.type == other)

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)


def scalar_type(numpy_type: type) -> type:
    """A ``funcgrad.numpy`` scalar type standing for ``numpy_type``."""
    dt = np.dtype(numpy_type)
    doc = (
        f"The ``{dt.name}`` scalar type: usable as a dtype, and calling it makes a "
        f"``{dt.name}`` array (``x.astype({dt.name})``), as ``jax.numpy.{dt.name}``."
    )
    name = dt.name if dt != np.bool_ else "bool"
    return _ScalarMeta(name, (object,), {"dtype": dt, "__doc__": doc})
