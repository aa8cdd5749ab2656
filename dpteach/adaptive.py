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
    best_candidate,
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


# --- figures of chapter 02 ---------------------------------------------------------------------


def plot_survivors(
    ax,
    mechanism,
    *,
    wrong: str = "wrong guess",
    floor: str | None = r"$1$ (floor if an $S^*$ exists)",
) -> None:
    """A median mechanism's candidate set ``|S_i|`` over the queries (log scale), its ``wrong``
    guesses (so labelled), the halving bound ``|S_0| 2^{-t}`` (``t`` of them so far) and, unless
    ``floor`` is None, the floor 1 (labelled ``floor``)."""
    from . import viz

    s = np.array(mechanism.survivors)
    rounds = np.arange(s.size)
    where = np.flatnonzero(mechanism.wrong) + 1
    ax.step(rounds, s, where="post", label=r"$|\mathbb{S}_i|$ measured")
    viz.bound(ax, rounds, s[0] / 2.0 ** np.cumsum(np.r_[0, mechanism.wrong]),
              rf"$|\mathbb{{S}}_0|\,2^{{-t}}$, $t$ {wrong}es")  # fmt: skip
    if where.size:  # a legend lists only what is drawn
        ax.plot(where, s[where], "o", color=viz.PALETTE["vermillion"], label=wrong)
    kept_all = getattr(mechanism, "kept_all", [])
    if kept_all:  # our change to step (e): no survivor near a_i, all kept
        ax.plot(kept_all, s[kept_all], "x", color=viz.PALETTE["black"],
                label=r"all kept: none within $\eta/2$")  # fmt: skip
    if floor is not None:
        viz.bound(ax, rounds, np.ones(s.size), floor, color=viz.PALETTE["green"])
    ax.set(yscale="log", xlabel="query $i$", ylabel="surviving candidates")
    ax.legend(fontsize=7)


def plot_errors(
    ax, transcript: Transcript, sample: object, population: object, eta: float, *, top=None
):
    """Each answer's error on the sample and on the population, with ``eta`` dashed; with
    ``top``, in units of ``eta`` on a fixed axis up to ``top``, with the private route's
    ``5 eta / 4`` instead, and errors beyond the axis drawn as triangles at its top."""
    from . import viz

    h = _sample_counts(sample)
    end = [0, len(transcript.answers)]
    errors = [transcript.errors(h / h.sum()), transcript.errors(population)]
    labels, markers = ["sample error", "population error"], ["o", "s"]
    if top is None:
        for e, label, marker in zip(errors, labels, markers):
            ax.plot(e, marker, markersize=3, label=label)
        viz.bound(ax, end, [eta, eta], r"$\eta$")
        ax.set(xlabel="query $i$", ylabel="error")
        ax.legend(fontsize=8)
        return
    for e, label, marker, color in list(zip(errors, labels, markers, ["blue", "orange"]))[::-1]:
        e = e / eta
        i = np.arange(e.size)
        ax.plot(i[e <= top], e[e <= top], marker, markersize=3, color=viz.PALETTE[color],
                label=label)  # fmt: skip
        if np.any(e > top):
            ax.plot(i[e > top], np.full(np.sum(e > top), top), "^", markersize=4,
                    color=viz.PALETTE[color], label=f"{label.split()[0]} > {top:g}η")  # fmt: skip
    viz.bound(ax, end, [1.25, 1.25], r"$5\eta/4$: good-event guarantee")
    ax.set(xlabel="query $i$", ylabel=r"error / $\eta$", ylim=(0, top * 1.05))
    ax.legend(fontsize=7)


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


def _plot_regime(ax, eta: float, n: int, k: int, m: int, outcome: str) -> None:
    """The (n, eta) plane: the region where halving is guaranteed shaded, the run marked."""
    from . import viz

    eta_premise, etas, onsets = median_regime(k, m)
    n_low, n_high = WIDGET_N_RANGE[0] / 2, WIDGET_N_RANGE[1] * 2
    good = np.r_[eta_premise, etas[etas > eta_premise]]
    edge = np.interp(np.log(good), np.log(etas), np.log(onsets))  # onsets are smooth in log-log
    ax.fill_betweenx(good, np.exp(edge), n_high,
                     color=viz.PALETTE["green"], alpha=0.2, linewidth=0,
                     label="halving guaranteed")  # fmt: skip
    ax.plot(onsets, etas, "--", color=viz.PALETTE["black"], linewidth=1.4,
            label="noise in margins (w.p. 0.95)")  # fmt: skip
    ax.axhline(eta_premise, color=viz.PALETTE["blue"], linestyle=":", linewidth=1.4,
               label=r"an $S^*$ exists above")  # fmt: skip
    color = "green" if outcome == "halving works" else "vermillion"
    if outcome.startswith(("no flag", "halves")):
        color = "orange"  # nothing broke, but the premise or the data went unused
    ax.plot([n], [eta], "*", markersize=14, color=viz.PALETTE[color],
            markeredgecolor="black", label=f"this run: {outcome}")  # fmt: skip
    ax.set(xscale="log", yscale="log", xlim=(n_low, n_high), ylim=(0.008, 0.4),
           xlabel="sample size $n$", ylabel=r"$\eta$",
           )  # fmt: skip
    ax.set_title(f"k = {k}, ε = {WIDGET_EPSILON:g}", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))


def median_run_figure(eta: float, n: float, k: int) -> None:
    """The chapter's widget: :func:`median_run` drawn, a pure function of its arguments. Left,
    the regime map; middle, the candidate set over the queries; right, each answer's error in
    units of ``eta``. Axes fixed across the sliders' ranges; the legends list only what is drawn."""
    from . import viz

    n = round(n)
    mech, t, h, P = median_run(eta, n, k)
    asked = len(t.answers)  # at least 1 (k >= 1, and GuessAndCheck answers before it halts)
    # S* in hindsight; the max over the queries is the max over the distinct ones (at most 16)
    best, best_error = best_candidate(mech.candidates, np.unique(t.queries, axis=0), h)
    premise = best_error <= eta / 4
    alive = premise and bool(mech.alive[best])
    if mech.checker.halted:
        outcome = "halted: m flags"
    elif mech.kept_all:
        outcome = "a flag halved nothing"
    elif not any(mech.wrong):
        outcome = "no flag: data unused"
    elif not premise:
        outcome = r"halves, no $S^*$"
    elif not alive:
        outcome = r"$S^*$ removed"
    else:
        outcome = "halving works"
    fig, axes = viz.subplots(ncols=3, figsize=(viz.PAGE_WIDTH_IN, 4.2),
                             gridspec_kw={"width_ratios": [1, 1.1, 1.1]})  # fmt: skip
    _plot_regime(axes[0], eta, n, k, mech.m, outcome)
    middle, right = axes[1], axes[2]
    floor = r"$1$: floor, $S^*$ survives" if alive else None
    plot_survivors(middle, mech, wrong="flagged guess", floor=floor)
    middle.set(xlim=(-3, WIDGET_K_MAX + 3), ylim=(0.5, 3 * mech.survivors[0]))
    if not premise:
        status = r"no candidate within $\eta/4$ of $S$"
    else:
        status = r"$S^*$ " + ("survives" if alive else "removed by noise")
    halted = f"halted after query {asked} of {k}" if mech.checker.halted else f"all {k} answered"
    middle.set_title(f"{sum(mech.wrong)} flagged of m = {mech.m}; {halted}\n{status}",
                     fontsize=8)  # fmt: skip
    middle.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    plot_errors(right, t, h, P, eta, top=3)
    right.set_xlim(-3, WIDGET_K_MAX + 3)
    right.set_title(f"n = {n:,}, η = {eta:.3g}", fontsize=9)
    right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    for ax in axes:
        ax.minorticks_off()  # a tick at every decade reads as well, and draws much faster
