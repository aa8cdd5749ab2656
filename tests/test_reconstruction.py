"""Reconstruction attacks (chapter 06, Part 1): Dinur and Nissim's exhaustive attack and its 4E
bound, LP decoding (Dwork, McSherry and Talwar), and the same attack against the Laplace
mechanism, whose privacy is audited. Fixed seeds. The tolerances of the exhaustive attack and
of the privacy tests are derived from theorems (Theorem 1's 4E; Theorem 4's bound through a
binomial quantile); the ">= 0.95 of the bits" thresholds of the attacks at small error are
empirical: Theorem 2 is asymptotic and gives no constant at n = 100."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import figures, theory
from dpteach import reconstruction as rc
from dpteach.audit import audit

# --- the exhaustive attack: every consistent database is within 4E of the secret ----------------


@pytest.mark.parametrize("error", [0.0, 0.5, 1.0, 1.5])
def test_every_candidate_consistent_with_answers_within_e_is_within_4e(error):
    n = 10
    secret = rc.secret_bits(n, rng=1)
    queries = rc.all_subset_queries(n)
    answers = rc.bounded_answers(queries, secret, error=error, rng=2)
    assert np.max(np.abs(answers - rc.exact_answers(queries, secret))) <= error
    candidates = rc.exhaustive_attack(queries, answers, error=error)
    assert any(np.array_equal(c, secret) for c in candidates)  # the secret is consistent
    distances = np.sum(candidates != secret, axis=1)
    assert distances.max() <= theory.exhaustive_attack_bound(error)
    if error == 0:
        assert len(candidates) == 1  # exact answers to all subsets pin the secret down


def test_a_decoy_at_distance_4e_makes_the_bound_tight():
    """Answers halfway between the secret and a decoy differing in 2E zeros and 2E ones are
    within E of both: the attacker cannot do better than 4E. With one more flipped bit the
    decoy's answers leave E, and it is no longer consistent."""
    n, error = 10, 1
    secret = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    decoy = secret.copy()
    decoy[[0, 1, 5, 6]] ^= 1  # 2E zeros -> 1, 2E ones -> 0
    queries = rc.all_subset_queries(n)
    answers = rc.decoy_answers(queries, secret, decoy)
    assert np.max(np.abs(answers - rc.exact_answers(queries, secret))) == error
    found = rc.exhaustive_attack(queries, answers, error=error)
    distances = sorted(int(np.sum(c != secret)) for c in found)
    assert distances[0] == 0 and distances[-1] == theory.exhaustive_attack_bound(error)
    decoy[2] ^= 1  # |I_0| = 3 > 2E
    answers = rc.decoy_answers(queries, secret, decoy)
    assert np.max(np.abs(answers - rc.exact_answers(queries, secret))) == 1.5


# --- LP decoding -------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["subset", "gaussian"])
def test_exact_answers_to_m_at_least_n_queries_are_decoded_exactly(weights):
    secret = rc.secret_bits(40, rng=3)
    queries = rc.subset_queries(60, 40, rng=4, weights=weights)
    decoded = rc.lp_decode(queries, rc.exact_answers(queries, secret))
    assert np.max(np.abs(decoded - secret)) < 1e-6
    assert rc.fraction_recovered(rc.reconstruct(queries, rc.exact_answers(queries, secret)),
                                 secret) == 1.0  # fmt: skip


def test_dinur_nissims_feasibility_program_recovers_the_bits_and_refuses_a_wrong_answer():
    secret = rc.secret_bits(100, rng=10)
    queries = rc.subset_queries(400, 100, rng=11)
    answers = rc.bounded_answers(queries, secret, error=1.0, rng=12)
    x = rc.feasibility_decode(queries, answers, error=1.0)
    assert np.max(np.abs(queries @ x - answers)) <= 1.0 + 1e-6  # feasible
    assert rc.fraction_recovered((x > 0.5).astype(int), secret) >= 0.95
    answers[0] = -5.0  # no x >= 0 has a negative subset sum within 1 of it
    with pytest.raises(ValueError, match="no x"):
        rc.feasibility_decode(queries, answers, error=1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_error_far_below_sqrt_n_recovers_nearly_every_bit(seed):
    run = rc.lp_attack(100, 400, error=1.0, rng=seed)  # E = 1, sqrt(n) = 10
    assert run.fraction >= 0.95


def test_a_tenth_of_arbitrarily_wrong_answers_does_not_stop_lp_decoding():
    """Dwork, McSherry and Talwar: L1 decoding of Gaussian-weighted queries corrects a fraction
    rho < 0.239 of arbitrary errors (here 10 %, consistent lies of a decoy database); the
    feasibility LP of Dinur and Nissim, which needs every answer within E, has no solution at
    E = 1."""
    n, m = 50, 200
    secret, decoy = rc.secret_bits(n, rng=5), rc.secret_bits(n, rng=6)
    queries = rc.subset_queries(m, n, rng=7, weights="gaussian")
    answers = rc.corrupt(rc.exact_answers(queries, secret), rc.exact_answers(queries, decoy),
                         fraction=0.1, rng=8)  # fmt: skip
    assert np.sum(answers != rc.exact_answers(queries, secret)) == 20
    assert np.max(np.abs(rc.lp_decode(queries, answers) - secret)) < 1e-6
    with pytest.raises(ValueError, match="no x"):
        rc.feasibility_decode(queries, answers, error=1.0)


def test_the_same_seed_gives_the_same_attack():
    a, b = (rc.lp_attack(30, 60, epsilon=5.0, rng=9) for _ in "ab")
    assert np.array_equal(a.decoded, b.decoded) and a.fraction == b.fraction


# --- against differential privacy ----------------------------------------------------------------


def _bit_zero_recovered(trials: int, answer) -> int:
    """How often the LP attack recovers person 0's bit in ``trials`` independent runs (one bit
    per run: the runs are independent, the bits of one run are not)."""
    hits = 0
    for seed in range(trials):
        gen = np.random.default_rng(seed)
        secret = rc.secret_bits(16, rng=gen)
        queries = rc.subset_queries(32, 16, rng=gen)
        hits += rc.reconstruct(queries, answer(queries, secret, gen))[0] == secret[0]
    return hits


def test_laplace_answers_defeat_the_attack_and_bounded_answers_do_not():
    """At epsilon = 0.2 for the whole release, no attacker gets a uniformly random bit right with
    probability above e^eps / (1 + e^eps) = 0.55 (theory.reconstruction_bound). The count over
    400 independent runs is then at most a Binomial(400, 0.55) quantile at 1 - 1e-6. The same
    test rejects answers within E = 0.5 (not private), which the attack decodes."""
    trials, bound = 400, theory.reconstruction_bound(0.2)
    limit = stats.binom.ppf(1 - 1e-6, trials, bound)
    private = _bit_zero_recovered(trials, lambda q, d, g: rc.laplace_answers(q, d, epsilon=0.2,
                                                                             rng=g))  # fmt: skip
    accurate = _bit_zero_recovered(trials, lambda q, d, g: rc.bounded_answers(q, d, error=0.5,
                                                                              rng=g))  # fmt: skip
    assert private <= limit < accurate


def test_the_bound_is_a_coin_flip_at_zero_and_grows_to_one():
    assert theory.reconstruction_bound(0) == 0.5
    assert theory.reconstruction_bound(math.log(9)) == pytest.approx(0.9)
    assert theory.reconstruction_bound(1e4) == 1.0


QUERIES = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])  # person 0 is in both queries: Delta = 2


def _sampler(epsilon: float):
    """Sampler for the audit: ``laplace_answers`` at ``epsilon`` on the database (x, 1, 0),
    x in {0, 1} (replace-one neighbours); the output is the sum of the two noisy answers
    (post-processing, so a valid audit of the release)."""

    def sample(x, rng, size):
        released = rc.laplace_answers(QUERIES, [x, 1, 0], epsilon=epsilon, rng=rng, size=size)
        return released.sum(axis=1)

    return sample


def test_batched_releases_have_the_laplace_noise_of_the_release():
    """Each row of ``size=`` releases carries Laplace noise of scale Delta / epsilon = 2 (within
    the safe grid's 0.1 %): a KS test at level 1e-6 accepts it and rejects a 30 % wrong scale."""
    exact = rc.exact_answers(QUERIES, [1, 1, 0])
    many = rc.laplace_answers(QUERIES, [1, 1, 0], epsilon=1.0, rng=3, size=20_000)
    assert many.shape == (20_000, 2)
    noise = (many - exact).ravel()
    assert stats.kstest(noise, stats.laplace(scale=2.0).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.laplace(scale=2.6).cdf).pvalue < 1e-6


def test_the_audit_passes_the_laplace_answers_and_catches_an_overspending_variant():
    """``laplace_answers`` at Delta = 2 passes an audit of its claim epsilon = 1; the release a
    slip would make (noise calibrated to one query's sensitivity 1: scale 1 instead of 2, i.e.
    epsilon = 2 spent) is flagged against the same claim."""
    assert rc.answers_sensitivity(QUERIES) == 2
    kwargs = {"epsilon": 1.0, "samples": 100_000, "rng": 11}
    assert not audit(_sampler(1.0), 0, 1, **kwargs).flagged
    assert audit(_sampler(2.0), 0, 1, **kwargs).flagged


def test_laplace_answers_charge_the_budget_only_after_checking_inputs():
    budget = dp.PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="bits"):
        rc.laplace_answers(QUERIES, [2, 1, 0], epsilon=0.5, rng=0, budget=budget)
    with pytest.raises(ValueError, match="columns"):
        rc.laplace_answers(QUERIES, [1, 0], epsilon=0.5, rng=0, budget=budget)
    assert budget.ledger == []
    rc.laplace_answers(QUERIES, [1, 1, 0], epsilon=0.5, rng=0, budget=budget)
    assert budget.spent_epsilon == 0.5
    with pytest.raises(dp.BudgetExceededError):
        rc.laplace_answers(QUERIES, [1, 1, 0], epsilon=0.6, rng=0, budget=budget)
    assert budget.spent_epsilon == 0.5


# --- bad input -----------------------------------------------------------------------------------

BAD = [
    (lambda: rc.secret_bits(0, rng=0), ValueError, "n must be >= 1"),
    (lambda: rc.secret_bits(True, rng=0), TypeError, "n must be an integer"),
    (lambda: rc.subset_queries(10, 10, rng=0, weights="binary"), ValueError, "weights"),
    (lambda: rc.subset_queries(10**6, 10**6, rng=0), ValueError, "query matrix"),
    (lambda: rc.all_subset_queries(20), ValueError, "at most 14"),
    (lambda: rc.exact_answers(np.ones(3), [1, 0, 1]), ValueError, "2-dimensional"),
    (lambda: rc.exact_answers(QUERIES, [1, 0, 0.5]), ValueError, "bits"),
    (lambda: rc.bounded_answers(QUERIES, [1, 0, 1], error=-1, rng=0), ValueError, "error"),
    (lambda: rc.bounded_answers(QUERIES, [1, 0, 1], error=math.nan, rng=0), ValueError, "finite"),
    (lambda: rc.laplace_answers(QUERIES, [1, 0, 1], epsilon=0, rng=0), ValueError, "epsilon"),
    (lambda: rc.laplace_answers(QUERIES, [1, 0, 1], epsilon=1, rng=0, size=0), ValueError, "size"),
    (
        lambda: rc.laplace_answers(
            QUERIES, [1, 0, 1], epsilon=1, rng=0, size=2, budget=dp.PrivacyBudget(1.0)
        ),
        ValueError,
        "budget",
    ),  # fmt: skip
    (lambda: rc.lp_decode(QUERIES, [1.0, 2.0, 3.0]), ValueError, "one entry per query"),
    (lambda: rc.lp_decode(QUERIES, [1.0, math.nan]), ValueError, "finite"),
    (lambda: rc.lp_decode(np.zeros((2001, 2000)), np.zeros(2001)), ValueError, "MAX_LP_CELLS"),
    (lambda: rc.feasibility_decode(QUERIES, [1.0, 1.0], error=-1), ValueError, "error"),
    (lambda: rc.lp_attack(3000, 3000, error=1.0, rng=0), ValueError, "MAX_LP_CELLS"),
    (lambda: rc.lp_attack(10, 20, rng=0), ValueError, "exactly one"),
    (lambda: rc.lp_attack(10, 20, error=1.0, epsilon=1.0, rng=0), ValueError, "exactly one"),
    (lambda: rc.corrupt([1.0, 2.0], [0.0, 0.0], fraction=1.5, rng=0), ValueError, "fraction"),
    (lambda: rc.decoy_answers(QUERIES, [1, 0, 1], [1, 0]), ValueError, "length"),
    (lambda: rc.fraction_recovered([1, 0], [1, 0, 1]), ValueError, "length"),
    (lambda: rc.exhaustive_attack(QUERIES, [1.0, 1.0], error=-0.5), ValueError, "error"),
    (lambda: figures.attack_figure(-1.0, 20, 2), ValueError, "noise"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD, ids=[b[2] for b in BAD])
def test_bad_input_is_refused_with_a_clear_message(call, error, message):
    with pytest.raises(error, match=message):
        call()
