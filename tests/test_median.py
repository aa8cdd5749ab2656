"""Chapter 02 (Stemmer, Lecture 4): small databases, Claim 1, GuessAndCheck (exact and private),
the median mechanism's halving and S*, adaptive analysts and the overfitting attack, audits."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import adaptive, median, theory
from dpteach.audit import audit, encode, repeat, smallest_overspend_caught

Q01 = np.array([0.0, 1.0])  # "the fraction of records equal to 1" on a 2-cell universe


# --- small databases -------------------------------------------------------------------------


def test_small_databases_are_every_multiset_once():
    c = median.small_databases(4, 5)
    assert c.shape == (median.multiset_count(4, 5), 4) == (56, 4)
    counts = np.round(c * 5).astype(int)
    assert np.all(counts.sum(axis=1) == 5) and len({tuple(r) for r in counts}) == 56
    assert tuple(counts[0]) == (5, 0, 0, 0) and tuple(counts[-1]) == (0, 0, 0, 5)


def test_small_databases_refuse_before_allocating():
    with pytest.raises(ValueError, match=r"about 10\^.*more than the limit 2,000,000"):
        median.small_databases(2**20, 10**9)  # would hang in math.comb if not refused by size
    with pytest.raises(ValueError, match=r"16,777,216"):
        median.small_databases(16, 9)  # 1,307,504 databases x 16 cells
    with pytest.raises(TypeError, match="m must be an integer"):
        median.small_databases(4, 2.0)


# --- Claim 1 ---------------------------------------------------------------------------------


def test_claim1_subsample_answers_all_queries_at_least_half_the_time():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(1000, rng.dirichlet(np.ones(8)))
    Q = rng.random((20, 8))
    alpha = 0.1
    n_prime = math.ceil(theory.claim1_subsample_size(20, alpha))
    trials = 4000
    rate = median.subsample_success(counts, Q, n_prime=n_prime, alpha=alpha, trials=trials, rng=1)
    assert rate >= 0.5 - 4 * math.sqrt(0.25 / trials)
    # the experiment can fail: 1/30 of the size misses alpha most of the time
    small = median.subsample_success(counts, Q, n_prime=n_prime // 30, alpha=alpha, trials=trials,
                                     rng=1)  # fmt: skip
    assert small < 0.5


# --- GuessAndCheck ---------------------------------------------------------------------------


def test_guess_and_check_answers_guess_or_grid_and_halts_after_exactly_m_wrong():
    gac = median.GuessAndCheck([3, 7], eta=0.2, m=3)  # q01(S) = 0.7
    assert gac.ask(Q01, 0.55) == 0.55  # within eta
    answers = [gac.ask(Q01, 0.1) for _ in range(3)]  # three wrong guesses
    assert answers == [pytest.approx(0.7)] * 3  # 0.7 is on the eta/4 = 0.05 grid
    assert gac.halted and gac.wrong == 3 and gac.asked == 4
    with pytest.raises(RuntimeError, match="halted after m=3"):
        gac.ask(Q01, 0.7)
    assert gac.asked == 4


def test_guess_and_check_wrong_answers_are_eta_over_four_accurate():
    rng = np.random.default_rng(2)
    counts = rng.multinomial(997, np.ones(5) / 5)
    gac = median.GuessAndCheck(counts, eta=0.13, m=10_000)
    for q in rng.random((500, 5)):
        a = gac.ask(q, 0.0 if q @ counts / 997 > 0.5 else 1.0)
        assert abs(a - q @ counts / 997) <= 0.13 / 8 + 1e-12
        assert abs(a / (0.13 / 4) - round(a / (0.13 / 4))) < 1e-9


def test_private_guess_and_check_accounting_and_refusals():
    budget = dp.PrivacyBudget(1.0)
    gac = median.PrivateGuessAndCheck([50, 50], eta=0.1, m=2, epsilon=0.6, rng=0, budget=budget)
    assert budget.spent_epsilon == pytest.approx(0.6)  # charged once, on construction
    assert gac._sparse.epsilon == pytest.approx(0.3) and gac._sparse.cutoff == 2
    # answers cost epsilon/(2m) each: Laplace scale 2m/(epsilon n)
    rng = np.random.default_rng(5)
    draws = [median.PrivateGuessAndCheck([50, 50], eta=0.1, m=2, epsilon=0.6, rng=rng)._answer(0.5)
             for _ in range(4000)]  # fmt: skip
    scale = 2 * 2 / (0.6 * 100)
    spread = np.mean(np.abs(np.array(draws) - 0.5))  # E|Lap(b)| = b
    assert spread == pytest.approx(scale, rel=0.06)
    assert spread != pytest.approx(scale / 2, rel=0.06)  # epsilon/2 per answer (forgot m) fails
    # invalid input: nothing charged, no draw
    state = np.random.default_rng(9)
    before = state.bit_generator.state
    with pytest.raises(ValueError, match="eta must be > 0"):
        median.PrivateGuessAndCheck([5, 5], eta=0.0, m=2, epsilon=0.6, rng=state, budget=budget)
    with pytest.raises(dp.BudgetExceededError):
        median.PrivateGuessAndCheck([5, 5], eta=0.1, m=2, epsilon=0.6, rng=state, budget=budget)
    assert budget.spent_epsilon == pytest.approx(0.6) and state.bit_generator.state == before
    # a noise scale too large to represent is refused on construction, before the charge
    with pytest.raises(ValueError, match="too small for the safe Laplace grid"):
        median.PrivateGuessAndCheck([5, 5], eta=0.1, m=10**15, epsilon=1e-9, rng=state,
                                    budget=budget)  # fmt: skip
    assert budget.spent_epsilon == pytest.approx(0.6) and state.bit_generator.state == before


def test_private_guess_and_check_halts_after_m_wrong_guesses():
    gac = median.PrivateGuessAndCheck([0, 1000], eta=0.1, m=4, epsilon=2.0, rng=3)
    answers = [gac.ask(Q01, 0.0) for _ in range(4)]  # q(S) = 1, guess 0: far above the threshold
    assert gac.halted and gac.wrong == 4
    assert all(abs(a - 1.0) < 0.1 for a in answers)
    with pytest.raises(RuntimeError, match="halted"):
        gac.ask(Q01, 0.0)


@pytest.mark.parametrize("bad", [np.array([0.0, 1.5]), np.array([0.5]), np.array([-0.1, 0.2])])
def test_queries_must_be_statistical_queries_over_the_universe(bad):
    with pytest.raises(ValueError, match="query"):
        median.GuessAndCheck([1, 1], eta=0.1, m=1).ask(bad, 0.5)


def test_bad_samples_and_candidates_are_refused():
    with pytest.raises(ValueError, match="sample"):
        median.GuessAndCheck([1.5, 2], eta=0.1, m=1)
    with pytest.raises(ValueError, match="2 columns"):
        median.MedianMechanism([1, 1], candidates=median.small_databases(3, 2), eta=0.1)


# --- the median mechanism: halving and S* ------------------------------------------------------


def _run(domain_size, n_prime, eta, k, seed):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(200, rng.dirichlet(np.ones(domain_size)))
    C = median.small_databases(domain_size, n_prime)
    Q = rng.random((k, domain_size))
    mm = median.MedianMechanism(counts, candidates=C, eta=eta)
    t = adaptive.interact(mm, adaptive.fixed_queries(Q))
    return counts, C, Q, mm, t


def test_halving_and_s_star_property():
    """Over many random settings: whenever some candidate is within eta/4 of the sample on every
    query (the premise), every wrong guess at least halves the survivors, S* survives, there are
    at most log2|S_0| wrong guesses, and every answer is within eta of the sample."""
    checked = 0
    for seed in range(60):
        rng = np.random.default_rng(1000 + seed)
        size, n_prime = int(rng.integers(2, 6)), int(rng.integers(4, 12))
        eta = float(rng.uniform(0.05, 0.5))
        counts, C, Q, mm, t = _run(size, n_prime, eta, 40, seed)
        best, err = median.best_candidate(C, t.queries, counts)
        assert np.all(t.errors(counts / counts.sum()) <= eta + 1e-12)
        if err > eta / 4:
            continue
        checked += 1
        s = np.array(mm.survivors)
        wrong = np.array(mm.wrong)
        assert np.all(s[1:][wrong] <= s[:-1][wrong] / 2)
        assert np.all(s[1:][~wrong] == s[:-1][~wrong])
        assert mm.alive[best] and wrong.sum() <= math.log2(C.shape[0]) and len(t.answers) == 40
    assert checked >= 20  # the property was exercised, not vacuously true


@pytest.mark.parametrize("seed", range(3))
def test_lecture_parameters_on_two_cells(seed):
    k, n = 20, 20_000
    eta, n_prime = theory.median_eta(k, n), theory.median_subsample_size(k, n)
    assert n_prime == math.ceil(8 * math.sqrt(2 * n * math.log(4 * k)))
    assert theory.claim1_alpha(k, n_prime) <= eta / 4  # Claim 1 at n' gives S* within eta/4
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, [0.3, 0.7])
    C = median.small_databases(2, n_prime)
    mm = median.MedianMechanism(counts, candidates=C, eta=eta)
    t = adaptive.interact(mm, adaptive.fixed_queries(rng.random((k, 2))))
    best, err = median.best_candidate(C, t.queries, counts)
    assert err <= eta / 4 and mm.alive[best] and len(t.answers) == k
    assert np.max(t.errors(counts / n)) <= eta


def test_text_slip_in_the_subsample_size():
    k, n = 100, 1000
    text = 8 * math.sqrt(math.log(4 * k)) * 2 * n
    ours = theory.median_subsample_size(k, n)
    assert ours == 876 and text / ours == pytest.approx(math.sqrt(2 * n), rel=1e-3)
    assert theory.median_guesses(k, n, 1024) == 8760
    assert theory.laplace_tail(0.01, 1.0, 100) == pytest.approx(math.exp(-1))


# --- adaptive analysts -----------------------------------------------------------------------


def test_useless_features_agree_with_the_label_half_the_time_on_the_population():
    F, y = adaptive.useless_features(16, 50, rng=0)
    P = np.full(16, 1 / 16)
    values = np.array([adaptive.agreement(f, y) @ P for f in F])
    np.testing.assert_array_equal(values, 0.5)
    with pytest.raises(ValueError, match="multiple of 4"):
        adaptive.useless_features(10, 3, rng=0)


def test_overfitting_attack_overfits_exact_answers_not_fresh_samples():
    def exact(c, P, g):
        return adaptive.ExactAnswers(c)

    def fresh(c, P, g):
        return adaptive.FreshSamples(P, int(c.sum()), rng=g)

    runs = {
        name: np.array(
            [adaptive.overfitting_errors(f, d=128, n=100, domain_size=16, rng=s) for s in range(20)]
        )  # fmt: skip
        for name, f in [("exact", exact), ("fresh", fresh)]
    }
    assert np.all(runs["exact"][:, 0] < 1e-12)  # exact on the sample ...
    assert runs["exact"][:, 1].mean() > 2 * runs["fresh"][:, 1].mean()  # ... wrong on P


def test_interact_stops_when_the_mechanism_halts():
    counts = np.array([0, 10])
    mm = median.MedianMechanism(counts, candidates=median.small_databases(2, 4), eta=0.1, m=1)
    t = adaptive.interact(mm, adaptive.fixed_queries([Q01, Q01, 1 - Q01]))
    assert mm.checker.halted and len(t.answers) == 1


def test_overfitting_errors_refuse_a_mechanism_that_halts_before_the_final_query():
    def halting(c, P, g):  # the first of 16 uniform-population queries is a wrong guess at m = 1
        return median.MedianMechanism(c, candidates=median.small_databases(16, 1), eta=0.01, m=1)

    with pytest.raises(RuntimeError, match="halted after 1 of the attack's 9 queries"):
        adaptive.overfitting_errors(halting, d=8, n=100, domain_size=16, rng=0)


def test_median_mechanism_sampler_encodes_halted_answers():
    # candidates (1, 0) and (0, 1) only, q(S) = 0.75: every guess (0.5) is wrong, no candidate is
    # near 0.75 (the survivors stay), and the default m = 2 halts GuessAndCheck before query 3
    sampler = median.median_mechanism_sampler(median.small_databases(2, 1), [Q01] * 3, eta=0.1)
    codes = sampler(np.array([1, 3]), np.random.default_rng(0), 2)
    assert codes.tolist() == [encode([3, 3, None])] * 2


# --- audits ------------------------------------------------------------------------------------

S, S_PRIME = np.array([2, 2]), np.array([1, 3])  # replace-one neighbours, n = 4
PAIRS = [(Q01, 0.5)] * 3


def _private(counts, rng):
    return median.PrivateGuessAndCheck(counts, eta=0.1, m=2, epsilon=1.0, rng=rng)


class _Leaky(median.PrivateGuessAndCheck):
    def _answer(self, value):  # the Laplace noise forgotten
        return value


def test_private_guess_and_check_passes_its_audit():
    r = audit(median.guess_and_check_sampler(_private, PAIRS), S, S_PRIME, epsilon=1.0,
              samples=2_000, rng=1, kind="discrete")  # fmt: skip
    assert not r.flagged and r.epsilon_lower <= 1.0


def test_broken_private_guess_and_check_is_caught():
    def leaky(counts, rng):
        return _Leaky(counts, eta=0.1, m=2, epsilon=1.0, rng=rng)

    r = audit(median.guess_and_check_sampler(leaky, PAIRS), S, S_PRIME, epsilon=1.0,
              samples=2_000, rng=1, kind="discrete")  # fmt: skip
    assert r.flagged


def _private_median_sampler(make, queries, *, resolution: int = 4):
    """Sampler of a (private) median mechanism asked the fixed ``queries``: per query ``None`` for
    an accepted guess (or after a halt), else ``floor(resolution * a)``, encoded as one integer
    (post-processing of the answers: an accepted guess is a function of the earlier answers)."""

    def once(counts, rng):
        mech, out = make(counts, rng), []
        for q in queries:
            a = mech.answer(q)
            out.append(None if a is None or not mech.wrong[-1] else math.floor(resolution * a))
        return encode(out, clip=True)

    return repeat(once)


C8 = median.small_databases(2, 8)  # guesses 1/2 = q(S); q(S') = 3/4 is one sensitivity away


def _private_median(epsilon, *, leaky=False):
    """The private median mechanism at ``epsilon`` with m = 1 (one sparse-vector test at
    epsilon/2, one Laplace answer at epsilon/2: the audit's events can reach the whole epsilon),
    asked one query; ``leaky`` forgets the answer's Laplace noise."""

    def make(counts, rng):
        mech = median.PrivateMedianMechanism(counts, candidates=C8, eta=0.1, epsilon=epsilon,
                                              rng=rng, m=1)  # fmt: skip
        if leaky:
            mech.checker._answer = lambda value: value
        return mech

    return _private_median_sampler(make, [Q01])


def test_private_median_mechanism_passes_its_audit_and_a_leaky_one_is_caught():
    r = audit(_private_median(1.0), S, S_PRIME, epsilon=1.0, samples=2_000, rng=1,
              kind="discrete")  # fmt: skip
    assert not r.flagged and r.epsilon_lower <= 1.0
    leaky = audit(_private_median(1.0, leaky=True), S, S_PRIME, epsilon=1.0, samples=2_000,
                  rng=1, kind="discrete")  # fmt: skip
    assert leaky.flagged


def test_private_median_mechanism_audit_has_power():
    """The pass above is evidence only against an overspend this audit catches: run at 3 times
    the claimed epsilon (and at 10), the same mechanism is flagged."""
    power = smallest_overspend_caught(_private_median, S, S_PRIME, epsilon=1.0, samples=2_000,
                                      rng=1, kind="discrete")  # fmt: skip
    assert power is not None and power <= 3.0


def test_median_mechanism_is_not_differentially_private():
    sampler = median.median_mechanism_sampler(median.small_databases(2, 8), [Q01] * 2, eta=0.1)
    r = audit(sampler, S, S_PRIME, epsilon=1.0, samples=1_000, rng=1, kind="discrete")
    # deterministic: its answers on S never occur on S' (the bound is capped only by the samples)
    assert r.flagged and r.epsilon_lower > 4.5


def test_numbers_stated_in_the_chapter():
    assert median.multiset_count(4, 40) == 12341  # the widget's candidate set
    k, n = 100, 1000
    text = 8 * math.sqrt(math.log(4 * k)) * 2 * n  # Exercise 4: the text's formula
    assert round(text, -1) == 39160 and round(math.sqrt(2 * n), 1) == 44.7


def test_guess_and_check_refuses_bad_guesses_and_eta_without_changing_state():
    gac = median.PrivateGuessAndCheck([5, 5], eta=0.1, m=2, epsilon=1.0, rng=0)
    for bad in (1.5, -0.2):
        with pytest.raises(ValueError, match=r"guess must be in \[0, 1\]"):
            gac.ask(Q01, bad)
    assert gac.asked == 0 and gac._sparse.answered == 0
    with pytest.raises(ValueError, match=r"eta must be in \(0, 1\]"):
        median.GuessAndCheck([5, 5], eta=2.0, m=1)
    zcdp = dp.ZCDPBudget(1.0)  # a pure epsilon-DP mechanism charges epsilon^2/2 to a zCDP budget
    median.PrivateGuessAndCheck([5, 5], eta=0.1, m=2, epsilon=1.0, rng=0, budget=zcdp)
    assert zcdp.spent == pytest.approx(0.5)
