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
    ("laplace", laplace_sampler(), 0.0, 1.0, 1.0, 0.0, 100_000, "scalar"),
    ("safe laplace", laplace_sampler(safe=True), 0.0, 1.0, 1.0, 0.0, 100_000, "scalar"),
    ("gaussian (delta-test)", gaussian_sampler(1.0, 1e-5), 0.0, 1.0, 1.0, 1e-5, 1_000_000, "scalar"),
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
    ("laplace, scale / 1.2", broken.laplace_scaled(1 / 1.2), 0.0, 1.0, 1.0, 0.0, 400_000, "scalar"),
    ("gaussian, sigma / 2", broken.gaussian_scaled(0.5, dp.gaussian_sigma(1.0, 1.0, 1e-5)), 0.0, 1.0, 1.0, 1e-5, 1_000_000, "scalar"),
    ("exponential without the 2", broken.exponential_without_two(), U, U_PRIME, 1.0, 0.0, 100_000, "discrete"),
    ("SVT: no query noise (Stoddard)", broken.sparse_vector("stoddard"), [0, 1], [1, 0], 1.0, 0.0, 100_000, "discrete"),
    ("SVT: no cutoff (Chen)", broken.sparse_vector("chen", encode="count"), np.zeros(30), np.ones(30), 1.0, 0.0, 100_000, "discrete"),
    ("SVT: noise ignores c (Lee-Clifton)", broken.sparse_vector("lee-clifton", cutoff=3), *ALTERNATING, 1.0, 0.0, 100_000, "discrete"),
    ("SVT: releases noisy value (Roth)", broken.sparse_vector("roth", epsilon=4.0, encode="first"), np.zeros(9), np.r_[np.ones(8), 0], 4.0, 0.0, 1_000_000, "discrete"),
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
                                          (np.zeros(9), np.r_[np.ones(8), 0], 1, 4.0, 200_000)]:  # fmt: skip
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
                None
                if pmw.halted
                else int(np.clip(round(pmw.answer(np.array(q)) * 4), -40, 40)) + 50
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
