"""Private empirical risk minimisation: L2-regularised logistic regression, output perturbation.

The static black box of the growing-database paper's second application (Cummings et al. 2018,
Section 3.2.1, Theorems 12-13). We use the output-perturbation algorithm of Chaudhuri, Monteleoni
and Sarwate (2011, Algorithm 1) for

    J(theta; D) = (1/n) sum_i ln(1 + exp(-y_i <theta, x_i>)) + (lam/2) ||theta||^2,

with labels ``y_i`` in {-1, +1} and features with ``||x_i||_2 <= 1``. Assumptions, made to hold
exactly: the logistic loss is convex and differentiable with gradient
``-y sigma(-y <theta, x>) x``, whose norm is at most ``||x|| <= 1`` (so it is 1-Lipschitz in
theta); features are clipped to the unit ball (:func:`clip_features`; norms up to ``1 + 1e-9``
are accepted for rounding, and every bound below uses that constant); ``J`` is ``lam``-strongly
convex. Then for replace-one neighbours the *exact* minimisers satisfy
``||theta*(D) - theta*(D')||_2 <= 2/(n lam)`` (CMS11, Corollary 8).

No solver returns ``theta*``. We release a **certified** approximate minimiser ``theta_hat``
instead (:func:`solve`): it iterates until a rigorous upper bound on ``||grad J(theta_hat)||_2``
(floating-point rounding included) is at most a tolerance ``tau`` fixed in advance from public
parameters (default ``tau = 1e-3 / n``). Strong convexity gives ``||theta_hat - theta*||_2 <=
||grad J(theta_hat)||_2 / lam <= tau / lam``, so for neighbours ``D, D'``

    ||theta_hat(D) - theta_hat(D')||_2 <= tau/lam + 2/(n lam) + tau/lam,

the L2 sensitivity :func:`l2_sensitivity` (``1 + n tau`` times CMS11's: 0.1 % more noise by
default). The neighbour's gradient norm is unknown to the mechanism, but it was certified to be
at most ``tau`` too (or it was refused), and *whether* a run certifies is decided by public
parameters alone (:func:`solve`: exactly so in exact arithmetic, and rounding is kept below
``tau/4``), so a refusal leaks nothing. :func:`output_perturbation` adds noise to
``theta_hat`` for this sensitivity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .data import Dataset
from .mechanisms import _laplace, _safe_laplace_grid
from .privacy import PrivacyBudget, ZCDPBudget, _charge

Seed = np.random.Generator | int

#: Largest feature norm accepted (the unit ball, plus rounding of :func:`clip_features`): the
#: Lipschitz constant of the loss in every bound of this module.
MAX_NORM = 1 + 1e-9

#: Default gradient tolerance times ``n``: ``tau = DEFAULT_SLACK / n`` makes the sensitivity
#: ``(1 + DEFAULT_SLACK) 2 MAX_NORM / (n lam)``.
DEFAULT_SLACK = 1e-3

_U = 2.0**-53  # unit roundoff of float64


class NotCertifiedError(RuntimeError):
    """The solver did not certify ``||grad J|| <= tau``: nothing was released or charged."""


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
    if np.any(np.linalg.norm(x, axis=1) > MAX_NORM):
        raise ValueError("features must have norm at most 1 (use clip_features)")
    return x, y, check.positive(lam, "lam")


def _check_theta(theta: object, x: np.ndarray) -> np.ndarray:
    theta = check.array(theta, "theta", ndim=1)
    if theta.shape[0] != x.shape[1]:
        raise ValueError(
            f"theta must have {x.shape[1]} entries (one per feature), got {theta.shape[0]}"
        )
    return theta


def _tolerance(tol: object, n: int) -> float:
    return DEFAULT_SLACK / n if tol is None else check.positive(tol, "tol")


def l2_sensitivity(n: int, *, lam: float, tol: float | None = None) -> float:
    """The L2 sensitivity of the certified minimiser under replace-one neighbours:
    ``2 MAX_NORM / (n lam) + 2 tau / lam`` (module docstring; ``tau`` defaults to ``1e-3/n``)."""
    n = check.integer(n, "n", minimum=1)
    lam = check.positive(lam, "lam")
    tau = _tolerance(tol, n)
    return check.finite_ratio(2 * MAX_NORM / n + 2 * tau, lam, "the sensitivity 2(1/n + tau)/lam")


def objective(theta: object, features: object, labels: object, *, lam: float) -> float:
    """``J(theta)``: mean logistic loss plus ``(lam/2) ||theta||^2``."""
    x, y, lam = _check_problem(features, labels, lam)
    theta = _check_theta(theta, x)
    return _Problem(x, y, lam).value_and_gradient(theta)[0]


def _gamma(k: int) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of ``k`` operations."""
    return k * _U / (1 - k * _U)


class _Problem:
    """``J`` on trusted data, with a gradient whose rounding error is bounded.

    The data term ``X^T w / n`` is summed in ``m`` blocks of ``b ~ sqrt(n)`` rows (a batched
    product, then a sum of the ``m`` partial results), so its rounding error is at most
    ``(gamma_b + gamma_m (1 + gamma_b)) sum_i |x_ij| |w_i|`` whatever order BLAS adds in (Higham
    2002, Eq. 3.5): about ``2 sqrt(n) u`` after dividing by ``n``, not the ``n u`` of one sum.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, lam: float):
        self.n, self.d = x.shape
        self.x, self.y, self.lam = x, y, lam
        self.smooth = MAX_NORM**2 / 4 + lam  # L: the Hessian is at most L I
        self.b = math.isqrt(self.n - 1) + 1  # block length >= sqrt(n)
        self.m = -(-self.n // self.b)
        padded = np.zeros((self.m * self.b, self.d))
        padded[: self.n] = x
        self.blocks = padded.reshape(self.m, self.b, self.d)

    def value_and_gradient(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        margins = self.y * (self.x @ theta)
        loss = np.mean(np.logaddexp(0.0, -margins)) + 0.5 * self.lam * theta @ theta
        weights = np.zeros(self.m * self.b)
        weights[: self.n] = -self.y * np.exp(-np.logaddexp(0.0, margins))  # -y sigma(-margin)
        partial = np.matmul(weights.reshape(self.m, 1, self.b), self.blocks)[:, 0, :]
        return float(loss), partial.sum(axis=0) / self.n + self.lam * theta

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        margins = self.x @ theta
        # sigma(m) sigma(-m) = exp(-(logaddexp(0, m) + logaddexp(0, -m))), its square root per row
        rows = (
            self.x
            * np.exp(-0.5 * (np.logaddexp(0.0, margins) + np.logaddexp(0.0, -margins)))[:, None]
        )
        return rows.T @ rows / self.n + self.lam * np.eye(self.d)  # A^T A: one symmetric product

    def rounding_error(self, theta_norm: float, gradient_norm: float) -> float:
        """An upper bound on ``||computed gradient - exact gradient||_2`` at a point of norm
        ``theta_norm`` (assuming ``exp`` and ``logaddexp`` accurate to 8 ulps, as numpy's are).

        Per coordinate: a margin is off by ``gamma_d ||x|| ||theta||``, a weight by a quarter
        of that (``sigma`` is 1/4-Lipschitz) plus 16 ulps, the blocked sum by the bound above
        (``|w_i| <= 1``, ``sum_i |x_ij| <= n MAX_NORM``), and dividing by ``n``, adding
        ``lam theta`` and taking the norm cost a few more ulps.
        """
        weight = _gamma(self.d) * MAX_NORM * theta_norm / 4 + 16 * _U
        per_coordinate = MAX_NORM * (_gamma(self.b) + _gamma(self.m) * (1 + _gamma(self.b)))
        per_coordinate = (per_coordinate + MAX_NORM * weight) * (1 + 2 * _U) + 2 * _U
        return (
            math.sqrt(self.d) * per_coordinate
            + 2 * _U * (self.lam * theta_norm + gradient_norm)
            + _gamma(self.d + 2) * gradient_norm
        ) * (1 + 8 * _U)

    def certified_norm(self, theta: np.ndarray, gradient: np.ndarray) -> float:
        """A rigorous upper bound on ``||grad J(theta)||_2`` from the computed ``gradient``."""
        g = float(np.linalg.norm(gradient))
        t = float(np.linalg.norm(theta)) * (1 + _gamma(self.d + 2))
        return (g + self.rounding_error(t, g)) * (1 + 4 * _U)

    def max_iter(self, tau: float) -> int:
        """Steps that reach ``||grad J|| <= tau/2`` on *every* data set in exact arithmetic.

        Each step decreases ``J`` at least as much as the gradient step ``theta - grad/L``,
        which by the descent lemma and strong convexity (``J - J* <= ||grad||^2 / (2 lam)``)
        gives ``J - J* <= (1 - lam/L)^k (J(0) - J*)`` with ``J(0) - J* <= ln 2``; and
        ``||grad||^2 <= 2 L (J - J*)`` (Nesterov 2004, Thms 2.1.5, 2.1.10).
        """
        rate = -math.log1p(-self.lam / self.smooth)
        return max(1, math.ceil(math.log(8 * self.smooth * math.log(2) / tau**2) / rate))

    def check_reachable(self, tau: float) -> None:
        """Refuse, from public parameters only, a ``tau`` below four times the rounding error of
        the gradient near the optimum (``||theta*|| <= ||grad J(0)|| / lam <= MAX_NORM/(2 lam)``):
        there the certificate could fail for a reason the data decide."""
        theta_norm = (MAX_NORM / 2 + tau) / self.lam
        floor = self.rounding_error(theta_norm, tau)
        if not floor <= tau / 4:
            raise ValueError(
                f"tol must be at least 4 times the gradient's rounding error {floor:.3g} at "
                f"n={self.n}, d={self.d}, lam={self.lam:g}; got {tau:.3g}"
            )


@dataclass(frozen=True)
class Solution:
    """A certified approximate minimiser of ``J`` (:func:`solve`).

    Attributes
    ----------
    theta
        The approximate minimiser.
    gradient_bound
        A rigorous upper bound on ``||grad J(theta)||_2`` (rounding included), at most ``tol``;
        so ``||theta - theta*||_2 <= gradient_bound / lam``.
    tol
        The tolerance ``tau`` that was certified.
    iterations
        Solver steps taken.
    """

    theta: np.ndarray
    gradient_bound: float
    tol: float
    iterations: int


def solve(
    features: object,
    labels: object,
    *,
    lam: float,
    tol: float | None = None,
    max_iter: int | None = None,
) -> Solution:
    """Minimise ``J`` until ``||grad J(theta)||_2 <= tol`` is *certified*, rounding included.

    A safeguarded Newton method from ``theta = 0``: each step is Newton's when it decreases
    ``J`` by at least ``||grad||^2 / (2L)`` (``L = MAX_NORM^2/4 + lam`` bounds the Hessian),
    the gradient step ``theta - grad/L`` otherwise, which always does (descent lemma). So on
    every data set ``J - J*`` shrinks by the factor ``1 - lam/L`` per step, and the default
    ``max_iter``, computed from ``(n, d, lam, tol)`` alone, reaches ``tol/2`` in exact
    arithmetic; rounding costs less than ``tol/4`` (refused with a ``ValueError`` before
    solving otherwise). *Whether* the certificate is reached therefore depends only on public
    parameters, and Newton's quadratic convergence ends the iteration after a handful of steps
    (3 on 25,313 Adult records at ``lam = 0.05``, against a default ``max_iter`` of 190).

    ``tol`` defaults to ``1e-3/n``. A ``max_iter`` below the default voids that argument (for
    tests). Raises :class:`NotCertifiedError` if ``max_iter`` steps do not certify ``tol``.
    """
    x, y, lam = _check_problem(features, labels, lam)
    problem = _Problem(x, y, lam)
    tau = _tolerance(tol, problem.n)
    problem.check_reachable(tau)
    budget = problem.max_iter(tau)
    steps = budget if max_iter is None else check.integer(max_iter, "max_iter", minimum=0)
    theta = np.zeros(problem.d)
    value, gradient = problem.value_and_gradient(theta)
    for k in range(steps + 1):
        bound = problem.certified_norm(theta, gradient)
        if bound <= tau:
            return Solution(theta, bound, tau, k)
        if k == steps:
            break
        sufficient = value - float(gradient @ gradient) / (2 * problem.smooth)
        step = _newton_step(problem, theta, gradient)
        candidate = problem.value_and_gradient(theta - step) if step is not None else None
        if candidate is not None and candidate[0] <= sufficient:
            theta = theta - step
        else:
            theta = theta - gradient / problem.smooth
            candidate = problem.value_and_gradient(theta)
        value, gradient = candidate
    raise NotCertifiedError(
        f"the solver did not certify ||grad J|| <= tol={tau:.3g} in {steps} steps (the bound "
        f"reached is {bound:.3g}; the default max_iter is {budget}): nothing was released"
    )


def _newton_step(problem: _Problem, theta: np.ndarray, gradient: np.ndarray):
    """``H^-1 grad``, or ``None`` if it is not a finite vector."""
    with np.errstate(all="ignore"):
        try:
            step = np.linalg.solve(problem.hessian(theta), gradient)
        except np.linalg.LinAlgError:
            return None
    return step if np.all(np.isfinite(step)) else None


def minimizer(
    features: object, labels: object, *, lam: float, tol: float | None = None
) -> np.ndarray:
    """The certified approximate minimiser of ``J`` (:func:`solve`): within ``tol/lam`` of the
    exact ``theta* = argmin J`` in L2 (``tol`` defaults to ``1e-3/n``). Non-private."""
    return solve(features, labels, lam=lam, tol=tol).theta


def output_perturbation(
    features: object,
    labels: object,
    *,
    lam: float,
    epsilon: float,
    rng: Seed,
    safe: bool = True,
    tol: float | None = None,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """``theta_hat + b``: the certified minimiser of ``J`` (:func:`solve`) with noise.

    Guarantee: ``epsilon``-DP under replace-one neighbours (``n`` public), from the L2
    sensitivity ``Delta_2 = 2 MAX_NORM/(n lam) + 2 tol/lam`` of ``theta_hat``
    (:func:`l2_sensitivity`): CMS11's ``2/(n lam)`` for the exact minimiser (Corollary 8) plus
    ``tol/lam`` for each of the two certified solves. ``tol`` defaults to ``1e-3/n`` (0.1 % more
    noise than CMS11's); like ``lam`` it must be chosen without looking at the data. If the
    solve does not certify ``tol`` (:class:`NotCertifiedError`, which by :func:`solve` depends
    on public parameters only) nothing is released, ``budget`` is not charged and ``rng`` is
    not used.

    By default (``safe=True``) the noise is floating-point safe: ``theta_hat`` is released by
    :func:`dpteach.laplace` (snapped to a power-of-two grid, exact discrete Laplace noise in
    integer arithmetic, each coordinate's rounding step accounted for) with the L1 sensitivity
    ``sqrt(d) Delta_2`` (``||v||_1 <= sqrt(d) ||v||_2``), so the released doubles are exactly
    ``epsilon``-DP. Its noise norm is about ``sqrt(2)`` times that of CMS11's (``sqrt(2d/(d+1))``
    in root mean square), so its excess risk, quadratic in small noise, is about twice theirs.
    Laplace rather than Gaussian noise keeps the box pure ``epsilon``-DP, which the schedulers of
    :mod:`dpteach.growing` compose.

    ``safe=False`` is a *teaching option only*: CMS11's Algorithm 1 as written, ``||b|| ~
    Gamma(d, Delta_2/eps)`` in a uniform direction (density ``∝ exp(-eps ||b|| / Delta_2)``,
    the L2 sensitivity matching the L2 norm of the density), drawn with numpy's floating-point
    Gamma and normal samplers: the guarantee is that of the idealised real-valued mechanism, not
    of the doubles it releases (see :func:`dpteach.laplace`).

    ``budget`` is charged ``epsilon`` (a :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``)
    after the solve is certified and before the noise is drawn. A passed Generator is consumed;
    the same seed gives the same output.
    """
    x, y, lam = _check_problem(features, labels, lam)
    epsilon = check.positive(epsilon, "epsilon")
    check.boolean(safe, "safe")
    gen = check.rng(rng)
    if budget is not None and not isinstance(budget, PrivacyBudget | ZCDPBudget):
        raise TypeError(f"budget must be a PrivacyBudget, a ZCDPBudget or None, got {budget!r}")
    n, d = x.shape
    tau = _tolerance(tol, n)
    sensitivity = l2_sensitivity(n, lam=lam, tol=tau)
    scale = check.finite_ratio(sensitivity, epsilon, "the noise scale")
    if safe:  # the noise must be representable: refused before solving, on public parameters
        grid = _safe_laplace_grid(math.sqrt(d) * sensitivity, epsilon, k=d)
    theta = solve(x, y, lam=lam, tol=tau).theta  # NotCertifiedError: nothing charged or drawn
    # the checked values take the internal paths (issue 27: validate once)
    if safe:
        _charge(budget, epsilon, label="laplace")
        return _laplace(theta, grid, gen)
    _charge(budget, epsilon, label="output perturbation")
    direction = gen.normal(size=d)
    direction /= np.linalg.norm(direction)
    return theta + gen.gamma(shape=d, scale=scale) * direction


def excess_risk(theta: object, features: object, labels: object, *, lam: float) -> float:
    """``J(theta) - min J``: the excess (regularised) empirical risk of ``theta`` (Eq. 2.1), with
    ``min J`` at the certified minimiser (exact to ``tol^2/(2 lam)``, below ``1e-12``)."""
    x, y, lam = _check_problem(features, labels, lam)
    theta = _check_theta(theta, x)
    problem = _Problem(x, y, lam)
    best = solve(x, y, lam=lam).theta
    return problem.value_and_gradient(theta)[0] - problem.value_and_gradient(best)[0]


@dataclass(frozen=True)
class LogisticERMBox:
    """Private logistic regression as a black box for :mod:`dpteach.growing`: predicts the
    binary attribute ``label`` from the others (:func:`one_hot_features`) by
    :func:`output_perturbation` (floating-point safe, certified minimiser); ``epsilon``-DP. The
    workload is not used (pass ``None``); the output is the parameter vector ``theta``."""

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
