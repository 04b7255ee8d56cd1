"""``torch.autograd.gradcheck``/``gradgradcheck`` against PyTorch's: the same verdicts,
errors and warnings on correct and deliberately wrong gradients, real and complex."""

from __future__ import annotations

import importlib
import warnings

import pytest
from torch_oracle import check


def _wrong_hook(torch, t):
    z = t.clone()
    z.register_hook(lambda g: g + 1e-2)
    return z


def _refuses_undefined(torch, t):
    def hook(g):
        if g is None:
            raise RuntimeError("x is undefined")

    z = t.clone()
    z.register_hook(hook)
    return z


CASES = {
    "smooth": (lambda torch, a, b: (a * b).sin().sum(0), "real2"),
    "two_outputs": (lambda torch, a, b: (a.exp(), (a @ b.unsqueeze(-1)).tanh()), "real2"),
    "int_output": (lambda torch, a, b: (a * 2, a.long()), "real2"),
    "no_output": (lambda torch, a, b: (), "real2"),
    "wrong_grad": (lambda torch, a, b: _wrong_hook(torch, a), "real2"),
    "undefined_grad": (lambda torch, a, b: _refuses_undefined(torch, a), "real2"),
    "undefined_grad_of_one": (lambda torch, a, b: (a * 2, _refuses_undefined(torch, b)), "real2"),
    "detached": (lambda torch, a, b: torch.tensor([a.sum().item()]), "real2"),
    "complex": (lambda torch, a: (a * a).exp(), "complex"),
    "complex_wrong": (lambda torch, a: _wrong_hook(torch, a), "complex"),
    "complex_to_real": (lambda torch, a: torch.real(a * a.conj() * 2), "complex"),
    "real_to_complex": (lambda torch, a, b: torch.complex(a, a * a), "real2"),
    "shape_depends_on_value": (
        lambda torch, a, b: torch.cat([a, a]) if bool((b >= b.detach()).all()) else a,
        "real2",
    ),
    "dtype_depends_on_value": (
        lambda torch, a, b: a.float() if bool((b >= b.detach()).all()) else a,
        "real2",
    ),
}


CASES_FIRST_ORDER_ONLY = (
    "undefined_grad",
    "undefined_grad_of_one",
    "wrong_grad",
    "complex_wrong",
    "detached",
    "no_output",
    "shape_depends_on_value",
    "dtype_depends_on_value",
)


def _inputs(torch, kind):
    g = torch.Generator().manual_seed(0)
    if kind == "complex":
        z = torch.randn(2, 2, dtype=torch.complex128, generator=g)
        return (z.requires_grad_(),)
    a = torch.rand(3, 2, dtype=torch.float64, generator=g).requires_grad_()
    b = torch.rand(2, dtype=torch.float64, generator=g).requires_grad_()
    return a, b


def _verdict(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # the error's type and the start of its message
        return (type(e).__name__, str(e).split(",")[0][:90])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("second", [False, True])
def test_gradcheck_verdicts_match_torch(name, second):
    fn, kind = CASES[name]

    def scenario(torch, rec):
        xs = _inputs(torch, kind)
        f = lambda *a: fn(torch, *a)
        check_fn = torch.autograd.gradgradcheck if second else torch.autograd.gradcheck
        if second and name in CASES_FIRST_ORDER_ONLY:
            return  # (random grad_outputs differ; the first-order verdicts cover these)
        rec(_verdict(lambda: check_fn(f, xs)))
        rec(_verdict(lambda: check_fn(f, xs, raise_exception=False)))

    check(scenario)


def test_gradcheck_input_validation():
    def scenario(torch, rec):
        rec(_verdict(lambda: torch.autograd.gradcheck(lambda x: x, (torch.rand(3),))))
        x = torch.ones(1, dtype=torch.float64, requires_grad=True).expand(2, 2)
        rec(_verdict(lambda: torch.autograd.gradcheck(lambda t: t, (x,), raise_exception=False)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = torch.ones(1, requires_grad=True)
            rec(torch.autograd.gradcheck(lambda t: t * 3, (y,), atol=1e-1))
        rec([str(m.message)[:60] for m in w if "double precision" in str(m.message)])
        module = importlib.import_module(torch.__name__ + ".autograd.gradcheck")
        rec(issubclass(module.GradcheckError, RuntimeError))

    check(scenario)


def test_gradcheck_undefined_grad_warning():
    """The backward-compatibility warning comes with the undefined-gradient failure, and
    ``check_undefined_grad=False`` skips the check."""

    def scenario(torch, rec):
        x = torch.ones(1, dtype=torch.float64, requires_grad=True)
        f = lambda t: _refuses_undefined(torch, t)
        for fast in (False, True):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                rec(_verdict(lambda: torch.autograd.gradcheck(f, (x,), fast_mode=fast)))
            rec([str(m.message)[:70] for m in w if "Backwards compatibility" in str(m.message)])
        rec(torch.autograd.gradcheck(f, (x,), check_undefined_grad=False))

    check(scenario)
