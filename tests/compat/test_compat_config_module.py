"""``torch.__config__``: ``show()``, ``parallel_info()`` and ``_cxx_flags()`` return text
as PyTorch's do (compat had no such module), naming compat's own build and threads."""

from __future__ import annotations

import jax
import pytest

import compat.torch as ctorch
import funcgrad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["show", "parallel_info", "_cxx_flags"])
def test_text_as_pytorch(name):
    assert isinstance(getattr(torch.__config__, name)(), str)
    assert isinstance(getattr(ctorch.__config__, name)(), str)


def test_show_names_the_versions():
    text = ctorch.__config__.show()
    assert f"funcgrad {funcgrad.__version__}" in text
    assert f"JAX {jax.__version__}" in text
    assert jax.default_backend() in text


def test_parallel_info_follows_set_num_threads():
    before = ctorch.get_num_threads()
    try:
        ctorch.set_num_threads(3)
        assert "torch.get_num_threads() : 3" in ctorch.__config__.parallel_info()
    finally:
        ctorch.set_num_threads(before)
    assert f"torch.get_num_threads() : {before}" in ctorch.__config__.parallel_info()
