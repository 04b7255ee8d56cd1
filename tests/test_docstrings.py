"""Every name the public namespaces export has a docstring.

ruff's D1 rules (configured in pyproject.toml) see only definitions in modules whose
names do not start with "_"; most of funcgrad.numpy, funcgrad.random and funcgrad.nn is
written in such private modules and re-exported, and some functions are generated
rather than written with ``def``. This test reads the exported objects themselves.
"""

from __future__ import annotations

import importlib
import inspect
import types

import pytest
from public_namespaces import NAMESPACES


def _public(mod: types.ModuleType) -> list[str]:
    names = getattr(mod, "__all__", None)
    return list(names) if names is not None else [n for n in dir(mod) if not n.startswith("_")]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_exported_functions_and_classes_have_docstrings(namespace):
    mod = importlib.import_module(namespace)
    missing = []
    for name in _public(mod):
        obj = getattr(mod, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj) or callable(obj)):
            continue
        if isinstance(obj, types.ModuleType):
            continue
        # only what funcgrad defines: re-exported NumPy/ml_dtypes objects (fnp.iinfo,
        # dtype classes) and typing aliases are documented, or not, by their owners
        if not str(getattr(obj, "__module__", "") or "").startswith(("funcgrad", "compat")):
            continue
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(name)
    assert not missing, f"{namespace}: no docstring on {missing}"
