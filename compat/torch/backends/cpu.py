"""``torch.backends.cpu``: the vector instruction set of the host, as PyTorch reports it."""

from __future__ import annotations

import os

__all__ = ["get_cpu_capability"]

#: PyTorch's names of the x86 capabilities it dispatches on, best first, with the CPU
#: flags (``/proc/cpuinfo``) each needs
_X86 = (
    ("AVX512", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    ("AVX2", ("avx2", "fma")),
)


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def get_cpu_capability() -> str:
    """PyTorch's name of the CPU's vector capability: ``"AVX512"``, ``"AVX2"`` or
    ``"DEFAULT"`` (x86; ``ATEN_CPU_CAPABILITY`` lowers it, as in PyTorch). compat's kernels
    are XLA's, which pick their own instructions: the answer describes the host only."""
    flags = _cpu_flags()
    found = "DEFAULT"
    for name, needs in _X86:
        if all(f in flags for f in needs):
            found = name
            break
    order = ["DEFAULT", "AVX2", "AVX512"]
    asked = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    if asked in order and order.index(asked) < order.index(found):
        return asked
    return found
