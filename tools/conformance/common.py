"""What both conformance runners share: running the two workers, classifying, reporting.

A runner runs each upstream test file twice, in two processes
(:mod:`tools.conformance.worker`): ``upstream`` (the real library: the baseline) and
``swapped`` (funcgrad or compat). A test counts when upstream passes it and it is in
scope; the rate is the swapped passes among those. Each failure is put in one group
by its exception type and message (:func:`classify`), and out-of-scope tests are
listed with their reason (the runner's table, or the JAX/PyTorch internals the test
looked up).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]

GROUPS = ("missing name", "wrong error", "wrong value", "crash")

_MISSING_TYPES = {"MissingNameError", "ImportError", "ModuleNotFoundError", "NotImplementedError"}
_WRONG_ERROR = re.compile(
    r"not raised|does not match|did not match|Regex didn't match|regex|"
    r"Exception not raised|to be raised|expected .*Error",
    re.IGNORECASE,
)


def classify(rec: dict[str, Any]) -> str:
    """The failure group of a swapped test that upstream passes."""
    exc, msg = rec.get("exc_type", ""), rec.get("message", "")
    touched = [n for kind, n in rec.get("touched", []) if kind == "missing"]
    if rec.get("id", "").endswith("<import>"):
        touched = []
    if touched or exc in _MISSING_TYPES:
        return "missing name"
    if exc == "AttributeError" and "has no attribute" in msg:
        return "missing name"
    if rec.get("wrong_raises") or (rec["outcome"] == "fail" and _WRONG_ERROR.search(msg)):
        return "wrong error"
    if rec["outcome"] == "fail":
        return "wrong value"
    return "crash"


def cause(rec: dict[str, Any]) -> str:
    """A short, normalized cause: the missing names, or the exception's first line."""
    touched = [n for kind, n in rec.get("touched", []) if kind == "missing"]
    if touched and not rec.get("id", "").endswith("<import>"):
        return "missing " + ", ".join(sorted(set(touched))[:3])
    if rec.get("id", "").endswith("<import>"):
        return "file does not load: " + cause({**rec, "id": "", "touched": []})
    if rec.get("outcome") == "timeout":
        return "timeout"
    first = (rec.get("message") or "").strip().splitlines()
    text = first[0] if first else ""
    if rec.get("wrong_raises"):
        expected, got = rec["wrong_raises"][0]
        text = f"raised {got}, expected {expected}: {text}"
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", text)
    return f"{rec.get('exc_type', '')}: {text}"[:140]


@dataclass
class FileResult:
    """One test file's two runs, compared."""

    name: str
    upstream: dict[str, dict[str, Any]]
    swapped: dict[str, dict[str, Any]]
    out_of_scope: dict[str, str] = field(default_factory=dict)
    seconds: tuple[float, float] = (0.0, 0.0)

    @property
    def counted(self) -> list[str]:
        return [
            i
            for i, r in self.upstream.items()
            if r["outcome"] == "pass" and i not in self.out_of_scope
        ]

    @property
    def passed(self) -> list[str]:
        return [i for i in self.counted if self.swapped.get(i, {}).get("outcome") == "pass"]

    def failures(self) -> list[tuple[str, dict[str, Any]]]:
        out = []
        absent = {"outcome": "error", "exc_type": "NotCollected", "message": ""}
        for i, r in self.swapped.items():
            if i.endswith("<import>") or i == "<worker>":
                absent = r  # the swapped file did not load: that is why
        for i in self.counted:
            rec = self.swapped.get(i) or absent
            if rec.get("outcome") != "pass":
                out.append((i, rec))
        return out


def run_worker(
    lib: str, mode: str, file: pathlib.Path, sample: int, limit: int, timeout: float,
    env: dict[str, str],
) -> subprocess.Popen[bytes]:  # fmt: skip
    """Start one worker process, in a process group of its own; its JSON lands in
    ``proc.out_path``, its standard error in ``proc.err_file`` (a file, not a pipe: a
    process the tests leave behind, a ``DataLoader`` worker or ``multiprocessing``'s
    resource tracker, would hold a pipe open and the runner would wait on it forever)."""
    fd, out = tempfile.mkstemp(prefix=f"conf-{mode}-", suffix=".json")
    os.close(fd)
    cmd = [sys.executable, "-m", "tools.conformance.worker", "--lib", lib, "--mode", mode]
    cmd += ["--file", str(file), "--sample", str(sample), "--limit", str(limit)]
    cmd += ["--timeout", str(timeout)]
    cmd += ["--out", out]
    err = tempfile.TemporaryFile(prefix=f"conf-{mode}-err-")  # noqa: SIM115 (closed by collect)
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=err,
        start_new_session=True,
    )  # fmt: skip
    proc.out_path = out  # type: ignore[attr-defined]
    proc.err_file = err  # type: ignore[attr-defined]
    return proc


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """End what the worker's tests left running (its process group: the worker started it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # (nothing left)
        os.killpg(proc.pid, signal.SIGKILL)


def collect(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Wait for a worker; its records by test id (a crashed worker: one record)."""
    proc.wait()
    _end_group(proc)
    with proc.err_file:  # type: ignore[attr-defined]
        proc.err_file.seek(0)  # type: ignore[attr-defined]
        err = proc.err_file.read()  # type: ignore[attr-defined]
    path = pathlib.Path(proc.out_path)  # type: ignore[attr-defined]
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        tail = err.decode(errors="replace")[-800:]
        data = {
            "seconds": 0.0,
            "records": [{"id": "<worker>", "outcome": "error", "exc_type": "WorkerCrash",
                         "message": f"exit {proc.returncode}: {tail}"}],
        }  # fmt: skip
    finally:
        path.unlink(missing_ok=True)
    return data


def compare_file(
    lib: str,
    file: pathlib.Path,
    sample: int,
    timeout: float,
    scope: Sequence[tuple[str, str]],
    env: dict[str, str],
    parallel: bool = True,
    limit: int = 0,
) -> FileResult:
    """Run ``file`` upstream and swapped and compare the two."""
    runs = {}
    if parallel:
        procs = {
            m: run_worker(lib, m, file, sample, limit, timeout, env)
            for m in ("upstream", "swapped")
        }
        runs = {m: collect(p) for m, p in procs.items()}
    else:
        for m in ("upstream", "swapped"):
            runs[m] = collect(run_worker(lib, m, file, sample, limit, timeout, env))
    up = {r["id"]: r for r in runs["upstream"]["records"]}
    sw = {r["id"]: r for r in runs["swapped"]["records"]}
    res = FileResult(
        file.stem, up, sw, seconds=(runs["upstream"]["seconds"], runs["swapped"]["seconds"])
    )
    for i in up:
        reason = scope_reason(i, sw.get(i, {}), scope)
        if reason:
            res.out_of_scope[i] = reason
    return res


def scope_reason(test_id: str, swapped: dict[str, Any], scope: Sequence[tuple[str, str]]) -> str:
    """Why a test is out of scope (the table, or the internals it touched), or ``""``."""
    for pattern, reason in scope:
        if re.search(pattern, test_id):
            return reason
    if swapped.get("outcome") == "skip" and swapped.get("reason", "").startswith("out of scope:"):
        return swapped["reason"].removeprefix("out of scope:").strip()
    touched = swapped.get("touched", [])
    scoped = [n for kind, n in touched if kind == "scope"]
    if scoped:
        return scoped[0]
    internals = sorted({n for kind, n in touched if kind == "internal"})
    if internals:
        return "uses upstream internals: " + ", ".join(internals[:2])
    return ""


def report(results: list[FileResult], verbose: bool, title: str, lib_name: str) -> dict[str, Any]:
    """Print per-test lines (``verbose``), the rates, the failure groups; return a summary."""
    if verbose:
        for res in results:
            for i, up in sorted(res.upstream.items()):
                sw = res.swapped.get(i, {})
                if i in res.out_of_scope:
                    tag = f"OUT-OF-SCOPE ({res.out_of_scope[i][:60]})"
                elif up["outcome"] != "pass":
                    tag = f"upstream-{up['outcome']}"
                elif sw.get("outcome") == "pass":
                    tag = "PASS"
                else:
                    tag = f"FAIL [{classify(sw) if sw else 'not collected'}]"
                name = " ".join(i.split())  # parameter reprs may span lines
                print(f"{res.name}::{name} {tag}")
    print(f"\n== {title}")
    header = f"{'file':28} {'sampled':>7} {'upstream':>8} {'scope':>6} {lib_name:>9} {'rate':>7}"
    print(header)
    total = Counter()
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    scope_counts: Counter[str] = Counter()
    files = {}
    for res in results:
        ups = sum(r["outcome"] == "pass" for r in res.upstream.values())
        oos = sum(res.upstream[i]["outcome"] == "pass" for i in res.out_of_scope)
        counted, passed = len(res.counted), len(res.passed)
        rate = 100.0 * passed / counted if counted else 0.0
        print(f"{res.name:28} {len(res.upstream):7} {ups:8} {oos:6} {passed:9} {rate:6.1f}%")
        total.update(sampled=len(res.upstream), upstream=ups, scope=oos, counted=counted,
                     passed=passed)  # fmt: skip
        fgroups: Counter[str] = Counter()
        for _, rec in res.failures():
            g = classify(rec)
            fgroups[g] += 1
            groups[g][cause(rec)] += 1
        for i, why in res.out_of_scope.items():
            if res.upstream[i]["outcome"] == "pass":
                scope_counts[re.sub(r": .*", "", why)] += 1
        files[res.name] = {"sampled": len(res.upstream), "upstream_pass": ups,
                           "out_of_scope": oos, "pass": passed, "rate": round(rate, 1),
                           "groups": dict(fgroups)}  # fmt: skip
    rate = 100.0 * total["passed"] / total["counted"] if total["counted"] else 0.0
    print(
        f"{'total':28} {total['sampled']:7} {total['upstream']:8} {total['scope']:6} "
        f"{total['passed']:9} {rate:6.1f}%"
    )
    print(f"\n{lib_name} passes {total['passed']} of the {total['counted']} in-scope tests "
          f"upstream passes ({rate:.1f}%).")  # fmt: skip
    print("\n== failures by cause")
    for g in GROUPS:
        n = sum(groups[g].values())
        print(f"{g}: {n}")
        for c, k in groups[g].most_common(8):
            print(f"    {k:4}  {c}")
    print("\n== out of scope (upstream passes; not counted)")
    for why, k in scope_counts.most_common():
        print(f"    {k:4}  {why}")
    return {"files": files, "total": dict(total), "rate": round(rate, 1),
            "groups": {g: dict(groups[g]) for g in GROUPS},
            "out_of_scope": dict(scope_counts)}  # fmt: skip


def write_json(path: str | None, results: list[FileResult], summary: dict[str, Any]) -> None:
    """All records and the summary, for a later look at single failures."""
    if not path:
        return
    data = {
        "summary": summary,
        "files": {
            r.name: {"upstream": r.upstream, "swapped": r.swapped, "out_of_scope": r.out_of_scope}
            for r in results
        },
    }
    pathlib.Path(path).write_text(json.dumps(data, indent=1, default=str))
