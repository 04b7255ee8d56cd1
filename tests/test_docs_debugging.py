"""The examples of docs/debugging.md run, in order, in one namespace (their asserts
check the answers the page shows), so the page cannot rot."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "debugging.md"


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


def test_page_has_an_example_of_each_tool():
    code = "\n".join(_blocks())
    for name in (
        "nans",
        "explain_recompiles",
        "saved_residuals",
        "cost",
        ".lower(",
        ".compile()",
        "chunk_size",
        "to_dot",
        "breakpoint(",
    ):
        assert name in code, name


def test_page_examples_run(capsys):
    ns: dict = {"__name__": "docs_debugging"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for block in _blocks():
            exec(compile(block, str(PAGE), "exec"), ns)
    out = capsys.readouterr().out
    assert "`log` produced -inf" in out and "derivative of `sqrt`" in out
    assert "total:" in out and "flops" in out
