"""The generated "JAX API coverage" page tells the truth about what funcgrad has."""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import jax_coverage  # noqa: E402

PAGE = jax_coverage.PAGE.read_text()
CLAIMED = jax_coverage.page_supported(PAGE)


def test_page_lists_every_namespace():
    assert set(CLAIMED) == set(jax_coverage.NAMESPACES) & set(CLAIMED)
    assert "jax.numpy" in CLAIMED and "jax.lax" in CLAIMED and "jax.random" in CLAIMED


@pytest.mark.parametrize("ns", sorted(CLAIMED))
def test_supported_names_exist(ns):
    """Every name the page calls supported resolves on the namesake funcgrad module."""
    names = CLAIMED[ns]
    if not names:
        return
    mod = importlib.import_module("funcgrad" + ns[len("jax") :])
    missing = [n for n in names if not jax_coverage._has(mod, n)]
    assert not missing, f"docs/jax-coverage.md calls these {ns} names supported: {missing}"


def test_page_parser_reads_what_render_writes():
    """The parser the test relies on recovers the supported lists of a fresh rendering."""
    fresh = jax_coverage.page_supported(jax_coverage.render())
    for ns, sup, _miss, _oos in jax_coverage.survey():
        assert fresh[ns] == sup


def test_callable_names_are_callable():
    """A supported function is a real callable, not a placeholder value."""
    import funcgrad.numpy as fnp

    for n in CLAIMED["jax.numpy"]:
        obj = getattr(fnp, n)
        jobj = getattr(importlib.import_module("jax.numpy"), n)
        if callable(jobj) and not isinstance(jobj, type):
            assert callable(obj), n
