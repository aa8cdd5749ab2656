"""Private empirical risk minimisation: L2-regularised logistic regression, output perturbation.

The static black box of the growing-database paper's second application (Cummings et al. 2018,
Section 3.2.1, Theorems 12-13). We use the output-perturbation algorithm of Chaudhuri, Monteleoni
and Sarwate (2011, Algorithm 1) for

    J(theta; D) = (1/n) sum_i ln(1 + exp(-y_i <theta, x_i>)) + (lam/2) ||theta||^2,

with labels ``y_i`` in {-1, +1} and features with ``||x_i||_2 <= 1``. Assumptions, made to hold
exactly: the logistic loss is convex and differentiable with gradient
``-y sigma(-y <theta, x>) x``, whose norm is at most ``||x|| <= 1`` (so it is 1-Lipschitz in
theta); features are clipped to the unit ball (:func:`clip_features`); ``J`` is
``lam``-strongly convex. Then for replace-one neighbours the minimisers satisfy
``||theta*(D) - theta*(D')||_2 <= 2/(n lam)`` (CMS11, Corollary 8), and releasing
``theta* + b`` with density ``∝ exp(-n lam eps ||b|| / 2)`` is ``eps``-DP. The package releases
``theta*`` with floating-point-safe discrete Laplace noise of L1 sensitivity ``sqrt(d) 2/(n lam)``
instead (:func:`output_perturbation`; CMS11's continuous noise is kept as ``safe=False``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .data import Dataset
from .mechanisms import laplace

Seed = np.random.Generator | int


def clip_features(features: object) -> np.ndarray:
    """Scale every row with ``||x||_2 > 1`` onto the unit sphere (rows inside are unchanged)."""
    x = check.array(features, "features", ndim=2)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1.0)


def one_hot_features(data: Dataset, label: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of ``data``: every attribute but the binary ``label`` one-hot encoded,
    plus an intercept, scaled by ``1/sqrt(d + 1)`` so that ``||x||_2 = 1`` exactly; ``y = +1``
    where ``label`` is 1 and ``-1`` where it is 0."""
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    axis = data.domain.axis(label)
    if data.domain.shape[axis] != 2:
        raise ValueError(f"label {label!r} must be a binary attribute")
    others = [a for a in range(data.domain.d) if a != axis]
    blocks = [np.eye(data.domain.shape[a])[data.records[:, a]] for a in others]
    x = np.hstack([*blocks, np.ones((data.n, 1))]) / math.sqrt(len(others) + 1)
    return clip_features(x), np.where(data.records[:, axis] == 1, 1.0, -1.0)


def _check_problem(features: object, labels: object, lam: object):
    x = check.array(features, "features", ndim=2)
    y = check.array(labels, "labels", ndim=1)
    if x.shape[1] == 0:
        raise ValueError("features must have at least one column")
    if y.shape[0] != x.shape[0] or x.shape[0] == 0:
        raise ValueError(f"labels must have {x.shape[0]} >= 1 entries, got {y.shape[0]}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("labels must be -1 or +1")
    if np.any(np.linalg.norm(x, axis=1) > 1 + 1e-9):
        raise ValueError("features must have norm at most 1 (use clip_features)")
    return x, y, check.positive(lam, "lam")


def _check_theta(theta: object, x: np.ndarray) -> np.ndarray:
    theta = check.array(theta, "theta", ndim=1)
    if theta.shape[0] != x.shape[1]:
        raise ValueError(
            f"theta must have {x.shape[1]} entries (one per feature), got {theta.shape[0]}"
        )
    return theta


def objective(theta: object, features: object, labels: object, *, lam: float) -> float:
    """``J(theta)``: mean logistic loss plus ``(lam/2) ||theta||^2``."""
    x, y, lam = _check_problem(features, labels, lam)
    theta = _check_theta(theta, x)
    return _objective(theta, x, y, lam)[0]


def _objective(theta: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float):
    margins = y * (x @ theta)
    loss = np.mean(np.logaddexp(0.0, -margins)) + 0.5 * lam * theta @ theta
    weights = -y * np.exp(-np.logaddexp(0.0, margins))  # -y sigma(-margin)
    return float(loss), x.T @ weights / x.shape[0] + lam * theta


def minimizer(features: object, labels: object, *, lam: float) -> np.ndarray:
    """The non-private optimum ``theta* = argmin J`` (L-BFGS; ``J`` is strongly convex, so the
    optimum is unique and the gradient tolerance bounds the distance to it by ``gtol/lam``)."""
    from scipy import optimize  # imported here: scipy.optimize takes ~0.2 s to import

    x, y, lam = _check_problem(features, labels, lam)
    options = {"gtol": 1e-10, "maxiter": 1000}
    start = np.zeros(x.shape[1])
    found = optimize.minimize(
        _objective, start, args=(x, y, lam), jac=True, method="L-BFGS-B", options=options
    )
    return found.x


def output_perturbation(
    features: object,
    labels: object,
    *,
    lam: float,
    epsilon: float,
    rng: Seed,
    safe: bool = True,
) -> np.ndarray:
    """``theta* + b``: the minimiser of ``J`` with noise. Guarantee: ``epsilon``-DP under
    replace-one neighbours, from the L2 sensitivity ``2/(n lam)`` of ``theta*`` (CMS11,
    Corollary 8), for the exact minimiser; ours is found to gradient tolerance ``1e-10`` (within
    ``1e-10/lam`` of it, far below the noise).

    By default (``safe=True``) the noise is floating-point safe: ``theta*`` is released by
    :func:`dpteach.laplace` (snapped to a power-of-two grid, exact discrete Laplace noise in
    integer arithmetic, each coordinate's rounding step accounted for) with the L1 sensitivity
    ``sqrt(d) 2/(n lam)`` (``||v||_1 <= sqrt(d) ||v||_2``), so the released doubles are exactly
    ``epsilon``-DP. Its noise norm is about ``sqrt(2)`` times that of CMS11's (``sqrt(2d/(d+1))``
    in root mean square), so its excess risk, quadratic in small noise, is about twice theirs.
    Laplace rather than Gaussian noise keeps the box pure ``epsilon``-DP, which the schedulers of
    :mod:`dpteach.growing` compose.

    ``safe=False`` is a *teaching option only*: CMS11's Algorithm 1 as written, ``||b|| ~
    Gamma(d, 2/(n lam eps))`` in a uniform direction (density ``∝ exp(-n lam eps ||b|| / 2)``),
    drawn with numpy's floating-point Gamma and normal samplers: the guarantee is that of the
    idealised real-valued mechanism, not of the doubles it releases (see :func:`dpteach.laplace`).

    A passed Generator is consumed; the same seed gives the same output.
    """
    x, y, lam = _check_problem(features, labels, lam)
    epsilon = check.positive(epsilon, "epsilon")
    check.boolean(safe, "safe")
    gen = check.rng(rng)
    n, d = x.shape
    sensitivity = check.finite_ratio(2.0, n * lam, "the sensitivity 2/(n lam)")
    theta = minimizer(x, y, lam=lam)
    if safe:
        return laplace(theta, sensitivity=math.sqrt(d) * sensitivity, epsilon=epsilon, rng=gen)
    direction = gen.normal(size=d)
    direction /= np.linalg.norm(direction)
    radius = gen.gamma(shape=d, scale=check.finite_ratio(sensitivity, epsilon, "the noise scale"))
    return theta + radius * direction


def excess_risk(theta: object, features: object, labels: object, *, lam: float) -> float:
    """``J(theta) - min J``: the excess (regularised) empirical risk of ``theta`` (Eq. 2.1)."""
    x, y, lam = _check_problem(features, labels, lam)
    theta = _check_theta(theta, x)
    best = minimizer(x, y, lam=lam)
    return _objective(theta, x, y, lam)[0] - _objective(best, x, y, lam)[0]


@dataclass(frozen=True)
class LogisticERMBox:
    """Private logistic regression as a black box for :mod:`dpteach.growing`: predicts the
    binary attribute ``label`` from the others (:func:`one_hot_features`) by
    :func:`output_perturbation` (floating-point safe); ``epsilon``-DP. The workload is not used
    (pass ``None``); the output is the parameter vector ``theta``."""

    label: str
    lam: float = 0.05
    name: str = "private logistic regression"

    def __call__(self, data, workload, *, epsilon, beta, rng) -> np.ndarray:
        x, y = one_hot_features(data, self.label)
        return output_perturbation(x, y, lam=self.lam, epsilon=epsilon, rng=rng)

    def excess_risk(self, theta: object, data: Dataset) -> float:
        """The excess regularised empirical risk of ``theta`` on ``data``."""
        x, y = one_hot_features(data, self.label)
        return excess_risk(theta, x, y, lam=self.lam)
