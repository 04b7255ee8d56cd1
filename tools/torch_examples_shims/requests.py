"""A stand-in for ``requests`` in example runs: no network. ``get(url)`` serves the file of
the URL's name from ``_downloads/`` in the run's directory (``TORCH_EXAMPLES_DOWNLOADS``
names another), which the program's setup in ``tools/torch_examples.py`` made; any other
URL raises ``ConnectionError``. Only what PyTorch's examples use: ``get(url, stream=True)``
as a context manager, ``.raw``, ``.content``, ``.status_code``, ``raise_for_status()``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse


class ConnectionError(OSError):
    """No file was made for this URL (the stand-in never reaches the network)."""


class Response:
    """A served file: ``raw`` is the open file, ``content`` its bytes."""

    def __init__(self, path: Path) -> None:
        self.raw = open(path, "rb")  # noqa: SIM115  (closed by ``close``/``with``)
        self.status_code = 200

    @property
    def content(self) -> bytes:
        return self.raw.read()

    def raise_for_status(self) -> None:
        """Nothing to raise: a served file is a success."""

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def get(url: str, **kwargs: Any) -> Response:
    """The file named by ``url``'s last path component, from the downloads folder."""
    folder = Path(os.environ.get("TORCH_EXAMPLES_DOWNLOADS", "_downloads"))
    path = folder / Path(urlparse(url).path).name
    if not path.is_file():
        raise ConnectionError(f"no network in example runs, and no {path} made for {url}")
    return Response(path)
