"""One configuration: every knob is an option of funcgrad.config, documented in one
table (docs/configuration.md), and every cache answers to fg.clear_caches()."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import compat.lazy
import compat.torch as torch
import funcgrad as fg
import funcgrad.debug  # (registers debug_nans, debug_recompiles)
from compat._core import assemble
from funcgrad import _compat_contract
from funcgrad.core import compile_cache

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def _documented() -> dict[str, str]:
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| `([^`]*)`", DOC.read_text(), re.M)
    return dict(rows)


def test_the_docs_table_lists_every_option_with_its_default():
    options = fg.config.options()
    documented = _documented()
    assert set(documented) == set(options), (
        f"undocumented: {sorted(set(options) - set(documented))}; "
        f"documented but gone: {sorted(set(documented) - set(options))}"
    )
    for name, (value, doc) in options.items():
        assert documented[name] == repr(value), name
        assert doc


@pytest.mark.parametrize(
    "name,obj,attr,value",
    [
        ("funcgrad_eager_compile_after", compile_cache.POLICY, "compile_after", 7),
        ("funcgrad_tier_compile_host_ms", compile_cache.POLICY, "tier_compile_host_ms", 3),
        ("compat_lazy_max_pending", compat.lazy.POLICY, "max_pending", 99),
        ("compat_backward_max_nodes", assemble.policy, "max_nodes", 12),
        ("compat_max_traced_functions", _compat_contract, "MAX_TRACED_FUNCTIONS", 5),
    ],
)
def test_options_set_and_read_their_attribute(name, obj, attr, value):
    before = getattr(obj, attr)
    try:
        fg.config.update(name, value)
        assert getattr(obj, attr) == value and fg.config.read(name) == value
        assert type(getattr(obj, attr)) is type(before)  # 3 -> 3.0 for a float option
        setattr(obj, attr, before)  # the attribute is the one storage
        assert fg.config.read(name) == before
    finally:
        setattr(obj, attr, before)


@pytest.mark.parametrize(
    "name,value,exc",
    [
        ("funcgrad_eager_compile_after", "4", TypeError),
        ("funcgrad_eager_compile_after", True, TypeError),
        ("funcgrad_tier_eager_binds", 1, TypeError),
        ("funcgrad_eager_tier", "fast", ValueError),
        ("compat_backward_assemble", "sometimes", ValueError),
        ("funcgrad_eager_compiler_options", ["x"], TypeError),
    ],
)
def test_bad_values_are_refused_naming_the_option(name, value, exc):
    before = fg.config.read(name)
    with pytest.raises(exc, match=name.split("_")[-1] if exc is ValueError else name):
        fg.config.update(name, value)
    assert fg.config.read(name) == before


def test_unknown_option_names_funcgrads_options():
    with pytest.raises(AttributeError, match="funcgrad_eager_tier"):
        fg.config.update("funcgrad_no_such_option", 1)


def test_clear_caches_reaches_the_optimizers_programs():
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.Adam([p], lr=0.1)
    p.grad = torch.tensor(np.full(3, 0.5, np.float32))
    opt.step()  # a first step runs on NumPy (compat/torch/optim/_cold.py): no program
    opt.step()
    assert fg.cache_info().kinds.get("optim_adam_programs", 0) >= 1
    compile_cache.clear()  # what fg.clear_caches() empties of funcgrad's (it adds JAX's)
    assert fg.cache_info().kinds["optim_adam_programs"] == 0
    opt.step()  # traced again after the clear, same behaviour
    assert np.all(np.asarray(p.detach().numpy()) < 1.0)
