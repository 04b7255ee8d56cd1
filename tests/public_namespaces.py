"""The public namespaces of funcgrad and compat's own additions: the ones the API
reference renders (tests/test_docs_api.py) and the docstring check covers
(tests/test_docstrings.py)."""

NAMESPACES = [
    "funcgrad",
    "funcgrad.numpy",
    "funcgrad.numpy.linalg",
    "funcgrad.numpy.fft",
    "funcgrad.lax",
    "funcgrad.lax.linalg",
    "funcgrad.scipy.linalg",
    "funcgrad.scipy.special",
    "funcgrad.scipy.stats",
    "funcgrad.scipy.optimize",
    "funcgrad.scipy.signal",
    "funcgrad.scipy.fft",
    "funcgrad.scipy.integrate",
    "funcgrad.scipy.interpolate",
    "funcgrad.scipy.ndimage",
    "funcgrad.scipy.cluster.vq",
    "funcgrad.scipy.spatial.transform",
    "funcgrad.random",
    "funcgrad.nn",
    "funcgrad.nn.initializers",
    "funcgrad.optim",
    "funcgrad.debug",
    "funcgrad.interop",
    "funcgrad.example_libraries.stax",
    "funcgrad.example_libraries.optimizers",
    "funcgrad.config",
    "funcgrad.distributed",
    "funcgrad.ad_checkpoint",
    "funcgrad.checkpoint_policies",
    "funcgrad.custom_derivatives",
    # compat's own additions (what PyTorch has not): lazy mode and its policy
    "compat.lazy",
]
