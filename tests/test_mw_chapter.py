"""The claims chapter 04's prose makes about its own experiments, recomputed on its settings.

The running example is the Adult data on sex x race x income (20 cells) with every 1- and 2-way
marginal (33 queries), epsilon = 1, as in notebooks/04_private_multiplicative_weights.ipynb.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dpteach as dp
from dpteach import baselines, mw, theory
from dpteach.results import max_error


@pytest.fixture(scope="module")
def setting():
    tiny = dp.load_adult("tiny")
    names = ("sex", "race", "income>50K")
    marginals = [(a,) for a in names] + [
        (a, b) for i, a in enumerate(names) for b in names[i + 1 :]
    ]
    Q = dp.MarginalWorkload(tiny.domain, marginals)
    p = tiny.histogram()
    uniform = np.full(tiny.domain.size, 1 / tiny.domain.size)
    return tiny, Q, p, float(np.max(np.abs(Q.answer(uniform) - Q.answer(p))))


def test_the_slope_is_fitted_where_runs_update_and_follows_the_theorem(setting):
    """Text: at n = 30,000 no run updates (2 alpha(n) > g); over the rest the measured error's
    slope is close to that of 3 alpha(n) (about -1/3)."""
    tiny, Q, p, gap = setting
    ns = [30_000, 100_000, 300_000, 1_000_000]
    alphas = np.array([theory.private_mw_alpha(tiny.domain.size, Q.k, n, 1.0) for n in ns])
    assert 2 * alphas[0] > gap and np.all(2 * alphas[1:] < gap)
    errors, updated = [], []
    for j, (n, a) in enumerate(zip(ns, alphas)):
        data = dp.from_histogram(p, tiny.domain, n, rng=j)
        runs = [mw.private_mw(data, Q, epsilon=1.0, alpha=a, rng=s) for s in range(4)]
        errors.append(np.mean([max_error(Q.answer(data.histogram()), r.answers) for r in runs]))
        updated.append(min(sum(x.updated for x in r.trace) for r in runs))
    assert updated[0] == 0 and min(updated[1:]) > 0
    slope = np.polyfit(np.log(ns[1:]), np.log(errors[1:]), 1)[0]
    theory_slope = np.polyfit(np.log(ns[1:]), np.log(3 * alphas[1:]), 1)[0]
    assert abs(slope - theory_slope) < 0.05 and -0.4 < slope < -0.25
    assert np.all(np.array(errors[1:]) < 3 * alphas[1:])


def test_at_5000_people_private_mw_learns_nothing_and_mwem_learns(setting):
    """Text: private MW returns (close to) the uniform histogram at every alpha: its max error
    stays within 15 % of the uniform histogram's (at this n it makes at most a few updates, and
    they move it only a little), while MWEM's is under a tenth of it."""
    tiny, Q, p, _ = setting
    small = dp.from_histogram(p, tiny.domain, 5_000, rng=0)
    truth = Q.answer(small.histogram())
    uniform_error = max_error(truth, Q.answer(np.full(tiny.domain.size, 1 / tiny.domain.size)))
    for a in (0.05, 0.1, 0.2):
        assert theory.private_mw_onset(tiny.domain.size, Q.k, a, 1.0, setting[3]) > 5_000
        for s in range(5):
            result = mw.private_mw(small, Q, epsilon=1.0, alpha=a, rng=s)
            assert max_error(truth, result.answers) >= 0.85 * uniform_error
    for s in range(5):
        result = mw.mwem(small, Q, epsilon=1.0, rounds=10, rng=s)
        assert max_error(truth, result.answers) < 0.1 * uniform_error


def test_online_pmw_few_hard_queries_within_its_bound_and_better_than_laplace(setting):
    """Text: with c = 600 few of the 20,000 queries are hard (mostly early), every answer is
    within theory.online_pmw_error, and the max error is below Laplace-per-query's; with
    c = 200 the mechanism halts after a few hundred queries."""
    tiny, _, p, _ = setting
    population = dp.from_histogram(p, tiny.domain, 1_000_000, rng=0)
    stream = dp.random_queries(tiny.domain.size, 20_000, rng=1)
    truth = stream.answer(population.histogram())
    pmw = mw.OnlinePMW(population, epsilon=1.0, alpha=0.05, rng=0, max_hard=600)
    answers = np.array([pmw.answer(stream.query(i)) for i in range(stream.k)])
    hard = np.array([h for _, h in pmw.history])
    assert not pmw.halted and hard.sum() < 0.05 * stream.k and hard[10_000:].sum() < 20
    error = np.abs(answers - truth)
    assert error.max() <= theory.online_pmw_error(population.n, 1.0, 0.05, 600, stream.k)
    laplace = baselines.laplace_answers(truth, n=population.n, epsilon=1.0, rng=0)
    assert error.max() < np.abs(laplace - truth).max()
    short = mw.OnlinePMW(population, epsilon=1.0, alpha=0.05, rng=0, max_hard=200)
    for i in range(stream.k):
        if short.halted:
            break
        short.answer(stream.query(i))
    assert short.halted and short.asked < 1_000


def test_the_widget_learns_at_every_corner_of_its_ranges(setting):
    """The private-run widget's ranges: eps in [0.5, 5], n in [200,000, 1,000,000],
    alpha in [0.1, 0.25]; with its seeds every corner makes at least one update and at most 60
    rounds (the t slider's range)."""
    tiny, Q, p, gap = setting
    for eps, n, a in itertools.product((0.5, 5.0), (200_000, 1_000_000), (0.1, 0.25)):
        assert theory.private_mw_onset(tiny.domain.size, Q.k, a, eps, gap) < n
        data = dp.from_histogram(p, tiny.domain, n, rng=0)
        result = mw.private_mw(data, Q, epsilon=eps, alpha=a, rng=1)
        assert sum(r.updated for r in result.trace) >= 1 and result.rounds <= 60
