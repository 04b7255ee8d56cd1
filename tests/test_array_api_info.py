"""funcgrad.numpy's array API inspection namespace (``__array_namespace_info__``,
``__array_api_version__``) and ``from_dlpack`` against jax.numpy's (JAX 0.10.2)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import funcgrad.numpy as fnp

KINDS = [
    None,
    "bool",
    "signed integer",
    "unsigned integer",
    "real floating",
    "complex floating",
    "integral",
    "numeric",
    ("real floating", "complex floating"),
    ("integral", "bool"),
]


def test_version_and_capabilities_as_jax() -> None:
    assert fnp.__array_api_version__ == jnp.__array_api_version__
    ours, theirs = fnp.__array_namespace_info__(), jnp.__array_namespace_info__()
    assert ours.capabilities() == theirs.capabilities()
    assert ours.default_device() is theirs.default_device() is None
    assert ours.devices() == theirs.devices()
    assert ours.default_dtypes() == theirs.default_dtypes()
    assert ours.default_dtypes(device=jax.devices()[0]) == theirs.default_dtypes()


@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_dtypes_by_kind_as_jax(kind: object, x64: bool) -> None:
    with jax.enable_x64(x64):
        ours = fnp.__array_namespace_info__().dtypes(kind=kind)
        theirs = jnp.__array_namespace_info__().dtypes(kind=kind)
        assert ours == theirs
        assert fnp.__array_namespace_info__().default_dtypes() == (
            jnp.__array_namespace_info__().default_dtypes()
        )


def test_unknown_kind_is_a_key_error_as_jax() -> None:
    with pytest.raises(KeyError):
        jnp.__array_namespace_info__().dtypes(kind="strings")
    with pytest.raises(KeyError, match="unknown dtype kind 'strings'"):
        fnp.__array_namespace_info__().dtypes(kind="strings")


def test_from_dlpack_as_jax() -> None:
    for src in (np.arange(6.0).reshape(2, 3), torch.arange(5, dtype=torch.int32)):
        ours, theirs = fnp.from_dlpack(src), jnp.from_dlpack(src)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        assert float(fnp.sum(ours)) == float(jnp.sum(theirs))
    with pytest.raises(TypeError, match="__dlpack__"):
        fnp.from_dlpack([1, 2])


def test_clip_of_complex_values_names_jax_s_reason() -> None:
    phrase = "Complex values have no ordering and cannot be clipped"
    x = fnp.arange(5, dtype=fnp.complex64)
    for call in (lambda: fnp.clip(x), lambda: fnp.clip(fnp.arange(5), max=-1 + 5j)):
        with pytest.raises(ValueError, match=phrase):
            call()
    with pytest.raises(ValueError, match=phrase):
        jnp.clip(jnp.arange(5, dtype=jnp.complex64))
