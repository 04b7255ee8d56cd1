"""funcgrad.ad_checkpoint.print_saved_residuals against jax.ad_checkpoint's: the same
lines (type, argument names, producing operation, checkpoint names) in the same order
where funcgrad's reverse pass keeps the same values; the location's column and function
name, which funcgrad's IR does not record, are cut from JAX's lines."""

from __future__ import annotations

import re

import jax
import jax.ad_checkpoint as jac
import jax.numpy as jnp
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.ad_checkpoint import checkpoint_name, print_saved_residuals

F32 = np.float32
W1 = np.linspace(-1, 1, 20, dtype=F32).reshape(5, 4)
W2 = np.linspace(-1, 1, 30, dtype=F32).reshape(6, 5)
X = np.linspace(0, 1, 4, dtype=F32)


def _lines(printer, f, *args, capsys) -> list[str]:
    printer(f, *args)
    out = capsys.readouterr().out.strip().splitlines()
    # JAX's location is file:line:col (function); funcgrad's file:line
    return [re.sub(r"(\.py:\d+)(:\d+ \(.*\))?$", r"\1", line) for line in out]


def _layer(sin, dot):
    def layer(w, x):
        return sin(dot(w, x))

    return layer


def test_checkpointed_layers_keep_jax_rows(capsys):
    jl, fl = _layer(jnp.sin, jnp.dot), _layer(fnp.sin, fnp.dot)

    def jf(w1, w2, x):
        return jax.checkpoint(jl)(w2, jax.checkpoint(jl)(w1, x))

    def ff(w1, w2, x):
        return fg.checkpoint(fl)(w2, fg.checkpoint(fl)(w1, x))

    want = _lines(jac.print_saved_residuals, jf, W1, W2, X, capsys=capsys)
    got = _lines(print_saved_residuals, ff, W1, W2, X, capsys=capsys)
    assert got == want  # the user's file and line included
    assert want[:3] == [
        "f32[5,4] from the argument w1",
        "f32[6,5] from the argument w2",
        "f32[4] from the argument x",
    ]
    assert want[3].startswith("f32[5] output of sin from ")


def test_named_values_and_pytree_arguments(capsys):
    policy = jax.checkpoint_policies.save_only_these_names("s")
    fpolicy = fg.checkpoint_policies.save_only_these_names("s")

    def jf(params, x):
        s = jac.checkpoint_name(jnp.sin(x * params[0]), "s")
        return jnp.sum(jnp.cos(s) * params[1])

    def ff(params, x):
        s = checkpoint_name(fnp.sin(x * params[0]), "s")
        return fnp.sum(fnp.cos(s) * params[1])

    params = [F32(2.0), np.ones(4, F32)]
    want = _lines(
        jac.print_saved_residuals, jax.checkpoint(jf, policy=policy), params, X, capsys=capsys
    )
    got = _lines(print_saved_residuals, fg.checkpoint(ff, policy=fpolicy), params, X, capsys=capsys)
    # (jf and ff sit on different lines)
    assert [re.sub(r":\d+$", "", g) for g in got] == [re.sub(r":\d+$", "", w) for w in want]
    assert "f32[] from the argument params[0]" in got
    assert any(g.startswith("f32[4] named 's' from ") for g in got)


def test_plain_layers_keep_inputs_of_nonlinear_ops(capsys):
    # by design funcgrad keeps sin's input (and recomputes cos) where JAX keeps sin's
    # and cos's outputs: the arguments' rows agree, the operations' rows name funcgrad's
    fl = _layer(fnp.sin, fnp.dot)
    jl = _layer(jnp.sin, jnp.dot)

    def ff(w1, w2, x):
        return fl(w2, fl(w1, x))

    def jf(w1, w2, x):
        return jl(w2, jl(w1, x))

    got = _lines(print_saved_residuals, ff, W1, W2, X, capsys=capsys)
    want = _lines(jac.print_saved_residuals, jf, W1, W2, X, capsys=capsys)
    assert got[:3] == want[:3]
    ops = [re.sub(r" from /.*$", "", g) for g in got[3:]]
    assert ops == [
        "f32[5] output of dot_general",
        "f32[5] output of sin",
        "f32[6] output of dot_general",
    ]
    rows = fg.debug.saved_residuals(ff, W1, W2, X, argnums=(0, 1, 2))
    assert len(rows) == len(got)
