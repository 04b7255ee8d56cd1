"""The layering rules of docs/design.md ("Layers and imports"), checked by reading the
source (an AST scan, nothing is imported):

* no import cycle among the module-level imports of ``funcgrad/`` and ``compat/``,
  within either package or across them;
* no module over 800 lines;
* ``compat`` imports only funcgrad's public modules, plus ``funcgrad._compat_contract``;
* inside ``funcgrad/``, no function-local import of a funcgrad module (the usual way
  to hide a cycle) except the few listed, with their reason, in ``LOCAL_IMPORTS_OK``;
* no import cycle among ``funcgrad/`` and ``compat/`` counting function-local imports
  too (a lazy import postpones a cycle; it does not remove it).
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# one worker runs the file, so the scan (modules()) is made once per run, not per worker
pytestmark = pytest.mark.xdist_group("layout")

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("funcgrad", "compat")
MAX_LINES = 800

#: funcgrad's public modules (the ones ../shared/design/API.md and docs/ document), and
#: the one internal module compat may use for its engine hooks
PUBLIC = {
    "funcgrad",
    "funcgrad.ad_checkpoint",
    "funcgrad.checkpoint_policies",
    "funcgrad.config",
    "funcgrad.custom_batching",
    "funcgrad.custom_derivatives",
    "funcgrad.debug",
    "funcgrad.distributed",
    "funcgrad.errors",
    "funcgrad.example_libraries",
    "funcgrad.example_libraries.optimizers",
    "funcgrad.example_libraries.stax",
    "funcgrad.lax",
    "funcgrad.lax.linalg",
    "funcgrad.nn",
    "funcgrad.nn.initializers",
    "funcgrad.numpy",
    "funcgrad.numpy.fft",
    "funcgrad.numpy.linalg",
    "funcgrad.optim",
    "funcgrad.random",
    "funcgrad.test_util",
    "funcgrad.testing",
    "funcgrad.tree_util",
}
PUBLIC_PREFIXES = ("funcgrad.scipy",)  # every public module of funcgrad.scipy
CONTRACT_MODULE = "funcgrad._compat_contract"

#: function-local imports of funcgrad modules that stay, each with its reason:
#: (importing module, imported module) -> why it cannot be at module level. Keep it short;
#: an entry that no longer matches an import fails the test. (Lazy submodules such as
#: ``fg.checkpoint_policies`` load through ``importlib`` in ``funcgrad.__getattr__`` and
#: need no entry.)
LOCAL_IMPORTS_OK: dict[tuple[str, str], str] = {}


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    #: module-level imports: imported module -> line of the import
    imports: dict[str, int] = field(default_factory=dict)
    #: imports inside functions: (imported module, line)
    local_imports: list[tuple[str, int]] = field(default_factory=list)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.Import | ast.ImportFrom, mod: Module, known: set[str]) -> Iterator[str]:
    """The modules an import statement names: ``from pkg import sub`` names ``pkg.sub``
    when that is a module, else ``pkg``. Only modules of the scanned packages."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in known:  # ``import a.b.c`` of a non-module c
                name = name.rpartition(".")[0]
            if name:
                yield name
        return
    if node.level:
        base = mod.name if mod.path.name == "__init__.py" else mod.name.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        src = f"{base}.{node.module}" if node.module else base
    else:
        src = node.module or ""
    for alias in node.names:
        sub = f"{src}.{alias.name}"
        if sub in known:
            yield sub
        elif src in known:
            yield src


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported (also in module-level ``if``/``try``/
    ``with`` blocks and class bodies; not under ``if TYPE_CHECKING``)."""
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif isinstance(stmt, ast.If):
            if not _is_type_checking(stmt.test):
                yield from _module_level_imports(stmt.body)
            yield from _module_level_imports(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from _module_level_imports(block)
            for h in stmt.handlers:
                yield from _module_level_imports(h.body)
        elif isinstance(stmt, (ast.With, ast.ClassDef)):
            yield from _module_level_imports(stmt.body)


def _function_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    seen: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                    seen.add(id(node))
                    yield node


def scan() -> dict[str, Module]:
    mods: dict[str, Module] = {}
    trees = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            text = path.read_text()
            m = Module(_module_name(path), path, len(text.splitlines()))
            mods[m.name] = m
            trees[m.name] = ast.parse(text, str(path))
    known = set(mods)
    for name, tree in trees.items():
        m = mods[name]
        for node in _module_level_imports(tree.body):
            for t in _targets(node, m, known):
                if t != name:
                    m.imports.setdefault(t, node.lineno)
        for node in _function_imports(tree):
            m.local_imports.extend((t, node.lineno) for t in _targets(node, m, known))
    return mods


@functools.cache
def modules() -> dict[str, Module]:
    """The scan, made once per process when a test first needs it (not at collection:
    parsing both packages took ~6 s of every xdist worker's start-up)."""
    return scan()


def _strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph has hundreds of nodes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _cycle_through(start: str, comp: set[str], graph: dict[str, list[str]]) -> list[str]:
    """A shortest import path from ``start`` back to itself inside ``comp``."""
    prev: dict[str, str] = {}
    todo = deque([start])
    while todo:
        v = todo.popleft()
        for w in graph[v]:
            if w not in comp:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [start, *reversed(path[:-1]), start] if v != start else [start, start]
            if w not in prev:
                prev[w] = v
                todo.append(w)
    raise AssertionError("not a cycle")


def test_scan_sees_the_packages():
    # the scanner must find the modules and their imports (or every check passes vacuously)
    assert "funcgrad.core.ir" in modules() and "compat._core" in modules()
    assert "funcgrad.core.ir" in modules()["funcgrad.core.interp"].imports
    assert len(modules()) > 100


def test_no_import_cycles():
    graph = {name: sorted(m.imports) for name, m in modules().items()}
    cycles = []
    for comp in _strongly_connected(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        path = _cycle_through(min(comp), set(comp), graph)
        steps = [
            f"{a} (line {modules()[a].imports[b]}) -> {b}" for a, b in itertools.pairwise(path)
        ]
        others = sorted(set(comp) - set(path))
        cycles.append(
            "  " + "\n  ".join(steps) + (f"\n  (same cycle group: {others})" if others else "")
        )
    assert not cycles, "import cycles among module-level imports:\n" + "\n\n".join(cycles)


def _import_line(a: str, b: str) -> str:
    m = modules()[a]
    if b in m.imports:
        return f"line {m.imports[b]}"
    return "function-local, line " + str(next(line for t, line in m.local_imports if t == b))


def test_no_import_cycles_counting_function_local_imports():
    """A function-local import postpones a cycle to the first call; it does not remove
    it. With them counted (optional third-party imports are outside the packages),
    funcgrad and compat still form no cycle, except the lazy loads LOCAL_IMPORTS_OK
    documents."""
    graph = {
        name: sorted(
            set(m.imports)
            | {t for t, _ in m.local_imports if t != name and (name, t) not in LOCAL_IMPORTS_OK}
        )
        for name, m in modules().items()
    }
    cycles = []
    for comp in _strongly_connected(graph):
        if len(comp) == 1:
            continue
        path = _cycle_through(min(comp), set(comp), graph)
        steps = [f"{a} ({_import_line(a, b)}) -> {b}" for a, b in itertools.pairwise(path)]
        cycles.append("  " + "\n  ".join(steps) + f"\n  ({len(comp)} modules in the group)")
    assert not cycles, "import cycles with function-local imports:\n" + "\n\n".join(cycles)


def test_modules_at_most_800_lines():
    big = sorted(
        f"{m.path.relative_to(ROOT)}: {m.lines} lines"
        for m in modules().values()
        if m.lines > MAX_LINES
    )
    assert not big, f"modules over {MAX_LINES} lines:\n  " + "\n  ".join(big)


#: module and test-file names that say nothing of what is inside (a batch of leftovers)
_CATCH_ALL = re.compile(r"(^|_)(more|misc|extras?|leftovers?|stuff|other)(_|$)|^issue_?\d+")


def test_no_catch_all_names():
    files = [m.path for m in modules().values()] + list((ROOT / "tests").rglob("*.py"))
    bad = sorted(str(f.relative_to(ROOT)) for f in files if _CATCH_ALL.search(f.stem.lstrip("_")))
    assert not bad, "names that do not say what is inside:\n  " + "\n  ".join(bad)


def _public(name: str) -> bool:
    if name == CONTRACT_MODULE or name in PUBLIC:
        return True
    parts = name.split(".")
    return name.startswith(PUBLIC_PREFIXES) and not any(p.startswith("_") for p in parts)


def test_compat_imports_only_public_funcgrad():
    bad = []
    for m in modules().values():
        if not m.name.startswith("compat"):
            continue
        found = [(t, line) for t, line in m.imports.items()] + m.local_imports
        for t, line in found:
            if t.startswith("funcgrad") and not _public(t):
                bad.append(f"{m.path.relative_to(ROOT)}:{line} imports {t}")
    assert not bad, (
        "compat may import only funcgrad's public modules and "
        f"{CONTRACT_MODULE}:\n  " + "\n  ".join(sorted(bad))
    )


def test_no_cycle_dodging_local_imports_in_funcgrad():
    bad = []
    for m in modules().values():
        if not m.name.startswith("funcgrad"):
            continue
        for t, line in m.local_imports:
            known = (m.name, t) in LOCAL_IMPORTS_OK
            if t.startswith("funcgrad") and not known:
                bad.append(f"{m.path.relative_to(ROOT)}:{line} imports {t} inside a function")
    used = {(m.name, t) for m in modules().values() for t, _ in m.local_imports}
    stale = sorted(set(LOCAL_IMPORTS_OK) - used)
    assert not stale, f"listed local imports that no longer occur (remove them): {stale}"
    assert not bad, (
        "function-local imports of funcgrad modules (move them to module level, or put "
        "what both modules need in a lower one; see docs/design.md):\n  " + "\n  ".join(sorted(bad))
    )
