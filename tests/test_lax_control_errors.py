"""``associative_scan`` of a non-callable and ``platform_dependent`` with no branch for
the platform: JAX's exception types and the words its tests match, for funcgrad and JAX."""

import jax
import pytest

import funcgrad as fg


@pytest.mark.parametrize("lax", [fg.lax, jax.lax])
def test_associative_scan_not_callable(lax):
    with pytest.raises(TypeError, match=r"lax.associative_scan.*callable"):
        lax.associative_scan(42, 0)


@pytest.mark.parametrize("lax", [fg.lax, jax.lax])
def test_platform_dependent_without_branch(lax):
    with pytest.raises(NotImplementedError, match=r"translation rule .* not found for platform"):
        lax.platform_dependent(3.0, tpu=lambda x: x + 2.0)
