"""tools/torch_examples.py's machinery on a tiny self-written training script."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import torch_examples as tx

pytest.importorskip("torch")

TOY = textwrap.dedent(
    """
    import argparse

    import torch
    import torch.nn as nn
    import torch.optim as optim

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    print("torch module:", torch.__name__)
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 32).view(-1, 1)
    y = 3 * x + 1
    model = nn.Linear(1, 1)
    opt = optim.SGD(model.parameters(), lr=0.5)
    for step in range(args.steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    print(f"final loss: {loss.item():.6f}")
    """
)


def test_pair_on_toy_script(tmp_path: Path) -> None:
    (tmp_path / "toy.py").write_text(TOY)
    prog = tx.Program("toy", "local", "toy.py", ["--steps", "12"])
    pair = tx.run_pair(prog, tmp_path, tmp_path / "runs", timeout=120)
    for run in (pair.torch, pair.compat):
        assert run.rc == 0, run.error
        assert run.wall_s > 0
        assert run.step_kind == "step" and run.n_steps == 12
        assert run.steady_step_s is not None and run.first_step_s is not None
        assert run.final_loss is not None and run.final_loss < 0.5
    assert pair.ratio is not None and pair.ratio > 0
    assert pair.step_ratio is not None and pair.step_ratio > 0
    assert pair.loss_agree is True
    out = (Path(pair.compat.log) / "_stdout.txt").read_text()
    assert "torch module: compat.torch" in out
    assert "torch module: torch" in (Path(pair.torch.log) / "_stdout.txt").read_text()
    text = tx.table([pair])
    assert "| toy |" in text and "median" in text


def test_failure_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import sys\nsys.exit('failing on purpose')\n")
    run = tx.run_program(tx.Program("bad", "local", "bad.py"), "compat", tmp_path, tmp_path / "w")
    assert run.rc == 1 and run.error == "failing on purpose"
    pair = tx.Pair("bad", tx.Run("torch", 0, 1.0), run)
    assert "compat failed: failing on purpose" in tx.table([pair])


def test_helpers() -> None:
    assert tx.steady_step([0.0, 1.0, 2.0]) is None
    assert tx.steady_step([0.0, 5.0, 6.0, 7.0, 8.0]) == 1.0
    assert tx.last_loss("loss: 2.5\nTest loss 1e-3 ok", tx.LOSS_RE) == pytest.approx(1e-3)
    assert tx.last_loss("Loss_D: 1.0 Loss_G: 2.0 D(x): 0.5", tx.LOSS_RE) == 2.0
    assert tx.losses_agree(1.0, 1.1) and not tx.losses_agree(1.0, 2.0)
    assert tx.losses_agree(None, 1.0) is None
