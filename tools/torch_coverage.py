"""Which public names of PyTorch's main namespaces compat.torch has: writes ``docs/compat_coverage.md``.

For every public name of ``torch``, ``torch.Tensor`` (methods, properties and the
operator dunders), ``torch.nn``, ``torch.nn.functional``, ``torch.optim``,
``torch.optim.lr_scheduler``, ``torch.utils.data``, ``torch.distributions``,
``torch.func``, ``torch.autograd``, ``torch.linalg``, ``torch.fft``, ``torch.special``
and ``torch.cuda`` of the installed (real) PyTorch, the page says whether the same
attribute path exists on ``compat.torch`` with the same kind (callable or not).
It needs real PyTorch installed; ``tests/compat/test_compat_coverage.py`` renders the
page again and fails when the committed page differs.

    python tools/torch_coverage.py            # rewrite docs/compat_coverage.md
    python tools/torch_coverage.py --check    # exit 1 if the page is out of date

Which names count: the rules in ``_RULES`` (printed on the page), applied mechanically
by ``public_names`` / ``deprecated`` rather than by hand-picked lists:

1. ``__all__`` plus the rest of ``dir()``, no ``_`` names, no submodules;
2. outside ``__all__``, only what PyTorch documents as its own (``_documented_own``),
   and no class re-exported from a parent namespace (``_reexported``);
3. dropped: pybind11 bindings, removed-API stubs, undocumented backend kernels and
   top-level in-place twins (``_dropped``);
4. deprecated names are listed apart and not counted (``deprecated``);
5. ``torch.Tensor`` adds the protocol dunders (``_protocol_dunders``).
"""

from __future__ import annotations

import importlib
import pathlib
import re
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as ``python tools/torch_coverage.py``
    sys.path.insert(0, str(ROOT))

import compat.torch as ctorch  # noqa: E402
from compat._core.optable import REGISTRY as _ROWS  # noqa: E402
from tools.coverage_page import page_main  # noqa: E402

PAGE = ROOT / "docs" / "compat_coverage.md"
COMMAND = "python tools/torch_coverage.py"

#: the PyTorch namespaces compared, in page order (``torch.Tensor`` is the class)
NAMESPACES: list[str] = [
    "torch",
    "torch.Tensor",
    "torch.nn",
    "torch.nn.functional",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.utils.data",
    "torch.distributions",
    "torch.func",
    "torch.autograd",
    "torch.linalg",
    "torch.fft",
    "torch.special",
    "torch.cuda",
]

#: modules whose re-exported helpers are PyTorch's dispatch / JIT / build machinery
_MACHINERY = ("torch.overrides", "torch._jit_internal", "torch._utils", "torch._utils_internal")
#: name prefixes of the undocumented per-backend kernels exported at top level
_BACKENDS = ("cudnn_", "miopen_", "mkldnn_", "fbgemm_", "quantized_", "native_")
_REMOVED = re.compile(r"\b(was|is now|has been) removed\b", re.IGNORECASE)
_MISSING = object()


def _protocol_dunders() -> frozenset[str]:
    """Rule 5: the dunders of the numeric, container and array protocols."""
    found: set[str] = set()
    for t in (int, float, complex, list, np.ndarray):
        found |= {n for n in vars(t) if n.startswith("__") and n.endswith("__")}
    comparisons = {"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"}
    return frozenset(found - (set(vars(object)) - comparisons))


def _resolve(root: Any, path: str) -> Any:
    """``root.a.b`` for path ``"a.b"``; a module path not yet imported is imported."""
    obj = root
    for part in path.split("."):
        nxt = getattr(obj, part, _MISSING)
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                return _MISSING
        if nxt is _MISSING:
            return _MISSING
        obj = nxt
    return obj


def _doc(obj: Any) -> str:
    doc = getattr(obj, "__doc__", None)
    return doc.strip() if isinstance(doc, str) else ""


def _binding(obj: Any) -> bool:
    """A pybind11 binding (TorchScript IR, dispatcher keys, profiler and JIT helpers)."""
    if isinstance(obj, type):
        return type(obj).__name__.startswith("pybind11")
    probes = (type(getattr(obj, "__self__", None)), type(type(obj)))  # function, enum value
    return any(p.__name__.startswith("pybind11") for p in probes)


def _strings(code: types.CodeType) -> Iterator[str]:
    for c in code.co_consts:
        if isinstance(c, str):
            yield c
        elif isinstance(c, types.CodeType):
            yield from _strings(c)


def _removed(obj: Any, follow: bool = True) -> bool:
    """A stub left where PyTorch removed an API: it only raises "... was removed"."""
    if not isinstance(obj, types.FunctionType):
        return False
    code = obj.__code__
    if any(_REMOVED.search(s) for s in _strings(code)):
        return True
    if follow:  # ``from torch._linalg_utils import eig; return eig(...)``
        mods = [sys.modules[n] for n in code.co_names if n.startswith("torch") and n in sys.modules]
        return any(_removed(getattr(m, n, None), False) for m in mods for n in code.co_names)
    return False


def deprecated(name: str, obj: Any) -> bool:
    """Rule 4: PyTorch's docstring says this very name is deprecated."""
    if not callable(obj):
        return False
    subject = rf"(this (function|class|method)|`[~\w.]*\b{re.escape(name)}`|\b{re.escape(name)})"
    doc = _doc(obj)
    return doc.lower().startswith("deprecated") or bool(
        re.search(subject + r" is deprecated", doc, re.IGNORECASE)
    )


def _in_torch(mod: str) -> bool:
    """``mod`` is PyTorch's own code, not its dispatch / JIT / build machinery."""
    own = mod == "torch" or mod.startswith("torch.")
    return own and not mod.startswith(_MACHINERY)


def _documented_own(name: str, obj: Any) -> bool:
    """Rule 2, for a name outside ``__all__``."""
    if name.isupper() or obj is None:
        return False
    if isinstance(obj, (str, bytes, bool, int, float, dict, list, tuple)):
        return False
    if isinstance(obj, type) or callable(obj):
        if any(obj is v for v in vars(sys.modules["torch.overrides"]).values()):
            return False  # ``has_torch_function``: __torch_function__ dispatch machinery
        return _in_torch(getattr(obj, "__module__", None) or "") and bool(_doc(obj))
    return _in_torch(type(obj).__module__)


def _reexported(ns: str, name: str, obj: Any, ancestors: list[Any]) -> bool:
    """A class defined outside ``ns`` that an ancestor namespace also has (``Tensor``)."""
    if not isinstance(obj, type) or ns == "torch":
        return False
    mod = getattr(obj, "__module__", None) or ""
    if mod == ns or mod.startswith(ns + "."):
        return False
    return any(getattr(a, name, None) is obj for a in ancestors)


def _dropped(ns: str, name: str, obj: Any, tensor_cls: type) -> bool:
    """Rule 3: bindings, removed stubs, backend kernels, top-level in-place twins."""
    if _binding(obj) or _removed(obj):
        return True
    if ns == "torch" and callable(obj) and not isinstance(obj, type) and not _doc(obj):
        if name.startswith(_BACKENDS):
            return True
        if name.endswith("_") and hasattr(tensor_cls, name):
            return True
    return False


def public_names(ns: str, torch: types.ModuleType) -> dict[str, Any]:
    """Rules 1 to 3 and 5: the public names of a PyTorch namespace, with their objects."""
    obj = _resolve(torch, ns[len("torch.") :]) if ns != "torch" else torch
    out: dict[str, Any] = {}
    if ns == "torch.Tensor":
        dunders = _protocol_dunders()
        for n in dir(obj):
            if not n.startswith("_") or n in dunders:
                val = getattr(obj, n)
                if not _removed(vars(obj).get(n, val)):
                    out[n] = val
        return out
    listed = set(getattr(obj, "__all__", ()))
    parts = ns.split(".")
    ancestors = [torch] if ns != "torch" else []
    ancestors += [_resolve(torch, ".".join(parts[1:i])) for i in range(2, len(parts))]
    for n in sorted(listed | set(dir(obj))):
        if n.startswith("_"):
            continue
        val = getattr(obj, n, _MISSING)
        if val is _MISSING or isinstance(val, types.ModuleType):
            continue
        if not (n in listed or _documented_own(n, val)):
            continue
        if not (_reexported(ns, n, val, ancestors) or _dropped(ns, n, val, torch.Tensor)):
            out[n] = val
    return out


def _compat_has(cobj: Any, name: str, tobj: Any, is_class: bool) -> str:
    """``"present"``, ``"missing"`` or ``"kind"`` (exists, but callable in one library only)."""
    if cobj is _MISSING:
        return "missing"
    try:
        val = getattr(cobj, name)
    except Exception:  # AttributeError, or a placeholder raising NotImplementedError
        return "missing"
    if is_class and name.startswith("__") and val is getattr(object, name, _MISSING):
        return "missing"
    return "present" if callable(val) == callable(tobj) else "kind"


def survey(torch: types.ModuleType) -> Iterator[tuple[str, dict[str, list[str]]]]:
    """Per namespace: its names grouped as present / missing / kind / deprecated-present /
    deprecated-missing (deprecated names are listed but not counted)."""
    for ns in NAMESPACES:
        cobj = ctorch if ns == "torch" else _resolve(ctorch, ns[len("torch.") :])
        res: dict[str, list[str]] = {k: [] for k in _GROUPS}
        for n, tobj in public_names(ns, torch).items():
            status = _compat_has(cobj, n, tobj, ns == "torch.Tensor")
            if deprecated(n, tobj):
                status = "deprecated, " + ("present" if status == "present" else "missing")
            res[status].append(n)
        yield ns, res


_GROUPS = ("present", "missing", "kind", "deprecated, present", "deprecated, missing")


def row_forms() -> dict[str, set[str]]:
    """Per namespace, the names the op table's rows declare (``OpDef.forms``): the page
    counts which present names come from a row rather than from hand-written code."""
    out: dict[str, set[str]] = {}
    for d in _ROWS.values():
        for ns, name in d.forms():
            out.setdefault(ns, set()).add(name)
    return out


def _inline(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "none"


_RULES = [
    "a module's `__all__` plus the rest of `dir()`, without names starting with `_` and "
    "without submodules (those in scope have their own section);",
    "a name outside `__all__` (any name, for a module without `__all__`) counts only when "
    "PyTorch documents it as its own: a function or class with a docstring defined inside "
    "`torch`, or a value of a `torch` type (`torch.strided`); `typing` imports, plain "
    "constants, `ALL_CAPS` flags and dispatch/JIT helpers do not;",
    "a class defined outside the namespace that a parent namespace also has is a "
    "re-export and counts only there (`Tensor` in `torch.fft`, `Optimizer` in "
    "`torch.optim.lr_scheduler`);",
    "dropped everywhere: pybind11 bindings (TorchScript IR types, dispatcher keys, JIT and "
    'profiler helpers), stubs of removed APIs (they only raise "was removed"); in `torch` '
    "also the undocumented per-backend kernels (`cudnn_*`, `miopen_*`, `mkldnn_*`, "
    "`fbgemm_*`, `quantized_*`, `native_*`) and the undocumented in-place twins of `Tensor` "
    "methods (`torch.abs_`: counted once, under `torch.Tensor`);",
    "a name whose docstring says that it is deprecated is listed under *deprecated* and "
    "left out of the counts;",
    "`torch.Tensor`: every attribute without a leading `_`, plus the dunders of the "
    "numeric, container and array protocols (those `int`, `float`, `complex`, `list` or "
    "`numpy.ndarray` define, less `object`'s own machinery; rich comparisons kept). A "
    "dunder compat inherits unchanged from `object` is not present.",
]


def render(torch: types.ModuleType | None = None) -> str:
    """The markdown page (imports real PyTorch unless given)."""
    if torch is None:
        torch = importlib.import_module("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = list(survey(torch))
    table, sections = [], []
    tot_p = tot_n = tot_r = 0
    declared = row_forms()
    for ns, res in rows:
        present, missing, kind = res["present"], res["missing"], res["kind"]
        from_rows = [n for n in present if n in declared.get(ns, ())]
        tot_r += len(from_rows)
        n = len(present) + len(missing) + len(kind)
        tot_p, tot_n = tot_p + len(present), tot_n + n
        pct = 100.0 * len(present) / max(n, 1)
        ndep = len(res["deprecated, present"]) + len(res["deprecated, missing"])
        table.append(
            f"| [`{ns}`](#{ns.replace('.', '').lower()}) | {len(present)} | "
            f"{len(missing) + len(kind)} | {pct:.0f}% | {len(from_rows)} | {ndep} |"
        )
        body = [f"## `{ns}`", "", f"**Present ({len(present)}):** {_inline(present)}", ""]
        if from_rows:
            body += [
                f"**Of which declared by op-table rows ({len(from_rows)}):** {_inline(from_rows)}",
                "",
            ]
        body += [f"**Missing ({len(missing)}):** {_inline(missing)}", ""]
        labels = {
            "kind": "Wrong kind (callable in one library only; counted missing)",
            "deprecated, present": "Deprecated in PyTorch, present (not counted)",
            "deprecated, missing": "Deprecated in PyTorch, missing (not counted)",
        }
        for key, label in labels.items():
            if res[key]:
                body += [f"**{label}:** {_inline(res[key])}", ""]
        sections.append("\n".join(body))
    version = torch.__version__.split("+")[0]
    pct = 100.0 * tot_p / max(tot_n, 1)
    head = [
        "# PyTorch API coverage",
        "",
        f"<!-- generated by {COMMAND}; do not edit by hand -->",
        "",
        f"Every public name of PyTorch {version}'s main namespaces and whether "
        "`compat.torch` has it: *present* means the same attribute path exists on "
        "`compat.torch` (for `torch.Tensor`: on `compat.torch.Tensor`) and is callable "
        "exactly when PyTorch's is. Present does not promise every argument; "
        "[Porting from PyTorch](compat.md) lists the gaps. "
        "`tests/compat/test_compat_coverage.py` fails when this page is out of date; "
        f"regenerate it with `{COMMAND}` (needs PyTorch installed).",
        "",
        "Which names count (rules applied by the script, not picked by hand):",
        "",
        *[f"* {r}" for r in _RULES],
        "",
        f"In all: **{tot_p} of {tot_n} names present ({pct:.0f}%).** {tot_r} of the present "
        "names are forms an op-table row declares (`defop` in `compat/_core/ops/`: the "
        "function, its aliases, the method, the in-place method and function, the "
        "`nn.functional` function and `nn` module), read from the rows (`OpDef.forms`); "
        "the others are written by hand.",
        "",
        "| namespace | present | missing | coverage | from op-table rows | deprecated (not "
        "counted) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *table,
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` say whether it is current."""
    return page_main(argv, doc=__doc__, page=PAGE, render=render)


if __name__ == "__main__":
    sys.exit(main())
