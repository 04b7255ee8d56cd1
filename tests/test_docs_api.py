"""The API reference (docs/api/*.md, rendered by mkdocstrings) has a page section for
every public namespace, and every page is in mkdocs.yml's nav."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from public_namespaces import NAMESPACES

DOCS = Path(__file__).resolve().parent.parent / "docs"
API = DOCS / "api"


def _rendered() -> set[str]:
    found: set[str] = set()
    for page in API.glob("*.md"):
        found.update(re.findall(r"^::: ([\w.]+)", page.read_text(), flags=re.M))
    return found


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_namespace_has_a_reference_section(namespace):
    assert namespace in _rendered(), f"no '::: {namespace}' in docs/api/*.md"


def test_every_api_page_is_in_the_nav():
    nav = (DOCS.parent / "mkdocs.yml").read_text()
    for page in API.glob("*.md"):
        assert f"api/{page.name}" in nav, f"api/{page.name} is not in mkdocs.yml's nav"


def test_every_funcgrad_section_loads_by_inspection():
    # Griffe loads a package once for every page: one funcgrad section loaded statically
    # (the first page in build order wins) would leave the factory-made functions of
    # funcgrad.numpy and funcgrad.lax without their docstrings on every page.
    for page in API.glob("*.md"):
        text = page.read_text()
        for match in re.finditer(
            r"^::: (funcgrad[\w.]*)\n((?:    .*\n)*)", text + "\n", flags=re.M
        ):
            assert "force_inspection: true" in match.group(2), f"{page.name}: {match.group(1)}"
