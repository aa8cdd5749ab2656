"""Chapter 02, second round (issue 25): the overfitting attack runs and Theorem 2's premise holds,
the changed step (e) is visible, the compression bound, and the private median mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import adaptive, median, theory


def _exact(c, P, g):
    return adaptive.ExactAnswers(c)


def test_overfitting_runs_match_overfitting_errors_and_count_kept_features():
    runs = adaptive.overfitting_runs({"exact": _exact}, ds=[8, 32], n=12, domain_size=8, seeds=3)
    for j, d in enumerate([8, 32]):
        for s, run in enumerate(runs["exact"][j]):
            expected = adaptive.overfitting_errors(_exact, d=d, n=12, domain_size=8, rng=s)
            assert run.errors == pytest.approx(expected, abs=1e-12)
            answers = run.transcript.answers[:-1]
            assert run.features_kept == int(np.sum(answers > 0.5)) and len(answers) == d


def test_attack_runs_and_premise_holds_when_every_sample_is_a_candidate():
    """The chapter's setting: n' = n, so S itself is a candidate (S* = S) and no wrong guess can
    leave the set without a candidate near its answer; eta below the sampling noise makes the
    analyst keep features. At the lecture's eta the guesses are all 1/2 and nothing is kept."""
    C = median.small_databases(8, 12)

    def mm(c, P, g):
        return median.MedianMechanism(c, candidates=C, eta=0.05)

    runs = adaptive.overfitting_runs({"median": mm}, ds=[64], n=12, domain_size=8, seeds=3)
    for run in runs["median"][0]:
        mech = run.mechanism
        best, err = median.best_candidate(C, run.transcript.queries, run.counts)
        assert err < 1e-12 and mech.alive[best] and not mech.kept_all
        assert run.features_kept > 0 and sum(mech.wrong) < mech.m
    lecture = theory.median_eta(65, 12)

    def mm_lecture(c, P, g):
        return median.MedianMechanism(c, candidates=C, eta=lecture)

    run = adaptive.overfitting_runs({"m": mm_lecture}, ds=[64], n=12, domain_size=8, seeds=1)
    run = run["m"][0][0]
    assert run.features_kept == 0 and np.all(run.transcript.answers == 0.5)


def test_kept_all_marks_exactly_the_wrong_guesses_that_removed_nothing():
    # 1-record candidates on 4 cells cannot be within eta/4 = 0.025 of a spread-out sample
    h = np.array([30, 30, 20, 20])
    Q = (np.random.default_rng(8).random((30, 4)) < 0.5).astype(float)
    mech = median.MedianMechanism(h, candidates=median.small_databases(4, 1), eta=0.1)
    adaptive.interact(mech, adaptive.fixed_queries(Q))
    s = mech.survivors
    assert mech.kept_all  # the changed step (e) fired
    for i, w in enumerate(mech.wrong, start=1):
        if w:
            assert (i in mech.kept_all) == (s[i] == s[i - 1])
            assert s[i] == s[i - 1] or s[i] <= s[i - 1] / 2  # otherwise it halves


def test_compression_bound_recomputed_from_the_lecture_parameters():
    k, n, size = 50, 10**6, 2**10
    eta = (math.log(4 * k) / (2 * n)) ** 0.25
    m = math.ceil(8 * math.log(4 * k) / eta**2 - 1e-9) * math.log2(size)
    expected = math.sqrt((m * math.log(k * n / m) + math.log(20)) / n)
    assert theory.median_compression_bound(k, n, size) == pytest.approx(expected, rel=1e-12)
    assert theory.median_compression_bound(k, n, size) > 1  # vacuous at n = 10^6 (the chapter)
    assert theory.median_compression_bound(k, 10**9, size) < 0.3  # below 1 only far beyond


def test_private_median_mechanism_charges_once_and_refuses_before_charging():
    C = median.small_databases(2, 10)
    budget = dp.PrivacyBudget(1.0)
    median.PrivateMedianMechanism([50, 50], candidates=C, eta=0.1, epsilon=0.7, rng=0,
                                  budget=budget)  # fmt: skip
    assert budget.spent_epsilon == pytest.approx(0.7)
    with pytest.raises(ValueError, match="epsilon"):
        median.PrivateMedianMechanism([50, 50], candidates=C, eta=0.1, epsilon=-1.0, rng=0,
                                      budget=budget)  # fmt: skip
    with pytest.raises(dp.BudgetExceededError):
        median.PrivateMedianMechanism([50, 50], candidates=C, eta=0.1, epsilon=0.7, rng=0,
                                      budget=budget)  # fmt: skip
    assert budget.spent_epsilon == pytest.approx(0.7)


def _violations(n: int, seeds: int) -> tuple[int, float]:
    """Runs of the private median mechanism in which the analysis fails (S* removed, a changed
    step (e), a halt, or an answer more than 5 eta/4 off), and the bound on their probability."""
    C = median.small_databases(4, 20)
    Q = (np.random.default_rng(0).random((20, 4)) < 0.5).astype(float)
    h = np.random.default_rng(1).multinomial(n, [0.25, 0.25, 0.3, 0.2])
    best, err = median.best_candidate(C, Q, h)
    assert err <= 0.1 / 4  # the premise
    bad = 0
    for s in range(seeds):
        pm = median.PrivateMedianMechanism(h, candidates=C, eta=0.1, epsilon=1.0, rng=s)
        t = adaptive.interact(pm, adaptive.fixed_queries(Q))
        good = len(t.answers) == 20 and pm.alive[best] and not pm.kept_all
        bad += not (good and t.errors(h / n).max() <= 5 * 0.1 / 4)
    return bad, theory.private_median_failure_bound(n, 20, pm.m, 0.1, 1.0)


def test_private_median_failure_bound_bounds_the_measured_failures():
    bad, bound = _violations(47_000, 200)
    assert bound < 0.06
    # binomial tolerance: 3 standard deviations of the failure count at the bound
    assert bad <= 200 * bound + 3 * math.sqrt(200 * bound * (1 - bound))
    # the check can fail: at a small n (bound 1, vacuous) the analysis does fail in some runs
    bad_small, bound_small = _violations(2_000, 100)
    assert bound_small == 1.0 and bad_small > 0


def test_private_median_failure_bound_grows_with_m_and_k_and_shrinks_with_n():
    f = theory.private_median_failure_bound
    assert f(10**6, 40, 18, 0.025, 1.0) < f(10**5, 40, 18, 0.025, 1.0) <= 1
    assert f(10**6, 40, 18, 0.025, 1.0) < f(10**6, 400, 18, 0.025, 1.0)
    assert f(10**6, 40, 18, 0.025, 1.0) < f(10**6, 40, 36, 0.025, 1.0)
    with pytest.raises(ValueError, match="eta"):
        f(10**6, 40, 18, 0.0, 1.0)


def test_widget_run_crosses_from_halting_to_halving_in_eta_and_n():
    """The chapter's widget (the private median mechanism, epsilon = 1): at the default
    (eta = 0.1, n = 100,000, k = 200), inside the region where theory guarantees the halving, it
    halves and S* survives; below the noise onset in n (n = 1,000) and below the premise's eta
    (eta = 0.01) GuessAndCheck halts after m flags, later queries unanswered; at eta = 0.316 no
    guess is flagged and the answers never use the data."""
    from dpteach.median import best_candidate

    def run(eta, n, k=200):
        mech, t, h, _ = adaptive.median_run(eta, n, k)
        best, error = best_candidate(mech.candidates, t.queries, h)
        return mech, t, h / h.sum(), error <= eta / 4 and mech.alive[best]

    k, m = 200, 15
    eta_premise = theory.median_premise_eta(k, 4, adaptive.WIDGET_N_PRIME)
    mech, t, p_sample, survives = run(0.1, 100_000)
    assert mech.m == m and 0.1 >= eta_premise
    assert 100_000 >= theory.private_median_onset(k, m, 0.1, adaptive.WIDGET_EPSILON)
    assert not mech.checker.halted and not mech.kept_all and survives and len(t.answers) == k
    assert 0 < sum(mech.wrong) < 5  # a few flags, all in the first queries
    assert not any(mech.wrong[20:])
    assert t.errors(p_sample).max() <= 1.25 * 0.1  # the good event's 5 eta / 4
    for eta, n in [(0.1, 1_000), (0.01, 100_000)]:
        assert eta < eta_premise or n < theory.private_median_onset(k, m, eta, 1.0)
        mech, t, _, survives = run(eta, n)
        assert (
            mech.checker.halted
            and not survives
            and sum(mech.wrong) == mech.m
            and len(t.answers) < k
        )
        assert mech.kept_all
    mech, t, _, _ = run(10**-0.5, 100_000)
    assert not any(mech.wrong) and len(t.answers) == k


def test_median_guess_is_kept_in_the_unit_interval_despite_round_off():
    """Rows of small_databases on which the all-ones query evaluates to 1.0000000000000002:
    the median guess is clipped into [0, 1] (GuessAndCheck refuses guesses outside), so the
    mechanism answers 1 instead of raising."""
    C = median.small_databases(4, 50)
    over = C[C @ np.ones(4) > 1]
    assert over.shape[0] > 0 and np.median(over @ np.ones(4)) > 1
    mech = median.MedianMechanism(np.array([10, 20, 30, 40]), candidates=over, eta=0.1)
    assert mech.answer(np.ones(4)) == 1.0
