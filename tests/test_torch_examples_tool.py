"""tools/torch_examples.py's machinery on a tiny self-written training script."""

from __future__ import annotations

import sys
import tarfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import torch_examples as tx
from tools import torch_examples_steps as steps

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


def test_steps_on_toy_script(tmp_path: Path) -> None:
    """The step recorder sees every backward under both libraries, the weights included."""
    (tmp_path / "toy.py").write_text(TOY)
    prog = tx.Program("toy", "local", "toy.py", ["--steps", "12"])
    cmp = steps.run_both(prog, tmp_path, tmp_path / "runs", steps=5, timeout=120, grads=True)
    assert (cmp.rc_torch, cmp.rc_compat) == (0, 0)
    assert cmp.steps_torch == cmp.steps_compat == 6  # steps 0-5: the 6th backward stops it
    assert cmp.first_over is None and cmp.max_rel < 1e-5, steps.detail(cmp)
    rec = steps.read_trace(tmp_path / "runs" / "toy" / "torch.trace")
    assert [p["shape"] for p in rec[0]["params"]] == [(1, 1), (1,)]
    assert rec[0]["loss"] > rec[5]["loss"] and "grads" in rec[0]
    assert steps.same(cmp) and "| toy | 6 / 6 | none |" in steps.table([cmp])


def _rec(k: int, loss: float, w: list[float]) -> dict:
    return {"k": k, "loss": loss, "params": [{"shape": (len(w),), "values": np.array(w)}]}


def test_steps_compare_finds_the_first_difference() -> None:
    a = [_rec(0, 1.0, [1.0, 2.0]), _rec(1, 0.5, [1.1, 2.0]), _rec(2, 0.25, [1.2, 2.0])]
    b = [_rec(0, 1.0, [1.0, 2.0]), _rec(1, 0.5, [1.1, 2.0 + 1e-9]), _rec(2, 0.25, [1.2, 2.1])]
    cmp = steps.compare("x", a, b, tol=1e-3)
    assert cmp.first_over == 2
    assert cmp.steps[1].weight_rel == pytest.approx(1e-9 / 2.0, rel=1e-3)
    assert cmp.steps[2].weight_rel == pytest.approx(0.1 / 2.1) and cmp.steps[2].worst_param == 0
    short = steps.compare("y", a, a[:2])
    assert short.first_over == 2 and "step counts differ" in short.note
    other = [{"k": 0, "loss": 1.0, "params": []}]
    assert steps.compare("z", a[:1], other).note.startswith("parameters differ")
    assert steps.rel(float("nan"), float("nan")) == 0.0 and steps.rel(1.0, float("nan")) == float(
        "inf"
    )


def test_cora_setup_and_requests_stand_in(tmp_path, monkeypatch):
    """The gcn/gat data: Cora's file formats, and the ``requests`` stand-in serving the
    archive the gcn example downloads (and refusing any URL it has no file for)."""
    tx._setup_cora(tmp_path, tmp_path)
    rows = (tmp_path / "cora" / "cora.content").read_text().splitlines()
    assert len(rows) == 2000 and all(len(r.split("\t")) == 502 for r in rows[:5])
    ids = {r.split("\t")[0] for r in rows}
    cites = [ln.split("\t") for ln in (tmp_path / "cora" / "cora.cites").read_text().splitlines()]
    assert len(cites) == 4000 and all(a in ids and b in ids for a, b in cites)
    monkeypatch.syspath_prepend(str(tx.SHIMS))
    monkeypatch.delitem(sys.modules, "requests", raising=False)
    import requests

    assert requests.__file__.startswith(str(tx.SHIMS))
    monkeypatch.chdir(tmp_path)
    with (
        requests.get("https://example.org/x/cora.tgz", stream=True) as got,
        tarfile.open(fileobj=got.raw, mode="r:gz") as tgz,
    ):
        assert "cora/cora.content" in tgz.getnames()
    with pytest.raises(requests.ConnectionError, match="no network"):
        requests.get("https://example.org/other.tgz")
    monkeypatch.delitem(sys.modules, "requests")
