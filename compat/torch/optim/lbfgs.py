"""``optim.LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search.

The algorithm follows PyTorch 2.13's ``LBFGS`` (itself after minFunc): each
``step(closure)`` runs up to ``max_iter`` iterations; the search direction
comes from the two-loop recursion over the last ``history_size`` curvature
pairs ``(y, s)`` (pairs with ``y.s <= 1e-10`` are skipped), the first
iteration's step is ``min(1, 1 / |g|_1) * lr``; without a line search the
parameters move by ``lr * d`` and the closure is re-evaluated, with
``line_search_fn="strong_wolfe"`` a bracketing/zoom search with cubic
interpolation picks the step. State (on the first parameter, PyTorch's keys):
``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``,
``H_diag``, ``prev_flat_grad``, ``prev_loss`` and ``al``.

Vectors and the recursion's scalars (``ro``, ``H_diag``, ``al``) are float32
compat Tensors as in PyTorch; the line search's scalar algebra (trial steps,
interpolation, Wolfe tests) runs in Python floats, where PyTorch partly uses
float32 0-d tensors, so trial steps can differ in the last float32 bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.optim._elementwise import check_lr, f32
from compat.torch.optim.optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_minimizer(
    x1: float,
    f1: float,
    g1: float,
    x2: float,
    f2: float,
    g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:
    """Minimizer of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clipped to ``bounds``.

    Without a real minimizer, the bounds' midpoint. ``bounds`` defaults to the
    interval between ``x1`` and ``x2``.
    """
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class _Trial:
    """One evaluated point of the line search: step ``t``, loss, flat gradient, slope."""

    __slots__ = ("f", "g", "gtd", "t")

    def __init__(self, t: float, f: float, g: Any, gtd: float) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(
    evaluate: Callable[[float], tuple[float, Any]],
    d: Any,
    t: float,
    f: float,
    g: Any,
    gtd: float,
    max_ls: int,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
) -> tuple[float, Any, float, int]:
    """Line search along ``d`` for a step meeting the strong Wolfe conditions.

    Returns ``(loss, flat_grad, t, evaluations)`` at the chosen step.
    """
    d_norm = float(d.abs().max())

    def trial(step: float) -> _Trial:
        f_new, g_new = evaluate(step)
        return _Trial(step, f_new, g_new, float(g_new.dot(d)))

    def sufficient_decrease(p: _Trial) -> bool:
        return not p.f > f + c1 * p.t * gtd

    def curvature(p: _Trial) -> bool:
        return abs(p.gtd) <= -c2 * gtd

    start = _Trial(0, f, g, gtd)
    prev, cur = start, trial(t)
    evals, n = 1, 0
    done = False
    bracket: list[_Trial] = []
    # Bracketing: grow the step until an interval holding an acceptable point is found.
    while n < max_ls:
        if not sufficient_decrease(cur) or (n > 1 and cur.f >= prev.f):
            bracket = [prev, cur]
            break
        if curvature(cur):
            bracket, done = [cur], True
            break
        if cur.gtd >= 0:
            bracket = [prev, cur]
            break
        nxt = _cubic_minimizer(
            prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd,
            bounds=(cur.t + 0.01 * (cur.t - prev.t), cur.t * 10),
        )  # fmt: skip
        prev, cur = cur, trial(nxt)
        evals += 1
        n += 1
    if n == max_ls:
        bracket = [start, cur]

    # Zoom: shrink the bracket by cubic interpolation until the conditions hold.
    insufficient_progress = False
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and n < max_ls:
        a, b = bracket
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        step = _cubic_minimizer(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        t_lo, t_hi = min(a.t, b.t), max(a.t, b.t)
        margin = 0.1 * (t_hi - t_lo)
        if min(t_hi - step, step - t_lo) < margin:
            if insufficient_progress or step >= t_hi or step <= t_lo:
                step = t_hi - margin if abs(step - t_hi) < abs(step - t_lo) else t_lo + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        cur = trial(step)
        evals += 1
        n += 1
        if not sufficient_decrease(cur) or cur.f >= bracket[low].f:
            bracket[high] = cur
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curvature(cur):
                done = True
            elif cur.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = cur
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """L-BFGS (see the module docstring); ``step`` requires a closure returning the loss.

    Only one parameter group is supported (``ValueError`` otherwise, as in
    PyTorch); parameters must be real. ``max_eval`` defaults to ``max_iter *
    5 // 4``; ``line_search_fn`` is ``None`` or ``"strong_wolfe"`` (anything
    else raises ``RuntimeError`` when the line search would run, as PyTorch).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        >>> opt = torch.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - 3) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> loss = opt.step(closure)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        for p in self._params:
            if p.is_complex():
                raise NotImplementedError("LBFGS in compat supports real parameters only")

    # ------------------------------------------------------------------ flat views
    def _flat_grad(self) -> Any:
        parts = []
        for p in self._params:
            g = p.grad
            parts.append(torch.zeros(p.numel(), dtype=p.dtype) if g is None else g.reshape(-1))
        return torch.cat(parts, 0)

    def _add_direction(self, t: float, d: Any) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset : offset + n].view_as(p), alpha=t)
            offset += n

    def _evaluate_at(self, closure: Callable[[], Any], x: list[Any], t: float, d: Any) -> Any:
        self._add_direction(t, d)
        loss = closure().item()  # PyTorch's float() runs under no_grad: no warning
        g = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, g

    # ------------------------------------------------------------------ step
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        with torch.no_grad():
            return self._run(closure)

    def _call(self, closure: Callable[[], Any]) -> Any:
        with torch.enable_grad():
            return closure()

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._call(closure)
        loss = orig_loss.item()
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(g.abs().max()) <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_g, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n = 0
        while n < max_iter:
            n += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = g.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = g.sub(prev_g)
                s = d.mul(t)
                ys = y.dot(s)
                if float(ys) > 1e-10:
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = self._two_loop(g, old_dirs, old_stps, ro, h_diag, state["al"])

            if prev_g is None:
                prev_g = g.clone()
            else:
                prev_g.copy_(g)
            prev_loss = loss

            if state["n_iter"] == 1:
                # PyTorch computes ``min(1, 1 / |g|_1) * lr`` with tensors of the
                # gradient's dtype: float32 rounding for float32 parameters, none for float64
                rnd = (lambda v: v) if g.dtype == torch.float64 else f32
                norm1 = float(g.abs().sum())
                inv = rnd(1.0 / norm1) if norm1 else math.inf  # (a zero gradient: 1/0 = inf)
                t = rnd(inv * rnd(lr)) if inv < 1.0 else lr
            else:
                t = lr
            gtd = float(g.dot(d))
            if gtd > -tol_change:
                break

            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = [p.clone() for p in self._params]

                def evaluate(step: float, x0: list[Any] = x0, d: Any = d) -> Any:
                    return self._evaluate_at(lambda: self._call(closure), x0, step, d)

                loss, g, t, ls_evals = _strong_wolfe(
                    evaluate, d, t, loss, g, gtd, max_ls=max_eval - evals
                )
                self._add_direction(t, d)
                opt_cond = float(g.abs().max()) <= tol_grad
            else:
                self._add_direction(t, d)
                opt_cond = False
                if n != max_iter:
                    loss = float(self._call(closure))
                    g = self._flat_grad()
                    opt_cond = float(g.abs().max()) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n == max_iter or evals >= max_eval or opt_cond:
                break
            if float(d.mul(t).abs().max()) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_g,
            prev_loss=prev_loss,
        )
        return orig_loss

    @staticmethod
    def _two_loop(
        g: Any, old_dirs: list[Any], old_stps: list[Any], ro: list[Any], h_diag: Any, al: list
    ) -> Any:
        """The inverse-Hessian approximation applied to ``-g`` (L-BFGS two-loop recursion)."""
        q = g.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-float(al[i]))
        r = q * h_diag
        for i in range(len(old_dirs)):
            beta = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=float(al[i] - beta))
        return r

    # ------------------------------------------------------------------ state dicts
    def _import_state_value(self, param: Any, key: str, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [self._import_state_value(param, key, v) for v in value]
        if value is None or isinstance(value, (int, float, bool)):
            return value
        if key in ("t", "prev_loss") and np.ndim(_plain(value)) == 0:
            return float(_plain(value))
        return super()._import_state_value(param, key, value)


def _plain(value: Any) -> Any:
    if hasattr(value, "detach"):
        value = value.detach()
        value = value.cpu() if hasattr(value, "cpu") else value
        return value.numpy()
    return value
