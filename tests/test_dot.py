"""``Program.to_dot()``: Graphviz text that parses (pydot), with one node per input,
equation and output, edges along variables, sub-programs as nested clusters; and the
notebook display (``_repr_svg_``/``_repr_html_``), ``None`` without Graphviz."""

import re
import warnings
from pathlib import Path

import numpy as np
import pydot
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import dot


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = fnp.tanh(x @ w1 + b1)
    return fnp.mean((h @ w2 + b2) ** 2)


PARAMS = (
    (np.ones((3, 4), np.float32), np.zeros(4, np.float32)),
    (np.ones((4, 1), np.float32), np.zeros(1, np.float32)),
)
X = np.ones((8, 3), np.float32)


def looped(x):
    def body(i, c):
        return fg.lax.cond(c.sum() > 0, lambda c: c * 2.0, lambda c: c - 1.0, c)

    return fg.lax.fori_loop(0, 3, body, fg.jit(fnp.sin)(x))


def _parse(text):
    with warnings.catch_warnings():  # pydot 4 calls pyparsing's pre-3.0 names
        warnings.simplefilter("ignore", DeprecationWarning)
        graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1
    return graphs[0]


def _walk(g, depth=0):
    """(nodes, edges, clusters with their depth) of ``g`` and its subgraphs."""
    nodes = [n.get_name() for n in g.get_nodes() if n.get_name() not in ("node", "edge")]
    edges = [(e.get_source(), e.get_destination()) for e in g.get_edges()]
    clusters = []
    for sub in g.get_subgraphs():
        n, e, c = _walk(sub, depth + 1)
        nodes += n
        edges += e
        clusters += [(sub.get_name(), sub.get_label(), depth + 1), *c]
    return nodes, edges, clusters


def _count(prog):
    """(#nodes, #clusters) ``to_dot`` should draw for ``prog``."""
    n = len(prog.invars) + len(prog.constvars) + len(prog.eqns) + len(prog.outvars)
    c = 1
    for e in prog.eqns:
        subs = dot._sub_programs(e.params)
        c += bool(subs)
        for _, s in subs:
            dn, dc = _count(s)
            n, c = n + dn, c + dc
    return n, c


@pytest.mark.parametrize("case", ["grad_mlp", "loops", "jit_vmap"])
def test_to_dot_parses_and_matches_the_program(case):
    if case == "grad_mlp":
        prog = fg.make_ir(fg.grad(mlp))(PARAMS, X)
    elif case == "loops":
        prog = fg.make_ir(looped)(np.ones(3, np.float32))
    else:
        prog = fg.make_ir(fg.jit(fg.vmap(lambda v: fnp.sum(v**2), chunk_size=3)))(X)
    text = prog.to_dot()
    g = _parse(text)
    nodes, edges, clusters = _walk(g)
    assert len(nodes) == len(set(nodes))  # ids are unique across nested programs
    declared = set(nodes)
    for src, dst in edges:
        assert src in declared and dst in declared, (src, dst)
    want_nodes, want_clusters = _count(prog)
    assert len(nodes) == want_nodes
    assert len(clusters) == want_clusters
    assert all(name.startswith("cluster_") for name, _, _ in clusters)
    # every equation's primitive and its output avals are in its label
    labels = "\n".join(n.get_label() or "" for n in _all_nodes(g))
    for e in prog.eqns:
        assert e.prim.name in labels
        for v in e.outvars:
            assert str(v.aval) in labels
    # every variable read by an equation is an edge into it: count them
    reads = sum(1 for e in prog.eqns for a in e.inputs if not hasattr(a, "val"))
    assert len(edges) >= reads


def _all_nodes(g):
    out = list(g.get_nodes())
    for sub in g.get_subgraphs():
        out += _all_nodes(sub)
    return out


def test_nested_clusters_for_calls_and_loops():
    prog = fg.make_ir(looped)(np.ones(3, np.float32))
    _, _, clusters = _walk(_parse(prog.to_dot()))
    labels = [(lab.strip('"'), depth) for _, lab, depth in clusters]
    assert ("jit_call", 2) in labels
    assert ("scan", 2) in labels or ("while", 2) in labels
    assert ("cond", 4) in labels  # inside the loop's body program
    assert ("branches[0]", 5) in labels and ("branches[1]", 5) in labels


def test_labels_name_params_lines_and_literals():
    prog = fg.make_ir(fg.grad(mlp))(PARAMS, X)
    text = prog.to_dot()
    assert "dot_general" in text and "dimension_numbers=" in text
    line = mlp.__code__.co_firstlineno + 2  # the user's line of `fnp.tanh(x @ w1 + b1)`
    assert f"test_dot.py:{line}" in text
    assert "literal 0: 2.0:f32[]" in text or "literal 1: 2.0:f32[]" in text
    assert text.startswith('digraph "program" {') and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")


def test_escaping():
    prog = fg.make_ir(lambda x: x * 2.0)(np.ones(2, np.float32))
    text = prog.to_dot(name='my "prog"\\x')
    g = _parse(text)
    assert g.get_name() == '"my \\"prog\\"\\\\x"'


def test_display_without_graphviz_is_none(monkeypatch):
    prog = fg.make_ir(lambda x: fnp.sin(x))(np.ones(2, np.float32))
    monkeypatch.setattr(dot, "_graphviz", None)
    assert not dot.can_render()
    assert prog._repr_svg_() is None and prog._repr_html_() is None


class _FakeSource:
    """Stands in for ``graphviz.Source``: records the DOT text it is given."""

    seen: list = []

    def __init__(self, text):
        self.text = text
        _FakeSource.seen.append(text)

    def pipe(self, format):
        assert format == "svg"
        return b'<?xml version="1.0"?>\n<svg n="1"></svg>'


class _FakeGraphviz:
    Source = _FakeSource


def test_display_with_graphviz(monkeypatch):
    prog = fg.make_ir(lambda x: fnp.sin(x))(np.ones(2, np.float32))
    if dot.can_render():  # the real thing, where Graphviz is installed
        svg = prog._repr_svg_()
        assert "<svg" in svg and "sin" in svg
        assert prog._repr_html_().startswith("<div><svg")
    monkeypatch.setattr(dot, "_graphviz", _FakeGraphviz)
    monkeypatch.setattr(dot.shutil, "which", lambda name: "/usr/bin/dot")
    assert prog._repr_svg_() == '<?xml version="1.0"?>\n<svg n="1"></svg>'
    assert _FakeSource.seen[-1] == prog.to_dot()
    html = prog._repr_html_()
    assert re.match(r'<div><svg n="1"></svg><details>', html)
    assert "sin" in html and "&gt;" not in html.split("<pre>")[0]


IR_PAGE = Path(__file__).resolve().parent.parent / "docs" / "ir.md"


def test_ir_page_shows_what_to_dot_prints(capsys):
    """docs/ir.md's examples run, and the DOT text it shows is what the MLP example
    prints (each block compiled as file ``mlp.py``, as the page says)."""
    page = IR_PAGE.read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", page, flags=re.S | re.M)
    assert any("to_dot(" in b for b in blocks)
    for block in blocks:
        capsys.readouterr()
        exec(compile(block, "mlp.py", "exec"), {"__name__": "docs_ir"})
    printed = capsys.readouterr().out
    shown = re.search(r"^    ```dot\n(.*?)^    ```", page, flags=re.S | re.M).group(1)
    shown = "\n".join(line[4:] for line in shown.split("\n"))
    assert printed.rstrip("\n") == shown.rstrip("\n")
    assert (IR_PAGE.parent / "img" / "grad_mlp.svg").read_text().count('<g id="node') == (
        shown.count("[shape=")
    )
