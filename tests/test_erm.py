"""Private ERM (chapter 05's black box): the certified minimiser, its sensitivity, refusals that
release nothing, and an audit of output perturbation with its power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import erm
from dpteach.audit import audit, repeat, smallest_overspend_caught

LAM = 0.1


@pytest.fixture(scope="module")
def adult_problem():
    x, y = erm.one_hot_features(dp.load_adult("tiny").head(400), "income>50K")
    return x, y


def _exact_gradient(theta, x, y, lam):
    """``grad J`` summed exactly (``math.fsum``) per coordinate, an independent check of the
    package's blocked sum."""
    weights = -y / (1.0 + np.exp(y * (x @ theta)))
    terms = x * weights[:, None] / len(y)
    return np.array([math.fsum(col) for col in terms.T]) + lam * theta


def _polished(x, y, lam):
    """The minimiser to a tolerance far below any used here (``1e-6/n``)."""
    return erm.solve(x, y, lam=lam, tol=1e-6 / len(y)).theta


@pytest.mark.parametrize("slack", [1e-3, 0.1, 1.0, 10.0])
def test_the_certified_gradient_norm_is_at_most_tol_and_bounds_the_distance(adult_problem, slack):
    x, y = adult_problem
    tol = slack / len(y)
    solution = erm.solve(x, y, lam=LAM, tol=tol)
    assert solution.tol == tol and solution.gradient_bound <= tol
    # the bound holds for the gradient summed exactly, and strong convexity turns it into a
    # distance to the minimiser
    assert np.linalg.norm(_exact_gradient(solution.theta, x, y, LAM)) <= solution.gradient_bound
    distance = np.linalg.norm(solution.theta - _polished(x, y, LAM))
    assert distance <= (solution.gradient_bound + 1e-6 / len(y)) / LAM


def test_default_tolerance_and_the_sensitivity_term(adult_problem):
    x, y = adult_problem
    n = len(y)
    assert erm.solve(x, y, lam=LAM).tol == erm.DEFAULT_SLACK / n
    assert erm.l2_sensitivity(n, lam=LAM) == pytest.approx((2 * erm.MAX_NORM / n + 2e-3 / n) / LAM)
    assert erm.l2_sensitivity(n, lam=LAM, tol=1 / n) == pytest.approx(
        (2 * erm.MAX_NORM + 2) / (n * LAM)
    )


def test_gradient_steps_alone_certify_within_the_public_iteration_bound(adult_problem, monkeypatch):
    """The argument that only public parameters decide a refusal: even with every Newton step
    refused, the safeguard's gradient steps certify within the default ``max_iter``."""
    x, y = adult_problem
    newton = erm.solve(x, y, lam=LAM)
    monkeypatch.setattr(erm, "_newton_step", lambda *args: None)
    gradient_only = erm.solve(x, y, lam=LAM)
    bound = erm._Problem(x, y, LAM).max_iter(gradient_only.tol)
    assert newton.iterations < gradient_only.iterations <= bound
    assert gradient_only.gradient_bound <= gradient_only.tol


@pytest.mark.parametrize("tol_factor", [None, 1.0])
def test_neighbours_certified_minimisers_move_at_most_the_sensitivity(adult_problem, tol_factor):
    """Replace one record (several pairs): the released centres move by at most the certified
    sensitivity, also with a loose tolerance ``1/n`` under which the solver stops early."""
    x, y = adult_problem
    n = len(y)
    tol = None if tol_factor is None else tol_factor / n
    sensitivity = erm.l2_sensitivity(n, lam=LAM, tol=tol)
    theta = erm.minimizer(x, y, lam=LAM, tol=tol)
    gen = np.random.default_rng(0)
    moves = []
    for _ in range(8):
        i, j = gen.integers(0, n, size=2)
        x2, y2 = x.copy(), y.copy()
        x2[i], y2[i] = x[j], -y[j]
        moves.append(np.linalg.norm(erm.minimizer(x2, y2, lam=LAM, tol=tol) - theta))
    assert max(moves) <= sensitivity and max(moves) > 0


def test_a_solve_that_does_not_certify_is_refused(adult_problem):
    x, y = adult_problem
    with pytest.raises(erm.NotCertifiedError, match="did not certify"):
        erm.solve(x, y, lam=LAM, max_iter=1)
    # a tolerance below the rounding floor is refused before solving, on public parameters
    with pytest.raises(ValueError, match="tol must be at least 4 times"):
        erm.solve(x, y, lam=LAM, tol=1e-18)


@pytest.mark.parametrize("safe", [True, False])
def test_a_refused_release_releases_nothing_charges_nothing_and_draws_nothing(
    adult_problem, monkeypatch, safe
):
    x, y = adult_problem
    budget, gen = dp.PrivacyBudget(1.0), np.random.default_rng(5)
    state = gen.bit_generator.state
    solve = erm.solve
    monkeypatch.setattr(erm, "solve", lambda *a, **k: solve(*a, **{**k, "max_iter": 1}))
    with pytest.raises(erm.NotCertifiedError):
        erm.output_perturbation(x, y, lam=LAM, epsilon=0.5, rng=gen, safe=safe, budget=budget)
    with pytest.raises(ValueError, match="tol"):  # unreachable tol: refused before the solve
        erm.output_perturbation(x, y, lam=LAM, epsilon=0.5, rng=gen, tol=1e-18, budget=budget)
    assert budget.spent_epsilon == 0 and gen.bit_generator.state == state
    monkeypatch.undo()
    erm.output_perturbation(x, y, lam=LAM, epsilon=0.5, rng=gen, safe=safe, budget=budget)
    assert budget.spent_epsilon == 0.5  # a certified release is charged


def test_the_noise_is_calibrated_to_the_sensitivity_with_the_tolerance_term():
    """With ``tol = 1/n`` the term doubles the sensitivity: the Laplace noise has the scale of
    ``sqrt(d) (2 MAX_NORM + 2)/(n lam eps)``, and a test that ignored the term is rejected."""
    x, y = np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([1.0, -1.0])
    n, d, eps = 2, 2, 0.5
    theta = erm.minimizer(x, y, lam=1.0, tol=1 / n)
    gen = np.random.default_rng(1)
    noise = np.array(
        [
            erm.output_perturbation(x, y, lam=1.0, epsilon=eps, rng=gen, tol=1 / n) - theta
            for _ in range(2000)
        ]
    ).ravel()
    scale = math.sqrt(d) * erm.l2_sensitivity(n, lam=1.0, tol=1 / n) / eps
    assert scale == pytest.approx(math.sqrt(d) * (2 * erm.MAX_NORM + 2) / (n * eps))
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-4
    assert stats.kstest(noise, stats.laplace(scale=1.3 * scale).cdf).pvalue < 1e-4
    without_term = math.sqrt(d) * 2 / (n * eps)
    assert stats.kstest(noise, stats.laplace(scale=without_term).cdf).pvalue < 1e-4


# --- audit -------------------------------------------------------------------------------------

ERM_X = np.array([[1.0], [1.0]])
ERM_D, ERM_D_PRIME = (ERM_X, np.array([1.0, 1.0])), (ERM_X, np.array([1.0, -1.0]))


@pytest.fixture
def cached_solve(monkeypatch):
    """The certified minimiser is a deterministic function of the data: memoise it so that the
    audits draw thousands of releases in seconds."""
    cache, solve = {}, erm.solve

    def memo(x, y, *, lam, tol=None, max_iter=None):
        key = (np.asarray(x).tobytes(), np.asarray(y).tobytes(), lam, tol, max_iter)
        if key not in cache:
            cache[key] = solve(x, y, lam=lam, tol=tol, max_iter=max_iter)
        return cache[key]

    monkeypatch.setattr(erm, "solve", memo)


def _sampler(epsilon: float):
    return repeat(lambda data, rng: erm.output_perturbation(
        *data, lam=1.0, epsilon=epsilon, rng=rng)[0])  # fmt: skip


@pytest.mark.usefixtures("cached_solve")
def test_output_perturbation_passes_its_audit_and_the_audit_has_power():
    """n = 2, d = 1, lam = 1: flipping one label moves theta_hat by 0.401 against the certified
    sensitivity 1.001, so an overspend by a factor f leaks 0.401 f and is refutable only for
    f > 2.5. The release at eps = 1 passes; at 3,000 samples the audit catches an overspend by
    4 (privacy loss 1.6 against the claimed 1)."""
    moved = abs(erm.minimizer(*ERM_D, lam=1.0)[0] - erm.minimizer(*ERM_D_PRIME, lam=1.0)[0])
    assert 0.40 < moved <= erm.l2_sensitivity(2, lam=1.0)
    result = audit(_sampler(1.0), ERM_D, ERM_D_PRIME, epsilon=1.0, samples=3_000, rng=9)
    assert not result.flagged, result
    caught = smallest_overspend_caught(
        _sampler, ERM_D, ERM_D_PRIME, epsilon=1.0, samples=3_000, rng=9,
        factors=(1.5, 2.0, 2.5, 3.0, 4.0, 6.0),
    )  # fmt: skip
    assert caught is not None and caught <= 4.0
