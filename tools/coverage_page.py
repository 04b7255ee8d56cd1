"""The command line of the coverage-page tools (``jax_coverage.py``, ``torch_coverage.py``).

Both render a Markdown page from the code and either write it or, with ``--check``, say
whether the committed page is current; this is that command line, written once.
"""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable


def page_main(
    argv: list[str] | None, *, doc: str | None, page: pathlib.Path, render: Callable[[], str]
) -> int:
    """Write ``render()`` to ``page`` (printing its ``In all`` line), or with ``--check``
    exit 1 if ``page`` differs from it. ``doc``'s first line describes the command."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = ap.parse_args(argv)
    text = render()
    name = f"docs/{page.name}"
    if args.check:
        current = page.exists() and page.read_text() == text
        print(f"{name} is " + ("current" if current else "out of date"))
        return 0 if current else 1
    page.write_text(text)
    print(next(line for line in text.splitlines() if line.startswith("In all")))
    return 0
