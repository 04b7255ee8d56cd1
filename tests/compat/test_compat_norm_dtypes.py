"""``linalg.vector_norm``, ``linalg.norm`` and ``torch.norm`` with ``dtype=`` as PyTorch
2.13: an integer input, a non-float ``dtype``, a ``dtype`` of the other kind (complex for a
real input or real for a complex one) and a narrowing ``dtype`` are its RuntimeErrors in its
words (compat computed in the given dtype); accepted forms give PyTorch's dtypes and values."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_IN = ["float16", "float32", "float64", "int64", "complex64", "complex128"]
_TO = [None, "float16", "bfloat16", "float32", "float64", "int64", "complex64", "complex128"]
_FORMS = {
    "vector_norm": lambda lib, x, d: lib.linalg.vector_norm(x, dtype=d),
    "linalg.norm": lambda lib, x, d: lib.linalg.norm(x, dtype=d),
    "torch.norm": lambda lib, x, d: lib.norm(x, dtype=d) if d is not None else lib.norm(x),
}


def _run(lib, form, xd, d):
    x = lib.tensor(np.array([[1.5, -2.0], [0.25, 3.0]])).to(getattr(lib, xd))
    try:
        r = _FORMS[form](lib, x, None if d is None else getattr(lib, d))
    except RuntimeError as e:
        return ("error", str(e))
    return ("ok", str(r.dtype).split(".")[-1], float(r.double()))


@pytest.mark.parametrize("form", sorted(_FORMS))
@pytest.mark.parametrize("xd", _IN)
@pytest.mark.parametrize("d", _TO)
def test_norm_dtype_as_pytorch(form, xd, d):
    got, want = _run(ctorch, form, xd, d), _run(torch, form, xd, d)
    assert got[:2] == want[:2]
    if want[0] == "ok":
        np.testing.assert_allclose(got[2], want[2], rtol=2e-3)
