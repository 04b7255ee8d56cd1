"""Issue 34's audit: which op names are still declared by hand in both libraries.

Two counts, each over the code as it stands (nothing is frozen here):

* **Hand pairs.** A public callable of ``funcgrad.numpy``, ``funcgrad.lax`` or
  ``funcgrad.scipy.special`` (its ``__all__``, else its public ``dir()``; classes left out)
  that no row generates there (neither an elementwise row's ``public=`` form,
  ``funcgrad.primitives.public_forms``, nor a reduction row's,
  ``funcgrad.core.reduction_row.reduction_forms``, nor an array row's function,
  ``funcgrad.core.array_row``, nor a creation row's, ``funcgrad.core.creation_row``), and
  whose name ``compat.torch`` or
  ``Tensor`` also has, not as a row's PyTorch form (``torch_rows()`` and
  ``reduction_rows()``, ``array_rows()``, ``creation_rows()``: the form's name, its aliases and their ``_``
  in-place twins). Such a
  name is written once per library; the count is of distinct names (and of
  (namespace, name) pairs). Each is *kept* when ``funcgrad._hand_forms.HAND_FORMS`` says
  why no row joins the two forms (a view, another result or operation of the same name,
  another argument convention), and *unexplained* otherwise; a reason for a name that is
  no hand pair any more is *stale*. ``--check`` fails on either.
* **Places.** The declarations that spell a name in ``funcgrad/`` and ``compat/``
  (:func:`places`): a ``def``/``class`` of that name at module or class level, a module- or
  class-level binding of it (``X = ...``, ``X: T = ...``, a tuple target), a string
  literal naming it (``"X"``, ``"ns:X"``, ``"ns:X=mode"``) that is evaluated at module or
  class level (a row's name or ``public=`` entry, an ``__all__`` entry, a decorator's
  argument) and a dict display's key naming it anywhere (a table entry, such as the
  tracer's method table, built in a function). Any other string inside a function body or
  lambda (an error's op name, a comparison such as RNN's ``nonlinearity == "tanh"``, a
  static argument's key), a parameter default, a comparison's operand, a subscript's index
  (``DECLARED["sum"]``) or a dict's value is a use, not a declaration, and is not counted;
  neither are imports and comments. The rule reads syntax, not meaning: a namesake declared
  at module level (a loss's ``reduction`` modes, ``("mean", "sum", "none")``; the
  distributed reduce ops) is counted too; ``--verbose`` shows each place.

    python tools/op_audit.py                    # the hand pairs' count
    python tools/op_audit.py --verbose          # ... and the names with their namespaces
    python tools/op_audit.py --places tanh std  # declarations per name (--verbose: where)
    python tools/op_audit.py --check            # exit 1 on an unexplained or stale name
    python tools/op_audit.py --table            # the kept names and reasons, as Markdown
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import pathlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import compat.torch as ct
from funcgrad._compat_contract import array_rows, creation_rows, reduction_rows, torch_rows
from funcgrad._hand_forms import reasons
from funcgrad.core.reduction_row import reduction_forms
from funcgrad.primitives import public_forms

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: funcgrad's namespaces whose public callables the audit reads
NAMESPACES = ("numpy", "lax", "scipy.special")
#: the packages whose declarations :func:`places` reads
PACKAGES = ("funcgrad", "compat")


def row_generated(namespace: str) -> set[str]:
    """The names the rows declare in funcgrad's ``namespace`` (elementwise and reduction
    rows' generated forms; an array row's function, which is its numpy form; a creation
    row's generated numpy form)."""
    numpy = namespace == "numpy"
    arrays = {r.name for r in (*array_rows(), *creation_rows())} if numpy else set()
    return set(public_forms(namespace)) | set(reduction_forms(namespace)) | arrays


def torch_row_names() -> set[str]:
    """The ``torch.X``/``Tensor.X`` names some row's PyTorch form declares, with their
    in-place ``X_`` spellings."""
    names: set[str] = set()
    for row in (*torch_rows(), *reduction_rows(), *array_rows()):
        t = row.torch
        for n in (getattr(t, "name", None) or row.name, *getattr(t, "aliases", ())):
            names |= {n, n + "_"}
    for c in creation_rows():  # (``torch.zeros``; ``Tensor.new_zeros``)
        names |= {c.name, *((f"new_{c.name}",) if c.torch.new else ())}
    return names


def _public(mod: object) -> list[str]:
    names = getattr(mod, "__all__", None) or dir(mod)
    return [n for n in names if not n.startswith("_")]


def hand_pairs() -> dict[str, list[str]]:
    """Name -> funcgrad namespaces where it is hand-written while compat's ``torch`` or
    ``Tensor`` also has it by hand (see the module docstring), sorted by name."""
    rows = torch_row_names()
    found: dict[str, list[str]] = {}
    for ns in NAMESPACES:
        mod = importlib.import_module(f"funcgrad.{ns}")
        generated = row_generated(ns)
        for n in _public(mod):
            obj = getattr(mod, n, None)
            if not callable(obj) or isinstance(obj, type) or n in generated:
                continue
            if (hasattr(ct, n) or hasattr(ct.Tensor, n)) and n not in rows:
                found.setdefault(n, []).append(ns)
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class Explained:
    """The hand pairs sorted by whether a reason is declared for them: ``kept`` (name ->
    reason), ``unexplained`` (names without one) and ``stale`` (reasons naming no hand
    pair: a converted op whose reason was left behind)."""

    kept: dict[str, str]
    unexplained: list[str]
    stale: list[str]


def explain(pairs: dict[str, list[str]], declared: dict[str, str] | None = None) -> Explained:
    """Sort ``pairs`` (:func:`hand_pairs`) by the ``declared`` reasons (by default
    ``funcgrad._hand_forms.reasons()``)."""
    declared = reasons() if declared is None else declared
    return Explained(
        kept={n: declared[n] for n in pairs if n in declared},
        unexplained=[n for n in pairs if n not in declared],
        stale=sorted(set(declared) - set(pairs)),
    )


def table(pairs: dict[str, list[str]], kept: dict[str, str]) -> str:
    """The kept names as a Markdown table: name, funcgrad namespaces, reason."""
    rows = ["| name | funcgrad | why both forms stay hand-written |", "| --- | --- | --- |"]
    for name, why in kept.items():
        rows.append(f"| `{name}` | {', '.join(pairs[name])} | {why.replace('|', '/')} |")
    return "\n".join(rows)


@dataclass(frozen=True, order=True)
class Place:
    """One declaration of a name: file (relative to the root), line and kind (``def``,
    ``class``, ``binding``, ``string``)."""

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.kind}"


def _names_string(value: str, name: str) -> bool:
    return re.fullmatch(rf"(?:[\w.]+:)?{re.escape(name)}(?:=\w+)?", value) is not None


def _bound(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _bound(t)
    elif isinstance(target, ast.Starred):
        yield from _bound(target.value)


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    """The string constants ``node`` declares where it is evaluated: not inside a lambda,
    not a comparison's operand, a subscript's index or a dict's value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
        return
    if isinstance(node, (ast.Lambda, ast.Compare)):
        return  # (a function's body; a comparison's operands are read, not declared)
    if isinstance(node, ast.Subscript):  # (``DECLARED["sum"]`` looks a name up)
        yield from _strings(node.value)
        return
    if isinstance(node, ast.Dict):  # (a table's keys declare; its values are read)
        for key, value in zip(node.keys, node.values, strict=True):
            yield from _strings(value if key is None else key)  # (``**table`` spreads keys)
        return
    for child in ast.iter_child_nodes(node):
        yield from _strings(child)


def _level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at this level, through ``if``/``for``/``with``/``try`` blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _level(getattr(stmt, field, []))
            for handler in getattr(stmt, "handlers", []):
                yield from _level(handler.body)


def _declarations(body: list[ast.stmt]) -> Iterator[tuple[str, int, int, str]]:
    """Every declaration at this level as (identifier or string, line, column, kind)."""
    for stmt in _level(body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(stmt, ast.ClassDef) else "def"
            yield stmt.name, stmt.lineno, stmt.col_offset, kind
            for expr in stmt.decorator_list:
                yield from _declared_strings(expr)
            if isinstance(stmt, ast.ClassDef):
                for expr in (*stmt.bases, *(k.value for k in stmt.keywords)):
                    yield from _declared_strings(expr)
                yield from _declarations(stmt.body)
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for n in _bound(t):
                    yield n, t.lineno, t.col_offset, "binding"
            if stmt.value is not None:
                yield from _declared_strings(stmt.value)
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # (a docstring)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        own = [
            getattr(stmt, f)
            for f in ("test", "iter", "target", "value", "exc", "msg")
            if getattr(stmt, f, None) is not None
        ]
        own += [item.context_expr for item in getattr(stmt, "items", [])]
        for expr in own:
            yield from _declared_strings(expr)


def _declared_strings(expr: ast.AST) -> Iterator[tuple[str, int, int, str]]:
    for const in _strings(expr):
        yield const.value, const.lineno, const.col_offset, "string"


def _table_keys(tree: ast.AST) -> Iterator[tuple[str, int, int, str]]:
    """String keys of dict displays anywhere (a table's entry: a method table built in a
    function is a declaration too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield key.value, key.lineno, key.col_offset, "string"


@functools.lru_cache(maxsize=4096)
def _file_declarations(
    path: pathlib.Path, stamp: tuple[int, int]
) -> frozenset[tuple[str, int, int, str]]:
    """A file's declarations of any name, read once per version of the file (``stamp``: its
    modification time and size): the audit's tests and a caller asking for several names in
    turn parse the tree once, not per call."""
    del stamp  # (part of the cache's key only)
    tree = ast.parse(path.read_text(), str(path))
    return frozenset(_declarations(tree.body)) | frozenset(_table_keys(tree))


def places(names: Iterable[str], root: pathlib.Path = ROOT) -> dict[str, list[Place]]:
    """Name -> its declarations in ``funcgrad/`` and ``compat/`` under ``root`` (see the
    module docstring for what counts), sorted by file and line."""
    wanted = set(names)
    found: dict[str, list[Place]] = {n: [] for n in wanted}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            stat = path.stat()
            rel = str(path.relative_to(root))
            hits = set()
            for token, line, col, kind in _file_declarations(
                path.resolve(), (stat.st_mtime_ns, stat.st_size)
            ):
                if kind != "string":
                    if token in wanted:
                        hits.add((token, line, col, kind))
                    continue
                hits.update((n, line, col, kind) for n in wanted if _names_string(token, n))
            for n, line, _col, kind in hits:  # (one place per node: a row's line may
                # spell a name three times)
                found[n].append(Place(rel, line, kind))
    return {n: sorted(found[n]) for n in sorted(wanted)}


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--verbose", "-v", action="store_true", help="list the names/places")
    ap.add_argument("--places", nargs="+", metavar="NAME", help="count NAME's declarations")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="tree to read (places)")
    ap.add_argument("--check", action="store_true", help="fail on unexplained/stale names")
    ap.add_argument("--table", action="store_true", help="print the kept names as Markdown")
    args = ap.parse_args(argv)
    if args.places:
        for name, where in places(args.places, args.root).items():
            print(f"{name} {len(where)}")
            if args.verbose:
                for p in where:
                    print(f"    {p}")
        return 0
    pairs = hand_pairs()
    ex = explain(pairs)
    if args.table:
        print(table(pairs, ex.kept))
        return 0
    print(
        f"{len(pairs)} names hand-written in both libraries "
        f"({sum(map(len, pairs.values()))} funcgrad forms): {len(ex.kept)} kept with a "
        f"reason, {len(ex.unexplained)} unexplained"
        + (f", {len(ex.stale)} stale reasons ({', '.join(ex.stale)})" if ex.stale else "")
    )
    if args.verbose:
        for name in ex.unexplained:
            print(f"    {name}: {', '.join(pairs[name])}  UNEXPLAINED")
        for name, why in ex.kept.items():
            print(f"    {name}: {', '.join(pairs[name])}  kept: {why}")
    return 1 if args.check and (ex.unexplained or ex.stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
