"""Which public names of JAX's namespaces funcgrad has: writes ``docs/jax-coverage.md``.

For every public name of ``jax``, ``jax.numpy`` (and ``linalg``, ``fft``), ``jax.lax``
(and ``linalg``), ``jax.random``, ``jax.nn`` (and ``initializers``), ``jax.scipy.*``,
``jax.debug``, ``jax.tree_util``, ``jax.custom_derivatives``, ``jax.custom_batching``,
``jax.errors``, ``jax.example_libraries`` and ``jax.experimental.jet``, the page says
whether the namesake ``funcgrad`` namespace has it, or why it is out of scope (a device
mesh, typed keys, JAX's own internals).
``tests/test_jax_coverage.py`` fails when a name the page calls supported is missing.

    python tools/jax_coverage.py            # rewrite docs/jax-coverage.md
    python tools/jax_coverage.py --check    # exit 1 if the page is out of date
"""

from __future__ import annotations

import importlib
import pathlib
import re
import sys
import types
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as ``python tools/jax_coverage.py``
    sys.path.insert(0, str(ROOT))

from funcgrad.core.reduction_row import reduction_forms  # noqa: E402
from funcgrad.primitives import public_forms  # noqa: E402
from tools.coverage_page import page_main  # noqa: E402

PAGE = ROOT / "docs" / "jax-coverage.md"

_STATS = [
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "wrapcauchy",
]

#: the JAX namespaces compared, in page order
NAMESPACES: list[str] = [
    "jax",
    "jax.numpy",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.lax",
    "jax.lax.linalg",
    "jax.random",
    "jax.nn",
    "jax.nn.initializers",
    "jax.scipy.linalg",
    "jax.scipy.special",
    "jax.scipy.stats",
    *[f"jax.scipy.stats.{d}" for d in _STATS],
    "jax.scipy.optimize",
    "jax.scipy.signal",
    "jax.scipy.fft",
    "jax.scipy.integrate",
    "jax.scipy.interpolate",
    "jax.scipy.ndimage",
    "jax.scipy.spatial.transform",
    "jax.scipy.cluster.vq",
    "jax.debug",
    "jax.tree_util",
    "jax.tree",
    "jax.custom_derivatives",
    "jax.custom_batching",
    "jax.errors",
    "jax.example_libraries.stax",
    "jax.example_libraries.optimizers",
    "jax.experimental.jet",
]

#: the public names of namespaces without ``__all__`` whose module namespace is mostly their
#: implementation (``jax.experimental.jet``: its tracer, rule tables, imports): the names
#: JAX's documentation and test files use
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "jax.experimental.jet": ("fact", "jet", "jet2", "zero_series"),
}

_MESH = (
    "device meshes and named axes beyond fg.shard_map and its collectives (pmap, "
    "varying-axes casts, mesh contexts); funcgrad passes shardings to XLA"
)
_CONFIG = "a JAX configuration option or context manager for JAX's own runtime"
_INTERNAL = "JAX's internals or its extension points (funcgrad has its own IR and primitives)"
_REFS = "mutable array references (JAX's experimental state), not part of funcgrad's model"
_KEYS = "typed PRNG key implementations; funcgrad keys are raw uint32 threefry keys"
_NAMED_AXIS_LAX = [
    "all_gather_invariant",
    "pbroadcast",
    "pcast",
    "precv",
    "psend",
    "psum_invariant",
    "pvary",
    "ragged_all_to_all",
    "reduce_scatter",
    "psum2",
    "pbroadcast_to",
    "pgather",
    "axis_size_p",
]

#: names out of scope, per namespace, with the reason the page gives
OUT_OF_SCOPE: dict[str, dict[str, str]] = {
    "jax": {
        **dict.fromkeys(
            [
                "Shard",
                "smap",
                "pmap",
                "remove_size_one_mesh_axis_from_type",
                "make_array_from_callback",
                "make_array_from_process_local_data",
                "make_array_from_single_device_arrays",
                "process_indices",
                "host_count",
                "host_id",
                "host_ids",
                "copy_to_host_async",
                "live_arrays",
                "memory",
                "make_user_context",
            ],
            _MESH,
        ),
        **dict.fromkeys(
            [
                "allow_f16_reductions",
                "array_garbage_collection_guard",
                "auto_pcast",
                "check_tracer_leaks",
                "checking_leaks",
                "debug_key_reuse",
                "default_device",
                "default_matmul_precision",
                "default_prng_impl",
                "enable_checks",
                "enable_custom_prng",
                "explain_cache_misses",
                "jax2tf_associative_scan_reductions",
                "legacy_prng_key",
                "log_compiles",
                "numpy_dtype_promotion",
                "numpy_rank_promotion",
                "softmax_custom_jvp",
                "threefry_partitionable",
                "transfer_guard",
                "transfer_guard_device_to_device",
                "transfer_guard_device_to_host",
                "transfer_guard_host_to_device",
                "thread_guard",
                "no_execution",
                "no_tracing",
                "enable_x64",
                "disable_jit",
                "print_environment_info",
            ],
            _CONFIG,
        ),
        **dict.fromkeys(["Ref", "new_ref", "empty_ref", "free_ref", "freeze"], _REFS),
        **dict.fromkeys(["ad", "ds", "fwd_and_bwd", "named_call", "named_scope"], _INTERNAL),
    },
    "jax.errors": {
        "InconclusiveDimensionOperation": "shape polymorphism (jax.export), not in funcgrad",
        "JaxprTypeError": _INTERNAL,
        "KeyReuseError": _KEYS,
    },
    "jax.debug": {
        **dict.fromkeys(["DebugEffect", "OrderedDebugEffect"], _INTERNAL),
        **dict.fromkeys(
            ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"], _MESH
        ),
    },
    "jax.custom_derivatives": {"linear_call": _INTERNAL},
    "jax.random": dict.fromkeys(
        ["key_impl", "default_prng_impl", "PRNGKeyArray", "resolve_prng_impl", "unsafe_rbg_key"],
        _KEYS,
    ),
}


def _out_of_scope(ns: str, name: str, obj: object) -> str | None:
    if isinstance(obj, types.ModuleType):
        return "a submodule (listed on its own where in scope)"
    if name in OUT_OF_SCOPE.get(ns, {}):
        return OUT_OF_SCOPE[ns][name]
    if ns == "jax.lax" and name in _NAMED_AXIS_LAX:
        return _MESH
    if name.endswith("_p"):
        return "a JAX primitive object (funcgrad's primitives live in funcgrad.primitives)"
    return None


def _public(mod: types.ModuleType) -> list[str]:
    names = (
        getattr(mod, "__all__", None)
        or DOCUMENTED.get(mod.__name__)
        or [n for n in dir(mod) if not n.startswith("_")]
    )
    return sorted(set(names))


def _funcgrad_counterpart(ns: str) -> types.ModuleType | None:
    target = "funcgrad" + ns[len("jax") :]
    try:
        return importlib.import_module(target)
    except ImportError:
        return None


def _has(mod: types.ModuleType | None, name: str) -> bool:
    if mod is None:
        return False
    try:
        getattr(mod, name)
    except Exception:  # AttributeError, or a placeholder raising NotImplementedError
        return False
    return True


def survey() -> Iterator[tuple[str, list[str], list[str], dict[str, str]]]:
    """Per namespace: (name, supported names, missing names, out-of-scope name -> reason)."""
    for ns in NAMESPACES:
        try:
            jmod = importlib.import_module(ns)
        except ImportError:
            continue
        fmod = _funcgrad_counterpart(ns)
        sup, miss, oos = [], [], {}
        for name in _public(jmod):
            reason = _out_of_scope(ns, name, getattr(jmod, name, None))
            if reason:
                oos[name] = reason
            elif _has(fmod, name):
                sup.append(name)
            else:
                miss.append(name)
        yield ns, sup, miss, oos


def render() -> str:
    """The markdown page."""
    import jax

    rows, sections = [], []
    tot_s = tot_m = tot_r = 0
    for ns, sup, miss, oos in survey():
        tot_s, tot_m = tot_s + len(sup), tot_m + len(miss)
        fg_ns = "funcgrad" + ns[len("jax") :]
        short = fg_ns[len("funcgrad.") :]
        from_rows = [n for n in sup if n in public_forms(short) or n in reduction_forms(short)]
        tot_r += len(from_rows)
        rows.append(
            f"| `{ns}` | `{fg_ns}` | {len(sup)} | {len(from_rows)} | {len(miss)} | {len(oos)} |"
        )
        body = [f"## `{ns}`", ""]
        body.append("**Supported:** " + (", ".join(f"`{n}`" for n in sup) or "none"))
        body.append("")
        if from_rows:
            body.append(
                "**Of which generated from primitive rows:** "
                + ", ".join(f"`{n}`" for n in from_rows)
            )
            body.append("")
        body.append("**Missing:** " + (", ".join(f"`{n}`" for n in miss) or "none"))
        body.append("")
        if oos:
            by_reason: dict[str, list[str]] = {}
            for n, r in oos.items():
                by_reason.setdefault(r, []).append(n)
            body.append("**Out of scope:**")
            body.append("")
            for r, ns_names in by_reason.items():
                body.append(f"* {r}: " + ", ".join(f"`{n}`" for n in ns_names))
            body.append("")
        sections.append("\n".join(body))
    pct = 100.0 * tot_s / max(tot_s + tot_m, 1)
    head = [
        "# JAX API coverage",
        "",
        "<!-- generated by tools/jax_coverage.py; do not edit by hand -->",
        "",
        f"Every public name of JAX's namespaces (JAX {jax.__version__}) and whether the "
        "namesake funcgrad namespace has it. *Supported* means the name exists with "
        "JAX's signature and is tested against JAX; *out of scope* names need a device "
        "mesh, typed keys or JAX's internals. `tests/test_jax_coverage.py` fails when a "
        "name this page calls supported is missing. Regenerate with "
        "`python tools/jax_coverage.py`.",
        "",
        f"In all: **{tot_s} supported, {tot_m} missing ({pct:.0f}% of the names in scope).** "
        f"{tot_r} of the supported names are generated from the primitives' rows "
        "(`public=` on a row in `funcgrad/primitives/`, read here through "
        "`funcgrad.primitives.public_forms`, and on a reduction row, "
        "`funcgrad.core.reduction_row.reduction_forms`); the others are written by hand.",
        "",
        "| JAX namespace | funcgrad namespace | supported | from primitive rows | missing "
        "| out of scope |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        *rows,
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(sections)


def page_supported(text: str) -> dict[str, list[str]]:
    """The names a rendered page calls supported, per JAX namespace."""
    out: dict[str, list[str]] = {}
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        ns = block.split("`")[1]
        m = re.search(r"^\*\*Supported:\*\* (.*)$", block, flags=re.M)
        out[ns] = re.findall(r"`([^`]+)`", m.group(1)) if m else []
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` say whether it is current."""
    return page_main(argv, doc=__doc__, page=PAGE, render=render)


if __name__ == "__main__":
    sys.exit(main())
