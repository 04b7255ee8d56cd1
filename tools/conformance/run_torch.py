"""Run PyTorch's own test files against compat (and against PyTorch).

Needs the test files of ``pytorch/pytorch`` (``test/test_autograd.py`` at
:data:`PINNED_COMMIT`; ``test_nn.py``, ``test_torch.py``, ``test_view_ops.py``,
``test_type_promotion.py``, ``optim/test_lrscheduler.py``, ``optim/test_optim.py``,
``test_indexing.py``, ``test_shape_ops.py``, ``test_sort_and_select.py``,
``test_tensor_creation_ops.py``, ``test_reductions.py``, ``test_binary_ufuncs.py``,
``nn/test_convolution.py`` and ten more of ``test/nn/``, ``test_dataloader.py``,
``test_transformers.py``, ``test_unary_ufuncs.py``, ``test_functional_optim.py``,
``test_utils.py``: see
``docs/conformance.md`` for the copies measured),
kept outside this repository, and the ``expecttest`` package (PyTorch's own
``common_utils`` imports it for the baseline run)::

    python tools/conformance/run_torch.py --test-file /tmp/torch-src/test_autograd.py
    python tools/conformance/run_torch.py --test-file A.py --test-file B.py --sample 0 -v
    python tools/conformance/run_torch.py --torch-src /tmp/torch-src   # the default files
    python tools/conformance/run_torch.py --torch-src /tmp/torch-src \\
        --from-ascend /work/.mirror/Ascend+pytorch/repo   # Ascend's copies, NPU lines undone

Each file runs twice, in separate processes: as it is (real PyTorch and its own
``torch.testing._internal``), then with ``torch`` swapped for ``compat.torch`` and
the helpers for the shims in :mod:`tools.conformance.shims` (``torch_test_util``,
``torch_device_type``, ``torch_dtype_lists``, ``torch_nn_util``). ``--sample N``
keeps at most N cases of each parametrized test method (``0``: all). See
``docs/conformance.md``.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import re
import subprocess
import sys

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from tools.conformance.common import FileResult, compare_file, report, write_json

#: the pytorch/pytorch commit whose ``test/test_autograd.py`` the figures are for
PINNED_COMMIT = "5c322af10e52e4d236104ceefd542f34e6dcf20a"

#: tests needing what compat deliberately does not have: (regex on the test id, reason)
OUT_OF_SCOPE: list[tuple[str, str]] = [
    (r"[Cc]uda|CUDA|_cuda|[Gg]pu|[Ss]tream|[Mm]ps|MPS|[Xx]pu", "CUDA and other accelerators"),
    (r"[Pp]rofil|[Kk]ineto|[Rr]ecord_function|nvtx|itt", "the profiler"),
    (r"[Dd]ynamo|[Cc]ompile|[Ii]nductor|_aot", "torch.compile / dynamo"),
    (r"[Jj]it|[Ss]cript|[Tt]orch[Ss]cript", "TorchScript"),
    # (embeddings' sparse gradients are compat's: those tests count)
    (r"^(?!.*[Ee]mbedding).*[Ss]parse|[Nn]ested|[Jj]agged", "sparse and nested tensors"),
    (r"test_gradcheck_input_layout\d", "sparse and nested tensors (a sparse layout per case)"),
    (r"[Mm]kldnn|test_gradcheck_test_outputs", "MKL-DNN tensors (the tests need an MKL-DNN build)"),
    (r"[Nn]npack", "NNPACK (a CPU convolution library of PyTorch's; its private ops)"),
    (r"[Dd]ispatch|[Ss]ubclass|python_mode|[Tt]orch_?[Ff]unction", "dispatcher modes"),
    (r"[Cc]pp|[Cc]_?extension|[Ll]oad_inline", "C++ extensions"),
    (r"[Mm]ultiprocess|[Ff]ork|[Tt]hread|[Rr]eentrant_?[Bb]ackwards?_?[Pp]arallel", "threads and processes"),
    (r"[Ff]lop", "FLOP counting"),
    (r"[Qq]uantiz|[Ff]bgemm|_fb_fc_packed|[Qq]nnpack|test_qengine", "quantized tensors and engines"),
    (r"[Mm]eta(_|$|[A-Z])|[Ff]ake", "meta and fake tensors"),
    (r"[Dd]eterministic|[Ss]ynchroniz", "device determinism and streams"),
    (r"[Mm]emory_?[Ff]ormat|[Cc]hannels_?[Ll]ast|[Ss]trided?_|[Ss]torage", "memory layout and storage"),
    (r"[Gg]raph_?[Tt]ask|(?<![Ss]obol)[Ee]ngine|[Cc]ompiled_?[Aa]utograd|[Nn]ode_?[Nn]ame", "the C++ autograd engine"),
    (r"test_checkpointing_non_reentrant_autocast", "autocast (compat never changes dtypes under torch.autocast: docs/compat.md, torch.amp)"),
]  # fmt: skip


#: tests out of scope by the function they run (``Class.function``, a regex), for tests
#: whose ids say nothing of it: (regex, reason)
OUT_OF_SCOPE_BASE: list[tuple[str, str]] = [
    (r"^TestNN\.(<lambda>|with_tf32_o(n|ff)|test_(half|bfloat16|cfloat|cdouble))$",
     "PyTorch's module/criterion test tables and harness (common_nn.NewModuleTest)"),
]  # fmt: skip

#: swapped failures out of scope by their message, where compat refuses what it
#: deliberately lacks and the test's id and names say nothing of it: (regex, reason)
OUT_OF_SCOPE_MESSAGE: list[tuple[str, str]] = [
    (r"compat\.torch has no 'meta' device", "meta and fake tensors (the 'meta' device)"),
]


#: the files ``--torch-src DIR`` runs (relative to DIR), each a few minutes on 2 cores at
#: most; ``test_nn.py`` (about six minutes) is run by naming it with ``--test-file``
DEFAULT_FILES = (
    "test_autograd.py",
    "test_type_promotion.py",
    "test_view_ops.py",
    "test_lrscheduler.py",
)

#: the Ascend/pytorch commit whose copies of PyTorch's test files were measured
ASCEND_COMMIT = "9e73e708ab93"

#: test files taken from Ascend's copy by ``--from-ascend`` (path there -> name here)
ASCEND_FILES = {
    "test/test_type_promotion.py": "test_type_promotion.py",
    "test/test_view_ops.py": "test_view_ops.py",
    "test/optim/test_lrscheduler.py": "test_lrscheduler.py",
    "test/test_nn.py": "test_nn.py",
    "test/test_torch.py": "test_torch.py",
    "test/optim/test_optim.py": "test_optim.py",
    "test/test_indexing.py": "test_indexing.py",
    "test/test_shape_ops.py": "test_shape_ops.py",
    "test/test_sort_and_select.py": "test_sort_and_select.py",
    "test/test_tensor_creation_ops.py": "test_tensor_creation_ops.py",
    "test/test_reductions.py": "test_reductions.py",
    "test/test_binary_ufuncs.py": "test_binary_ufuncs.py",
    "test/nn/test_convolution.py": "test_convolution.py",
    "test/nn/test_pooling.py": "test_pooling.py",
    "test/nn/test_embedding.py": "test_embedding.py",
    "test/nn/test_dropout.py": "test_dropout.py",
    "test/nn/test_init.py": "test_init.py",
    "test/nn/test_module_hooks.py": "test_module_hooks.py",
    "test/nn/test_parametrization.py": "test_parametrization.py",
    "test/nn/test_packed_sequence.py": "test_packed_sequence.py",
    "test/nn/test_multihead_attention.py": "test_multihead_attention.py",
    "test/nn/test_pruning.py": "test_pruning.py",
    "test/nn/test_lazy_modules.py": "test_lazy_modules.py",
    "test/test_dataloader.py": "test_dataloader.py",
    "test/test_transformers.py": "test_transformers.py",
    "test/test_unary_ufuncs.py": "test_unary_ufuncs.py",
    "test/test_functional_optim.py": "test_functional_optim.py",
    "test/test_utils.py": "test_utils.py",
}


def undo_npu(text: str) -> str:
    """Ascend's copy of a PyTorch test file with its ``torch_npu`` adaptation undone, line
    by line: the ``torch_npu`` imports dropped, the NPU probes read as absent
    (``torch.npu.is_available()`` is ``False``), the PrivateUse1 decorators and flags
    named as their CUDA originals (skipped on a CPU), ``"npu"`` devices as ``"cuda"``,
    ``only_for='privateuse1'`` dropped (PyTorch instantiates for every device type), and
    the test-data download helper (``url.get_url``) and the several-NPU decorator
    (``skipIfUnsupportMultiNPU``) skipping, the device name empty (no Ascend 910A),
    ``@SupportedDevices([...])`` (Ascend's restriction of a test to its chips) dropped."""
    out = []
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s == "from torch_npu.testing.common_distributed import skipIfUnsupportMultiNPU":
            out.append(
                "def skipIfUnsupportMultiNPU(n):\n    return unittest.skip('needs several NPUs')\n"
            )
            continue
        code = s.partition("#")[0].strip()  # an import with a trailing comment (test_dataloader.py)
        if code in ("import torch_npu", "import torch_npu.testing") or s.startswith(
            "from torch_npu"
        ):
            continue
        if s.startswith("@SupportedDevices("):  # Ascend's device restriction (torch_npu's)
            continue
        if s == "from url import get_url":
            out.append("def get_url(name):\n    raise unittest.SkipTest('downloads test data')\n")
            continue
        for old, new in (
            ("torch._C._get_privateuse1_backend_name()", "'cuda'"),
            ("torch_npu.npu.is_available()", "False"),
            ("torch.npu.is_available()", "False"),
            ("torch_npu.npu.device_count()", "0"),
            ("torch.npu.device_count()", "0"),
            ("torch_npu.npu.get_device_name(0)", "''"),
            ("dtypesIfPRIVATEUSE1", "dtypesIfCUDA"),
            ("onlyPRIVATEUSE1", "onlyCUDA"),
            ("TEST_PRIVATEUSE1", "TEST_CUDA"),
            ("TEST_MULTINPU", "TEST_MULTIGPU"),
            ("torch_npu.npu.", "torch.cuda."),
            ("torch.npu.", "torch.cuda."),
            ("torch_npu.npu", "torch.cuda"),
            (", only_for='privateuse1'", ""),
            # test_transformers.py's restriction of its classes to the NPU: upstream's value
            ('device_types = ("privateuse1", )', 'device_types = ("cpu", "cuda")'),
            (', only_for="privateuse1"', ""),
        ):
            line = line.replace(old, new)
        line = re.sub(r"\.npu\(", ".cuda(", line)
        line = re.sub(r"\.is_npu\b", ".is_cuda", line)
        line = re.sub(r"(['\"])npu(:\d)?\1", lambda m: f"{m[1]}cuda{m[2] or ''}{m[1]}", line)
        out.append(line)
    return "".join(out)


#: Ascend's copies import names PyTorch 2.13 (the baseline) renamed: (line, 2.13's line)
TORCH_2_13 = {
    # 2.13's ``binary_ufuncs`` holds the Python references too (the old ``..._and_refs``)
    "    binary_ufuncs_and_refs,\n": "    binary_ufuncs as binary_ufuncs_and_refs,\n",
    # 2.13 spells ``skipIfMps`` ``skipIfMPS`` (nn/test_pooling.py's import)
    "    instantiate_parametrized_tests, slowTest, parametrize as parametrize_test, subtest, "
    "skipIfMps, gcIfJetson, \\\n": "    instantiate_parametrized_tests, slowTest, parametrize as "
    "parametrize_test, subtest, skipIfMPS as skipIfMps, gcIfJetson, \\\n",
}


def to_torch_2_13(text: str) -> str:
    """``text`` with the lines of :data:`TORCH_2_13` replaced (imports only)."""
    return "".join(TORCH_2_13.get(line, line) for line in text.splitlines(keepends=True))


def from_ascend(git_dir: str, out_dir: pathlib.Path) -> None:
    """Write :data:`ASCEND_FILES` from an Ascend/pytorch git directory at
    :data:`ASCEND_COMMIT` into ``out_dir``, NPU lines undone (:func:`undo_npu`) and
    imports renamed as PyTorch 2.13 names them (:func:`to_torch_2_13`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for src, name in ASCEND_FILES.items():
        text = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{ASCEND_COMMIT}:{src}"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        (out_dir / name).write_text(to_torch_2_13(undo_npu(text)))


#: the environment of both runs: PyTorch's ``load_tests`` would refuse test classes
#: not defined in the running script (the worker is that script)
ENV = {"PYTORCH_DISABLE_RUNNING_SCRIPT_CHK": "1"}


def scope_by_message(res: FileResult) -> None:
    """Mark out of scope the swapped failures :data:`OUT_OF_SCOPE_MESSAGE` names."""
    for i, rec in res.swapped.items():
        for pattern, reason in OUT_OF_SCOPE_MESSAGE:
            message = rec.get("message") or ""
            if i in res.upstream and i not in res.out_of_scope and re.search(pattern, message):
                res.out_of_scope[i] = reason


def scope_by_base(res: FileResult) -> None:
    """Mark out of scope the upstream tests :data:`OUT_OF_SCOPE_BASE` names."""
    for i, rec in res.upstream.items():
        for pattern, reason in OUT_OF_SCOPE_BASE:
            if i not in res.out_of_scope and re.search(pattern, rec.get("base", "")):
                res.out_of_scope[i] = reason


#: why the ``@ops`` tests are out of scope
OPINFO_REASON = (
    "PyTorch's OpInfo database (common_methods_invocations, an upstream internal the "
    "shims do not stand in for)"
)


def opinfo_methods(source: str) -> set[str]:
    """The test methods of ``source`` decorated with ``@ops(...)``: one test per entry of
    PyTorch's OpInfo database, which the swapped run does not generate."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if isinstance(f, ast.Name) and f.id == "ops":
                    out.add(node.name)
    return out


def scope_opinfo(res: FileResult, file: pathlib.Path) -> None:
    """Mark out of scope the upstream tests of the file's ``@ops`` methods."""
    names = opinfo_methods(file.read_text())
    for i, rec in res.upstream.items():
        if i not in res.out_of_scope and rec.get("base", "").rpartition(".")[2] in names:
            res.out_of_scope[i] = OPINFO_REASON


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--test-file", action="append", default=[], help="a test file (repeatable)")
    p.add_argument("--torch-src", default=None, help=f"a folder holding {DEFAULT_FILES}")
    p.add_argument("--sample", type=int, default=2, help="cases per test method (0: all)")
    p.add_argument("--limit", type=int, default=0, help="tests per file at most (0: all)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per test")
    p.add_argument("--serial", action="store_true", help="one process at a time")
    p.add_argument("--json", default=None, help="write all records here")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    p.add_argument("--from-ascend", metavar="GIT_DIR", default=None,
                   help="first write Ascend's copies (NPU lines undone) into --torch-src")  # fmt: skip
    args = p.parse_args(argv)
    if args.from_ascend:
        if not args.torch_src:
            p.error("--from-ascend needs --torch-src (where to write the files)")
        from_ascend(args.from_ascend, pathlib.Path(args.torch_src))

    files = [pathlib.Path(f) for f in args.test_file]
    if args.torch_src:
        files += [pathlib.Path(args.torch_src) / f for f in DEFAULT_FILES]
    if not files:
        p.error("give --test-file (repeatable) or --torch-src")
    for file in files:
        if not file.is_file():
            p.error(f"{file}: not a file (see docs/conformance.md for the copies measured)")
    results = []
    for file in files:
        res = compare_file(
            "torch", file, args.sample, args.timeout, OUT_OF_SCOPE, ENV,
            parallel=not args.serial, limit=args.limit,
        )  # fmt: skip
        scope_by_base(res)
        scope_by_message(res)
        scope_opinfo(res, file)
        print(f"{file.stem}: {len(res.upstream)} tests, {res.seconds[0]:.0f} s upstream, "
              f"{res.seconds[1]:.0f} s swapped", file=sys.stderr)  # fmt: skip
        results.append(res)
    title = f"PyTorch tests (pytorch/pytorch {PINNED_COMMIT[:12]}) against compat.torch"
    summary = report(results, args.verbose, title, "compat")
    write_json(args.json, results, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
