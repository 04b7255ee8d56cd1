"""The JAX runner's out-of-scope table on test ids: accelerator tests by name, but not
tests whose names merely contain the letters (``test_wrong_output_type``), and the
classes of random_lax_test that run JAX's RBG key implementations."""

from __future__ import annotations

import re

import pytest

from tools.conformance.run_jax import OUT_OF_SCOPE


def _reasons(test_id: str) -> list[str]:
    return [why for pattern, why in OUT_OF_SCOPE if re.search(pattern, test_id)]


@pytest.mark.parametrize(
    "test_id",
    ["T.testOnTpu", "T.test_tpu_only", "T.test_skip_on_tpu", "T.testGPU", "T.test_cuda_array"],
)
def test_accelerator_tests_are_out_of_scope(test_id: str) -> None:
    assert _reasons(test_id) == ["accelerators"]


@pytest.mark.parametrize(
    "test_id",
    [
        "VectorizeTest.test_wrong_output_type",
        "VectorizeTest.test_inconsistent_output_size",
        "T.test_throughput",
    ],
)
def test_words_containing_tpu_are_in_scope(test_id: str) -> None:
    assert _reasons(test_id) == []


@pytest.mark.parametrize("test_id", ["RBGPRNGTest.testRngUniform0", "UnsafeRBGPRNGTest.test_split"])
def test_rbg_key_classes_are_typed_keys(test_id: str) -> None:
    assert _reasons(test_id) == ["typed PRNG keys"]
