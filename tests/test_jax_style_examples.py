"""The JAX-style examples (stax CNN, GP regression, VAE) run end to end with small
settings and reach a metric that a broken model cannot.

All three run as scripts (``__main__``) in ONE fresh interpreter, to pay for importing
funcgrad and JAX once; each script's ``--help`` is checked there too.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# one worker runs the file, so the driver (the ``outputs`` fixture, ~8 s CPU) runs once per
# run, not once in each xdist worker that draws one of its tests
pytestmark = pytest.mark.xdist_group("jax_style_examples")

RUNS = {
    "stax_cnn_digits.py": ["--epochs", "3", "--seed", "1"],
    "gp_regression.py": ["--steps", "150", "--points", "30"],
    "vae_digits.py": ["--epochs", "5", "--seed", "1"],
}
HELP_FLAGS = {
    "stax_cnn_digits.py": "--epochs",
    "gp_regression.py": "--steps",
    "vae_digits.py": "--latent",
}

_DRIVER = """
import contextlib, io, json, runpy, sys
runs = json.loads(sys.argv[1])
result = {}
for script, args in runs.items():
    for argv in (["--help"], args):
        sys.argv = [script, *argv]
        out = io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out):
            try:
                runpy.run_path("examples/" + script, run_name="__main__")
            except SystemExit as e:
                code = e.code
        result[script + (" --help" if argv == ["--help"] else "")] = [code, out.getvalue()]
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def outputs() -> dict[str, list]:
    pytest.importorskip("sklearn")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("JAX_ENABLE_X64", None)
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(RUNS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _last_line(outputs: dict[str, list], script: str) -> str:
    code, text = outputs[script]
    assert code in (0, None), (script, code)
    return text.strip().splitlines()[-1]


def test_stax_cnn_digits_learns(outputs):
    m = re.fullmatch(r"test accuracy: (\d\.\d{4})", _last_line(outputs, "stax_cnn_digits.py"))
    assert m
    assert float(m.group(1)) > 0.85  # chance is 0.1; an untrained net stays near it


def test_gp_regression_fits_hyperparameters(outputs):
    m = re.fullmatch(r"test RMSE: (\d+\.\d{4})", _last_line(outputs, "gp_regression.py"))
    assert m
    # the initial hyper-parameters (noise std ~0.8, lengthscale ~2.1) give RMSE ~0.25
    # against sin; fitted ones are within the noise level
    assert float(m.group(1)) < 0.1


def test_vae_digits_beats_the_pixelwise_baseline(outputs):
    m = re.fullmatch(r"test ELBO: (-\d+\.\d\d)", _last_line(outputs, "vae_digits.py"))
    assert m
    # independent Bernoulli pixels with the data's own marginals score -27.1 nats per
    # image: a VAE whose latent code carries no information cannot do better
    assert float(m.group(1)) > -26.5


@pytest.mark.parametrize("script", sorted(HELP_FLAGS))
def test_help(outputs, script):
    code, text = outputs[script + " --help"]
    assert code == 0 and "usage:" in text and HELP_FLAGS[script] in text
