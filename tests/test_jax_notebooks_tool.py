"""The notebook runner's cell preparation, text comparison and child process
(``tools/jax_notebooks.py``), on self-made cells: no upstream notebook text."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import jax_notebooks as nb
from tools import jax_notebooks_child as child


def test_prepare_magics() -> None:
    assert nb.prepare("!pip install x")[1] == "skipped"
    assert nb.prepare("%xmode minimal")[1] == "skipped"
    code, kind, why = nb.prepare("%matplotlib inline\ny = 1\ny")
    assert (code, kind) == ("y = 1\ny", "") and "display magic" in why
    code, kind, why = nb.prepare("def f(x):\n  return x\n%timeit -n10 -r3 f(1)")
    assert kind == "scope" and "timings" in why
    assert code.splitlines()[-1] == "f(1)"  # the timed statement runs once
    assert nb.prepare("print(jax.make_jaxpr(f)(1.))")[1] == "scope"
    assert nb.prepare("x.devices()")[1] == "scope"
    assert nb.prepare("x = 1")[1] == ""


def test_load_cells_myst(tmp_path: Path) -> None:
    md = "text\n\n```{code-cell}\n:tags: [raises-exception]\n\nx = 1\n```\n\n```{code-cell} ipython3\ny = 2\n```\n"
    (tmp_path / "n.md").write_text(md)
    assert nb.load_cells(tmp_path / "n.md") == ["x = 1\n", "y = 2\n"]


def test_tokens_and_tolerance() -> None:
    sk1, n1 = nb.tokens("[[1.        2.7182817 ]\n [0. 7.389056 ]] float32 <f at 0x7f12>")
    sk2, n2 = nb.tokens("[[1.        2.718282  ]\n [0. 7.3890557]] float32 <f at 0x55aa>")
    assert sk1 == sk2 and len(n1) == len(n2) == 4
    assert nb.max_rel(n2, n1) <= nb.RTOL
    assert nb.max_rel([1.001], [1.0]) > nb.RTOL
    assert nb.tokens("Epoch 0 in 1.52 sec")[1] == [0.0]  # timings dropped


def _rec(out: str = "", exc: list | None = None) -> dict:
    return {"out": out, "repr": None, "exc": exc, "scope": [], "missing": []}


def test_compare_cell_verdicts() -> None:
    same = nb.compare_cell(0, "", "", "", _rec("1.0\n"), _rec("1.0000001\n"))
    assert same.status == "same"
    diff = nb.compare_cell(0, "", "", "", _rec("1.0\n"), _rec("1.5\n"))
    assert diff.status == "different"
    fg = nb.compare_cell(0, "", "", "", _rec(), _rec(exc=["TypeError", "m", []]))
    assert fg.status == "fg-error"
    both = nb.compare_cell(
        0, "", "", "", _rec(exc=["TypeError", "a", []]), _rec(exc=["TypeError", "b", []])
    )
    assert both.status == "same" and both.reason.startswith("both raise")
    other = nb.compare_cell(
        0, "", "", "", _rec(exc=["TypeError", "a", []]), _rec(exc=["ValueError", "b", []])
    )
    assert other.status == "different"
    ir = nb.compare_cell(0, "", "", "", _rec("{ lambda ; a:f32[]. let b = sin a in (b,) }"), _rec())
    assert ir.status == "scope"
    assert nb.compare_cell(0, "", "", "", None, _rec()).status == "not-reached"


def test_child_runs_cells_in_order(tmp_path: Path) -> None:
    out = tmp_path / "cells.jsonl"
    spec = {
        "mode": "jax",
        "work": str(tmp_path),
        "cells": ["x = 2\nprint('hi')", None, "x * 3", "x;", "raise ValueError('no')"],
        "out": str(out),
        "record": ["x"],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    child.main(str(tmp_path / "spec.json"))
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["i"] for r in recs] == [0, 2, 3, 4]
    assert recs[0]["out"] == "hi\n" and recs[1]["repr"] == "6" and recs[2]["repr"] is None
    assert recs[3]["exc"][0] == "ValueError"
