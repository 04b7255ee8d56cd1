"""``torch.utils.collect_env``: the environment report PyTorch asks for in bug reports
(``get_env_info``, ``pretty_str``, ``get_pretty_env_info``, ``main``; ``python -m
compat.torch.utils.collect_env``), in PyTorch's layout, saying truthfully what runs
compat: ``compat.torch``'s version, the funcgrad/JAX/jaxlib/NumPy stack under it, JAX's
backend and devices. No CUDA, ROCm or compiler lines: compat is not a native build (the
accelerator compat can use is JAX's, reported in its own lines)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from collections import namedtuple

import jax
import numpy as np

import compat.torch as torch
import funcgrad

__all__ = ["SystemEnv", "get_env_info", "get_pretty_env_info", "main", "pretty_str"]

SystemEnv = namedtuple(
    "SystemEnv",
    [
        "torch_version",
        "is_debug_build",
        "funcgrad_version",
        "jax_version",
        "numpy_version",
        "os",
        "libc_version",
        "python_version",
        "python_platform",
        "is_cuda_available",
        "jax_backend",
        "jax_devices",
        "cpu_info",
        "pip_version",
        "pip_packages",
    ],
)

#: the distributions whose versions the report lists (names containing one of these)
PATTERNS = ("funcgrad", "jax", "numpy", "torch", "ml_dtypes", "opt_einsum", "scipy")

_FMT = """
PyTorch version: {torch_version}
Is debug build: {is_debug_build}
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: N/A

OS: {os}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Is CUDA available: {is_cuda_available}

funcgrad version: {funcgrad_version}
JAX version: {jax_version}
NumPy version: {numpy_version}
JAX backend: {jax_backend}
JAX devices: {jax_devices}

CPU:
{cpu_info}

Versions of relevant libraries:
{pip_packages}
""".strip()


def get_os() -> str | None:
    """The operating system as PyTorch names it: the release's pretty name and the
    machine on Linux, ``macOS <version> (<machine>)``, else Python's platform."""
    machine = platform.machine()
    if sys.platform.startswith("linux"):
        try:
            name = platform.freedesktop_os_release().get("PRETTY_NAME")
        except OSError:
            name = None
        return f"{name or 'linux'} ({machine})"
    if sys.platform == "darwin":
        version = platform.mac_ver()[0]
        return f"macOS {version} ({machine})" if version else None
    return platform.platform()


def get_libc_version() -> str:
    """``glibc-2.36`` and the like on Linux; ``N/A`` elsewhere (as PyTorch)."""
    if not sys.platform.startswith("linux"):
        return "N/A"
    return "-".join(platform.libc_ver())


def get_pip_packages(patterns: tuple[str, ...] = PATTERNS) -> tuple[str, str]:
    """The installed distributions matching ``patterns`` as ``name==version`` lines,
    sorted (read from the installed metadata, as ``pip list --format=freeze`` prints)."""
    found = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and any(p in name.lower().replace("-", "_") for p in patterns):
            found.add(f"{name}=={dist.version}")
    return "pip3", "\n".join(sorted(found, key=str.lower))


def get_cpu_info() -> str:
    """The processor's model name (``/proc/cpuinfo``), ``platform.processor()``
    elsewhere, and the core count."""
    model = platform.processor() or None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"Model name: {model or 'Could not collect'}\nCPU(s): {os.cpu_count() or 'Could not collect'}"


def get_env_info() -> SystemEnv:
    """The environment, collected now."""
    devices = jax.devices()
    kinds: dict[str, int] = {}
    for d in devices:
        kinds[d.device_kind] = kinds.get(d.device_kind, 0) + 1
    pip_version, pip_list = get_pip_packages()
    version = sys.version.replace("\n", " ")
    return SystemEnv(
        torch_version=torch.__version__,
        is_debug_build=False,
        funcgrad_version=getattr(funcgrad, "__version__", "Could not collect"),
        jax_version=jax.__version__,
        numpy_version=np.__version__,
        os=get_os(),
        libc_version=get_libc_version(),
        python_version=f"{version} ({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=platform.platform(),
        is_cuda_available=torch.cuda.is_available(),
        jax_backend=jax.default_backend(),
        jax_devices=", ".join(f"{n} x {k}" for k, n in kinds.items()),
        cpu_info=get_cpu_info(),
        pip_version=pip_version,
        pip_packages=pip_list,
    )


def pretty_str(envinfo: SystemEnv) -> str:
    """``envinfo`` in PyTorch's layout (``Could not collect`` for what is missing; each
    library line tagged with the pip that lists it)."""
    fields = {k: ("Could not collect" if v is None else v) for k, v in envinfo._asdict().items()}
    lines = fields["pip_packages"]
    fields["pip_packages"] = (
        "\n".join(f"[{fields['pip_version']}] {line}" for line in lines.split("\n"))
        if lines
        else "No relevant packages"
    )
    return _FMT.format(**fields)


def get_pretty_env_info() -> str:
    """The report as one string (what a bug report pastes)."""
    return pretty_str(get_env_info())


def main() -> None:
    """Print the report, as ``python -m torch.utils.collect_env`` does."""
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
