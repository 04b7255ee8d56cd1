"""The keyword names of ``torch.special``'s hand-written functions (those not in the op
table: Bessel and Airy functions, orthogonal polynomials, ``zeta``, ``erfcx``,
``polygamma``, ``multigammaln``, ``round``) against real PyTorch.

Each function's tensor argument is passed by keyword under PyTorch's name (``input`` or
``x``: PyTorch names it ``x`` for some) and NumPy's (``x``, ``a``, ``x1``; ``x2`` for
``other``): where PyTorch accepts the call compat must give its values, where it refuses
compat must raise its ``TypeError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch
import compat.torch.special as cspecial
from compat._core.optable import REGISTRY

#: the functions of ``torch.special`` that are not op-table rows (those are tested by
#: test_compat_numpy_names.py), with their arguments besides the tensor
_TABLE = {d.name.rpartition(".")[2] for d in REGISTRY.values() if d.module == "special"}
_EXTRA = {"polygamma": ((1,), {}), "multigammaln": ((), {"p": 1}), "zeta": ((), {"other": 2.0})}
NAMES = sorted(
    n
    for n in dir(cspecial)
    if not n.startswith("_") and callable(getattr(cspecial, n)) and n not in _TABLE
)
CASES = [
    pytest.param(n, k, id=f"{n}-{k}") for n in NAMES for k in ("input", "x", "a", "x1", "self")
]


def _extra(name):
    if "polynomial" in name:
        return (), {"n": 2}
    return _EXTRA.get(name, ((), {}))


def _run(lib, name, keyword):
    x = lib.tensor([0.25, 1.5, 3.0], dtype=lib.float64)
    args, kwargs = _extra(name)
    return getattr(lib.special, name)(*args, **kwargs, **{keyword: x})


def test_the_hand_written_functions_are_found():
    assert {"airy_ai", "bessel_j0", "chebyshev_polynomial_t", "zeta", "erfcx"} <= set(NAMES)


@pytest.mark.parametrize(("name", "keyword"), CASES)
def test_special_keyword_matches_pytorch(name, keyword, real_torch):
    try:
        theirs = _run(real_torch, name, keyword)
    except TypeError:
        with pytest.raises(TypeError):
            _run(ctorch, name, keyword)
        return
    ours = _run(ctorch, name, keyword)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-8, err_msg=name)


@pytest.mark.parametrize("keyword", ["other", "x2"])
def test_zeta_other_keyword_matches_pytorch(keyword, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        q = lib.tensor([0.5, 1.5], dtype=lib.float64)
        results.append(lib.special.zeta(2.0, **{keyword: q}).numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10)
