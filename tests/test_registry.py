"""Registry-driven rule tests: every primitive, every rule, no per-primitive test code.

For each primitive and each of its ``examples``: eager vs compiled lowering,
JVP vs central finite differences, VJP vs JVP (adjoint identity), second
derivatives for smooth examples, and batching vs a Python loop over slices
for several ``in_axes`` choices.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from cases import PRIMS, examples, sample

import funcgrad as fg
from funcgrad.core import dtypes
from funcgrad.testing import check_jvp, check_vjp

CASES = [pytest.param(p, i, id=f"{p.name}-{i}") for p in PRIMS for i in range(len(examples(p)))]


def _cases(test: str) -> list:
    """Every primitive's first example, and (under CI) half of its others (tests/cases.py)."""
    return sample(CASES, salt=test, group=lambda c: c.values[0].name)


def test_registry_complete():
    """Every primitive has every rule (or is marked non-differentiable) and test examples."""
    problems = {}
    for p in PRIMS:
        missing = p.missing_rules()
        if not p.reverse_differentiable:
            missing = [m for m in missing if m != "vjp"]
        if p.examples is None:
            missing.append("examples")
        if missing:
            problems[p.name] = missing
    assert not problems, f"primitives with missing rules: {problems}"


def _call(prim, ex, args):
    return prim.bind(*args, **ex.params)


def _diff_argnums(prim, ex):
    if ex.diff_argnums is not None:
        return ex.diff_argnums
    return tuple(i for i, a in enumerate(ex.args) if dtypes.is_inexact(np.asarray(a).dtype))


def _partial(prim, ex, nums):
    def f(*diff):
        args = list(ex.args)
        for i, d in zip(nums, diff):
            args[i] = d
        return _call(prim, ex, args)

    return f


@pytest.mark.parametrize("prim,i", _cases("test_lowering_eager_vs_jit"))
def test_lowering_eager_vs_jit(prim, i):
    ex = examples(prim)[i]
    eager = _call(prim, ex, ex.args)
    compiled = fg.jit(lambda *a: _call(prim, ex, a))(*ex.args)
    for a, b in zip(
        np.atleast_1d(eager) if not prim.multiple_results else eager,
        np.atleast_1d(compiled) if not prim.multiple_results else compiled,
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


def _differentiable(prim, ex):
    return prim.differentiable and _diff_argnums(prim, ex)


@pytest.mark.parametrize("prim,i", _cases("test_jvp_finite_differences"))
def test_jvp_finite_differences(prim, i):
    ex = examples(prim)[i]
    if not _differentiable(prim, ex):
        pytest.skip("non-differentiable primitive")
    if not prim.forward_differentiable:
        with pytest.raises(TypeError, match="forward-mode"):
            fg.jvp(_partial(prim, ex, _diff_argnums(prim, ex)), tuple(ex.args), tuple(ex.args))
        return
    nums = _diff_argnums(prim, ex)
    f = _partial(prim, ex, nums)
    check_jvp(f, [ex.args[j] for j in nums], rtol=max(ex.rtol, 1e-5), atol=max(ex.atol, 1e-5))


@pytest.mark.parametrize("prim,i", _cases("test_vjp_adjoint"))
def test_vjp_adjoint(prim, i):
    ex = examples(prim)[i]
    if not _differentiable(prim, ex) or not prim.reverse_differentiable:
        pytest.skip("no reverse mode")
    nums = _diff_argnums(prim, ex)
    f = _partial(prim, ex, nums)
    check_vjp(
        f,
        [ex.args[j] for j in nums],
        rtol=max(ex.rtol, 1e-6),
        atol=max(ex.atol, 1e-6),
        numerical=not prim.forward_differentiable,
    )


@pytest.mark.parametrize("prim,i", _cases("test_second_order"))
def test_second_order(prim, i):
    ex = examples(prim)[i]
    if not _differentiable(prim, ex) or not ex.smooth:
        pytest.skip("not smooth")
    if not prim.reverse_differentiable or not prim.forward_differentiable:
        pytest.skip("second order needs both modes")
    nums = _diff_argnums(prim, ex)
    f = _partial(prim, ex, nums)
    args = [ex.args[j] for j in nums]
    rng = np.random.default_rng(3)
    out = f(*args)
    outs = out if isinstance(out, list) else [out]
    # complex outputs get complex cotangents (real part first, as for real outputs)
    v = [
        rng.standard_normal(np.shape(o)) + 1j * rng.standard_normal(np.shape(o))
        if np.iscomplexobj(o)
        else rng.standard_normal(np.shape(o))
        for o in outs
    ]

    def pullback(*xs):
        o, pb = fg.vjp(f, *xs)
        return list(pb(v if isinstance(o, list) else v[0]))

    check_jvp(pullback, args, rtol=1e-4, atol=1e-4)


def _axes_choices(ex, batch_argnums):
    """in_axes combinations: all 0, all -1, first None, and 1 where rank allows."""
    n = len(ex.args)
    combos = []
    for choice in (0, -1, 1):
        axes = []
        for j in range(n):
            if j not in batch_argnums:
                axes.append(None)
                continue
            nd = np.ndim(ex.args[j]) + 1
            axes.append(choice if -nd <= choice < nd else 0)
        combos.append(tuple(axes))
    if len(batch_argnums) > 1:
        first = list(combos[0])
        first[batch_argnums[0]] = None
        combos.append(tuple(first))
        mixed = list(combos[0])
        mixed[batch_argnums[-1]] = -1
        combos.append(tuple(mixed))
    return sorted(set(combos), key=str)


def _axes_sample(prim, i, ex, batch_argnums):
    """Two of the in_axes combinations per example: all-0, and one more chosen by a
    stable hash of the case, so across the registry every kind of combination is
    exercised while each case compiles two batched programs, not five."""
    combos = [c for c in _axes_choices(ex, batch_argnums) if not all(a is None for a in c)]
    zero = tuple(0 if j in batch_argnums else None for j in range(len(ex.args)))
    rest = [c for c in combos if c != zero]
    pick = [zero]
    if rest:
        pick.append(rest[zlib.crc32(f"{prim.name}-{i}".encode()) % len(rest)])
    return pick


@pytest.mark.parametrize("prim,i", _cases("test_batching_vs_loop"))
def test_batching_vs_loop(prim, i):
    ex = examples(prim)[i]
    batch_argnums = ex.batch_argnums
    if batch_argnums is None:
        batch_argnums = tuple(range(len(ex.args)))
    if not batch_argnums:
        pytest.skip("no batchable operands")
    rng = np.random.default_rng(7)
    B = 3
    for axes in _axes_sample(prim, i, ex, batch_argnums):
        # build batched args: perturb each copy so examples differ
        per_example = []
        for b in range(B):
            args = []
            for j, a in enumerate(ex.args):
                a = np.asarray(a)
                if axes[j] is not None and a.dtype.kind == "f":
                    a = a + 0.01 * b * rng.standard_normal(a.shape).astype(a.dtype)
                args.append(a)
            per_example.append(args)
        batched = []
        for j, a in enumerate(ex.args):
            if axes[j] is None:
                batched.append(np.asarray(a))
            else:
                batched.append(np.stack([pe[j] for pe in per_example], axis=axes[j]))
        got = fg.vmap(lambda *a: _call(prim, ex, a), in_axes=axes)(*batched)
        for b in range(B):
            want = _call(prim, ex, per_example[b])
            gots = got if prim.multiple_results else [got]
            wants = want if prim.multiple_results else [want]
            for g, w in zip(gots, wants):
                np.testing.assert_allclose(
                    np.asarray(g)[b],
                    np.asarray(w),
                    rtol=1e-6,
                    atol=1e-6,
                    err_msg=f"{prim.name} in_axes={axes} example {b}",
                )


def test_every_family_represented():
    fams = {p.family for p in PRIMS}
    assert {"elementwise", "reductions", "shape", "linalg", "calls"} <= fams


_ = itertools  # keep import for future combinatorial extensions
