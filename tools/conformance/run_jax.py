"""Run JAX's own test files against funcgrad (and against JAX, the baseline).

Needs a checkout of ``jax-ml/jax`` at :data:`PINNED_COMMIT` (the ``jax-v0.10.2``
tag, the JAX installed beside funcgrad) outside this repository, e.g.::

    git --git-dir=<jax.git> archive jax-v0.10.2 tests | tar -x -C /tmp/jax-src
    python tools/conformance/run_jax.py --jax-src /tmp/jax-src
    python tools/conformance/run_jax.py --jax-src /tmp/jax-src --files api_test --sample 4 -v

Each file runs twice, in separate processes: as it is (real JAX and JAX's own
``jax._src.test_util``), then with ``jax`` swapped for ``funcgrad`` and the test
helpers for :mod:`tools.conformance.shims.jax_test_util`. ``--sample N`` keeps at
most N cases of each test method (and makes JAX's sampled products generate N);
the default run takes a few minutes on two cores. See ``docs/conformance.md``.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from tools.conformance.common import FileResult, compare_file, report, write_json

#: the jax-ml/jax commit the selection is read from: tag jax-v0.10.2
PINNED_COMMIT = "990e6a0b84138346e6a38785412f36356e0e5dc3"

#: the selection (issue 35; ``lax_test`` and ``lax_numpy_indexing_test`` since the
#: thirteenth session): JAX's test files, by stem, under ``tests/``
FILES = [
    "api_test",
    "custom_api_test",
    "batching_test",
    "lax_autodiff_test",
    "lax_control_flow_test",
    "lax_numpy_test",
    "random_test",
    "api_util_test",
    "lax_test",
    "lax_numpy_indexing_test",
]

#: tests needing what funcgrad deliberately does not have: (regex on the test id, reason)
OUT_OF_SCOPE: list[tuple[str, str]] = [
    (r"[Pp]map|PmapTest|xmap", "pmap / several devices"),
    (
        r"[Jj]axpr|[Dd]ce|DCE|PartialEval|(?<![A-Za-z])pe_",
        "JAX's IR (jaxpr text, DCE, partial eval)",
    ),
    (r"[Ss]hard|[Mm]esh|PartitionSpec|[Ss]pmd|_pjit|Pjit", "shardings and device meshes"),
    (r"[Dd]onat", "buffer donation"),
    (r"[Dd]evices?_?[Pp]ut.*[Dd]evice|[Mm]ulti_?[Dd]evice|[Cc]ommitted", "several devices"),
    (r"[Cc]ache_?[Mm]iss|[Cc]ompilation_?[Cc]ache|CppJit|cpp_jit|_cpp_", "JAX's C++ dispatch"),
    (r"[Ll]ower|[Hh]lo|HLO|[Mm]lir|MLIR|[Ss]table_?hlo|[Cc]ompiled_?[Tt]ext", "lowered text"),
    (
        r"[Kk]ey[Aa]rray|[Tt]yped_?[Kk]ey|[Nn]ew_?[Kk]ey|KeyTy|[Kk]ey_?[Ii]mpl|PRNGImpl|[Pp]rng_?[Ii]mpl",
        "typed PRNG keys",
    ),
    # (``RBG``: random_lax_test's classes ``RBGPRNGTest``/``UnsafeRBGPRNGTest``)
    (
        r"[Ww]rap_?[Kk]ey|[Kk]ey_?[Dd]ata|[Cc]ustom_?[Pp]rng|[Uu]nsafe_rbg|[Rr]bg|RBG",
        "typed PRNG keys",
    ),
    # (a lower-case ``tpu`` not inside a word: ``test_wrong_output_type`` is no TPU test)
    (r"[Cc]uda|[Gg]pu|GPU|(?<![a-z])tpu|Tpu|TPU|[Rr]ocm", "accelerators"),
    (r"[Ee]xport|[Ss]erializ", "jax.export"),
    (r"[Tt]raceback|[Ss]tack_?[Tt]race|[Ff]iltered", "JAX's traceback filtering"),
    # these evaluate a make_jaxpr's jaxpr with jax._src.core.eval_jaxpr (an internal),
    # reached only after reading ``.jaxpr`` off the ClosedJaxpr, which fails first
    (r"test_initial_style_vmap_with_collective", "JAX's IR (core.eval_jaxpr)"),
    # these read the saved residuals off the jaxpr inside linearize's function
    # (``str(f_lin.func.args[0])``), an attribute of JAX's own closure
    (r"test_remat_custom_policy|test_remat_checkpoint_dots", "jaxpr text of residuals"),
    (r"[Ww]eak_?[Rr]ef.*[Cc]ache|[Cc]lear_?[Bb]ackends|[Bb]ackend_?[Ii]nit", "JAX's backends"),
    # one case per PRNG implementation (philox, rbg...: the case names carry only an
    # index); each checks the key's implementation object (``key._impl`` or
    # ``impl.key_shape``, internals); funcgrad's raw keys are threefry only
    (r"test_key_construction_with_explicit_impl_name", "typed PRNG keys"),
    # its last assertion is ``isclose(key, key)`` of a typed key (a scalar; funcgrad's
    # raw key gives one boolean per key word); the rest of the test passes
    (r"LaxBackedNumpyTests\.testIsClose$", "typed PRNG keys"),
    # JAX raises NotImplementedError for the derivative of ``.at[].apply``; funcgrad
    # differentiates it (tests/test_scatter_apply_derivative.py checks the values)
    (r"test_scatter_apply_(jvp|vjp)$", "a derivative JAX lacks (scatter_apply)"),
    # JAX raises NotImplementedError for the derivative of ``.at[].mul`` at indices not
    # promised unique; funcgrad's is exact with repeated indices too
    # (tests/test_scatter_mul_repeated_derivative.py: finite differences)
    (r"testIndexMulGradFailsIfNotUnique$", "a derivative JAX lacks (scatter_mul)"),
    # debugging_primitives_test's class skips itself with fewer than two devices and
    # prints from arrays sharded over a mesh
    (r"PartitionedDebugCallbackTest", "several devices"),
]

#: the id rule above that a sharding file's own tests all match
_SHARDING_RULE = "shardings and device meshes"

#: JAX's test files of sharding and meshes, measured with the "shardings and device meshes"
#: id rule lifted (every id there names a mesh or a shard; in api_test, its sharding tests
#: join its count); what funcgrad documents as out of scope stays out by the other rules
#: and :data:`SHARDING_REFUSALS`
SHARDING_FILES = [
    "shard_map_test",
    "pjit_test",
    "array_test",
    "linalg_sharding_test",
    "layout_test",
    "mesh_utils_test",
    # (its sharding tests: device_put to shardings, eval_shape's shardings...)
    "api_test",
]

#: funcgrad's own refusals of documented limits, read off a sharding file's swapped
#: failures: (regex on the message, reason); docs/design.md, "Collectives over named
#: axes and `shard_map`"
SHARDING_REFUSALS: list[tuple[str, str]] = [
    (r"shard_map axis_names=.*funcgrad maps over every mesh axis", "partial manual axes"),
    # (a typed key's implementation named in a test whose id does not say so)
    (r"needs JAX's typed keys", "typed PRNG keys"),
    # JAX's varying-axes types, which funcgrad's avals do not carry (as pvary/pcast,
    # out of scope by the swap): ``aval.mat``, ``all_gather(..., to=)``
    (r"'(Aval|ShapedArray)' object has no attribute 'mat'", "varying-axes types"),
    (r"all_gather\(\) got an unexpected keyword argument 'to'", "varying-axes types"),
]


def scope_for(stem: str) -> list[tuple[str, str]]:
    """The id rules of ``stem``: :data:`OUT_OF_SCOPE`, less the sharding rule for a file
    of :data:`SHARDING_FILES`."""
    if stem not in SHARDING_FILES:
        return OUT_OF_SCOPE
    return [(pattern, why) for pattern, why in OUT_OF_SCOPE if why != _SHARDING_RULE]


def mark_refusals(res: FileResult) -> None:
    """Count a sharding file's tests that funcgrad refuses by a documented limit as out of
    scope (only those upstream passes and the swap fails with that refusal)."""
    if res.name not in SHARDING_FILES:
        return
    for i in res.counted:
        message = res.swapped.get(i, {}).get("message") or ""
        for pattern, why in SHARDING_REFUSALS:
            if re.search(pattern, message):
                res.out_of_scope[i] = why
                break


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--jax-src", required=True, help=f"jax-ml/jax checkout at {PINNED_COMMIT}")
    p.add_argument("--files", nargs="*", default=FILES, help="test file stems (default: all)")
    p.add_argument("--sample", type=int, default=1, help="cases per test method (0: all)")
    p.add_argument("--limit", type=int, default=60, help="tests per file at most (0: all)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per test")
    p.add_argument("--serial", action="store_true", help="one process at a time")
    p.add_argument("--xla-defaults", action="store_true", help="XLA's default compiler flags")
    p.add_argument("--json", default=None, help="write all records here")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    args = p.parse_args(argv)

    tests = pathlib.Path(args.jax_src) / "tests"
    if not tests.is_dir():
        p.error(f"{tests} is not a directory: give a jax-ml/jax checkout at {PINNED_COMMIT}")
    env = {
        "JAX_NUM_GENERATED_CASES": str(args.sample or 10),
        "JAX_PLATFORMS": "cpu",
        "JAX_ENABLE_X64": "0",
    }
    if not args.xla_defaults:
        # as the project's test suite runs: XLA's classic CPU emitters, optimisations
        # off (programs that run once); the same for both runs
        env["XLA_FLAGS"] = "--xla_cpu_use_fusion_emitters=false"
        env["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
    results = []
    for stem in args.files:
        file = tests / f"{stem}.py"
        if not file.exists():
            print(f"{stem}: not in this checkout", file=sys.stderr)
            continue
        res = compare_file(
            "jax",
            file,
            args.sample,
            args.timeout,
            scope_for(stem),
            env,
            parallel=not args.serial,
            limit=args.limit,
        )
        mark_refusals(res)
        print(f"{stem}: {len(res.upstream)} tests, {res.seconds[0]:.0f} s upstream, "
              f"{res.seconds[1]:.0f} s swapped", file=sys.stderr)  # fmt: skip
        results.append(res)
    title = f"JAX tests (jax-ml/jax {PINNED_COMMIT[:12]}, jax-v0.10.2) against funcgrad"
    summary = report(results, args.verbose, title, "funcgrad")
    write_json(args.json, results, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
