"""Adaptive data analysis (Stemmer, Lecture 4): an analyst asks statistical queries of a *sample*.

The sample ``S`` holds ``n`` records drawn from a population ``P`` over a universe ``X``; a
statistical query is a vector ``q`` in ``[0, 1]^|X|`` with ``q(S) = <q, p_S>`` and
``q(P) = <q, P>``. An *analyst* is a generator that yields queries and receives the answers
(``answer = yield query``), so each query may depend on earlier answers; a *mechanism* is any
object with ``answer(q)``. :func:`interact` runs one against the other; the transcript's errors on
the sample and on the population tell empirical from statistical accuracy.

The mechanisms here: :class:`ExactAnswers` (the empirical average, not DP-stable),
:class:`LaplaceAnswers` (DP-stable), :class:`FreshSamples` (the expensive ideal) and, from
:mod:`dpteach.median`, the median mechanism.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from . import theory
from .mechanisms import Seed, laplace
from .median import (
    PrivateMedianMechanism,
    _sample_counts,
    _statistical_query,
    small_databases,
)

Analyst = Generator[np.ndarray, float, None]


class ExactAnswers:
    """Answers every query with the exact empirical average ``q(S)``: empirically perfect, not
    DP-stable (deterministic, and changing one record changes the answer)."""

    def __init__(self, sample: object):
        h = _sample_counts(sample)
        self._p = h / h.sum()

    def answer(self, q: object) -> float:
        return float(_statistical_query(q, self._p.size) @ self._p)


class LaplaceAnswers:
    """The Laplace mechanism (Lecture 4, Definition 4): ``q(S) + Lap(1 / (epsilon n))`` per query.

    Guarantee: each answer is ``epsilon``-DP-stable under replace-one neighbours (Theorem 5;
    sensitivity ``1/n``); ``k`` adaptively chosen answers are ``k epsilon``-DP-stable (Theorem 8).
    A passed Generator is consumed.
    """

    def __init__(self, sample: object, *, epsilon: float, rng: Seed):
        h = _sample_counts(sample)
        self.n = int(h.sum())
        self._p = h / self.n
        self.epsilon = check.positive(epsilon, "epsilon")
        self._rng = check.rng(rng)

    def answer(self, q: object) -> float:
        value = float(_statistical_query(q, self._p.size) @ self._p)
        return laplace(value, sensitivity=1 / self.n, epsilon=self.epsilon, rng=self._rng)


class FreshSamples:
    """Answers every query on a fresh sample of ``n`` records from the population ``P``: the
    expensive ideal (``k`` queries cost ``k n`` records), whose answers cannot overfit. A passed
    Generator is consumed."""

    def __init__(self, population: object, n: int, *, rng: Seed):
        self._P = check.histogram(population, name="population")
        self.n = check.integer(n, "n", minimum=1)
        self._rng = check.rng(rng)

    def answer(self, q: object) -> float:
        q = _statistical_query(q, self._P.size)
        return float(q @ self._rng.multinomial(self.n, self._P) / self.n)


@dataclass(frozen=True)
class Transcript:
    """The queries asked (``k x |X|``) and the answers received (``k``)."""

    queries: np.ndarray
    answers: np.ndarray

    def errors(self, p: object) -> np.ndarray:
        """``|a_i - q_i(p)|`` for every query, against a histogram ``p`` (the sample's ``p_S`` for
        empirical error, the population ``P`` for statistical error)."""
        if self.answers.size == 0:  # no query was asked: no error to report
            check.histogram(p, name="p")
            return np.empty(0)
        p = check.histogram(p, self.queries.shape[1], name="p")
        return np.abs(self.answers - self.queries @ p)


def interact(mechanism, analyst: Analyst) -> Transcript:
    """Run ``analyst`` against ``mechanism`` until the analyst stops or the mechanism answers
    ``None`` (it has halted)."""
    queries, answers = [], []
    try:
        q = next(analyst)
        while True:
            a = mechanism.answer(q)
            if a is None:
                break
            queries.append(np.asarray(q, dtype=float))
            answers.append(a)
            q = analyst.send(a)
    except StopIteration:
        pass
    return Transcript(np.array(queries), np.array(answers, dtype=float))


def fixed_queries(queries: Iterable[object]) -> Analyst:
    """A non-adaptive analyst: asks ``queries`` in order, ignoring the answers."""
    for q in queries:
        yield np.asarray(q, dtype=float)


def agreement(feature: np.ndarray, label: np.ndarray) -> np.ndarray:
    """The statistical query ``q(x) = 1[f(x) = y(x)]``: how often a 0/1 feature predicts the
    label."""
    f = check.array(feature, "feature", ndim=1)
    y = check.array(label, "label", ndim=1)
    if f.shape != y.shape:
        raise ValueError(
            f"feature and label must be 0/1 vectors over the same universe, got lengths "
            f"{f.size} and {y.size}"
        )
    return (f == y).astype(float)


def overfitting_attack(features: object, label: object) -> Analyst:
    """The classic overfitting attack (Freedman's paradox; Dwork et al. 2015).

    First asks, for each of the ``d`` features (rows of ``features``, 0/1 over X), how often it
    agrees with ``label`` (0/1 over X); then asks how often the *majority vote* of the features
    that looked good (answer above 1/2) agrees with the label (an empty vote predicts 0). On a
    population where no feature carries signal, exact answers make the vote look good on the
    sample while it is no better than chance on the population.
    """
    F = np.asarray(features)
    y = np.asarray(label)
    good = np.zeros(len(F), dtype=bool)
    for j, f in enumerate(F):
        good[j] = (yield agreement(f, y)) > 0.5
    votes = F[good].mean(axis=0) if good.any() else np.zeros(y.size)
    yield agreement((votes > 0.5).astype(int), y)


def useless_features(domain_size: int, d: int, *, rng: Seed) -> tuple[np.ndarray, np.ndarray]:
    """A population of ``domain_size`` kinds of record (uniform ``P``) with a 0/1 label (half of
    the kinds each) and ``d`` 0/1 features that each agree with the label on exactly half of each
    label class, so every feature's agreement with the label is exactly 1/2 on the population.

    Returns ``(features, label)``: a ``d x |X|`` and a length-``|X|`` array. ``domain_size`` must
    be a multiple of 4. A passed Generator is consumed.
    """
    size = check.integer(domain_size, "domain_size", minimum=4)
    if size % 4:
        raise ValueError(f"domain_size must be a multiple of 4, got {size}")
    d = check.integer(d, "d", minimum=1)
    gen = check.rng(rng)
    label = np.repeat([0, 1], size // 2)
    half = np.tile(np.repeat([0, 1], size // 4), (d, 1))
    agrees = np.hstack([gen.permuted(half, axis=1), gen.permuted(half, axis=1)]).astype(bool)
    features = np.where(agrees, label, 1 - label)
    return features, label


def overfitting_errors(
    make_mechanism: Callable[[np.ndarray, np.ndarray, np.random.Generator], object],
    *,
    d: int,
    n: int,
    domain_size: int,
    rng: Seed,
) -> tuple[float, float]:
    """One run of :func:`overfitting_attack` with ``d`` useless features: draws the population
    (:func:`useless_features`, uniform ``P``) and a sample of ``n`` records, builds the mechanism
    with ``make_mechanism(counts, P, rng)`` and returns the final (majority-vote) query's sample and
    population errors ``(|a - q(S)|, |a - q(P)|)``. Raises ``RuntimeError`` if the mechanism halts
    before the final query. A passed Generator is consumed."""
    gen = check.rng(rng)
    features, label = useless_features(domain_size, d, rng=gen)
    P = np.full(domain_size, 1 / domain_size)
    counts = gen.multinomial(check.integer(n, "n", minimum=1), P)
    t = interact(make_mechanism(counts, P, gen), overfitting_attack(features, label))
    if len(t.answers) != d + 1:
        raise RuntimeError(
            f"the mechanism halted after {len(t.answers)} of the attack's {d + 1} queries; the "
            "final (majority-vote) query was not answered"
        )
    return float(t.errors(counts / n)[-1]), float(t.errors(P)[-1])


@dataclass(frozen=True)
class AttackRun:
    """One run of :func:`overfitting_attack`: the transcript, the sample's counts, the population
    ``P`` and the mechanism (to inspect afterwards, e.g. a median mechanism's wrong guesses)."""

    transcript: Transcript
    counts: np.ndarray
    population: np.ndarray
    mechanism: object

    @property
    def features_kept(self) -> int:
        """How many features the analyst kept (answer above 1/2): 0 means the attack's final
        vote is the constant 0 and never used the answers."""
        return int(np.sum(self.transcript.answers[:-1] > 0.5))

    @property
    def errors(self) -> tuple[float, float]:
        """The final (majority-vote) answer's errors ``(|a - q(S)|, |a - q(P)|)``."""
        t, n = self.transcript, self.counts.sum()
        return float(t.errors(self.counts / n)[-1]), float(t.errors(self.population)[-1])


def overfitting_runs(
    mechanisms: dict, *, ds: Iterable[int], n: int, domain_size: int, seeds: int
) -> dict[str, list[list[AttackRun]]]:
    """:func:`overfitting_attack` for every mechanism (name -> ``make_mechanism(counts, P,
    rng)``), every ``d`` in ``ds`` and seeds ``0..seeds-1``, keeping every run
    (:class:`AttackRun`): ``runs[name][j][s]`` for ``ds[j]`` and seed ``s``. The population and
    sample of seed ``s`` are those of :func:`overfitting_errors`. Raises ``RuntimeError`` if a
    mechanism halts before the final query."""
    seeds = check.integer(seeds, "seeds", minimum=1)
    n = check.integer(n, "n", minimum=1)
    out: dict[str, list[list[AttackRun]]] = {}
    for name, make in mechanisms.items():
        out[name] = []
        for d in ds:
            row = []
            for s in range(seeds):
                gen = check.rng(s)
                features, label = useless_features(domain_size, d, rng=gen)
                P = np.full(domain_size, 1 / domain_size)
                counts = gen.multinomial(n, P)
                mech = make(counts, P, gen)
                t = interact(mech, overfitting_attack(features, label))
                if len(t.answers) != d + 1:
                    raise RuntimeError(f"{name} halted before the final query (d = {d})")
                row.append(AttackRun(t, counts, P, mech))
            out[name].append(row)
    return out


#: The widget's population: off the grid of 50-record databases, so that a large sample does not
#: come close to a candidate by construction.
WIDGET_POPULATION = (0.42, 0.29, 0.18, 0.11)
#: The widget's candidates (all databases of this many records on 4 cells), privacy and limits.
WIDGET_N_PRIME, WIDGET_EPSILON, WIDGET_K_MAX = 50, 1.0, 200
#: The sample sizes the widget's regime map spans (its n slider's range).
WIDGET_N_RANGE = (1_000, 1_000_000)


def median_run(eta: float, n: int, k: int):
    """The run behind the chapter's widget: the median mechanism on the private route
    (:class:`~dpteach.median.PrivateMedianMechanism`, ``epsilon = 1``, noise seed 3) on 4 cells,
    all 23,426 databases of 50 records as candidates, ``k`` random counting queries (seed 8: the
    first queries are the same for every ``k``, ``n`` and ``eta``), a sample of ``n`` from
    :data:`WIDGET_POPULATION` (seed 7). Returns ``(mechanism, transcript, counts, P)``; the
    transcript stops where GuessAndCheck halted."""
    P = np.array(WIDGET_POPULATION)
    h = np.random.default_rng(7).multinomial(check.integer(n, "n", minimum=1), P)
    Q = (np.random.default_rng(8).random((check.integer(k, "k", minimum=1), 4)) < 0.5).astype(float)
    mech = PrivateMedianMechanism(h, candidates=small_databases(4, WIDGET_N_PRIME), eta=eta,
                                  epsilon=WIDGET_EPSILON, rng=3)  # fmt: skip
    return mech, interact(mech, fixed_queries(Q)), h, P


def median_regime(k: int, m: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Where the widget's run is guaranteed to halve (:mod:`dpteach.theory`): the smallest ``eta``
    at which an ``S*`` within ``eta/4`` of every sample is a candidate
    (:func:`~dpteach.theory.median_premise_eta`), and, on a grid of ``eta``, the sample size from
    which the noise stays within the halving margins with probability 0.95
    (:func:`~dpteach.theory.private_median_onset`). Returns ``(eta_premise, etas, onsets)``."""
    etas = np.geomspace(0.008, 0.4, 25)
    onsets = np.array([theory.private_median_onset(k, m, e, WIDGET_EPSILON) for e in etas])
    return theory.median_premise_eta(k, 4, WIDGET_N_PRIME), etas, onsets
