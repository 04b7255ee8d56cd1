"""``nn.Sequential``'s ``*``, ``*=``, ``+=``, ``pop``, ``insert`` checks and ``nn.ModuleList``'s
``+``/``pop``, against PyTorch 2.13: the same keys holding the same modules (by position
in the list of modules built), the same errors."""

from __future__ import annotations

from typing import Any

import pytest

from compat.torch import nn as cnn

torch = pytest.importorskip("torch")
tnn = torch.nn


def _layout(container: Any, made: list[Any]) -> list[tuple[str, int]]:
    """``(key, index of the module in made)`` for each entry of the container."""
    return [
        (k, next(i for i, m in enumerate(made) if m is v)) for k, v in container._modules.items()
    ]


def _both(build: Any) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    out = []
    for nn in (cnn, tnn):
        made = [nn.Linear(i + 1, i + 2) for i in range(3)]
        out.append(_layout(build(nn, made), made))
    return out[0], out[1]


@pytest.mark.parametrize(
    "build",
    [
        lambda nn, m: nn.Sequential(*m) * 2,
        lambda nn, m: 3 * nn.Sequential(*m),
        lambda nn, m: _imul(nn.Sequential(*m), 2),
        lambda nn, m: _imul(_imul(nn.Sequential(*m[:2]), 2), 2),
        lambda nn, m: _iadd(nn.Sequential(*m[:2]), nn.Sequential(m[2])),
        lambda nn, m: _pop(nn.Sequential(*m), 1),
        lambda nn, m: _pop(nn.Sequential(*m), -1),
        lambda nn, m: _pop(nn.Sequential(*m), slice(0, 2)),
        lambda nn, m: nn.Sequential(*m[:2]).insert(-1, m[2]),
        lambda nn, m: nn.ModuleList(m[:2]) + nn.ModuleList(m[1:]),
        lambda nn, m: nn.ModuleList(m[:1]) + m[1:],
        lambda nn, m: _pop(nn.ModuleList(m), 0),
    ],
)
def test_same_modules_under_the_same_keys(build: Any) -> None:
    ours, ref = _both(build)
    assert ours == ref


def _imul(s: Any, k: int) -> Any:
    same = s
    s *= k
    assert s is same  # in place
    return s


def _iadd(s: Any, other: Any) -> Any:
    same = s
    s += other
    assert s is same
    return s


def _pop(c: Any, key: Any) -> Any:
    before = list(c)
    got = c.pop(key)
    expected = before[key]
    if isinstance(key, slice):
        assert list(got) == expected
    else:
        assert got is expected
    return c


def _error(fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value).replace("compat.torch", "torch")


@pytest.mark.parametrize(
    "bad",
    [
        lambda nn: nn.Sequential(nn.ReLU()) * 0,
        lambda nn: nn.Sequential(nn.ReLU()) * -2,
        lambda nn: _imul(nn.Sequential(nn.ReLU()), 0),
        lambda nn: nn.Sequential(nn.ReLU()) * 1.5,
        lambda nn: nn.Sequential(nn.ReLU()).insert(1, [nn.ReLU()]),
        lambda nn: nn.Sequential(nn.ReLU()).insert(-3, nn.ReLU()),
        lambda nn: _iadd(nn.Sequential(nn.ReLU()), [nn.ReLU()]),
    ],
)
def test_errors(bad: Any) -> None:
    ours, ref = _error(lambda: bad(cnn)), _error(lambda: bad(tnn))
    assert ours[0] is ref[0]
    # messages name the class; compat's module path differs from torch's
    norm = [m.replace("torch.nn.modules.module.Module", "M").replace(
        "torch.nn.modules.container.Sequential", "S") for m in (ours[1], ref[1])]  # fmt: skip
    assert norm[0] == norm[1]
