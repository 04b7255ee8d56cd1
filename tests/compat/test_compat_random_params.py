"""The in-place samplers refuse parameters out of range with PyTorch 2.13's errors
(compat drew values from them, or divided by zero); the extremes PyTorch accepts still
draw."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

BAD: dict[str, Callable[[Any], Any]] = {
    "exponential_negative": lambda t: t.empty(3).exponential_(-0.5),
    "exponential_zero": lambda t: t.empty(3).exponential_(0),
    "cauchy_zero_sigma": lambda t: t.empty(3).cauchy_(0.0, 0.0),
    "cauchy_negative_sigma": lambda t: t.empty(3).cauchy_(0.0, -1.0),
    "geometric_zero": lambda t: t.empty(3).geometric_(0),
    "geometric_above_one": lambda t: t.empty(3).geometric_(1.5),
    "bernoulli_above_one": lambda t: t.empty(3).bernoulli_(1.5),
    "log_normal_zero_std": lambda t: t.empty(3).log_normal_(std=0),
    "normal_negative_std": lambda t: t.empty(3).normal_(std=-1),
    "uniform_reversed": lambda t: t.empty(3).uniform_(2, 1),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_parameters_out_of_range(name: str) -> None:
    with pytest.raises(RuntimeError) as want:
        BAD[name](torch)
    with pytest.raises(RuntimeError) as got:
        BAD[name](ctorch)
    assert str(got.value) == str(want.value)


EXTREMES: dict[str, Callable[[Any], Any]] = {
    "exponential_inf": lambda t: t.empty(2).exponential_(float("inf")),
    "normal_zero_std": lambda t: t.empty(2).normal_(3.0, 0.0),
    "uniform_empty_range": lambda t: t.empty(2).uniform_(1.0, 1.0),
    "bernoulli_one": lambda t: t.empty(2).bernoulli_(1.0),
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_extremes_still_draw(name: str) -> None:
    assert EXTREMES[name](ctorch).tolist() == EXTREMES[name](torch).tolist()
