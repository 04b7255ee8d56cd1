"""``import funcgrad`` moves the objects its imports left alive out of Python's full
garbage collections (funcgrad.core.gc_freeze), unless the environment says not to."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = """
import gc
import funcgrad as fg
frozen = gc.get_freeze_count()
fg.config.update("funcgrad_gc_freeze", False)
print(frozen, gc.get_freeze_count(), fg.config.read("funcgrad_gc_freeze"))
"""


@pytest.mark.parametrize("env,on", [(None, True), ("0", False), ("off", False), ("1", True)])
def test_import_freezes_unless_told_not_to(env, on):
    environ = dict(os.environ)
    environ.pop("FUNCGRAD_GC_FREEZE", None)
    if env is not None:
        environ["FUNCGRAD_GC_FREEZE"] = env
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=environ, capture_output=True, text=True, check=True
    ).stdout.split()
    frozen, after, option = int(out[0]), int(out[1]), out[2]
    if on:
        assert frozen > 10_000  # JAX's and NumPy's modules, classes and functions at least
    else:
        assert frozen == 0
    assert after == 0 and option == "False"  # turning the option off unfreezes
