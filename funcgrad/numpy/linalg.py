"""``funcgrad.numpy.linalg``: norms and products."""

from funcgrad.numpy._linalg import norm, trace  # noqa: F401
from funcgrad.numpy._linalg import matmul, outer, tensordot  # noqa: F401
