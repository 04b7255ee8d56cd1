"""``tools/op_audit.py`` counts what it says it counts: checked against the rows and the
namespaces themselves, and against a small tree whose declarations are known."""

from __future__ import annotations

import importlib
import pathlib
import sys
import textwrap

import pytest

import compat.torch as ct
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from funcgrad import _hand_forms

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import op_audit  # noqa: E402

# one worker runs the file, so the scan of funcgrad/ and compat/ (op_audit's per-file cache)
# is made once per run, not in each worker that draws one of its tests
pytestmark = pytest.mark.xdist_group("op_audit")


@pytest.fixture(scope="module")
def pairs() -> dict[str, list[str]]:
    return op_audit.hand_pairs()


def test_no_row_generated_name_is_listed(pairs):
    """A name a row generates in a namespace is never a hand pair of that namespace, and a
    row's PyTorch name never a hand pair at all."""
    torch_names = op_audit.torch_row_names()
    for ns in op_audit.NAMESPACES:
        generated = op_audit.row_generated(ns)
        assert not {n for n, where in pairs.items() if ns in where} & generated
    assert not set(pairs) & torch_names
    # rows of each kind: an elementwise primitive, a composite, a reduction, a ternary one
    for name in ("tanh", "hypot", "sum", "amax", "argmax", "where"):
        assert name not in pairs
    assert {"tanh", "hypot"} <= op_audit.row_generated("numpy") and "sum" in torch_names


def test_known_hand_pairs_are_listed(pairs):
    """Names written by hand in both libraries (shape ops, contractions) are listed, with
    the namespaces that have them."""
    assert pairs["reshape"] == ["numpy", "lax"]
    assert "numpy" in pairs["matmul"] and "numpy" in pairs["einsum"]
    for name, where in pairs.items():
        assert hasattr(ct, name) or hasattr(ct.Tensor, name)
        for ns in where:
            mod = {"numpy": fnp, "lax": flax}.get(ns)
            if mod is not None:
                assert callable(getattr(mod, name))


def test_counts_are_deterministic(pairs):
    assert op_audit.hand_pairs() == pairs
    assert list(pairs) == sorted(pairs)
    names = ["tanh", "softmax", "cumsum"]
    assert op_audit.places(names) == op_audit.places(names)


_TREE = {
    "funcgrad/rows.py": '''
        """A module whose docstring says tanh."""
        from somewhere import tanh as _t
        __all__ = ["tanh", "other"]
        Row("tanh", public=("numpy:tanh", "numpy:tanh=logical", "numpy:logical_tanh"))
        for _n in ("tanh",):
            pass
        def tanh(x, mode="tanh"):
            if mode == "tanh":
                raise ValueError("tanh: bad")
            table = {"tanh": 1, "keep": "tanh"}
            return DECLARED["tanh"]
        class Net:
            tanh = staticmethod(_t)
            def forward(self):
                def tanh():
                    return "tanh"
    ''',
    "compat/rnn.py": """
        NAMES = {**{n: 0 for n in ("tanh", "relu")}}
        f = lambda: "tanh"
        class RNN:
            def __init__(self, nonlinearity="tanh"):
                self.nonlinearity = nonlinearity
                if nonlinearity == "tanh":
                    self.act = "tanh"
    """,
    "tests/ignored.py": 'def tanh(): return "tanh"\n',
}


def test_places_counts_declarations_only(tmp_path):
    """Module- and class-level defs, bindings and strings, dict keys anywhere; not uses in
    function bodies, comparisons, defaults, lookups, imports, docstrings or other trees."""
    for rel, text in _TREE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    found = op_audit.places(["tanh", "relu"], root=tmp_path)
    got = {(p.path, p.line, p.kind) for p in found["tanh"]}
    rows = "funcgrad/rows.py"
    assert got == {
        (rows, 4, "string"),  # __all__
        (rows, 5, "string"),  # the row's name and public forms
        (rows, 6, "string"),  # the loop over the rows' fields
        (rows, 8, "def"),
        (rows, 11, "string"),  # a dict key in a function
        (rows, 14, "binding"),  # a class attribute
        ("compat/rnn.py", 2, "string"),  # a spread table's key
    }
    # the row's three spellings (its name, "numpy:tanh", "numpy:tanh=logical") are three
    # places on one line; "numpy:logical_tanh" names another function
    assert sum(p.line == 5 for p in found["tanh"]) == 3
    assert [str(p) for p in found["relu"]] == ["compat/rnn.py:2 string"]


def test_rnn_nonlinearity_is_no_declaration_of_tanh():
    found = op_audit.places(["tanh"])["tanh"]
    assert not [p for p in found if "rnn" in p.path or "init.py" in p.path]
    assert any(p.path.endswith("transcendental.py") for p in found)  # tanh's row


def test_command_line(capsys):
    assert op_audit.main(["--places", "tanh", "--verbose"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("tanh ") and int(out[0].split()[1]) == len(out) - 1


def test_places_reads_a_changed_file_again(tmp_path):
    """The per-file cache of declarations is keyed by the file's version: an edit shows."""
    path = tmp_path / "funcgrad" / "m.py"
    path.parent.mkdir()
    path.write_text("def tanh(): pass\n")
    assert [str(p) for p in op_audit.places(["tanh"], root=tmp_path)["tanh"]] == [
        "funcgrad/m.py:1 def"
    ]
    path.write_text("\n\nclass tanh: pass\n")
    assert [str(p) for p in op_audit.places(["tanh"], root=tmp_path)["tanh"]] == [
        "funcgrad/m.py:3 class"
    ]


def test_every_hand_pair_has_a_reason(pairs):
    """Issue 34: a name both libraries write by hand says why (``funcgrad._hand_forms``);
    a new hand-written name without a reason fails here, and so does a reason left behind
    by an op converted to a row."""
    ex = op_audit.explain(pairs)
    assert ex.unexplained == [], f"hand-written in both libraries, no reason: {ex.unexplained}"
    assert ex.stale == [], f"reasons for names that are no hand pair: {ex.stale}"
    assert list(ex.kept) == list(pairs)


def test_explain_sorts_new_and_stale_names():
    """The check's logic, on made-up pairs: a name without a reason is unexplained, a reason
    without a pair stale."""
    ex = op_audit.explain({"a": ["numpy"], "b": ["lax"]}, {"a": "why a", "c": "why c"})
    assert ex.kept == {"a": "why a"} and ex.unexplained == ["b"] and ex.stale == ["c"]
    assert op_audit.table({"a": ["numpy", "lax"]}, {"a": "x | y"}).splitlines()[2] == (
        "| `a` | numpy, lax | x / y |"
    )


def test_hand_forms_are_the_public_functions():
    """Each reason is keyed by the public function of its name in a namespace the audit
    reads (a renamed or aliased function would file its reason under another name)."""
    mods = [importlib.import_module(f"funcgrad.{ns}") for ns in op_audit.NAMESPACES]
    for fn in _hand_forms.HAND_FORMS:
        assert any(getattr(m, fn.__name__, None) is fn for m in mods), fn


def test_check_flag(capsys):
    assert op_audit.main(["--check"]) == 0
    assert " 0 unexplained" in capsys.readouterr().out


def test_design_page_table_is_current(pairs):
    """``docs/design.md`` shows the reasons as ``op_audit.py --table`` prints them."""
    text = (ROOT / "docs" / "design.md").read_text()
    begin, end = "<!-- op_audit --table: begin -->\n", "<!-- op_audit --table: end -->"
    shown = text.split(begin, 1)[1].split(end, 1)[0].strip()
    assert shown == op_audit.table(pairs, op_audit.explain(pairs).kept), (
        "regenerate with: python tools/op_audit.py --table"
    )
