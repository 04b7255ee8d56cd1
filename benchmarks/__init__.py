"""Benchmarks: funcgrad side by side with JAX and PyTorch.

Run ``python -m benchmarks`` (see ``--help``). Workloads are registered with
:func:`benchmarks.harness.workload` in ``benchmarks/wl_*.py`` modules.
"""

from benchmarks.harness import REGISTRY, Workload, load_workloads, try_import_torch, workload

__all__ = ["REGISTRY", "Workload", "load_workloads", "try_import_torch", "workload"]
