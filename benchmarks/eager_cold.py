"""Short eager scripts in fresh processes: funcgrad vs a NumPy-based autograd library vs JAX.

What a user of funcgrad feels first is not the steady state of a jitted step but a
script that calls an un-jitted ``grad`` a few dozen times over small arrays: every
program met for the first time either compiles (XLA: 25-45 ms a program) or runs
on the host tier (funcgrad's default on a CPU: NumPy, no compile). Each script runs
in a fresh process (nothing cached in memory; JAX's and funcgrad's persistent caches
pointed at an empty temporary directory), and the figure is the wall time of the
script's body, imports excluded, with the main thread's CPU time beside it:

* ``logistic``: 40 steps of gradient descent on a logistic regression (64 x 8);
* ``mlp``: 30 steps of a 2-layer tanh MLP (32 x 16 -> 32 -> 1);
* ``fn20``: the gradient of a 20-op scalar function at 30 points.

Implementations: ``funcgrad`` (tier mode as shipped), ``funcgrad_compiled`` (the
compiled tier only: what eager funcgrad did before the host tier), ``autograd`` (the
HIPS ``autograd`` package, NumPy-based, when installed) and ``jax`` (un-jitted
``jax.grad``).

    python -m benchmarks.eager_cold
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

IMPLS = ("funcgrad", "funcgrad_compiled", "autograd", "jax")


def _lib(impl: str) -> tuple[Any, Any]:
    """(grad, numpy module) of an implementation."""
    if impl.startswith("funcgrad"):
        import funcgrad as fg
        import funcgrad.numpy as fnp

        if impl == "funcgrad_compiled":
            fg.config.update("funcgrad_eager_tier", "compiled")
        return fg.grad, fnp
    if impl == "autograd":
        import autograd
        import autograd.numpy as anp

        return autograd.grad, anp
    import jax
    import jax.numpy as jnp

    return jax.grad, jnp


def _scripts(grad: Any, np_: Any) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = (rng.uniform(size=64) > 0.5).astype(np.float32)
    x2 = rng.standard_normal((32, 16)).astype(np.float32)
    y2 = rng.standard_normal((32, 1)).astype(np.float32)

    def logistic() -> float:
        def loss(w):
            p = 1.0 / (1.0 + np_.exp(-(np_.dot(x, w))))
            return -np_.mean(y * np_.log(p + 1e-6) + (1.0 - y) * np_.log(1.0 - p + 1e-6))

        g = grad(loss)
        w = np.zeros(8, np.float32)
        for _ in range(40):
            w = w - 0.5 * g(w)
        return float(loss(w))

    def mlp() -> float:
        def loss(params):
            w1, b1, w2 = params
            h = np_.tanh(np_.dot(x2, w1) + b1)
            return np_.mean((np_.dot(h, w2) - y2) ** 2)

        g = grad(loss)
        params = [
            (rng.standard_normal((16, 32)) * 0.25).astype(np.float32),
            np.zeros(32, np.float32),
            (rng.standard_normal((32, 1)) * 0.18).astype(np.float32),
        ]
        for _ in range(30):
            gs = g(params)
            params = [p - 0.1 * q for p, q in zip(params, gs)]
        return float(loss(params))

    def fn20() -> float:
        def f(v):
            for i in range(5):
                v = np_.sin(v) * 1.1 + np_.cos(v * 0.5) - np_.tanh(v) * 0.25 + 0.1 * i
            return np_.sum(v * v)

        g = grad(f)
        total = 0.0
        for i in range(30):
            total += float(np_.sum(g(np.full(4, 0.1 * i, np.float32))))
        return total

    return {"logistic": logistic, "mlp": mlp, "fn20": fn20}


def _measure(impl: str) -> dict[str, float]:
    """Each script's wall time (``name``) and the main thread's CPU time over it
    (``name_cpu``: on a shared machine the wall time counts other processes' turns too;
    the process's CPU time would count the background import of SciPy that ``import
    funcgrad`` starts)."""
    grad, np_ = _lib(impl)
    out = {}
    for name, script in _scripts(grad, np_).items():
        t, c = time.perf_counter(), time.thread_time()
        script()
        out[name] = time.perf_counter() - t
        out[f"{name}_cpu"] = time.thread_time() - c
    return out


def main() -> None:
    """Each implementation in a fresh process per run; prints seconds and ratios."""
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "FUNCGRAD_CACHE_DIR": cache, "JAX_COMPILATION_CACHE_DIR": ""}
        for impl in IMPLS:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks.eager_cold", "--one", impl],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            )
            if proc.returncode != 0:
                print(f"{impl}: not run ({proc.stderr.strip().splitlines()[-1:]})")
                continue
            results[impl] = json.loads(proc.stdout.strip().splitlines()[-1])
    names = [n for n in next(iter(results.values()), {}) if not n.endswith("_cpu")]
    print(f"{'script':10s}" + "".join(f"{m:>23s}" for m in results) + "   funcgrad/autograd")
    for n in names:
        row = "".join(f"{results[m][n]:8.3f}s ({results[m][n + '_cpu']:.3f} cpu)" for m in results)
        ratio = ""
        if "autograd" in results and "funcgrad" in results:
            f, a = results["funcgrad"], results["autograd"]
            ratio = f"{f[n] / a[n]:10.1f}x ({f[n + '_cpu'] / a[n + '_cpu']:.1f}x cpu)"
        print(f"{n:10s}{row}{ratio}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(_measure(sys.argv[2])))
    else:
        main()
