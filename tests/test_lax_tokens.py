"""``lax.create_token``/``after_all``: tokens pass through ``jit`` (a new token comes
out, as JAX's), ``vmap`` and ``grad`` beside arrays; JAX is the oracle for what comes
out of each call and for the error on a non-token."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

TOKEN = type(jax.lax.create_token())


def _kinds(tree: object, token_type: type) -> list[str]:
    """The leaves of ``tree`` (tokens included) as ``"token"`` or their dtype name."""
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, token_type))
    return ["token" if isinstance(x, token_type) else np.asarray(x).dtype.name for x in leaves]


def test_tokens_through_jit_like_jax() -> None:
    kinds = []
    for lib, np_, tok_type in ((jax, jnp, TOKEN), (fg, fnp, type(fg.lax.create_token()))):
        tok = lib.lax.create_token()
        arr = np_.ones(4)
        out_arr, out_tok = lib.jit(lambda a, t: (a, t))(arr, tok)
        assert isinstance(out_tok, tok_type) and out_tok is not tok
        np.testing.assert_array_equal(out_arr, np.ones(4))
        assert isinstance(lib.jit(lib.lax.create_token)(1.0), tok_type)
        y = lib.jit(lambda x: (x + 2, tok))(7)
        kinds.append(_kinds(y, tok_type))
        merged = lib.lax.after_all(tok, lib.lax.create_token())
        assert isinstance(merged, tok_type)
    assert kinds[0] == kinds[1] and kinds[0][1] == "token"


def test_tokens_beside_transforms_and_errors() -> None:
    tok = fg.lax.create_token()
    assert fg.grad(lambda x, t: x * 3.0)(2.0, tok) == 3.0
    out = fg.vmap(lambda x: (x * 2, fg.lax.create_token()))(np.arange(3.0))
    np.testing.assert_array_equal(out[0], np.arange(3.0) * 2)
    assert isinstance(out[1], type(tok))
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens") as want:
        jax.lax.after_all(1.0)
    with pytest.raises(type(want.value), match="Arguments to after_all must be tokens"):
        fg.lax.after_all(1.0)
