"""Fixtures for the compat tests.

``lib`` runs a scenario twice: on ``compat.torch`` and, where it is installed, on
real PyTorch as an oracle (skipped with a reason otherwise; set
``COMPAT_REQUIRE_TORCH=1`` to turn the skip into a failure, as CI does when it
could install torch). ``real_torch`` is PyTorch alone (the same skip), ``torch`` is
``compat.torch``. The plain helpers these files share are in ``torch_oracle.py``.
"""

from __future__ import annotations

import os

import jax
import pytest
from torch_oracle import import_real_torch

import compat.lazy
import compat.torch as ctorch

#: ``COMPAT_LAZY=1`` runs every compat test with lazy execution on (CI runs eager; the
#: lazy tests in test_compat_lazy.py run both)
LAZY = os.environ.get("COMPAT_LAZY") == "1"


@pytest.fixture(autouse=True)
def _x64_as_a_user_has_it():
    """Run each compat test as a user's program runs: JAX's x64 mode off process-wide
    (the root conftest turns it on for funcgrad's tests), so every compat path that
    reaches JAX outside compat's thread-local x64 scope truncates to 32 bits and fails."""
    jax.config.update("jax_enable_x64", False)
    if LAZY:
        compat.lazy.set_default(True)
    try:
        yield
    finally:
        if LAZY:
            compat.lazy.set_default(False)
        jax.config.update("jax_enable_x64", True)


@pytest.fixture(params=["compat", "torch"])
def lib(request):
    """``compat.torch`` or real ``torch``: the same scenario runs on both."""
    if request.param == "compat":
        return ctorch
    return import_real_torch()


@pytest.fixture
def real_torch():
    """Real PyTorch, the oracle (``torch_oracle.import_real_torch``: skipped without it)."""
    return import_real_torch()


@pytest.fixture
def torch():
    """``compat.torch``."""
    return ctorch
