"""``funcgrad.scipy.cluster``: ``jax.scipy.cluster`` (``vq``)."""

from funcgrad.scipy.cluster import vq  # noqa: F401
