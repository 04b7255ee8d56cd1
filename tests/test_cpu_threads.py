"""``funcgrad_cpu_threads`` sizes XLA's CPU intra-op pool before its client starts, and
compat's ``torch.set_num_threads`` before the first tensor does the same; later requests
are an error (funcgrad) or recorded only (compat, as documented). Each case runs in a
fresh process: the pool is sized once per process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_POOL = """
import collections, os
def pool_threads():
    names = collections.Counter(
        open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")
    )
    return names["tf_XLAEigen"]
"""


def _run(code: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "NPROC")}
    subprocess.run(
        [sys.executable, "-c", _POOL + textwrap.dedent(code)], check=True, timeout=300, env=env
    )


def test_option_sizes_the_pool_and_refuses_a_late_change() -> None:
    _run(
        """
        import jax.numpy as jnp
        import pytest
        import funcgrad as fg
        import funcgrad.numpy as fnp
        fg.config.update("funcgrad_cpu_threads", 1)
        x = fnp.ones((256, 256))
        fg.jit(lambda a: a @ a)(x).block_until_ready()
        assert pool_threads() == 1, pool_threads()
        fg.config.update("funcgrad_cpu_threads", 1)  # the same size: fine
        with pytest.raises(RuntimeError, match="funcgrad_cpu_threads=3: XLA's CPU thread pool"):
            fg.config.update("funcgrad_cpu_threads", 3)
        assert fg.config.read("funcgrad_cpu_threads") == 1  # (a refused value is not kept)
        with pytest.raises(ValueError, match="non-negative int"):
            fg.config.update("funcgrad_cpu_threads", -1)
        """
    )


def test_default_pool_is_xla_default() -> None:
    _run(
        """
        import funcgrad as fg
        import funcgrad.numpy as fnp
        fg.jit(lambda a: a @ a)(fnp.ones((256, 256))).block_until_ready()
        assert fg.config.read("funcgrad_cpu_threads") == 0
        assert pool_threads() == len(os.sched_getaffinity(0)), pool_threads()
        """
    )


def test_compat_set_num_threads_before_the_first_tensor() -> None:
    _run(
        """
        import compat.torch as torch
        torch.set_num_threads(1)
        w = torch.randn(128, 128, requires_grad=True)
        for _ in range(3):
            (w @ w).sum().backward()
        import jax.numpy as jnp
        (jnp.ones((64, 64)) @ jnp.ones((64, 64))).block_until_ready()
        assert pool_threads() == 1, pool_threads()
        torch.set_num_threads(2)  # after the pool started: recorded, as documented
        assert torch.get_num_threads() == 2
        assert pool_threads() == 1
        """
    )
