"""The cut of the recorded graph a backward call runs: which nodes, in what order.

:func:`toposort` orders the nodes reachable from the roots consumers first, without
recursion (graphs of 100,000 nodes); :class:`Plan` keeps those that reach a requested
input (``inputs=`` / ``GradientEdge``) or a leaf to accumulate into, marks which run
and which only hold a captured cotangent, and gives a structural key for the cache of
assembled backward programs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compat._core.graph import AccumulateGrad, Node


def _node(key: Any) -> Node:
    """The node of an edge key (:func:`compat._core.graph.edge_key`)."""
    return key[0] if type(key) is tuple else key


def _indexed(get: Any, key: Any) -> tuple[int, int]:
    """An edge key as ``(position of its node, output_nr)``."""
    if type(key) is tuple:
        return (get(id(key[0])), key[1])
    return (get(id(key)), 0)


def toposort(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each before every node it feeds gradient into."""
    post: list[Node] = []
    seen: set[int] = set()
    mark, done = seen.add, post.append
    for root in roots:
        if id(root) in seen:
            continue
        mark(id(root))
        # each entry: a node and the iterator over its edges, resumed where it stopped
        stack = [(root, iter(root._edges))]
        push, pop = stack.append, stack.pop
        while stack:
            node, edges = stack[-1]
            for e in edges:  # (edge keys: a node, or ``(node, output_nr)``)
                if e is None:
                    continue
                if type(e) is tuple:
                    e = e[0]
                if id(e) not in seen:
                    mark(id(e))
                    push((e, iter(e._edges)))
                    break
            else:
                pop()
                done(node)
    post.reverse()
    return post


class Plan:
    """The cut of the graph: order, nodes that run, nodes that only hold a capture."""

    def __init__(self, roots: Sequence[tuple[Node, int]], inputs: Any, accumulate: bool) -> None:
        topo = toposort([r[0] for r in roots])
        self.captures: dict[int, list[tuple[int, int]]] = {}
        acc: set[int] = set()
        if inputs is None:  # (the common ``backward()``: one pass over the nodes)
            self.runs: set[int] | None = None
            self.topo, self.acc = topo, acc
            hooks = python = False
            for n in topo:
                if n._entry is None:
                    if isinstance(n, AccumulateGrad):
                        acc.add(id(n))
                        continue
                    python = True
                if not hooks and n._has_hooks():
                    hooks = True
            self.hooks, self.python = hooks, python
            return
        for idx, (node, nr) in enumerate(inputs):
            if accumulate and isinstance(node, AccumulateGrad):
                acc.add(id(node))
            else:
                self.captures.setdefault(id(node), []).append((nr, idx))
        self.runs, reach = set(), set()
        for n in reversed(topo):
            if any(e is not None and id(_node(e)) in reach for e in n._edges):
                self.runs.add(id(n))
                reach.add(id(n))
            elif id(n) in self.captures or id(n) in acc:
                reach.add(id(n))
        topo = [n for n in topo if id(n) in reach]
        self.topo, self.acc = topo, acc
        self.hooks = self.python = False
        for n in topo:
            if n._entry is None:
                if isinstance(n, AccumulateGrad):
                    continue
                #: a node whose backward is Python (``autograd.Function``): run node by node
                self.python = True
            if n._has_hooks():
                self.hooks = True

    def executed(self) -> list[Node]:
        """The nodes whose backward runs (not leaves, not capture-only nodes)."""
        return [
            n
            for n in self.topo
            if not isinstance(n, AccumulateGrad) and (self.runs is None or id(n) in self.runs)
        ]

    def key(self, roots: Sequence, grads: Sequence, batch: int | None) -> tuple:
        """Equal for graphs of the same structure (ops, edges, seeds, targets)."""
        topo, acc, runs = self.topo, self.acc, self.runs
        index = {id(n): i for i, n in enumerate(topo)}
        get = index.get
        items = []
        add = items.append
        for n in topo:
            entry = n._entry
            if entry is None and isinstance(n, AccumulateGrad):
                add(("a", id(n) in acc))
                continue
            add(
                (
                    entry.id,
                    runs is None or id(n) in runs,
                    tuple([None if e is None else _indexed(get, e) for e in n._edges]),
                )
            )
        seeds = tuple(
            (get(id(n)), nr, None if g is None else (g.shape, g.dtype))
            for (n, nr), g in zip(roots, grads)
        )
        caps = tuple(sorted((index[k], tuple(v)) for k, v in self.captures.items() if k in index))
        return (tuple(items), seeds, caps, batch)
