"""Anomaly mode: ``detect_anomaly`` / ``set_detect_anomaly`` on compat and on real
PyTorch: the same switches, NaN errors, warnings naming the node and the user's
forward line, and ``metadata["traceback_"]``."""

from __future__ import annotations

import warnings

from torch_oracle import check as _check
from torch_oracle import error_of as _err


def _warnings(fn):
    """``fn()``'s result and the messages of the warnings it raised."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, [(x.category.__name__, str(x.message)) for x in w]


def _forward_lines(message):
    """The source lines a "Traceback of forward call" warning shows."""
    lines = message.split("Traceback of forward call that caused the error:\n", 1)[1]
    lines = lines.split(" (Triggered internally", 1)[0]
    return [ln.strip() for ln in lines.splitlines() if ln.startswith("    ")]


def test_switches_and_context_managers():
    def scenario(torch, rec):
        rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        _, w = _warnings(lambda: torch.autograd.detect_anomaly())
        rec(w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly(check_nan=False):
                rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
                with torch.autograd.set_detect_anomaly(False):
                    rec(torch.is_anomaly_enabled())
                rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        torch.autograd.set_detect_anomaly(True, check_nan=False)
        rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        torch.autograd.set_detect_anomaly(False)
        rec(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        torch.set_anomaly_enabled(True)
        rec(torch.is_anomaly_enabled())
        torch.set_anomaly_enabled(False)
        rec(_err(lambda: torch.autograd.detect_anomaly()(print)))
        rec(torch.is_anomaly_enabled())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(scenario)


def test_nan_in_backward_raises_and_names_the_forward_line():
    def scenario(torch, rec):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                x = torch.tensor([0.0, 1.0], requires_grad=True)
                y = x.sqrt()  # the NaN comes from here
                z = y * 0
                err, w = _warnings(lambda: _err(lambda: z.sum().backward()))
        rec(err, len(w), w[0][0], w[0][1].split(".")[0])
        rec(_forward_lines(w[0][1])[-1])
        rec(x.grad)

    _check(scenario)


def test_without_anomaly_mode_nan_passes_silently():
    def scenario(torch, rec):
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        (x.sqrt() * 0).sum().backward()
        rec(x.grad)
        x.grad = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly(check_nan=False):
                (x.sqrt() * 0).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_nan_index_names_the_input_position():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.set_detect_anomaly(True):
                y = a / b
                rec(_err(lambda: (y * 0).sum().backward()))

    _check(scenario)


def test_error_in_backward_warns_with_the_forward_stack():
    def scenario(torch, rec):
        class Boom(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom in backward")

        x = torch.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                y = x.exp()
                out = Boom.apply(y)  # forward line of the failing node
                r, w = _warnings(lambda: _err(lambda: out.sum().backward()))
        user_line = "out = Boom.apply(y)  # forward line of the failing node"
        rec(r, [m.split(".")[0] for _, m in w], user_line in _forward_lines(w[0][1]))
        # recorded outside anomaly mode: no forward information
        out2 = Boom.apply(x.exp())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                r, w = _warnings(lambda: _err(lambda: out2.sum().backward()))
        # (PyTorch appends where in its C++ sources the warning was raised)
        rec(r, [m.split(" (Triggered internally")[0] for _, m in w])

    _check(scenario)


def test_traceback_metadata_is_recorded_only_in_anomaly_mode():
    def scenario(torch, rec):
        x = torch.tensor([1.0], requires_grad=True)
        y = x * 2
        rec("traceback_" in y.grad_fn.metadata)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                z = x * 3  # the recorded line
        tb = z.grad_fn.metadata["traceback_"]
        rec(type(tb).__name__, tb[-1].strip().splitlines()[-1])

    _check(scenario)


def test_anomaly_mode_gradients_match_normal_mode():
    def scenario(torch, rec):
        w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        x = torch.tensor([0.3, -0.7])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                for _ in range(2):
                    loss = (w @ x).tanh().pow(2).sum()
                    loss.backward()
        rec(w.grad)
        g = torch.autograd.grad((w * w).sum(), w, create_graph=True)[0]
        rec(g, g.requires_grad)

    _check(scenario)


def test_double_backward_error_names_the_node_that_induced_it():
    def scenario(torch, rec):
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                y = x.sqrt()  # induces the double-backward node
                (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
                keys = sorted(g.grad_fn.metadata)
                parent = g.grad_fn.metadata["parent_"]
                err, w = _warnings(lambda: _err(lambda: (g * 0).sum().backward()))
        rec(keys, parent.name(), err[0], "returned nan values" in err[1], len(w))
        first, second = (m for _, m in w)
        rec(first.split(".")[0].startswith("Error detected in"))
        rec(second.split(".")[0].strip())
        lines = second.split("previous calculation:\n", 1)[1].split(" (Triggered", 1)[0]
        rec([ln.strip() for ln in lines.splitlines() if ln.startswith("    ")][-1])
        rec("parent_" in y.grad_fn.metadata)

    _check(scenario)
