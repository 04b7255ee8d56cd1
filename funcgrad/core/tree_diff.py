"""Describe how two pytrees differ, in the words JAX's errors use.

``structure_differences(a, b)`` walks two pytrees of different structure and lists,
for each place they first disagree, the key path, what each side is there and why
they differ (Python types, lengths, numbers of children, node metadata). Loops and
transforms use it to say *where* a carry or a tangent changed structure, not only that
it did.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jax import tree_util

__all__ = [
    "bullet_list",
    "structure_differences",
    "structure_differences_of_trees",
    "type_mismatch_reason",
    "typed_tree",
]


class _LeafType(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class _Leaf(metaclass=_LeafType):
    """A stand-in for the leaves of a treedef, described as ``pytree leaf``."""


def _is_leaf(x: Any) -> bool:
    return tree_util.treedef_is_leaf(tree_util.tree_structure(x)) and not isinstance(
        x, (list, tuple, dict)
    )


def _children(x: Any) -> tuple[list[Any], list[Any], Any]:
    """(child keys, children, node metadata) of one pytree node."""
    with_path, _ = tree_util.tree_flatten_with_path(x, is_leaf=lambda y: y is not x)
    keys = [p[0] for p, _ in with_path]
    kids = [c for _, c in with_path]
    _, tree = tree_util.tree_flatten(x, is_leaf=lambda y: y is not x)
    meta = tree.node_data()[1] if tree.node_data() is not None else None
    return keys, kids, tuple(meta) if isinstance(meta, list) else meta


def _count(x: Any, n: int) -> str:
    return f"{type(x)} with {n} child{'ren' if n > 1 else ''}"


def _walk(path: tuple, a: Any, b: Any) -> Iterator[tuple[tuple, str, str, str]]:
    if _is_leaf(a) and _is_leaf(b):
        return
    if type(a) is not type(b):
        yield path, str(type(a)), str(type(b)), "their Python types differ"
        return
    if isinstance(a, (list, tuple)) and len(a) != len(b):
        name = type(a).__name__
        yield (
            path,
            f"{name} of length {len(a)}",
            f"{name} of length {len(b)}",
            "the lengths do not match",
        )
        return
    ka, ca, ma = _children(a)
    kb, cb, mb = _children(b)
    if len(ca) != len(cb):
        why = "the numbers of children do not match"
        try:
            diff = " ".join(repr(getattr(k, "key", k)) for k in set(ka) ^ set(kb))
        except TypeError:
            diff = ""
        if diff:
            why += f", with the symmetric difference of key sets: {{{diff}}}"
        yield path, _count(a, len(ca)), _count(b, len(cb)), why
        return
    if ma != mb:
        yield (
            path,
            f"{type(a)} with pytree metadata {ma}",
            f"{type(b)} with pytree metadata {mb}",
            "the pytree node metadata does not match",
        )
        return
    for k, x, y in zip(ka, ca, cb):
        yield from _walk((*path, k), x, y)


def structure_differences(a: Any, b: Any) -> list[tuple[str, str, str, str]]:
    """Where pytrees ``a`` and ``b`` differ: ``(keystr path, what a is, what b is, why)``
    for each place, outermost first."""
    return [(tree_util.keystr(p), x, y, why) for p, x, y, why in _walk((), a, b)]


def structure_differences_of_trees(a: Any, b: Any) -> list[tuple[str, str, str, str]]:
    """:func:`structure_differences` of two treedefs."""
    leaf = _Leaf()
    return structure_differences(
        tree_util.tree_unflatten(a, [leaf] * a.num_leaves),
        tree_util.tree_unflatten(b, [leaf] * b.num_leaves),
    )


def type_mismatch_reason(a: Any, b: Any) -> str:
    """``", so the dtypes do not match, and the shapes do not match"`` for two avals."""
    why = []
    if a.dtype != b.dtype:
        why.append("the dtypes do not match")
    if a.shape != b.shape:
        why.append("the shapes do not match")
    if not why:
        return ""
    if len(why) == 1:
        return ", so " + why[0]
    return ", so " + ", ".join(why[:-1]) + ", and " + why[-1]


def bullet_list(items: list[str]) -> str:
    """One item as a capitalised sentence, several as ``  * item;`` lines (the last
    ending with a period)."""
    if len(items) == 1:
        s = items[0]
        return s[:1].upper() + s[1:] + ".\n"
    return "".join(f"  * {d};\n" for d in items[:-1]) + f"  * {items[-1]}.\n"


class _Shown:
    """A value's type as JAX prints a tree of types: ``~float32[]`` alone (``~`` for a
    weak type), ``ShapedArray(float32[], weak_type=True)`` inside a container."""

    def __init__(self, a: Any) -> None:
        self.a = a

    def _short(self) -> str:
        return f"{self.a.dtype.name}[{','.join(map(str, self.a.shape))}]"

    def __str__(self) -> str:
        return ("~" if self.a.weak_type else "") + self._short()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.a.weak_type else ""
        return f"ShapedArray({self._short()}{weak})"


def typed_tree(tree: Any, avals: list[Any]) -> str:
    """The structure ``tree`` with its leaves' avals ``avals``, as JAX prints a tree of
    types (``float32[3]``; ``(ShapedArray(float32[]), None)``)."""
    return str(tree_util.tree_unflatten(tree, [_Shown(a) for a in avals]))
