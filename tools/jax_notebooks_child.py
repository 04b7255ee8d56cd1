"""Child process of :mod:`tools.jax_notebooks`: run one notebook's cells in order.

Reads a JSON spec (the cells' code, the mode, where to write), runs every cell in one
namespace (a module named ``__notebook__``, so that with the swap installed the cells'
imports of ``jax`` resolve to funcgrad), and writes one JSON line per cell: what it
printed, the repr of its last expression (as IPython would display it), and the
exception it raised, if any. Lines are flushed cell by cell, so a crash keeps what ran.

Usage (by the parent only)::

    python -m tools.jax_notebooks_child SPEC.json
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import io
import json
import os
import pickle
import sys
import types
import warnings
from typing import Any

import numpy as np

NAME = "__notebook__"


def run_cell(src: str, ns: dict[str, Any], index: int) -> dict[str, Any]:
    """Run ``src`` in ``ns``: printed text, the last expression's repr, the exception."""
    rec: dict[str, Any] = {"i": index, "out": "", "err": "", "repr": None, "exc": None}
    out, err = io.StringIO(), io.StringIO()
    try:
        tree = ast.parse(src)
        last = None
        # IPython displays a cell's last expression unless the cell ends with ";"
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            node = tree.body.pop()
            if not src.rstrip().endswith(";"):
                last = ast.Expression(node.value)
            else:
                tree.body.append(node)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            exec(compile(tree, f"<cell {index}>", "exec"), ns)
            if last is not None:
                value = eval(compile(last, f"<cell {index}>", "eval"), ns)
                if value is not None:
                    rec["repr"] = repr(value)
                    ns["_"] = value
    except Exception as e:  # a cell's error is a result
        rec["exc"] = [type(e).__name__, str(e)[:3000], [c.__name__ for c in type(e).__mro__]]
    rec["out"], rec["err"] = out.getvalue(), err.getvalue()[-3000:]
    return rec


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for y in x for v in _leaves(y)]
    if x is None:
        return []
    return [np.asarray(x)]


def main(spec_path: str) -> None:
    """Run the notebook the spec describes."""
    with open(spec_path) as f:
        spec = json.load(f)
    os.chdir(spec["work"])
    sys.path.insert(0, spec["work"])
    import matplotlib

    matplotlib.use("Agg")
    touched = None
    if spec["mode"] == "funcgrad":
        # imported here: the JAX run never loads funcgrad
        from tools.conformance.shims import swap as swap_mod
        from tools.conformance.shims.jax_swap import make_swap

        swap = make_swap()
        swap.add_importer(NAME)
        swap.install()
        touched = swap_mod.TOUCHED
        touched.clear()
    # NumPy's global generator from one seed in both runs: a notebook drawing its inputs
    # with np.random.randn (JAX's *Tracing* page) then feeds both the same numbers. JAX's
    # cluster detection draws from it when first imported (funcgrad's import loads it, a
    # JAX run at its first computation), so it is loaded before the seed in both runs.
    importlib.import_module("jax._src.clusters")
    np.random.seed(0)
    mod = types.ModuleType(NAME)
    sys.modules[NAME] = mod
    ns = mod.__dict__
    ns["__builtins__"] = builtins
    with open(spec["out"], "w") as out:
        for i, src in enumerate(spec["cells"]):
            if src is None:
                continue
            rec = run_cell(src, ns, i)
            if touched is not None:
                rec["scope"] = sorted({w for k, w in touched if k == "scope"})
                rec["missing"] = sorted({w for k, w in touched if k != "scope"})
                touched.clear()
            out.write(json.dumps(rec) + "\n")
            out.flush()
    rec = {}
    for name in spec.get("record", []):
        if name in ns:
            with contextlib.suppress(Exception):  # not an array tree: not compared
                rec[name] = _leaves(ns[name])
    with open(spec["out"] + ".pkl", "wb") as f:
        pickle.dump(rec, f)


if __name__ == "__main__":
    main(sys.argv[1])
