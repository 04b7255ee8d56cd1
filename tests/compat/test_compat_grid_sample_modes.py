"""``nn.functional.GRID_SAMPLE_INTERPOLATION_MODES`` and ``GRID_SAMPLE_PADDING_MODES``
against PyTorch 2.13: the enum values ``torch.grid_sampler*`` take (test_nn.py's
``test_grid_sample`` feeds them to ``torch._grid_sampler_2d_cpu_fallback``)."""

from __future__ import annotations

import itertools

from torch_oracle import check, import_real_torch

import compat.torch.nn.functional as CF


def test_mode_tables_match_pytorch():
    F = import_real_torch().nn.functional
    assert CF.GRID_SAMPLE_INTERPOLATION_MODES == F.GRID_SAMPLE_INTERPOLATION_MODES
    assert CF.GRID_SAMPLE_PADDING_MODES == F.GRID_SAMPLE_PADDING_MODES


def test_fallback_with_the_tables_is_grid_sample():
    def scenario(torch, rec):
        F = torch.nn.functional
        x = torch.linspace(-1, 1, 2 * 3 * 4 * 5).view(2, 3, 4, 5)
        g = torch.linspace(-1.2, 1.2, 2 * 3 * 3 * 2).view(2, 3, 3, 2)
        for mode, pad, align in itertools.product(
            ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True)
        ):
            m = F.GRID_SAMPLE_INTERPOLATION_MODES[mode]
            p = F.GRID_SAMPLE_PADDING_MODES[pad]
            rec(torch._grid_sampler_2d_cpu_fallback(x, g, m, p, align))
            rec(F.grid_sample(x, g, mode, pad, align))

    check(scenario)
