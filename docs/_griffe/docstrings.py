"""Griffe extensions for the API reference (loaded by mkdocs.yml).

* :class:`DropForeignDocstrings`. The reference pages load funcgrad by inspection
  (``force_inspection``), because many public functions are made by factories rather
  than written with ``def``, and only the live objects carry their docstrings.
  Inspection gives an attribute the docstring of its value's *type*: ``weak_type =
  False`` would be documented by ``bool``'s docstring, ``float0`` by NumPy's
  ``VoidDType``'s. Those say nothing about the attribute and are removed.
* :class:`PlainRoles`. Some docstrings cross-reference with Sphinx roles
  (``:func:`grad```); mkdocstrings would print them literally, so they become code
  spans (``grad`` in backquotes).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|obj|exc|const):`~?([^`]+)`")


class DropForeignDocstrings(griffe.Extension):
    """Remove an attribute's docstring when it is its value's type's docstring."""

    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        """Called by Griffe for each attribute it loads."""
        if attr.docstring is None or not isinstance(node, griffe.ObjectNode):
            return
        # compared with roles rewritten on both sides: PlainRoles may have run first
        type_doc = _ROLE.sub(r"`\1`", inspect.getdoc(type(node.obj)) or "")
        own_doc = _ROLE.sub(r"`\1`", inspect.cleandoc(attr.docstring.value))
        if own_doc == inspect.cleandoc(type_doc):
            attr.docstring = None


class PlainRoles(griffe.Extension):
    """Turn Sphinx cross-reference roles in docstrings into code spans."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called by Griffe for each object it loads."""
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)
