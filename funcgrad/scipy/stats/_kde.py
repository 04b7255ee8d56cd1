"""``gaussian_kde``: kernel density estimation with Gaussian kernels, as in
``jax.scipy.stats``. A pytree (its arrays are leaves), so it passes through ``jit``,
``grad`` and ``vmap``."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad import random, tree_util
from funcgrad.numpy._core import ArrayLike, aval, fmt, here, promote
from funcgrad.scipy.linalg import cho_factor, cho_solve, cholesky
from funcgrad.scipy.special import logsumexp, ndtr

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _check_real(name: str, x: Any) -> None:
    if np.issubdtype(aval(x).dtype, np.complexfloating):
        raise NotImplementedError(f"gaussian_kde: {name} does not support complex data{here()}")


class gaussian_kde:
    """Gaussian kernel density estimate of ``dataset`` (shape ``[d, n]``, or ``[n]`` for
    one dimension) with optional ``weights`` and bandwidth ``bw_method`` (``'scott'``,
    ``'silverman'``, a scalar factor or a callable of the estimator)."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: ArrayLike, bw_method: Any = None, weights: ArrayLike | None = None):
        (dataset,) = promote("gaussian_kde", dataset)
        dataset = fnp.atleast_2d(dataset)
        _check_real("dataset", dataset)
        if not dataset.size > 1:
            raise ValueError(f"gaussian_kde: dataset should have multiple elements{here()}")
        d, n = aval(dataset).shape
        if weights is not None:
            dataset, weights = promote("gaussian_kde", dataset, weights, to="inexact")
            weights = fnp.atleast_1d(weights)
            if aval(weights).ndim != 1:
                raise ValueError(f"gaussian_kde: weights should be 1-D, got {fmt(weights)}{here()}")
            if aval(weights).shape[0] != n:
                raise ValueError(
                    f"gaussian_kde: weights should have length {n}, got {fmt(weights)}{here()}"
                )
            weights = weights / fnp.sum(weights)
        else:
            (dataset,) = promote("gaussian_kde", dataset, to="inexact")
            weights = fnp.full(n, 1.0 / n, dtype=aval(dataset).dtype)
        neff = 1 / fnp.sum(weights**2)
        bw = "scott" if bw_method is None else bw_method
        if isinstance(bw, str) and bw == "scott":
            factor = fnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw, str) and bw == "silverman":
            factor = fnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif callable(bw):
            self._set(neff, dataset, weights, None, None)
            factor = bw(self)
        elif not isinstance(bw, str) and np.ndim(bw) == 0:
            factor = bw
        else:
            raise ValueError(
                "gaussian_kde: bw_method should be 'scott', 'silverman', a scalar or a "
                f"callable, got {bw!r}{here()}"
            )
        cov = fnp.atleast_2d(fnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self._set(neff, dataset, weights, cov * factor**2, fnp.linalg.inv(cov) / factor**2)

    def _set(self, *values: Any) -> None:
        for name, value in zip(_FIELDS, values):
            object.__setattr__(self, name, value)

    @property
    def d(self) -> int:
        """Number of dimensions."""
        return aval(self.dataset).shape[0]

    @property
    def n(self) -> int:
        """Number of data points."""
        return aval(self.dataset).shape[1]

    def _points(self, points: Any) -> Any:
        (points,) = promote("gaussian_kde", points)
        _check_real("points", points)
        points = fnp.atleast_2d(points)
        d, m = aval(points).shape
        if d != self.d:
            if d == 1 and m == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(
                f"gaussian_kde: points have dimension {d}, dataset has dimension {self.d}{here()}"
            )
        return points

    def _log_kernel(self, points: Any) -> tuple[Any, Any]:
        """Log-kernel values ``[m, n]`` at the points, and the log-weights ``[n]``."""

        x = self._points(points)
        data, w, x, prec = promote(
            "gaussian_kde", self.dataset, self.weights, x, self.inv_cov, to="inexact"
        )
        white = cholesky(prec, lower=True)
        p, q = data.T @ white, x.T @ white
        log_norm = fnp.sum(fnp.log(fnp.diag(white))) - float(0.5 * self.d * np.log(2 * np.pi))
        sq = fnp.sum((q[:, None, :] - p[None, :, :]) ** 2, axis=-1)
        return log_norm - 0.5 * sq, w

    def evaluate(self, points: ArrayLike) -> Any:
        """Density at ``points`` (shape ``[d, m]``)."""
        arg, w = self._log_kernel(points)
        return fnp.sum(w[None, :] * fnp.exp(arg), axis=1)

    __call__ = evaluate

    def pdf(self, x: ArrayLike) -> Any:
        """Density at ``x`` (same as ``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x: ArrayLike) -> Any:
        """Log-density at ``x``, computed with ``logsumexp`` (no underflow)."""

        arg, w = self._log_kernel(x)
        return logsumexp(fnp.log(w)[None, :] + arg, axis=1)

    def _convolve(self, cov: Any, mean: Any, data: Any, weights: Any) -> Any:

        chol = cho_factor(cov)
        norm = 1.0 / (float(np.sqrt(2 * np.pi) ** self.d) * fnp.prod(fnp.diag(chol[0])))
        diff = data[:, :, None] - mean[:, None, :]  # [d, n, k]
        alpha = fnp.reshape(cho_solve(chol, fnp.reshape(diff, (self.d, -1))), aval(diff).shape)
        arg = 0.5 * fnp.sum(diff * alpha, axis=0)
        return norm * fnp.sum(fnp.exp(-arg) * weights[:, None], axis=0)

    def integrate_gaussian(self, mean: ArrayLike, cov: ArrayLike) -> Any:
        """Integral of the density times the Gaussian ``N(mean, cov)``."""
        mean = fnp.atleast_1d(fnp.squeeze(fnp.asarray(mean)))
        cov = fnp.atleast_2d(fnp.asarray(cov))
        if aval(mean).shape != (self.d,):
            raise ValueError(f"gaussian_kde: mean does not have dimension {self.d}{here()}")
        if aval(cov).shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde: covariance does not have dimension {self.d}{here()}")
        out = self._convolve(self.covariance + cov, mean[:, None], self.dataset, self.weights)
        return out[0]

    def integrate_box_1d(self, low: ArrayLike, high: ArrayLike) -> Any:
        """Integral of a 1-D density between the scalars ``low`` and ``high``."""

        if self.d != 1:
            raise ValueError(f"gaussian_kde: integrate_box_1d only handles 1-D pdfs{here()}")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(f"gaussian_kde: integrate_box_1d limits must be scalars{here()}")
        sigma = fnp.squeeze(fnp.sqrt(self.covariance))
        lo = fnp.squeeze((low - self.dataset) / sigma)
        hi = fnp.squeeze((high - self.dataset) / sigma)
        return fnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """Integral of the product of two densities of the same dimension."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde: KDEs are not the same dimensionality{here()}")
        sm, lg = (self, other) if self.n < other.n else (other, self)
        res = self._convolve(self.covariance + other.covariance, sm.dataset, lg.dataset, lg.weights)
        return fnp.sum(res * sm.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``shape`` draws from the density, as an array ``[d, *shape]``."""

        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        mean = fnp.zeros(self.d, aval(self.covariance).dtype)
        eps = random.multivariate_normal(
            eps_key, mean, self.covariance, shape=shape, dtype=aval(self.dataset).dtype
        )
        return self.dataset[:, ind] + fnp.moveaxis(eps, -1, 0)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not supported (as in JAX): use ``integrate_box_1d``."""
        raise NotImplementedError(
            f"gaussian_kde: only 1-D box integrations are supported; use integrate_box_1d{here()}"
        )

    def set_bandwidth(self, bw_method: Any = None) -> Any:
        """Not supported (as in JAX): the estimator is immutable."""
        raise NotImplementedError(f"gaussian_kde: changing the bandwidth is not supported{here()}")

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return tuple(getattr(self, f) for f in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> gaussian_kde:
        del aux_data
        kde = cls.__new__(cls)
        kde._set(*children)
        return kde


tree_util.register_pytree_node(gaussian_kde, gaussian_kde.tree_flatten, gaussian_kde.tree_unflatten)
