# ruff: noqa: E501
"""Privacy audits: every mechanism passes, every deliberately broken one is caught.

Positive cases must never be flagged at alpha = 1e-3 (fixed seeds); each negative control must be
flagged. The auditor itself: Clopper-Pearson coverage, both directions, bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import _broken as broken
from dpteach import audit as audit_power
from dpteach import mw
from dpteach.audit import (
    PAIRS,
    audit,
    clopper_pearson,
    encode,
    exponential_sampler,
    gaussian_sampler,
    laplace_sampler,
    repeat,
    sparse_sampler,
)

ALPHA = 1e-3


U, U_PRIME = PAIRS["one vs rest"]
X_SHAPE, ALTERNATING = PAIRS["x-shape"], PAIRS["alternating"]

POSITIVE = [
    ("laplace (safe, the default)", laplace_sampler(), 0.0, 1.0, 1.0, 0.0, 100_000, "scalar"),
    # passes, yet is not eps-DP (see the floating-point test below): a pass proves nothing
    ("naive laplace", laplace_sampler(safe=False), 0.0, 1.0, 1.0, 0.0, 100_000, "scalar"),
    ("gaussian (safe, the default; delta-test)", gaussian_sampler(1.0, 1e-5), 0.0, 1.0, 1.0, 1e-5, 1_000_000, "scalar"),
    ("naive gaussian", gaussian_sampler(1.0, 1e-5, safe=False), 0.0, 1.0, 1.0, 1e-5, 200_000, "scalar"),
    ("exponential", exponential_sampler(), U, U_PRIME, 1.0, 0.0, 100_000, "discrete"),
    ("AboveThreshold, x-shape", sparse_sampler(dp.AboveThreshold), *X_SHAPE, 1.0, 0.0, 20_000, "discrete"),
    ("Sparse c=3, alternating", sparse_sampler(dp.Sparse, cutoff=3), *ALTERNATING, 1.0, 0.0, 20_000, "discrete"),
    ("NumericSparse c=2, x-shape", sparse_sampler(dp.NumericSparse, cutoff=2), *X_SHAPE, 1.0, 0.0, 20_000, "discrete"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "sampler", "d", "d_prime", "epsilon", "delta", "samples", "kind"),
    POSITIVE,
    ids=[p[0] for p in POSITIVE],
)
def test_mechanisms_pass_their_audit(name, sampler, d, d_prime, epsilon, delta, samples, kind):
    result = audit(sampler, d, d_prime, epsilon=epsilon, delta=delta, samples=samples, rng=1,
                   alpha=ALPHA, kind=kind)  # fmt: skip
    assert not result.flagged, result
    assert result.epsilon_lower <= epsilon


NEGATIVE = [
    ("laplace, half the scale", broken.laplace_scaled(0.5), 0.0, 1.0, 1.0, 0.0, 100_000, "scalar"),
    ("laplace, scale / 1.2", broken.laplace_scaled(1 / 1.2), 0.0, 1.0, 1.0, 0.0, 10_000, "scalar"),
    ("gaussian, sigma / 2", broken.gaussian_scaled(0.5, dp.gaussian_sigma(1.0, 1.0, 1e-5, safe=False)), 0.0, 1.0, 1.0, 1e-5, 50_000, "scalar"),
    ("exponential without the 2", broken.exponential_without_two(), U, U_PRIME, 1.0, 0.0, 100_000, "discrete"),
    ("SVT: no query noise (Stoddard)", broken.sparse_vector("stoddard"), [0, 1], [1, 0], 1.0, 0.0, 100_000, "discrete"),
    ("SVT: no cutoff (Chen)", broken.sparse_vector("chen", encode="count"), np.zeros(30), np.ones(30), 1.0, 0.0, 100_000, "discrete"),
    ("SVT: noise ignores c (Lee-Clifton)", broken.sparse_vector("lee-clifton", cutoff=3), *ALTERNATING, 1.0, 0.0, 100_000, "discrete"),
    ("SVT: releases noisy value (Roth)", broken.sparse_vector("roth", epsilon=2.0, encode="first"), *PAIRS["m below then one"], 2.0, 0.0, 200_000, "discrete"),
    ("refusal depends on the data", broken.refuses_when_count_is_zero(), 0, 1, 1.0, 0.0, 10_000, "discrete"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "sampler", "d", "d_prime", "epsilon", "delta", "samples", "kind"),
    NEGATIVE,
    ids=[n[0] for n in NEGATIVE],
)
def test_broken_mechanisms_are_caught(name, sampler, d, d_prime, epsilon, delta, samples, kind):
    result = audit(sampler, d, d_prime, epsilon=epsilon, delta=delta, samples=samples, rng=2,
                   alpha=ALPHA, kind=kind)  # fmt: skip
    assert result.flagged, result
    assert result.epsilon_lower > epsilon


def test_the_correct_sparse_vector_passes_the_pairs_that_catch_the_broken_ones():
    """The same neighbouring pairs, on the correct variant: no violation, so the catches above are
    due to the bugs, not to the pairs."""
    for stream, other, cutoff, eps, n in [([0, 1], [1, 0], 1, 1.0, 100_000), (*ALTERNATING, 3, 1.0, 100_000),
                                          (*PAIRS["m below then one"], 1, 2.0, 200_000)]:  # fmt: skip
        sampler = broken.sparse_vector("dwork-roth", cutoff=cutoff, epsilon=eps)
        assert not audit(
            sampler, stream, other, epsilon=eps, samples=n, rng=3, kind="discrete"
        ).flagged


# --- the iterative algorithms, on a tiny universe ------------------------------------------------

DOM = dp.Domain.binary(1)
D = dp.Dataset([[0]] * 10, DOM)
D_PRIME = D.replace(0, [1])
Q = dp.MarginalWorkload.all_kway(DOM, 1)


def test_private_mw_passes_its_audit():
    sampler = repeat(lambda data, rng: round(
        mw.private_mw(data, Q, epsilon=1.0, alpha=0.45, rng=rng).synthetic[0] * 100))  # fmt: skip
    result = audit(sampler, D, D_PRIME, epsilon=1.0, samples=5_000, rng=4, kind="discrete")
    assert not result.flagged, result


def test_mwem_passes_its_audit():
    sampler = repeat(lambda data, rng: round(
        mw.mwem(data, Q, epsilon=1.0, rounds=2, iterations=3, rng=rng).synthetic[0] * 20))  # fmt: skip
    result = audit(sampler, D, D_PRIME, epsilon=1.0, samples=3_000, rng=5, kind="discrete")
    assert not result.flagged, result


def test_online_pmw_passes_its_audit():
    def once(data, rng):
        pmw = mw.OnlinePMW(data, epsilon=1.0, alpha=0.3, rng=rng, max_hard=2)
        answers = []
        for q in ([1.0, 0.0], [0.0, 1.0], [1.0, 0.0]):
            answers.append(
                None if pmw.halted else int(np.clip(round(pmw.answer(np.array(q)) * 4), -40, 40))
            )
        return encode(answers)

    result = audit(repeat(once), D, D_PRIME, epsilon=1.0, samples=5_000, rng=6, kind="discrete")
    assert not result.flagged, result


# --- the budget, floating point, and the auditor itself ---------------------------------------


def test_budget_accepts_and_refuses_in_the_same_pattern_on_neighbours():
    def pattern(value):
        budget, out = dp.PrivacyBudget(1.0), []
        for _ in range(12):
            try:
                dp.laplace(value, sensitivity=1.0, epsilon=0.1, rng=0, budget=budget)
                out.append(True)
            except dp.BudgetExceededError:
                out.append(False)
        return out

    assert pattern(0.0) == pattern(1.0) == [True] * 10 + [False] * 2


def _possible_from(y: float, x: float) -> bool:
    """Could the floating-point sum x + L equal y for some double L? (Checks L = y - x and its
    floating-point neighbours, which covers every L that rounds to y.)"""
    candidate = y - x
    for _ in range(4):
        candidate = np.nextafter(candidate, -np.inf)
    for _ in range(9):
        if x + candidate == y:
            return True
        candidate = np.nextafter(candidate, np.inf)
    return False


def test_naive_laplace_leaks_through_floating_point_and_the_safe_one_does_not():
    naive = dp.laplace(np.zeros(2000), sensitivity=1.0, epsilon=1.0, rng=7, safe=False)
    leaks = sum(not _possible_from(y, 1.0) for y in naive)
    # outputs in (-1, 1) carry finer bits than any 1 + L can: about 40 % here
    assert leaks > 500
    safe = dp.laplace(np.zeros(2000), sensitivity=1.0, epsilon=1.0, rng=7, safe=True)
    assert all(_possible_from(y, 1.0) for y in safe)
    g = dp.mechanisms.grid_spacing(1.0, 1.0, k=safe.size)
    assert np.all(np.mod(safe, g) == 0) and np.all(np.mod(safe - 1.0, g) == 0)


def test_naive_gaussian_leaks_through_floating_point_and_the_safe_one_does_not():
    naive = dp.gaussian(np.zeros(2000), sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=7, safe=False)
    assert sum(not _possible_from(y, 1.0) for y in naive) > 100
    safe = dp.gaussian(np.zeros(2000), sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=7)
    assert all(_possible_from(y, 1.0) for y in safe)
    g = dp.mechanisms._noise.gauss_grid(1.0, dp.gaussian_sigma(1.0, 1.0, 1e-6), safe.size).spacing
    assert np.all(np.mod(safe, g) == 0) and np.all(np.mod(safe - 1.0, g) == 0)


# --- ERM output perturbation ------------------------------------------------------------------

ERM_X = np.array([[1.0], [1.0]])
ERM_D, ERM_D_PRIME = (ERM_X, np.array([1.0, 1.0])), (ERM_X, np.array([1.0, -1.0]))


def _erm_sampler(epsilon: float):
    from dpteach import erm

    return repeat(lambda data, rng: erm.output_perturbation(
        *data, lam=1.0, epsilon=epsilon, rng=rng)[0])  # fmt: skip


@pytest.fixture
def cached_minimizer(monkeypatch):
    """The certified minimiser is a deterministic function of the data: memoise
    :func:`erm.solve` so that the audit draws thousands of releases of
    :func:`erm.output_perturbation` in seconds."""
    from dpteach import erm

    cache, solve = {}, erm.solve

    def memo(x, y, *, lam, tol=None, max_iter=None):
        key = (np.asarray(x).tobytes(), np.asarray(y).tobytes(), lam, tol, max_iter)
        if key not in cache:
            cache[key] = solve(x, y, lam=lam, tol=tol, max_iter=max_iter)
        return cache[key]

    monkeypatch.setattr(erm, "solve", memo)


@pytest.mark.usefixtures("cached_minimizer")
def test_erm_output_perturbation_passes_its_audit_and_an_overspending_one_is_caught():
    """n = 2, d = 1, lam = 1: flipping one label moves theta* by 0.40 (the bound 2/(n lam) is 1).
    The safe release at eps = 1 passes; the same code run at eps = 6 while claiming 1 (privacy
    loss 0.40 * 6 = 2.4) is flagged."""
    result = audit(_erm_sampler(1.0), ERM_D, ERM_D_PRIME, epsilon=1.0, samples=3_000, rng=9)
    assert not result.flagged, result
    broken_erm = audit(_erm_sampler(6.0), ERM_D, ERM_D_PRIME, epsilon=1.0, samples=3_000, rng=9)
    assert broken_erm.flagged, broken_erm


def test_clopper_pearson_covers_at_the_stated_level():
    rng = np.random.default_rng(8)
    p, n, a = 0.03, 500, 0.05
    lows = [clopper_pearson(k, n, a)[0] for k in rng.binomial(n, p, 2000)]
    misses = np.mean(np.array(lows) > p)
    # one-sided CP is conservative: miss rate <= a (+ 4 binomial standard errors of 2000 trials)
    assert misses <= a + 4 * math.sqrt(a * (1 - a) / 2000)
    assert clopper_pearson(0, 10, 0.05)[0] == 0 and clopper_pearson(10, 10, 0.05)[1] == 1


def test_audit_checks_both_directions():
    # a mechanism that leaks only when the inputs are swapped is still caught
    sampler = lambda x, rng, size: np.where(x == 1, 0, rng.integers(0, 2, size))  # noqa: E731
    assert audit(sampler, 0, 1, epsilon=1.0, samples=2_000, rng=0, kind="discrete").flagged
    assert audit(sampler, 1, 0, epsilon=1.0, samples=2_000, rng=0, kind="discrete").flagged


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"kind": "vector"}, "kind"), ({"samples": 10}, "samples"), ({"alpha": 0}, "alpha"),
     ({"epsilon": -1}, "epsilon"), ({"delta": 1}, "delta")],
)  # fmt: skip
def test_audit_bad_input(kwargs, match):
    args = {"epsilon": 1.0, "rng": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        audit(laplace_sampler(), 0.0, 1.0, **args)


# --- the audit's power ---------------------------------------------------------------------------


def test_samples_to_flag_finds_a_small_size_for_a_gross_bug_and_none_for_a_correct_mechanism():
    pair = PAIRS["count"]
    sizes = [100, 300, 1_000, 3_000]
    half = audit_power.samples_to_flag(broken.laplace_scaled(0.5), *pair, epsilon=1.0, sizes=sizes)
    assert half is not None and half <= 3_000
    # the search must not flag a correct mechanism (19 of 20 false alarms at alpha = 1e-3: never)
    assert audit_power.samples_to_flag(laplace_sampler(), *pair, epsilon=1.0, sizes=sizes) is None
    # a subtler bug needs more samples than a gross one
    subtle = audit_power.samples_to_flag(
        broken.laplace_scaled(0.8), *pair, epsilon=1.0, sizes=sizes
    )
    assert subtle is None or subtle > half


def test_smallest_overspend_caught_separates_a_strong_audit_from_a_powerless_one():
    pair = PAIRS["count"]
    strong = audit_power.smallest_overspend_caught(laplace_sampler, *pair, epsilon=1.0,
                                                   samples=100_000)  # fmt: skip
    assert strong is not None and strong <= 1.5
    # with 200 samples the same audit cannot see even a 1.5-fold overspend
    weak = audit_power.smallest_overspend_caught(laplace_sampler, *pair, epsilon=1.0, samples=200,
                                                 factors=(1.25, 1.5))  # fmt: skip
    assert weak is None


@pytest.mark.parametrize(
    ("call", "match"),
    [(lambda: audit_power.samples_to_flag(laplace_sampler(), 0, 1, epsilon=1.0, sizes=[]), "sizes"),
     (lambda: audit_power.samples_to_flag(laplace_sampler(), 0, 1, epsilon=1.0, sizes=[1000], seeds=3, required=4), "required"),
     (lambda: audit_power.smallest_overspend_caught(laplace_sampler, 0, 1, epsilon=1.0, samples=1000, factors=(0.5, 2)), "factors"),
     (lambda: audit_power.smallest_overspend_caught(laplace_sampler, 0, 1, epsilon=1.0, samples=1000, factors=()), "factors")],
)  # fmt: skip
def test_power_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_iterative_samplers_run_on_the_count_pair():
    for make in (audit_power.private_mw_sampler, audit_power.mwem_sampler,
                 audit_power.online_pmw_sampler):  # fmt: skip
        out = make(1.0)(0.0, np.random.default_rng(0), 20)
        assert out.shape == (20,) and np.issubdtype(out.dtype, np.integer)


def test_on_the_one_record_pair_alpha_decides_whether_epsilon_governs_private_mw():
    """Appendix A's power rows. The record's error is 1/2. At alpha = 0.9 private MW updates only
    when noise pushes the gap past 2 alpha = 1.8, so at eps = 100 it never updates (p_hat(0) =
    1/2 on both inputs: a larger epsilon leaks less, and the power search's monotonicity fails).
    At alpha = 0.2 (2 alpha = 0.4 < 1/2) the updates follow the record: p_hat(0) ends above 1/2
    far more often when the record is 0 (Fisher's exact test; the same test finds nothing in the
    all-1/2 outputs at alpha = 0.9)."""
    from scipy import stats

    def above_half(alpha, x, seed):
        out = audit_power.private_mw_sampler(100.0, alpha=alpha)(
            x, np.random.default_rng(seed), 300
        )
        return int(np.sum(out > 50)), int(np.sum(out != 50))

    def differ(alpha):
        (a, moved_a), (b, moved_b) = above_half(alpha, 0.0, 1), above_half(alpha, 1.0, 2)
        table = [[a, 300 - a], [b, 300 - b]]
        return stats.fisher_exact(table, alternative="greater").pvalue, moved_a + moved_b

    p_loose, moved = differ(0.9)
    assert moved == 0 and p_loose == 1.0
    p_tight, moved = differ(0.2)
    assert moved > 0 and p_tight < 1e-6


def test_online_pmw_on_the_one_record_pair_leaks_only_through_its_answer():
    """Appendix A: at alpha = 0.45 online PMW's sparse-vector test sees the error 1/2 on both
    inputs, so with the same seed the runs whose first query is hard (then it halts: the second
    answer is None, code digit 100) are the same on both inputs; only the Laplace answers
    (eps/2) differ, which is why the pair leaks at most half of epsilon."""
    sampler = audit_power.online_pmw_sampler(1.0, alpha=0.45)
    a, b = (sampler(x, np.random.default_rng(5), 300) for x in (0.0, 1.0))
    first_hard = a % 101 == 100
    assert 0 < first_hard.sum() < 300
    assert np.array_equal(first_hard, b % 101 == 100)
    assert not np.array_equal(a[first_hard], b[first_hard])  # the answers do see the record


# --- exact loss of the sparse-vector variants ---------------------------------------------------


def _exact_loss_by_quadrature(answers, other, t_scale, q_scale, cutoff):
    """Independent check of broken.exact_loss with scipy.integrate.quad (short streams only)."""
    import itertools

    from scipy import integrate

    def sf(x, b):
        return 0.5 * math.exp(-x / b) if x >= 0 else 1 - 0.5 * math.exp(x / b)

    def prob(pattern, ans):
        def f(t):
            out = math.exp(-abs(t) / t_scale) / (2 * t_scale)
            for above, a in zip(pattern, ans, strict=False):
                out *= sf(t - a, q_scale) if above else 1 - sf(t - a, q_scale)
            return out

        return sum(integrate.quad(f, lo, hi, limit=200)[0]
                   for lo, hi in [(-300, -2), (-2, 0), (0, 2), (2, 300)])  # fmt: skip

    patterns = set()
    for bits in itertools.product((0, 1), repeat=len(answers)):
        aboves = np.cumsum(bits)
        stop = int(np.argmax(aboves >= cutoff)) + 1 if aboves[-1] >= cutoff else len(bits)
        patterns.add(bits[:stop])
    return max(abs(math.log(prob(p, answers) / prob(p, other))) for p in patterns)


def test_exact_loss_matches_quadrature_and_lyu_su_li():
    d, d_prime = PAIRS["alternating"]
    losses = [broken.exact_loss("lee-clifton", d, d_prime, cutoff=c) for c in (1, 2, 3)]
    # the chapter's numbers, and LSL17's bound (1 + 6c) eps / 4 above each
    np.testing.assert_allclose(losses, [1.03, 2.19, 3.39], atol=0.005)
    assert all(loss < (1 + 6 * c) / 4 for loss, c in zip(losses, (1, 2, 3), strict=True))
    check = _exact_loss_by_quadrature(d[:4], d_prime[:4], 4.0, 4 / 3, 2)
    assert broken.exact_loss("lee-clifton", d[:4], d_prime[:4], cutoff=2) == pytest.approx(
        check, abs=1e-4
    )
    # the correct AboveThreshold at eps = 1 stays below 1 on its pairs (0.40 and 0.73)
    one = broken.exact_loss("dwork-roth", *PAIRS["one above"])
    assert one == pytest.approx(_exact_loss_by_quadrature([0, 1], [1, 0], 2.0, 4.0, 1), abs=1e-4)
    x_shape = broken.exact_loss("dwork-roth", *PAIRS["x-shape"])
    assert 0.39 < one < 0.40 and 0.72 < x_shape < 0.74 < 1.0
    with pytest.raises(ValueError, match="variant"):
        broken.exact_loss("stoddard", [0, 1], [1, 0])
    with pytest.raises(ValueError, match="cutoff"):
        broken.exact_loss("dwork-roth", [0, 1], [1, 0], cutoff=2)


# --- the event search, counted on sorted samples, and the broken samplers' distributions --------


def _brute_force_scores(a, b, events, epsilon, delta, samples):
    """The selection scores of the original one-event-at-a-time loop."""
    scores = []
    for _, indicator in events:
        p, q = np.mean(indicator(a)), np.mean(indicator(b))
        excess = p - delta - (math.exp(epsilon) * q if q > 0 else 0.0)
        scores.append(excess / math.sqrt(p + q + 1 / samples))
    return np.array(scores)


@pytest.mark.parametrize("kind", ["scalar", "discrete"])
def test_event_counts_match_evaluating_every_event(kind):
    gen = np.random.default_rng(5)
    if kind == "scalar":
        a, b = gen.laplace(0, 1, 3000), gen.laplace(1, 1, 3000)
        a[:100] = b[:100] = 0.25  # ties at a cut
        counts_a, counts_b, event = audit_power._scalar_events(a, b, 50)
    else:
        a, b = gen.geometric(0.3, 3000), gen.geometric(0.2, 3000)
        counts_a, counts_b, event = audit_power._discrete_events(a, b, 50)
    events = [event(i) for i in range(counts_a.size)]
    assert len(events) > 10
    for (_, indicator), ca, cb in zip(events, counts_a, counts_b, strict=True):
        assert ca == np.sum(indicator(a)) and cb == np.sum(indicator(b))
    # the scores from the counts are the loop's, to the last bit
    expected = _brute_force_scores(a, b, events, 0.5, 1e-5, 3000)
    p, q = counts_a / 3000, counts_b / 3000
    penalty = np.where(q > 0, math.exp(0.5) * q, 0.0)
    assert np.array_equal((p - 1e-5 - penalty) / np.sqrt(p + q + 1 / 3000), expected)


def test_broken_exponential_draws_the_softmax_without_the_factor_two():
    from scipy import stats

    u = np.r_[3.0, 1.0, 0.0, 0.0, -1.0]
    draws = broken.exponential_without_two(epsilon=1.0)(u, np.random.default_rng(0), 100_000)
    observed = np.bincount(draws, minlength=u.size)

    def expected(rate):
        w = np.exp(rate * u)
        return 100_000 * w / w.sum()

    assert stats.chisquare(observed, expected(1.0)).pvalue > 1e-6
    # the same test rejects the correct mechanism's exp(eps u / (2 Delta))
    assert stats.chisquare(observed, expected(0.5)).pvalue < 1e-6


def test_broken_laplace_helper_draws_the_laplace_distribution():
    from scipy import stats

    x = broken._laplace(np.random.default_rng(1), 2.0, 100_000)
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue > 1e-6
    assert stats.kstest(x, stats.laplace(scale=2.2).cdf).pvalue < 1e-6


def test_broken_sparse_vector_matches_the_exact_transcript_probabilities():
    """Lee-Clifton (threshold never redrawn) on the alternating pair: the frequency of every
    transcript matches its exact probability (1-D integral over the threshold), chi-square."""
    from scipy import stats

    d = np.asarray(ALTERNATING[0], dtype=float)
    s = broken.sparse_vector("lee-clifton", cutoff=3, encode="pattern")
    codes = s(d, np.random.default_rng(3), 100_000)
    t = np.linspace(-80, 80, 160_001)
    weight = np.exp(-np.abs(t) / 4.0) / (2 * 4.0) * (t[1] - t[0])  # threshold noise Lap(4/eps)
    values, observed = np.unique(codes, return_counts=True)

    def expected(q_scale):  # query noise Lap(q_scale); Lee-Clifton's is 4/(3 eps)
        x = t[:, None] - d[None, :]
        tail = 0.5 * np.exp(-np.abs(x) / q_scale)
        up = np.where(x >= 0, tail, 1 - tail)  # P[answer + noise >= t]
        out = []
        for code in values.tolist():  # the base-3 pattern: 0 below, 1 above, 2 halted
            p = np.ones_like(t)
            for j in range(d.size):
                digit = (code // 3 ** (d.size - 1 - j)) % 3
                if digit == 2:
                    break
                p = p * (up[:, j] if digit == 1 else 1 - up[:, j])
            out.append(weight @ p)
        return np.array(out)

    right = expected(4 / 3)
    assert right.sum() == pytest.approx(1.0, abs=1e-3)  # every possible transcript was seen
    assert stats.chisquare(observed, 100_000 * right / right.sum()).pvalue > 1e-6
    wrong = expected(1.2 * 4 / 3)  # the same test rejects 20 % more query noise
    assert stats.chisquare(observed, 100_000 * wrong / wrong.sum()).pvalue < 1e-6
