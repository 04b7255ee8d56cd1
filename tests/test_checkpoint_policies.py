"""checkpoint(policy=...) decides what is saved vs recomputed: equation counts in the
value-and-gradient program, gradients equal to JAX's."""

from __future__ import annotations

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.ad_checkpoint import checkpoint_name

P = fg.checkpoint_policies
X = np.linspace(0.1, 0.9, 3)
W = np.arange(9.0).reshape(3, 3) / 10


def _body(np_mod, name):
    def f(x, w):
        h = np_mod.tanh(w @ x)
        h = name(np_mod.sin(h), "a")
        return np_mod.sum(np_mod.tanh(w @ h))

    return f


F = _body(fnp, checkpoint_name)
J = _body(jnp, jax.ad_checkpoint.checkpoint_name)


def _counts(prog):
    c: dict = {}
    for e in prog.eqns:
        c[e.prim.name] = c.get(e.prim.name, 0) + 1
        for v in e.params.values():
            if isinstance(v, fg.Program):
                for k, n in _counts(v).items():
                    c[k] = c.get(k, 0) + n
    return c


# (dot_general, tanh, sin) in the value-and-grad program: the forward has (2, 2, 1),
# the backward 4 dots; the rest is recomputation
CASES = [
    ("none", None, (8, 4, 2)),
    ("nothing_saveable", P.nothing_saveable, (8, 4, 2)),
    ("everything_saveable", P.everything_saveable, (6, 2, 1)),
    ("dots_saveable", P.dots_saveable, (6, 4, 2)),
    ("checkpoint_dots", P.checkpoint_dots, (6, 4, 2)),
    ("dots_no_batch", P.dots_with_no_batch_dims_saveable, (6, 4, 2)),
    ("only_a", P.save_only_these_names("a"), (8, 4, 1)),
    ("any_but_a", P.save_any_names_but_these("a"), (8, 4, 2)),
    ("anything_but_a", P.save_anything_except_these_names("a"), (6, 2, 1)),
    ("both", P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("a")), (6, 4, 1)),
]


@pytest.mark.parametrize("name,policy,want", CASES, ids=[c[0] for c in CASES])
def test_policy_counts_and_grads(name, policy, want):
    f = fg.checkpoint(F, policy=policy)
    c = _counts(fg.make_ir(fg.value_and_grad(f, argnums=(0, 1)))(X, W))
    assert (c.get("dot_general", 0), c.get("tanh", 0), c.get("sin", 0)) == want
    jpol = None if policy is None else getattr(jax.checkpoint_policies, name, None)
    g = fg.grad(f, argnums=(0, 1))(X, W)
    j = jax.grad(jax.checkpoint(J, policy=jpol), argnums=(0, 1))(X, W)
    for a, b in zip(g, j):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_policy_under_jit_vmap_and_second_order():
    f = fg.checkpoint(F, policy=P.dots_saveable)
    g = fg.jit(fg.grad(f))(X, W)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(J)(X, W)), rtol=1e-12)
    xs = np.stack([X, 2 * X])
    gv = fg.vmap(fg.grad(f), in_axes=(0, None))(xs, W)
    np.testing.assert_allclose(np.asarray(gv), jax.vmap(jax.grad(J), (0, None))(xs, W), rtol=1e-12)
    h = fg.hessian(f)(X, W)
    np.testing.assert_allclose(np.asarray(h), jax.hessian(J)(X, W), rtol=1e-10, atol=1e-12)


def test_checkpoint_name_is_identity():
    x = np.arange(3.0)
    np.testing.assert_array_equal(np.asarray(checkpoint_name(x, "n")), x)
    tree = checkpoint_name({"a": x, "b": (x,)}, "n")
    np.testing.assert_array_equal(np.asarray(tree["b"][0]), x)
    assert fg.ad_checkpoint.checkpoint_name is checkpoint_name
    g = fg.grad(lambda x: fnp.sum(checkpoint_name(x, "n") ** 2))(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * x)


def test_names_match_jax():
    skip = {"offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"}
    for n in dir(jax.checkpoint_policies):
        if not n.startswith("_") and n not in skip:
            assert hasattr(P, n), n


def test_bad_policy():
    with pytest.raises(TypeError, match="policy must be callable"):
        fg.checkpoint(F, policy="dots")


def test_linearized_checkpoint_of_cond_recomputes_only_the_tangent():
    """linearize(checkpoint(f)) with a cond inside: the linear function keeps only what the
    tangent needs (cos, not sin), as JAX's (DCE prunes unused outputs of call-like
    equations: a checkpoint's program, a cond's branches), with JAX's values."""
    import jax
    import jax.numpy as jnp

    import funcgrad.numpy as fnp

    def f(lib, m):
        branch = lambda c: (m.sin(c), m.sin(c))
        return lambda x: lib.lax.cond(x > 0.0, branch, branch, x)

    ours = fg.linearize(fg.checkpoint(f(fg, fnp)), 4.0)
    theirs = jax.linearize(jax.checkpoint(f(jax, jnp)), 4.0)
    text = str(fg.make_jaxpr(ours[1])(1.0))
    jtext = str(jax.make_jaxpr(theirs[1])(1.0))
    assert " sin " not in text and " sin " not in jtext
    assert " cos " in text and " cos " in jtext
    for a, b in zip(ours[1](1.5), theirs[1](1.5)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
