"""Run PyTorch's ``test/test_autograd.py`` against compat (and against PyTorch).

Needs the single file ``test/test_autograd.py`` of ``pytorch/pytorch`` at
:data:`PINNED_COMMIT`, kept outside this repository, and the ``expecttest``
package (PyTorch's own ``common_utils`` imports it for the baseline run)::

    python tools/conformance/run_torch.py --test-file /tmp/torch-src/test_autograd.py
    python tools/conformance/run_torch.py --test-file ... --sample 0 -v

The file runs twice, in separate processes: as it is (real PyTorch and its own
``torch.testing._internal``), then with ``torch`` swapped for ``compat.torch`` and
the helpers for :mod:`tools.conformance.shims.torch_test_util`. ``--sample N``
keeps at most N cases of each parametrized test method (``0``: all). See
``docs/conformance.md``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from tools.conformance.common import compare_file, report, write_json

#: the pytorch/pytorch commit whose ``test/test_autograd.py`` the figures are for
PINNED_COMMIT = "5c322af10e52e4d236104ceefd542f34e6dcf20a"

#: tests needing what compat deliberately does not have: (regex on the test id, reason)
OUT_OF_SCOPE: list[tuple[str, str]] = [
    (r"[Cc]uda|CUDA|_cuda|[Gg]pu|[Ss]tream|[Mm]ps|MPS|[Xx]pu", "CUDA and other accelerators"),
    (r"[Pp]rofil|[Kk]ineto|[Rr]ecord_function|nvtx|itt", "the profiler"),
    (r"[Dd]ynamo|[Cc]ompile|[Ii]nductor|_aot", "torch.compile / dynamo"),
    (r"[Jj]it|[Ss]cript|[Tt]orch[Ss]cript", "TorchScript"),
    (r"[Ss]parse|[Nn]ested|[Jj]agged", "sparse and nested tensors"),
    (r"test_gradcheck_input_layout\d", "sparse and nested tensors (a sparse layout per case)"),
    (r"[Mm]kldnn|test_gradcheck_test_outputs", "MKL-DNN tensors (the tests need an MKL-DNN build)"),
    (r"[Dd]ispatch|[Ss]ubclass|python_mode|[Tt]orch_?[Ff]unction", "dispatcher modes"),
    (r"[Cc]pp|[Cc]_?extension|[Ll]oad_inline", "C++ extensions"),
    (r"[Mm]ultiprocess|[Ff]ork|[Tt]hread|[Rr]eentrant_?[Bb]ackwards?_?[Pp]arallel", "threads and processes"),
    (r"[Ff]lop", "FLOP counting"),
    (r"[Mm]eta(_|$|[A-Z])|[Ff]ake", "meta and fake tensors"),
    (r"[Dd]eterministic|[Ss]ynchroniz", "device determinism and streams"),
    (r"[Mm]emory_?[Ff]ormat|[Cc]hannels_?[Ll]ast|[Ss]trided?_|[Ss]torage", "memory layout and storage"),
    (r"[Gg]raph_?[Tt]ask|[Ee]ngine|[Cc]ompiled_?[Aa]utograd|[Nn]ode_?[Nn]ame", "the C++ autograd engine"),
    (r"test_checkpointing_non_reentrant_autocast", "autocast (compat never changes dtypes under torch.autocast: docs/compat.md, torch.amp)"),
]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--test-file", required=True, help=f"test_autograd.py at {PINNED_COMMIT}")
    p.add_argument("--sample", type=int, default=2, help="cases per test method (0: all)")
    p.add_argument("--limit", type=int, default=0, help="tests per file at most (0: all)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per test")
    p.add_argument("--serial", action="store_true", help="one process at a time")
    p.add_argument("--json", default=None, help="write all records here")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    args = p.parse_args(argv)

    file = pathlib.Path(args.test_file)
    if not file.is_file():
        p.error(f"{file}: give test/test_autograd.py of pytorch/pytorch at {PINNED_COMMIT}")
    res = compare_file(
        "torch",
        file,
        args.sample,
        args.timeout,
        OUT_OF_SCOPE,
        {},
        parallel=not args.serial,
        limit=args.limit,
    )
    print(f"{file.stem}: {len(res.upstream)} tests, {res.seconds[0]:.0f} s upstream, "
          f"{res.seconds[1]:.0f} s swapped", file=sys.stderr)  # fmt: skip
    title = f"PyTorch tests (pytorch/pytorch {PINNED_COMMIT[:12]}) against compat.torch"
    summary = report([res], args.verbose, title, "compat")
    write_json(args.json, [res], summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
