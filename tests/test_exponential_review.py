"""Review of the exact exponential mechanism (``dp.exponential``, ``_noise.ExpGrid``,
``_noise.exponential_choice``).

1. Exact privacy losses (in log space, so that weights below ``e^-745`` still count) on
   adversarial neighbours beyond the crafted two-candidate pair of ``test_safe_noise.py``: many
   candidates pushed the other way, gaps at and across the cap, huge scores (the object path of
   ``snap``), subnormal and huge sensitivities, huge epsilon. The same pairs catch two broken
   grids.
2. The sampler's distribution on cases the existing chi-square tests miss: many candidates, ties,
   a rejection-heavy case where whole batches are rejected, and one draw at a time against
   ``size`` draws there. Each statistical test also rejects a wrong answer.
3. The review's findings (tiny epsilon, integers beyond 2^53, refused runs that charged), which
   failed on the reviewed code and pass since the fixes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import dpteach as dp
from dpteach import _noise, iterative, mw
from dpteach import _validate as check

LEVEL = 1e-6  # as in test_safe_noise.py


def _log_probabilities(grid: _noise.ExpGrid, u: np.ndarray) -> np.ndarray:
    """Exact log selection probabilities (``ExpGrid.probabilities`` underflows to 0 below e^-745,
    exactly where the cap acts)."""
    x = grid.log_weights(np.asarray(u, float))
    return x - logsumexp(x)


def _loss(grid: _noise.ExpGrid, u: np.ndarray, v: np.ndarray) -> float:
    return float(np.abs(_log_probabilities(grid, u) - _log_probabilities(grid, v)).max())


def _neighbour(u: np.ndarray, move: np.ndarray, delta: float) -> np.ndarray:
    """``u + move``, with every coordinate that would move by more than ``delta`` (by the rounding
    of the sum) or leave the doubles left where it is."""
    with np.errstate(over="ignore"):
        v = u + move
    return np.where(np.isfinite(v) & (np.abs(v - u) <= delta), v, u)


def _adversarial_pairs(delta: float, grid: _noise.ExpGrid) -> list[tuple[np.ndarray, np.ndarray]]:
    """One low candidate just below a half step moves up by ``delta`` while ``R - 1`` best ones
    just above a half step move down by ``delta`` (every score gains its rounding step, and many
    candidates carry the normaliser); the gap between them at 0, a few and many steps, and just
    below, at and beyond the cap; plus random pairs at every scale of gaps."""
    g = math.ldexp(1.0, grid.exponent)
    base = 2 * delta + 4 * g
    pairs = []
    for count in (2, 10, 1000):
        for gap in (0, 1, 5, 100, grid.cap - 3, grid.cap, grid.cap + 3, 2 * grid.cap):
            low = base + 0.5 * g * (1 - 2**-30)
            high = base + gap * g + delta + 0.5 * g * (1 + 2**-30)
            u = np.array([low] + [high] * (count - 1))
            if not np.all(np.isfinite(u)):
                continue
            move = np.array([delta] + [-delta] * (count - 1))
            pairs += [(u, _neighbour(u, move, delta)), (u, _neighbour(u, -move, delta))]
    rng = np.random.default_rng(5)
    for scale in (1, 100, grid.cap / 10 + 1, grid.cap):
        for _ in range(40):
            u = base + rng.uniform(0, 50, size=8) * g * scale
            if np.all(np.isfinite(u)):
                move = rng.choice([-delta, delta], size=8)
                pairs.append((u, _neighbour(u, move, delta)))
    return pairs


GRIDS = [
    (1.0, 1.0),
    (1 / 3, 0.1),
    (0.7, 10.0),
    (1e-3, 1000.0),
    (1.0, 1e-6),
    (1e-310, 1.0),  # subnormal sensitivity
    (5e-324, 1.0),  # the smallest double: g = Delta, two steps
    (1e300, 1.0),
    (1.0, 1e7),  # the rate capped at 2^10 per step
    (3e-300, 1e300),
]


@pytest.mark.parametrize("delta, epsilon", GRIDS)
def test_exact_loss_on_adversarial_neighbours_is_at_most_epsilon(delta, epsilon):
    grid = _noise.exp_grid(delta, epsilon)
    losses = [_loss(grid, u, v) for u, v in _adversarial_pairs(delta, grid)]
    assert max(losses) <= epsilon * (1 + 1e-12)
    if grid.exponent > -1074 and epsilon < 2**10:  # a full rounding step exists: nearly tight
        assert max(losses) >= epsilon * (1 - 2**-9)


@pytest.mark.parametrize("delta, epsilon", [(1e-3, 1.0), (1 / 3, 0.1), (0.7, 1.0)])
def test_the_pairs_catch_a_grid_that_forgets_the_rounding_step_or_drops_capped_candidates(
    delta, epsilon
):
    """Two broken variants: the rate of ``floor(Delta/g)`` steps (snapping's extra step
    forgotten), and a cap that gives candidates beyond it weight 0 instead of the capped weight
    (the utility ``max(k_r, k* - cap)`` replaced by a cliff)."""
    grid = _noise.exp_grid(delta, epsilon)
    assert (delta / math.ldexp(1.0, grid.exponent)) % 1  # else floor(Delta/g) steps suffice
    pairs = _adversarial_pairs(delta, grid)
    steps = math.floor(delta / math.ldexp(1.0, grid.exponent))
    rate = math.floor(epsilon / (2 * steps) * 2**grid.bits)
    no_step = _noise.ExpGrid(grid.exponent, steps, rate, grid.bits, grid.cap)
    assert max(_loss(no_step, u, v) for u, v in pairs) > epsilon * (1 + 2**-13)

    def cliff(u: np.ndarray) -> np.ndarray:
        k = _noise.snap(np.asarray(u, float), grid.exponent).astype(float)
        gap = k.max() - k
        return np.where(gap < grid.cap, -gap * grid.rate / 2**grid.bits, -np.inf)

    def cliff_loss(u, v):
        a, b = cliff(u), cliff(v)
        a, b = a - logsumexp(a), b - logsumexp(b)
        with np.errstate(invalid="ignore"):
            return float(np.nanmax(np.abs(a - b)))

    assert max(cliff_loss(u, v) for u, v in pairs) == math.inf


def test_huge_scores_take_the_exact_object_path_and_keep_the_loss():
    """Scores near 1e18 (beyond 2^61 grid steps) and near the largest double are snapped as Python
    integers; the loss on random neighbours stays below epsilon and comes near it."""
    rng = np.random.default_rng(2)
    for delta, make in [
        (1000.0, lambda: 1e18 + 128.0 * rng.integers(-40, 40, size=6)),
        (1.7e308, lambda: np.r_[1.79e308, rng.uniform(-0.8e308, 0.8e308, size=5) * 2]),
    ]:
        grid = _noise.exp_grid(delta, 1.0)
        losses = []
        for _ in range(200):
            u = make()
            assert _noise.snap(u, grid.exponent).dtype == object
            move = rng.choice([-1.0, 1.0], size=u.size) * (896.0 if delta == 1000.0 else delta)
            losses.append(_loss(grid, u, _neighbour(u, move, delta)))
        assert 0.5 < max(losses) <= 1.0 * (1 + 1e-12)


# --- the sampler's distribution -------------------------------------------------------------------


def _chi_square_p(observed: np.ndarray, probabilities: np.ndarray) -> float:
    """Chi-square p-value, the cells expected below 5 times lumped into one."""
    expected = probabilities * observed.sum()
    keep = expected >= 5
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    if exp[-1] == 0:  # nothing expected there: anything observed there refutes
        if obs[-1]:
            return 0.0
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def test_many_candidates_match_the_exact_probabilities():
    """400 candidates spread over 12 units of score (weights from 1 to e^-6) and 150,000 draws;
    the same test rejects the probabilities at a rate 5 % too high."""
    u = np.linspace(0.0, 12.0, 400)
    grid = _noise.exp_grid(1.0, 1.0)
    picks = dp.exponential(u, sensitivity=1.0, epsilon=1.0, rng=21, size=150_000)
    observed = np.bincount(picks, minlength=u.size)
    assert _chi_square_p(observed, grid.probabilities(u)) > LEVEL
    faster = _noise.ExpGrid(grid.exponent, grid.steps, round(grid.rate * 1.05), grid.bits, grid.cap)
    assert _chi_square_p(observed, faster.probabilities(u)) < LEVEL


def test_ties_share_the_best_uniformly():
    """50 candidates tied at the top, 50 one unit below and 100 far below (capped): the tied ones
    are chosen uniformly; the far ones never. The same test rejects a 10 % tilt inside the tie."""
    u = np.r_[np.full(50, 3.0), np.full(50, 2.0), np.full(100, -1e9)]
    picks = dp.exponential(u, sensitivity=0.5, epsilon=1.0, rng=4, size=100_000)
    observed = np.bincount(picks, minlength=u.size)
    assert observed[100:].sum() == 0
    grid = _noise.exp_grid(0.5, 1.0)
    right = grid.probabilities(u)
    assert np.all(right[100:] == 0)
    assert _chi_square_p(observed[:100], right[:100] / right[:100].sum()) > LEVEL
    tilted = right[:100].copy()
    tilted[:25] *= 1.1
    assert _chi_square_p(observed[:100], tilted / tilted.sum()) < LEVEL


def _rejection_heavy() -> tuple[np.ndarray, float]:
    """One best candidate and 999 at a gap of ``ln 999`` nats: the best is chosen with probability
    about 1/2, a proposal is accepted with probability about 2/1,000, so a row of a batch (1,000
    proposals) is rejected whole about e^-2 of the time and retried."""
    gap = math.log(999) * 2  # in score units, at eps / (2 Delta) = 1/2 per unit
    u = np.r_[0.0, np.full(999, -gap)]
    grid = _noise.exp_grid(1.0, 1.0)
    return u, float(grid.probabilities(u)[0])


def test_rejection_heavy_case_draws_the_exact_probabilities():
    """10,000 draws: the best's frequency (rejecting it 10 % higher) and the others uniform among
    themselves (10 bins of 100 candidates; rejecting the first bin 50 % heavier)."""
    u, p_best = _rejection_heavy()
    assert 0.45 < p_best < 0.55
    picks = dp.exponential(u, sensitivity=1.0, epsilon=1.0, rng=8, size=10_000)
    best = int((picks == 0).sum())
    assert stats.binomtest(best, picks.size, p_best).pvalue > LEVEL
    assert stats.binomtest(best, picks.size, p_best * 1.1).pvalue < LEVEL
    bins = np.bincount((picks[picks > 0] - 1) // 100, minlength=10)
    assert stats.chisquare(bins).pvalue > LEVEL
    tilted = np.r_[1.5, np.ones(9)]
    assert stats.chisquare(bins, tilted / tilted.sum() * bins.sum()).pvalue < LEVEL


def test_one_draw_at_a_time_agrees_with_size_draws_when_batches_are_rejected():
    """3,000 single draws (one row per batch) against 3,000 draws with ``size`` (many rows, some
    retried), on the rejection-heavy case: a contingency test on (best, first half, second half),
    and the single draws' best frequency, which rejects a best chosen 20 % more often."""
    u, p_best = _rejection_heavy()
    one = np.array([dp.exponential(u, sensitivity=1.0, epsilon=1.0, rng=s) for s in range(3000)])
    many = dp.exponential(u, sensitivity=1.0, epsilon=1.0, rng=99, size=3000)

    def cells(picks):
        return np.bincount(np.where(picks == 0, 0, np.where(picks <= 500, 1, 2)), minlength=3)

    assert stats.chi2_contingency([cells(one), cells(many)]).pvalue > LEVEL
    assert stats.binomtest(int(cells(one)[0]), 3000, p_best).pvalue > LEVEL
    assert stats.binomtest(int(cells(one)[0]), 3000, p_best * 1.2).pvalue < LEVEL


def test_bernoulli_exp_ratio_with_the_samplers_denominator():
    """``_bernoulli_exp_ratio`` over ``2^51``, as ``exponential_choice`` calls it: gaps of 0.37,
    2.0 (whole part only) and 10.5 nats (e^-10.5, about 28 hits in a million)."""
    gen = np.random.default_rng(17)
    den = 2**_noise.FAST_BITS
    for nats, draws, wrong in [(0.37, 100_000, 1.05), (2.0, 100_000, 1.1), (10.5, 10**6, 3.0)]:
        num = round(nats * den)
        hits = _noise._bernoulli_exp_ratio(np.full(draws, num, dtype=np.int64), den, gen)
        p = math.exp(-num / den)
        assert stats.binomtest(int(hits.sum()), draws, p).pvalue > LEVEL
        assert stats.binomtest(int(hits.sum()), draws, p * wrong).pvalue < LEVEL


# --- the review's findings, fixed ---------------------------------------------------------------


def test_tiny_epsilon_still_follows_the_exponential_mechanism():
    """Scores 0 and 1e12 at eps = 1e-11, sensitivity 1: ``eps (u1 - u0) / 2 = 5``, so the
    mechanism picks index 1 with probability 1/(1 + e^-5) = 0.9933 (Gumbel-max agrees); a refusal
    naming epsilon would also be acceptable."""
    try:
        picks = dp.exponential([0.0, 1e12], sensitivity=1.0, epsilon=1e-11, rng=0, size=4000)
    except ValueError as err:
        assert "epsilon" in str(err)
        return
    p = 1 / (1 + math.exp(-5))
    assert stats.binomtest(int(picks.sum()), picks.size, p).pvalue > LEVEL


def test_integer_scores_beyond_two_to_the_53_are_refused_or_kept_exact():
    u_true, v_true = [2**53 + 1, 2**53 + 3], [2**53 + 2, 2**53 + 2]  # neighbours at Delta = 1
    try:
        u, v = (check.array(x, "scores") for x in (u_true, v_true))
        dp.exponential(u_true, sensitivity=1.0, epsilon=1.0, rng=0)
    except ValueError as err:
        assert "scores" in str(err)
        return
    assert _loss(_noise.exp_grid(1.0, 1.0), u, v) <= 1.0 * (1 + 1e-12)


DOM = dp.Domain({"a": 2, "b": 3})
DATA = dp.Dataset([[0, 1], [1, 2], [1, 0], [0, 0]], DOM)
Q = dp.MarginalWorkload.all_kway(DOM, 1)


@pytest.mark.parametrize(
    "run",
    [
        lambda b: mw.mwem(DATA, Q, epsilon=1e-12, rounds=2, rng=0, budget=b),
        lambda b: mw.private_mw(DATA, Q, epsilon=1.0, alpha=1e-6, rng=0, budget=b),
        lambda b: iterative.iterative_construction(
            DATA, Q, iterative.MultiplicativeWeightsDUA(DOM.size, alpha=0.15), alpha=0.3,
            epsilon=1e-12, rng=0, budget=b,
        ),
    ],
    ids=["mwem", "private_mw", "iterative_construction"],
)  # fmt: skip
def test_a_refused_run_charges_nothing(run):
    budget = dp.PrivacyBudget(10.0)
    with pytest.raises(ValueError, match="epsilon"):
        run(budget)
    assert budget.ledger == []
