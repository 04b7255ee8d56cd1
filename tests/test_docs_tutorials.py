"""The tutorials under docs/tutorials/ run: each page's ```python blocks are executed in
order, in one namespace, by mktestdocs (their asserts check what the prose claims), so
a page whose code stops working fails the suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mktestdocs import check_md_file, grab_code_blocks

TUTORIALS = Path(__file__).resolve().parent.parent / "docs" / "tutorials"
PAGES = sorted(TUTORIALS.glob("*.md"))


def test_every_tutorial_is_in_the_nav():
    nav = (TUTORIALS.parent.parent / "mkdocs.yml").read_text()
    assert PAGES, "no tutorial pages found"
    for page in PAGES:
        assert f"tutorials/{page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_tutorial_opens_with_what_the_reader_will_be_able_to_do(page):
    text = page.read_text()
    first_paragraph = re.split(r"\n\s*\n", text.split("\n", 1)[1].strip(), maxsplit=1)[0]
    assert first_paragraph.startswith("By the end of this page you will be able to"), page.name


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_tutorial_runs(page):
    assert grab_code_blocks(page.read_text(), lang="python"), f"{page.name} has no code"
    check_md_file(page, memory=True)


def test_debugging_page_has_an_example_of_each_tool():
    code = "\n".join(grab_code_blocks((TUTORIALS / "debugging.md").read_text(), lang="python"))
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
