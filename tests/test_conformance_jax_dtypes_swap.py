"""The JAX runner's ``jax._src.dtypes`` under the swap: the scalar types and dtype lists
test files build their cases from at import (``dtypes.float8_e4m3fn``,
``dtypes._jax_types + dtypes._weak_types``) and the dtype helpers of their NumPy
references (``to_complex_dtype``), checked against JAX 0.10.2's own module."""

from __future__ import annotations

import pathlib
import textwrap

import jax._src.dtypes as jax_dtypes
import ml_dtypes
import numpy as np
import pytest

from tools.conformance.common import compare_file
from tools.conformance.shims import jax_dtype_util

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    ml_dtypes.bfloat16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("name", ["to_inexact_dtype", "to_floating_dtype", "to_complex_dtype"])
def test_dtype_helpers_as_jax(name: str, dtype: type) -> None:
    assert getattr(jax_dtype_util, name)(dtype) == getattr(jax_dtypes, name)(dtype)


MODULE = """
from absl.testing import absltest
import numpy as np
import jax.numpy as jnp
from jax._src import dtypes
from jax._src import test_util as jtu

FP8 = [np.dtype(dtypes.float8_e4m3fn), np.dtype(dtypes.float8_e5m2)]
ALL = dtypes._jax_types + dtypes._weak_types


class Dt(jtu.JaxTestCase):
    def testImportTimeLists(self):
        self.assertIn(np.dtype(np.float32), ALL)
        self.assertIn(float, ALL)
        self.assertEqual(FP8[0].itemsize, 1)

    def testReference(self):
        x = np.array([1.0, -3.0, 2.0], np.float32)
        want = np.roots(x).astype(dtypes.to_complex_dtype(x.dtype))
        self.assertAllClose(jnp.roots(x), want, check_dtypes=True, rtol=1e-5)


if __name__ == "__main__":
    absltest.main()
"""


def test_module_using_jax_src_dtypes_loads_and_passes(tmp_path: pathlib.Path) -> None:
    from tools.conformance.run_jax import OUT_OF_SCOPE

    path = tmp_path / "tiny_dtypes_test.py"
    path.write_text(textwrap.dedent(MODULE))
    env = {"JAX_NUM_GENERATED_CASES": "1", "JAX_PLATFORMS": "cpu"}
    res = compare_file("jax", path, 1, 60.0, OUT_OF_SCOPE, env, parallel=False)
    assert set(res.upstream) == set(res.swapped) == {"Dt.testImportTimeLists", "Dt.testReference"}
    for rid, rec in res.swapped.items():
        assert rec["outcome"] == "pass", (rid, rec)
    assert not res.out_of_scope
